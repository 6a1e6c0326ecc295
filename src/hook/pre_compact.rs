//! PreCompact: the session is about to be summarised. Turns held back
//! (`save_every_turns`) are saved now, by a fork resumed at the transcript's
//! last message as of this moment (`--resume-session-at`), so it sees those
//! turns themselves rather than the summary that replaces them.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, remember_session};
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let last = crate::claude::transcript::last_message_uuid(std::path::Path::new(&ctx.input.transcript_path));
    queue::update_then_start(&sessions, &ctx.input.session_id, |s| {
        remember_session(s, ctx);
        if s.save_due(|| crate::config::of(&ctx.roots).limits()) {
            s.request_save();
            s.resume_at = last;
        }
    })?;
    Ok(None)
}
