//! PostToolUse, the hot path: marks that a main-loop tool ran. A subagent's call
//! (it carries `agent_id`) does not count: the main loop only waits meanwhile.

use anyhow::Result;

use super::Ctx;
use super::wire::HookOutput;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    if ctx.input.agent_id.is_some() {
        return Ok(None);
    }
    let sessions = ctx.sessions();
    // Most calls find the flag set already: a lock-free glance spares the write.
    if sessions.peek(&ctx.session).protocol.turn.tool_ran {
        return Ok(None);
    }
    sessions.update(&ctx.session, |s| s.protocol.tool())?;
    Ok(None)
}
