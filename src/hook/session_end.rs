//! SessionEnd: the session closes. A turn that never reached Stop, or a save
//! still queued, is saved now; the worker outlives the CLI. SessionEnd hooks
//! share a budget of about 1.5 s, so this only spawns and returns.

use anyhow::Result;

use super::Ctx;
use super::stop::remember_session;
use super::wire::HookOutput;
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let id = &ctx.input.session_id;
    sessions.update(id, |s| {
        remember_session(s, ctx);
        if s.turn_open && s.worth_saving() {
            s.request_save();
        }
        s.turn_open = false;
        if s.save_pending {
            queue::ensure_worker(&sessions, id);
        }
    })?;
    Ok(None)
}
