//! SessionEnd: an interrupted or held-back turn is saved now. SessionEnd hooks
//! share about 1.5 s, so this only spawns; the worker outlives the CLI.

use anyhow::Result;

use super::Ctx;
use super::wire::HookOutput;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    super::step(ctx, |s, facts, limits| ((), s.protocol.end(facts, limits)))?;
    Ok(None)
}
