//! Memory a subscriber can afford, on the real CLI: the smaller
//! fork message on a 190-line memory, and a used-up allowance that stops
//! the forks after one refusal.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;

use crate::app::{self, App, MARKER, is_fork, report, serial};
use crate::harness;
use crate::standin::{RecordedRequest, Reply, StandIn};

const LIMIT: Duration = Duration::from_secs(120);
const SAVE_LIMIT: Duration = Duration::from_secs(90);
const NO_EDITS: &str = r#"{"ops":[],"topics":[]}"#;

/// A MEMORY.md of `lines` lines in the template.
fn memory_of(lines: usize) -> String {
    let facts: String = (0..lines.saturating_sub(12))
        .map(|i| format!("- Fact {i:03}: the service reads its setting number {i} from config/app.toml at start.\n"))
        .collect();
    format!(
        "# app\n\n## CRITICAL RULES\n- Run the tests with cargo test -j1.\n\n## Architecture & Config Facts\n{facts}\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n"
    )
}

/// The fork request and the parent's last request before it.
fn fork_and_parent(requests: &[RecordedRequest], nth: usize) -> (RecordedRequest, RecordedRequest) {
    let at = requests.iter().enumerate().filter(|(_, r)| is_fork(r)).map(|(i, _)| i).nth(nth).expect("the fork");
    let parent = requests[..at].iter().rev().find(|r| !is_fork(r)).unwrap().clone();
    (requests[at].clone(), parent)
}

/// Scenario 19: the fork already holds the block SessionStart loaded, so
/// its message points to it instead of repeating the file. Measured on a
/// 190-line memory: the save that must send the whole file (the last save
/// skipped a line) against the next, which points to the block.
#[test]
fn s19_the_fork_message_points_to_the_loaded_memory() {
    let Some(claude) = harness::claude() else {
        return;
    };
    let _g = serial();
    let forks = Arc::new(AtomicUsize::new(0));
    let count = forks.clone();
    let standin = StandIn::start(move |req| {
        if is_fork(req) {
            // The first fork names a line the file lacks: the next save
            // sends the whole file, with the EXACT COPY note.
            if count.fetch_add(1, Ordering::SeqCst) == 0 {
                return Reply::text(
                    json!({"ops": [{"op": "remove", "line": "- not a line"}], "topics": []}).to_string(),
                );
            }
            return Reply::text(NO_EDITS);
        }
        Reply::text("ok")
    });
    let app = App::new(claude, &standin);
    let memory = memory_of(190);
    assert_eq!(memory.lines().count(), 190);
    app.write_memory(&memory);
    let run = app.bench.print("first turn", &[], LIMIT);
    let sid = app::session_of(&run);
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    for (turn, saves) in [("second turn", 2), ("third turn", 3)] {
        let run = app.bench.print(turn, &["--resume", &sid], LIMIT);
        assert!(run.success(), "{run:?}");
        app.wait_saved(&sid, saves, SAVE_LIMIT);
    }
    let requests = standin.message_requests();
    let (whole, whole_parent) = fork_and_parent(&requests, 1);
    let (pointer, pointer_parent) = fork_and_parent(&requests, 2);
    assert!(whole.last_user_text().contains("- Fact 177: ") && whole.last_user_text().contains("EXACT COPY NOTE"));
    let text = pointer.last_user_text();
    assert!(text.starts_with(MARKER) && text.contains("exactly the last [PROJECT MEMORY: …] block"), "{text}");
    assert!(!text.contains("- Fact 177: "), "the pointer repeats the file");
    // The block the pointer names is in the fork's own request.
    assert!(crate::standin::prompt_text(&pointer.body).contains("- Fact 177: the service reads"));
    let written = |r: &RecordedRequest| r.usage.unwrap().cache_creation_input_tokens;
    report(
        "19 190-line memory",
        "cache-written tokens per save: whole file / pointer to the loaded block",
        format!("{} / {}", written(&whole), written(&pointer)),
    );
    report(
        "19 190-line memory",
        "fork message bytes: whole file / pointer",
        format!("{} / {}", whole.last_user_text().len(), text.len()),
    );
    assert!(written(&pointer) * 3 < written(&whole), "{} vs {}", written(&pointer), written(&whole));
    for (label, fork, parent) in [("whole file", &whole, &whole_parent), ("pointer", &pointer, &pointer_parent)] {
        let share = app::check_fork_against_parent(parent, fork);
        let (_, without) = app::interactive_shares(parent, fork);
        report(
            "19 190-line memory",
            &format!("cacheable share, {label}: raw / without billing header"),
            format!("{share:.4} / {without:.4}"),
        );
        if label == "pointer" {
            assert!(without >= 0.95, "{label}: {without:.4}");
        }
    }
}

/// Scenario 20: a subscription login whose allowance is used up. The API
/// refuses the fork (429, unified status rejected, a reset named): the
/// save says `paused`, and the next turn's save starts no fork at all.
#[test]
fn s20_a_used_up_allowance_stops_the_forks_after_one_refusal() {
    let Some(claude) = harness::claude() else {
        return;
    };
    let _g = serial();
    let reset = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 3 * 3600;
    let standin = StandIn::start(move |req| {
        if is_fork(req) {
            let headers = [
                ("anthropic-ratelimit-unified-status", "rejected".to_string()),
                ("anthropic-ratelimit-unified-representative-claim", "five_hour".to_string()),
                ("anthropic-ratelimit-unified-reset", reset.to_string()),
            ];
            return Reply::Refused {
                status: 429,
                headers: headers.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
                body: json!({"type": "error", "error": {"type": "rate_limit_error", "message": "limit"}}),
            };
        }
        Reply::text("ok")
    });
    let mut app = App::new(claude, &standin);
    app.bench.removed_env.push("ANTHROPIC_API_KEY".into());
    // A stored subscription login: Claude Code hands no credential variable
    // to its hooks (CLAUDE_CODE_OAUTH_TOKEN included, measured), so the fork
    // reads the login itself. Only what the CLI needs to use it (an access
    // token with the inference scope): a refresh token and an expiry made
    // it look up api.anthropic.com's address (measured), and the suite
    // sends nothing past loopback.
    std::fs::write(
        app.home().join(".claude/.credentials.json"),
        json!({"claudeAiOauth": {"accessToken": "e2e-oauth-token", "scopes": ["user:inference", "user:profile"]}})
            .to_string(),
    )
    .unwrap();
    // The parent also has the token in its environment: its hooks do not.
    app.bench.extra_env.push(("CLAUDE_CODE_OAUTH_TOKEN".into(), "e2e-oauth-token".into()));
    let envlog = app.home().join("hook-env.txt");
    let dump = format!("env > '{}'", envlog.display());
    app.merge_settings(json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": dump}]}]}}));
    let run = app.bench.print("first turn", &[], LIMIT);
    let sid = app::session_of(&run);
    let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
    let hook_env = std::fs::read_to_string(&envlog).unwrap();
    assert!(hook_env.contains("CLAUDE_PROJECT_DIR=") && !hook_env.contains("CLAUDE_CODE_OAUTH_TOKEN"), "{hook_env}");
    let status = state.status().to_string();
    assert!(status.starts_with("paused: allowance used up until "), "{state:#}");
    assert!(state.report().unwrap_or_default().contains("You've hit your 5-hour limit"), "{state:#}");
    assert_eq!(state.route()["header"], "bearer", "{state:#}");
    let run = app.bench.print("second turn", &["--resume", &sid], LIMIT);
    assert!(run.success(), "{run:?}");
    app.wait_saved(&sid, 2, SAVE_LIMIT);
    let forks = standin.message_requests().iter().filter(|r| is_fork(r)).count();
    assert_eq!(forks, 1, "a fork ran past a used-up allowance");
    report("20 used-up allowance", "forks after one refusal and a second turn", forks);
    report("20 used-up allowance", "status", status);
}

/// Scenario 21: a session whose prompt cache expired before its end (here
/// an hour passes on memory-save's debug clock) is not resumed, which would
/// write the whole conversation again: the save resumes nothing, offers the
/// fork no tool, and reads the turns since the last save from the
/// transcript. Its request is our message and Claude Code's few hundred
/// tokens besides.
#[test]
#[cfg(debug_assertions)] // needs the debug build's virtual clock (`MEMORY_SAVE_DEBUG_CLOCK`)
fn s21_a_session_ending_past_its_cache_is_saved_from_its_turns() {
    let Some(claude) = harness::claude() else {
        return;
    };
    let _g = serial();
    let standin = StandIn::start(|req| {
        if is_fork(req) {
            return Reply::text(
                json!({"ops": [{"op": "add", "section": "Architecture & Config Facts", "text": "- The API listens on port 8443."}], "topics": []})
                    .to_string(),
            );
        }
        Reply::text("noted")
    });
    let mut app = App::new(claude, &standin);
    // Resuming the session cold would pass this; its turns alone would not.
    app.config("save_every_turns = 5\ncold_save_max_usd = 0.05\n");
    let clock = app.home().join("debug-clock");
    let later = time::OffsetDateTime::now_utc().unix_timestamp() + 3600;
    std::fs::write(&clock, later.to_string()).unwrap();
    app.bench.extra_env.push(("MEMORY_SAVE_DEBUG_CLOCK".into(), clock.display().to_string()));
    let run = app.bench.print("from now on the API listens on port 8443", &[], LIMIT);
    assert!(run.success(), "{run:?}");
    let sid = app::session_of(&run);
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    let requests = standin.message_requests();
    let forks: Vec<&RecordedRequest> = requests.iter().filter(|r| is_fork(r)).collect();
    assert_eq!(forks.len(), 1, "one save");
    let (fork, parent) = (forks[0], requests.iter().rev().find(|r| !is_fork(r)).unwrap());
    assert_eq!(fork.body["tools"], json!([]), "the fresh fork has tools");
    assert!(
        fork.body["system"].to_string().contains("You keep a software project's MEMORY.md"),
        "{}",
        fork.body["system"]
    );
    assert!(fork.messages().iter().all(|m| m["role"] != "assistant"), "the fork resumed the session");
    let text = fork.last_user_text();
    assert!(
        text.contains("<<<CONVERSATION\n") && text.contains("USER: from now on the API listens on port 8443"),
        "{text}"
    );
    assert!(text.contains("ASSISTANT: noted"), "{text}");
    assert!(app.memory().unwrap().contains("- The API listens on port 8443."));
    let record = app.saves().pop().unwrap();
    assert_eq!(record["fresh"], true, "{record:#}");
    let (fork_usage, parent_usage) = (fork.usage.unwrap(), parent.usage.unwrap());
    let prefix =
        parent_usage.input_tokens + parent_usage.cache_read_input_tokens + parent_usage.cache_creation_input_tokens;
    let fresh = fork_usage.input_tokens + fork_usage.cache_read_input_tokens + fork_usage.cache_creation_input_tokens;
    report("21 cold end", "input tokens: fresh save / the session's last request", format!("{fresh} / {prefix}"));
    let overhead = fresh.saturating_sub(text.len() as u64 / 4);
    report("21 cold end", "fresh request beyond its message (tokens, about)", overhead);
    assert!(fresh * 3 < prefix, "{fresh} vs {prefix}");
    assert!(overhead < memory_save::memory::cost::FRESH_OVERHEAD_TOKENS, "{overhead}");
}
