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
//! `MEMORY_SAVE_EVAL_SCENARIO` runs one scenario by name. With
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
    Api(String),
}

impl Mode {
    fn from_env() -> Mode {
        match std::env::var("MEMORY_SAVE_EVAL").unwrap_or_default().as_str() {
            "" | "scripted" => Mode::Scripted,
            "api" => Mode::Api(std::env::var("ANTHROPIC_API_KEY").expect("--api needs ANTHROPIC_API_KEY")),
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
            Mode::Api(_) => Duration::from_secs(600),
            Mode::Player(_) => Duration::from_secs(3 * 3600),
        }
    }
}

/// The fork's answer in this mode (the `n`-th fork of the run, from 0).
fn answer_fork(mode: &Mode, name: &str, scenario: &Scenario, n: usize, req: &RecordedRequest) -> Reply {
    match mode {
        Mode::Scripted => {
            let reply = scenario.forks.get(n).cloned().unwrap_or_else(|| json!({"ops": [], "topics": []}));
            Reply::text(reply.to_string().replace("{{SECRET}}", &secret()))
        }
        Mode::Player(dir) => {
            std::fs::create_dir_all(dir).unwrap();
            let stem = dir.join(format!("{name}-{n:03}"));
            std::fs::write(stem.with_extension("request.json"), serde_json::to_vec_pretty(&req.body).unwrap()).unwrap();
            std::fs::write(stem.with_extension("request.txt"), readable(&req.body)).unwrap();
            let reply = stem.with_extension("reply.txt");
            eprintln!("eval: fork {n:03} waits for {}", reply.display());
            let start = Instant::now();
            loop {
                if let Ok(text) = std::fs::read_to_string(&reply) {
                    return Reply::text(text.trim().to_string());
                }
                assert!(start.elapsed() < mode.fork_limit(), "no {} within {:?}", reply.display(), mode.fork_limit());
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        Mode::Api(key) => match api_reply(key, &req.body) {
            Ok(text) => Reply::text(text),
            Err(why) => Reply::Error(500, why),
        },
    }
}

/// The fork's request sent to the real Messages API, not streamed.
fn api_reply(key: &str, body: &Value) -> Result<String, String> {
    let mut body = body.clone();
    body["stream"] = json!(false);
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "600", "https://api.anthropic.com/v1/messages"])
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

/// Runs scenario `name` and prints its score; returns the checks.
fn run(name: &str) -> Option<Vec<Check>> {
    let claude = harness::claude()?;
    let wanted = std::env::var("MEMORY_SAVE_EVAL_SCENARIO").unwrap_or_default();
    if !wanted.is_empty() && wanted != name {
        return None;
    }
    let _serial = app::serial();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/e2e/eval/{name}.json"));
    let scenario: Arc<Scenario> = Arc::new(serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap());
    let mode = Arc::new(Mode::from_env());
    let forks = Arc::new(AtomicUsize::new(0));
    let standin = {
        let (scenario, mode, forks, name) = (scenario.clone(), mode.clone(), forks.clone(), name.to_string());
        StandIn::start(move |req| {
            if app::is_fork(req) {
                let n = forks.fetch_add(1, Ordering::SeqCst);
                answer_fork(&mode, &name, &scenario, n, req)
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
    if fresh_run() {
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
    for session in &scenario.sessions {
        let mut id: Option<String> = None;
        for (runs, turn) in session.iter().enumerate() {
            let prompt = turn.prompt.replace("{{SECRET}}", &secret());
            let mut args = vec!["--allowedTools", "Bash"];
            if let Some(id) = &id {
                args.extend(["--resume", id.as_str()]);
            }
            let out = app.bench.print(&prompt, &args, limit + Duration::from_secs(120));
            let sid = app::session_of(&out);
            app.wait_saved(&sid, runs as u64 + 1, limit + Duration::from_secs(120));
            id = Some(sid);
        }
    }
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
    let checks = score(&scenario.truth, &memory, &topics, &all_text(&app.root()), &guards);
    let forks: Vec<RecordedRequest> = standin.message_requests().into_iter().filter(app::is_fork).collect();
    println!("\neval {name}: {}", scenario.about);
    for (save, record) in app.saves().iter().enumerate() {
        let kind = forks.get(save).map_or("-", message_kind);
        let u = &record["usage"];
        println!(
            "  save {}: {kind:<7} {:<32} in {} · cache read {} · cache write {} · out {}",
            save + 1,
            record["status"].as_str().unwrap_or("?"),
            u["input_tokens"],
            u["cache_read_input_tokens"],
            u["cache_creation_input_tokens"],
            u["output_tokens"]
        );
    }
    for (kind, item, held) in &checks {
        println!("  {} {kind:<9} {item}", if *held { "ok  " } else { "MISS" });
    }
    for g in &guards {
        println!("  guard {:?} {:?} on {}", g.tool, g.pattern, g.rule);
    }
    let held = checks.iter().filter(|c| c.2).count();
    println!("eval {name}: {held} of {} checks held\n{memory}", checks.len());
    Some(checks)
}

/// In the scripted mode every check holds: the canned replies are right,
/// so a miss is memory-save's (or the scorer's) own.
fn evaluate(name: &str) {
    let Some(checks) = run(name) else { return };
    if matches!(Mode::from_env(), Mode::Scripted) {
        let missed: Vec<&Check> = checks.iter().filter(|c| !c.2).collect();
        assert!(missed.is_empty(), "eval {name}: missed {missed:?}");
    }
}

#[test]
fn eval_knowledge_that_changes_across_sessions() {
    evaluate("changes");
}

#[test]
fn eval_a_long_memory_near_the_caps() {
    evaluate("caps");
}

#[test]
fn eval_hostile_content_and_a_pasted_secret() {
    evaluate("hostile");
}

#[test]
fn eval_a_user_who_writes_in_turkish() {
    evaluate("turkish");
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
