//! The command line: one file per subcommand, behind `Run`. clap parses
//! every command but `hook`, whose words `main` hands to `hook::words` first.

pub mod adopt;
pub mod colour;
pub mod completions;
pub mod cost;
pub mod doctor;
pub mod edit;
pub mod exit;
pub mod guards;
pub mod history;
pub mod import;
pub mod install;
pub mod list;
pub mod merge_driver;
pub mod restore;
pub mod review;
pub mod sessions;
pub mod show;
pub mod status;
pub mod statusline;
pub mod sync;
pub mod team;
pub mod worker;

use std::io::Write;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

use crate::store::state::{SessionId, SessionState, SessionStore};

pub trait Run {
    fn run(&self) -> Result<()>;
}

/// Writes `text` to stdout, the one door to the terminal: no escape
/// sequence, bidi or invisible character passes (they print as `\u{…}`). A
/// closed pipe (`… | head`) is an error whose chain holds `BrokenPipe`,
/// which `main` ends on quietly instead of `print!`'s panic.
pub fn print(text: &str) -> Result<()> {
    print_painted(&crate::memory::text::visible(text))
}

/// Writes text made by `colour::Colour`, whose every piece already passed
/// `visible`: the colour codes it added are the only escapes in it.
pub fn print_painted(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write to stdout")
}

/// Prints `value` as pretty JSON for scripts, with no character a terminal
/// acts on and dollars (keys ending `usd`) rounded to six decimals.
pub fn print_json<T: serde::Serialize>(value: &T) -> Result<()> {
    let mut value = serde_json::to_value(value).context("cannot encode the JSON")?;
    round_dollars(&mut value);
    println(&crate::memory::text::json_visible(&serde_json::to_string_pretty(&value)?))
}

fn round_dollars(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                let dollars = v.as_f64().filter(|_| v.is_f64() && key.ends_with("usd"));
                match dollars.and_then(|usd| serde_json::Number::from_f64(crate::memory::cost::round_usd(usd))) {
                    Some(rounded) => *v = rounded.into(),
                    None => round_dollars(v),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(round_dollars),
        _ => {}
    }
}

/// One labelled line of a report (`status`, `cost`): its text in a column
/// after the label, one line whatever it holds (a repository's origin or a
/// synced file can hold a line break that would forge a row of its own).
pub fn row(out: &mut String, label: &str, text: impl std::fmt::Display) {
    out.push_str(&format!("  {label:<10}{}\n", one_line(&text.to_string())));
}

/// A value printed within a line: its line breaks shown, so it cannot
/// forge a line of its own.
pub fn one_line(text: &str) -> String {
    text.replace('\r', "\\r").replace('\n', "\\n")
}

/// `print` for stderr: a reader that went away changes no exit code, where
/// `eprint!` would abort.
pub fn eprint(text: &str) {
    let _ = std::io::stderr().write_all(crate::memory::text::visible(text).as_bytes());
}

/// `print` with a newline.
pub fn println(text: &str) -> Result<()> {
    print(&format!("{text}\n"))
}

pub fn cwd() -> Result<std::path::PathBuf> {
    std::env::current_dir().context("cannot read the current folder")
}

/// A worker killed mid-save never cleared its claim: with no worker holding
/// the session's lock, nothing is saving. The save is owed while the
/// session's next hook or its project's next start will take it over
/// (`Protocol::without_worker`); an ended session's that no start can take is
/// owed to nobody.
pub fn clear_dead_claim(sessions: &SessionStore, id: &SessionId, state: &mut SessionState) {
    let job = state.protocol.job;
    if job.claimed_since().is_some() && !sessions.worker_running(id) {
        let taken = crate::save::queue::a_start_takes_over(state) && sessions.claim_marked(id);
        let owed = !state.protocol.turn.ended || taken;
        state.protocol.job = if owed { state.protocol.without_worker() } else { crate::store::state::Job::Idle };
    }
}

/// The current folder's project, as every command that works on one finds it.
pub struct Here {
    pub roots: crate::store::paths::Roots,
    pub cwd: std::path::PathBuf,
    pub config: crate::config::Config,
    pub project: crate::project::Project,
    pub folder: crate::store::folder::Folder,
}

pub fn here() -> Result<Here> {
    let (roots, cwd) = (crate::config::roots()?, cwd()?);
    let config = crate::config::of(&roots);
    let project = crate::project::locate(&cwd, &roots, &config)?;
    Ok(Here { folder: project.folder(&roots), roots, cwd, config, project })
}

/// `here` for a command that writes the memory (import, edit): what the
/// user writes in a repository is that repository's memory, so its
/// identity and first commit are recorded first, as a save's are.
pub fn here_to_write() -> Result<Here> {
    let (roots, cwd) = (crate::config::roots()?, cwd()?);
    let config = crate::config::of(&roots);
    let project = crate::project::settled(&cwd, &roots, &config)?;
    Ok(Here { folder: project.folder(&roots), roots, cwd, config, project })
}

/// The command line: one subcommand a run (hooks are read before it, by
/// `hook::words`, to stay fast).
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
    List(list::ListArgs),
    Sessions(sessions::SessionsArgs),
    Show(show::ShowArgs),
    Edit(edit::EditArgs),
    Import(import::ImportArgs),
    Doctor(doctor::DoctorArgs),
    History(history::HistoryArgs),
    Undo(history::UndoArgs),
    Review(review::ReviewArgs),
    Guards(guards::GuardsArgs),
    Adopt(adopt::AdoptArgs),
    Restore(restore::RestoreArgs),
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
            Command::List(c) => c.run(),
            Command::Sessions(c) => c.run(),
            Command::Show(c) => c.run(),
            Command::Edit(c) => c.run(),
            Command::Import(c) => c.run(),
            Command::Doctor(c) => c.run(),
            Command::History(c) => c.run(),
            Command::Undo(c) => c.run(),
            Command::Review(c) => c.run(),
            Command::Guards(c) => c.run(),
            Command::Adopt(c) => c.run(),
            Command::Restore(c) => c.run(),
            Command::Cost(c) => c.run(),
            Command::Sync(c) => c.run(),
            Command::Team(c) => c.run(),
            Command::Statusline(c) => c.run(),
            Command::Completions(c) => c.run(),
            // The variant exists for `hook --help` alone, which clap answers.
            Command::Hook(_) => unreachable!("hooks are run before the command line is parsed"),
            Command::Worker(c) => c.run(),
            Command::MergeDriver(c) => c.run(),
        }
    }
}

/// The command line without the hidden subcommands, which clap would
/// otherwise suggest for a typo and offer in shell completions.
pub fn visible_command() -> clap::Command {
    use clap::CommandFactory;
    let full = Cli::command();
    let visible: Vec<clap::Command> = full.get_subcommands().filter(|c| !c.is_hide_set()).cloned().collect();
    clap::Command::new("memory-save")
        .subcommands(visible)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .disable_help_subcommand(true)
        .after_help(exit::HELP)
        .about(full.get_about().cloned().unwrap_or_default())
        .version(env!("CARGO_PKG_VERSION"))
}

/// `hook <event> [--part N]`, for `--help` only: hooks are parsed by
/// `hook::words`.
#[derive(Debug, clap::Args)]
pub struct HookArgs {
    /// Every event's word, from the events table, so none is left out.
    #[arg(
        allow_hyphen_values = true,
        num_args = 0..,
        help = format!("one of: {}; then `--part N` for session-start", crate::claude::events::HookEvent::words())
    )]
    words: Vec<String>,
}

#[cfg(test)]
mod tests {
    #[test]
    fn hook_help_names_every_event_and_mistypes_never_suggest_a_hidden_command() {
        use clap::CommandFactory;
        let help = super::Cli::command().find_subcommand_mut("hook").unwrap().render_help().to_string();
        for event in crate::claude::events::HookEvent::ALL {
            assert!(help.contains(event.word()), "{} missing: {help}", event.word());
        }
        for (typed, hidden) in [("hoo", "hook"), ("worke", "worker"), ("merge-drive", "merge-driver")] {
            let err = super::visible_command().try_get_matches_from(["memory-save", typed]).unwrap_err().to_string();
            assert!(!err.contains(&format!("'{hidden}'")), "{err}");
        }
        let err = super::visible_command().try_get_matches_from(["memory-save", "stauts"]).unwrap_err().to_string();
        assert!(err.contains("'status'"), "{err}");
    }

    #[test]
    fn json_dollars_are_rounded_to_six_decimals_wherever_they_sit() {
        let mut value = serde_json::json!({
            "cost_usd": 0.010119999999999997,
            "saves": 3,
            "share": 0.333333333333,
            "sessions": [{"session_cost_usd": 1.2345678912, "limit_usd": 5}],
        });
        super::round_dollars(&mut value);
        assert_eq!(
            value,
            serde_json::json!({
                "cost_usd": 0.01012,
                "saves": 3,
                "share": 0.333333333333,
                "sessions": [{"session_cost_usd": 1.234568, "limit_usd": 5}],
            })
        );
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
