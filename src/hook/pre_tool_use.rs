//! PreToolUse, before Bash and the edit tools: when the call matches a guard
//! of the session's project, Claude Code is told to ask the user (or, for a
//! guard the user promoted, to refuse), with the rule as the reason. A
//! subagent's call is checked too: a rule binds whoever breaks it. Reads
//! the session's state alone; appends, after its answer, one line to the
//! session's own file, and only when a guard fires.

use anyhow::Result;

use super::Ctx;
use super::wire::{HookOutput, HookSpecificOutput};
use crate::memory::guard::{Decision, Tool};

pub fn run(ctx: &Ctx) -> Result<Option<HookOutput>> {
    let Some(tool) = ctx.input.tool_name.as_deref().and_then(Tool::of_tool_name) else { return Ok(None) };
    let sessions = ctx.sessions();
    let (state, following) = sessions.peek_firings(&ctx.session);
    // What cannot be checked is asked about, never let through.
    let ask = |why: String| Ok(Some(decision(Decision::Ask, &format!("memory-save: {why}"))));
    let guards = match state.input.guards.read() {
        Ok(guards) => guards,
        Err(why) => return ask(why),
    };
    if !guards.iter().any(|g| g.tool == tool) {
        return Ok(None);
    }
    let input = ctx.input.tool_input.as_ref();
    let command = input.and_then(|i| i.command.as_deref());
    let path = input.and_then(|i| i.file_path.as_deref().or(i.notebook_path.as_deref()));
    let root = &state.input.guard_root;
    let Some(written) = crate::memory::guard::subject(tool, command, path, root) else { return Ok(None) };
    // A path is checked as written and as the file it leads to through
    // links, in the project or to it (macOS's /tmp is one), followed as
    // the kernel does and after `..` is worked out as text, as a tool may.
    let mut subjects = vec![written];
    // Why a subject could not be checked: asked about, unless a guard that
    // could be checked answers already (a refusal stays a refusal).
    let mut unchecked = None;
    if let (Tool::Edit, Some(path)) = (tool, path) {
        let path = std::path::Path::new(&ctx.input.cwd).join(path).to_string_lossy().into_owned();
        match follow_within(path, root.clone()) {
            Ok(found) => subjects.extend(found),
            Err(why) => unchecked = Some(why),
        }
    }
    let mut matched = Vec::new();
    for subject in subjects {
        match crate::memory::guard::matching(&guards, tool, &subject) {
            Ok(found) => matched.extend(found),
            Err(why) => unchecked = unchecked.or(Some(why)),
        }
    }
    matched.sort_by_key(|g| g.decision != Decision::Deny);
    let Some(guard) = matched.first() else { return unchecked.map_or(Ok(None), ask) };
    // The answer goes out before the counting, which waits on locks a sync
    // or another save may hold past the hook's deadline.
    let rule = guard.rule.trim().trim_start_matches("- ");
    super::print(
        super::words::HookEvent::PreToolUse,
        &decision(guard.decision, &format!("memory-save: CRITICAL RULE: {rule}")),
    )?;
    // One line appended to the session's own file: the firing is counted in
    // the project's record by the session's next prompt, Stop or end.
    let asked = ctx.input.tool_use_id.clone().filter(|_| guard.decision == Decision::Ask);
    let noted = sessions.note_firing(&ctx.session, &guard.id, asked, following);
    if let Err(e) = noted {
        crate::store::log::error(&format!("cannot note guard {}'s firing: {e:#}", guard.id));
    }
    Ok(None)
}

/// How long following a call's path may take: well inside the hook's
/// deadline, whose silent exit would let the call run.
const RESOLVE_TIME: std::time::Duration = std::time::Duration::from_millis(500);

/// `followed` on a thread of its own, waited for `RESOLVE_TIME`: a mount
/// that hangs blocks a lookup in the kernel, past any check of the clock
/// between lookups. The thread's stack is set here, never by the
/// environment's `RUST_MIN_STACK`, and one that cannot be made is `Err`.
fn follow_within(path: String, root: String) -> Result<Vec<String>, String> {
    let (send, answer) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || send.send(followed(&path, &root)))
        .map_err(|e| format!("the path cannot be followed ({e}), so it cannot be checked against the guards"))?;
    answer.recv_timeout(RESOLVE_TIME).unwrap_or_else(|_| Err(past("takes too long to follow")))
}

/// The subjects an edit of `path` has once its links are followed, each
/// spelling of it (with `..` worked out as text, and as written) in turn.
fn followed(path: &str, root: &str) -> Result<Vec<String>, String> {
    let until = std::time::Instant::now() + RESOLVE_TIME;
    let real_root = std::fs::canonicalize(root).map_or_else(|_| root.to_string(), |r| r.to_string_lossy().into_owned());
    let text = crate::memory::guard::lexical(path);
    // A path with no `.`, `..` or doubled slash reads one way: followed once.
    let spellings = if text == path { vec![text] } else { vec![text, path.to_string()] };
    let mut subjects = Vec::new();
    for spelling in spellings {
        let real = real_path(&spelling, until)?;
        subjects.extend(crate::memory::guard::subject(Tool::Edit, None, Some(&real), &real_root));
    }
    Ok(subjects)
}

fn past(what: &str) -> String {
    format!("the path {what}, past what can be checked against the guards")
}

/// The file the path leads to, its links resolved as far as it exists: a
/// Write may name a file, or folders, not made yet, or a link to one. The
/// work is bounded; a path past the bounds is `Err`, to be asked about.
fn real_path(path: &str, until: std::time::Instant) -> Result<String, String> {
    const PATH_MAX: usize = 4096;
    /// The kernel's own bound on the links of one lookup.
    const LINKS: usize = 40;
    const NEW_FOLDERS: usize = 64;
    if path.len() > PATH_MAX {
        return Err(past("is over 4 KiB"));
    }
    let mut path = std::path::PathBuf::from(path);
    for links in 0.. {
        let (Ok(target), Some(folder)) = (std::fs::read_link(&path), path.parent()) else { break };
        if links == LINKS {
            return Err(past("goes through over 40 links"));
        }
        path = folder.join(target);
    }
    // A debug build's stand-in for a mount that hangs (tests/cli/guards.rs).
    #[cfg(debug_assertions)]
    if let Some(ms) = crate::env::fault("MEMORY_SAVE_FAULT_SLOW_PATH_MS").and_then(|ms| ms.parse().ok()) {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    let mut found = None;
    for part in path.ancestors().take(NEW_FOLDERS) {
        if std::time::Instant::now() > until {
            return Err(past("takes too long to follow"));
        }
        if let (Ok(real), Ok(rest)) = (std::fs::canonicalize(part), path.strip_prefix(part)) {
            found = Some((real, rest));
            break;
        }
    }
    let (real, rest) = found.ok_or_else(|| past("names over 64 folders that do not exist"))?;
    let real = if rest.as_os_str().is_empty() { real } else { real.join(rest) };
    Ok(real.to_string_lossy().into_owned())
}

fn decision(decision: Decision, reason: &str) -> HookOutput {
    HookOutput {
        system_message: None,
        hook_specific_output: Some(HookSpecificOutput {
            hook_event_name: "PreToolUse",
            permission_decision: Some(decision.word()),
            permission_decision_reason: Some(crate::memory::text::visible(reason)),
            ..HookSpecificOutput::default()
        }),
    }
}
