//! SessionEnd: the session closes. A turn that never reached Stop, or a save
//! still queued, is saved now; the worker outlives the CLI. SessionEnd hooks
//! share a budget of about 1.5 s, so this only spawns and returns.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, remember_session};
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let id = &ctx.input.session_id;
    queue::update_then_start(&sessions, id, |s| {
        remember_session(s, ctx);
        // An interrupted last turn, or turns held back by
        // `save_every_minutes`: this is their last chance.
        s.ended = true;
        if s.save_due(|| crate::config::of(&ctx.roots).limits()) {
            s.request_save();
            if let Some(pause) = &mut s.paused {
                pause.end_save_used = true;
            }
        }
        s.turn_open = false;
    })?;
    Ok(None)
}
