//! `memory-save statusline` (docs/design.md §2).

use crate::support::*;

fn statusline(env: &Env, wrapped: &[&str]) -> Output {
    let mut run = env.cmd(&["statusline"]);
    if !wrapped.is_empty() {
        run = run.arg("--");
        for a in wrapped {
            run = run.arg(a);
        }
    }
    run.fixture("statusLine.json").session(SID).run().ok()
}

/// `memory-save: <text> · HH:MM`.
fn assert_line(line: &str, text: &str) {
    let clock = line
        .strip_prefix(&format!("memory-save: {text} · "))
        .unwrap_or_else(|| panic!("status line {line:?} is not `memory-save: {text} · HH:MM`"));
    let b = clock.as_bytes();
    assert!(
        b.len() == 5 && b[2] == b':' && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit()),
        "clock {clock:?} is not HH:MM"
    );
}

/// `memory-save: <text> · $N at API prices this month · HH:MM`: a plan's
/// save's line carries the month's usage at API prices, never as money paid.
fn assert_saved_line(line: &str, text: &str) {
    let rest = line.strip_prefix(&format!("memory-save: {text} · $")).unwrap_or_else(|| {
        panic!("status line {line:?} is not `memory-save: {text} · $N at API prices this month · HH:MM`")
    });
    // A session whose start recorded no route yet says plain dollars.
    let rest = rest.replacen(" at API prices this month · ", " this month · ", 1);
    let (money, clock) = rest.split_once(" this month · ").unwrap_or_else(|| panic!("{line:?}"));
    assert!(money.parse::<f64>().is_ok_and(|m| m > 0.0), "{line:?}");
    assert_line(&format!("memory-save: {text} · {clock}"), text);
}

#[test]
fn nothing_to_show_before_a_save() {
    let env = Env::new();
    statusline(&env, &[]).assert_silent();
}

/// From SessionStart until the first save, the line says the memory loaded.
#[test]
fn says_the_memory_loaded_until_the_first_save() {
    let env = Env::new();
    let memory = template_with("proj", &["- Deploys go through `make ship`."]);
    env.write_memory(&memory);
    env.hook("session-start").arg("--part").arg("1").fixture("SessionStart-startup.json").session(SID).run().ok();
    let out = statusline(&env, &[]);
    assert_line(out.stdout.strip_suffix('\n').unwrap(), &format!("loaded {} lines", memory.lines().count()));
    env.script_reply(1, &adds("- A fact."));
    env.saved_turn(SID, 1);
    let out = statusline(&env, &[]);
    assert_saved_line(out.stdout.lines().next().unwrap(), "+1");
}

#[test]
fn shows_saving_then_the_result() {
    let env = Env::new();
    env.script_hold(1);
    env.script_reply(1, &adds("- A fact."));
    env.turn(SID);
    env.call(1);
    wait_until("the save to be claimed", || env.state(SID).claimed_since().is_some());
    let out = statusline(&env, &[]);
    assert_line(out.stdout.strip_suffix('\n').unwrap(), "saving…");

    env.release(1);
    env.wait_saves(SID, 1);
    let out = statusline(&env, &[]);
    assert_eq!(out.stdout.lines().count(), 1, "{out:#?}");
    assert_saved_line(out.stdout.lines().next().unwrap(), "+1");
}

#[test]
fn wraps_the_users_own_status_command() {
    let env = Env::new();
    env.script_reply(1, &adds("- A fact."));
    env.saved_turn(SID, 1);
    let out = statusline(&env, &["sh", "-c", "echo theirs"]);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{out:#?}");
    assert_eq!(lines[0], "theirs");
    assert_saved_line(lines[1], "+1");
}

#[test]
fn their_line_survives_when_ours_cannot_be_read() {
    let env = Env::new();
    let out = env
        .cmd(&["statusline", "--", "sh", "-c", "echo theirs"])
        .fixture("statusLine.json")
        .session(SID)
        .unset("HOME")
        .unset("MEMORY_SAVE_HOME")
        .run()
        .ok();
    assert_eq!(out.stdout, "theirs\n");
}
