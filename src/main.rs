//! memory-save: one binary, run by Claude Code's command hooks, that keeps a
//! per-project MEMORY.md current through a background fork of the session.
//!
//! `main` owns the exit code. Hooks always exit 0: an internal error goes to
//! our log, never into the user's session.

mod claude;
mod cli;
mod cmd;
mod config;
mod deadline;
mod env;
mod hook;
mod project;
mod report;

mod save;
mod store;

use std::process::ExitCode;

// The pure core lives in the library target (src/lib.rs) so cargo-fuzz can
// reach it; `crate::memory::...` paths keep working through this import.
use memory_save::memory;

use cli::Command;

fn main() -> ExitCode {
    // The log goes into the state folder, known once the roots are.
    let _ = config::roots();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let is_hook = args.first().is_some_and(|a| a == "hook");
    let command = match cli::parse(args) {
        Ok(command) => command,
        // A hook never fails the session, not even when registered wrongly
        // (an event this version does not know): exit 2 would block it.
        Err(e) if is_hook => {
            store::log::error(&format!("{e:#}"));
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("memory-save: {e:#}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    if matches!(
        command,
        Command::Status(_)
            | Command::Doctor(_)
            | Command::History(_)
            | Command::Review(_)
            | Command::Help
            | Command::Version
    ) {
        // A report piped into `head` should end quietly, as other tools do,
        // not panic on the closed pipe. Not for commands that write to a
        // child's pipe (statusline feeds the user's own command, which may
        // exit without reading): there the write error is handled instead.
        // SAFETY: setting a signal disposition before any thread exists.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    let result = match command {
        Command::Hook { event, part } => {
            if let Err(e) = hook::run(event, part) {
                store::log::error(&format!("hook {event:?}: {e:#}"));
            }
            return ExitCode::SUCCESS;
        }
        Command::Worker { session } => {
            if let Err(e) = config::roots().and_then(|roots| save::queue::run_worker(&roots, &session)) {
                store::log::error(&format!("worker for session {session}: {e:#}"));
            }
            return ExitCode::SUCCESS;
        }
        Command::Statusline { wrapped } => cmd::statusline::run(&wrapped),
        Command::Install(args) => cmd::install::run_install(&args),
        Command::Uninstall(args) => cmd::install::run_uninstall(&args),
        Command::Status(args) => cmd::status::run(&args),
        Command::Doctor(args) => cmd::doctor::run(&args),
        Command::History(args) => cmd::history::run_list(&args),
        Command::Undo(args) => cmd::history::run_undo(&args),
        Command::Review(args) => cmd::review::run(&args),
        Command::Help => {
            print!("{}", cli::USAGE);
            Ok(())
        }
        Command::Version => {
            println!("memory-save {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memory-save: {e:#}");
            ExitCode::FAILURE
        }
    }
}
