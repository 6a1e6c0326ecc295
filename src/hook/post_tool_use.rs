//! PostToolUse, the hot path: marks that a main-loop tool ran. A subagent's call
//! (it carries `agent_id`) does not count: the main loop only waits meanwhile.
//! A call a guard asked about ran: the user let it, which its guard counts.

use anyhow::Result;

use super::Ctx;
use super::wire::HookOutput;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let state = sessions.peek(&ctx.session);
    if let Some((call, id)) = &state.input.asked
        && ctx.input.tool_use_id.as_ref() == Some(call)
    {
        sessions.update(&ctx.session, |s| s.input.asked = None)?;
        if let Some(project) = state.input.project.as_deref() {
            crate::store::guards::count(&ctx.roots, project, id, true)?;
        }
    }
    // Most calls find the flag set already: a lock-free glance spares the write.
    if ctx.input.agent_id.is_some() || state.protocol.turn.tool_ran {
        return Ok(None);
    }
    sessions.update(&ctx.session, |s| s.protocol.tool())?;
    Ok(None)
}
