//! The command line. clap parses every command but `hook`: a hook runs on
//! every tool call, and its two words are read by hand (`hook_args`), so a
//! newer hooks.json, an unknown event or a bad flag is logged and exits 0
//! instead of failing, which would block the user's prompt or stop.

use std::ffi::OsString;

use anyhow::{Result, bail};
use clap::{Parser, Subcommand};

use crate::cmd;

/// Exit codes, as `--help` and the README document them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  done (a hook always exits 0, whatever happened; see the log)
  1  the command failed, or doctor found a problem
  2  usage error: an unknown command, flag or value";

#[derive(Debug, Parser)]
#[command(
    name = "memory-save",
    version,
    about = "A per-project MEMORY.md for Claude Code, kept current in the background",
    after_help = EXIT_CODES,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Install(cmd::install::InstallArgs),
    Uninstall(cmd::install::UninstallArgs),
    Status(cmd::status::StatusArgs),
    Doctor(cmd::doctor::DoctorArgs),
    History(cmd::history::HistoryArgs),
    Undo(cmd::history::UndoArgs),
    Review(cmd::review::ReviewArgs),
    Statusline(cmd::statusline::StatuslineArgs),
    Completions(cmd::completions::CompletionsArgs),
    /// Run as a Claude Code hook, the hook JSON on stdin (registered by
    /// install; always exits 0).
    #[command(hide = true)]
    Hook(HookArgs),
    /// Run the saves a session asked for (started by the hooks).
    #[command(hide = true)]
    Worker(cmd::worker::WorkerArgs),
}

impl cmd::Run for Command {
    fn run(&self) -> Result<()> {
        match self {
            Command::Install(c) => c.run(),
            Command::Uninstall(c) => c.run(),
            Command::Status(c) => c.run(),
            Command::Doctor(c) => c.run(),
            Command::History(c) => c.run(),
            Command::Undo(c) => c.run(),
            Command::Review(c) => c.run(),
            Command::Statusline(c) => c.run(),
            Command::Completions(c) => c.run(),
            Command::Hook(c) => crate::hook::run(hook_args(&c.words)?),
            Command::Worker(c) => c.run(),
        }
    }
}

/// `hook <event> [--part N]`, for `--help` only: hooks are parsed by
/// `hook_args`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// session-start, user-prompt-submit, post-tool-use, stop or session-end,
    /// then `--part N` for session-start.
    #[arg(allow_hyphen_values = true, num_args = 0..)]
    words: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    SessionStart,
    UserPromptSubmit,
    PostToolUse,
    Stop,
    SessionEnd,
}

impl HookEvent {
    pub fn from_arg(arg: &str) -> Option<HookEvent> {
        Some(match arg {
            "session-start" => HookEvent::SessionStart,
            "user-prompt-submit" => HookEvent::UserPromptSubmit,
            "post-tool-use" => HookEvent::PostToolUse,
            "stop" => HookEvent::Stop,
            "session-end" => HookEvent::SessionEnd,
            _ => return None,
        })
    }
}

/// The words after `hook`: the event, and `--part N` for session-start.
pub fn hook_args(words: &[impl AsRef<str>]) -> Result<(HookEvent, usize)> {
    let words: Vec<&str> = words.iter().map(AsRef::as_ref).collect();
    let Some(event) = words.first().and_then(|e| HookEvent::from_arg(e)) else {
        bail!("hook needs an event: session-start, user-prompt-submit, post-tool-use, stop or session-end");
    };
    let part = match words.get(1..).unwrap_or_default() {
        [] => 1,
        ["--part", n] => match n.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => bail!("--part takes a number from 1 up"),
        },
        other => bail!("unknown hook arguments {other:?}"),
    };
    Ok((event, part))
}

/// The words after `hook`, when this is a hook run (and not a request for
/// its help).
pub fn hook_words(args: &[OsString]) -> Option<Vec<String>> {
    let (first, rest) = args.split_first()?;
    if first != "hook" || rest.iter().any(|a| a == "--help" || a == "-h") {
        return None;
    }
    Some(rest.iter().map(|a| a.to_string_lossy().into_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_words_are_read_by_hand() {
        assert_eq!(hook_args(&["stop"]).unwrap(), (HookEvent::Stop, 1));
        assert_eq!(hook_args(&["session-start", "--part", "3"]).unwrap(), (HookEvent::SessionStart, 3));
        for bad in [&["pre-compact"][..], &[], &["stop", "--part"], &["session-start", "--part", "0"], &["stop", "-x"]]
        {
            assert!(hook_args(bad).is_err(), "{bad:?}");
        }
        let args = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(hook_words(&args(&["hook", "stop"])), Some(vec!["stop".to_string()]));
        assert_eq!(hook_words(&args(&["hook", "stop", "--help"])), None);
        assert_eq!(hook_words(&args(&["status"])), None);
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
