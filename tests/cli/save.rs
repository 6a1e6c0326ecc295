//! Applying the reply, the report line, and saves that fail (docs/design.md §5).

use serde_json::json;

use crate::support::*;

#[test]
fn the_reply_is_applied_and_reported_once() {
    let env = Env::new();
    let bullet = "- Tests run with `cargo test --test cli -j1`.";
    env.script_reply(
        1,
        &format!(
            "Here is the update:\n```json\n{}\n```",
            reply(
                json!([add(ARCH, bullet)]),
                json!([{"file": "history.md", "append": "## Session\n- Wrote the CLI tests."}])
            )
        ),
    );
    env.saved_turn(SID, 1);

    let memory = env.memory().expect("MEMORY.md written");
    assert!(memory.starts_with("# proj\n"), "{memory}");
    let headings: Vec<&str> = memory.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        ["## CRITICAL RULES", "## Architecture & Config Facts", "## Active Warnings", "## Topic Files"]
    );
    assert_eq!(section_lines(&memory, ARCH), [bullet]);
    assert_eq!(section_lines(&memory, "Topic Files"), ["- history.md"], "{memory}");
    let history = env.memory_file("history.md").expect("history.md written");
    assert!(history.contains("## Session\n- Wrote the CLI tests.\n"), "{history}");
    assert_eq!(env.status(SID), "+1 topic: history");

    // The next prompt shows the report, once.
    let out = env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    let message = out.json()["systemMessage"].as_str().unwrap_or_default().to_string();
    assert!(message.starts_with("memory-save: MEMORY.md: 1 added"), "{out:#?}");
    assert!(message.contains("appended to history.md"), "{message}");
    // This turn's Stop saves again (no change) and shows nothing.
    env.hook("stop").fixture("Stop.json").run().ok().assert_silent();
    env.wait_saves(SID, 2);
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok().assert_silent();
    assert_eq!(env.memory().unwrap(), memory, "a no-change save rewrote the file");
}

#[test]
fn the_second_save_sees_the_first_ones_bullet() {
    let env = Env::new();
    env.script_reply(1, &adds("- First fact."));
    env.script_reply(2, &adds("- Second fact."));
    env.saved_turn(SID, 1);
    env.saved_turn(SID, 2);

    assert!(env.call(2).stdin.contains("- First fact."));
    assert_eq!(section_lines(&env.memory().unwrap(), ARCH), ["- First fact.", "- Second fact."]);
}

/// Every failure leaves MEMORY.md as it was and says `error: …`.
fn assert_failed(env: &Env, before: &str, status_has: &str) {
    assert_eq!(env.memory().as_deref(), Some(before), "MEMORY.md changed");
    assert_eq!(env.memory_file("history.md"), None);
    let status = env.status(SID);
    assert!(status.starts_with("error: "), "status: {status:?}");
    assert!(status.contains(status_has), "status {status:?} lacks {status_has:?}");
    let report = env.state(SID).report().unwrap_or_default().to_string();
    assert!(report.starts_with("memory-save: MEMORY.md: "), "report: {report:?}");
}

#[test]
fn claude_missing() {
    let env = Env::new();
    let env = {
        let missing = env.root().join("no-such-claude");
        env.with_claude(&missing)
    };
    let before = template_with("proj", &["- Kept."]);
    env.write_memory(&before);
    env.saved_turn(SID, 1);
    assert_failed(&env, &before, "claude not found");
}

#[test]
fn fork_reports_is_error() {
    let env = Env::new();
    let before = template_with("proj", &["- Kept."]);
    env.write_memory(&before);
    env.script_is_error(1, "API Error: 529 overloaded");
    env.saved_turn(SID, 1);
    assert_failed(&env, &before, "API Error: 529 overloaded");
    let saves = std::fs::read_to_string(env.mem.join("state/memory-save/saves.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(saves.lines().last().unwrap()).unwrap();
    assert_eq!(record["usage"]["output_tokens"], 3, "usage of a failed fork is kept: {saves}");
}

#[test]
fn fork_exits_non_zero_without_output() {
    let env = Env::new();
    let before = template_with("proj", &["- Kept."]);
    env.write_memory(&before);
    env.script_no_output(1);
    env.script_exit(1, 3);
    env.saved_turn(SID, 1);
    assert_failed(&env, &before, "code 3");
}

#[test]
fn a_hanging_fork_is_killed_at_the_bound() {
    let env = Env::new().with_var("MEMORY_SAVE_FORK_TIMEOUT", "1");
    let before = template_with("proj", &["- Kept."]);
    env.write_memory(&before);
    env.script_sleep(1, 120);
    env.script_reply(1, &adds("- Too late."));
    let started = std::time::Instant::now();
    env.turn(SID);
    let call = env.call(1);
    env.wait_saves(SID, 1);
    assert!(started.elapsed().as_secs() < 10, "the save took {:?}", started.elapsed());
    assert_failed(&env, &before, "timed out");
    assert_eq!(env.state_files(), ["saves.jsonl"], "scratch files left behind");
    assert!(!process_alive(call.pid), "the fake claude still runs");
    let sleeper = call.sleep_pid.expect("the fake records its child's pid before it says it started");
    wait_until("the fork's own child to end", || !process_alive(sleeper));
}

#[test]
fn a_reply_without_json_is_kept_and_nothing_else_is_written() {
    let env = Env::new();
    let before = template_with("proj", &["- Kept."]);
    env.write_memory(&before);
    let text = "I have nothing to add to the memory this time.";
    env.script_reply(1, text);
    env.saved_turn(SID, 1);
    assert_failed(&env, &before, "no JSON object");
    assert_eq!(env.memory_file("memory-save.failed-reply.txt").as_deref(), Some(text));
    let mut files = env.memory_tree();
    files.sort();
    assert_eq!(files, ["proj", "proj/.identity", "proj/MEMORY.md", "proj/memory-save.failed-reply.txt"]);
}

#[test]
fn a_secret_in_an_unreadable_reply_is_not_kept() {
    let env = Env::new();
    let key = format!("sk-ant-api03-{}", "Ab3dEf9hIj".repeat(8));
    env.script_reply(1, &format!("I would add:\n- The key is {key}\nand more {{broken"));
    env.saved_turn(SID, 1);
    let kept = env.memory_file("memory-save.failed-reply.txt").expect("evidence kept");
    assert!(!kept.contains(&key), "{kept}");
    assert!(kept.contains("I would add:") && kept.contains("[not shown: it looks like it holds"), "{kept}");
}

/// Everything a project keeps on this machine is one record beside its
/// lock: a held rule, the notes of a skipped op, the check's cache, the
/// load's marks, this machine's rules.
#[test]
fn a_project_keeps_one_record_and_its_lock_in_the_state_folder() {
    let env = Env::new();
    env.config("review = \"rules\"\n");
    env.write_memory(&template_with("proj", &["- Build with `scripts/gone.sh`."]));
    env.script_reply(
        1,
        &reply(
            json!([
                add("CRITICAL RULES", "- Never push to main."),
                add(ARCH, "- Tests run with `cargo test`."),
                {"op": "remove", "line": "- A line it does not have."},
            ]),
            json!([]),
        ),
    );
    env.saved_turn(SID, 1);
    env.cmd(&["show", "--check"]).in_dir(&env.proj).run();
    env.hook("session-start").fixture("SessionStart-startup.json").session("s2").run().ok();
    let review = env.cmd(&["review"]).in_dir(&env.proj).run().ok().stdout;
    assert!(review.contains("Never push to main"), "the held rule is kept: {review}");
    let mut files: Vec<String> = std::fs::read_dir(env.mem.join("state/memory-save/projects"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    assert_eq!(files, ["proj.json"]);
}
