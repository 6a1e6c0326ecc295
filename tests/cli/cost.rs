//! Cost you can trust: a plan's usage windows, the budgets, and what status
//! shows of the cost. The fake claude reports whatever usage a test
//! scripts, as the stand-in does.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

/// A fork result with this usage and cost.
fn answer(text: &str, fresh: u64, read: u64, write: u64, cost: f64) -> Value {
    json!({
        "type": "result", "subtype": "success", "is_error": false, "result": text, "session_id": "fork",
        "usage": {"input_tokens": fresh, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 9},
        "total_cost_usd": cost
    })
}

fn statusline(env: &Env, input: Value) -> String {
    env.cmd(&["statusline"]).stdin(&input.to_string()).run().ok().stdout
}

fn status_input() -> Value {
    let mut input = fixture("statusLine.json");
    input["session_id"] = json!(SID);
    input
}

#[test]
fn status_shows_what_saves_cost_today_and_per_session_beside_the_sessions_own_cost() {
    let env = Env::new();
    // The real transcript, its session grown to $2 (Claude Code's own figure).
    env.copy_transcript_fixture();
    let cost = serde_json::json!({"type": "cost-state", "totalCostUSD": 2.0});
    let text = std::fs::read_to_string(env.transcript_path()).unwrap();
    std::fs::write(env.transcript_path(), format!("{text}{cost}\n")).unwrap();
    env.script_output(1, &answer(&no_change(), 3, 40_000, 300, 0.0125));
    env.saved_turn(SID, 1);
    let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
    let session = &status["sessions"][0];
    assert_eq!(session["session_id"], SID);
    assert_eq!(session["saves"]["cache_read_input_tokens"], 40_000);
    assert_eq!(session["saves"]["cache_creation_input_tokens"], 300);
    assert!(session["session_cost_usd"].as_f64().unwrap() > 0.0, "{status:#}");
    assert!(session["share"].as_f64().is_some(), "{status:#}");
    let text = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(
        text.contains("today (all projects): 1 save · in 3 · cache read 40000 · cache write 300 · out 9"),
        "{text}"
    );
    assert!(text.contains(&format!("session {SID}: 1 save")) && text.contains("of the session's own $"), "{text}");
}

#[test]
fn the_fork_gets_the_model_the_session_requested_and_never_compacts() {
    let env = Env::new();
    let line = json!({"type": "assistant", "requestedModel": "claude-sonnet-4-5[1m]", "message": {"role": "assistant", "model": "claude-sonnet-4-5", "content": []}});
    fs::write(env.transcript_path(), format!("{line}\n")).unwrap();
    env.saved_turn(SID, 1);
    let call = env.call(1);
    assert_eq!(call.flag("--model"), Some("claude-sonnet-4-5[1m]"));
    assert!(call.session_env.contains("DISABLE_COMPACT=1"), "{}", call.session_env);
}

#[test]
fn doctor_warns_about_a_claude_code_release_outside_the_tested_list() {
    let env = Env::new();
    let listed: Vec<&str> =
        include_str!("../e2e/versions.txt").lines().filter(|l| !l.starts_with('#') && !l.is_empty()).collect();
    assert!(listed.len() >= 2, "{listed:?}");
    for (version, warned) in [(listed[1], false), ("9.9.9", true)] {
        let claude = env.root().join(format!("claude-{version}"));
        fs::write(&claude, format!("#!/bin/sh\necho '{version} (Claude Code)'\n")).unwrap();
        fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let out = env.cmd(&["doctor"]).in_dir(&env.proj).var("MEMORY_SAVE_CLAUDE", claude.to_str().unwrap()).run();
        let warning = format!(
            "WARNING  claude {} ({version} (Claude Code)) is not a release memory-save was tested with",
            claude.display()
        );
        assert_eq!(out.stdout.contains(&warning), warned, "{version}: {}", out.stdout);
        assert_eq!(out.stdout.contains(&format!("ok       claude {}", claude.display())), !warned, "{}", out.stdout);
    }
}

#[test]
fn no_more_than_two_forks_run_on_the_machine_at_once_the_rest_wait() {
    let env = Env::new();
    for n in 1..=3 {
        env.script_hold(n);
    }
    let sessions = ["slot-a", "slot-b", "slot-c"];
    for session in sessions {
        env.turn(session);
    }
    wait_until("two forks to start", || env.call_count() == 2);
    // The third worker has claimed its save, so it runs, and waits for a
    // slot: its fork has not started.
    wait_until("every session's save to be claimed", || {
        sessions.iter().all(|s| env.state(s).claimed_since().is_some())
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(sessions.iter().all(|s| env.worker_running(s)), "a worker is gone");
    assert_eq!(env.call_count(), 2, "a third fork ran beside two others");
    env.release(1);
    wait_until("the third fork to start once a slot is free", || env.call_count() == 3);
    env.release(2);
    env.release(3);
    for session in sessions {
        env.wait_saves(session, 1);
    }
}

#[test]
fn a_session_near_its_window_is_not_saved_until_it_compacts() {
    let env = Env::new();
    let transcript = |tokens: u64| {
        let line = json!({"type": "assistant", "message": {"role": "assistant", "model": "claude-opus-5-5", "content": [], "usage": {"input_tokens": 10, "cache_read_input_tokens": tokens}}});
        fs::write(env.transcript_path(), format!("{line}\n")).unwrap();
    };
    transcript(197_000);
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 0, "a fork ran that could not fit the window");
    assert!(
        env.status(SID).starts_with("skipped: the session is near its context window (197010 of 200000 tokens)"),
        "{}",
        env.status(SID)
    );
    // The session compacts: its next request is small again, and the
    // save goes on.
    transcript(30_000);
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 1);
}

#[test]
fn save_every_turns_gathers_turns_and_an_idle_session_is_flushed() {
    let env = Env::new();
    env.config("save_every_turns = 3\nidle_flush_seconds = 1\n");
    env.script_hold(2);
    // Three turns, one save; the first two wait for the third.
    env.turn(SID);
    env.turn(SID);
    assert_eq!(env.call_count(), 0, "a save ran before three turns gathered");
    assert_eq!(env.state(SID).unsaved(), 2);
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 1);
    // One more turn, then quiet: the worker started at Stop waits out the
    // idle time itself and saves it.
    env.turn(SID);
    env.call(2);
    assert!(env.state(SID).held_until().is_none() && env.state(SID).unsaved() == 0, "{}", env.state(SID));
    env.release(2);
    env.wait_saves(SID, 2);
    // A gathered turn is saved when the session ends, not lost.
    env.config("save_every_turns = 3\nidle_flush_seconds = 600\n");
    env.turn(SID);
    assert_eq!(env.call_count(), 2);
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 3);
    assert_eq!(env.call_count(), 3);
}

#[test]
fn pre_compact_saves_the_held_turns_from_a_copy_taken_before_the_summary() {
    let env = Env::new();
    env.config("save_every_turns = 5\nidle_flush_seconds = 600\n");
    let lines = [
        json!({"type": "user", "uuid": "0b4f1c2e-0000-4000-8000-000000000001", "message": {"role": "user", "content": "a"}}),
        json!({"type": "assistant", "uuid": "0b4f1c2e-0000-4000-8000-000000000002", "message": {"role": "assistant", "model": "m", "content": []}}),
        json!({"type": "system", "uuid": "not-a-message"}),
    ];
    let before: String = lines.iter().map(|l| format!("{l}\n")).collect();
    fs::write(env.transcript_path(), &before).unwrap();
    env.turn(SID);
    assert_eq!(env.call_count(), 0, "one turn of five waits");
    env.script_hold(1);
    env.hook("pre-compact").fixture("PreCompact-manual.json").session(SID).run().ok().assert_silent();
    // The summary lands while the fork starts: the copy still holds the turns.
    let boundary = json!({"type": "system", "subtype": "compact_boundary", "uuid": "b"});
    fs::write(env.transcript_path(), format!("{before}{boundary}\n")).unwrap();
    let call = env.call(1);
    let copy = call.flag("--resume").unwrap().to_string();
    assert!(copy.starts_with(env.mem.to_str().unwrap()) && copy.ends_with(".transcript.jsonl"), "{copy}");
    assert_eq!(call.resumed, before, "the fork resumes the transcript as it was at PreCompact");
    assert_eq!(call.flag("--resume-session-at"), None, "the copy ends where the session did");
    assert_eq!(fs::metadata(&copy).unwrap().permissions().mode() & 0o777, 0o600);
    env.release(1);
    env.wait_saves(SID, 1);
    assert!(!Path::new(&copy).exists(), "the copy is removed after its save");
    // Nothing held back: compaction asks for no save, and takes no copy.
    env.hook("pre-compact").fixture("PreCompact-manual.json").session(SID).run().ok();
    env.assert_idle_with(SID, 1);
    assert_eq!(env.call_count(), 1);
    let copies = files_under(&env.mem).into_iter().filter(|f| f.ends_with(".transcript.jsonl")).count();
    assert_eq!(copies, 0, "a compaction with nothing to save took a copy");
}

#[test]
fn pre_compact_never_copies_a_transcript_that_is_a_link() {
    let env = Env::new();
    env.config("save_every_turns = 5\nidle_flush_seconds = 600\n");
    let message = json!({"type": "assistant", "uuid": "0b4f1c2e-0000-4000-8000-000000000002", "message": {"role": "assistant", "model": "m", "content": []}});
    fs::write(env.transcript_path(), format!("{message}\n")).unwrap();
    env.turn(SID);
    let real = env.transcript_path().with_extension("real");
    fs::rename(env.transcript_path(), &real).unwrap();
    std::os::unix::fs::symlink(&real, env.transcript_path()).unwrap();
    env.hook("pre-compact").fixture("PreCompact-manual.json").session(SID).run().ok().assert_silent();
    env.wait_saves(SID, 1);
    let call = env.call(1);
    assert_eq!(call.flag("--resume"), Some(SID));
    assert_eq!(call.resumed, "");
    let sessions = env.mem.join("state/memory-save/sessions");
    let copies: Vec<_> = fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".jsonl"))
        .collect();
    assert!(copies.is_empty(), "{copies:?}");
}

/// The idle flush waits for quiet, not only for time since the last Stop:
/// a long turn writes its transcript as it goes, and a flush in its middle
/// would pay for a save its own Stop makes anyway (virtual clock).
#[test]
#[cfg(debug_assertions)] // needs the debug build's virtual clock (`MEMORY_SAVE_DEBUG_CLOCK`)
fn a_long_turn_is_not_flushed_in_its_middle() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock");
    let stamp = |at: i64| {
        time::OffsetDateTime::from_unix_timestamp(at)
            .unwrap()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap()
    };
    let set = |at: i64| set_clock(&clock, at);
    let env = Env::new().with_var("MEMORY_SAVE_DEBUG_CLOCK", clock.to_str().unwrap());
    env.config("save_every_turns = 5\nidle_flush_seconds = 100\n");
    let start = 1_796_140_800;
    set(start);
    let entry = |at: i64| {
        format!("{}\n", json!({"type": "user", "timestamp": stamp(at), "message": {"role": "user", "content": "x"}}))
    };
    fs::write(env.transcript_path(), entry(start)).unwrap();
    env.turn(SID);
    assert_eq!(env.state(SID).held_until(), Some(start + 100));
    // The next turn runs long: its tool results keep coming past the flush.
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    for at in (start + 30..=start + 150).step_by(30) {
        let mut file = fs::OpenOptions::new().append(true).open(env.transcript_path()).unwrap();
        std::io::Write::write_all(&mut file, entry(at).as_bytes()).unwrap();
        set(at);
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert_eq!(env.call_count(), 0, "a flush ran in the middle of a turn");
    // Past the first flush time, the worker looks again: the turn's last
    // result was at +150, so the flush moves to +250.
    set(start + 230);
    let started = std::time::Instant::now();
    while env.state(SID).held_until() != Some(start + 250) {
        assert!(started.elapsed().as_secs() < 20, "{}", env.state(SID));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(env.call_count(), 0);
    // Quiet at last: the flush saves.
    set(start + 251);
    env.wait_saves(SID, 1);
    assert_eq!(env.call_count(), 1);
}

/// PreCompact copies the transcript (up to 256 MB) before it takes the
/// session lock, which other hooks wait for at most two seconds: the copy
/// appears while another process holds the lock.
#[test]
fn pre_compact_copies_the_transcript_outside_the_session_lock() {
    let env = Env::new();
    env.config("save_every_turns = 5\nidle_flush_seconds = 600\n");
    let message = json!({"type": "assistant", "uuid": "0b4f1c2e-0000-4000-8000-000000000002", "message": {"role": "assistant", "model": "m", "content": []}});
    fs::write(env.transcript_path(), format!("{message}\n")).unwrap();
    env.turn(SID);
    let lock = fs::OpenOptions::new().write(true).open(env.sessions_dir().join(format!("{SID}.json"))).unwrap();
    lock.lock().unwrap();
    let hook = {
        let run = env.hook("pre-compact").fixture("PreCompact-manual.json").session(SID);
        std::thread::scope(|scope| {
            let handle = scope.spawn(move || run.run());
            wait_until("the copy, taken while the lock is held elsewhere", || {
                fs::read_dir(env.sessions_dir())
                    .unwrap()
                    .flatten()
                    .any(|e| e.file_name().to_string_lossy().ends_with(".transcript.jsonl"))
            });
            lock.unlock().unwrap();
            handle.join().unwrap()
        })
    };
    assert_eq!(hook.code, Some(0), "{hook:#?}");
    env.wait_saves(SID, 1);
}

/// A session of a few cents is too small to set a save against: no share
/// like "4087.3% of the session's own $0.00022".
#[test]
fn a_tiny_sessions_own_cost_gets_no_share() {
    let env = Env::new();
    // The real transcript: a session that cost $0.0035.
    env.copy_transcript_fixture();
    env.script_output(1, &answer(&no_change(), 3, 40_000, 300, 0.0125));
    env.saved_turn(SID, 1);
    let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
    let session = &status["sessions"][0];
    assert!(session["session_cost_usd"].as_f64().unwrap() < 0.05, "{status:#}");
    assert!(session["share"].is_null(), "{status:#}");
    let text = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(!text.contains("of the session's own"), "{text}");
}

/// The status line as Claude Code runs it for a plan's session, with its
/// usage windows (the shape measured on 2.1.328 and 2.1.332).
fn windows(env: &Env, five_hour: f64, seven_day: f64) -> String {
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let mut input = status_input();
    input["rate_limits"] = json!({
        "five_hour": {"used_percentage": five_hour, "resets_at": now + 3600},
        "seven_day": {"used_percentage": seven_day, "resets_at": now + 3 * 86_400},
    });
    statusline(env, input)
}

/// A plan's save draws on the 5-hour and weekly windows the user's own
/// prompts need: while either is 90% used or more, saves wait and no fork
/// runs; the held turns are saved once the window allows, nothing lost.
#[test]
fn a_plans_nearly_full_window_holds_its_saves_and_the_held_turns_are_saved_once_it_frees() {
    for (five_hour, seven_day, name) in [(97.0, 20.0, "5-hour"), (20.0, 98.0, "weekly")] {
        let env = Env::new();
        env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg("1").run().ok();
        windows(&env, five_hour, seven_day);
        env.turn(SID);
        // Its worker waits for the window, which frees within the hour.
        env.wait_recorded(SID, 1);
        assert_eq!(env.call_count(), 0, "{name}: a fork ran past a full window");
        let waiting = format!("waiting: plan's {name} window {:.0}% used, until ", five_hour.max(seven_day));
        assert!(env.status(SID).starts_with(&waiting), "{}", env.status(SID));
        assert!(windows(&env, five_hour, seven_day).starts_with(&format!("memory-save: {waiting}")));
        let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
        assert!(status.contains("  plan      ") && status.contains("saves wait until "), "{status}");
        // Back at 20%: the session's end saves the turn held back.
        windows(&env, 20.0, 20.0);
        env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
        env.wait_saves(SID, 2);
        assert_eq!(env.call_count(), 1, "{name}: the held turn is saved once the window allows");
    }
}

/// Anything can pipe JSON to the status line: a reset further ahead than
/// its window is long holds no save back, and a `rate_limits` of another
/// shape costs the line nothing.
#[test]
fn a_status_line_reading_out_of_range_or_shape_holds_nothing_back() {
    let env = Env::new();
    env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg("1").run().ok();
    let mut far = status_input();
    far["rate_limits"] = json!({"seven_day": {"used_percentage": 100, "resets_at": i64::MAX}});
    statusline(&env, far);
    env.turn(SID);
    env.wait_saves(SID, 1);
    assert_eq!(env.call_count(), 1, "a reading from nowhere held the save back");
    let plain = statusline(&env, status_input());
    assert!(plain.starts_with("memory-save: "), "{plain}");
    let mut odd = status_input();
    odd["rate_limits"] = json!({"five_hour": "full", "seven_day": [1]});
    assert_eq!(statusline(&env, odd), plain);
}

/// A held turn is also saved by the session's next turn, at once.
#[test]
fn a_turn_held_by_a_full_window_is_saved_with_the_next_turn() {
    let env = Env::new();
    env.config("save_every_turns = 5\n");
    env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg("1").run().ok();
    windows(&env, 97.0, 20.0);
    for _ in 0..5 {
        env.turn(SID);
    }
    env.wait_recorded(SID, 1);
    assert_eq!(env.call_count(), 0);
    windows(&env, 20.0, 20.0);
    env.turn(SID);
    env.wait_saves(SID, 2);
    assert_eq!(env.call_count(), 1, "saved at the next turn, not five turns later");
}

/// With an API key a save is billed in dollars: a plan's windows hold
/// nothing back.
#[test]
fn an_api_keys_saves_never_wait_for_a_plans_window() {
    let env = Env::new();
    windows(&env, 97.0, 98.0);
    let keyed = |hook: &str, fixture: &str| {
        env.hook(hook).fixture(fixture).session(SID).var("ANTHROPIC_API_KEY", "k").run().ok();
    };
    keyed("session-start", "SessionStart-startup.json");
    keyed("user-prompt-submit", "UserPromptSubmit.json");
    keyed("stop", "Stop.json");
    env.wait_saves(SID, 1);
    assert_eq!(env.call_count(), 1);
}

/// A plan user whose windows memory-save cannot see (no status line of
/// ours) is told so by install and doctor, with the way to change it.
#[test]
fn a_plan_without_our_status_line_is_told_its_windows_are_not_seen() {
    let env = Env::new();
    let out = env.cmd(&["install"]).in_dir(&env.proj).run().ok().stdout;
    assert!(out.contains("memory-save install --statusline") && out.contains("90% used"), "{out}");
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run().stdout;
    assert!(doctor.contains("cannot wait for its 5-hour and weekly windows"), "{doctor}");
    let out = env.cmd(&["install", "--statusline"]).in_dir(&env.proj).run().ok().stdout;
    assert!(!out.contains("cannot see"), "{out}");
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run().stdout;
    assert!(!doctor.contains("cannot wait for its 5-hour"), "{doctor}");
}
