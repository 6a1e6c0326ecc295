//! `memory-save history [--line TEXT]` and `memory-save undo`.

use anyhow::{Context, Result, bail};

use crate::store::folder::Folder;
use crate::store::history::{After, Before, Entry, apply_undo, list, plan_undo};

fn current_folder() -> Result<Folder> {
    let roots = crate::config::roots()?;
    let cwd = std::env::current_dir().context("cannot read the current folder")?;
    let project = crate::project::locate(&cwd, &roots.memory, &crate::config::of(&roots))?;
    Ok(project.folder(&roots))
}

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
        run_undo(self.number, self.force)
    }
}

fn run_list(wanted: Option<&str>, json: bool) -> Result<()> {
    let folder = current_folder()?;
    if wanted.is_none() && crate::sync::history::is_history(&folder.dir) {
        return list_git(&folder, json);
    }
    let entries = list(&folder)?;
    if json {
        let entries: Vec<_> = entries.iter().map(|(number, entry)| entry_json(*number, entry, false)).collect();
        return super::println(&crate::memory::text::json_visible(&serde_json::to_string_pretty(&entries)?));
    }
    if entries.is_empty() {
        super::println(&format!("no history for project {} yet", folder.project))?;
        return Ok(());
    }
    let Some(wanted) = wanted else {
        let colour = super::colour::Colour::for_stdout();
        for (number, entry) in &entries {
            let line = describe(*number, entry);
            let (head, rest) = line.split_at(line.find(' ').unwrap_or(line.len()));
            super::print_painted(&format!("{}{}\n", colour.number(head), colour.plain(rest)))?;
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

/// One entry for `--json`, with its files' text when `full`.
fn entry_json(number: u64, entry: &Entry, full: bool) -> serde_json::Value {
    let mut value = serde_json::json!({
        "number": number,
        "at": entry.at,
        "message": entry.message,
        "files": entry.files.keys().collect::<Vec<_>>(),
        "origin": entry.origin,
        "added": entry.added,
    });
    if full {
        value["before"] = serde_json::to_value(&entry.files).unwrap_or_default();
        value["after"] = serde_json::to_value(&entry.after).unwrap_or_default();
    }
    value
}

/// The text of each file of change `number` before and after it. Entries
/// of earlier versions did not record the after: it is the next entry's
/// before of that file, or the file now when no later change touched it.
fn before_and_after(folder: &Folder, number: u64, entries: &[(u64, Entry)]) -> Result<Vec<(String, String, String)>> {
    let Some((_, entry)) = entries.iter().find(|(n, _)| *n == number) else {
        bail!("project {} has no history entry #{number} (see memory-save history)", folder.project);
    };
    let mut files = Vec::new();
    for (name, before) in &entry.files {
        let recorded = entry.after.get(name);
        let later = entries.iter().rev().filter(|(n, _)| *n > number).find_map(|(_, e)| e.files.get(name));
        let now = || crate::store::folder::read_if_exists(&folder.dir.join(name)).ok().flatten().unwrap_or_default();
        let (old, new) = match (before, recorded) {
            (_, Some(After::Appended { text, .. })) => (String::new(), text.clone()),
            (Before::Length(_), None) => {
                (String::new(), String::from("(appended text not recorded by this version)\n"))
            }
            (before, after) => {
                let old = match before {
                    Before::Text(text) => text.clone(),
                    _ => String::new(),
                };
                let new = match (after, later) {
                    (Some(After::Text(text)), _) => text.clone(),
                    (Some(_), _) => String::new(),
                    (None, Some(Before::Text(text))) => text.clone(),
                    (None, Some(_)) => String::new(),
                    (None, None) => now(),
                };
                (old, new)
            }
        };
        files.push((name.clone(), old, new));
    }
    Ok(files)
}

/// With sync on, git's log is the history.
fn list_git(folder: &Folder, json: bool) -> Result<()> {
    let changes = crate::sync::history::changes(&folder.dir)?;
    if json {
        return super::println(&crate::memory::text::json_visible(&serde_json::to_string_pretty(&changes)?));
    }
    if changes.is_empty() {
        return super::println(&format!("no history for project {} yet", folder.project));
    }
    let colour = super::colour::Colour::for_stdout();
    for change in &changes {
        let line = git_line(change);
        let (head, rest) = line.split_at(line.find(' ').unwrap_or(line.len()));
        super::print_painted(&format!("{}{}\n", colour.number(head), colour.plain(rest)))?;
    }
    Ok(())
}

/// `#12    2026-12-01 14:32:05  <subject>  commit 1a2b3c4d  Session: … Cost: …`
fn git_line(change: &crate::sync::history::GitChange) -> String {
    let mut lines = change.message.lines();
    let subject = lines.next().unwrap_or_default();
    let trailers: Vec<&str> = lines.filter(|l| l.starts_with("Session: ") || l.starts_with("Cost: ")).collect();
    let mut line = format!(
        "#{:<5} {}  {subject}  commit {}",
        change.number,
        crate::env::timestamp(change.at),
        crate::memory::text::shorten(&change.commit, 8)
    );
    if !trailers.is_empty() {
        line.push_str(&format!("  {}", trailers.join(" ")));
    }
    line
}

/// `memory-save history show N`.
fn run_show(number: u64, json: bool) -> Result<()> {
    let folder = current_folder()?;
    if crate::sync::history::is_history(&folder.dir) {
        let (change, diff) = crate::sync::history::show(&folder.dir, number)?;
        if json {
            let value = serde_json::json!({"number": change.number, "commit": change.commit, "at": change.at, "message": change.message, "diff": diff});
            return super::println(&crate::memory::text::json_visible(&serde_json::to_string_pretty(&value)?));
        }
        let colour = super::colour::Colour::for_stdout();
        super::print_painted(&format!("{}\n", colour.plain(&git_line(&change))))?;
        return super::print_painted(&colour.diff(&diff));
    }
    let entries = list(&folder)?;
    let files = before_and_after(&folder, number, &entries)?;
    let entry = &entries.iter().find(|(n, _)| *n == number).expect("found above").1;
    if json {
        let mut value = entry_json(number, entry, false);
        value["diff"] = files
            .iter()
            .map(|(name, old, new)| (name.clone(), diff(name, old, new).into()))
            .collect::<serde_json::Map<_, _>>()
            .into();
        return super::println(&crate::memory::text::json_visible(&serde_json::to_string_pretty(&value)?));
    }
    let colour = super::colour::Colour::for_stdout();
    super::print_painted(&format!("{}\n", colour.plain(&describe(number, entry))))?;
    for (name, old, new) in &files {
        super::print_painted(&colour.diff(&diff(name, old, new)))?;
    }
    Ok(())
}

/// A unified diff of one file, `a/<name>` to `b/<name>`.
pub fn diff(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(2)
        .header(&format!("a/{name}"), &format!("b/{name}"))
        .to_string()
}

/// `memory-save undo [N] [--force]`.
fn run_undo(number: Option<u64>, force: bool) -> Result<()> {
    let folder = current_folder()?;
    let _lock = folder.lock()?;
    if crate::sync::history::is_history(&folder.dir) {
        let memory_files = |dir: &std::path::Path| -> Vec<String> {
            let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| n.ends_with(".md"))
                .collect()
        };
        let read = |name: &str| crate::store::folder::read_if_exists(&folder.dir.join(name)).ok().flatten();
        let mut before: std::collections::BTreeMap<String, Option<String>> = memory_files(&folder.dir)
            .into_iter()
            .map(|n| {
                let t = read(&n);
                (n, t)
            })
            .collect();
        let (diff, label) = crate::sync::history::undo(&folder.dir, number, force)?;
        for name in memory_files(&folder.dir) {
            before.entry(name).or_insert(None);
        }
        let origin = crate::store::history::Origin { by: Some("memory-save undo".into()), ..Default::default() };
        crate::store::history::record_made(&folder, &label, &before, &origin)?;
        super::print_painted(&super::colour::Colour::for_stdout().diff(&diff))?;
        return super::println(&format!(
            "memory-save: {label} in {} (a commit); run undo again to redo it",
            folder.dir.display()
        ));
    }
    let plan = plan_undo(&folder, number)?;
    if !plan.hand_edited.is_empty() && !force {
        bail!(
            "{} changed after the last recorded change (#{}), by hand or another tool; undo would throw that away. \
             Keep the edit by saving a copy first, or undo anyway, losing it, with: memory-save undo{} --force",
            plan.hand_edited.join(", "),
            plan.newest,
            number.map(|n| format!(" {n}")).unwrap_or_default()
        );
    }
    let colour = super::colour::Colour::for_stdout();
    for (name, (now, target)) in &plan.files {
        let text = diff(name, now.as_deref().unwrap_or(""), target.as_deref().unwrap_or(""));
        super::print_painted(&colour.diff(&text))?;
    }
    let label = apply_undo(&folder, &plan)?;
    super::println(&format!("memory-save: {label} in {}; run undo again to take this back", folder.dir.display()))?;
    Ok(())
}
