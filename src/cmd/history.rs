//! `memory-save history [--line TEXT]` and `memory-save undo`.

use anyhow::{Context, Result, bail};

use crate::store::folder::Folder;
use crate::store::history::{Entry, list, undo};

fn current_folder() -> Result<Folder> {
    let roots = crate::config::roots()?;
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let project = crate::project::locate(&cwd, &roots.memory, &crate::config::of(&roots))?;
    Ok(project.folder(&roots))
}

/// The recorded changes of this project's memory files, newest first, each
/// with the session, turn and cost of the save that made it.
#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// Show the change that added this MEMORY.md line (exactly, without its
    /// list marker, or containing the text).
    #[arg(long, value_name = "TEXT")]
    line: Option<String>,
}

impl super::Run for HistoryArgs {
    fn run(&self) -> Result<()> {
        run_list(self.line.as_deref())
    }
}

/// Put the files back as they were before the newest change (recorded too,
/// so a second undo redoes).
#[derive(Debug, clap::Args)]
pub struct UndoArgs {}

impl super::Run for UndoArgs {
    fn run(&self) -> Result<()> {
        run_undo()
    }
}

fn run_list(wanted: Option<&str>) -> Result<()> {
    let folder = current_folder()?;
    let entries = list(&folder)?;
    if entries.is_empty() {
        super::println(&format!("no history for project {} yet", folder.project))?;
        return Ok(());
    }
    let Some(wanted) = wanted else {
        for (number, entry) in &entries {
            super::println(&crate::memory::text::visible(&describe(*number, entry)))?;
        }
        return Ok(());
    };
    match find_line(&entries, wanted) {
        Some((number, entry, line)) => {
            let text = format!("{}\n       added: {line}", describe(*number, entry));
            super::println(&crate::memory::text::visible(&text))?;
            Ok(())
        }
        None => bail!("no recorded change of project {} added a line like {wanted:?}", folder.project),
    }
}

/// The newest entry that added `wanted`: the line itself, else the line
/// without its list marker, else a line that contains it.
fn find_line<'a>(entries: &'a [(u64, Entry)], wanted: &str) -> Option<(&'a u64, &'a Entry, &'a str)> {
    use crate::memory::apply::strip_marker;
    let wanted = wanted.trim();
    let tests: [&dyn Fn(&str) -> bool; 3] = [
        &|line: &str| line.trim() == wanted,
        &|line: &str| strip_marker(line) == strip_marker(wanted),
        &|line: &str| line.contains(wanted),
    ];
    tests.iter().find_map(|matches| {
        entries.iter().find_map(|(number, entry)| {
            entry.added.iter().find(|line| matches(line)).map(|line| (number, entry, line.as_str()))
        })
    })
}

/// `#12    2026-12-01 14:32:05  <message>  [MEMORY.md]  session c7913528… turn fc187592… $0.0123`
fn describe(number: u64, entry: &Entry) -> String {
    let files: Vec<&str> = entry.files.keys().map(String::as_str).collect();
    let mut line =
        format!("#{number:<5} {}  {}  [{}]", crate::env::timestamp(entry.at), entry.message, files.join(", "));
    let short = |id: &str| crate::memory::text::shorten(id, 8);
    let o = &entry.origin;
    if let Some(session) = &o.session_id {
        line.push_str(&format!("  session {}", short(session)));
    }
    if let Some(prompt) = &o.prompt_id {
        line.push_str(&format!(" turn {}", short(prompt)));
    }
    if let Some(cost) = o.cost_usd {
        line.push_str(&format!(" ${cost:.4}"));
    }
    if let Some(by) = &o.by {
        line.push_str(&format!("  by {by}"));
    }
    line
}

/// `memory-save undo`.
fn run_undo() -> Result<()> {
    let folder = current_folder()?;
    let message = undo(&folder)?;
    super::println(&format!(
        "memory-save: undid \"{message}\" in {}; run undo again to redo it",
        folder.dir.display()
    ))?;
    Ok(())
}
