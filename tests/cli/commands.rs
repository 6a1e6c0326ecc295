//! The command line behaves like the tools people know: help everywhere,
//! usage errors with a hint and exit 2, completions, a closed pipe ends
//! quietly.

use std::io::Read;
use std::process::{Command, Stdio};

use crate::support::*;

const COMMANDS: [&str; 11] = [
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
            let out = env.cmd(&[command, flag]).run();
            assert_eq!(out.code, Some(0), "{command} {flag}: {out:#?}");
            assert!(out.stdout.contains(&format!("Usage: memory-save {command}")), "{command} {flag}: {out:#?}");
            assert_eq!(out.stderr, "", "{command} {flag}");
        }
    }
    let top = env.cmd(&["--help"]).run().ok();
    for shown in &COMMANDS[..9] {
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
        let out = env.cmd(args).run();
        assert_eq!(out.code, Some(2), "{args:?}: {out:#?}");
        assert!(
            out.stderr.contains("Usage: memory-save") || out.stderr.contains("For more information"),
            "{args:?}: {out:#?}"
        );
        assert_eq!(out.stdout, "", "{args:?}");
    }
    let suggestion = env.cmd(&["stauts"]).run();
    assert!(
        suggestion.stderr.contains("similar subcommands exist") && suggestion.stderr.contains("'status'"),
        "{suggestion:#?}"
    );
    // Under `hook`, an unknown event (a newer hooks.json), a bad flag or bad
    // input is logged and exits 0: exit 2 would block the prompt or stop.
    for args in [&["hook", "post-compact"][..], &["hook", "stop", "--bogus"], &["hook"]] {
        let out = env.cmd(args).stdin("{}").run();
        assert_eq!(out.code, Some(0), "{args:?}: {out:#?}");
        assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""), "{args:?}");
    }
    assert_eq!(env.log().lines().count(), 3, "one log line each:\n{}", env.log());
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
    }
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
