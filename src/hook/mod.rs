//! The hook events. Each reads its input, touches the session's state and
//! returns; none runs the fork. Errors go to the log, never to the exit code.

mod post_tool_use;
mod session_end;
mod session_start;
mod stop;
mod user_prompt_submit;
pub mod wire;

use std::io::Read;

use anyhow::{Context, Result};

use crate::cli::HookEvent;
use crate::paths::Roots;
use crate::state::SessionStore;
use wire::{HookInput, HookOutput};

/// The environment marker the fork runs with: a hook that fires inside the
/// fork anyway (should `disableAllHooks` ever be ignored) does nothing, so a
/// save can never start another save.
pub const FORK_MARKER_ENV: &str = "MEMORY_SAVE_FORK";
/// Set to 1 to turn every hook into a no-op.
pub const DISABLE_ENV: &str = "MEMORY_SAVE_DISABLE";
/// Hook input larger than this is not a hook input.
const MAX_STDIN: u64 = 16 * 1024 * 1024;

pub struct Ctx {
    pub roots: Roots,
    pub input: HookInput,
}

impl Ctx {
    pub fn sessions(&self) -> SessionStore {
        SessionStore::new(self.roots.sessions_dir())
    }
}

pub fn run(event: HookEvent, part: usize) -> Result<()> {
    if std::env::var_os(FORK_MARKER_ENV).is_some() || std::env::var_os(DISABLE_ENV).is_some_and(|v| v == "1") {
        return Ok(());
    }
    let mut raw = Vec::new();
    std::io::stdin().take(MAX_STDIN).read_to_end(&mut raw).context("cannot read the hook input")?;
    let input: HookInput =
        serde_json::from_slice(&raw).context("hook input is not the JSON object Claude Code sends")?;
    crate::state::check_session_id(&input.session_id)?;
    // Every event carries the session's folder (measured); the save runs
    // there, so an input without it is not one to act on.
    if !std::path::Path::new(&input.cwd).is_absolute() {
        anyhow::bail!("hook input has no absolute \"cwd\"; ignoring this hook call");
    }
    let ctx = Ctx { roots: Roots::from_env()?, input };
    let output = match event {
        HookEvent::SessionStart => session_start::run(&ctx, part)?,
        HookEvent::UserPromptSubmit => user_prompt_submit::run(&ctx)?,
        HookEvent::PostToolUse => post_tool_use::run(&ctx)?,
        HookEvent::Stop => stop::run(&ctx)?,
        HookEvent::SessionEnd => session_end::run(&ctx)?,
    };
    if let Some(output) = output {
        println!("{}", serde_json::to_string(&output)?);
    }
    Ok(())
}

/// The pending report line, as output for a hook that can show it.
pub fn report_output(report: Option<String>) -> Option<HookOutput> {
    report.map(|line| HookOutput { system_message: Some(line), hook_specific_output: None })
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
