//! End-to-end tests: the real Claude Code CLI, offline, against a loopback
//! stand-in for the Messages API. See tests/e2e/README.md.

mod app;
mod billing;
mod cadence;
mod eval;
mod guards;
mod harness;
mod restore;
mod scenarios;
mod screen;
#[path = "../common/session.rs"]
mod session;
mod spend;
mod standin;

use harness::Bench;
use serde_json::json;
use standin::{Reply, StandIn};
use std::time::Duration;

/// The bench itself works: one `claude -p` turn in which the stand-in asks
/// for a Bash call, the CLI runs it, sends the tool_result back, and prints
/// the stand-in's final text. A logging hook proves hooks fire.
#[test]
fn bench_runs_a_tool_call_turn() {
    let Some(claude) = harness::claude() else {
        return;
    };
    let _serial = app::serial();
    let standin = StandIn::start(|req| {
        if req.has_tool_result() {
            Reply::text(format!("E2E-DONE after: {}", req.last_user_text().trim()))
        } else {
            Reply::bash("echo e2e-tool-ran")
        }
    });
    let bench = Bench::new(claude, standin.base_url());

    // A throwaway hook that appends each payload to a log in HOME.
    let log = bench.home().join("hooks.log");
    let hook = json!([{ "hooks": [{ "type": "command", "command": format!("cat >> '{}'; echo >> '{}'", log.display(), log.display()) }] }]);
    bench.write_settings(json!({ "hooks": { "SessionStart": hook, "PostToolUse": hook, "Stop": hook } }));

    let run = bench.print("run the tool please", &["--allowedTools", "Bash"], Duration::from_secs(120));
    assert!(run.success(), "claude failed: {run:?}");
    let out = run.json();
    assert_eq!(out["is_error"], false, "{out}");
    assert_eq!(out["result"], "E2E-DONE after: e2e-tool-ran", "{out}");

    let turns = standin.message_requests();
    assert_eq!(turns.len(), 2, "expected the tool_use turn and the follow-up");
    assert!(!turns[0].has_tool_result());
    assert!(turns[1].has_tool_result(), "second request carries the tool_result");
    assert!(turns[1].last_user_text().contains("e2e-tool-ran"));
    assert!(turns[1].tool_names().iter().any(|t| t == "Bash"));
    // Same prompt prefix, so the fake cache serves most of the second request.
    assert!(turns[1].usage.unwrap().cached_share() > 0.9, "{:?}", turns[1].usage);

    let log = std::fs::read_to_string(&log).expect("hook log written");
    for event in ["\"SessionStart\"", "\"PostToolUse\"", "\"Stop\""] {
        assert!(log.contains(event), "hook {event} did not fire: {log}");
    }
}

/// The fork command of docs/design.md §4, run after a parent turn: its request keeps
/// the parent's tools, system prompt and messages (so the prompt cache serves
/// almost all of it), its message arrives last from stdin, no hook fires, and
/// `--output-format json` reports this run's usage only.
#[test]
fn fork_request_matches_parent() {
    const MARKER: &str = "E2E-FORK-MARKER";
    let Some(claude) = harness::claude() else {
        return;
    };
    let _serial = app::serial();
    let standin = StandIn::start(|req| {
        if req.last_user_text().contains(MARKER) {
            Reply::text(r#"{"ops":[],"topics":[]}"#)
        } else if req.has_tool_result() {
            Reply::text("parent done")
        } else {
            Reply::bash("echo parent-tool")
        }
    });
    let bench = Bench::new(claude, standin.base_url());
    let log = bench.home().join("hooks.log");
    let hook = json!([{ "hooks": [{ "type": "command", "command": format!("cat >> '{}'", log.display()) }] }]);
    bench.write_settings(json!({ "hooks": { "SessionStart": hook, "Stop": hook } }));

    let parent = bench.print("parent turn", &["--allowedTools", "Bash"], Duration::from_secs(120));
    assert!(parent.success(), "{parent:?}");
    let parent_out = parent.json();
    let sid = parent_out["session_id"].as_str().unwrap().to_string();
    let model = standin.message_requests().last().unwrap().model().to_string();
    let hooks_before = std::fs::read_to_string(&log).unwrap_or_default();

    let fork = bench.run(
        &[
            "-p",
            "--resume",
            &sid,
            "--fork-session",
            "--no-session-persistence",
            "--setting-sources",
            "",
            "--settings",
            r#"{"disableAllHooks":true}"#,
            "--permission-mode",
            "dontAsk",
            "--max-turns",
            "1",
            "--output-format",
            "json",
            "--model",
            &model,
        ],
        Some(&format!("{MARKER} what should the project remember?")),
        Duration::from_secs(120),
    );
    assert!(fork.success(), "{fork:?}");
    let out = fork.json();
    assert_eq!(out["result"], r#"{"ops":[],"topics":[]}"#, "{out}");
    assert_eq!(out["is_error"], false);
    assert_ne!(out["session_id"], sid.as_str(), "a fork gets its own session id");

    let turns = standin.message_requests();
    let (parent_last, fork_req) = (&turns[turns.len() - 2], &turns[turns.len() - 1]);
    assert!(fork_req.last_user_text().contains(MARKER));
    assert_eq!(fork_req.body["tools"], parent_last.body["tools"]);
    assert_eq!(fork_req.body["system"], parent_last.body["system"]);
    let (pm, fm) = (parent_last.messages(), fork_req.messages());
    // Earlier messages equal up to the last one, whose cache_control marker moved.
    assert_eq!(fm[..pm.len() - 1], pm[..pm.len() - 1]);
    let usage = fork_req.usage.unwrap();
    assert!(usage.cached_share() > 0.95, "{usage:?}");
    // `usage` in the JSON is this run's; total_cost_usd is not (see README).
    assert_eq!(out["usage"]["cache_read_input_tokens"], usage.cache_read_input_tokens);
    assert_eq!(out["usage"]["input_tokens"], usage.input_tokens);

    let hooks_after = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(hooks_before, hooks_after, "no hook may fire inside the fork");
}
