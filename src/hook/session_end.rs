//! SessionEnd: an interrupted or held-back turn is saved now. SessionEnd hooks
//! share about 1.5 s, so this only spawns; the worker outlives the CLI.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, remember_session};
use crate::save::machine::Facts;
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let id = &ctx.session;
    queue::update_then_start(&sessions, id, |s| {
        remember_session(&mut s.input, ctx);
        let facts = Facts::of(&s.input, crate::env::now_unix());
        ((), s.protocol.end(facts, || crate::config::of(&ctx.roots).limits()))
    })?;
    Ok(None)
}
