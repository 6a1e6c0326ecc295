//! Scenario 25: a CRITICAL RULE with a guard stops its command before it
//! runs, on the real CLI: `-p` with `ask` (no one can answer) and with
//! `deny`, and an interactive session's question, as measured facts.

use serde_json::{Value, json};

use crate::app::{self, App, report, wait_for};
use crate::scenarios::{LIMIT, SAVE_LIMIT, claude_alone, script, tool_turn};
use crate::standin::{RecordedRequest, Reply, StandIn};

const RULE: &str = "- Never create the marker file guarded-ran: it resets the shared fixtures.";

/// The parent answers GUARDED with the guarded command, FREE with another,
/// then reports the tool result it got; every fork adds the guarded rule.
fn standin() -> StandIn {
    let rule = json!({"ops": [{"op": "add", "section": "CRITICAL RULES", "text": RULE,
        "guard": {"tool": "Bash", "match": r"touch\s+guarded-ran"}}], "topics": []})
    .to_string();
    StandIn::start(move |req: &RecordedRequest| {
        if app::is_fork(req) {
            return Reply::text(rule.clone());
        }
        if req.has_tool_result() {
            return Reply::text("parent done");
        }
        match req.last_user_text() {
            t if t.contains("GUARDED") => Reply::bash("touch guarded-ran"),
            t if t.contains("FREE") => Reply::bash("touch free-ran"),
            _ => script(|_| Reply::text("{}"))(req),
        }
    })
}

/// The tool result the CLI sent back after the guarded call.
fn tool_result_after(standin: &StandIn, marker: &str) -> String {
    let requests = standin.message_requests();
    let asked = requests.iter().position(|r| !app::is_fork(r) && r.last_user_text().contains(marker)).unwrap();
    requests[asked + 1..].iter().find(|r| r.has_tool_result()).map(|r| r.last_user_text()).unwrap_or_default()
}

fn guards(app: &App, args: &[&str]) -> Value {
    let out = app.ours(&[&["guards"][..], args].concat());
    assert!(out.status.success(), "guards {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

#[test]
fn s25_a_guarded_rule_stops_its_command_before_it_runs() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = standin();
    let app = App::new(claude, &standin);
    let sid = tool_turn(&app, "TOOL first session");
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    assert!(app.memory().unwrap().contains(RULE));
    let listed = guards(&app, &["--json"]);
    assert_eq!(listed[0]["standing"], "binds", "{listed}");

    let project = app.bench.project.clone();
    app.add_logging_hook();
    // -p, ask: no one can answer, so the call does not run.
    let run = app.bench.print("GUARDED please", &["--allowedTools", "Bash"], LIMIT);
    assert!(run.success(), "{run:?}");
    assert!(!project.join("guarded-ran").exists(), "the guarded command ran under -p with ask");
    let told = tool_result_after(&standin, "GUARDED please");
    report("25 guard", "-p, ask: the model is told", &told);
    // The payload the guard read: the shape the CLI tests use.
    let payload =
        app.hook_log().into_iter().find(|h| h["hook_event_name"] == "PreToolUse").expect("a PreToolUse payload");
    assert_eq!(
        (&payload["tool_name"], &payload["tool_input"]["command"]),
        (&json!("Bash"), &json!("touch guarded-ran"))
    );
    assert!(payload["tool_use_id"].is_string() && payload["session_id"].is_string(), "{payload}");
    report("25 guard", "PreToolUse payload", &payload);
    assert!(told.contains("CRITICAL RULE: Never create the marker file guarded-ran"), "{told}");
    // An unguarded command runs.
    let run = app.bench.print("FREE please", &["--allowedTools", "Bash"], LIMIT);
    assert!(run.success() && project.join("free-ran").exists(), "{run:?}");
    // -p, deny.
    let id = listed[0]["id"].as_str().unwrap().to_string();
    guards(&app, &["--deny", &id]);
    let run = app.bench.print("GUARDED again", &["--allowedTools", "Bash"], LIMIT);
    assert!(run.success(), "{run:?}");
    assert!(!project.join("guarded-ran").exists(), "the guarded command ran under -p with deny");
    let told = tool_result_after(&standin, "GUARDED again");
    report("25 guard", "-p, deny: the model is told", &told);
    assert!(told.contains("CRITICAL RULE: Never create the marker file guarded-ran"), "{told}");
    let listed = guards(&app, &["--json"]);
    assert_eq!(listed[0]["fired"], 2, "{listed}");

    // Interactive, ask: the user sees the question with the rule.
    guards(&app, &["--ask", &id]);
    let starts = || app.hook_log().iter().filter(|h| h["hook_event_name"] == "SessionStart").count();
    let before = starts();
    let tmux = app::Tmux::start(&app.bench, &["--allowedTools", "Bash"]);
    wait_for(LIMIT, "the session's start", || (starts() > before).then_some(()));
    tmux.send_line("GUARDED interactive");
    let screen = wait_for(LIMIT, "the question", || {
        let screen = tmux.screen();
        screen.contains("CRITICAL RULE: ").then_some(screen)
    });
    report("25 guard", "interactive, ask: the user sees", screen.trim());
    assert!(screen.contains("Do you want to proceed?"), "{screen}");
    assert!(!project.join("guarded-ran").exists(), "the command ran before the user answered");
    // The user says yes: the command runs, and the guard counts it as let through.
    // Yes is the selected answer; a key sent while the dialog still draws
    // is lost, so it is sent again until the command has run.
    let mut polls = 0;
    wait_for(LIMIT, "the command the user let run", || {
        if polls % 30 == 0 && tmux.screen().contains("Do you want to proceed?") {
            tmux.key("Enter");
        }
        polls += 1;
        project.join("guarded-ran").exists().then_some(())
    });
    let listed = wait_for(LIMIT, "the override counted", || {
        let listed = guards(&app, &["--json"]);
        (listed[0]["overridden"] == 1).then_some(listed)
    });
    assert_eq!(listed[0]["fired"], 3, "{listed}");
    // Interactive, deny: no question; the call is refused where the user sees it.
    std::fs::remove_file(project.join("guarded-ran")).unwrap();
    guards(&app, &["--deny", &id]);
    wait_for(LIMIT, "the turn's end", || tmux.screen().contains("parent done").then_some(()));
    tmux.send_line("GUARDED refused");
    let screen = wait_for(LIMIT, "the refusal", || {
        let screen = tmux.screen();
        let after = screen.split("GUARDED refused").nth(1).unwrap_or_default().to_string();
        after.contains("CRITICAL RULE").then_some(after)
    });
    report("25 guard", "interactive, deny: the user sees", screen.trim());
    assert!(!screen.contains("Do you want to proceed?"), "{screen}");
    assert!(!project.join("guarded-ran").exists());
}
