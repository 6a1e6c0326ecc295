//! Stop: the turn ended with an answer. Requests a save when the turn is
//! worth one and returns at once; the worker runs in the background. Never
//! blocks the stop.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, report_output};
use crate::save::queue;

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let sessions = ctx.sessions();
    let id = &ctx.input.session_id;
    let interval = ctx.roots.config().save_interval();
    let report = sessions.update(id, |s| {
        remember_session(s, ctx);
        s.turn_open = false;
        if s.save_due(interval) {
            s.request_save();
        }
        if s.save_pending {
            queue::ensure_worker(&sessions, id);
        }
        s.report.take()
    })?;
    Ok(report_output(report))
}

/// What the worker needs to run the fork, refreshed at every event that
/// carries it.
pub fn remember_session(s: &mut crate::state::SessionState, ctx: &Ctx) {
    if !ctx.input.cwd.is_empty() {
        s.cwd.clone_from(&ctx.input.cwd);
    }
    if !ctx.input.transcript_path.is_empty() {
        s.transcript_path.clone_from(&ctx.input.transcript_path);
    }
    if let Some(level) = ctx.input.effort_level() {
        s.effort = Some(level);
    }
    if s.project_cwd != s.cwd {
        s.project_cwd.clone_from(&s.cwd);
        match crate::project::locate(std::path::Path::new(&s.cwd)) {
            Ok(project) => {
                s.off = project.off_reason(&ctx.roots.config());
                s.project = Some(project.name);
            }
            // The worker reports a folder it cannot name in the status line,
            // where the user sees it.
            Err(_) => {
                s.off = None;
                s.project = None;
            }
        }
    }
}
