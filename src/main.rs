//! memory-save: one binary, run by Claude Code's command hooks, that keeps a
//! per-project MEMORY.md current through a background fork of the session.
//!
//! `main` owns the exit code. Hooks always exit 0: an internal error goes to
//! our log, never into the user's session.

mod cli;
mod folder;
mod fsutil;
mod hook;
mod install;
mod log;
mod paths;
mod project;
mod report;
mod save;
mod state;
mod statusline;

use std::process::ExitCode;

// The pure core lives in the library target (src/lib.rs) so cargo-fuzz can
// reach it; `crate::memory::...` paths keep working through this import.
use memory_save::memory;

use cli::Command;

fn main() -> ExitCode {
    let command = match cli::parse(std::env::args_os().skip(1).collect()) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("memory-save: {e:#}\n\n{}", cli::USAGE);
            return ExitCode::from(2);
        }
    };
    let result = match command {
        Command::Hook { event, part } => {
            if let Err(e) = hook::run(event, part) {
                log::error(&format!("hook {event:?}: {e:#}"));
            }
            return ExitCode::SUCCESS;
        }
        Command::Worker { session } => {
            if let Err(e) = paths::Roots::from_env().and_then(|roots| save::queue::run_worker(&roots, &session)) {
                log::error(&format!("worker for session {session}: {e:#}"));
            }
            return ExitCode::SUCCESS;
        }
        Command::Statusline { wrapped } => statusline::run(&wrapped),
        Command::Install(args) => install::run_install(&args),
        Command::Uninstall(args) => install::run_uninstall(&args),
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
