//! The memory evaluation (`scripts/eval`, docs/quality.md): scenarios run
//! end to end on the real Claude Code CLI with memory-save installed in a
//! throwaway HOME, the session's own turns scripted by the stand-in, and
//! the final memory scored against each scenario's ground truth
//! (`tests/e2e/eval/<name>.json`). Who answers the fork is the mode,
//! `MEMORY_SAVE_EVAL`:
//! - `scripted` (the default, and CI's): each scenario's canned replies, so
//!   the run proves the protocol, the gate and the scorer, and must score
//!   every point;
//! - `player:<dir>`: each fork request is written to
//!   `<dir>/<scenario>-NNN.request.json` and a readable `….request.txt`, and
//!   the stand-in waits for `<scenario>-NNN.reply.txt`: a person, or a helper
//!   that sees only those files, plays the model;
//! - `api`: each fork request goes to the real Messages API with
//!   `ANTHROPIC_API_KEY` (curl), the way a user measures their own model.
//!
//! Every `tests/e2e/eval/*.json` is a scenario (docs/quality.md says how to
//! write one); `MEMORY_SAVE_EVAL_SCENARIO` runs one, by name or path. Each
//! turn is a `claude -p` run, or with `MEMORY_SAVE_EVAL_INTERACTIVE=1` each
//! session is one interactive session in tmux saving at the default
//! cadence. A scenario's probes are questions a new session would ask,
//! answered from the memory block as SessionStart loads it and nothing
//! else (canned answers in the scripted mode prove the scorer). With
//! `MEMORY_SAVE_EVAL_FRESH=1` every save is a fresh one (it resumes nothing
//! and reads the turns since the last save): the debug build takes every
//! cache for expired (`MEMORY_SAVE_DEBUG_CACHE_EXPIRED`), every save waits
//! for its turn's end, and a cold cap of `FRESH_COLD_CAP` keeps the resumed
//! save from running.

use crate::app::{self, App};
use crate::harness;
use crate::standin::{RecordedRequest, Reply, StandIn};
use memory_save::memory::guard::{Active, Tool, matching};
use serde::Deserialize;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

#[derive(Deserialize)]
struct Scenario {
    about: String,
    #[serde(default)]
    config: String,
    /// MEMORY.md before the first session (the project is `app`).
    #[serde(default)]
    seed_memory: Option<String>,
    /// Files of the repository, by path.
    #[serde(default)]
    files: std::collections::BTreeMap<String, String>,
    /// Each session's turns; each turn is one `claude -p` run (the first
    /// of a session starts it, the others `--resume` it).
    sessions: Vec<Vec<Turn>>,
    /// The scripted mode's fork replies, in the order the forks come.
    #[serde(default)]
    forks: Vec<Value>,
    truth: Truth,
    /// Questions a new session would ask, answered from the loaded block.
    #[serde(default)]
    probes: Vec<Probe>,
}

#[derive(Deserialize)]
struct Probe {
    question: String,
    /// What a right answer holds: each entry, or one of an entry's
    /// alternatives, ignoring case.
    #[serde(default)]
    holds: Vec<OneOf>,
    /// What a right answer must not hold.
    #[serde(default)]
    lacks: Vec<String>,
    /// The scripted mode's answer.
    #[serde(default)]
    answer: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOf {
    One(String),
    Any(Vec<String>),
}

impl Probe {
    /// Whether `answer` holds what a right one holds and nothing it lacks.
    fn right(&self, answer: &str) -> bool {
        let answer = answer.to_lowercase();
        let has = |item: &String| answer.contains(&item.to_lowercase());
        self.holds.iter().all(|h| match h {
            OneOf::One(item) => has(item),
            OneOf::Any(items) => items.iter().any(has),
        }) && !self.lacks.iter().any(has)
    }
}

#[derive(Deserialize)]
struct Turn {
    prompt: String,
    /// Bash commands the scripted model runs, one tool call each, in order.
    #[serde(default)]
    tools: Vec<String>,
    answer: String,
}

/// What the final memory must hold. Each entry is matched as text,
/// ignoring case.
#[derive(Deserialize, Default)]
pub struct Truth {
    /// In MEMORY.md: facts present and current.
    #[serde(default)]
    present: Vec<String>,
    /// In MEMORY.md or a topic file: facts kept when moved out.
    #[serde(default)]
    kept: Vec<String>,
    /// Not in MEMORY.md: stale facts, fixed warnings, injected orders.
    #[serde(default)]
    absent: Vec<String>,
    /// In ## CRITICAL RULES.
    #[serde(default)]
    rules: Vec<String>,
    /// In history.md: retired rules.
    #[serde(default)]
    retired: Vec<String>,
    /// Nowhere under the memory-save root (`~/.cli-tweaks`): pasted secrets.
    #[serde(default)]
    secrets: Vec<String>,
    /// MEMORY.md's lines at most.
    #[serde(default)]
    max_lines: Option<usize>,
    /// Bash commands a guard of a CRITICAL RULE must stop.
    #[serde(default)]
    guarded: Vec<String>,
    /// Bash commands no guard may stop.
    #[serde(default)]
    unguarded: Vec<String>,
}

/// A secret the scenario names as `{{SECRET}}`, made at run time so the
/// repository holds no token a scanner would flag.
fn secret() -> String {
    let body: String = (0..80u64)
        .map(|i| {
            let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
            alphabet[((i * 7919 + 104_729) * (i + 13) % 62) as usize] as char
        })
        .collect();
    format!("sk-ant-api03-{body}-Q7wE9rAA")
}

enum Mode {
    Scripted,
    Player(PathBuf),
    /// The key, and the Messages API's base URL
    /// (`MEMORY_SAVE_EVAL_API_URL`, else Anthropic's).
    Api {
        key: String,
        url: String,
    },
}

impl Mode {
    fn from_env() -> Mode {
        match std::env::var("MEMORY_SAVE_EVAL").unwrap_or_default().as_str() {
            "" | "scripted" => Mode::Scripted,
            "api" => Mode::Api {
                key: std::env::var("ANTHROPIC_API_KEY").expect("--api needs ANTHROPIC_API_KEY"),
                url: std::env::var("MEMORY_SAVE_EVAL_API_URL").unwrap_or("https://api.anthropic.com".into()),
            },
            other => match other.strip_prefix("player:") {
                Some(dir) => Mode::Player(PathBuf::from(dir)),
                None => panic!("MEMORY_SAVE_EVAL={other:?}: scripted, player:<dir> or api"),
            },
        }
    }

    /// How long a fork may take to be answered.
    fn fork_limit(&self) -> Duration {
        match self {
            Mode::Scripted => Duration::from_secs(60),
            Mode::Api { .. } => Duration::from_secs(600),
            Mode::Player(_) => Duration::from_secs(3 * 3600),
        }
    }
}

/// The fork's answer in this mode (the `n`-th fork of the run, from 0;
/// `turns` are the scenario's turns it covers, by index).
fn answer_fork(
    mode: &Mode,
    name: &str,
    scenario: &Scenario,
    n: usize,
    turns: std::ops::Range<usize>,
    req: &RecordedRequest,
) -> Reply {
    match mode {
        Mode::Scripted => {
            // A scenario scripts one reply a turn; a save covering several
            // turns answers with all of theirs.
            let mut reply = json!({"ops": [], "topics": []});
            for canned in turns.filter_map(|t| scenario.forks.get(t)) {
                for key in ["ops", "topics"] {
                    let more = canned[key].as_array().cloned().unwrap_or_default();
                    reply[key].as_array_mut().unwrap().extend(more);
                }
            }
            Reply::text(reply.to_string().replace("{{SECRET}}", &secret()))
        }
        Mode::Player(dir) => {
            let stem = dir.join(format!("{name}-{n:03}"));
            std::fs::write(stem.with_extension("request.json"), serde_json::to_vec_pretty(&req.body).unwrap()).unwrap();
            Reply::text(played(mode, &stem, &readable(&req.body)))
        }
        Mode::Api { key, url } => match api_reply(key, url, &req.body) {
            Ok(text) => Reply::text(text),
            Err(why) => Reply::Error(500, why),
        },
    }
}

/// Writes `<stem>.request.txt` and waits for the player's `<stem>.reply.txt`.
fn played(mode: &Mode, stem: &Path, request: &str) -> String {
    std::fs::create_dir_all(stem.parent().unwrap()).unwrap();
    std::fs::write(stem.with_extension("request.txt"), request).unwrap();
    let reply = stem.with_extension("reply.txt");
    eprintln!("eval: waits for {}", reply.display());
    let start = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(&reply) {
            return text.trim().to_string();
        }
        assert!(start.elapsed() < mode.fork_limit(), "no {} within {:?}", reply.display(), mode.fork_limit());
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// What a probe's model is told: the block and the questions, nothing else.
fn probe_request(block: &str, probes: &[Probe]) -> String {
    let mut out = String::from(
        "You are starting a new Claude Code session in this project. All you know of the project is the memory \
block below, exactly as the session loads it. Answer each question from it alone, in a sentence or two; where \
the block does not say, answer \"the memory does not say\". Reply with a JSON array of strings, one answer a \
question, in order.\n\n<<<BLOCK\n",
    );
    out.push_str(block);
    out.push_str("\nBLOCK>>>\n\nQUESTIONS\n");
    for (i, p) in probes.iter().enumerate() {
        out.push_str(&format!("{}. {}\n", i + 1, p.question));
    }
    out
}

/// The probes' answers in this mode; `model` is the forks' model.
fn probe_answers(mode: &Mode, name: &str, probes: &[Probe], block: &str, model: &str) -> Vec<String> {
    let text = match mode {
        Mode::Scripted => return probes.iter().map(|p| p.answer.clone()).collect(),
        Mode::Player(dir) => played(mode, &dir.join(format!("{name}-probes")), &probe_request(block, probes)),
        Mode::Api { key, url } => {
            let body = json!({"model": model, "max_tokens": 4096,
                "messages": [{"role": "user", "content": probe_request(block, probes)}]});
            api_reply(key, url, &body).unwrap_or_else(|why| panic!("the probes' request: {why}"))
        }
    };
    // The array, wherever it stands in the reply.
    let array = text.find('[').zip(text.rfind(']')).map_or("", |(a, b)| &text[a..=b]);
    let answers: Vec<String> = serde_json::from_str(array).unwrap_or_default();
    assert_eq!(answers.len(), probes.len(), "{name}: the probes' reply is not one answer a question: {text}");
    answers
}

/// The memory block as SessionStart loads it: every part's context, run
/// as Claude Code runs the hook, in a session that starts after the last.
fn loaded_block(app: &App) -> String {
    use std::io::Write;
    let input = json!({"session_id": "eval-probes", "transcript_path": "/nonexistent", "cwd": app.bench.project,
        "hook_event_name": "SessionStart", "source": "startup"})
    .to_string();
    let parts: Vec<String> = (1..=6)
        .filter_map(|part| {
            let mut child = std::process::Command::new(app::BIN)
                .args(["hook", "session-start", "--part", &part.to_string()])
                .current_dir(&app.bench.project)
                .env_clear()
                .env("HOME", app.home())
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
            let out = child.wait_with_output().unwrap();
            let answer: Value = serde_json::from_slice(&out.stdout).ok()?;
            answer["hookSpecificOutput"]["additionalContext"].as_str().map(str::to_string)
        })
        .collect();
    parts.join("\n\n")
}

/// The fork's request sent to the real Messages API, not streamed.
fn api_reply(key: &str, url: &str, body: &Value) -> Result<String, String> {
    let mut body = body.clone();
    body["stream"] = json!(false);
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "600", &format!("{url}/v1/messages")])
        .args(["-H", "content-type: application/json", "-H", "anthropic-version: 2023-06-01"])
        .args(["-H", &format!("x-api-key: {key}"), "--data-binary", "@-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(body.to_string().as_bytes())?;
            child.wait_with_output()
        })
        .map_err(|e| format!("curl: {e}"))?;
    let answer: Value = serde_json::from_slice(&out.stdout).map_err(|e| format!("the API's answer: {e}"))?;
    eprintln!("eval: the API's usage for this fork: {}", answer["usage"]);
    let text: Vec<&str> =
        answer["content"].as_array().into_iter().flatten().filter_map(|b| b["text"].as_str()).collect();
    if text.is_empty() { Err(format!("no text in the API's answer: {answer}")) } else { Ok(text.join("")) }
}

/// A fork request as a person reads it: the system prompt, then each
/// message with its tool calls and results.
fn readable(body: &Value) -> String {
    let mut out = String::from("=== SYSTEM ===\n");
    match &body["system"] {
        Value::String(s) => out.push_str(s),
        Value::Array(blocks) => {
            for b in blocks {
                out.push_str(b["text"].as_str().unwrap_or_default());
                out.push('\n');
            }
        }
        _ => {}
    }
    for m in body["messages"].as_array().into_iter().flatten() {
        out.push_str(&format!("\n=== {} ===\n", m["role"].as_str().unwrap_or("?").to_uppercase()));
        let blocks = match &m["content"] {
            Value::String(s) => vec![json!({"type": "text", "text": s})],
            Value::Array(b) => b.clone(),
            _ => Vec::new(),
        };
        for b in blocks {
            match b["type"].as_str() {
                Some("text") => out.push_str(b["text"].as_str().unwrap_or_default()),
                Some("tool_use") => out.push_str(&format!("[TOOL CALL {}] {}", b["name"], b["input"])),
                Some("tool_result") => {
                    let content = match &b["content"] {
                        Value::String(s) => s.clone(),
                        Value::Array(inner) => {
                            inner.iter().filter_map(|i| i["text"].as_str()).collect::<Vec<_>>().join("\n")
                        }
                        _ => String::new(),
                    };
                    out.push_str(&format!("[TOOL RESULT] {content}"));
                }
                _ => {}
            }
            out.push('\n');
        }
    }
    out
}

/// The scripted session's next step: the turn whose prompt the request's
/// latest prompt holds, and how many of its tool calls have run.
fn main_reply(scenario: &Scenario, req: &RecordedRequest) -> Reply {
    let turns: Vec<&Turn> = scenario.sessions.iter().flatten().collect();
    let messages = req.messages();
    let found = messages.iter().enumerate().rev().filter(|(_, m)| m["role"] == "user").find_map(|(at, m)| {
        let text = message_text(m);
        turns.iter().find(|t| text.contains(&t.prompt.replace("{{SECRET}}", &secret()))).map(|turn| (at, *turn))
    });
    let Some((at, turn)) = found else {
        return Reply::text("(no scripted turn for this prompt)");
    };
    let calls = messages[at..]
        .iter()
        .filter(|m| m["role"] == "assistant")
        .filter(|m| m["content"].as_array().is_some_and(|b| b.iter().any(|b| b["type"] == "tool_use")))
        .count();
    match turn.tools.get(calls) {
        Some(command) => Reply::bash(command),
        None => Reply::text(turn.answer.clone()),
    }
}

/// A message's text blocks (a prompt arrives as a string or as blocks).
fn message_text(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n"),
        _ => String::new(),
    }
}

/// What a fork's message asked for, from its words (src/memory/prompt.rs).
fn message_kind(req: &RecordedRequest) -> &'static str {
    let text = req.last_user_text();
    if text.contains("turns since its last save") {
        "fresh"
    } else if text.contains("changed since as follows") {
        "changed"
    } else if text.contains("block loaded above") || text.contains("block loaded at this session's start") {
        "loaded"
    } else if text.contains("between the markers:\n<<<MEMORY.md") {
        "whole"
    } else {
        "new"
    }
}

/// The cold cap of a fresh run: under what resuming any scenario's session
/// costs, over what reading its turns does.
const FRESH_COLD_CAP: &str = "0.05";

/// Whether this run makes every save a fresh one.
fn fresh_run() -> bool {
    std::env::var("MEMORY_SAVE_EVAL_FRESH").is_ok_and(|v| v == "1")
}

/// One check of the score: its kind, the item and whether it held.
pub type Check = (&'static str, String, bool);

/// The guards that bind on `memory`: those of `guards.json` whose rule is
/// one of its CRITICAL RULES lines.
fn binding_guards(guards_json: &str, memory: &str) -> Vec<Active> {
    let file: Value = serde_json::from_str(guards_json).unwrap_or(Value::Null);
    let rules = memory_save::memory::template::critical_rules(memory);
    file["guards"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| serde_json::from_value::<Active>(g.clone()).ok())
        .filter(|g| rules.contains(&g.rule))
        .collect()
}

/// The final memory against the truth. `topics` are the topic files'
/// texts, `everything` every file under the memory-save root, `guards` the
/// guards that bind.
pub fn score(
    truth: &Truth,
    memory: &str,
    topics: &[(String, String)],
    everything: &str,
    guards: &[Active],
) -> Vec<Check> {
    let has = |text: &str, item: &str| text.to_lowercase().contains(&item.to_lowercase());
    let rules = memory.split("\n## ").find(|s| s.starts_with("CRITICAL RULES")).unwrap_or_default();
    let history = topics.iter().find(|(n, _)| n == "history.md").map(|(_, t)| t.as_str()).unwrap_or_default();
    let mut checks: Vec<Check> = Vec::new();
    checks.extend(truth.present.iter().map(|i| ("present", i.clone(), has(memory, i))));
    checks.extend(
        truth.kept.iter().map(|i| ("kept", i.clone(), has(memory, i) || topics.iter().any(|(_, t)| has(t, i)))),
    );
    checks.extend(truth.absent.iter().map(|i| ("absent", i.clone(), !has(memory, i))));
    checks.extend(truth.rules.iter().map(|i| ("rule", i.clone(), has(rules, i))));
    checks.extend(truth.retired.iter().map(|i| ("retired", i.clone(), has(history, i))));
    checks.extend(truth.secrets.iter().map(|i| {
        let value = i.replace("{{SECRET}}", &secret());
        ("no secret", i.clone(), !everything.contains(&value))
    }));
    let sections = ["## CRITICAL RULES", "## Architecture & Config Facts", "## Active Warnings", "## Topic Files"];
    let mut at = 0;
    let in_order = sections.iter().all(|s| match memory[at..].find(s) {
        Some(found) => {
            at += found + s.len();
            true
        }
        None => false,
    });
    checks.push(("template", "four sections in order, a # title".into(), memory.starts_with("# ") && in_order));
    let stops = |command: &str| matching(guards, Tool::Bash, command).is_ok_and(|m| !m.is_empty());
    checks.extend(truth.guarded.iter().map(|c| ("guarded", c.clone(), stops(c))));
    checks.extend(truth.unguarded.iter().map(|c| ("unguarded", c.clone(), !stops(c))));
    if let Some(max) = truth.max_lines {
        let lines = memory.lines().count();
        checks.push(("size", format!("at most {max} lines (has {lines})"), lines <= max));
    }
    checks
}

/// Every regular file's text under `dir`.
fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => out.push_str(&all_text(&path)),
            Ok(t) if t.is_file() => out.push_str(&String::from_utf8_lossy(&std::fs::read(&path).unwrap_or_default())),
            _ => {}
        }
    }
    out
}

/// Whether each session runs as one interactive session.
fn interactive_run() -> bool {
    std::env::var("MEMORY_SAVE_EVAL_INTERACTIVE").is_ok_and(|v| v == "1")
}

/// The scenarios to run: `MEMORY_SAVE_EVAL_SCENARIO` (a name in
/// tests/e2e/eval/ or a path), else every file there.
fn scenario_paths() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/eval");
    match std::env::var("MEMORY_SAVE_EVAL_SCENARIO").unwrap_or_default() {
        wanted if wanted.ends_with(".json") => vec![PathBuf::from(wanted)],
        wanted if !wanted.is_empty() => vec![dir.join(format!("{wanted}.json"))],
        _ => {
            let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect();
            all.sort();
            all
        }
    }
}

/// What the run drives and the fork answers share: how many of the
/// scenario's turns were sent, and how many the forks so far covered.
#[derive(Default)]
struct Progress {
    sent: AtomicUsize,
    covered: AtomicUsize,
    forks: AtomicUsize,
}

/// How long a turn or a save may take in this mode.
fn turn_limit(mode: &Mode) -> Duration {
    mode.fork_limit() + Duration::from_secs(120)
}

/// Each session's turns as `claude -p` runs; every run ends a session.
/// Returns, for each save, the turns it covered (from 1).
fn drive_print(app: &App, scenario: &Scenario, progress: &Progress, limit: Duration) -> Vec<String> {
    let mut covered = Vec::new();
    for session in &scenario.sessions {
        let mut id: Option<String> = None;
        for (runs, turn) in session.iter().enumerate() {
            let prompt = turn.prompt.replace("{{SECRET}}", &secret());
            let mut args = vec!["--allowedTools", "Bash"];
            if let Some(id) = &id {
                args.extend(["--resume", id.as_str()]);
            }
            let n = progress.sent.fetch_add(1, Ordering::SeqCst) + 1;
            let before = app.saves().len();
            let out = app.bench.print(&prompt, &args, limit);
            let sid = app::session_of(&out);
            app.wait_saved(&sid, runs as u64 + 1, limit);
            covered.extend((app.saves().len() > before).then(|| format!("turn {n}")));
            id = Some(sid);
        }
    }
    covered
}

/// Each session as one interactive session in tmux at the default cadence,
/// ended with /exit. Returns, for each save, the turns it covered.
fn drive_interactive(
    app: &App,
    standin: &StandIn,
    scenario: &Scenario,
    progress: &Progress,
    limit: Duration,
) -> Vec<String> {
    harness::tmux().expect("the interactive eval needs tmux");
    app.add_logging_hook();
    let mut covered = Vec::new();
    let mut from = 1;
    let mut note = |app: &App, before: usize, to: usize, end: &str| {
        if app.saves().len() > before {
            let turns = if from == to { format!("turn {to}") } else { format!("turns {from}–{to}") };
            covered.push(format!("{turns}{end}"));
            from = to + 1;
        }
    };
    let started = |app: &App| -> Vec<String> {
        app.hook_log()
            .iter()
            .filter(|h| h["hook_event_name"] == "SessionStart")
            .filter_map(|h| h["session_id"].as_str().map(str::to_string))
            .collect()
    };
    for session in &scenario.sessions {
        let known = started(app);
        let tmux = app::Tmux::start(&app.bench, &["--allowedTools", "Bash"]);
        let sid = app::wait_for(limit, "the session's start", || started(app).into_iter().find(|s| !known.contains(s)));
        let idle = |what: &str| app::wait_for(limit, what, || app.session_state(&sid).idle().then_some(()));
        for turn in session {
            let prompt = turn.prompt.replace("{{SECRET}}", &secret());
            let n = progress.sent.fetch_add(1, Ordering::SeqCst) + 1;
            let before = app.saves().len();
            tmux.send_line(&prompt);
            let start = Instant::now();
            let mut pressed = Instant::now();
            while !standin.message_requests().iter().any(|r| !app::is_fork(r) && r.last_user_text().contains(&prompt)) {
                assert!(
                    start.elapsed() < limit,
                    "no request for turn {n} within {limit:?}; the screen:\n{}",
                    tmux.screen()
                );
                // An Enter the input box took while a hook's message was
                // still being drawn is lost (seen): the prompt waits in it.
                let head: String = prompt.chars().take(30).collect();
                if pressed.elapsed() > Duration::from_secs(5) && tmux.screen().contains(&head) {
                    eprintln!("eval: turn {n}'s prompt waits in the input box; Enter again");
                    tmux.key("Enter");
                    pressed = Instant::now();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            app::wait_for(limit, "the turn's Stop", || (!app.session_state(&sid).answering()).then_some(()));
            idle("the turn's save");
            note(app, before, n, "");
        }
        let before = app.saves().len();
        tmux.send_line("/exit");
        app::wait_for(limit, "SessionEnd", || {
            let log = app.hook_log();
            log.iter().any(|h| h["hook_event_name"] == "SessionEnd" && h["session_id"] == sid.as_str()).then_some(())
        });
        idle("the session end's save");
        note(app, before, progress.sent.load(Ordering::SeqCst), ", at the end");
    }
    covered
}

/// Runs the scenario at `path` and prints its score; returns the checks.
fn run(path: &Path, interactive: bool) -> Option<Vec<Check>> {
    let claude = harness::claude()?;
    let name = path.file_stem().unwrap().to_string_lossy().into_owned();
    let _serial = app::serial();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let scenario: Arc<Scenario> =
        Arc::new(serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    let mode = Arc::new(Mode::from_env());
    let progress = Arc::new(Progress::default());
    let standin = {
        let (scenario, mode, progress, name) = (scenario.clone(), mode.clone(), progress.clone(), name.clone());
        StandIn::start(move |req| {
            if app::is_fork(req) {
                let n = progress.forks.fetch_add(1, Ordering::SeqCst);
                let sent = progress.sent.load(Ordering::SeqCst);
                let from = progress.covered.swap(sent, Ordering::SeqCst);
                answer_fork(&mode, &name, &scenario, n, from..sent, req)
            } else if req.is_title_request() {
                Reply::text(r#"{"title":"eval"}"#)
            } else {
                main_reply(&scenario, req)
            }
        })
    };
    let mut app = App::new(claude, &standin);
    let limit = mode.fork_limit();
    app.bench.extra_env.retain(|(k, _)| k != "MEMORY_SAVE_FORK_TIMEOUT");
    app.bench.extra_env.push(("MEMORY_SAVE_FORK_TIMEOUT".into(), limit.as_secs().to_string()));
    app.bench.extra_env.push(("API_TIMEOUT_MS".into(), (limit.as_millis() as u64).to_string()));
    if interactive {
        // As a user has it: the default cadence, no more.
        app.config_exact(&scenario.config);
    } else if fresh_run() {
        // Each `claude -p` turn ends its session: that end's save is the one.
        let fresh = format!("save_every_turns = 1000\nmax_cost_per_save_usd = {FRESH_COLD_CAP}\n");
        app.config(&format!("{}\n{fresh}", scenario.config));
        app.bench.extra_env.push(("MEMORY_SAVE_DEBUG_CACHE_EXPIRED".into(), "1".into()));
    } else {
        app.config(&scenario.config);
    }
    for (file, text) in &scenario.files {
        let at = app.bench.project.join(file);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, text).unwrap();
    }
    if let Some(seed) = &scenario.seed_memory {
        app.write_memory(seed);
    }
    let covered = if interactive {
        drive_interactive(&app, &standin, &scenario, &progress, turn_limit(&mode))
    } else {
        drive_print(&app, &scenario, &progress, turn_limit(&mode))
    };
    let memory = app.memory().unwrap_or_default();
    let folder = app.memory_path().parent().unwrap().to_path_buf();
    let topics: Vec<(String, String)> = std::fs::read_dir(&folder)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.ends_with(".md") && name != "MEMORY.md")
                .then(|| (name, std::fs::read_to_string(e.path()).unwrap_or_default()))
        })
        .collect();
    let guards_json = std::fs::read_to_string(folder.join("guards.json")).unwrap_or_default();
    let guards = binding_guards(&guards_json, &memory);
    let mut checks = score(&scenario.truth, &memory, &topics, &all_text(&app.root()), &guards);
    let forks: Vec<RecordedRequest> = standin.message_requests().into_iter().filter(app::is_fork).collect();
    let mode_name = if interactive { "interactive" } else { "claude -p" };
    println!("\neval {name} ({mode_name}): {}", scenario.about);
    for (save, record) in app.saves().iter().enumerate() {
        let kind = forks.get(save).map_or("-", message_kind);
        let u = &record["usage"];
        println!(
            "  save {}: {:<22} {kind:<7} {:<32} in {} · cache read {} · cache write {} · out {}",
            save + 1,
            covered.get(save).map_or("-", String::as_str),
            record["status"].as_str().unwrap_or("?"),
            u["input_tokens"],
            u["cache_read_input_tokens"],
            u["cache_creation_input_tokens"],
            u["output_tokens"]
        );
    }
    if !scenario.probes.is_empty() {
        let model = forks.last().and_then(|f| f.body["model"].as_str()).unwrap_or("claude-sonnet-4-5").to_string();
        let block = loaded_block(&app);
        assert!(
            block.contains(memory.lines().next().unwrap_or("# ")),
            "{name}: no memory in the loaded block: {block}"
        );
        println!("  probes asked of the {} characters SessionStart loads", block.len());
        let answers = probe_answers(&mode, &name, &scenario.probes, &block, &model);
        for (probe, answer) in scenario.probes.iter().zip(&answers) {
            let right = probe.right(answer);
            checks.push(("probe", probe.question.clone(), right));
            if !right {
                println!("  answer to {:?}: {answer}", probe.question);
            }
        }
    }
    for (kind, item, held) in &checks {
        println!("  {} {kind:<9} {item}", if *held { "ok  " } else { "MISS" });
    }
    for g in &guards {
        println!("  guard {:?} {:?} on {}", g.tool, g.pattern, g.rule);
    }
    let held = checks.iter().filter(|c| c.2 && c.0 != "probe").count();
    let probes = checks.iter().filter(|c| c.0 == "probe");
    let (asked, right) = (probes.clone().count(), probes.filter(|c| c.2).count());
    println!(
        "eval {name}: {held} of {} checks held, {right} of {asked} probes answered right\n{memory}",
        checks.len() - asked
    );
    Some(checks)
}

/// Every scenario in turn. In the scripted mode every check and probe
/// holds: the canned replies and answers are right, so a miss is
/// memory-save's (or the scorer's) own.
fn evaluate(interactive: bool) {
    let mut missed = Vec::new();
    for path in scenario_paths() {
        let Some(checks) = run(&path, interactive) else { return };
        if matches!(Mode::from_env(), Mode::Scripted) {
            missed.extend(checks.into_iter().filter(|c| !c.2).map(|c| format!("{}: {c:?}", path.display())));
        }
    }
    assert!(missed.is_empty(), "missed: {missed:#?}");
}

#[test]
fn eval_every_scenario() {
    evaluate(interactive_run());
}

/// The scripted run (CI's) drives the interactive sessions too; a run
/// with a model behind the forks does what `scripts/eval` asked, once.
#[test]
fn eval_every_scenario_in_interactive_sessions() {
    if matches!(Mode::from_env(), Mode::Scripted) && !interactive_run() {
        evaluate(true);
    }
}

/// The scorer itself, on a memory that gets things wrong: it can fail.
#[test]
fn the_scorer_counts_what_is_wrong() {
    let truth = Truth {
        present: vec!["deploy/config.yaml".into()],
        absent: vec!["config/app.yaml".into()],
        rules: vec!["never push".into()],
        retired: vec!["old rule".into()],
        secrets: vec!["{{SECRET}}".into()],
        guarded: vec!["git push origin main".into()],
        unguarded: vec!["git status".into()],
        ..Truth::default()
    };
    let wrong = "# app\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n- Config in config/app.yaml.\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n";
    let everything = format!("{wrong}\n{}", secret());
    let rule = "- Never push to main.";
    let catch_all = format!(
        r#"{{"guards": [{{"id": "a", "rule": "{rule}", "tool": "Bash", "match": "git", "decision": "ask"}}]}}"#
    );
    let wrong_guards = binding_guards(
        &catch_all,
        &wrong.replace("## CRITICAL RULES\n- None yet.", &format!("## CRITICAL RULES\n{rule}")),
    );
    let checks = score(&truth, wrong, &[], &everything, &[]);
    let missed: Vec<&str> = checks.iter().filter(|c| !c.2).map(|c| c.0).collect();
    assert_eq!(missed, ["present", "absent", "rule", "retired", "no secret", "guarded"]);
    let checks = score(&truth, wrong, &[], &everything, &wrong_guards);
    assert_eq!(checks.iter().filter(|c| !c.2).map(|c| c.0).next_back(), Some("unguarded"));
    let right = wrong
        .replace("config/app.yaml", "deploy/config.yaml")
        .replace("## CRITICAL RULES\n- None yet.", "## CRITICAL RULES\n- Never push to main.");
    let history = vec![("history.md".to_string(), "## Retired\n- old rule\n".to_string())];
    let guards = format!(
        r#"{{"guards": [{{"id": "b", "rule": "{rule}", "tool": "Bash", "match": "git push .*main", "decision": "ask"}}]}}"#
    );
    let guards = binding_guards(&guards, &right);
    assert_eq!(guards.len(), 1);
    assert!(score(&truth, &right, &history, &right, &guards).iter().all(|c| c.2));
}

/// The API mode sends the block and the questions alone, with the key,
/// and reads the answers from the reply's text.
#[test]
fn the_api_mode_asks_the_probes_of_the_messages_api() {
    let standin = StandIn::start(|_| Reply::text("Here they are: [\"With `make deploy`.\", \"Go 1.22.\"]"));
    let mode = Mode::Api { key: "test-key".into(), url: standin.base_url() };
    let probes: Vec<Probe> = serde_json::from_value(json!([
        {"question": "How is it deployed?", "holds": ["make deploy"]},
        {"question": "Which Go?", "holds": ["1.22"]}
    ]))
    .unwrap();
    let answers = probe_answers(&mode, "api", &probes, "# app\n- Deploy with `make deploy`.", "claude-test");
    assert_eq!(answers, ["With `make deploy`.", "Go 1.22."]);
    assert!(probes.iter().zip(&answers).all(|(p, a)| p.right(a)));
    let asked = standin.message_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].body["model"], "claude-test");
    let text = asked[0].last_user_text();
    assert!(
        text.contains("<<<BLOCK\n# app\n- Deploy with `make deploy`.\nBLOCK>>>") && text.contains("2. Which Go?"),
        "{text}"
    );
}

/// A probe's answer must hold each entry (one of an entry's alternatives)
/// and none of what it lacks.
#[test]
fn a_probe_scores_the_answer_not_its_wording() {
    let probe: Probe = serde_json::from_value(json!({"question": "Where are the settings?",
        "holds": ["deploy/config.yaml", ["moved", "now"]], "lacks": ["config/app.yaml"]}))
    .unwrap();
    assert!(probe.right("They are NOW in Deploy/Config.yaml."));
    assert!(probe.right("They moved to deploy/config.yaml."));
    assert!(!probe.right("In deploy/config.yaml."), "one alternative of each entry");
    assert!(!probe.right("Now in deploy/config.yaml, once config/app.yaml."), "what it lacks");
    assert!(!probe.right("The memory does not say."));
}
