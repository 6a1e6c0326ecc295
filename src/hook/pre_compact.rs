//! PreCompact: turns held back are saved now, from a copy of the transcript
//! taken before the summary replaces them (docs/design.md §2); without a copy
//! the fork resumes at the last message (`--resume-session-at`).

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, remember_session};
use crate::claude::transcript;
use crate::save::machine::Facts;
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let transcript_path = std::path::Path::new(&ctx.input.transcript_path);
    let last = transcript::last_message_uuid(transcript_path);
    let limits = || crate::config::of(&ctx.roots).limits();
    let now = crate::env::now_unix();
    // The copy (up to 256 MB) is taken before the session lock, which other
    // hooks wait for at most two seconds; a glance at the state says
    // whether one is wanted, and the lock below decides.
    let glance = sessions.peek(&ctx.session);
    let copy = if glance.protocol.save_due(Facts::of(&glance.input, now), limits) {
        let name = sessions.new_snapshot_name(&ctx.session);
        let path = sessions.snapshot_path(&ctx.session, &name).expect("a name of our own making");
        sessions.ensure_dir()?;
        match transcript::snapshot(transcript_path, &path, transcript::MAX_SNAPSHOT_BYTES) {
            Ok(true) => Some(name),
            Ok(false) => None,
            Err(e) => {
                crate::store::log::error(&format!("no transcript copy at PreCompact: {e:#}"));
                None
            }
        }
    } else {
        None
    };
    let compacted = queue::update_then_start(&sessions, &ctx.session, |s| {
        remember_session(&mut s.input, ctx);
        let compacted = s.protocol.pre_compact(Facts::of(&s.input, now), limits, last, copy.clone());
        let start = s.protocol.job.is_active();
        (compacted, start)
    })?;
    // A copy no save will read: an earlier one no save had started on, or
    // the new one when no save was asked for.
    let unused = if compacted.kept { None } else { copy };
    for name in [compacted.remove, unused].into_iter().flatten() {
        if let Some(path) = sessions.snapshot_path(&ctx.session, &name) {
            let _ = std::fs::remove_file(path);
        }
    }
    Ok(None)
}
