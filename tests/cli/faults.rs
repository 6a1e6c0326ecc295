//! Things that go wrong around a save: a worker
//! killed mid-save, state and lock files left corrupt or by a dead process,
//! every way the fork can fail, and a full disk.

use std::fs;
use std::time::Duration;

use serde_json::json;

use crate::support::*;

/// A tiny seeded generator (xorshift64): the same seed kills at the same
/// delays, and the seed is printed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// What a save that adds `bullet` under Architecture & Config Facts (and
/// appends to history.md, already listed) makes of `memory`.
fn with_bullet(memory: &str, bullet: &str) -> String {
    let mut lines: Vec<String> = memory.lines().map(str::to_string).collect();
    let start = lines.iter().position(|l| l == &format!("## {ARCH}")).unwrap();
    let end = start + 1 + lines[start + 1..].iter().position(|l| l.starts_with("## ")).unwrap();
    let last = (start + 1..end).rev().find(|&i| !lines[i].trim().is_empty()).unwrap();
    lines.insert(last + 1, bullet.to_string());
    lines.join("\n") + "\n"
}

fn with_append(history: Option<&str>, append: &str) -> String {
    match history {
        None => format!("{append}\n"),
        Some(old) => format!("{old}\n{append}\n"),
    }
}

/// The end of a long text, for a readable failure.
fn tail(text: &str) -> &str {
    &text[text.char_indices().rev().nth(200).map_or(0, |(i, _)| i)..]
}

fn statusline(env: &Env) -> String {
    env.cmd(&["statusline"]).fixture("statusLine.json").session(SID).run().ok().stdout
}

#[test]
fn a_worker_killed_at_random_points_leaves_old_or_new_files() {
    let kills = env_number("MEMORY_SAVE_CRASH_KILLS", 25);
    let seed = env_number("MEMORY_SAVE_CRASH_SEED", 0x9e37_79b9_7f4a_7c15);
    let mut rng = Rng(seed.max(1));
    let started = std::time::Instant::now();

    let env = Env::new();
    let listed = "## Topic Files\n- history.md\n";
    env.write_memory(&template_with("proj", &["- Base fact."]).replacen("## Topic Files\n- None yet.\n", listed, 1));
    // A large topic file makes its rewrite slow enough to be hit.
    let big: String = (0..20_000).map(|i| format!("- Old history line {i}.\n")).collect();
    fs::write(env.memory_dir("proj").join("history.md"), big).unwrap();
    let mut memory = env.memory().unwrap();
    let mut history = env.memory_file("history.md");
    let (mut call, mut saves) = (0, 0u64);
    // What each kill left: (MEMORY.md new, history.md new).
    let mut outcomes = std::collections::BTreeMap::<&str, u64>::new();

    for k in 1..=kills {
        // The save to kill.
        call += 1;
        let (bullet, append) = (format!("- Killed save {k}."), format!("## Killed save {k}\n- Event {k}."));
        env.script_hold(call);
        env.script_reply(call, &save_reply(&bullet, &append));
        env.turn(SID);
        let fork = env.call(call);
        // Mostly after the fork answered: the worker notices within its
        // 50 ms poll, then applies and writes.
        let during_fork = rng.next().is_multiple_of(8);
        let delay = Duration::from_micros(rng.next() % 60_000);
        if during_fork {
            kill(fork.ppid);
            env.release(call);
        } else {
            env.release(call);
            let done = env.fake_dir.join(format!("calls/{call}/done"));
            wait_until("the fork to answer", || done.exists());
            std::thread::sleep(delay);
            kill(fork.ppid);
        }
        wait_until("the killed worker to be gone", || !process_alive(fork.ppid));
        wait_until("the fork to end", || !process_alive(fork.pid));

        // Each file is the old version or the new one.
        let (new_memory, new_history) = (with_bullet(&memory, &bullet), with_append(history.as_deref(), &append));
        let now_memory = env.memory().unwrap();
        let now_history = env.memory_file("history.md");
        let memory_new = now_memory == new_memory;
        assert!(memory_new || now_memory == memory, "kill {k}: MEMORY.md is neither old nor new:\n{now_memory}");
        let history_new = now_history.as_deref() == Some(new_history.as_str());
        assert!(history_new || now_history == history, "kill {k}: history.md is neither old nor new");
        assert!(!memory_new || history_new, "kill {k}: MEMORY.md was written before its topic file");
        let state = env.state(SID);
        let finished = state.saves() > saves;
        let temp_left = files(&env).iter().any(|f| f.ends_with(".tmp"));
        let outcome = match (memory_new, history_new, finished) {
            (_, _, true) => "save finished",
            (false, _, false) if temp_left => "mid-write (temp file left)",
            (true, _, false) => "both written, state not",
            (false, true, false) => "topic written, MEMORY.md not",
            (false, false, false) if during_fork => "during the fork",
            (false, false, false) => "before the write",
        };
        *outcomes.entry(outcome).or_default() += 1;
        saves = state.saves();
        // A killed save is not "saving…" forever, and holds no lock.
        assert!(!statusline(&env).contains("saving"), "kill {k}: {}", statusline(&env));
        for lock in [
            env.sessions_dir().join(format!("{SID}.worker.lock")),
            env.sessions_dir().join(format!("{SID}.json")),
            env.mem.join("state/memory-save/projects/proj.json"),
        ] {
            assert!(lock_free(&lock), "kill {k}: {} is held", lock.display());
        }
        (memory, history) = (now_memory, now_history);

        // The next save works, from whatever the kill left.
        call += 1;
        let (bullet, append) = (format!("- Saved after kill {k}."), format!("## After kill {k}\n- Event after {k}."));
        env.script_reply(call, &save_reply(&bullet, &append));
        env.turn(SID);
        // A killed job is taken over by the next turn's hooks; that turn's
        // own request folds into it or runs after it (then with the
        // default, empty reply).
        let state = env.wait_idle(SID, saves + 1);
        let ran = state.saves() - saves;
        assert!(ran == 1 || ran == 2, "kill {k}: {ran} saves after the kill: {state:#}");
        saves += ran;
        call = env.call_count();
        let want_memory = with_bullet(&memory, &bullet);
        assert_eq!(
            env.memory().unwrap(),
            want_memory,
            "kill {k} ({outcome}, ran {ran}, calls {call}): the next save: {state:#}\nlog: {}",
            env.log()
        );
        let want_history = with_append(history.as_deref(), &append);
        let now_history = env.memory_file("history.md").unwrap_or_default();
        assert!(now_history == want_history, "kill {k}: after the next save history.md ends {:?}", tail(&now_history));
        let want_status = if ran == 1 { "+1 topic: history" } else { "no change" };
        assert_eq!(env.status(SID), want_status, "kill {k}");
        let temps: Vec<String> = files(&env).into_iter().filter(|f| f.ends_with(".tmp")).collect();
        assert!(temps.is_empty(), "kill {k}: temp files stay: {temps:?}");
        (memory, history) = (want_memory, Some(want_history));
    }
    println!("crash: {kills} kills (seed {seed:#x}): {outcomes:?}, {:.1}s", started.elapsed().as_secs_f64());
}

// ---- state and lock files ----

#[test]
fn corrupt_state_and_lock_files_are_recovered_from() {
    let env = Env::new();
    let sessions = env.sessions_dir();
    let projects = env.mem.join("state/memory-save/projects");
    fs::create_dir_all(&sessions).unwrap();
    fs::create_dir_all(&projects).unwrap();
    fs::write(sessions.join(format!("{SID}.json")), b"{\"saves\": 3, \"cut off").unwrap();
    // A lock file with content, as a crashed or foreign process may leave
    // it, and a folder's record, its lock too, that is not one.
    fs::write(sessions.join(format!("{SID}.worker.lock")), "12345\n").unwrap();
    fs::write(projects.join("proj.json"), "not json").unwrap();
    env.script_reply(1, &adds("- Saved despite the debris."));
    env.saved_turn(SID, 1);
    assert_eq!(section_lines(&env.memory().unwrap(), ARCH), ["- Saved despite the debris."]);
    assert_eq!(env.status(SID), "+1");
}

#[test]
fn a_save_left_by_a_dead_worker_is_not_shown_as_running_and_runs_again() {
    // A worker killed mid-save leaves its claim behind, and no process
    // holds its lock: nothing is saving, and the save is owed.
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Base fact."]));
    env.script_sleep_for(1, "5");
    env.turn(SID);
    let fork = env.call(1);
    kill(fork.ppid);
    wait_until("the killed worker to be gone", || !process_alive(fork.ppid));
    if let Some(pid) = fork.sleep_pid {
        kill(pid);
    }
    let session = env.state(SID);
    assert!(session.pending() && session.claimed_since().is_none(), "{session:?}");
    let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
    assert_eq!((status["saving"].clone(), status["queued"].clone()), (json!(0), json!(1)));
    assert!(!statusline(&env).contains("saving"));

    env.script_reply(2, &adds("- The owed save ran."));
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    env.wait_saves(SID, 1);
    assert_eq!(section_lines(&env.memory().unwrap(), ARCH), ["- Base fact.", "- The owed save ran."]);
}

/// An ended session's worker killed mid-save: its next hook never comes, so
/// its save is owed to the project's next start, which takes it over only
/// while the session's transcript is there. `status` counts it queued
/// exactly then.
#[test]
fn an_ended_sessions_dead_save_is_queued_only_while_a_start_can_take_it_over() {
    for keep_transcript in [true, false] {
        let env = Env::new();
        env.write_memory(&template_with("proj", &["- Base fact."]));
        env.copy_transcript_fixture();
        env.script_sleep_for(1, "5");
        env.turn(SID);
        let fork = env.call(1);
        env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
        kill(fork.ppid);
        wait_until("the killed worker to be gone", || !process_alive(fork.ppid));
        if let Some(pid) = fork.sleep_pid {
            kill(pid);
        }
        if !keep_transcript {
            fs::remove_file(env.transcript_path()).unwrap();
        }
        let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
        let queued = u64::from(keep_transcript);
        assert_eq!((status["saving"].clone(), status["queued"].clone()), (json!(0), json!(queued)), "{status:#}");
        assert_eq!(env.state(SID).pending(), keep_transcript);
        if keep_transcript {
            env.script_reply(2, &adds("- Taken over at the next start."));
            env.hook("session-start").fixture("SessionStart-startup.json").session(SID_OTHER).run().ok();
            env.wait_saves(SID, 1);
            assert_eq!(
                section_lines(&env.memory().unwrap(), ARCH),
                ["- Base fact.", "- Taken over at the next start."]
            );
        }
    }
}

// ---- the fork fails ----

/// The memory tree without the change history (`.history/`), which records
/// changes, not saves.
fn files(env: &Env) -> Vec<String> {
    env.memory_tree().into_iter().filter(|f| !f.starts_with("proj/.history")).collect()
}

/// A failed save as the user sees it: the status text, and the report line
/// that the next prompt shows. Nothing is written but the evidence.
fn assert_fork_failure(env: &Env, status: &str, report: &str, evidence: Option<&str>) {
    let before = env.memory().unwrap();
    let mut tree = files(env);
    if evidence.is_some() {
        // Writing the evidence records the folder's repository too.
        tree.extend(["proj/memory-save.failed-reply.txt".into(), "proj/.identity".into()]);
        tree.sort();
        tree.dedup();
    }
    env.saved_turn(SID, 1);
    assert_eq!(env.status(SID), status);
    assert_eq!(env.memory().unwrap(), before, "MEMORY.md changed");
    assert_eq!(files(env), tree, "files written");
    assert_eq!(env.memory_file("memory-save.failed-reply.txt").as_deref(), evidence);
    // The line is one row of at most 80 columns: a long status is cut.
    let line = statusline(env);
    let full = format!("memory-save: {status} · ");
    let shown = line.trim_end().trim_end_matches('…');
    assert!(line.starts_with(&full) || full.starts_with(shown), "{line:?}");
    assert!(line.trim_end().chars().count() <= 80, "{line:?}");
    let out = env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    assert_eq!(out.json(), json!({"systemMessage": report}));
}

fn failing_env() -> Env {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Kept."]));
    env
}

fn not_saved(why: &str) -> (String, String) {
    (format!("error: {why}"), format!("memory-save: MEMORY.md: not saved ({why})"))
}

#[test]
fn fork_failure_claude_not_found() {
    let env = failing_env();
    let missing = env.root().join("no-such-claude");
    let env = env.with_claude(&missing);
    let (status, report) = not_saved(&format!("claude not found at {}", missing.display()));
    assert_fork_failure(&env, &status, &report, None);
}

#[test]
fn fork_failure_claude_not_on_path() {
    let env = failing_env();
    let empty = env.folder("empty-bin");
    let env = env.with_var("MEMORY_SAVE_CLAUDE", "").with_var("PATH", empty.to_str().unwrap());
    let (status, report) = not_saved("claude not found on PATH (set MEMORY_SAVE_CLAUDE)");
    assert_fork_failure(&env, &status, &report, None);
}

#[test]
fn fork_failure_claude_not_executable() {
    let env = failing_env();
    let plain = env.root().join("claude-without-x");
    fs::write(&plain, "#!/bin/sh\necho '{}'\n").unwrap();
    let env = env.with_claude(&plain);
    let (status, report) = not_saved(&format!("cannot run {}: Permission denied (os error 13)", plain.display()));
    assert_fork_failure(&env, &status, &report, None);
}

#[test]
fn fork_failure_exits_non_zero() {
    let env = failing_env();
    env.script_no_output(1);
    env.script_stderr(1, "Starting…\nError: No conversation found with session ID\n");
    env.script_exit(1, 1);
    let (status, report) = not_saved("fork exited with code 1: Error: No conversation found with session ID");
    assert_fork_failure(&env, &status, &report, None);
}

#[test]
fn fork_failure_api_error() {
    let env = failing_env();
    env.script_is_error(1, "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}");
    let (status, report) =
        not_saved("fork failed: API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}");
    assert_fork_failure(&env, &status, &report, None);
}

#[test]
fn fork_failure_killed_at_the_time_bound() {
    let env = failing_env().with_var("MEMORY_SAVE_FORK_TIMEOUT", "1");
    env.script_sleep(1, 120);
    env.script_reply(1, &adds("- Too late."));
    let (status, report) = not_saved("fork timed out after 1s");
    assert_fork_failure(&env, &status, &report, None);
    assert!(!process_alive(env.call(1).pid), "the fork still runs");
}

#[test]
fn fork_failure_reply_cut_mid_json() {
    let env = failing_env();
    let cut = "{\"ops\": [{\"op\": \"add\", \"section\": \"Architecture & Config Facts\", \"text\": \"- A fact.\"}, {\"op\": \"add\", \"sec";
    env.script_reply(1, cut);
    let why = "reply is not valid JSON (EOF while parsing a list at line 1 column 85)";
    let status = format!("error: {why}");
    let report = format!(
        "memory-save: MEMORY.md: this turn's reply was not read ({why}); 3 output tokens, kept in memory-save.failed-reply.txt"
    );
    assert_fork_failure(&env, &status, &report, Some(cut));
}

#[test]
fn fork_failure_output_cut_mid_json() {
    // claude itself stopped mid-print: not its result object at all.
    let env = failing_env();
    let whole = result_json(&adds("- A fact."), false);
    env.script_raw_output(1, &whole[..whole.len() / 2]);
    let (status, report) = not_saved("fork output is not claude's JSON result");
    assert_fork_failure(&env, &status, &report, None);
}

#[test]
fn fork_failure_empty_reply() {
    let env = failing_env();
    env.script_reply(1, "");
    let (status, report) = not_saved("fork gave no text");
    assert_fork_failure(&env, &status, &report, None);
}

#[test]
fn fork_failure_no_output_at_all() {
    let env = failing_env();
    env.script_no_output(1);
    let (status, report) = not_saved("fork output is not claude's JSON result");
    assert_fork_failure(&env, &status, &report, None);
}

// ---- a full disk ----

/// The write of `file` fails halfway with ENOSPC (a test-only hook in debug
/// builds): nothing partial stays, the user reads why, and the next save,
/// with the disk back, works.
#[cfg(debug_assertions)]
fn disk_full(file: &str) {
    let env = Env::new().with_var("MEMORY_SAVE_FAULT_WRITE", file);
    let memory = template_with("proj", &["- Kept."]);
    env.write_memory(&memory);
    fs::write(env.memory_dir("proj").join("history.md"), "# history\n").unwrap();
    env.script_reply(1, &save_reply("- Lost to the full disk.", "- Lost too."));
    env.saved_turn(SID, 1);

    let status = env.status(SID);
    let target = env.memory_dir("proj").join(format!(".{file}."));
    assert!(
        status.starts_with(&format!("error: failed to write to file `{}", target.display()))
            && status.ends_with(".tmp`: No space left on device (os error 28)"),
        "status: {status:?}"
    );
    let why = status.strip_prefix("error: ").unwrap();
    // All or nothing: with MEMORY.md unwritable, the topic append that went
    // first is put back too, and the history records no change.
    assert_eq!(env.memory_file("history.md").as_deref(), Some("# history\n"), "history.md changed");
    let history = env.cmd(&["history"]).in_dir(&env.proj).run().ok().stdout;
    assert!(history.starts_with("no history"), "{history}");
    assert_eq!(env.memory().unwrap(), memory, "MEMORY.md changed");
    let mut tree = files(&env);
    tree.retain(|f| f != "proj/history.md" && !f.starts_with("proj/.history"));
    assert_eq!(tree, ["proj", "proj/.identity", "proj/MEMORY.md"], "a partial or temp file stays");
    let errors = env.log().lines().filter(|l| l.contains("No space left on device")).count();
    assert_eq!(errors, 1, "log:\n{}", env.log());
    let out = env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    assert_eq!(out.json(), json!({"systemMessage": format!("memory-save: MEMORY.md: not saved ({why})")}));
    env.hook("stop").fixture("Stop.json").run().ok();
    env.wait_saves(SID, 2); // call 2: the default reply, no change

    // The disk is back.
    let env = env.without_var("MEMORY_SAVE_FAULT_WRITE");
    env.script_reply(3, &save_reply("- Saved once the disk was back.", "- Back."));
    env.saved_turn(SID, 3);
    assert_eq!(env.status(SID), "+1 topic: history");
    let now = env.memory().unwrap();
    assert!(now.contains("- Saved once the disk was back.") && !now.contains("- Lost"), "{now}");
    assert!(env.memory_file("history.md").unwrap().ends_with("- Back.\n"));
}

#[test]
#[cfg(debug_assertions)] // needs the debug build's fault hooks (`MEMORY_SAVE_FAULT_*`)
fn disk_full_writing_memory_md() {
    disk_full("MEMORY.md");
}

#[test]
#[cfg(debug_assertions)] // needs the debug build's fault hooks (`MEMORY_SAVE_FAULT_*`)
fn disk_full_writing_a_topic_file() {
    disk_full("history.md");
}

/// The moments a random kill almost never hits, hit on purpose (a debug-only
/// hook makes the worker SIGKILL itself there): halfway through each file's
/// temp copy, and right after each rename. Every file is still the old or
/// the new version, and the next save works from there.
#[test]
#[cfg(debug_assertions)] // needs the debug build's fault hooks (`MEMORY_SAVE_FAULT_*`)
fn a_worker_killed_at_each_write_point_leaves_old_or_new_files() {
    for point in ["history.md:half", "history.md:renamed", "MEMORY.md:half", "MEMORY.md:renamed"] {
        let env = Env::new().with_var("MEMORY_SAVE_FAULT_KILL", point);
        let memory = template_with("proj", &["- Base fact."]).replacen(
            "## Topic Files\n- None yet.\n",
            "## Topic Files\n- history.md\n",
            1,
        );
        env.write_memory(&memory);
        fs::write(env.memory_dir("proj").join("history.md"), "# history\n").unwrap();
        env.script_reply(1, &save_reply("- Killed save.", "- Killed event."));
        env.turn(SID);
        let fork = env.call(1);
        wait_until("the worker to kill itself", || !process_alive(fork.ppid));

        let now_memory = env.memory().unwrap();
        let now_history = env.memory_file("history.md").unwrap();
        let memory_new = now_memory == with_bullet(&memory, "- Killed save.");
        let history_new = now_history == with_append(Some("# history\n"), "- Killed event.");
        assert!(memory_new || now_memory == memory, "{point}: MEMORY.md is neither old nor new:\n{now_memory}");
        assert!(
            history_new || now_history == "# history\n",
            "{point}: history.md is neither old nor new:\n{now_history}"
        );
        let expected = match point {
            "history.md:half" => (false, false),
            "history.md:renamed" | "MEMORY.md:half" => (false, true),
            _ => (true, true),
        };
        assert_eq!((memory_new, history_new), expected, "{point}");
        assert!(!statusline(&env).contains("saving"), "{point}: {}", statusline(&env));
        for lock in [
            env.sessions_dir().join(format!("{SID}.worker.lock")),
            env.mem.join("state/memory-save/projects/proj.json"),
        ] {
            assert!(lock_free(&lock), "{point}: {} is held", lock.display());
        }

        let env = env.without_var("MEMORY_SAVE_FAULT_KILL");
        env.script_reply(2, &save_reply("- Saved after the kill.", "- After."));
        env.turn(SID);
        // The killed job is taken over by the next turn's hooks, and that
        // turn's own request may fold into it or follow it.
        let state = env.wait_idle(SID, 1);
        assert!(state.saves() <= 2, "{point}: {state:#}");
        assert!(env.memory().unwrap().contains("- Saved after the kill."), "{point}");
        let temps: Vec<String> = files(&env).into_iter().filter(|f| f.ends_with(".tmp")).collect();
        assert!(temps.is_empty(), "{point}: temp files stay: {temps:?}");
    }
}

/// A read-only folder (a debug-only hook fails the temp file's creation with
/// EROFS): nothing changes, the user reads why, and the next save works once
/// the folder is writable again.
#[test]
#[cfg(debug_assertions)] // needs the debug build's fault hooks (`MEMORY_SAVE_FAULT_*`)
fn a_read_only_memory_folder() {
    let env = Env::new().with_var("MEMORY_SAVE_FAULT_READ_ONLY", "MEMORY.md");
    let memory = template_with("proj", &["- Kept."]);
    env.write_memory(&memory);
    env.script_reply(1, &adds("- Not writable now."));
    env.saved_turn(SID, 1);
    let status = env.status(SID);
    assert!(
        status.starts_with("error: cannot create ") && status.ends_with("Read-only file system (os error 30)"),
        "{status}"
    );
    assert_eq!(env.memory().unwrap(), memory);
    let out = env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    assert!(
        out.json()["systemMessage"].as_str().unwrap().starts_with("memory-save: MEMORY.md: not saved (cannot create "),
        "{out:#?}"
    );
    env.hook("stop").fixture("Stop.json").run().ok();
    env.wait_saves(SID, 2);

    let env = env.without_var("MEMORY_SAVE_FAULT_READ_ONLY");
    env.script_reply(3, &adds("- Writable again."));
    env.saved_turn(SID, 3);
    assert!(env.memory().unwrap().contains("- Writable again."));
    assert!(!files(&env).iter().any(|f| f.ends_with(".tmp")));
}

/// Kill after kill, no turn is lost: each turn's worker is killed at a
/// random moment during its fork or its write, the next turn's hooks take
/// the claimed job over, and in the end every turn's bullet is in the file.
/// (Before claims, a kill after the job left the queue lost that turn: 129
/// kills over 150 turns landed 4 saves.)
#[test]
fn turns_whose_workers_are_killed_are_all_saved_in_the_end() {
    let turns = env_number("MEMORY_SAVE_KILL_TURNS", 30);
    let seed = env_number("MEMORY_SAVE_CRASH_SEED", 0x2545_f491_4f6c_dd1d);
    let mut rng = Rng(seed.max(1));
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Base fact."]));
    let (mut kills, mut calls_seen) = (0u64, 0usize);
    for t in 1..=turns {
        // A fork sees the whole session: a retried or merged save answers
        // with every turn so far (repeated adds change nothing).
        let bullets: Vec<serde_json::Value> = (1..=t).map(|i| add(ARCH, &format!("- Turn {i}."))).collect();
        env.script_default(&reply(json!(bullets), json!([])));
        // Each fork takes 30 ms, most of the random kill's window: a worker
        // that notices its fork's end at once would otherwise often be
        // gone before the kill.
        for n in calls_seen + 1..=calls_seen + 3 {
            env.script_sleep_for(n, "0.03");
        }
        env.turn(SID);
        // The newest fork of this turn, once it has started.
        wait_until("a fork to start", || env.call_count() > calls_seen);
        calls_seen = env.call_count();
        let fork = env.call(calls_seen);
        std::thread::sleep(Duration::from_micros(rng.next() % 50_000));
        if process_alive(fork.ppid) {
            kill(fork.ppid);
            kills += 1;
        }
        wait_until("the killed worker to be gone", || !process_alive(fork.ppid));
        calls_seen = env.call_count();
    }
    // The session ends; its last claimed job is taken over there.
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_idle(SID, 1);
    let memory = env.memory().unwrap();
    let landed = (1..=turns).filter(|i| memory.contains(&format!("- Turn {i}.\n"))).count() as u64;
    eprintln!("kills: {kills} over {turns} turns; saves landed: {landed} of {turns} (seed {seed:#x})");
    assert!(kills >= turns / 2, "too few kills landed to prove anything: {kills}");
    assert_eq!(landed, turns, "turns lost:\n{memory}");
}

/// A fork that started is counted, whatever became of its worker: killed
/// while its fork ran, its reservation turns into a save record at the
/// next verdict, so the month holds both forks, not one.
#[test]
fn a_fork_whose_worker_was_killed_is_counted() {
    let env = Env::new();
    env.script_hold(1);
    env.turn(SID);
    let fork = env.call(1);
    kill(fork.ppid);
    env.release(1);
    wait_until("the killed worker to be gone", || !process_alive(fork.ppid));
    wait_until("the fork to end", || !process_alive(fork.pid));
    // The next turn takes the job over (its own request runs after it or
    // folds in): every fork that ran has its record.
    env.turn(SID);
    env.wait_idle(SID, 1);
    let records: Vec<serde_json::Value> = fs::read_to_string(env.mem.join("state/memory-save/saves.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), env.call_count(), "a fork without a record: {records:#?}");
    let lost: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["status"].as_str().unwrap().contains("its worker stopped")).collect();
    assert_eq!(lost.len(), 1, "{records:#?}");
    assert!(lost[0]["counted_usd"].as_f64().unwrap() > 0.0, "{records:#?}");
}
