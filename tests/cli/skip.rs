//! Which turns are worth a save (docs/design.md §2): a person spoke, or a main-loop
//! tool ran; an interrupted turn is saved at the next prompt or at the end.

use crate::support::*;

#[test]
fn stop_alone_saves_nothing() {
    let env = Env::new();
    env.hook("stop").fixture("Stop.json").run().ok().assert_silent();
    env.assert_no_save(SID);
}

#[test]
fn a_task_notification_is_not_a_person() {
    let env = Env::new();
    env.hook("user-prompt-submit").fixture("UserPromptSubmit-task-notification.json").run().ok().assert_silent();
    env.hook("stop").fixture("Stop-with-background-task.json").run().ok().assert_silent();
    env.assert_no_save(SID_OTHER);
}

#[test]
fn a_subagents_tool_call_is_not_the_main_loops() {
    let env = Env::new();
    env.hook("post-tool-use").fixture("PostToolUse-subagent.json").run().ok().assert_silent();
    env.hook("stop").fixture("Stop.json").session(SID_OTHER).run().ok().assert_silent();
    env.assert_no_save(SID_OTHER);
}

#[test]
fn a_main_loop_tool_call_is_worth_a_save() {
    let env = Env::new();
    env.hook("post-tool-use").fixture("PostToolUse-main.json").run().ok().assert_silent();
    env.hook("post-tool-use").fixture("PostToolUse-main.json").run().ok().assert_silent();
    env.hook("stop").fixture("Stop.json").session(SID_OTHER).run().ok().assert_silent();
    env.wait_saves(SID_OTHER, 1);
    assert_eq!(env.call_count(), 1);
    assert_eq!(env.call(1).flag("--resume"), Some(SID_OTHER));
}

#[test]
fn a_saved_turn_is_not_saved_again() {
    let env = Env::new();
    env.saved_turn(SID, 1);
    env.hook("stop").fixture("Stop.json").run().ok().assert_silent();
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok().assert_silent();
    // A worker would flip one of these under the lock; none moved.
    let state = env.state(SID);
    assert_eq!(state.saves(), 1, "{state:#}");
    assert!(!state.pending(), "{state:#}");
    assert!(state.claimed_since().is_none(), "{state:#}");
    assert_eq!(env.call_count(), 1);
}

#[test]
fn an_interrupted_turn_is_saved_at_the_next_prompt() {
    let env = Env::new();
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    // Esc: no Stop. The next prompt finds the turn still open.
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    env.wait_saves(SID, 1);
    assert_eq!(env.call_count(), 1);
}

#[test]
fn an_interrupted_last_turn_is_saved_at_session_end() {
    let env = Env::new();
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").session(SID_OTHER).run().ok();
    // The fork is held until released: SessionEnd must spawn and return,
    // never wait for the save (its hooks share a 1.5 s budget).
    env.script_hold(1);
    let end = env.hook("session-end").fixture("SessionEnd-other.json").run().ok();
    end.assert_silent();
    let fork = env.call(1);
    assert!(process_alive(fork.pid), "SessionEnd returned only after the fork ended");
    env.release(1);
    env.wait_saves(SID_OTHER, 1);
    assert_eq!(env.call_count(), 1);
}

/// A `claude -p` run (Claude Code gives its hooks
/// `CLAUDE_CODE_SESSION_ATTENDED=0`) is one session: saved at its end only
/// when it made `unattended_min_tools` main-loop tool calls (10 by default),
/// so a script calling `claude -p` a hundred times starts no hundred forks.
#[test]
fn an_unattended_run_is_saved_only_after_enough_tool_calls() {
    let env = Env::new();
    env.config_exact("");
    let unattended = |event: &str, fixture: &str, session: &str| {
        env.hook(event).fixture(fixture).session(session).var("CLAUDE_CODE_SESSION_ATTENDED", "0").run().ok()
    };
    let run = |session: &str, tools: usize| {
        unattended("user-prompt-submit", "UserPromptSubmit.json", session);
        for _ in 0..tools {
            unattended("post-tool-use", "PostToolUse-main.json", session);
        }
        unattended("stop", "Stop.json", session);
        unattended("session-end", "SessionEnd-other.json", session);
    };
    run(SID, 9);
    std::thread::sleep(std::time::Duration::from_millis(300));
    env.assert_no_save(SID);
    run(SID_OTHER, 10);
    env.wait_saves(SID_OTHER, 1);
    assert_eq!(env.call_count(), 1);
    // Set to 0, every run is saved, also one that made no tool call.
    env.config_exact("unattended_min_tools = 0\n");
    run("33333333-3333-4333-8333-333333333333", 0);
    env.wait_saves("33333333-3333-4333-8333-333333333333", 1);
    // An interactive session's one turn is saved at its end as before.
    env.config_exact("");
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").session(SID).run().ok();
    env.hook("stop").fixture("Stop.json").session(SID).run().ok();
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 1);
}
