//! Many sessions of one project finishing turns and saving at once, round
//! after round. Every fork adds its own bullet and
//! appends its own line to history.md; later forks remove old bullets. A
//! watcher reads MEMORY.md all along and checks every version it sees.
//!
//! Sizes: `MEMORY_SAVE_STRESS_SESSIONS` (default 8) sessions ×
//! `MEMORY_SAVE_STRESS_ROUNDS` (default 10) rounds.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::*;

const SEED_RULE: &str = "- Seed rule: this line was here before any save.";
const PERSON_LINE: &str = "- Person's note: typed by hand while the forks ran.";
const HEADINGS: [&str; 4] =
    ["## CRITICAL RULES", "## Architecture & Config Facts", "## Active Warnings", "## Topic Files"];

fn bullet(n: usize) -> String {
    format!("- Stress bullet {n}.")
}

fn history_line(n: usize) -> String {
    format!("- Stress call {n}.")
}

/// The bullet numbers in `text`, or an error if one appears twice.
fn bullets_in(text: &str) -> Result<BTreeSet<usize>, String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("- Stress bullet ").and_then(|r| r.strip_suffix('.')) {
            let n: usize = n.parse().map_err(|_| format!("odd bullet line {line:?}"))?;
            if !out.insert(n) {
                return Err(format!("bullet {n} appears twice:\n{text}"));
            }
        }
    }
    Ok(out)
}

/// In the template and under the caps.
fn check_shape(text: &str) -> Result<(), String> {
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    let lines = text.lines().count();
    let chars = text.chars().count();
    if !text.starts_with("# proj\n") || headings != HEADINGS || !text.ends_with('\n') {
        return Err(format!("MEMORY.md is not in the template:\n{text}"));
    }
    if lines >= 200 || chars >= 50_000 {
        return Err(format!("MEMORY.md is over a cap: {lines} lines, {chars} characters"));
    }
    Ok(())
}

/// Until idle: no request pending, nothing saving, the worker lock free,
/// and at least `saves` saves done. Returns the state.
fn wait_idle(env: &Env, session: &str, saves: u64) -> Session {
    let lock = env.sessions_dir().join(format!("{session}.worker.lock"));
    let started = Instant::now();
    loop {
        let state = env.state(session);
        if state.saves() >= saves && !state.pending() && state.claimed_since().is_none() && lock_free(&lock) {
            return state;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "session {session} never became idle (a save waits forever?): {state:#}\nlog:\n{}",
            env.log()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A person's editor: read, change, save (to a temp file, then rename).
fn person_edits(env: &Env) {
    let path = env.memory_path();
    let text = fs::read_to_string(&path).unwrap();
    let text = text.replacen("## Active Warnings\n- None yet.\n", &format!("## Active Warnings\n{PERSON_LINE}\n"), 1);
    assert!(text.contains(PERSON_LINE), "{text}");
    let tmp = path.with_file_name(".person-edit.tmp");
    fs::write(&tmp, text).unwrap();
    fs::rename(tmp, path).unwrap();
}

/// Every lock file under `dir`, recursively: a session's state file is its lock.
fn lock_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        let state =
            path.parent().is_some_and(|p| p.ends_with("sessions")) && path.extension().is_some_and(|e| e == "json");
        if path.is_dir() {
            lock_files(&path, out);
        } else if state || path.extension().is_some_and(|e| e == "lock") {
            out.push(path);
        }
    }
}

#[test]
fn many_sessions_of_one_project_save_at_once() {
    let sessions = env_number("MEMORY_SAVE_STRESS_SESSIONS", 8) as usize;
    let rounds = env_number("MEMORY_SAVE_STRESS_ROUNDS", 10) as usize;
    // A round runs at most two forks per session, and rounds do not
    // overlap: call n - window always ran in an earlier round, so its bullet
    // is in the file when call n removes it.
    let window = 2 * sessions;
    let hold_round = 1.min(rounds - 1);
    let started = Instant::now();

    let env = Env::new();
    env.write_memory(&template_with("proj", &[]).replacen("- None yet.", SEED_RULE, 1));
    for n in 1..=2 * sessions * rounds {
        let mut ops = vec![add(ARCH, &bullet(n))];
        if n > window {
            ops.push(json!({"op": "remove", "line": bullet(n - window)}));
        }
        env.script_reply(n, &reply(json!(ops), json!([{"file": "history.md", "append": history_line(n)}])));
    }
    let ids: Vec<String> = (0..sessions).map(|i| format!("stress-session-{i}")).collect();
    let mut saves = vec![0u64; sessions];

    let stop = AtomicBool::new(false);
    let observed = std::thread::scope(|scope| {
        // Reads MEMORY.md over and over: every version must be whole, in
        // the template, under the caps, and keep every line it had unless
        // a later fork removed it.
        let watcher = scope.spawn(|| -> Result<usize, String> {
            let mut seen = 0;
            let mut last: BTreeSet<usize> = BTreeSet::new();
            let mut person_seen = false;
            while !stop.load(Ordering::Relaxed) {
                let text = fs::read_to_string(env.memory_path()).map_err(|e| format!("MEMORY.md unreadable: {e}"))?;
                check_shape(&text)?;
                let now = bullets_in(&text)?;
                for gone in last.difference(&now) {
                    let remover = env.fake_dir.join(format!("calls/{}/started", gone + window));
                    if !remover.exists() {
                        return Err(format!("bullet {gone} disappeared and no fork removed it:\n{text}"));
                    }
                }
                if !text.contains(SEED_RULE) || (person_seen && !text.contains(PERSON_LINE)) {
                    return Err(format!("a line another writer put there disappeared:\n{text}"));
                }
                person_seen |= text.contains(PERSON_LINE);
                last = now;
                seen += 1;
                // Leave the small machine's cores to the savers.
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(seen)
        });

        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for round in 0..rounds {
                let hold = round == hold_round;
                // Odd rounds end two turns in a row: the second one queues.
                let twice = round % 2 == 1 && !hold;
                let base = env.call_count();
                // Two forks run on the machine at once (the rest wait for a
                // slot): the held round holds those two.
                let held = base + 1..=base + sessions.min(2);
                if hold {
                    for n in held.clone() {
                        env.script_hold(n);
                    }
                }
                std::thread::scope(|turns| {
                    for id in &ids {
                        turns.spawn(|| {
                            env.turn(id);
                            if twice {
                                env.turn(id);
                            }
                        });
                    }
                });
                if hold {
                    // The running forks have read the file; now the person
                    // edits it, then the forks answer.
                    for n in held.clone() {
                        env.call(n);
                    }
                    person_edits(&env);
                    for n in held {
                        env.release(n);
                    }
                }
                for (i, id) in ids.iter().enumerate() {
                    let state = wait_idle(&env, id, saves[i] + 1);
                    saves[i] = state.saves();
                    let status = state.status();
                    assert!(
                        status.starts_with('+') && !status.contains("refused") && !status.contains("skipped"),
                        "round {round}, {id}: status {status:?}\nlog:\n{}",
                        env.log()
                    );
                }
            }
        }));
        stop.store(true, Ordering::Relaxed);
        let observed = watcher.join().expect("the watcher panicked");
        if let Err(panic) = result {
            std::panic::resume_unwind(panic);
        }
        observed.unwrap_or_else(|e| panic!("{e}"))
    });

    let calls = env.call_count();
    let total_saves: u64 = saves.iter().sum();
    assert!((sessions * rounds..=2 * sessions * rounds).contains(&calls), "{calls} forks");
    assert_eq!(total_saves as usize, calls, "every fork is one save");

    // Every bullet is there unless a later fork removed it; every topic
    // append is there once.
    let memory = env.memory().unwrap();
    check_shape(&memory).unwrap();
    let want: BTreeSet<usize> = (1..=calls).filter(|n| n + window > calls).collect();
    assert_eq!(bullets_in(&memory).unwrap(), want, "{memory}");
    assert!(memory.contains(SEED_RULE) && memory.contains(PERSON_LINE), "{memory}");
    assert_eq!(section_lines(&memory, "Topic Files"), ["- history.md"], "{memory}");
    let history = env.memory_file("history.md").unwrap();
    for n in 1..=calls {
        assert_eq!(history.matches(&format!("{}\n", history_line(n))).count(), 1, "call {n} in history.md:\n{history}");
    }
    let temps: Vec<String> = env.memory_tree().into_iter().filter(|f| f.ends_with(".tmp")).collect();
    assert!(temps.is_empty(), "temp files left: {temps:?}");

    // No lock is left behind, and no worker or fork still runs.
    let mut locks = Vec::new();
    lock_files(&env.mem.join("state"), &mut locks);
    assert!(locks.len() > sessions, "lock files: {locks:?}");
    for lock in &locks {
        assert!(lock_free(lock), "{} is still held", lock.display());
    }
    for n in 1..=calls {
        let call = env.call(n);
        wait_until(&format!("worker {} of call {n} to end", call.ppid), || !process_alive(call.ppid));
        wait_until(&format!("fork {n} to end"), || !process_alive(call.pid));
    }
    assert!(!env.log().contains("error"), "log:\n{}", env.log());

    println!(
        "stress: {sessions} sessions × {rounds} rounds: {calls} saves, {observed} versions of MEMORY.md checked, {:.1}s",
        started.elapsed().as_secs_f64()
    );
}
