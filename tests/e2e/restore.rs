//! context-restore on the real CLI: a skill or command changed
//! on disk 0.5 s before its call reaches the model with its current text
//! (s23: the Skill tool, a plugin's skill, an unchanged skill; s24: a typed
//! /command with $ARGUMENTS, and a rules file, the engine's own case).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::app::{App, is_fork, report};
use crate::scenarios::*;
use crate::standin::{RecordedRequest, Reply, StandIn};

/// How many tool results a request's messages hold.
fn tool_results(req: &RecordedRequest) -> usize {
    req.messages()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter(|b| b["type"] == "tool_result")
        .count()
}

/// The skill's folder, from the engine's own block in the request.
fn skill_folder(req: &RecordedRequest) -> Option<PathBuf> {
    let text = req.all_message_text();
    let line = text.lines().find_map(|l| l.strip_prefix("Base directory for this skill: "))?;
    Some(PathBuf::from(line.trim()))
}

fn scripted(skill: &'static str, new_text: Option<&'static str>) -> (StandIn, Arc<Mutex<Option<RecordedRequest>>>) {
    let after_second: Arc<Mutex<Option<RecordedRequest>>> = Arc::new(Mutex::new(None));
    let seen = after_second.clone();
    let standin = StandIn::start(move |req| {
        if is_fork(req) {
            return Reply::text(NO_EDITS);
        }
        let call = || Reply::ToolUse { name: "Skill".into(), input: serde_json::json!({"skill": skill}) };
        match tool_results(req) {
            0 => call(),
            1 => {
                if let (Some(text), Some(dir)) = (new_text, skill_folder(req)) {
                    std::fs::write(dir.join("SKILL.md"), text).unwrap();
                    return call().after(Duration::from_millis(500));
                }
                call()
            }
            _ => {
                seen.lock().unwrap().get_or_insert_with(|| req.clone());
                Reply::text("done")
            }
        }
    });
    (standin, after_second)
}

/// Scenario 23: the Skill tool 0.5 s after its file changed; a plugin's
/// skill the same way; an unchanged skill, which gets nothing.
#[test]
fn s23_a_skill_changed_half_a_second_before_its_call_gets_its_current_text() {
    let Some((claude, _g)) = claude_alone() else { return };
    for (case, skill, new_text) in [
        ("project skill", "greet", Some("---\nname: greet\ndescription: Greets.\n---\nSay GREET-V2 to the user.\n")),
        (
            "plugin skill",
            "e2e-plugin:hello",
            Some("---\nname: hello\ndescription: E2E plugin skill that says hello.\n---\nSay PLUGIN-HELLO-V2.\n"),
        ),
        ("unchanged skill", "greet", None),
    ] {
        let (standin, after_second) = scripted(skill, new_text);
        let app = App::new(claude.clone(), &standin);
        let dir = app.bench.project.join(".claude/skills/greet");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("SKILL.md"),
            "---\nname: greet\ndescription: Greets.\n---\nSay GREET-V1 to the user.\n",
        )
        .unwrap();
        if skill.contains(':') {
            install_plugin(&app);
        }
        let run = app.bench.print("RESTORE: use the skill", &[], LIMIT);
        assert!(run.success(), "{case}: {run:?}");
        let req =
            after_second.lock().unwrap().clone().unwrap_or_else(|| panic!("{case}: no request after the second call"));
        let text = req.all_message_text();
        match new_text {
            Some(new) => {
                let wanted = new.lines().last().unwrap();
                assert!(text.contains("[context-restore]") && text.contains(wanted), "{case}: {text}");
                report(
                    "23 context-restore",
                    &format!("{case}: the call 0.5 s after the change got the current text"),
                    "yes",
                );
            }
            None => assert!(!text.contains("[context-restore]"), "{case}: {text}"),
        }
    }
}

/// A typed /command's turn: its request carries the expanded text, not
/// the line typed.
fn typed_turn(tmux: &crate::app::Tmux, standin: &StandIn, app: &App, sid: &str, line: &str, marker: &str) {
    tmux.send_line(line);
    crate::app::wait_for(LIMIT, &format!("a request with {marker}"), || {
        standin.message_requests().into_iter().find(|r| !is_fork(r) && r.all_message_text().contains(marker))
    });
    crate::app::wait_for(LIMIT, "the turn's Stop", || (!app.session_state(sid).answering()).then_some(()));
}

/// Scenario 24, interactive: a typed /command with $ARGUMENTS, its file
/// changed 0.5 s before it is typed the second time; and a rules file
/// changed between two prompts, which the engine hands itself (nothing of
/// ours is added).
#[test]
fn s24_a_typed_command_changed_half_a_second_before_gets_its_current_text() {
    let (Some((claude, _g)), Some(())) = (claude_alone(), crate::harness::tmux()) else { return };
    let standin = quiet_standin();
    let app = app_configured(claude, &standin, "");
    let commands = app.bench.project.join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(commands.join("hello.md"), "---\ndescription: Says hello\n---\nSay HELLO-V1 to $ARGUMENTS.\n")
        .unwrap();
    let rules = app.bench.project.join(".claude/rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("style.md"), "Write RULE-V1 style.\n").unwrap();
    let (tmux, sid) = start_interactive(&app);
    std::thread::sleep(Duration::from_secs(2));
    typed_turn(&tmux, &standin, &app, &sid, "/hello first-name", "first-name");
    std::fs::write(commands.join("hello.md"), "---\ndescription: Says hello\n---\nSay HELLO-V2 to $ARGUMENTS.\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    typed_turn(&tmux, &standin, &app, &sid, "/hello second-name", "second-name");
    let reqs: Vec<RecordedRequest> = standin.message_requests().into_iter().filter(|r| !is_fork(r)).collect();
    let second =
        reqs.iter().rev().find(|r| r.all_message_text().contains("second-name")).expect("the second call's request");
    let text = second.all_message_text();
    assert!(text.contains("[context-restore]") && text.contains("Say HELLO-V2 to $ARGUMENTS."), "{text}");
    assert!(text.contains("The arguments given above still hold"), "{text}");
    report("24 context-restore", "typed /command 0.5 s after the change got the current text", "yes");
    // A rules file: the engine's own case.
    std::fs::write(rules.join("style.md"), "Write RULE-V2 style.\n").unwrap();
    std::thread::sleep(Duration::from_secs(4));
    interactive_turn(&tmux, &standin, &app, &sid, "after the rules changed");
    let reqs: Vec<RecordedRequest> = standin.message_requests().into_iter().filter(|r| !is_fork(r)).collect();
    let last = reqs.iter().rev().find(|r| r.all_message_text().contains("after the rules changed")).unwrap();
    let text = last.all_message_text();
    let tail: String = text.chars().rev().take(4000).collect::<Vec<_>>().into_iter().rev().collect();
    assert!(text.contains("RULE-V2"), "the engine hands a changed rules file itself: {tail}");
    tmux.send_line("/exit");
}
