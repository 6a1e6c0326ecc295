//! Stop: the turn ended with an answer. Requests a save when the turn is
//! worth one and returns at once; the worker runs in the background. Never
//! blocks the stop.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, remember_session, report_output};
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let id = &ctx.input.session_id;
    let report = queue::update_then_start(&sessions, id, |s| {
        remember_session(s, ctx);
        s.turn_open = false;
        let limits = std::cell::OnceCell::new();
        let limits = || *limits.get_or_init(|| crate::config::of(&ctx.roots).limits());
        if s.save_due(limits) {
            s.turn_saved_or_held(&limits());
        }
        s.report.take()
    })?;
    Ok(report_output(report))
}
