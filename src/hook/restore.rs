//! context-restore's two doors: the Skill tool's PostToolUse (matcher `Skill`)
//! and a prompt typed as `/name`. Each hands the model a changed file's current
//! text (`restore::transcript`), and the user one line.

use anyhow::Result;

use super::Ctx;
use super::wire::{HookOutput, HookSpecificOutput};
use crate::restore::compare::Kind;

pub fn skill(ctx: &Ctx) -> Result<Option<HookOutput>> {
    if ctx.input.agent_id.is_some() {
        return Ok(None);
    }
    let Some(name) = ctx.input.tool_input.as_ref().and_then(|t| t.skill.as_deref()) else { return Ok(None) };
    Ok(run(ctx, Kind::Skill, name.trim_start_matches('/'), "PostToolUse"))
}

/// A prompt that begins with `/`: its command, if it names one.
pub fn typed(ctx: &Ctx, prompt: &str) -> Option<HookOutput> {
    let name = crate::restore::compare::typed_command(prompt)?;
    run(ctx, Kind::Command, name, "UserPromptSubmit")
}

fn run(ctx: &Ctx, kind: Kind, name: &str, event: &'static str) -> Option<HookOutput> {
    let mut state = crate::restore::state::read(&ctx.roots);
    if state.off {
        return None;
    }
    let project_dir = crate::env::claude_project_dir()
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| crate::project::work_tree_top(std::path::Path::new(&ctx.input.cwd)));
    let now = crate::env::now_unix();
    let transcript = std::path::Path::new(&ctx.input.transcript_path);
    let restored = crate::restore::transcript::restore(kind, name, transcript, &project_dir, now)?;
    state.last = Some(crate::restore::state::Event { at: now, name: name.to_string() });
    if let Err(e) = crate::restore::state::write(&ctx.roots, &state) {
        crate::store::log::error(&format!("cannot record the last context-restore event: {e:#}"));
    }
    Some(HookOutput {
        system_message: Some(restored.notice),
        hook_specific_output: Some(HookSpecificOutput {
            hook_event_name: event,
            additional_context: Some(restored.context),
            ..HookSpecificOutput::default()
        }),
    })
}

/// One output for a prompt: the restored text, and the last save's report.
pub fn with_report(restored: Option<HookOutput>, report: Option<HookOutput>) -> Option<HookOutput> {
    match (restored, report) {
        (Some(mut restored), Some(report)) => {
            let lines: Vec<String> =
                [report.system_message, restored.system_message.take()].into_iter().flatten().collect();
            restored.system_message = Some(lines.join("\n"));
            Some(restored)
        }
        (restored, report) => restored.or(report),
    }
}
