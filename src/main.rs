//! memory-save: one binary, run by Claude Code's command hooks, that keeps a
//! per-project MEMORY.md current through a background fork of the session.
//! `main` owns the exit code (`cmd::exit`); a hook always exits 0.

mod claude;
mod cmd;
mod config;
mod env;
mod git;
mod hook;
mod process;
mod project;
mod restore;
mod save;
mod store;
mod sync;
mod sys;
mod team;

use std::process::ExitCode;

use clap::Parser;

// The pure core lives in the library target (src/lib.rs) so cargo-fuzz can
// reach it; `crate::memory::...` paths keep working through this import.
use memory_save::memory;

use cmd::Run;

fn main() -> ExitCode {
    // The log goes into the state folder, known once the roots are.
    let _ = config::roots();
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if let Some(words) = hook::words::hook_words(&args) {
        // A hook never fails the session, not even when registered wrongly
        // (an event this version does not know): exit 2 would block it.
        if let Err(e) = hook::words::hook_args(&words).and_then(hook::run) {
            store::log::error(&format!("hook {}: {e:#}", words.join(" ")));
        }
        return ExitCode::from(cmd::exit::DONE);
    }
    let argv: Vec<std::ffi::OsString> = std::iter::once("memory-save".into()).chain(args).collect();
    let cli = match cmd::Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        // --help and --version print and exit 0; usage errors exit 2.
        Err(e) => {
            // A mistyped command is answered by the command line a person
            // sees, whose suggestions never name a hidden subcommand.
            let e = match e.kind() {
                clap::error::ErrorKind::InvalidSubcommand => {
                    cmd::visible_command().try_get_matches_from(&argv).err().unwrap_or(e)
                }
                _ => e,
            };
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { cmd::exit::USAGE } else { cmd::exit::DONE });
        }
    };
    match cli.command.run() {
        Ok(()) => ExitCode::from(cmd::exit::DONE),
        Err(e) if is_broken_pipe(&e) => ExitCode::from(cmd::exit::DONE),
        Err(e) => {
            eprintln!("memory-save: {}", crate::memory::text::visible(&format!("{e:#}")));
            let problems = e.downcast_ref::<cmd::exit::ProblemsFound>().is_some();
            ExitCode::from(if problems { cmd::exit::PROBLEMS_FOUND } else { cmd::exit::FAILED })
        }
    }
}

/// A reader that went away (`memory-save history | head`) is not a failure.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}
