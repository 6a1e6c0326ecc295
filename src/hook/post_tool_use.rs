//! PostToolUse: the hot path, after every tool call. Marks that a main-loop
//! tool ran; a subagent's tool call (it carries `agent_id`) does not count,
//! since a background agent keeps working while the main loop only waits.

use anyhow::Result;

use super::Ctx;
use super::wire::HookOutput;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    if ctx.input.agent_id.is_some() {
        return Ok(None);
    }
    let sessions = ctx.sessions();
    // Most tool calls find the flag set already: a lock-free glance spares
    // them the write.
    if sessions.peek(&ctx.session).protocol.turn.tool_ran {
        return Ok(None);
    }
    sessions.update(&ctx.session, |s| s.protocol.tool())?;
    Ok(None)
}
