//! The test bench: a temporary HOME, memory root and git project, a fake
//! `claude` that records each call and prints a scripted reply, and a
//! builder that runs the built binary as Claude Code would run a hook.

#![allow(dead_code)] // not every test uses every helper

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_memory-save");
pub const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328");
/// Every wait for the background worker ends by then: the machine is small
/// and shared, so this is generous; a passing test never waits this long.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Session ids of the fixtures.
pub const SID: &str = "c7913528-c726-407d-a030-104c5096a70b"; // Stop.json, UserPromptSubmit.json
pub const SID_OTHER: &str = "e4bc3e67-cb90-4f19-b9b8-fc7038273c42"; // PostToolUse, SessionEnd-other, task notification

pub const ARCH: &str = "Architecture & Config Facts";

/// The fake `claude`. Each call takes the first free `calls/N` (mkdir is
/// atomic, so concurrent calls never share a number) and records argv
/// (NUL-separated), stdin, the fork marker from its environment, its folder,
/// its pid and its parent's (the worker's); starts a child that sleeps
/// `replies/N.sleep` seconds if present (its pid recorded), and only then
/// marks itself started. Then it waits for `replies/N.go` if `replies/N.hold` exists,
/// waits for its sleeping child, prints `replies/N.json` or
/// else `replies/default.json` (and `replies/N.stderr` to stderr), and exits with `replies/N.exit` (default 0).
const FAKE_CLAUDE: &str = r#"#!/bin/bash
root='@ROOT@'
n=1
until mkdir "$root/calls/$n" 2>/dev/null; do n=$((n+1)); done
c="$root/calls/$n"
r="$root/replies"
echo $$ > "$c/pid"
echo $PPID > "$c/ppid"
pwd > "$c/cwd"
printf '%s\0' "$@" > "$c/args"
prev=
for a in "$@"; do
  if [ "$prev" = "--settings" ] && [ -f "$a" ]; then
    cat "$a" > "$c/settings"
    stat -c %a "$a" > "$c/settings.mode" 2>/dev/null || stat -f %Lp "$a" > "$c/settings.mode"
  fi
  if [ "$prev" = "--resume" ] && [ -f "$a" ]; then cat "$a" > "$c/resumed"; fi
  prev=$a
done
env | grep -E '^(CLAUDE|ENABLE_IDE|ANTHROPIC|HTTPS?_PROXY|NODE_EXTRA_CA|DISABLE_COMPACT)' | sort > "$c/session-env"
env | grep '^MEMORY_SAVE_FORK=' > "$c/env"
cat > "$c/stdin"
if [ -f "$r/$n.sleep" ]; then
  sleep "$(cat "$r/$n.sleep")" &
  echo $! > "$c/sleep.pid"
fi
touch "$c/started"
if [ -e "$r/$n.hold" ]; then
  while [ ! -e "$r/$n.go" ]; do sleep 0.05; done
fi
if [ -f "$c/sleep.pid" ]; then wait "$(cat "$c/sleep.pid")"; fi
if [ -f "$r/$n.stderr" ]; then cat "$r/$n.stderr" >&2; fi
if [ -f "$r/$n.json" ]; then cat "$r/$n.json"; elif [ -f "$r/default.json" ]; then cat "$r/default.json"; fi
touch "$c/done"
if [ -f "$r/$n.exit" ]; then exit "$(cat "$r/$n.exit")"; fi
exit 0
"#;

pub struct Env {
    tmp: TempDir,
    /// The default project: `<tmp>/proj`, a git repository.
    pub proj: PathBuf,
    pub home: PathBuf,
    /// MEMORY_SAVE_HOME.
    pub mem: PathBuf,
    pub fake_dir: PathBuf,
    claude: PathBuf,
    vars: Vec<(String, String)>,
}

impl Env {
    pub fn new() -> Env {
        let tmp = tempfile::Builder::new().prefix("memory-save-cli.").tempdir().unwrap();
        let root = tmp.path().to_path_buf();
        let home = root.join("home");
        let mem = root.join("mem");
        let fake_dir = root.join("fake");
        for dir in [&home, &mem, &fake_dir.join("calls"), &fake_dir.join("replies")] {
            fs::create_dir_all(dir).unwrap();
        }
        let claude = fake_dir.join("claude");
        fs::write(&claude, FAKE_CLAUDE.replace("@ROOT@", fake_dir.to_str().unwrap())).unwrap();
        make_executable(&claude);
        let env = Env {
            proj: root.join("proj"),
            home,
            mem,
            fake_dir,
            claude,
            tmp,
            // A stuck fork must not outlive a failed test by minutes.
            vars: vec![("MEMORY_SAVE_FORK_TIMEOUT".into(), "60".into())],
        };
        env.git_init("proj");
        env.script_default(&no_change());
        env.config("");
        env
    }

    /// Writes memory-save.toml. The bench saves after every turn
    /// (`save_every_turns = 1`) unless `text` sets it: most tests follow
    /// one turn to its save; the batching default has tests of its own.
    pub fn config(&self, text: &str) {
        let every = if text.contains("save_every_turns") { "" } else { "save_every_turns = 1\n" };
        self.config_exact(&format!("{every}{text}"));
    }

    /// Writes memory-save.toml as it is: `""` gives every default.
    pub fn config_exact(&self, text: &str) {
        let path = self.mem.join("memory-save.toml");
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    }

    pub fn root(&self) -> &Path {
        self.tmp.path()
    }

    /// Every process this bench starts gets `key=value`.
    pub fn with_var(mut self, key: &str, value: &str) -> Env {
        self.vars.retain(|(k, _)| k != key);
        self.vars.push((key.into(), value.into()));
        self
    }

    /// Processes started from now on no longer get `key` from the bench.
    pub fn without_var(mut self, key: &str) -> Env {
        self.vars.retain(|(k, _)| k != key);
        self
    }

    /// MEMORY_SAVE_CLAUDE points here instead of at the fake.
    pub fn with_claude(mut self, path: &Path) -> Env {
        self.claude = path.to_path_buf();
        self
    }

    /// `proj` as a team's repository: a first commit, then `team init`.
    pub fn team_init(&self) {
        self.git(&self.proj, &["commit", "-q", "--allow-empty", "-m", "start"]);
        self.cmd(&["team", "init"]).in_dir(&self.proj).run().ok();
    }

    /// What SessionStart's part 1 gives a session of `dir`, as JSON (`Null`
    /// when it prints nothing; anything else that is not JSON fails).
    #[track_caller]
    pub fn load_part1(&self, dir: &Path, session: &str) -> Value {
        let out = self.hook("session-start").fixture("SessionStart-startup.json").session(session).cwd(dir);
        let stdout = out.arg("--part").arg("1").run().ok().stdout;
        if stdout.trim().is_empty() {
            return Value::Null;
        }
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("part 1 printed what is not JSON ({e}): {stdout:?}"))
    }

    /// `<tmp>/<name>`, a fresh git repository.
    pub fn git_init(&self, name: &str) -> PathBuf {
        let dir = self.root().join(name);
        fs::create_dir_all(&dir).unwrap();
        self.git(&dir, &["init", "-q"]);
        dir
    }

    /// `<tmp>/<name>`, a plain folder.
    pub fn folder(&self, name: &str) -> PathBuf {
        let dir = self.root().join(name);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// An `EDITOR` that replaces the file it is given with `text`, after
    /// running the shell line `also` (a save landing while it is open).
    pub fn editor(&self, text: &str, also: &str) -> String {
        let dir = self.fake_dir.join("editor");
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("text"), text).unwrap();
        let script = dir.join("edit.sh");
        fs::write(&script, format!("#!/bin/sh\n{also}\ncat '{}' > \"$1\"\n", dir.join("text").display())).unwrap();
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        script.display().to_string()
    }

    /// `<tmp>/<name>`, a bare repository: a remote on the local disk.
    pub fn bare_remote(&self, name: &str) -> PathBuf {
        let dir = self.root().join(name);
        self.git(self.root(), &["init", "-q", "--bare", dir.to_str().unwrap()]);
        dir
    }

    pub fn git(&self, dir: &Path, args: &[&str]) {
        let out = Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// The project's lock (its record), held as another memory-save process
    /// (a sync's merge, an import, a save) holds it, until the file is dropped.
    pub fn hold_project_lock(&self) -> std::fs::File {
        let path = self.mem.join("state/memory-save/projects/proj.json");
        let lock = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        lock.lock().unwrap();
        lock
    }

    /// A prompt of `session` whose project folder Claude Code names anew
    /// (`CLAUDE_PROJECT_DIR`): `dir`.
    pub fn prompt_in_project(&self, session: &str, dir: &Path) -> Output {
        let dir_text = dir.to_str().unwrap();
        self.hook("user-prompt-submit")
            .fixture("UserPromptSubmit.json")
            .session(session)
            .cwd(dir)
            .var("CLAUDE_PROJECT_DIR", dir_text)
            .run()
            .ok()
    }

    /// The first commit of one repository as every clone of it has it: a
    /// fixed author and date make it the same commit wherever it is made.
    pub fn shared_first_commit(&self, dir: &Path) {
        let out = Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"])
            .args(["commit", "-q", "--allow-empty", "-m", "the first commit"])
            .current_dir(dir)
            .env("HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .output()
            .unwrap();
        assert!(out.status.success(), "git commit failed: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// The transcript the fixtures point at; `model` is its last assistant
    /// message's model.
    pub fn transcript_path(&self) -> PathBuf {
        self.root().join("transcript.jsonl")
    }

    /// The real transcript recorded with Claude Code 2.1.328 (model
    /// `claude-opus-5-5`).
    pub fn copy_transcript_fixture(&self) {
        fs::copy(Path::new(FIXTURES).join("transcript-sample.jsonl"), self.transcript_path()).unwrap();
    }

    pub fn write_transcript(&self, model: &str) {
        let lines = [
            json!({"type": "user", "message": {"role": "user", "content": "hello first"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "model": model, "content": [{"type": "text", "text": "hi"}]}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        fs::write(self.transcript_path(), text).unwrap();
    }

    // ---- running the binary ----

    /// `memory-save hook <event>`, with `UserPromptSubmit.json` etc. chosen
    /// by `.fixture()`.
    pub fn hook(&self, event: &str) -> Run<'_> {
        Run::new(self, vec!["hook".into(), event.into()])
    }

    /// `memory-save <args…>`.
    pub fn cmd(&self, args: &[&str]) -> Run<'_> {
        Run::new(self, args.iter().map(|a| a.to_string()).collect())
    }

    /// One person's turn that ends normally: UserPromptSubmit, then Stop.
    pub fn turn(&self, session: &str) {
        self.hook("user-prompt-submit").fixture("UserPromptSubmit.json").session(session).run().ok();
        self.hook("stop").fixture("Stop.json").session(session).run().ok();
    }

    /// The same, from another folder.
    pub fn turn_in(&self, session: &str, cwd: &Path) {
        self.hook("user-prompt-submit").fixture("UserPromptSubmit.json").session(session).cwd(cwd).run().ok();
        self.hook("stop").fixture("Stop.json").session(session).cwd(cwd).run().ok();
    }

    /// A turn, then the wait for the worker to finish the session's
    /// `saves`-th save: most tests want the save a turn starts.
    #[track_caller]
    pub fn saved_turn(&self, session: &str, saves: u64) -> Session {
        self.turn(session);
        self.wait_saves(session, saves)
    }

    /// The same, from another folder.
    #[track_caller]
    pub fn saved_turn_in(&self, session: &str, cwd: &Path, saves: u64) -> Session {
        self.turn_in(session, cwd);
        self.wait_saves(session, saves)
    }

    // ---- scripting the fake claude ----

    /// Call `n` (from 1) of the fake answers with `text` as its result.
    pub fn script_reply(&self, n: usize, text: &str) {
        self.script_raw(&format!("{n}.json"), &result_json(text, false));
    }

    /// Every call without its own reply answers `text`.
    pub fn script_default(&self, text: &str) {
        self.script_raw("default.json", &result_json(text, false));
    }

    /// Call `n` answers with `is_error: true` and `text`.
    pub fn script_is_error(&self, n: usize, text: &str) {
        self.script_raw(&format!("{n}.json"), &result_json(text, true));
    }

    /// Call `n` prints nothing at all.
    pub fn script_no_output(&self, n: usize) {
        self.script_raw(&format!("{n}.json"), "");
    }

    /// Call `n` prints `object` (a whole `--output-format json` object).
    pub fn script_output(&self, n: usize, object: &Value) {
        self.script_raw(&format!("{n}.json"), &object.to_string());
    }

    /// Call `n` prints `text` as its whole output, JSON or not.
    pub fn script_raw_output(&self, n: usize, text: &str) {
        self.script_raw(&format!("{n}.json"), text);
    }

    /// Fork `n` sleeps this long (a shell `sleep` argument: `0.04`) before
    /// it answers.
    pub fn script_sleep_for(&self, n: usize, seconds: &str) {
        self.script_raw(&format!("{n}.sleep"), seconds);
    }

    pub fn script_sleep(&self, n: usize, seconds: u64) {
        self.script_raw(&format!("{n}.sleep"), &seconds.to_string());
    }

    /// Call `n` prints `text` to stderr.
    pub fn script_stderr(&self, n: usize, text: &str) {
        self.script_raw(&format!("{n}.stderr"), text);
    }

    pub fn script_exit(&self, n: usize, code: i32) {
        self.script_raw(&format!("{n}.exit"), &code.to_string());
    }

    /// Call `n` waits until `release(n)`.
    pub fn script_hold(&self, n: usize) {
        self.script_raw(&format!("{n}.hold"), "");
    }

    pub fn release(&self, n: usize) {
        self.script_raw(&format!("{n}.go"), "");
    }

    fn script_raw(&self, name: &str, text: &str) {
        let replies = self.fake_dir.join("replies");
        let tmp = replies.join(format!(".{name}.tmp"));
        fs::write(&tmp, text).unwrap();
        fs::rename(tmp, replies.join(name)).unwrap();
    }

    // ---- what the fake saw ----

    pub fn call_count(&self) -> usize {
        fs::read_dir(self.fake_dir.join("calls")).unwrap().count()
    }

    /// Call `n` (from 1), once it has read its stdin.
    pub fn call(&self, n: usize) -> Call {
        let dir = self.fake_dir.join("calls").join(n.to_string());
        wait_until(&format!("fake claude call {n} to start"), || dir.join("started").exists());
        let read = |name: &str| fs::read_to_string(dir.join(name)).unwrap_or_default();
        let args = read("args");
        let mut args: Vec<String> = args.split('\0').map(str::to_string).collect();
        args.pop(); // after the last NUL
        let pid_of = |name: &str| read(name).trim().parse::<i32>().ok();
        Call {
            args,
            settings: read("settings"),
            settings_mode: read("settings.mode").trim().to_string(),
            resumed: read("resumed"),
            session_env: read("session-env"),
            stdin: read("stdin"),
            env: read("env"),
            cwd: PathBuf::from(read("cwd").trim()),
            pid: pid_of("pid").expect("fake recorded its pid"),
            ppid: pid_of("ppid").expect("fake recorded its parent's pid"),
            sleep_pid: pid_of("sleep.pid"),
        }
    }

    // ---- state and files ----

    pub fn sessions_dir(&self) -> PathBuf {
        self.mem.join("state/memory-save/sessions")
    }

    /// The session as `memory-save sessions --json` shows it (empty when
    /// there is none yet).
    #[track_caller]
    pub fn state(&self, session: &str) -> Session {
        Session::find(&self.cmd(&["sessions", session, "--json"]).run().ok().stdout, session)
    }

    pub fn status(&self, session: &str) -> String {
        self.state(session).status().to_string()
    }

    /// Waits until the session's worker has finished `saves` saves and is
    /// gone: nothing pending, nothing running, the worker lock free.
    #[track_caller]
    pub fn wait_saves(&self, session: &str, saves: u64) -> Session {
        let state = self.wait_idle(session, saves);
        assert_eq!(state.saves(), saves, "more saves than expected: {state:#}");
        state
    }

    /// Waits until the session's `saves`-th save is recorded, while its
    /// worker may stay to wait for something (a plan's window to free).
    #[track_caller]
    pub fn wait_recorded(&self, session: &str, saves: u64) -> Session {
        let started = Instant::now();
        while started.elapsed() < DEADLINE {
            let state = self.state(session);
            if state.saves() >= saves && state.claimed_since().is_none() && !state.pending() {
                return state;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("session {session} did not record {saves} save(s) within {DEADLINE:?}: {}", self.state(session));
    }

    /// Waits until the session has finished at least `saves` saves and is
    /// idle: nothing pending, no claimed job, the worker lock free.
    pub fn wait_idle(&self, session: &str, saves: u64) -> Session {
        let mut last = Session(json!({}));
        let lock = self.sessions_dir().join(format!("{session}.worker.lock"));
        let started = Instant::now();
        while started.elapsed() < DEADLINE {
            // A worker at work is not idle: no need to ask.
            if lock_free(&lock) {
                last = self.state(session);
                // The lock again only once idle: a worker that finds it taken gives up.
                if last.saves() >= saves && last.idle() && lock_free(&lock) {
                    return last;
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "session {session} did not finish {saves} save(s) within {DEADLINE:?}; state: {last:#}\nlog:\n{}",
            self.log()
        );
    }

    /// Idle after exactly `saves` saves, and nothing more asked for.
    pub fn assert_idle_with(&self, session: &str, saves: u64) {
        let state = self.wait_idle(session, saves);
        assert_eq!(state.saves(), saves, "{state:#}");
    }

    /// Whether a worker holds the session's worker lock now.
    pub fn worker_running(&self, session: &str) -> bool {
        let Ok(file) = fs::File::open(self.sessions_dir().join(format!("{session}.worker.lock"))) else {
            return false;
        };
        matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock))
    }

    /// No save was asked for, none runs and none ran: read right after the
    /// hook returns, one of the three would show any save (the worker flips
    /// them under the session lock).
    pub fn assert_no_save(&self, session: &str) {
        let state = self.state(session);
        assert!(!state.pending(), "a save was requested: {state:#}");
        assert!(state.claimed_since().is_none(), "a save runs: {state:#}");
        assert_eq!(state.saves(), 0, "a save ran: {state:#}");
        assert_eq!(self.call_count(), 0, "the fake claude was called");
    }

    pub fn memory_dir(&self, project: &str) -> PathBuf {
        self.mem.join("memory").join(project)
    }

    pub fn memory_path(&self) -> PathBuf {
        self.memory_dir("proj").join("MEMORY.md")
    }

    /// `proj`'s MEMORY.md, if any.
    pub fn memory(&self) -> Option<String> {
        fs::read_to_string(self.memory_path()).ok()
    }

    pub fn memory_of(&self, project: &str) -> Option<String> {
        fs::read_to_string(self.memory_dir(project).join("MEMORY.md")).ok()
    }

    pub fn write_memory(&self, text: &str) {
        fs::create_dir_all(self.memory_dir("proj")).unwrap();
        fs::write(self.memory_path(), text).unwrap();
    }

    /// Writes MEMORY.md with `memory-save edit`: its rules are this machine's own.
    pub fn edit_memory(&self, text: &str) {
        self.cmd(&["edit"]).var("EDITOR", &self.editor(text, "")).in_dir(&self.proj).run().ok();
    }

    pub fn memory_file(&self, name: &str) -> Option<String> {
        fs::read_to_string(self.memory_dir("proj").join(name)).ok()
    }

    /// Every file under the memory root, relative to it.
    pub fn memory_tree(&self) -> Vec<String> {
        let root = self.mem.join("memory");
        let mut out = Vec::new();
        let mut stack = vec![root.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path.clone());
                }
                out.push(path.strip_prefix(&root).unwrap().display().to_string());
            }
        }
        out.sort();
        out
    }

    /// Files in our state folder's top level (not sessions/ or projects/).
    pub fn state_files(&self) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.mem.join("state/memory-save"))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.path().is_file())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    pub fn log(&self) -> String {
        fs::read_to_string(self.mem.join("state/memory-save/memory-save.log")).unwrap_or_default()
    }
}

impl Drop for Env {
    /// A test that failed midway may leave a held or sleeping fake: end it
    /// (by the pids it recorded), so nothing outlives the test.
    fn drop(&mut self) {
        let Ok(calls) = fs::read_dir(self.fake_dir.join("calls")) else {
            return;
        };
        for call in calls.flatten() {
            if call.path().join("done").exists() {
                continue;
            }
            for name in ["sleep.pid", "pid"] {
                let pid = fs::read_to_string(call.path().join(name)).ok().and_then(|p| p.trim().parse::<i32>().ok());
                if let Some(pid) = pid
                    && process_alive(pid)
                {
                    // SAFETY: signals a process this test started, by its id.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
        }
    }
}

pub struct Call {
    pub args: Vec<String>,
    /// The file `--settings` named, as the fork found it, and its mode.
    pub settings: String,
    pub settings_mode: String,
    /// The transcript file `--resume` named, as the fork found it (empty
    /// when it named a session id).
    pub resumed: String,
    /// The fork's CLAUDE*, ENABLE_IDE*, ANTHROPIC*, proxy and CA variables.
    pub session_env: String,
    pub stdin: String,
    /// `env | grep '^MEMORY_SAVE_FORK='` in the fake.
    pub env: String,
    pub cwd: PathBuf,
    pub pid: i32,
    /// The worker that ran this fork.
    pub ppid: i32,
    pub sleep_pid: Option<i32>,
}

impl Call {
    /// The value after `flag`.
    /// The value of `flag`: the word after it, or after `=` in one word.
    pub fn flag(&self, flag: &str) -> Option<&str> {
        let joined = format!("{flag}=");
        if let Some(value) = self.args.iter().find_map(|a| a.strip_prefix(&joined)) {
            return Some(value);
        }
        let at = self.args.iter().position(|a| a == flag)?;
        self.args.get(at + 1).map(String::as_str)
    }
}

/// One run of the binary: stdin from a fixture (its `cwd` and
/// `transcript_path` pointed into the bench) or raw text.
pub struct Run<'a> {
    env: &'a Env,
    args: Vec<String>,
    input: Option<Value>,
    raw: Option<Vec<u8>>,
    vars: Vec<(String, String)>,
    unset: Vec<String>,
    dir: Option<PathBuf>,
    /// Keep stdin open after writing it, as a writer that never closes.
    hold_stdin: bool,
    close_stdout: bool,
    close_stderr: bool,
    /// What the run must give, declared before it and compared exactly
    /// once it ends (just's `Test`): the exit code, stdout, stderr.
    expect_status: Option<i32>,
    expect_stdout: Option<String>,
    expect_stderr: Option<String>,
}

impl<'a> Run<'a> {
    fn new(env: &'a Env, args: Vec<String>) -> Run<'a> {
        Run {
            env,
            args,
            input: None,
            raw: None,
            vars: Vec::new(),
            unset: Vec::new(),
            dir: None,
            hold_stdin: false,
            close_stdout: false,
            close_stderr: false,
            expect_status: None,
            expect_stdout: None,
            expect_stderr: None,
        }
    }

    /// The exit code the run must end with.
    pub fn status(mut self, code: i32) -> Run<'a> {
        self.expect_status = Some(code);
        self
    }

    /// What stdout must be, exactly.
    pub fn stdout(mut self, text: &str) -> Run<'a> {
        self.expect_stdout = Some(text.to_string());
        self
    }

    /// What stderr must be, exactly.
    pub fn stderr(mut self, text: &str) -> Run<'a> {
        self.expect_stderr = Some(text.to_string());
        self
    }

    /// The reading end of stdout is closed before the input is written:
    /// the run's every write to stdout fails (EPIPE).
    pub fn close_stdout(mut self) -> Run<'a> {
        self.close_stdout = true;
        self
    }

    pub fn close_stderr(mut self) -> Run<'a> {
        self.close_stderr = true;
        self
    }

    /// Runs in `dir` instead of the bench's root (for commands that work on
    /// the current folder's project).
    pub fn in_dir(mut self, dir: &Path) -> Run<'a> {
        self.dir = Some(dir.to_path_buf());
        self
    }

    /// Runs without `key` in the environment.
    pub fn unset(mut self, key: &str) -> Run<'a> {
        self.unset.push(key.into());
        self
    }

    pub fn fixture(mut self, name: &str) -> Run<'a> {
        let mut input = fixture(name);
        input["cwd"] = json!(self.env.proj.to_str().unwrap());
        input["transcript_path"] = json!(self.env.transcript_path().to_str().unwrap());
        self.input = Some(input);
        self
    }

    pub fn session(self, id: &str) -> Run<'a> {
        self.set("session_id", json!(id))
    }

    pub fn cwd(self, dir: &Path) -> Run<'a> {
        self.set("cwd", json!(dir.to_str().unwrap()))
    }

    pub fn set(mut self, key: &str, value: Value) -> Run<'a> {
        self.input.as_mut().expect("set() needs a fixture first")[key] = value;
        self
    }

    pub fn arg(mut self, arg: &str) -> Run<'a> {
        self.args.push(arg.into());
        self
    }

    pub fn stdin(self, text: &str) -> Run<'a> {
        self.stdin_bytes(text.as_bytes())
    }

    /// Raw bytes on stdin, UTF-8 or not.
    pub fn stdin_bytes(mut self, bytes: &[u8]) -> Run<'a> {
        self.raw = Some(bytes.to_vec());
        self
    }

    /// The input is written and the pipe left open until the run ends.
    pub fn hold_stdin(mut self) -> Run<'a> {
        self.hold_stdin = true;
        self
    }

    pub fn var(mut self, key: &str, value: &str) -> Run<'a> {
        self.vars.push((key.into(), value.into()));
        self
    }

    #[track_caller]
    pub fn run(self) -> Output {
        let stdin = match (&self.raw, &self.input) {
            (Some(raw), _) => raw.clone(),
            (None, Some(input)) => input.to_string().into_bytes(),
            (None, None) => Vec::new(),
        };
        let mut cmd = Command::new(BIN);
        cmd.args(&self.args)
            .env_clear()
            .env("PATH", test_path())
            .env("HOME", &self.env.home)
            .env("MEMORY_SAVE_HOME", &self.env.mem)
            .env("MEMORY_SAVE_CLAUDE", &self.env.claude)
            .current_dir(self.dir.as_deref().unwrap_or(self.env.root()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(tz) = std::env::var_os("TZ") {
            cmd.env("TZ", tz);
        }
        for (k, v) in self.env.vars.iter().chain(&self.vars) {
            cmd.env(k, v);
        }
        for k in &self.unset {
            cmd.env_remove(k);
        }
        let started = Instant::now();
        let mut child = cmd.spawn().expect("run memory-save");
        if self.close_stdout {
            drop(child.stdout.take());
        }
        if self.close_stderr {
            drop(child.stderr.take());
        }
        // A hook may exit without reading its input (the fork marker): a
        // closed pipe is its answer, not a failure.
        let mut pipe = child.stdin.take().unwrap();
        let _ = pipe.write_all(&stdin);
        let held = self.hold_stdin.then_some(pipe);
        let out = child.wait_with_output().unwrap();
        drop(held);
        let out = Output {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            code: out.status.code(),
            elapsed: started.elapsed(),
        };
        if let Some(code) = self.expect_status {
            assert_eq!(out.code, Some(code), "{:?} exited otherwise: {out:#?}", self.args);
        }
        if let Some(stdout) = &self.expect_stdout {
            assert_eq!(&out.stdout, stdout, "{:?}: stdout", self.args);
        }
        if let Some(stderr) = &self.expect_stderr {
            assert_eq!(&out.stderr, stderr, "{:?}: stderr", self.args);
        }
        out
    }
}

#[derive(Debug)]
pub struct Output {
    pub stdout: String,
    pub stderr: String,
    pub code: Option<i32>,
    pub elapsed: Duration,
}

impl Output {
    /// Exit 0, as every hook must, and nothing on stderr (where Claude
    /// Code would show it); returns self for chaining.
    #[track_caller]
    pub fn ok(self) -> Output {
        assert_eq!(self.code, Some(0), "memory-save did not exit 0: {self:#?}");
        assert_eq!(self.stderr, "", "memory-save wrote to stderr: {self:#?}");
        self
    }

    /// The single JSON object on stdout.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}): {:?}", self.stdout))
    }

    pub fn assert_silent(&self) {
        assert_eq!(self.stdout, "", "expected no output: {self:#?}");
    }
}

pub use crate::helpers::*;
pub use crate::session::Session;

/// The PATH the binary runs with: this one without the folders that hold
/// an installed `memory-save` (`./install.sh` puts one in ~/.cargo/bin), so
/// a developer's own install never answers for the binary under test.
fn test_path() -> &'static std::ffi::OsStr {
    static PATH: std::sync::OnceLock<std::ffi::OsString> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let kept: Vec<PathBuf> =
            std::env::split_paths(&path).filter(|dir| !dir.join("memory-save").is_file()).collect();
        std::env::join_paths(kept).unwrap_or(path)
    })
}
