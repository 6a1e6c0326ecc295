//! The command line and its subcommands, one file each, behind one `Run`
//! trait (as zoxide's `src/cmd/`). clap parses every command but `hook`,
//! whose words `main` hands to `hook::words` first.

pub mod adopt;
pub mod colour;
pub mod completions;
pub mod cost;
pub mod doctor;
pub mod edit;
pub mod exit;
pub mod history;
pub mod import;
pub mod install;
pub mod merge_driver;
pub mod resume;
pub mod review;
pub mod show;
pub mod status;
pub mod statusline;
pub mod sync;
pub mod team;
pub mod worker;

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

pub trait Run {
    fn run(&self) -> Result<()>;
}

/// Writes `text` to stdout. A closed pipe (`… | head`) comes back as an
/// error whose chain holds `BrokenPipe`, which `main` ends on quietly, as
/// ripgrep does, instead of the panic `print!` would give.
pub fn print(text: &str) -> Result<()> {
    // The one door to the terminal: whatever a command prints, memory text,
    // a reply's words or a folder's name, passes no escape sequence, bidi
    // or invisible character (they come out as visible `\u{…}`).
    let text = crate::memory::text::visible(text);
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write to stdout")
}

/// Writes text made by `colour::Colour`, whose every piece already passed
/// `visible`: the colour codes it added are the only escapes in it.
pub fn print_painted(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write to stdout")
}

/// `print` with a newline.
pub fn println(text: &str) -> Result<()> {
    print(&format!("{text}\n"))
}

/// Exit codes, as `--help` and the README document them.

#[derive(Debug, Parser)]
#[command(
    name = "memory-save",
    version,
    about = "A per-project MEMORY.md for Claude Code, kept current in the background",
    after_help = exit::HELP,
    disable_help_subcommand = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Install(install::InstallArgs),
    Uninstall(install::UninstallArgs),
    Status(status::StatusArgs),
    Show(show::ShowArgs),
    Edit(edit::EditArgs),
    Import(import::ImportArgs),
    Doctor(doctor::DoctorArgs),
    History(history::HistoryArgs),
    Undo(history::UndoArgs),
    Review(review::ReviewArgs),
    Resume(resume::ResumeArgs),
    Adopt(adopt::AdoptArgs),
    Cost(cost::CostArgs),
    Sync(sync::SyncArgs),
    Team(team::TeamArgs),
    Statusline(statusline::StatuslineArgs),
    Completions(completions::CompletionsArgs),
    /// Run as a Claude Code hook, the hook JSON on stdin (registered by
    /// install; always exits 0).
    #[command(hide = true)]
    Hook(HookArgs),
    /// Run the saves a session asked for (started by the hooks).
    #[command(hide = true)]
    Worker(worker::WorkerArgs),
    /// Merge two versions of a memory file for git (git runs it).
    #[command(hide = true)]
    MergeDriver(merge_driver::MergeDriverArgs),
}

impl Run for Command {
    fn run(&self) -> Result<()> {
        match self {
            Command::Install(c) => c.run(),
            Command::Uninstall(c) => c.run(),
            Command::Status(c) => c.run(),
            Command::Show(c) => c.run(),
            Command::Edit(c) => c.run(),
            Command::Import(c) => c.run(),
            Command::Doctor(c) => c.run(),
            Command::History(c) => c.run(),
            Command::Undo(c) => c.run(),
            Command::Review(c) => c.run(),
            Command::Resume(c) => c.run(),
            Command::Adopt(c) => c.run(),
            Command::Cost(c) => c.run(),
            Command::Sync(c) => c.run(),
            Command::Team(c) => c.run(),
            Command::Statusline(c) => c.run(),
            Command::Completions(c) => c.run(),
            Command::Hook(c) => crate::hook::run(crate::hook::words::hook_args(&c.words)?),
            Command::Worker(c) => c.run(),
            Command::MergeDriver(c) => c.run(),
        }
    }
}

/// `hook <event> [--part N]`, for `--help` only: hooks are parsed by
/// `hook::words`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// session-start, user-prompt-submit, post-tool-use, stop or session-end,
    /// then `--part N` for session-start.
    #[arg(allow_hyphen_values = true, num_args = 0..)]
    words: Vec<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
