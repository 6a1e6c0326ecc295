//! memory-save: one binary, run by Claude Code's command hooks, that keeps a
//! per-project MEMORY.md current through a background fork of the session.
//! `run` owns the exit code (`cmd::exit`); a hook always exits 0.

// A hook is a new process on every tool call: the C entry point below skips
// Rust's own start, whose stack guard for the main thread reads
// /proc/self/maps (docs/development.md, the speed of a hook).
#![cfg_attr(not(test), no_main)]

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

use clap::Parser;

// The pure core lives in the library target (src/lib.rs) so cargo-fuzz can
// reach it; `crate::memory::...` paths keep working through this import.
use memory_save::memory;

use cmd::Run;

/// The process's entry. `sys::start_process` does what of Rust's start a
/// program that writes to stdio needs; the rest (a main thread's stack
/// guard, its name) is left out. The arguments are read from `argv`, not
/// `std::env::args`, which only Rust's start fills on some targets (musl).
#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(argc: std::ffi::c_int, argv: *const *const std::ffi::c_char) -> std::ffi::c_int {
    sys::start_process();
    // SAFETY: the C runtime passes `argc` strings in `argv`, each ending in NUL.
    let args = unsafe { sys::arguments(argc, argv) };
    let code = run(args);
    // Rust's start flushes stdout at the end; this one must.
    let _ = std::io::Write::flush(&mut std::io::stdout());
    code.into()
}

/// The arguments after the program's name.
#[cfg_attr(test, allow(dead_code))]
fn run(args: Vec<std::ffi::OsString>) -> u8 {
    // The log goes into the state folder, known once the roots are.
    let _ = config::roots();
    if let Some(words) = hook::words::hook_words(&args) {
        // A hook never fails the session, not even when registered wrongly
        // (an event this version does not know): exit 2 would block it.
        if let Err(e) = hook::words::hook_args(&words).and_then(hook::run) {
            store::log::error(&format!("hook {}: {e:#}", words.join(" ")));
        }
        return cmd::exit::DONE;
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
            if !e.use_stderr() {
                let _ = e.print();
                return cmd::exit::DONE;
            }
            // The error repeats what was typed, escapes and all: shown, not acted on.
            cmd::eprint(&e.render().to_string());
            return cmd::exit::USAGE;
        }
    };
    match cli.command.run() {
        Ok(()) => cmd::exit::DONE,
        Err(e) if is_broken_pipe(&e) => cmd::exit::DONE,
        Err(e) => {
            cmd::eprint(&format!("memory-save: {e:#}\n"));
            let problems = e.downcast_ref::<cmd::exit::ProblemsFound>().is_some();
            if problems { cmd::exit::PROBLEMS_FOUND } else { cmd::exit::FAILED }
        }
    }
}

/// A reader that went away (`memory-save history | head`) is not a failure.
#[cfg_attr(test, allow(dead_code))]
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error
        .chain()
        .any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe))
}
