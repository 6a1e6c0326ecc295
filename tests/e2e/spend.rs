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

/// Scenario 20: a subscription login whose allowance is used up, in both
/// shapes: a used-up 5-hour window, and used-up usage credits (should the
/// paused Agent SDK credit take effect; the overage headers as measured).
/// The API refuses the fork (429, a reset named): the save says `paused`
/// until that reset, and the next turn's save starts no fork at all.
#[test]
fn s20_a_used_up_allowance_stops_the_forks_after_one_refusal() {
    let window = [("anthropic-ratelimit-unified-representative-claim", "five_hour")];
    used_up(&window, "You've hit your 5-hour limit");
    let credits = [
        ("anthropic-ratelimit-unified-overage-status", "rejected"),
        ("anthropic-ratelimit-unified-overage-disabled-reason", "out_of_credits"),
    ];
    used_up(&credits, "You're out of usage credits");
}

fn used_up(shape: &[(&str, &str)], says: &'static str) {
    let Some(claude) = harness::claude() else {
        return;
    };
    let _g = serial();
    let reset = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 3 * 3600;
    let shape: Vec<(String, String)> = shape.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let standin = StandIn::start(move |req| {
        if is_fork(req) {
            let mut headers = vec![
                ("anthropic-ratelimit-unified-status".to_string(), "rejected".to_string()),
                ("anthropic-ratelimit-unified-reset".to_string(), reset.to_string()),
            ];
            headers.extend(shape.iter().cloned());
            return Reply::Refused {
                status: 429,
                headers,
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
    assert!(state.report().unwrap_or_default().contains(says), "{state:#}");
    assert_eq!(state.route()["header"], "bearer", "{state:#}");
    let run = app.bench.print("second turn", &["--resume", &sid], LIMIT);
    assert!(run.success(), "{run:?}");
    app.wait_saved(&sid, 2, SAVE_LIMIT);
    let forks = standin.message_requests().iter().filter(|r| is_fork(r)).count();
    assert_eq!(forks, 1, "a fork ran past a used-up allowance");
    report("20 used-up allowance", &format!("{says}: forks after one refusal and a second turn"), forks);
    report("20 used-up allowance", &format!("{says}: status"), status);
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
    app.config("save_every_turns = 5\nmax_cost_per_save_usd = 0.05\n");
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

/// Scenario 27: a Claude plan's usage windows guard its saves. The parent's
/// answers carry the headers a plan's answers carry
/// (`anthropic-ratelimit-unified-5h-*`, `-7d-*`); Claude Code hands them to
/// memory-save's status line as `rate_limits`; at 97% a turn's save runs no
/// fork and holds the turn back, and once the window reads 20% the
/// session's end saves it.
#[test]
fn s27_a_plans_nearly_full_window_holds_the_save_until_it_frees() {
    let (Some(claude), Some(())) = (harness::claude(), harness::tmux()) else { return };
    let _g = serial();
    let used = Arc::new(std::sync::Mutex::new("0.97".to_string()));
    let answer_used = used.clone();
    let standin = StandIn::start(move |req| {
        if is_fork(req) {
            return Reply::text(
                r#"{"ops":[{"op":"add","section":"Architecture & Config Facts","text":"- E2E-WINDOW: saved once the window freed"}],"topics":[]}"#,
            );
        }
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let used = answer_used.lock().unwrap().clone();
        Reply::text("ok").with_headers(&[
            ("anthropic-ratelimit-unified-5h-utilization", used),
            ("anthropic-ratelimit-unified-5h-reset", (now + 3600).to_string()),
            ("anthropic-ratelimit-unified-7d-utilization", "0.2".to_string()),
            ("anthropic-ratelimit-unified-7d-reset", (now + 3 * 86_400).to_string()),
        ])
    });
    let mut app = App::new(claude, &standin);
    // A subscription login: the parent's token in its environment, and the
    // stored login the fork reads (access token and scope only: no lookup).
    app.bench.removed_env.push("ANTHROPIC_API_KEY".into());
    app.bench.extra_env.push(("CLAUDE_CODE_OAUTH_TOKEN".into(), "e2e-oauth-token".into()));
    std::fs::write(
        app.home().join(".claude/.credentials.json"),
        json!({"claudeAiOauth": {"accessToken": "e2e-oauth-token", "scopes": ["user:inference"]}}).to_string(),
    )
    .unwrap();
    app.config("save_every_turns = 2\n");
    let out = app.ours(&["install", "--statusline"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    app.add_logging_hook();
    let (tmux, sid) = crate::scenarios::start_interactive(&app);
    std::thread::sleep(Duration::from_secs(2));
    let status = || String::from_utf8_lossy(&app.ours(&["status"]).stdout).into_owned();
    // The first answer's windows reach the status line, and status shows them.
    crate::scenarios::interactive_turn(&tmux, &standin, &app, &sid, "window turn one");
    let read = app::wait_for(LIMIT, "the 97% reading in status", || {
        let status = status();
        status.contains("5-hour 97% used").then_some(status)
    });
    report("27 plan windows", "status's plan row at 97%", read.lines().find(|l| l.contains("  plan ")).unwrap_or(""));
    // The second turn makes the save due: it waits, and no fork runs.
    crate::scenarios::interactive_turn(&tmux, &standin, &app, &sid, "window turn two");
    let held = app::wait_for(SAVE_LIMIT, "the save held by the window", || {
        let s = app.session_state(&sid);
        (s.saves() >= 1 && s.claimed_since().is_none()).then_some(s)
    });
    assert!(held.status().starts_with("waiting: plan's 5-hour window 97% used, until "), "{held}");
    assert_eq!(standin.message_requests().iter().filter(|r| is_fork(r)).count(), 0, "a fork ran past a full window");
    let screen = app::wait_for(LIMIT, "the wait on the status line", || {
        let screen = tmux.screen();
        screen.contains("memory-save: waiting: plan's 5-hour window 97% used").then_some(screen)
    });
    report("27 plan windows", "status line at 97%", screen.lines().find(|l| l.contains("memory-save:")).unwrap_or(""));
    // The window frees: a turn reads 20%, then the session ends and its
    // held turns are saved.
    *used.lock().unwrap() = "0.2".to_string();
    crate::scenarios::interactive_turn(&tmux, &standin, &app, &sid, "window turn three");
    app::wait_for(LIMIT, "the 20% reading in status", || status().contains("5-hour 20% used").then_some(()));
    tmux.send_line("/exit");
    app::wait_for(SAVE_LIMIT, "the held turns saved", || app.memory().filter(|m| m.contains("E2E-WINDOW")).map(|_| ()));
    let forks = standin.message_requests().iter().filter(|r| is_fork(r)).count();
    report("27 plan windows", "forks at 97% then after the window freed", forks);
    assert!(forks >= 1);
}
