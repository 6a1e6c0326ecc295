//! Helpers of the bench that need no `Env`: the hook events and their
//! fixtures, scripted replies, bullets and templates.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use std::time::{Duration, Instant};

use crate::support::{ARCH, DEADLINE, FIXTURES};

/// Every hook event, as the `hook` subcommand names it, read from
/// hooks.json (which a unit test holds to the events table), so a sweep
/// over them covers an event the day it is registered.
pub fn hook_events() -> Vec<String> {
    let text = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks.json")).unwrap();
    let hooks: Value = serde_json::from_str(&text).unwrap();
    let mut words: Vec<String> = Vec::new();
    for groups in hooks["hooks"].as_object().unwrap().values() {
        let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
        words.push(command.split_whitespace().nth(2).unwrap().to_string());
    }
    assert!(words.len() >= 6 && words.contains(&"pre-compact".to_string()), "{words:?}");
    words
}

/// The real payload each hook event is tested with.
pub fn fixture_for(event: &str) -> &'static str {
    match event {
        "session-start" => "SessionStart-startup.json",
        "user-prompt-submit" => "UserPromptSubmit.json",
        "pre-tool-use" => "PreToolUse-bash.json",
        "post-tool-use" => "PostToolUse-main.json",
        "stop" => "Stop.json",
        "session-end" => "SessionEnd-other.json",
        "pre-compact" => "PreCompact-manual.json",
        other => panic!("no fixture for hook event {other:?}"),
    }
}

pub fn fixture(name: &str) -> Value {
    let text = fs::read_to_string(Path::new(FIXTURES).join(name)).unwrap_or_else(|e| panic!("fixture {name}: {e}"));
    serde_json::from_str(&text).unwrap()
}

/// A `--output-format json` result object with `text` as the result.
pub fn result_json(text: &str, is_error: bool) -> String {
    json!({
        "type": "result",
        "subtype": "success",
        "is_error": is_error,
        "result": text,
        "session_id": "fork-session",
        "usage": {"input_tokens": 1, "cache_read_input_tokens": 2, "cache_creation_input_tokens": 0, "output_tokens": 3},
        "total_cost_usd": 0.001
    })
    .to_string()
}

/// The fork's reply text: these ops and topic appends.
pub fn reply(ops: Value, topics: Value) -> String {
    json!({"ops": ops, "topics": topics}).to_string()
}

pub fn no_change() -> String {
    reply(json!([]), json!([]))
}

/// A reply that adds `bullet` and appends `append` to history.md.
pub fn save_reply(bullet: &str, append: &str) -> String {
    reply(json!([add(ARCH, bullet)]), json!([{"file": "history.md", "append": append}]))
}

/// A test knob from the environment (`MEMORY_SAVE_STRESS_ROUNDS=30`), or
/// its default when unset, unparsable or 0.
pub fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0).unwrap_or(default)
}

/// A reply that adds one bullet under Architecture & Config Facts.
pub fn adds(bullet: &str) -> String {
    reply(json!([add(ARCH, bullet)]), json!([]))
}

/// A GitHub token the secret rules find, built from parts so that no
/// scanner takes this file for a leak.
pub fn github_token() -> String {
    ["ghp_", "Zx8Qp2Lm9Rt4", "Vw7Ky1Nb6Hc3", "Fd5Gs0Ja8Ue2"].concat()
}

pub fn add(section: &str, bullet: &str) -> Value {
    json!({"op": "add", "section": section, "text": bullet})
}

/// A MEMORY.md in the template, with `facts` under Architecture & Config Facts.
pub fn template_with(project: &str, facts: &[&str]) -> String {
    let facts = if facts.is_empty() { "- None yet.".to_string() } else { facts.join("\n") };
    format!(
        "# {project}\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n{facts}\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n"
    )
}

/// The lines under `## <section>` up to the next `## `.
pub fn section_lines(memory: &str, section: &str) -> Vec<String> {
    let heading = format!("## {section}");
    memory
        .lines()
        .skip_while(|l| *l != heading)
        .skip(1)
        .take_while(|l| !l.starts_with("## "))
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Sets the debug build's virtual clock (`MEMORY_SAVE_DEBUG_CLOCK`) to
/// `at`, atomically: a reader never finds the file half written (it would
/// fall back to the real clock).
#[cfg(debug_assertions)]
pub fn set_clock(clock: &Path, at: i64) {
    let temp = clock.with_extension("tmp");
    fs::write(&temp, at.to_string()).unwrap();
    fs::rename(&temp, clock).unwrap();
}

pub fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < DEADLINE, "timed out after {DEADLINE:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A FIFO at `path`, as an attacker would plant one.
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: creates a FIFO at a path of this test's own temporary folder.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// SIGKILLs `pid`, a process this test's run started.
pub fn kill(pid: i32) {
    // SAFETY: signals a process this test's own run started, by its id.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Whether `pid` runs: false when it is gone or a zombie no-one reaped yet.
/// Without /proc (macOS), `kill(pid, 0)` (which counts a zombie as alive).
pub fn process_alive(pid: i32) -> bool {
    if !Path::new("/proc/self/stat").exists() {
        // SAFETY: signal 0 only asks whether the process exists.
        return unsafe { libc::kill(pid, 0) } == 0;
    }
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        // The state follows the parenthesised command name.
        Ok(stat) => !stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// No process holds the lock on `path` (a missing file holds nothing).
pub fn lock_free(lock: &Path) -> bool {
    let Ok(file) = fs::OpenOptions::new().read(true).write(true).open(lock) else {
        return true;
    };
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            true
        }
        Err(_) => false,
    }
}

pub fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Every file under `dir`, at any depth, by path: for what must reach no
/// file at all, whatever the layout.
pub fn files_under(dir: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => dirs.push(path),
                Ok(kind) if kind.is_file() => files.push(path.display().to_string()),
                _ => {}
            }
        }
    }
    files.sort();
    files
}
