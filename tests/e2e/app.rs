//! memory-save installed into the bench the way a user installs it: the
//! built binary's own `install` writes the hooks into the temporary HOME's
//! `~/.claude/settings.json`. Plus what the scenarios read back: memory,
//! per-session state, the saves log, hook logs, transcripts, a tmux driver
//! and the report table.

#![allow(dead_code)]

use crate::harness::Bench;
use crate::session::Session;
use crate::standin::{self, RecordedRequest, StandIn};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// The first line of every fork message (src/memory/prompt.rs MARKER).
pub const MARKER: &str = "[memory-save] This is not a user request.";
pub const BIN: &str = env!("CARGO_BIN_EXE_memory-save");

/// One CLI scenario at a time: the machine has two cores, and timing-bound
/// scenarios (Esc during a slow reply, overlapping saves) need them.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn is_fork(req: &RecordedRequest) -> bool {
    req.last_user_text().contains(MARKER)
}

/// A bench whose `claude` is on the CLI's PATH (`<home>/bin`, so the
/// worker finds it as a user's would), with a short fork time limit.
pub fn bench_with_claude_on_path(claude: PathBuf, standin: &StandIn) -> Bench {
    let mut bench = Bench::new(claude, standin.base_url());
    let bin = bench.home().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&bench.claude, bin.join("claude")).unwrap();
    bench.path_prefix.push(bin);
    bench.extra_env.push(("MEMORY_SAVE_FORK_TIMEOUT".into(), "60".into()));
    bench
}

/// The bench with memory-save installed.
pub struct App {
    pub bench: Bench,
}

impl App {
    /// Bench + `memory-save install` (HOME = the temp home), `claude` on the
    /// CLI's PATH (so the worker finds it as a user's would), and a short
    /// fork time limit.
    pub fn new(claude: PathBuf, standin: &StandIn) -> App {
        let bench = bench_with_claude_on_path(claude, standin);
        let out = Command::new(BIN)
            .arg("install")
            .env_clear()
            .env("HOME", bench.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .expect("run memory-save install");
        assert!(out.status.success(), "install failed: {}", String::from_utf8_lossy(&out.stderr));
        let app = App { bench };
        app.config("");
        let settings = app.settings().to_string();
        assert!(
            settings.contains(&format!("{BIN} hook stop")),
            "install did not register the built binary: {settings}"
        );
        app
    }

    /// `memory-save <args>` as the user runs it, in the project.
    pub fn ours(&self, args: &[&str]) -> std::process::Output {
        Command::new(BIN)
            .args(args)
            .current_dir(&self.bench.project)
            .env_clear()
            .env("HOME", self.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .unwrap()
    }

    pub fn home(&self) -> &Path {
        self.bench.home()
    }

    pub fn settings(&self) -> Value {
        let text = std::fs::read_to_string(self.home().join(".claude/settings.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// Merge into the user's settings: hook lists are appended to ours, any
    /// other key is set.
    pub fn merge_settings(&self, patch: Value) {
        let mut settings = self.settings();
        for (k, v) in patch.as_object().unwrap() {
            if k == "hooks" {
                for (event, list) in v.as_object().unwrap() {
                    let hooks = settings["hooks"].as_object_mut().unwrap().entry(event.clone()).or_insert(json!([]));
                    hooks.as_array_mut().unwrap().extend(list.as_array().unwrap().iter().cloned());
                }
            } else {
                settings[k] = v.clone();
            }
        }
        self.bench.write_settings(settings);
    }

    /// A second, logging hook beside ours on every event: each payload
    /// becomes one line of `hooks.log` (see `hook_log`).
    pub fn add_logging_hook(&self) {
        let log = self.home().join("hooks.log");
        let cmd = format!("(tr -d '\\n'; echo) >> '{}'", log.display());
        let hook = json!([{ "hooks": [{ "type": "command", "command": cmd }] }]);
        let mut hooks = serde_json::Map::new();
        for event in
            ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop", "SessionEnd"]
        {
            hooks.insert(event.into(), hook.clone());
        }
        self.merge_settings(json!({ "hooks": hooks }));
    }

    /// Every hook payload logged so far.
    pub fn hook_log(&self) -> Vec<Value> {
        std::fs::read_to_string(self.home().join("hooks.log"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Writes memory-save.toml. The suite saves after every turn
    /// (`save_every_turns = 1`), and every `-p` run whatever its tool calls
    /// (`unattended_min_tools = 0`), unless `text` sets them: its scenarios
    /// follow one `-p` turn to its save; s12 and s27 measure the defaults.
    pub fn config(&self, text: &str) {
        let every = if text.contains("save_every_turns") { "" } else { "save_every_turns = 1\n" };
        let unattended = if text.contains("unattended_min_tools") { "" } else { "unattended_min_tools = 0\n" };
        self.config_exact(&format!("{every}{unattended}{text}"));
    }

    /// Writes memory-save.toml as it is: `""` gives every default.
    pub fn config_exact(&self, text: &str) {
        std::fs::create_dir_all(self.root()).unwrap();
        std::fs::write(self.root().join("memory-save.toml"), text).unwrap();
    }

    pub fn root(&self) -> PathBuf {
        self.home().join(".cli-tweaks")
    }
    pub fn memory_path(&self) -> PathBuf {
        self.root().join("memory/app/MEMORY.md")
    }
    pub fn memory(&self) -> Option<String> {
        std::fs::read_to_string(self.memory_path()).ok()
    }
    pub fn write_memory(&self, text: &str) {
        let p = self.memory_path();
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    pub fn state_dir(&self) -> PathBuf {
        self.root().join("state/memory-save")
    }
    /// `memory-save sessions [ID] --json`.
    fn sessions(&self, id: Option<&str>) -> String {
        let out = self.ours(&[&["sessions", "--json"][..], id.as_slice()].concat());
        assert!(out.status.success(), "sessions: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }
    /// The session as `memory-save sessions --json` shows it (`{}` when
    /// there is none yet).
    pub fn session_state(&self, sid: &str) -> Session {
        Session::find(&self.sessions(Some(sid)), sid)
    }
    /// The sessions memory-save keeps state for (ids).
    pub fn session_ids(&self) -> Vec<String> {
        let listed: Value = serde_json::from_str(&self.sessions(None)).unwrap();
        let mut ids: Vec<String> =
            listed.as_array().unwrap().iter().filter_map(|s| s["session_id"].as_str().map(String::from)).collect();
        ids.sort();
        ids
    }
    /// `saves.jsonl`, one entry per save.
    pub fn saves(&self) -> Vec<Value> {
        std::fs::read_to_string(self.state_dir().join("saves.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.state_dir().join("memory-save.log")).unwrap_or_default()
    }

    /// Waits until the session has finished at least `saves` saves and no
    /// save runs or waits.
    pub fn wait_saved(&self, sid: &str, saves: u64, limit: Duration) -> Session {
        let start = Instant::now();
        loop {
            let s = self.session_state(sid);
            let done = s.saves() >= saves && s.idle();
            if done {
                return s;
            }
            if start.elapsed() > limit {
                panic!(
                    "session {sid}: no finished save #{saves} within {limit:?}; state={s}\nlog={}\nsaves={:?}",
                    self.error_log(),
                    self.saves()
                );
            }
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// The session's transcript in the temp HOME.
    pub fn transcript(&self, sid: &str) -> Option<PathBuf> {
        let projects = self.home().join(".claude/projects");
        std::fs::read_dir(projects).ok()?.flatten().find_map(|d| {
            let p = d.path().join(format!("{sid}.jsonl"));
            p.is_file().then_some(p)
        })
    }

    /// `hookInfos` of every `stop_hook_summary` in the session's transcript:
    /// (command, durationMs).
    pub fn stop_hook_durations(&self, sid: &str) -> Vec<(String, f64)> {
        let Some(path) = self.transcript(sid) else {
            return Vec::new();
        };
        let text = std::fs::read_to_string(path).unwrap();
        let mut out = Vec::new();
        for line in text.lines() {
            if !line.contains("stop_hook_summary") {
                continue;
            }
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if let Some(infos) = v["hookInfos"].as_array() {
                for info in infos {
                    out.push((
                        info["command"].as_str().unwrap_or("?").to_string(),
                        info["durationMs"].as_f64().unwrap_or(f64::NAN),
                    ));
                }
            }
        }
        out
    }
}

/// The session id a `-p --output-format json` run printed.
pub fn session_of(run: &crate::harness::Run) -> String {
    assert!(run.success(), "claude failed: {run:?}");
    let out = run.json();
    assert_eq!(out["is_error"], false, "{out}");
    out["session_id"].as_str().unwrap().to_string()
}

/// Compares a fork request with the parent's last request (docs/design.md §4): same
/// model, same tools, same system prompt, every parent message unchanged
/// (cache_control markers aside), the fork's message last. Returns the
/// cacheable share: bytes of the common prefix over bytes of the fork request.
pub fn check_fork_against_parent(parent: &RecordedRequest, fork: &RecordedRequest) -> f64 {
    assert_eq!(fork.model(), parent.model(), "the fork must use the session's model");
    assert_eq!(
        standin::normalise(&fork.body["tools"]),
        standin::normalise(&parent.body["tools"]),
        "tool lists differ: parent {:?} fork {:?}",
        parent.tool_names(),
        fork.tool_names()
    );
    assert_eq!(
        standin::normalise(&fork.body["system"]),
        standin::normalise(&parent.body["system"]),
        "system prompts differ"
    );
    let (pm, fm) = (parent.messages(), fork.messages());
    assert!(fm.len() > pm.len(), "the fork adds its message");
    for (i, (p, f)) in pm.iter().zip(fm).enumerate() {
        assert_eq!(standin::normalise(f), standin::normalise(p), "message {i} differs between parent and fork");
    }
    assert!(fork.last_user_text().starts_with(MARKER));
    let (p, f) = (standin::prompt_text(&parent.body), standin::prompt_text(&fork.body));
    let prefix = standin::common_prefix_len(&p, &f);
    for m in &fm[pm.len()..] {
        let t = standin::normalise(m).to_string();
        eprintln!("fork adds: {} ({} bytes): {}", m["role"], t.len(), t.chars().take(300).collect::<String>());
    }
    eprintln!(
        "fork request: {} bytes, common prefix with the parent {} bytes, uncached tail {} bytes",
        f.len(),
        prefix,
        f.len() - prefix
    );
    prefix as f64 / f.len() as f64
}

/// The report table: rows go to stderr (`-- --nocapture` shows them) and to
/// `target/e2e/report-<release>.md`, emptied by the first row of each test
/// run, so each tested release keeps its own figures.
pub fn report(scenario: &str, figure: &str, value: impl std::fmt::Display) {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    let path = FILE.get_or_init(|| {
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
        let dir = target.join("e2e");
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("report-{}.md", crate::harness::version()));
        let header =
            format!("Claude Code {}\n\n| scenario | figure | value |\n|---|---|---|\n", crate::harness::version());
        std::fs::write(&p, header).unwrap();
        p
    });
    static WRITE: Mutex<()> = Mutex::new(());
    let _g = WRITE.lock().unwrap_or_else(|p| p.into_inner());
    let row = format!("| {scenario} | {figure} | {value} |\n");
    eprint!("report: {row}");
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(row.as_bytes()).unwrap();
}

/// The fork's token figures as the stand-in reported them.
pub fn report_fork_tokens(scenario: &str, fork: &RecordedRequest) {
    let u = fork.usage.unwrap();
    report(
        scenario,
        "fork tokens (in / cache read / cache write / out)",
        format!(
            "{} / {} / {} / {}",
            u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens, u.output_tokens
        ),
    );
}

/// The interactive CLI in a private tmux server.
pub struct Tmux {
    sock: String,
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

impl Tmux {
    pub fn start(bench: &Bench, args: &[&str]) -> Tmux {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let sock = format!("ms-e2e-{}-{}", std::process::id(), N.fetch_add(1, std::sync::atomic::Ordering::SeqCst));
        let mut line = String::from("env -i");
        for (k, v) in bench.env_pairs() {
            line.push_str(&format!(" {k}={}", sh_quote(&v)));
        }
        line.push_str(&format!(" {}", sh_quote(&bench.claude.to_string_lossy())));
        for a in args {
            line.push_str(&format!(" {}", sh_quote(a)));
        }
        line.push_str("; sleep 600");
        let ok = Command::new("tmux")
            .args(["-L", &sock, "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-c"])
            .arg(&bench.project)
            .arg(&line)
            .status()
            .expect("tmux not installed (apt-get install -y tmux)");
        assert!(ok.success(), "tmux new-session failed");
        Tmux { sock }
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux").args(["-L", &self.sock]).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Type `text`, then Enter as a separate key.
    pub fn send_line(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
        thread::sleep(Duration::from_millis(300));
        self.tmux(&["send-keys", "-t", "t", "Enter"]);
    }

    pub fn key(&self, key: &str) {
        self.tmux(&["send-keys", "-t", "t", key]);
    }

    pub fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// Polls `cond` every 100 ms up to `limit`.
pub fn wait_for<T>(limit: Duration, what: &str, mut cond: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = cond() {
            return v;
        }
        if start.elapsed() > limit {
            panic!("timed out after {limit:?} waiting for {what}");
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// For a fork of an interactive session, which differs from its parent in
/// the billing-header block (`cc_entrypoint=cli` becomes `sdk-cli`,
/// measured): the raw shared prefix, and the share with that block left out
/// of both. Reported, not required: whether the real API caches across that
/// block cannot be measured offline.
pub fn interactive_shares(parent: &RecordedRequest, fork: &RecordedRequest) -> (f64, f64) {
    let share = |p: &Value, f: &Value| {
        let (p, f) = (standin::prompt_text(p), standin::prompt_text(f));
        standin::common_prefix_len(&p, &f) as f64 / f.len() as f64
    };
    let without_header = |body: &Value| {
        let mut body = body.clone();
        if let Some(system) = body["system"].as_array_mut().filter(|s| !s.is_empty()) {
            system.remove(0);
        }
        body
    };
    (share(&parent.body, &fork.body), share(&without_header(&parent.body), &without_header(&fork.body)))
}
