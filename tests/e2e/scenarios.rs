//! Issue 3: memory-save registered by its own `install` into the temp HOME,
//! driven by the real CLI against the stand-in. One test per scenario, run
//! one at a time (`app::serial`). Figures go to target/e2e/report.md.

use crate::app::{self, App, is_fork, report, report_fork_tokens, serial, wait_for};
use crate::harness;
use crate::standin::{RecordedRequest, Reply, StandIn};
use serde_json::json;
use std::time::{Duration, Instant};

pub(crate) const LIMIT: Duration = Duration::from_secs(120);
pub(crate) const SAVE_LIMIT: Duration = Duration::from_secs(90);
pub(crate) const BULLET: &str = "- E2E-FACT-1: the project builds with cargo";

/// A fork reply with nothing to change.
pub(crate) const NO_EDITS: &str = r#"{"ops":[],"topics":[]}"#;

pub(crate) fn add_op(text: &str) -> String {
    json!({ "ops": [{ "op": "add", "section": "Architecture & Config Facts", "text": text }], "topics": [] })
        .to_string()
}

/// The parent answers: a prompt containing TOOL gets a Bash call, a
/// tool_result gets "parent done", anything else "ok". Forks get `fork`.
pub(crate) fn script(
    fork: impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static,
) -> impl Fn(&RecordedRequest) -> Reply + Send + Sync + 'static {
    move |req| {
        if is_fork(req) {
            fork(req)
        } else if req.has_tool_result() {
            Reply::text("parent done")
        } else if req.last_user_text().contains("TOOL") {
            Reply::bash("echo parent-tool")
        } else {
            Reply::text("ok")
        }
    }
}

pub(crate) fn forks(standin: &StandIn) -> Vec<RecordedRequest> {
    standin.message_requests().into_iter().filter(is_fork).collect()
}

/// A stand-in whose parent says "ok" and whose forks change nothing.
pub(crate) fn quiet_standin() -> StandIn {
    StandIn::start(|req| if is_fork(req) { Reply::text(NO_EDITS) } else { Reply::text("ok") })
}

/// A bench for an interactive session (logging hook registered) with
/// `config` as its memory-save.toml.
pub(crate) fn app_configured(claude: std::path::PathBuf, standin: &StandIn, config: &str) -> App {
    let app = App::new(claude, standin);
    app.add_logging_hook();
    app.config(config);
    app
}

/// The CLI (`None`: skipped outside CI) with the suite's lock held, so one
/// scenario runs at a time on the 2 cores.
pub(crate) fn claude_alone() -> Option<(std::path::PathBuf, std::sync::MutexGuard<'static, ()>)> {
    let claude = harness::claude()?;
    Some((claude, serial()))
}

/// The usual bench: memory-save installed, and every fork answering with
/// one bullet to add.
pub(crate) fn app_adding(bullet: &'static str) -> Option<(std::sync::MutexGuard<'static, ()>, StandIn, App)> {
    let (claude, guard) = claude_alone()?;
    let standin = StandIn::start(script(move |_| Reply::text(add_op(bullet))));
    let app = App::new(claude, &standin);
    Some((guard, standin, app))
}

/// The interactive CLI in tmux, once its SessionStart hooks have run (the
/// app's logging hook must be registered); returns the session id.
pub(crate) fn start_interactive(app: &App) -> (app::Tmux, String) {
    let tmux = app::Tmux::start(&app.bench, &[]);
    let sid = wait_for(LIMIT, "SessionStart", || {
        app.hook_log()
            .iter()
            .find(|h| h["hook_event_name"] == "SessionStart")
            .map(|h| h["session_id"].as_str().unwrap().to_string())
    });
    (tmux, sid)
}

/// One interactive turn: types `text`, waits for its request and for the
/// turn's Stop (the session's state says the turn is closed).
pub(crate) fn interactive_turn(tmux: &app::Tmux, standin: &StandIn, app: &App, sid: &str, text: &str) {
    tmux.send_line(text);
    wait_for(LIMIT, &format!("a request with {text}"), || {
        standin.message_requests().into_iter().find(|r| !is_fork(r) && r.last_user_text().contains(text))
    });
    wait_for(LIMIT, "the turn's Stop", || (!app.session_state(sid).answering()).then_some(()));
}

/// Sends `prompt` (its reply is slow), presses Escape while the request is
/// in flight, and clears the prompt the CLI puts back in the input box.
pub(crate) fn interrupt(tmux: &app::Tmux, standin: &StandIn, prompt: &str) {
    std::thread::sleep(Duration::from_secs(2));
    tmux.send_line(prompt);
    let marker = prompt.split(' ').next().unwrap();
    wait_for(LIMIT, "the slow request", || {
        standin.message_requests().iter().any(|r| r.last_user_text().contains(marker)).then_some(())
    });
    std::thread::sleep(Duration::from_millis(800));
    tmux.key("Escape");
    std::thread::sleep(Duration::from_secs(1));
    tmux.key("C-u");
}

/// One `-p` turn with a tool call; returns the session id.
pub(crate) fn tool_turn(app: &App, prompt: &str) -> String {
    let run = app.bench.print(prompt, &["--allowedTools", "Bash"], LIMIT);
    app::session_of(&run)
}

/// Scenario 1: a first session with a tool call in a fresh git repo. The CLI
/// exits right after the turn; the detached worker still saves, and
/// MEMORY.md appears in the template with the fork's bullet.
#[test]
fn s1_first_session_saves_after_cli_exit() {
    let Some((_g, standin, app)) = app_adding(BULLET) else {
        return;
    };
    assert!(app.memory().is_none());

    let sid = tool_turn(&app, "TOOL please look around");
    // The CLI has exited; the save happens in the worker it left behind.
    let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
    let memory = app.memory().expect("MEMORY.md written");
    let want = format!(
        "# app\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n{BULLET}\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n"
    );
    assert_eq!(memory, want, "MEMORY.md not in the template with the bullet");
    assert_eq!(state.status(), "+1", "{state}");
    let saves = app.saves();
    assert_eq!(saves.len(), 1, "{saves:?}");
    let fork = forks(&standin);
    assert_eq!(fork.len(), 1);
    report_fork_tokens("1 first session", &fork[0]);
    report("1 first session", "saved status", state.status());
}

/// Scenario 2: the next session's first request carries the memory block;
/// a 49,000-character MEMORY.md arrives whole, line by line, never as a
/// `<persisted-output>` preview.
#[test]
fn s2_next_session_gets_the_memory_block() {
    let Some((_g, standin, app)) = app_adding(BULLET) else {
        return;
    };
    let sid = tool_turn(&app, "TOOL first session");
    app.wait_saved(&sid, 1, SAVE_LIMIT);

    let before = standin.message_requests().len();
    let sid2 = app::session_of(&app.bench.print("second session", &[], LIMIT));
    let first = &standin.message_requests()[before];
    let text = first.all_message_text();
    assert!(text.contains("[PROJECT MEMORY: app]"), "no memory block: {text}");
    assert!(text.contains(BULLET), "the saved bullet is not in the next session");
    app.wait_saved(&sid2, 1, SAVE_LIMIT);

    // A big file: 49,000 characters, in the template.
    let mut big = String::from("# app\n\n## CRITICAL RULES\n");
    let mut n = 0;
    let filler = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ";
    let section = |n: usize| match n {
        40 => Some("\n## Architecture & Config Facts\n"),
        140 => Some("\n## Active Warnings\n"),
        180 => Some("\n## Topic Files\n"),
        _ => None,
    };
    let tail_len = 0;
    while big.chars().count() < 49_000 - 260 - tail_len {
        if let Some(h) = section(n) {
            big.push_str(h);
        }
        n += 1;
        let mut line = format!("- E2E-LINE-{n:04} ");
        while line.len() < 240 {
            line.push_str(filler);
        }
        line.truncate(240);
        big.push_str(line.trim_end());
        big.push('\n');
    }
    while big.chars().count() < 49_000 {
        big.push_str("- pad\n");
    }
    let chars = big.chars().count();
    assert!((48_990..=49_010).contains(&chars), "{chars}");
    app.write_memory(&big);

    let before = standin.message_requests().len();
    let sid3 = app::session_of(&app.bench.print("third session", &[], LIMIT));
    let reqs = standin.message_requests();
    let text = reqs[before].all_message_text();
    let missing: Vec<&str> = big.lines().filter(|l| !l.is_empty() && !text.contains(l)).collect();
    assert!(
        missing.is_empty(),
        "{} of {} lines missing from the first request, e.g. {:?}",
        missing.len(),
        big.lines().count(),
        missing.first()
    );
    for r in &reqs {
        assert!(
            !serde_json::to_string(&r.body).unwrap().contains("persisted-output"),
            "a request carries <persisted-output>"
        );
    }
    let parts = text.matches("[PROJECT MEMORY: app · part ").count();
    report("2 49,000-char MEMORY.md", "parts delivered", parts);
    report(
        "2 49,000-char MEMORY.md",
        "lines delivered",
        format!("{}/{}", big.lines().filter(|l| !l.is_empty()).count(), big.lines().filter(|l| !l.is_empty()).count()),
    );
    app.wait_saved(&sid3, 1, SAVE_LIMIT);
}

/// Scenario 3: the fork's request against the parent's last one, plain and
/// with a user agent, a user skill and an installed plugin.
#[test]
fn s3_fork_request_is_cacheable() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    for variant in ["plain", "memory loaded at SessionStart", "user agent", "user skill", "plugin"] {
        let standin = StandIn::start(script(|_| Reply::text(add_op(BULLET))));
        let app = App::new(claude.clone(), &standin);
        let home = app.home().to_path_buf();
        let probe = match variant {
            "memory loaded at SessionStart" => {
                app.write_memory(
                    "# app\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n- The build runs with cargo build -j1.\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n",
                );
                Some("The build runs with cargo build -j1.")
            }
            "user agent" => {
                write_definition(&home.join(".claude/agents/x.md"), "e2e-x-agent", "E2E agent that reviews x files.");
                Some("e2e-x-agent")
            }
            "user skill" => {
                write_definition(
                    &home.join(".claude/skills/x/SKILL.md"),
                    "e2e-x-skill",
                    "E2E skill for handling x files.",
                );
                Some("e2e-x-skill")
            }
            "plugin" => {
                install_plugin(&app);
                Some("e2e-plugin")
            }
            _ => None,
        };
        let sid = tool_turn(&app, "TOOL parent turn");
        app.wait_saved(&sid, 1, SAVE_LIMIT);
        let reqs = standin.message_requests();
        let fork_at = reqs.iter().position(is_fork).expect("a fork request");
        let fork = &reqs[fork_at];
        let parent = reqs[..fork_at].iter().rev().find(|r| !is_fork(r)).unwrap();
        if let Some(probe) = probe {
            let all = serde_json::to_string(&parent.body).unwrap();
            assert!(all.contains(probe), "{variant}: {probe} did not reach the parent's request");
        }
        let share = app::check_fork_against_parent(parent, fork);
        let label = format!("3 fork cache ({variant})");
        report(&label, "cacheable share", format!("{share:.4}"));
        report_fork_tokens(&label, fork);
        assert!(share >= 0.95, "{variant}: cacheable share {share:.3}");
    }
}

/// An agent or skill file: front matter naming it, and one line of body.
pub(crate) fn write_definition(path: &std::path::Path, name: &str, description: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, format!("---\nname: {name}\ndescription: {description}\n---\n{description}\n")).unwrap();
}

/// A local marketplace with one plugin (a skill and an agent), added and
/// installed with the CLI's own commands, offline.
pub(crate) fn install_plugin(app: &App) {
    let market = app.home().join("market");
    let plugin = market.join("e2e-plugin");
    std::fs::create_dir_all(market.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
    std::fs::create_dir_all(plugin.join("skills/hello")).unwrap();
    std::fs::create_dir_all(plugin.join("agents")).unwrap();
    std::fs::write(
        market.join(".claude-plugin/marketplace.json"),
        json!({ "name": "e2e-market", "owner": { "name": "e2e" },
                "plugins": [{ "name": "e2e-plugin", "source": "./e2e-plugin", "description": "E2E plugin" }] })
        .to_string(),
    )
    .unwrap();
    std::fs::write(
        plugin.join(".claude-plugin/plugin.json"),
        json!({ "name": "e2e-plugin", "version": "1.0.0", "description": "E2E plugin" }).to_string(),
    )
    .unwrap();
    write_definition(&plugin.join("skills/hello/SKILL.md"), "hello", "E2E plugin skill that says hello.");
    write_definition(&plugin.join("agents/helper.md"), "helper", "E2E plugin agent that helps.");
    let add = app.bench.run(&["plugin", "marketplace", "add", &market.to_string_lossy()], None, LIMIT);
    assert!(add.success(), "marketplace add: {add:?}");
    let install = app.bench.run(&["plugin", "install", "e2e-plugin@e2e-market"], None, LIMIT);
    assert!(install.success(), "plugin install: {install:?}");
}

/// Scenario 4: no hook fires inside the fork, and no second save follows it.
#[test]
fn s4_no_hook_inside_the_fork() {
    let Some((_g, standin, app)) = app_adding(BULLET) else {
        return;
    };
    app.add_logging_hook();
    let sid = tool_turn(&app, "TOOL parent turn");
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    // Time for a save the fork might have triggered to show up.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(forks(&standin).len(), 1, "exactly one fork");
    let log = app.hook_log();
    let events: Vec<String> = log.iter().map(|h| h["hook_event_name"].as_str().unwrap_or("?").to_string()).collect();
    assert!(events.contains(&"Stop".to_string()), "logging hook works: {events:?}");
    for h in &log {
        assert_eq!(h["session_id"], sid.as_str(), "a hook fired outside the parent session: {h}");
    }
    assert_eq!(app.session_ids(), vec![sid.clone()], "our hooks ran for another session");
    let state = app.session_state(&sid);
    assert_eq!(state.saves(), 1, "{state}");
    assert_eq!(app.saves().len(), 1, "a second save followed the fork");
    report("4 fork hooks", "hook runs in parent / in fork", format!("{} / 0", log.len()));
}

/// Scenario 5: the fork answers with a Bash call while the user's settings
/// pre-approve Bash: nothing runs, MEMORY.md stays, the status says why.
#[test]
fn s5_fork_is_tool_less() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fork_file = dir.path().join("fork-ran");
    let parent_file = dir.path().join("parent-ran");
    let (ff, pf) = (fork_file.clone(), parent_file.clone());
    let standin = StandIn::start(move |req| {
        if is_fork(req) {
            Reply::bash(&format!("touch '{}'", ff.display()))
        } else if req.has_tool_result() {
            Reply::text("parent done")
        } else {
            Reply::bash(&format!("touch '{}'", pf.display()))
        }
    });
    let app = App::new(claude, &standin);
    app.merge_settings(json!({ "permissions": { "allow": ["Bash"] } }));
    let memory = format!(
        "# app\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n{BULLET}\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n"
    );
    app.write_memory(&memory);
    // No --allowedTools: the settings' allow rule lets the parent's Bash run.
    let sid = app::session_of(&app.bench.print("parent turn", &[], LIMIT));
    assert!(parent_file.exists(), "the allow rule did not apply to the parent");
    let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
    std::thread::sleep(Duration::from_secs(1));
    assert!(!fork_file.exists(), "the fork ran a tool");
    assert_eq!(app.memory().as_deref(), Some(memory.as_str()), "MEMORY.md changed");
    let status = state.status().to_string();
    assert!(status.contains("fork called a tool"), "status: {status:?}");
    let fork = forks(&standin);
    assert_eq!(fork.len(), 1, "the fork sent a follow-up after its tool call");
    report("5 tool-less fork", "status", &status);
}

/// Scenario 6: a turn whose only tool calls (besides launching it) are a
/// background subagent's, then the `<task-notification>` turn: one save,
/// none for the notification.
#[test]
fn s6_task_notification_turn_is_not_saved() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = StandIn::start(|req| {
        let first = req.first_user_text();
        if is_fork(req) {
            Reply::text(add_op(BULLET))
        } else if first.contains("SUBAGENT-TASK") {
            // The subagent's own requests.
            if req.has_tool_result() { Reply::text("Done with the tool.") } else { Reply::bash("echo sub") }
        } else if req.last_user_text().contains("<task-notification>") {
            Reply::text("The agent finished.")
        } else if req.has_tool_result() {
            Reply::text("Started the agent; waiting for it.")
        } else {
            Reply::ToolUse {
                name: "Agent".into(),
                input: json!({ "description": "sub work", "prompt": "SUBAGENT-TASK run echo sub",
                               "subagent_type": "general-purpose", "run_in_background": true }),
            }
        }
    });
    let app = App::new(claude, &standin);
    app.add_logging_hook();
    let run = app.bench.print("delegate this please", &["--allowedTools", "Bash"], LIMIT);
    let sid = app::session_of(&run);
    let log = app.hook_log();
    let prompts: Vec<String> = log
        .iter()
        .filter(|h| h["hook_event_name"] == "UserPromptSubmit")
        .map(|h| h["prompt"].as_str().unwrap_or("").chars().take(40).collect())
        .collect();
    let sub_tools = log.iter().filter(|h| h["hook_event_name"] == "PostToolUse" && h["agent_id"].is_string()).count();
    let stops = log.iter().filter(|h| h["hook_event_name"] == "Stop").count();
    eprintln!("s6: prompts={prompts:?} subagent tool calls={sub_tools} stops={stops}");
    assert!(sub_tools >= 1, "the subagent's Bash call did not run: {log:?}");
    assert!(prompts.iter().any(|p| p.starts_with("<task-notification>")), "no task-notification turn: {prompts:?}");
    // A subagent that finishes before the delegating turn ends: Claude Code
    // goes on to the notification with no Stop for that turn (its SubagentStop
    // and the notification's prompt come first; about one run in twenty).
    // Either way, one save.
    assert!((1..=2).contains(&stops), "expected the notification turn's Stop, and the delegating turn's unless merged");
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    std::thread::sleep(Duration::from_secs(3));
    let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
    assert_eq!(state.saves(), 1, "an extra save ran for the notification turn: {state}");
    assert_eq!(app.saves().len(), 1);
    report("6 task notification", "saves for 2 turns", 1);
}

/// Scenario 26: a `claude -p` run is one session, and its end would start a
/// fork each time: at the defaults one that made a single tool call starts
/// none (`unattended_min_tools`, 10), and one of ten tool calls is saved.
#[test]
fn s26_a_short_print_run_starts_no_fork_at_the_defaults() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    // TOOLS-N: the parent makes N Bash calls, one per request, then answers.
    let standin = StandIn::start(|req| {
        if is_fork(req) {
            return Reply::text(add_op(BULLET));
        }
        let first = req.first_user_text();
        let wanted: usize =
            first.split("TOOLS-").nth(1).and_then(|n| n.split_whitespace().next()?.parse().ok()).unwrap_or(0);
        let done = req.tool_result_count();
        if done < wanted { Reply::bash(&format!("echo call-{done}")) } else { Reply::text("parent done") }
    });
    let app = App::new(claude, &standin);
    app.config("unattended_min_tools = 10\n");
    let run = app.bench.print("TOOLS-1 please", &["--allowedTools", "Bash"], LIMIT);
    let short = app::session_of(&run);
    std::thread::sleep(Duration::from_secs(5));
    assert_eq!(forks(&standin).len(), 0, "a one-call -p run started a fork");
    assert_eq!(app.session_state(&short).saves(), 0);
    let run = app.bench.print("TOOLS-10 please", &["--allowedTools", "Bash"], LIMIT);
    let long = app::session_of(&run);
    app.wait_saved(&long, 1, SAVE_LIMIT);
    assert_eq!(forks(&standin).len(), 1, "the ten-call run's end is saved once");
    report("26 print runs at the defaults", "forks for a 1-call and a 10-call run", 1);
}

/// Scenario 7: an interrupted turn (Esc during a slow reply) is saved at the
/// next prompt, and at session end when the session ends right after it.
#[test]
fn s7_interrupted_turn_is_saved() {
    let (Some((claude, _g)), Some(())) = (claude_alone(), harness::tmux()) else {
        return;
    };
    // The second turn's answer is held until a fork has arrived (at most
    // 30 s): a save started by the prompt gets in before that turn's Stop;
    // a save started only by Stop would come after it.
    let fork_seen = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = fork_seen.clone();
    let standin = StandIn::start(move |req| {
        use std::sync::atomic::Ordering;
        let last = req.last_user_text();
        if is_fork(req) {
            seen.store(true, Ordering::SeqCst);
            Reply::text(NO_EDITS)
        } else if last.contains("SLOW") {
            Reply::text("too late").after(Duration::from_secs(40))
        } else if last.contains("WAIT") {
            let start = Instant::now();
            while !seen.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(50));
            }
            Reply::text("second answer").after(Duration::from_millis(500))
        } else {
            Reply::text("ok")
        }
    });
    let app = App::new(claude, &standin);
    app.add_logging_hook();

    // (a) Esc, then the next prompt.
    let (tmux, sid) = start_interactive(&app);
    interrupt(&tmux, &standin, "SLOW-ONE first prompt");
    let sent = Instant::now();
    tmux.send_line("WAIT second prompt");
    let fork = wait_for(Duration::from_secs(60), "a fork after the next prompt", || forks(&standin).into_iter().next());
    let stop_seen = app.hook_log().iter().any(|h| h["hook_event_name"] == "Stop");
    assert!(!stop_seen, "the fork came only after a Stop; the save should start at the prompt");
    assert!(fork.all_message_text().contains("SLOW-ONE"), "the fork does not see the interrupted turn");
    report(
        "7 interrupted turn",
        "fork started after next prompt (s)",
        format!("{:.1}", fork.at.duration_since(sent).as_secs_f64()),
    );
    // The second turn ends (Stop, its own save), then the session exits.
    wait_for(LIMIT, "the second turn's Stop", || {
        app.hook_log().iter().any(|h| h["hook_event_name"] == "Stop").then_some(())
    });
    app.wait_saved(&sid, 2, SAVE_LIMIT);
    tmux.send_line("/exit");
    wait_for(Duration::from_secs(30), "SessionEnd", || {
        app.hook_log().iter().any(|h| h["hook_event_name"] == "SessionEnd").then_some(())
    });
    std::thread::sleep(Duration::from_secs(1));
    let state = app.wait_saved(&sid, 2, SAVE_LIMIT);
    assert_eq!(state.saves(), 2, "interrupted turn + second turn: {state}");
    drop(tmux);

    // (b) Esc, then /exit at once.
    let n_starts = app.hook_log().iter().filter(|h| h["hook_event_name"] == "SessionStart").count();
    let forks_before = forks(&standin).len();
    let tmux = app::Tmux::start(&app.bench, &[]);
    let sid2 = wait_for(LIMIT, "second SessionStart", || {
        app.hook_log()
            .iter()
            .filter(|h| h["hook_event_name"] == "SessionStart")
            .nth(n_starts)
            .map(|h| h["session_id"].as_str().unwrap().to_string())
    });
    interrupt(&tmux, &standin, "SLOW-TWO interrupted then exit");
    tmux.send_line("/exit");
    wait_for(Duration::from_secs(30), "SessionEnd", || {
        app.hook_log()
            .iter()
            .any(|h| h["hook_event_name"] == "SessionEnd" && h["session_id"] == sid2.as_str())
            .then_some(())
    });
    let state = app.wait_saved(&sid2, 1, SAVE_LIMIT);
    std::thread::sleep(Duration::from_secs(2));
    let fork = forks(&standin);
    assert_eq!(fork.len(), forks_before + 1, "one save at session end");
    assert!(fork.last().unwrap().all_message_text().contains("SLOW-TWO"));
    assert_eq!(state.saves(), 1, "{state}");
    report("7 interrupted turn", "saved at session end", state.status());
}

/// Scenario 8: after /clear and /compact the memory block arrives again in
/// the new context. The file is changed before each, so only a fresh load
/// can carry the new line.
#[test]
fn s8_clear_and_compact_reload_the_memory() {
    let (Some((claude, _g)), Some(())) = (claude_alone(), harness::tmux()) else {
        return;
    };
    let standin = quiet_standin();
    let app = App::new(claude, &standin);
    app.add_logging_hook();
    let base = "# app\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n- FACT-START\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n";
    app.write_memory(base);
    let (tmux, sid) = start_interactive(&app);
    std::thread::sleep(Duration::from_secs(2));
    let request_with = |text: &str| {
        let text = text.to_string();
        wait_for(LIMIT, &format!("a request with {text}"), || {
            standin.message_requests().into_iter().find(|r| !is_fork(r) && r.last_user_text().contains(&text))
        })
    };
    tmux.send_line("hello one");
    let parent = request_with("hello one");
    assert!(parent.all_message_text().contains("FACT-START"));
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    let fork = forks(&standin).into_iter().next().expect("a fork of the interactive session");
    let (raw, without_header) = app::interactive_shares(&parent, &fork);
    report(
        "8 interactive parent",
        "cacheable share raw / without billing header",
        format!("{raw:.4} / {without_header:.4}"),
    );

    app.write_memory(&base.replace("- FACT-START", "- FACT-START\n- FACT-AFTER-CLEAR"));
    tmux.send_line("/clear");
    let sid2 = wait_for(LIMIT, "SessionStart clear", || {
        app.hook_log()
            .iter()
            .find(|h| h["hook_event_name"] == "SessionStart" && h["source"] == "clear")
            .map(|h| h["session_id"].as_str().unwrap().to_string())
    });
    std::thread::sleep(Duration::from_secs(1));
    tmux.send_line("hello two");
    let after_clear = request_with("hello two").all_message_text();
    assert!(!after_clear.contains("hello one"), "/clear did not clear");
    assert!(after_clear.contains("FACT-AFTER-CLEAR"), "no memory block after /clear");
    report("8 /clear", "memory block in new context", "yes");
    app.wait_saved(&sid2, 1, SAVE_LIMIT);

    app.write_memory(&base.replace("- FACT-START", "- FACT-START\n- FACT-AFTER-COMPACT"));
    let n_req = standin.message_requests().len();
    tmux.send_line("/compact");
    wait_for(LIMIT, "SessionStart compact", || {
        app.hook_log().iter().any(|h| h["hook_event_name"] == "SessionStart" && h["source"] == "compact").then_some(())
    });
    let compact_reqs = standin.message_requests().len() - n_req;
    std::thread::sleep(Duration::from_secs(1));
    tmux.send_line("hello three");
    let after_compact = request_with("hello three").all_message_text();
    assert!(after_compact.contains("FACT-AFTER-COMPACT"), "no memory block after /compact: {}", tmux.screen());
    report("8 /compact", "memory block in new context", format!("yes ({compact_reqs} compaction request(s))"));
}

/// Scenario 9: two sessions of one project save at the same time; every
/// bullet both forks added is in the file.
#[test]
fn s9_concurrent_saves_keep_both_bullets() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = StandIn::start(script(|req| {
        let who = if req.all_message_text().contains("SESSION-A") { "A" } else { "B" };
        // Slow replies, so both forks are in flight together.
        Reply::text(add_op(&format!("- E2E-FACT-{who}: learned in session {who}"))).after(Duration::from_secs(4))
    }));
    let app = App::new(claude, &standin);
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| tool_turn(&app, "TOOL SESSION-A work"));
        let b = s.spawn(|| tool_turn(&app, "TOOL SESSION-B work"));
        (a.join().unwrap(), b.join().unwrap())
    });
    let sa = app.wait_saved(&a, 1, SAVE_LIMIT);
    let sb = app.wait_saved(&b, 1, SAVE_LIMIT);
    let f = forks(&standin);
    assert_eq!(f.len(), 2);
    // Overlap: the second fork request arrived before the first one's reply
    // (4 s later) could have been applied.
    let gap = if f[1].at > f[0].at { f[1].at - f[0].at } else { f[0].at - f[1].at };
    let memory = app.memory().unwrap();
    for who in ["A", "B"] {
        assert!(
            memory.contains(&format!("- E2E-FACT-{who}: learned in session {who}")),
            "bullet {who} lost:\n{memory}"
        );
    }
    report("9 concurrent saves", "fork start gap (s)", format!("{:.2}", gap.as_secs_f64()));
    report("9 concurrent saves", "statuses", format!("{} / {}", sa.status(), sb.status()));
}

/// Scenario 10: what the hooks cost as Claude Code measures it
/// (`stop_hook_summary` in the transcript): the Stop hook under 100 ms.
#[test]
fn s10_stop_hook_cost() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = StandIn::start(script(|_| Reply::text(NO_EDITS)));
    let app = App::new(claude, &standin);
    let sid = tool_turn(&app, "TOOL first turn");
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    for (i, prompt) in ["TOOL second turn", "third turn"].iter().enumerate() {
        let run = app.bench.print(prompt, &["--allowedTools", "Bash", "--resume", &sid], LIMIT);
        assert_eq!(app::session_of(&run), sid);
        app.wait_saved(&sid, i as u64 + 2, SAVE_LIMIT);
    }
    let durations = app.stop_hook_durations(&sid);
    let ours: Vec<f64> = durations
        .iter()
        .filter(|(c, _)| c.contains("memory-save") && c.contains("hook stop"))
        .map(|(_, d)| *d)
        .collect();
    assert_eq!(ours.len(), 3, "one Stop hook run per turn: {durations:?}");
    report(
        "10 Stop hook",
        "durationMs per turn",
        ours.iter().map(|d| format!("{d:.0}")).collect::<Vec<_>>().join(", "),
    );
    for d in &ours {
        assert!(*d < 100.0, "Stop hook took {d} ms: {durations:?}");
    }
}

/// Issue 4, item 8: the repository as a plugin marketplace. The real CLI
/// adds it from the local folder and installs the plugin, offline; the
/// plugin's hooks then run our binary (found on PATH, where cargo install
/// puts it): a turn is saved, and the next session gets the memory block.
#[test]
fn s11_plugin_install_runs_our_hooks() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = StandIn::start(script(|_| Reply::text(add_op(BULLET))));
    let bench = app::bench_with_claude_on_path(claude, &standin);
    std::os::unix::fs::symlink(app::BIN, bench.home().join("bin/memory-save")).unwrap();
    let repo = env!("CARGO_MANIFEST_DIR");
    let add = bench.run(&["plugin", "marketplace", "add", repo], None, LIMIT);
    assert!(add.success(), "marketplace add: {add:?}");
    let install = bench.run(&["plugin", "install", "memory-save@memory-save"], None, LIMIT);
    assert!(install.success(), "plugin install: {install:?}");
    let app = App { bench };
    app.config("");
    let settings = app.settings();
    assert_eq!(settings["enabledPlugins"]["memory-save@memory-save"], true, "{settings}");
    assert!(settings.get("hooks").is_none(), "the plugin, not settings, registers the hooks: {settings}");

    let sid = tool_turn(&app, "TOOL plugin session");
    let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
    assert_eq!(state.status(), "+1", "{state}");
    assert!(app.memory().expect("MEMORY.md written").contains(BULLET));

    let before = standin.message_requests().len();
    app::session_of(&app.bench.print("second plugin session", &[], LIMIT));
    let text = standin.message_requests()[before].all_message_text();
    assert!(text.contains("[PROJECT MEMORY: app]") && text.contains(BULLET), "no memory block: {text}");
    report("11 plugin install", "saved status / memory block next session", "+1 / yes");
}

/// Scenario 11b: `claude plugin validate` passes on the repository (the
/// marketplace) and on `plugin/`, with no warning of any kind.
#[test]
fn s11b_the_plugin_validates_without_warnings() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = quiet_standin();
    let bench = harness::Bench::new(claude, standin.base_url());
    let repo = env!("CARGO_MANIFEST_DIR");
    for dir in [repo.to_string(), format!("{repo}/plugin")] {
        let run = bench.run(&["plugin", "validate", &dir], None, LIMIT);
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(run.success() && all.contains("Validation passed"), "{dir}: {all}");
        assert!(!all.contains('\u{26a0}') && !all.to_lowercase().contains("warning"), "{dir}: {all}");
    }
    report("11b plugin validate", "repository and plugin/", "passed, no warnings");
}
