//! `memory-save history [--line TEXT]` and `memory-save undo`.

use anyhow::{Result, bail};

use crate::memory::cost::usd;
use crate::store::changes::{History, Listed};

/// The recorded changes of this project's memory files, newest first, each
/// with the session, turn and cost of the save that made it.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct HistoryArgs {
    #[command(subcommand)]
    action: Option<HistoryAction>,
    /// Show the change that added this MEMORY.md line (exactly, without its
    /// list marker, or containing the text).
    #[arg(long, value_name = "TEXT")]
    line: Option<String>,
    /// Print it as JSON, for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Subcommand)]
enum HistoryAction {
    /// Show change N as a diff of the files it changed.
    Show {
        /// The change's number (`#N` in `memory-save history`; the `#` may be given).
        #[arg(value_parser = change_number)]
        number: u64,
        /// Print it as JSON, for scripts.
        #[arg(long)]
        json: bool,
    },
}

impl super::Run for HistoryArgs {
    fn run(&self) -> Result<()> {
        match &self.action {
            Some(HistoryAction::Show { number, json }) => run_show(*number, *json),
            None => run_list(self.line.as_deref(), self.json),
        }
    }
}

/// `12` or `#12`, as `history` shows it.
fn change_number(text: &str) -> std::result::Result<u64, String> {
    text.trim_start_matches('#')
        .parse()
        .map_err(|_| format!("{text:?} is not a change number (see memory-save history)"))
}

/// Put the files back as they were before the newest change (recorded too,
/// so a second undo redoes), or before change N with every later one.
#[derive(Debug, clap::Args)]
pub struct UndoArgs {
    /// Go back to before this change (`#N` in `memory-save history`),
    /// undoing every later change with it.
    #[arg(value_parser = change_number)]
    number: Option<u64>,
    /// Undo even though MEMORY.md or a topic file was edited after the last
    /// recorded change (that edit is lost).
    #[arg(long)]
    force: bool,
}

impl super::Run for UndoArgs {
    fn run(&self) -> Result<()> {
        let folder = super::here()?.folder;
        let _lock = folder.lock()?;
        let undone = History { folder: &folder }.undo(self.number, self.force)?;
        // With sync on, the undo is a commit too, as every change is.
        crate::sync::commit_change(&folder.dir, &undone.label, None, None)?;
        crate::save::publish_guards(&folder);
        let colour = super::colour::Colour::for_stdout();
        for (_, diff) in &undone.diffs {
            super::print_painted(&colour.diff(diff))?;
        }
        super::println(&format!(
            "memory-save: {} in {}; run undo again to take this back",
            undone.label,
            folder.dir.display()
        ))
    }
}

fn run_list(wanted: Option<&str>, json: bool) -> Result<()> {
    let folder = super::here()?.folder;
    let changes = History { folder: &folder }.changes()?;
    // Which change added a line: the local history records the lines.
    if let Some(wanted) = wanted {
        let Some((change, line)) = find_line(&changes, wanted) else {
            bail!("no recorded change of project {} added a line like {wanted:?}", folder.project);
        };
        return super::println(&format!("{}\n       added: {line}", describe(change)));
    }
    if json {
        return super::print_json(&changes);
    }
    if changes.is_empty() {
        return super::println(&format!("no history for project {} yet", folder.project));
    }
    let colour = super::colour::Colour::for_stdout();
    for change in &changes {
        let line = describe(change);
        let (head, rest) = line.split_at(line.find(' ').unwrap_or(line.len()));
        super::print_painted(&format!("{}{}\n", colour.number(head), colour.plain(rest)))?;
    }
    Ok(())
}

/// The newest change that added `wanted`: the line itself, else the line
/// without its list marker, else a line that contains it.
fn find_line<'a>(changes: &'a [Listed], wanted: &str) -> Option<(&'a Listed, &'a str)> {
    use crate::memory::apply::strip_marker;
    let wanted = wanted.trim();
    let tests: [&dyn Fn(&str) -> bool; 3] = [
        &|line: &str| line.trim() == wanted,
        &|line: &str| strip_marker(line) == strip_marker(wanted),
        &|line: &str| line.contains(wanted),
    ];
    tests.iter().find_map(|matches| {
        changes.iter().find_map(|c| c.added.iter().find(|line| matches(line)).map(|line| (c, line.as_str())))
    })
}

/// `#12    2026-12-01 14:32:05  <message>  [MEMORY.md]  session c7913528… turn fc187592… $0.0123`.
fn describe(change: &Listed) -> String {
    let short = |id: &String| crate::memory::text::shorten(id, 8);
    let o = &change.origin;
    let known = [
        (!change.files.is_empty()).then(|| format!("  [{}]", change.files.join(", "))),
        o.session_id.as_ref().map(|session| format!("  session {}", short(session))),
        o.prompt_id.as_ref().map(|prompt| format!(" turn {}", short(prompt))),
        o.cost_usd.map(|cost| format!(" {}", usd(cost))),
        o.cli_cost_usd.map(|cli| format!(" (the CLI said {})", usd(cli))),
        o.by.as_ref().map(|by| format!("  by {by}")),
    ];
    let known: String = known.into_iter().flatten().collect();
    format!("#{:<5} {}  {}{known}", change.number, crate::env::timestamp(change.at), change.message)
}

fn run_show(number: u64, json: bool) -> Result<()> {
    let folder = super::here()?.folder;
    let (change, diffs) = History { folder: &folder }.show(number)?;
    if json {
        let mut value = serde_json::to_value(&change)?;
        value["diff"] =
            diffs.into_iter().map(|(name, diff)| (name, diff.into())).collect::<serde_json::Map<_, _>>().into();
        return super::print_json(&value);
    }
    let colour = super::colour::Colour::for_stdout();
    super::print_painted(&format!("{}\n", colour.plain(&describe(&change))))?;
    for (_, diff) in &diffs {
        super::print_painted(&colour.diff(diff))?;
    }
    Ok(())
}
