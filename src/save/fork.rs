//! Runs the tool-less fork: `claude -p --resume <id> --fork-session …` with
//! the message on stdin, bounded in time, and reads its JSON result.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::hook::FORK_MARKER_ENV;
use crate::state::Usage;

/// Overrides where `claude` is found.
pub const CLAUDE_ENV: &str = "MEMORY_SAVE_CLAUDE";
/// Variables Claude Code sets for its hooks that describe the running
/// session, not the user's setup (measured on 2.1.328).
const SESSION_ENV: [&str; 7] = [
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_CHILD_SESSION",
    "CLAUDE_PID",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_PROJECT_DIR",
    "CLAUDE_EFFORT",
];

pub struct ForkRequest<'a> {
    pub claude: PathBuf,
    pub session_id: &'a str,
    pub cwd: &'a Path,
    pub model: Option<String>,
    pub effort: Option<String>,
    pub message: &'a str,
    pub settings: String,
    pub timeout: Duration,
    /// Where the message, output and error files go (our state folder).
    pub scratch: &'a Path,
    /// The session's cost so far: a resumed session's `total_cost_usd`
    /// counts the parent's cost too (measured), so the fork's own cost is
    /// the difference.
    pub parent_cost_usd: f64,
}

#[derive(Debug)]
pub struct ForkReply {
    pub text: String,
    pub usage: Usage,
}

/// Why a fork gave nothing to read, in status-line words.
#[derive(Debug, Clone, PartialEq)]
pub struct ForkError {
    pub status: String,
    pub usage: Usage,
}

impl ForkError {
    fn new(status: impl Into<String>) -> ForkError {
        ForkError { status: status.into(), usage: Usage::default() }
    }
}

pub fn find_claude() -> Result<PathBuf, ForkError> {
    if let Some(path) = std::env::var_os(CLAUDE_ENV).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    which::which("claude").map_err(|_| ForkError::new("claude not found on PATH (set MEMORY_SAVE_CLAUDE)"))
}

/// The flags SPEC 4.2 measured: the fork's request keeps the parent's tools,
/// system prompt and messages (so the prompt cache serves it), yet no tool
/// runs (`dontAsk`, no settings whose allow rules apply, one turn), no hook
/// fires, and no transcript is left behind.
pub fn arguments(req: &ForkRequest) -> Vec<String> {
    let mut args: Vec<String> = [
        "-p",
        "--resume",
        req.session_id,
        "--fork-session",
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--settings",
        &req.settings,
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
    if let Some(model) = &req.model {
        args.extend(["--model".into(), model.clone()]);
    }
    if let Some(effort) = &req.effort {
        args.extend(["--effort".into(), effort.clone()]);
    }
    args
}

pub fn run(req: &ForkRequest) -> Result<ForkReply, ForkError> {
    let io = |what: &str, e: std::io::Error| ForkError::new(format!("cannot {what}: {e}"));
    let base = req.scratch.join(format!("fork-{}", req.session_id));
    let input_path = base.with_extension("in");
    let output_path = base.with_extension("out");
    let error_path = base.with_extension("err");
    // Worth nothing once this call returns: removed on every way out, so the
    // state folder does not keep a set per session forever.
    let _scratch = RemoveOnDrop([&input_path, &output_path, &error_path]);
    // Files, not pipes: the message can pass 128 KiB, and nothing has to
    // drain a pipe while we wait.
    {
        use std::io::Write;
        let mut input = create_private(&input_path).map_err(|e| io("write the fork message", e))?;
        input.write_all(req.message.as_bytes()).map_err(|e| io("write the fork message", e))?;
    }
    let stdin = File::open(&input_path).map_err(|e| io("reopen the fork message", e))?;
    let stdout = create_private(&output_path).map_err(|e| io("create the fork output file", e))?;
    let stderr = create_private(&error_path).map_err(|e| io("create the fork error file", e))?;
    let cwd = if req.cwd.is_dir() { req.cwd.to_path_buf() } else { std::env::temp_dir() };

    let started = Instant::now();
    let mut command = Command::new(&req.claude);
    // The hook inherited the running session's own variables; the fork is a
    // separate process and must not pose as that session or talk to its
    // socket. Authentication variables stay.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy();
        if SESSION_ENV.contains(&name.as_ref()) || name.starts_with("CLAUDE_CODE_MESSAGING") {
            command.env_remove(name.as_ref());
        }
    }
    let mut child = command
        .args(arguments(req))
        .current_dir(cwd)
        .env(FORK_MARKER_ENV, "1")
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr))
        .process_group(0)
        .spawn()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ForkError::new(format!("claude not found at {}", req.claude.display())),
            _ => ForkError::new(format!("cannot run {}: {e}", req.claude.display())),
        })?;
    let pgid = child.id() as i32;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() < req.timeout => std::thread::sleep(Duration::from_millis(50)),
            Ok(None) => {
                kill_group(pgid, &mut child);
                let _ = std::fs::remove_file(&input_path);
                return Err(ForkError::new(format!("fork timed out after {}s", req.timeout.as_secs())));
            }
            Err(e) => return Err(io("wait for the fork", e)),
        }
    };
    let duration_ms = started.elapsed().as_millis() as u64;
    let _ = std::fs::remove_file(&input_path);
    let output = std::fs::read_to_string(&output_path).unwrap_or_default();
    let errors = std::fs::read_to_string(&error_path).unwrap_or_default();
    let mut result = read_result(&output);
    let usage = match &mut result {
        Ok(reply) => &mut reply.usage,
        Err(e) => &mut e.usage,
    };
    usage.duration_ms = duration_ms;
    usage.total_cost_usd = (usage.total_cost_usd - req.parent_cost_usd).max(0.0);
    match result {
        Ok(reply) => Ok(reply),
        Err(mut e) if !status.success() && e.status.starts_with("fork output") => {
            let code = status.code().map_or("a signal".to_string(), |c| format!("code {c}"));
            e.status = format!("fork exited with {code}: {}", last_line(&errors));
            Err(e)
        }
        Err(e) => Err(e),
    }
}

/// A fresh file only we can read (the message holds the memory). Any file
/// of that name goes first: a fork left running by a killed worker still
/// writes to the old one, never into this save's output.
fn create_private(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let _ = std::fs::remove_file(path);
    std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)
}

struct RemoveOnDrop<'a>([&'a Path; 3]);

impl Drop for RemoveOnDrop<'_> {
    fn drop(&mut self) {
        for path in self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Ends the fork and anything it started: it runs in its own process group.
fn kill_group(pgid: i32, child: &mut std::process::Child) {
    // SAFETY: kill(2) with a negative pid signals the process group we
    // created for this child; it touches no memory of ours.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let grace = Instant::now();
    while grace.elapsed() < Duration::from_secs(2) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = child.wait();
}

fn last_line(text: &str) -> String {
    let line = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("no error output").trim();
    line.chars().take(200).collect()
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct CliResult {
    result: Option<String>,
    is_error: bool,
    subtype: Option<String>,
    usage: Option<Usage>,
    total_cost_usd: Option<f64>,
}

/// Reads `claude --output-format json`: one object with `result`,
/// `is_error`, `subtype`, `usage`, `total_cost_usd`.
pub fn read_result(output: &str) -> Result<ForkReply, ForkError> {
    // The object is the last non-empty line; anything printed before it is
    // noise.
    let line = output.lines().rev().find(|l| l.trim_start().starts_with('{')).unwrap_or("");
    let Ok(parsed) = serde_json::from_str::<Map<String, Value>>(line) else {
        return Err(ForkError::new("fork output is not claude's JSON result"));
    };
    let cli: CliResult = serde_json::from_value(Value::Object(parsed)).unwrap_or_default();
    let mut usage = cli.usage.unwrap_or_default();
    usage.total_cost_usd = cli.total_cost_usd.unwrap_or(0.0);
    let text = cli.result.unwrap_or_default();
    // A tool_use reply ends the one-turn run: 2.1.328 prints `is_error: true`,
    // `subtype: error_max_turns` and no `result` (measured, tests/e2e s5).
    if cli.subtype.as_deref() == Some("error_max_turns") && text.trim().is_empty() {
        return Err(ForkError { status: "fork called a tool instead of replying".into(), usage });
    }
    if cli.is_error {
        let what = if text.trim().is_empty() { cli.subtype.unwrap_or_else(|| "unknown error".into()) } else { text };
        return Err(ForkError {
            status: format!("fork failed: {}", what.trim().chars().take(200).collect::<String>()),
            usage,
        });
    }
    if text.trim().is_empty() {
        let why = match cli.subtype.as_deref() {
            Some("error_max_turns") => "fork called a tool instead of replying",
            _ => "fork gave no text",
        };
        return Err(ForkError { status: why.into(), usage });
    }
    Ok(ForkReply { text, usage })
}

/// What the fork needs from the session's transcript: the last model it
/// used (the prompt cache is per model, so the fork must use the same one)
/// and its cost so far.
#[derive(Debug, Default, PartialEq)]
pub struct TranscriptFacts {
    pub model: Option<String>,
    pub cost_usd: f64,
}

pub fn transcript_facts(transcript: &Path) -> TranscriptFacts {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 1024 * 1024;
    let mut tail = Vec::new();
    if let Ok(mut file) = File::open(transcript) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).is_ok() {
            let _ = file.take(TAIL).read_to_end(&mut tail);
        }
    }
    let tail = String::from_utf8_lossy(&tail);
    let mut facts = TranscriptFacts::default();
    let mut cost_seen = false;
    for line in tail.lines().rev() {
        if facts.model.is_some() && cost_seen {
            break;
        }
        let is_assistant = facts.model.is_none() && line.contains("\"assistant\"");
        let is_cost = !cost_seen && line.contains("\"cost-state\"");
        if !is_assistant && !is_cost {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Value>(line) else { continue };
        match entry.get("type").and_then(Value::as_str) {
            Some("assistant") if is_assistant => {
                let model = entry.pointer("/message/model").and_then(Value::as_str).unwrap_or("");
                if !model.is_empty() && !model.starts_with('<') {
                    facts.model = Some(model.to_string());
                }
            }
            Some("cost-state") if is_cost => {
                facts.cost_usd = entry.get("totalCostUSD").and_then(Value::as_f64).unwrap_or(0.0);
                cost_seen = true;
            }
            _ => {}
        }
    }
    facts
}

/// The `--settings` JSON: hooks off, plus what the session's settings carry
/// that the fork needs to authenticate and reach the API the same way
/// (`--setting-sources ""` drops them). Never the allow rules or hooks.
pub fn fork_settings(settings_files: &[PathBuf]) -> String {
    const CARRIED: [&str; 4] = ["apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "gcpAuthRefresh"];
    let mut out = Map::new();
    out.insert("disableAllHooks".into(), Value::Bool(true));
    let mut env = Map::new();
    for path in settings_files {
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        let Ok(Value::Object(settings)) = serde_json::from_str::<Value>(&text) else { continue };
        if let Some(Value::Object(vars)) = settings.get("env") {
            env.extend(vars.clone());
        }
        for key in CARRIED {
            if let Some(value) = settings.get(key) {
                out.insert(key.into(), value.clone());
            }
        }
    }
    env.insert(FORK_MARKER_ENV.into(), Value::String("1".into()));
    out.insert("env".into(), Value::Object(env));
    Value::Object(out).to_string()
}

/// The settings files a session reads, lowest precedence first.
pub fn settings_files(cwd: &Path) -> Vec<PathBuf> {
    let config_dir = std::env::var_os("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| crate::paths::home_dir().ok().map(|h| h.join(".claude")));
    let mut files: Vec<PathBuf> = config_dir.into_iter().map(|d| d.join("settings.json")).collect();
    files.push(cwd.join(".claude").join("settings.json"));
    files.push(cwd.join(".claude").join("settings.local.json"));
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328/transcript-sample.jsonl");

    #[test]
    fn facts_from_a_real_transcript() {
        let facts = transcript_facts(Path::new(SAMPLE));
        assert_eq!(facts.model.as_deref(), Some("claude-opus-5-5"));
        assert!(facts.cost_usd > 0.0, "{facts:?}");
        assert_eq!(transcript_facts(Path::new("/nonexistent")), TranscriptFacts::default());
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
            assert_eq!(read_result(output).unwrap_err().status, *want, "{output}");
        }
    }

    #[test]
    fn settings_carry_auth_but_never_permissions_or_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let user = dir.path().join("user.json");
        std::fs::write(&user, r#"{"env":{"ANTHROPIC_BASE_URL":"http://x","A":"1"},"apiKeyHelper":"/bin/key","permissions":{"allow":["Bash"]},"hooks":{"Stop":[]},"model":"opus"}"#).unwrap();
        let local = dir.path().join("local.json");
        std::fs::write(&local, r#"{"env":{"A":"2"}}"#).unwrap();
        let settings: Value =
            serde_json::from_str(&fork_settings(&[user, local, dir.path().join("missing.json")])).unwrap();
        assert_eq!(settings["disableAllHooks"], true);
        assert_eq!(settings["apiKeyHelper"], "/bin/key");
        assert_eq!(settings["env"]["A"], "2");
        assert_eq!(settings["env"]["ANTHROPIC_BASE_URL"], "http://x");
        assert_eq!(settings["env"][FORK_MARKER_ENV], "1");
        assert!(settings.get("permissions").is_none() && settings.get("hooks").is_none());
    }
}
