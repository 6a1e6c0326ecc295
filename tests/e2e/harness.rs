//! Runs the real Claude Code CLI offline against the stand-in: a temporary
//! HOME with the first-run dialogs pre-accepted, a fresh git project, and an
//! environment that keeps every request on the loopback.

#![allow(dead_code)] // not every test uses every helper

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::thread;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// The dummy key. Kept at most 20 characters: `~/.claude.json`'s
/// `customApiKeyResponses.approved` holds the key's last 20 characters, and
/// the interactive CLI asks about any key not listed there.
pub const API_KEY: &str = "sk-ant-e2e-dummy";

/// The release under test: `CLAUDE_CODE_VERSION`, else the first listed in
/// tests/e2e/versions.txt.
pub fn version() -> String {
    std::env::var("CLAUDE_CODE_VERSION").ok().filter(|v| !v.is_empty()).unwrap_or_else(|| {
        let listed = include_str!("versions.txt");
        listed.lines().find(|l| !l.starts_with('#') && !l.trim().is_empty()).unwrap_or("2.1.328").trim().to_string()
    })
}

/// Find the CLI: `MEMORY_SAVE_E2E_CLAUDE`, else `scripts/install-claude-code.sh`
/// (which installs it from npm once into target/e2e). Not found: with
/// `CI=true` this panics (a missing CLI must fail CI, never skip); otherwise
/// it prints "skipping: …" and returns None. Computed once per test process.
pub fn claude() -> Option<PathBuf> {
    static FOUND: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match FOUND.get_or_init(locate_claude) {
        Ok(p) => Some(p.clone()),
        Err(why) => missing(&format!("Claude Code CLI not available: {why}")),
    }
}

/// tmux, for the scenarios that drive the interactive CLI; same policy as
/// the CLI itself.
pub fn tmux() -> Option<()> {
    let found = Command::new("tmux").arg("-V").stdout(Stdio::null()).stderr(Stdio::null()).status();
    match found {
        Ok(status) if status.success() => Some(()),
        _ => missing("tmux not found (apt-get install tmux, or brew install tmux)"),
    }
}

/// A tool the suite needs is missing: a failure in CI, never a skip there;
/// elsewhere the test passes by doing nothing, and the run says so once,
/// on stderr past the test harness's capture (eprintln! in a passing test
/// is never shown), so a green run cannot hide that nothing ran.
fn missing<T>(why: &str) -> Option<T> {
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("{why} (CI=true: a missing tool is a failure)");
    }
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if !said.iter().any(|s| s == why) {
        said.push(why.to_string());
        use std::io::Write;
        let _ =
            writeln!(std::io::stderr(), "e2e skipped: {why}; these tests pass without running (CI=true fails instead)");
    }
    None
}

fn locate_claude() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("MEMORY_SAVE_E2E_CLAUDE") {
        let p = PathBuf::from(p);
        return if p.is_file() { Ok(p) } else { Err(format!("MEMORY_SAVE_E2E_CLAUDE={} is not a file", p.display())) };
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(root.join("scripts/install-claude-code.sh"));
    cmd.current_dir(root).stdin(Stdio::null()).stderr(Stdio::inherit());
    // Keep the cache beside the build when the target folder is moved.
    if std::env::var_os("MEMORY_SAVE_E2E_CACHE").is_none()
        && let Some(t) = std::env::var_os("CARGO_TARGET_DIR")
    {
        cmd.env("MEMORY_SAVE_E2E_CACHE", Path::new(&t).join("e2e"));
    }
    let out = cmd.output().map_err(|e| format!("cannot run install-claude-code.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!("install-claude-code.sh failed ({})", out.status));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("").trim();
    let p = PathBuf::from(last);
    if p.is_file() { Ok(p) } else { Err(format!("install-claude-code.sh printed no executable: {last:?}")) }
}

/// One isolated world for the CLI: HOME and project are temporary folders.
pub struct Bench {
    pub claude: PathBuf,
    pub base_url: String,
    home: TempDir,
    project_root: TempDir,
    /// Canonical path (the CLI keys trust and transcripts by the real path).
    pub project: PathBuf,
    /// Extra variables for every CLI run (and so for its hooks).
    pub extra_env: Vec<(String, String)>,
    /// Folders put in front of PATH for every CLI run.
    pub path_prefix: Vec<PathBuf>,
    /// Variables left out of every CLI run, even the bench's own (e.g.
    /// `ANTHROPIC_API_KEY`, for a run as a subscription login).
    pub removed_env: Vec<String>,
}

/// What one CLI run left behind.
#[derive(Debug)]
pub struct Run {
    pub status: Option<ExitStatus>, // None: killed at the time limit
    pub stdout: String,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Run {
    /// The `--output-format json` object (the last JSON line of stdout).
    pub fn json(&self) -> Value {
        self.stdout
            .lines()
            .rev()
            .find_map(|l| serde_json::from_str(l).ok())
            .unwrap_or_else(|| panic!("no JSON on stdout; stdout={:?} stderr={:?}", self.stdout, self.stderr))
    }
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }
}

impl Bench {
    pub fn new(claude: PathBuf, base_url: String) -> Bench {
        let home = tempfile::Builder::new().prefix("ms-e2e-home-").tempdir().unwrap();
        let project_root = tempfile::Builder::new().prefix("ms-e2e-proj-").tempdir().unwrap();
        let project = project_root.path().join("app");
        std::fs::create_dir(&project).unwrap();
        let project = project.canonicalize().unwrap();
        let git = Command::new("git").args(["init", "-q"]).current_dir(&project).status();
        assert!(git.is_ok_and(|s| s.success()), "git init failed");

        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        let bench = Bench {
            claude,
            base_url,
            home,
            project_root,
            project,
            extra_env: Vec::new(),
            path_prefix: Vec::new(),
            removed_env: Vec::new(),
        };
        bench.write_claude_json(json!({}));
        bench.write_settings(json!({}));
        bench
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// `~/.claude.json` with the first-run state already behind us, plus
    /// `extra` merged in at the top level. Without these keys the CLI shows
    /// (interactive) the onboarding screen, which tries api.anthropic.com
    /// and exits offline; the folder-trust dialog; the "use this API key?"
    /// dialog; and notices. `-p` runs skip the dialogs but are happy with them.
    pub fn write_claude_json(&self, extra: Value) {
        let key_tail: String = {
            let chars: Vec<char> = API_KEY.chars().collect();
            chars[chars.len().saturating_sub(20)..].iter().collect()
        };
        let mut v = json!({
            "hasCompletedOnboarding": true,
            "lastReleaseNotesSeen": version(),
            "hasSeenAutoDefaultNotice": true,
            "officialMarketplaceAutoInstallAttempted": true,
            "customApiKeyResponses": { "approved": [key_tail], "rejected": [] },
            "projects": {
                self.project.to_string_lossy(): { "hasTrustDialogAccepted": true, "allowedTools": [] }
            }
        });
        if let (Some(base), Some(add)) = (v.as_object_mut(), extra.as_object()) {
            for (k, val) in add {
                base.insert(k.clone(), val.clone());
            }
        }
        std::fs::write(self.home.path().join(".claude.json"), serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }

    /// Replace `~/.claude/settings.json` (user settings: hooks, permissions…).
    pub fn write_settings(&self, settings: Value) {
        let path = self.home.path().join(".claude/settings.json");
        std::fs::write(path, serde_json::to_string_pretty(&settings).unwrap()).unwrap();
    }

    /// A command for the CLI with a clean environment: only what it needs,
    /// so nothing from the developer's own session (ANTHROPIC_*, CLAUDE_*,
    /// CLAUDECODE when run inside Claude Code) leaks in.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.claude);
        cmd.args(args).current_dir(&self.project).env_clear();
        cmd.envs(self.env_pairs());
        cmd
    }

    /// The whole environment of a CLI run, as `command` sets it (also for a
    /// CLI started under tmux with `env -i`).
    pub fn env_pairs(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = Vec::new();
        for var in ["LANG", "TERM"] {
            if let Ok(v) = std::env::var(var) {
                env.push((var.into(), v));
            }
        }
        let mut path: Vec<PathBuf> = self.path_prefix.clone();
        if let Some(p) = std::env::var_os("PATH") {
            path.extend(std::env::split_paths(&p));
        }
        let path = std::env::join_paths(path).unwrap();
        env.push(("PATH".into(), path.to_string_lossy().into_owned()));
        env.push(("HOME".into(), self.home.path().to_string_lossy().into_owned()));
        env.push(("ANTHROPIC_BASE_URL".into(), self.base_url.clone()));
        env.push(("ANTHROPIC_API_KEY".into(), API_KEY.into()));
        // With these three set the CLI opens no connection but the
        // stand-in's (checked with strace); without them it looks up
        // telemetry hosts and sends HEAD /api/hello to the base URL.
        for var in [
            "DISABLE_TELEMETRY",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
            "DISABLE_AUTOUPDATER",
            "DISABLE_ERROR_REPORTING",
        ] {
            env.push((var.into(), "1".into()));
        }
        env.extend(self.extra_env.iter().cloned());
        env.retain(|(k, _)| !self.removed_env.contains(k));
        env
    }

    /// Run the CLI with `args` (stdin from `input`, or empty), killing its
    /// whole process group past `limit`.
    pub fn run(&self, args: &[&str], input: Option<&str>, limit: Duration) -> Run {
        let mut cmd = self.command(args);
        cmd.stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0); // own group: the kill also reaches tool subprocesses
        let start = Instant::now();
        let mut child = cmd.spawn().expect("spawn claude");
        if let Some(text) = input {
            let mut stdin = child.stdin.take().unwrap();
            let text = text.to_string();
            thread::spawn(move || {
                let _ = stdin.write_all(text.as_bytes()); // drop closes stdin
            });
        }
        // Drain both pipes in threads so a chatty child never blocks on a full pipe.
        let drain = |mut r: Box<dyn Read + Send>| {
            thread::spawn(move || {
                let mut s = String::new();
                let _ = r.read_to_string(&mut s);
                s
            })
        };
        let out = drain(Box::new(child.stdout.take().unwrap()));
        let err = drain(Box::new(child.stderr.take().unwrap()));
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if start.elapsed() > limit {
                unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
                let _ = child.wait();
                break None;
            }
            thread::sleep(Duration::from_millis(20));
        };
        Run { status, stdout: out.join().unwrap(), stderr: err.join().unwrap(), elapsed: start.elapsed() }
    }

    /// `claude -p <prompt> --output-format json [extra…]` in the project.
    pub fn print(&self, prompt: &str, extra: &[&str], limit: Duration) -> Run {
        let mut args = vec!["-p", prompt, "--output-format", "json"];
        args.extend_from_slice(extra);
        self.run(&args, None, limit)
    }
}
