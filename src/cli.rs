//! The subcommands and their flags, in one place. Parsed by hand: the hot
//! hooks start on every tool call, and a parser crate buys nothing here.

use std::ffi::OsString;

use anyhow::{Result, bail};

pub const USAGE: &str = "\
memory-save: a per-project MEMORY.md for Claude Code, kept current in the background

usage:
  memory-save install [--project] [--dry-run] [--statusline]
                                 register the hooks in ~/.claude/settings.json
  memory-save uninstall [--project] [--dry-run]
                                 remove exactly our hooks again
  memory-save status [--json]    this project's memory, its size, the last saves and their cost
  memory-save doctor             check the setup; exit 1 when something is wrong
  memory-save history [--line TEXT]
                                 list the recorded changes of this project's memory files
                                 (with where each came from); --line: the change that added TEXT
  memory-save review [--approve ID | --reject ID]
                                 CRITICAL RULES changes held by review = \"rules\"
  memory-save undo               put the files back as they were before the last change
  memory-save statusline [-- <your status command>...]
                                 print this session's save state (status-line JSON on stdin)
  memory-save hook <event> [--part N]
                                 run as a Claude Code hook (session-start, user-prompt-submit,
                                 post-tool-use, stop, session-end); reads the hook JSON on stdin
  memory-save --version
";

#[derive(Debug, PartialEq, Eq)]
pub enum Command {
    Hook { event: HookEvent, part: usize },
    Worker { session: String },
    Statusline { wrapped: Vec<OsString> },
    Install(Vec<String>),
    Uninstall(Vec<String>),
    Status(Vec<String>),
    Doctor(Vec<String>),
    History(Vec<String>),
    Undo(Vec<String>),
    Review(Vec<String>),
    Help,
    Version,
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

pub fn parse(args: Vec<OsString>) -> Result<Command> {
    let mut args = args.into_iter();
    let Some(first) = args.next() else { return Ok(Command::Help) };
    let first = first.to_string_lossy().into_owned();
    let rest: Vec<OsString> = args.collect();
    let strings = || -> Vec<String> { rest.iter().map(|a| a.to_string_lossy().into_owned()).collect() };
    Ok(match first.as_str() {
        "hook" => {
            let rest = strings();
            let Some(event) = rest.first().and_then(|e| HookEvent::from_arg(e)) else {
                bail!("hook needs an event: session-start, user-prompt-submit, post-tool-use, stop or session-end");
            };
            let part = match rest.get(1).map(String::as_str) {
                None => 1,
                Some("--part") => match rest.get(2).and_then(|n| n.parse::<usize>().ok()) {
                    Some(n) if n >= 1 => n,
                    _ => bail!("--part takes a number from 1 up"),
                },
                Some(other) => bail!("unknown hook flag {other:?}"),
            };
            Command::Hook { event, part }
        }
        "worker" => {
            let rest = strings();
            match rest.as_slice() {
                [flag, sid] if flag == "--session" => Command::Worker { session: sid.clone() },
                _ => bail!("worker takes --session <id>"),
            }
        }
        "statusline" => {
            let wrapped = match rest.first().map(|a| a.to_string_lossy()) {
                None => Vec::new(),
                Some(a) if a == "--" => rest[1..].to_vec(),
                Some(a) => bail!("unknown statusline argument {a:?}; put your own status command after --"),
            };
            Command::Statusline { wrapped }
        }
        "install" => Command::Install(strings()),
        "uninstall" => Command::Uninstall(strings()),
        "status" => Command::Status(strings()),
        "doctor" => Command::Doctor(strings()),
        "history" => Command::History(strings()),
        "undo" => Command::Undo(strings()),
        "review" => Command::Review(strings()),
        "help" | "--help" | "-h" => Command::Help,
        "--version" | "-V" | "version" => Command::Version,
        other => bail!("unknown command {other:?}; run `memory-save --help`"),
    })
}
