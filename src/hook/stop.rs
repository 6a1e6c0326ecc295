//! Stop: requests a save when the turn is worth one and returns at once; the
//! worker runs in the background. Never blocks the stop.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, remember_session, report_output};
use crate::save::machine::Facts;
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let id = &ctx.session;
    let report = queue::update_then_start(&sessions, id, |s| {
        remember_session(&mut s.input, ctx);
        let facts = Facts::of(&s.input, crate::env::now_unix());
        let start = s.protocol.stop(facts, || crate::config::of(&ctx.roots).limits());
        (s.outcome.report.take(), start)
    })?;
    Ok(report_output(report))
}
