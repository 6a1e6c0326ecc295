//! PreCompact: the session is about to be summarised. Turns held back
//! (`save_every_turns`) are saved now, from a copy of the transcript taken
//! at this moment: Claude Code resumes a session from its last compaction
//! boundary on, so a fork that resumed the live session after the summary
//! would see the summary instead of those turns **[measured]**. Without a
//! copy (a transcript over the bound) the fork resumes at the last message
//! as of now (`--resume-session-at`), which holds them only when the fork
//! starts before the summary is written.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, remember_session};
use crate::claude::transcript;
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let transcript_path = std::path::Path::new(&ctx.input.transcript_path);
    let last = transcript::last_message_uuid(transcript_path);
    queue::update_then_start(&sessions, &ctx.input.session_id, |s| {
        remember_session(s, ctx);
        if s.save_due(|| crate::config::of(&ctx.roots).limits()) {
            s.request_save();
            s.resume_at = last;
            // A copy no save has started on yet is ours to replace; one a
            // running save may be reading is its worker's to remove.
            if s.saving_since.is_none()
                && let Some(old) = s.snapshot.take().and_then(|name| sessions.snapshot_path(&name))
            {
                let _ = std::fs::remove_file(old);
            }
            let name = sessions.new_snapshot_name(&ctx.input.session_id);
            let copy = sessions.snapshot_path(&name).expect("a name of our own making");
            match transcript::snapshot(transcript_path, &copy, transcript::MAX_SNAPSHOT_BYTES) {
                Ok(true) => s.snapshot = Some(name),
                Ok(false) => {}
                Err(e) => crate::store::log::error(&format!("no transcript copy at PreCompact: {e:#}")),
            }
        }
    })?;
    Ok(None)
}
