//! One save per session at a time, one more for turns that end meanwhile
//! (docs/design.md §3), and saves of two sessions that overlap (docs/design.md §3).

use crate::support::*;

#[test]
fn turns_that_end_during_a_save_ask_for_exactly_one_more() {
    let env = Env::new();
    env.script_hold(1);
    env.script_reply(1, &adds("- From the first save."));

    env.turn(SID);
    env.call(1);
    env.turn(SID);
    env.turn(SID);
    env.release(1);
    env.wait_saves(SID, 2);

    assert_eq!(env.call_count(), 2);
    let second = env.call(2);
    assert!(second.stdin.contains("- From the first save."), "the second fork saw the old file:\n{}", second.stdin);
}

#[test]
fn overlapping_saves_of_two_sessions_keep_both_bullets() {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Already there."]));
    // Session A's fork is held until session B has saved.
    env.script_hold(1);
    env.script_reply(1, &adds("- From session A."));
    env.script_reply(2, &adds("- From session B."));

    env.turn(SID);
    assert_eq!(env.call(1).flag("--resume"), Some(SID));
    env.saved_turn(SID_OTHER, 1);
    assert_eq!(env.call(2).flag("--resume"), Some(SID_OTHER));
    assert_eq!(section_lines(&env.memory().unwrap(), ARCH), ["- Already there.", "- From session B."]);

    env.release(1);
    env.wait_saves(SID, 1);
    assert_eq!(
        section_lines(&env.memory().unwrap(), ARCH),
        ["- Already there.", "- From session B.", "- From session A."]
    );
    assert_eq!(env.status(SID), "+1");
    let report = env.state(SID).report().unwrap_or_default().to_string();
    assert!(report.contains("another writer"), "report: {report:?}");
}
