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
        // The user let a guarded call run: the rule may have been lifted in
        // this very turn, so its Stop saves at once, and the fork is told.
        sessions.update(&ctx.session, |s| {
            s.input.asked = None;
            s.protocol.watch.save_at_next_stop = true;
        })?;
        if let Some(project) = state.input.project.as_deref() {
            crate::store::guard_counts::count_let_through(&ctx.roots, project, id)?;
        }
    }
    if ctx.input.agent_id.is_some() {
        return Ok(None);
    }
    // An unattended session counts its calls up to what makes it worth a
    // save; in any other, most calls find the flag set already, and a
    // lock-free glance spares the write.
    let count_to = state.input.unattended.then(|| crate::config::of(&ctx.roots).limits().unattended_min_tools);
    let counted = count_to.is_none_or(|most| state.protocol.turn.tools >= most);
    if state.protocol.turn.tool_ran && counted {
        return Ok(None);
    }
    sessions.update(&ctx.session, |s| s.protocol.tool(count_to))?;
    Ok(None)
}
