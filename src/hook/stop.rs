//! Stop: requests a save when the turn is worth one and returns at once; the
//! worker runs in the background. Never blocks the stop.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, report_output};

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let report = super::step(ctx, |s, facts, limits| {
        let start = s.protocol.stop(facts, limits);
        (s.outcome.report.take(), start)
    })?;
    Ok(report_output(report))
}
