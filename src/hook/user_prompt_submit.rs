//! UserPromptSubmit: marks that a person spoke (not Claude Code's own prompts,
//! such as a task notification), saves an interrupted previous turn, and
//! hands over the last save's report.

use anyhow::Result;

use super::wire::HookOutput;
use super::{Ctx, report_output};

/// Claude Code's own prompt when a background task finishes (measured).
const TASK_NOTIFICATION: &str = "<task-notification>";

pub fn is_generated_prompt(prompt: &str) -> bool {
    prompt.trim_start().starts_with(TASK_NOTIFICATION)
}

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let generated = ctx.input.prompt.as_deref().is_some_and(is_generated_prompt);
    let report = super::step(ctx, |s, facts, limits| {
        let start = s.protocol.prompt(facts, limits, generated);
        s.input.prompt_id.clone_from(&ctx.input.prompt_id);
        (s.outcome.report.take(), start)
    })?;
    // context-restore: one prefix check for every other prompt.
    let restored = match ctx.input.prompt.as_deref() {
        Some(prompt) if prompt.starts_with('/') => super::restore::typed(ctx, prompt),
        _ => None,
    };
    Ok(super::restore::with_report(restored, report_output(report)))
}
