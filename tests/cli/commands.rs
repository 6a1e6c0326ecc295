//! The command line behaves like the tools people know: help everywhere,
//! usage errors with a hint and exit 2, completions, a closed pipe ends
//! quietly.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::support::*;

const COMMANDS: [&str; 14] = [
    "adopt",
    "sessions",
    "restore",
    "install",
    "uninstall",
    "status",
    "doctor",
    "history",
    "undo",
    "review",
    "statusline",
    "completions",
    "hook",
    "worker",
];

#[test]
fn every_command_answers_help_with_exit_0() {
    let env = Env::new();
    for command in COMMANDS {
        for flag in ["--help", "-h"] {
            let out = env.cmd(&[command, flag]).status(0).stderr("").run();
            assert!(out.stdout.contains(&format!("Usage: memory-save {command}")), "{command} {flag}: {out:#?}");
        }
    }
    let top = env.cmd(&["--help"]).run().ok();
    for shown in &COMMANDS[..10] {
        assert!(top.stdout.contains(&format!("\n  {shown} ")), "{shown} missing from --help:\n{}", top.stdout);
    }
    for hidden in ["hook", "worker"] {
        assert!(!top.stdout.contains(&format!("\n  {hidden} ")), "{hidden} shown in --help");
    }
    assert!(top.stdout.contains("Exit codes:\n  0  done"), "{}", top.stdout);
    let version = env.cmd(&["--version"]).run().ok();
    assert_eq!(version.stdout, format!("memory-save {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn usage_errors_exit_2_with_a_hint_but_a_hook_never_does() {
    let env = Env::new();
    for args in [&["frobnicate"][..], &["status", "--jsn"], &["review", "--approve"], &["completions", "tcsh"], &[]] {
        let out = env.cmd(args).status(2).stdout("").run();
        assert!(
            out.stderr.contains("Usage: memory-save") || out.stderr.contains("For more information"),
            "{args:?}: {out:#?}"
        );
    }
    let suggestion = env.cmd(&["stauts"]).run();
    assert!(
        suggestion.stderr.contains("similar subcommands exist") && suggestion.stderr.contains("'status'"),
        "{suggestion:#?}"
    );
    // A usage error repeats what was typed: an argument pasted with a
    // terminal's escapes in it is shown, not acted on.
    for args in [&["\x1b]0;owned\x07"][..], &["status", "--\x1b[2J"], &["list", "--\u{202e}"]] {
        let out = env.cmd(args).status(2).stdout("").run();
        assert!(!out.stderr.contains(['\x1b', '\x07', '\u{202e}']), "{args:?}: {out:#?}");
        assert!(out.stderr.contains("\\u{1b}") || out.stderr.contains("\\u{202e}"), "{args:?}: {out:#?}");
    }
    // Under `hook`, an unknown event (a newer hooks.json), a bad flag or bad
    // input is logged and exits 0: exit 2 would block the prompt or stop.
    for args in [&["hook", "post-compact"][..], &["hook", "stop", "--bogus"], &["hook"]] {
        env.cmd(args).stdin("{}").status(0).stdout("").stderr("").run();
    }
    assert_eq!(env.log().lines().count(), 3, "one log line each:\n{}", env.log());
}

/// A reader of stderr that went away (`memory-save … 2>&1 | head -0`)
/// changes no exit code: an error still exits 2 or 1, never aborts.
#[test]
fn an_error_to_a_closed_stderr_keeps_its_exit_code() {
    let env = Env::new();
    env.cmd(&["frobnicate"]).close_stderr().status(2).run();
    env.cmd(&["guards", "--deny", "nope"]).in_dir(&env.proj).close_stderr().status(1).run();
}

#[test]
fn completions_for_bash_zsh_and_fish() {
    let env = Env::new();
    for (shell, marker) in
        [("bash", "complete -F"), ("zsh", "#compdef memory-save"), ("fish", "complete -c memory-save")]
    {
        let out = env.cmd(&["completions", shell]).run().ok();
        assert!(out.stdout.contains(marker), "{shell}: {}", &out.stdout[..out.stdout.len().min(300)]);
        assert!(out.stdout.contains("review"), "{shell}");
        // As a completion candidate, in each shell's form.
        for hidden in ["worker", "merge-driver", "hook"] {
            for form in
                [format!("'{hidden}:"), format!("-a \"{hidden}\""), format!("({hidden})"), format!(" {hidden} ")]
            {
                assert!(!out.stdout.contains(&form), "{shell} completes the hidden {hidden}: {form}");
            }
        }
    }
}

#[test]
fn a_mistyped_command_never_suggests_a_hidden_one() {
    let env = Env::new();
    for (typed, hidden) in [("hoo", "'hook'"), ("worke", "'worker'"), ("merge-drive", "'merge-driver'")] {
        let out = env.cmd(&[typed]).status(2).run();
        assert!(!out.stderr.contains(hidden), "{typed}: {}", out.stderr);
    }
    let help = env.cmd(&["hook", "--help"]).run().ok().stdout;
    assert!(help.contains("pre-compact") && help.contains("session-end"), "{help}");
}

#[test]
fn words_and_numbers_agree() {
    let env = Env::new();
    env.cmd(&["install"]).run().ok();
    // Warnings and no problem: doctor does not then say "all good".
    env.config("max_cost_per_month_usd = 0.001\nno_such_key = 1\n");
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).status(0).run();
    let warnings = doctor.stdout.matches("WARNING ").count();
    assert!(warnings >= 2, "{}", doctor.stdout);
    assert!(
        !doctor.stdout.contains("all good")
            && doctor.stdout.trim_end().ends_with(&format!("no problems; {warnings} warnings above worth a look")),
        "{}",
        doctor.stdout
    );
    // Money keeps two significant digits.
    let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(status.contains("max_cost_per_month_usd $0.0010"), "{status}");
    // review says the gate is off.
    let review = env.cmd(&["review"]).in_dir(&env.proj).run().ok().stdout;
    assert!(review.starts_with("the review gate is off"), "{review}");
    let show = env.cmd(&["show"]).in_dir(&env.proj).run().ok().stdout;
    assert!(!show.contains("(s)"), "{show}");
}

#[test]
fn a_reader_that_goes_away_ends_the_output_quietly() {
    let mut child =
        Command::new(BIN).args(["completions", "zsh"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Read one byte, then close the pipe, as `| head -c1` does.
    let mut stdout = child.stdout.take().unwrap();
    let mut byte = [0u8; 1];
    stdout.read_exact(&mut byte).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "no panic, no message");
}

/// The settings shown in the READMEs and docs/configuration are what the
/// reader takes them for: every key known, every value in range.
#[test]
fn the_documented_settings_examples_read_without_a_problem() {
    let env = Env::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in ["README.md", "README.tr.md", "docs/configuration.md", "docs/configuration.tr.md"] {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        let start = text.find("```toml\n").unwrap_or_else(|| panic!("{file} has a settings example"));
        let example = &text[start + 8..];
        let example = &example[..example.find("```").unwrap()];
        env.config_exact(example);
        let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
        assert!(!status.contains("\n  config ") && !status.contains("no save runs"), "{file}:\n{example}\n{status}");
    }
}

/// `sessions` names each session's project and where its saves stand; one
/// session by its id; an id that cannot be one is a usage error.
#[test]
fn sessions_says_where_each_sessions_saves_stand() {
    let env = Env::new();
    let none = env.cmd(&["sessions"]).run().ok().stdout;
    assert_eq!(none, format!("no session on this machine yet ({})\n", env.sessions_dir().display()));
    env.config("save_every_turns = 5\n");
    env.turn(SID);
    env.config("");
    env.script_reply(1, &adds("- A fact."));
    env.saved_turn(SID_OTHER, 1);
    let out = env.cmd(&["sessions"]).run().ok().stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert_eq!(lines[0], format!("  session   {SID_OTHER} · proj"));
    assert!(lines[1].starts_with("  save      1 tried, last ") && lines[1].ends_with(" (+1)"), "{out}");
    assert_eq!(lines[2], format!("  session   {SID} · proj"));
    assert!(
        lines[3].starts_with("  save      held until ")
            && lines[3].ends_with(" · 1 turn not yet saved · 0 tried, no save yet"),
        "{out}"
    );
    let one = env.cmd(&["sessions", SID, "--json"]).run().ok().json();
    assert_eq!(one.as_array().map(|a| a.len()), Some(1), "{one:#}");
    assert_eq!((one[0]["session_id"].as_str(), one[0]["unsaved_turns"].as_u64()), (Some(SID), Some(1)), "{one:#}");
    env.cmd(&["sessions", "no-such-session", "--json"]).stdout("[]\n").run().ok();
    let unknown = "no session no-such-session on this machine (memory-save sessions lists them)\n";
    env.cmd(&["sessions", "no-such-session"]).stdout(unknown).run().ok();
    let bad = env.cmd(&["sessions", "../x"]).status(2).run();
    assert!(bad.stderr.contains("\"../x\" is not a session id"), "{bad:#?}");
}

/// A planted session file's times at the calendar's edge print, east of
/// UTC too, rather than abort the listing.
#[test]
fn sessions_prints_a_planted_time_at_the_calendars_edge() {
    let env = Env::new();
    let edge = 253_402_300_799_i64; // 9999-12-31 23:59:59 UTC
    let planted = serde_json::json!({"version": 1, "protocol": {"job": {"held": {"until": edge}}},
        "outcome": {"status": {"text": "+1", "at": edge, "kind": "saved"}}});
    std::fs::create_dir_all(env.sessions_dir()).unwrap();
    std::fs::write(env.sessions_dir().join(format!("{SID}.json")), planted.to_string()).unwrap();
    let out = env.cmd(&["sessions"]).var("TZ", "Asia/Tokyo").run().ok().stdout;
    assert!(out.contains("held until 9999-12-31 23:59") && out.contains("last 9999-12-31 23:59:59 (+1)"), "{out}");
}

/// A session file no hook could read (a link, a newer release's) is named
/// with why, not shown as a fresh session; a garbled one is what the hooks
/// take it for, a fresh one.
#[test]
fn sessions_names_a_file_it_cannot_read_and_why() {
    let env = Env::new();
    let dir = env.sessions_dir();
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("a-newer.json"), r#"{"version": 99, "protocol": {}}"#).unwrap();
    std::fs::write(env.root().join("elsewhere.json"), "{}").unwrap();
    std::os::unix::fs::symlink(env.root().join("elsewhere.json"), dir.join("b-link.json")).unwrap();
    std::fs::write(dir.join("c-garbled.json"), "{garbled").unwrap();
    mkfifo(&dir.join("d-fifo.json"));
    let out = env.cmd(&["sessions"]).run().ok().stdout;
    let dir = dir.display();
    let expected = format!(
        "  session   a-newer · no project yet
  save      unreadable: {dir}/a-newer.json was written by a newer memory-save (record version 99); upgrade memory-save to change it
  session   b-link · no project yet
  save      unreadable: {dir}/b-link.json is a symlink; memory-save reads only real files: replace it with a file
  session   c-garbled · no project yet
  save      0 tried, no save yet
  session   d-fifo · no project yet
  save      unreadable: {dir}/d-fifo.json is not a regular file but a FIFO; memory-save does not open it: move it away
"
    );
    assert_eq!(out, expected);
}
