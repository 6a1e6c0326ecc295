//! The fork's command line: the sealed fork that resumes the session, and
//! the fresh run that resumes nothing (docs/design.md §4).

use std::path::Path;

use super::ForkRequest;

/// The fork's command line, each flag measured (docs/design.md §4): every run
/// sealed alike; a resumed fork keeps the parent's request for the prompt
/// cache, a fresh one resumes nothing and offers no tool (`FRESH_FLAGS`).
pub fn arguments(req: &ForkRequest, settings_file: &Path) -> Vec<String> {
    let settings_file = settings_file.display().to_string();
    let mut args = vec!["-p".to_string()];
    let mut values = vec![("--model", &req.model), ("--effort", &req.effort)];
    // The copy ends where the session did, so no message to resume at; a
    // path that is not plain text (never one of ours) resumes the session.
    let copy = req.resume_from.and_then(Path::to_str).filter(|p| p.starts_with('/') && p.ends_with(".jsonl"));
    let resume_at = if copy.is_some() { &None } else { &req.resume_at };
    if !req.fresh {
        args.extend(["--resume", copy.unwrap_or(req.session_id), "--fork-session"].map(String::from));
        values.push(("--resume-session-at", resume_at));
    }
    let sealed = [
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
    ];
    args.extend(sealed.map(String::from));
    if req.fresh {
        args.extend(FRESH_FLAGS.map(String::from));
    }
    // `--flag=value` for each plain value (one word, no leading `-`; others
    // are dropped), so a value read from a transcript or a config never
    // passes as a flag.
    let plain = |value: &&str| !value.is_empty() && !value.starts_with('-') && !value.contains(char::is_whitespace);
    args.extend(
        values.iter().filter_map(|(flag, value)| value.as_deref().filter(plain).map(|v| format!("{flag}={v}"))),
    );
    args
}

/// A fresh save's system prompt: Claude Code's own would be most of its request.
pub const FRESH_SYSTEM_PROMPT: &str = "You keep a software project's MEMORY.md. You are given its file and a session's last turns; you answer with \
line edits as JSON, as the user message asks, and nothing else.";

/// What a run that resumes nothing adds, so its request is our message and
/// about 400 tokens besides (docs/design.md §4, a fresh save).
const FRESH_FLAGS: [&str; 6] =
    ["--tools", "", "--strict-mcp-config", "--disable-slash-commands", "--system-prompt", FRESH_SYSTEM_PROMPT];
