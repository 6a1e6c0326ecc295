//! Runs the tool-less fork: `claude -p --resume <id> --fork-session …` with
//! the message on stdin, bounded in time, and reads its JSON result.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::env::FORK_MARKER;
use crate::store::fsutil::create_new_private;
use crate::store::state::{SessionId, Usage};

mod args;
mod error;
pub use args::arguments;
pub use error::ForkError;

/// Variables Claude Code sets for its hooks that tie a process to the running
/// session or its IDE (measured on 2.1.328): the fork must not pose as that
/// session or attach to its editor. Proxy, CA and cloud variables stay.
const SESSION_ENV: [&str; 10] = [
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_PID",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_EFFORT",
    "CLAUDE_CODE_SSE_PORT",
    "ENABLE_IDE_INTEGRATION",
    "CLAUDE_CODE_AUTO_CONNECT_IDE",
];
/// Prefixes of the same kind of variables.
const SESSION_ENV_PREFIXES: [&str; 2] = ["CLAUDE_CODE_MESSAGING", "CLAUDE_CODE_IDE_"];

/// The fork's stdout is read from its end, at most this much: the result is
/// its last line, and a fork that prints without end must not fill the worker.
const MAX_OUTPUT_READ: u64 = 8 * 1024 * 1024;
const MAX_ERRORS_READ: u64 = 64 * 1024;
/// One fork's scratch files, `fork-<session>.<worker pid>.<kind>`: the pid keeps
/// a dead worker's guard away from the files of the worker that took over.
pub const SCRATCH_KINDS: [&str; 4] = ["in", "out", "err", "settings.json"];

pub struct ForkRequest<'a> {
    pub claude: PathBuf,
    pub session_id: &'a str,
    pub cwd: &'a Path,
    pub model: Option<String>,
    pub effort: Option<String>,
    /// `--resume-session-at`: the fork sees the session up to this message.
    pub resume_at: Option<String>,
    /// A transcript copy to resume instead of the session: `--resume` takes a
    /// path ending in `.jsonl` as a file **[measured: 2.1.328, 2.1.332]**.
    pub resume_from: Option<&'a Path>,
    /// Resume nothing: the message carries the turns (a save whose cache expired).
    pub fresh: bool,
    pub message: &'a str,
    /// The `--settings` JSON: a private file, never argv, where anyone reads `env`.
    pub settings: String,
    pub timeout: Duration,
    /// Where the message, output and error files go (our state folder).
    pub scratch: &'a Path,
    /// The session's cost so far: a resumed run's `total_cost_usd` counts the
    /// parent's too (measured), so the fork's own is the difference.
    pub parent_cost_usd: f64,
}

#[derive(Debug)]
pub struct ForkReply {
    pub text: String,
    pub usage: Usage,
}

pub fn find_claude() -> Result<PathBuf, ForkError> {
    crate::env::claude_override().map_or_else(|| which::which("claude").map_err(|_| ForkError::NotFound(None)), Ok)
}

pub fn run(req: &ForkRequest) -> Result<ForkReply, ForkError> {
    let io = |what: &str, e: std::io::Error| ForkError::Io(format!("cannot {what}: {e}"));
    let [input_path, output_path, error_path, settings_path] =
        SCRATCH_KINDS.map(|kind| req.scratch.join(format!("fork-{}.{}.{kind}", req.session_id, std::process::id())));
    // Removed on every way out, or the state folder keeps a set per session.
    let _scratch = RemoveOnDrop([&input_path, &output_path, &error_path, &settings_path]);
    // Files, not pipes: the message can pass 128 KiB, and no pipe needs draining.
    write_private(&input_path, req.message).map_err(|e| io("write the fork message", e))?;
    write_private(&settings_path, &req.settings).map_err(|e| io("write the fork settings", e))?;
    let stdin = File::open(&input_path).map_err(|e| io("reopen the fork message", e))?;
    // It holds the memory: unlinked as soon as the fork holds it open.
    let _ = std::fs::remove_file(&input_path);
    let stdout = create_new_private(&output_path).map_err(|e| io("create the fork output file", e))?;
    let stderr = create_new_private(&error_path).map_err(|e| io("create the fork error file", e))?;
    let cwd = if req.cwd.is_dir() { req.cwd.to_path_buf() } else { std::env::temp_dir() };

    let started = Instant::now();
    // A fork costs about 210 MB before it sends a byte (measured): at most
    // FORK_SLOTS run on the machine, the rest wait within the same bound.
    let _slot = take_slot(&req.scratch.join("forks"), req.timeout).map_err(|e| ForkError::Io(format!("{e:#}")))?;
    let mut command = Command::new(&req.claude);
    for name in crate::env::variable_names() {
        if SESSION_ENV.contains(&name.as_str()) || SESSION_ENV_PREFIXES.iter().any(|p| name.starts_with(p)) {
            command.env_remove(name);
        }
    }
    // The CLI retries a short rate limit for about three minutes (measured):
    // not worth a fork slot, the next save tries again.
    if crate::env::passed_to_fork("CLAUDE_CODE_MAX_RETRIES").is_none() {
        command.env("CLAUDE_CODE_MAX_RETRIES", "2");
    }
    command
        .args(arguments(req, &settings_path))
        .current_dir(cwd)
        .env(FORK_MARKER, "1")
        // A fork past the window must fail, not compact: with
        // --no-session-persistence every later save would pay a whole summary
        // again (measured; 2.1.328 and 2.1.332 read DISABLE_COMPACT).
        .env("DISABLE_COMPACT", "1")
        // One memory pass, not two (docs/design.md §4, auto memory).
        .env("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    // A watcher kills the group and removes these files if the worker is killed.
    let scratch = [output_path.as_path(), error_path.as_path(), settings_path.as_path()];
    let child =
        crate::process::Bounded::spawn(&mut command, Some((req.timeout, &scratch))).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ForkError::NotFound(Some(req.claude.clone())),
            _ => ForkError::Io(format!("cannot run {}: {e}", req.claude.display())),
        })?;
    let status = match child.wait(started, req.timeout).map_err(|e| io("wait for the fork", e))? {
        crate::process::Ended::Exited(status) => status,
        crate::process::Ended::TimedOut => return Err(ForkError::TimedOut { secs: req.timeout.as_secs() }),
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let output = super::transcript::tail(&output_path, MAX_OUTPUT_READ).unwrap_or_default();
    let errors = super::transcript::tail(&error_path, MAX_ERRORS_READ).unwrap_or_default();
    let mut result = read_result(&output);
    let usage = match &mut result {
        Ok(reply) => Some(&mut reply.usage),
        Err(e) => e.usage_mut(),
    };
    if let Some(usage) = usage {
        usage.duration_ms = duration_ms;
        usage.total_cost_usd = (usage.total_cost_usd - req.parent_cost_usd).max(0.0);
    }
    match result {
        Err(ForkError::NoResult { usage }) if !status.success() => {
            let said = errors.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no error output").trim();
            Err(ForkError::Exited { code: status.code(), said: said.chars().take(200).collect(), usage })
        }
        other => other,
    }
}

/// Forks running at once on the machine, at most.
pub const FORK_SLOTS: usize = 2;

/// One of `FORK_SLOTS` locks under `dir`, waited for up to `limit`.
fn take_slot(dir: &Path, limit: Duration) -> anyhow::Result<crate::store::lock::Lock> {
    crate::store::fsutil::create_private_dir(dir)?;
    let deadline = Instant::now() + limit;
    loop {
        for n in 0..FORK_SLOTS {
            if let Some(lock) = crate::store::lock::Lock::try_acquire(&dir.join(format!("slot-{n}.lock")))? {
                return Ok(lock);
            }
        }
        if Instant::now() >= deadline {
            anyhow::bail!("{FORK_SLOTS} other forks ran for {}s; this save waited its whole bound", limit.as_secs());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    create_new_private(path)?.write_all(text.as_bytes())
}

/// Removes the scratch files of every session whose worker no longer runs.
pub fn remove_stale_scratch(scratch: &Path, worker_running: impl Fn(&SessionId) -> bool) {
    let Ok(entries) = std::fs::read_dir(scratch) else {
        return;
    };
    let session_of = |name: &str| {
        let (session, pid_kind) = name.strip_prefix("fork-")?.split_once('.')?;
        let (pid, kind) = pid_kind.split_once('.')?;
        let ours = pid.bytes().all(|b| b.is_ascii_digit()) && SCRATCH_KINDS.contains(&kind);
        SessionId::parse(session).ok().filter(|_| ours)
    };
    for entry in entries.flatten() {
        if entry.file_name().to_str().and_then(session_of).is_some_and(|session| !worker_running(&session)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

struct RemoveOnDrop<'a>([&'a Path; 4]);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        for path in self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CliResult {
    result: Option<String>,
    is_error: bool,
    subtype: Option<String>,
    usage: Option<Usage>,
    total_cost_usd: Option<f64>,
    /// The HTTP status of a refused request (2.1.328: `api_error_status`).
    api_error_status: Option<u16>,
}

/// Reads `claude --output-format json`'s one object.
pub fn read_result(output: &str) -> Result<ForkReply, ForkError> {
    // The object is the last line; anything printed before it is noise.
    let line = output.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or("");
    let Ok(parsed) = serde_json::from_str::<Map<String, Value>>(line) else {
        return Err(ForkError::NoResult { usage: Usage::default() });
    };
    let cli: CliResult = serde_json::from_value(Value::Object(parsed)).unwrap_or_default();
    let mut usage = cli.usage.unwrap_or_default();
    usage.total_cost_usd = cli.total_cost_usd.unwrap_or(0.0);
    let text = cli.result.unwrap_or_default();
    // A tool_use reply ends the one-turn run: 2.1.328 prints `is_error: true`,
    // `subtype: error_max_turns` and no `result` (measured, tests/e2e s5).
    if cli.subtype.as_deref() == Some("error_max_turns") && text.trim().is_empty() {
        return Err(ForkError::CalledTool { usage });
    }
    if cli.is_error {
        let refusal = super::refusal::classify(
            cli.api_error_status,
            &text,
            crate::env::now_unix(),
            crate::env::local_offset_seconds(),
        );
        let what = if text.trim().is_empty() { cli.subtype.unwrap_or_else(|| "unknown error".into()) } else { text };
        return Err(ForkError::Failed { what: what.trim().chars().take(200).collect(), refusal, usage });
    }
    if text.trim().is_empty() {
        return Err(ForkError::NoText { usage });
    }
    Ok(ForkReply { text, usage })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh save resumes nothing and offers no tool, MCP server or skill;
    /// a resumed one keeps the session's, and a hostile model name is no
    /// flag in either.
    /// The status words come from the variant; the advice and the cost are
    /// data beside them, never parsed back out of the words.
    #[test]
    fn a_fork_error_says_its_words_and_keeps_its_advice_and_cost_apart() {
        let usage = Usage { output_tokens: 3, total_cost_usd: 0.01, ..Usage::default() };
        let login =
            ForkError::Failed {
                what: "Not logged in · Please run /login".into(), refusal: None, usage: usage.clone()
            };
        assert_eq!(login.to_string(), "fork failed: Not logged in · Please run /login");
        assert!(login.advice().is_some_and(|a| a.contains("claude /login")));
        assert_eq!(login.usage(), usage);
        let exited = ForkError::Exited { code: None, said: "Not logged in".into(), usage: Usage::default() };
        assert_eq!(exited.to_string(), "fork exited with a signal: Not logged in");
        assert!(exited.advice().is_some());
        let timed_out = ForkError::TimedOut { secs: 300 };
        assert_eq!(timed_out.to_string(), "fork timed out after 300s");
        assert_eq!((timed_out.advice(), timed_out.usage()), (None, Usage::default()));
        assert_eq!(ForkError::NotFound(None).to_string(), "claude not found on PATH (set MEMORY_SAVE_CLAUDE)");
    }

    #[test]
    fn a_fresh_run_resumes_nothing_and_has_no_tools() {
        let request = |fresh| ForkRequest {
            claude: PathBuf::from("claude"),
            session_id: "s1",
            cwd: Path::new("/"),
            model: Some("--dangerously-skip-permissions".into()),
            effort: Some("high".into()),
            resume_at: Some("u1".into()),
            resume_from: None,
            fresh,
            message: "",
            settings: String::new(),
            timeout: Duration::from_secs(1),
            scratch: Path::new("/"),
            parent_cost_usd: 0.0,
        };
        let fresh = arguments(&request(true), Path::new("/s.json"));
        for absent in ["--resume", "s1", "--fork-session", "--resume-session-at=u1"] {
            assert!(!fresh.iter().any(|a| a == absent), "{absent}: {fresh:?}");
        }
        let at = fresh.iter().position(|a| a == "--tools").unwrap();
        assert_eq!(fresh[at + 1], "", "{fresh:?}");
        for flag in ["--strict-mcp-config", "--disable-slash-commands", "--no-session-persistence", "--effort=high"] {
            assert!(fresh.iter().any(|a| a == flag), "{flag}: {fresh:?}");
        }
        let at = fresh.iter().position(|a| a == "--system-prompt").unwrap();
        assert_eq!(fresh[at + 1], args::FRESH_SYSTEM_PROMPT);
        let resumed = arguments(&request(false), Path::new("/s.json"));
        assert!(resumed.windows(2).any(|w| w[0] == "--resume" && w[1] == "s1"), "{resumed:?}");
        assert!(resumed.iter().any(|a| a == "--resume-session-at=u1") && !resumed.iter().any(|a| a == "--tools"));
        for args in [&fresh, &resumed] {
            assert!(!args.iter().any(|a| a.contains("dangerously")), "{args:?}");
        }
    }

    #[test]
    fn result_cases() {
        let ok = read_result(r#"{"type":"result","is_error":false,"result":"{\"ops\":[]}","usage":{"input_tokens":5,"cache_read_input_tokens":900,"output_tokens":7},"total_cost_usd":0.5}"#).unwrap();
        assert_eq!((ok.usage.input_tokens, ok.usage.cache_read_input_tokens, ok.usage.output_tokens), (5, 900, 7));
        let cases: &[(&str, &str)] = &[
            (r#"{"is_error":true,"result":"API Error: 529 overloaded"}"#, "fork failed: API Error: 529 overloaded"),
            (r#"{"is_error":true,"subtype":"error_during_execution"}"#, "fork failed: error_during_execution"),
            (r#"{"is_error":false,"subtype":"error_max_turns","result":""}"#, "fork called a tool instead of replying"),
            // What 2.1.328 prints when the fork answers with a tool call.
            (
                r#"{"type":"result","subtype":"error_max_turns","is_error":true,"stop_reason":"tool_use","terminal_reason":"max_turns","errors":["Reached maximum number of turns (1)"]}"#,
                "fork called a tool instead of replying",
            ),
            (r#"{"is_error":false,"result":"  "}"#, "fork gave no text"),
            ("not json at all", "fork output is not claude's JSON result"),
            ("", "fork output is not claude's JSON result"),
        ];
        for (output, want) in cases {
            assert_eq!(read_result(output).unwrap_err().to_string(), *want, "{output}");
        }
    }
}
