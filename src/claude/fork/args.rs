//! The fork's command line: the sealed fork that resumes the session, and
//! the fresh run that resumes nothing (docs/design.md §4).

use std::path::Path;

use super::ForkRequest;

/// The flags docs/design.md §4 explains, each measured: the fork's request keeps the parent's tools,
/// system prompt and messages (so the prompt cache serves it), yet no tool
/// runs (`dontAsk`, no settings whose allow rules apply, one turn), no hook
/// fires, and no transcript is left behind.
pub fn arguments(req: &ForkRequest, settings_file: &Path) -> Vec<String> {
    let settings_file = settings_file.display().to_string();
    if req.fresh {
        return fresh_arguments(req, &settings_file);
    }
    // The copy ends where the session did, so no message to resume at; a
    // path that is not plain text (never one of ours) resumes the session.
    let copy = req.resume_from.and_then(Path::to_str).filter(|p| p.starts_with('/') && p.ends_with(".jsonl"));
    let resume_at = if copy.is_some() { &None } else { &req.resume_at };
    let mut args: Vec<String> = [
        "-p",
        "--resume",
        copy.unwrap_or(req.session_id),
        "--fork-session",
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--settings",
        &settings_file,
        "--permission-mode",
        "dontAsk",
        "--max-turns",
        "1",
        "--output-format",
        "json",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(value_flags(&[("--model", &req.model), ("--effort", &req.effort), ("--resume-session-at", resume_at)]));
    args
}

/// The system prompt of a fresh save: Claude Code's own would be most of
/// its request.
pub const FRESH_SYSTEM_PROMPT: &str = "You keep a software project's MEMORY.md. You are given its file and a session's last turns; you answer with \
line edits as JSON, as the user message asks, and nothing else.";

/// A run that resumes nothing: no tools at all (`--tools ""`), no MCP
/// server, skill or command list, and a two-line system prompt, so its
/// request is our message and about 400 tokens besides **[measured:
/// 2.1.328, 2.1.332, tests/e2e/spend.rs s21]**. The rest is the resumed
/// fork's.
fn fresh_arguments(req: &ForkRequest, settings_file: &str) -> Vec<String> {
    let mut args: Vec<String> = [
        "-p",
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--settings",
        settings_file,
        "--permission-mode",
        "dontAsk",
        "--max-turns",
        "1",
        "--output-format",
        "json",
        "--tools",
        "",
        "--strict-mcp-config",
        "--disable-slash-commands",
        "--system-prompt",
        FRESH_SYSTEM_PROMPT,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(value_flags(&[("--model", &req.model), ("--effort", &req.effort)]));
    args
}

/// `--flag=value` for each value that is plain: one word each, so a value
/// read from a transcript or a config can never be taken for a flag of its
/// own, whatever it starts with; one that starts with `-` or holds a space
/// is dropped outright.
fn value_flags(flags: &[(&str, &Option<String>)]) -> Vec<String> {
    let plain = |value: &str| !value.is_empty() && !value.starts_with('-') && !value.contains(char::is_whitespace);
    flags
        .iter()
        .filter_map(|(flag, value)| value.as_deref().filter(|v| plain(v)).map(|value| format!("{flag}={value}")))
        .collect()
}
