//! `memory-save import`: an existing memory brought in as one history entry
//! that `undo` reverts; each line that could not come in as it was is listed.

use std::path::{Path, PathBuf};

use crate::memory::reply::Op;
use anyhow::{Context, Result, bail};

use crate::memory::apply::Outcome;
use crate::store::history::Origin;

/// A file read for import is at most this large.
const MAX_IMPORT_BYTES: u64 = 16 * 1024 * 1024;

/// Bring an existing memory in: a markdown file, or a folder holding a
/// MEMORY.md and topic files (such as Claude Code's auto-memory folder).
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The markdown file or folder to import.
    #[arg(required_unless_present = "from_auto_memory", conflicts_with = "from_auto_memory")]
    source: Option<PathBuf>,
    /// Import Claude Code's own auto memory of this project
    /// (<config dir>/projects/<project path>/memory/).
    #[arg(long)]
    from_auto_memory: bool,
}

impl super::Run for ImportArgs {
    fn run(&self) -> Result<()> {
        let super::Here { cwd, config, project, folder, .. } = super::here_to_write()?;
        let source = match &self.source {
            Some(path) => path.clone(),
            None => auto_memory_dir(&cwd)?,
        };
        let (memory, topics) = read_source(&source)?;
        let shown = source.display();
        if memory.is_none() && topics.is_empty() {
            bail!("{shown} holds no MEMORY.md and no .md topic files: nothing to import");
        }
        let _lock = folder.lock()?;
        let current = folder.memory_path().exists().then(|| crate::save::current_under_lock(&folder)).transpose()?;
        let memory = memory.as_ref().map(|(name, text)| (name.as_str(), text.as_str()));
        let mut imported =
            crate::memory::import::import(current.as_deref(), memory, &topics, &folder.topic_files(), &folder.project);
        let base = current.clone().unwrap_or_else(|| crate::memory::template::skeleton(&folder.project));
        // An import is foreign text: its new CRITICAL RULES are quoted, and
        // with the review gate on they wait for review like a save's.
        let had = crate::memory::gate::instruction_lines(&base);
        let new_rules: Vec<String> =
            crate::memory::gate::instruction_lines(&imported.memory).into_iter().filter(|r| !had.contains(r)).collect();
        let gate = config.review_rules();
        if gate && !new_rules.is_empty() {
            imported.memory = crate::team::without(&imported.memory, &new_rules);
            let ops: Vec<Op> =
                new_rules.iter().map(|rule| Op::Add { section: "CRITICAL RULES".into(), text: rule.clone() }).collect();
            let origin = Origin { by: Some(format!("memory-save import of {shown}")), ..Origin::default() };
            crate::store::review::hold(&folder, &ops, &origin)?;
        }
        for rule in &new_rules {
            let what = if gate { "waits for your review (memory-save review)" } else { "loads in every session" };
            imported.report.push(format!("new CRITICAL RULES bullet, {what}: {rule}"));
        }
        if imported.memory == base && imported.topics.is_empty() {
            super::println(&format!("memory-save: {shown} adds nothing new to project {}", project.name))?;
        } else {
            let message = format!("import of {shown}");
            let origin = Origin { by: Some("memory-save import".into()), ..Origin::default() };
            let outcome = Outcome { memory: imported.memory, topics: imported.topics, ..Outcome::default() };
            // With no MEMORY.md yet, the skeleton is what the import starts from.
            crate::save::commit(&folder, current.as_deref().unwrap_or(""), &outcome, &message, &origin)?;
            let into = folder.dir.display();
            super::println(&format!("memory-save: imported {shown} into {into} (memory-save undo takes it back)"))?;
        }
        for line in &imported.report {
            super::println(&format!("  {line}"))?;
        }
        Ok(())
    }
}

/// Claude Code's auto-memory folder of the project at `cwd`: the project
/// folder's path with every character but letters and digits as `-`, under
/// `<config dir>/projects/` (honouring `CLAUDE_CONFIG_DIR`).
fn auto_memory_dir(cwd: &Path) -> Result<PathBuf> {
    let top = crate::project::work_tree_top(cwd);
    let top = std::fs::canonicalize(&top).unwrap_or(top);
    let key: String = top.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let dir = crate::env::claude_config_dir()?.join("projects").join(key).join("memory");
    if !dir.is_dir() {
        bail!("Claude Code has no auto memory for {} (looked in {})", top.display(), dir.display());
    }
    Ok(dir)
}

type Source = (Option<(String, String)>, Vec<(String, String)>);

/// A file is the memory itself; a folder holds MEMORY.md and topic files.
fn read_source(source: &Path) -> Result<Source> {
    let read = |path: &Path| -> Result<String> {
        let bytes = crate::store::fsutil::read_regular(path, MAX_IMPORT_BYTES)?
            .with_context(|| format!("{} does not exist", path.display()))?;
        String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text; nothing was imported", path.display()))
    };
    let meta = std::fs::metadata(source).with_context(|| format!("cannot read {}", source.display()))?;
    if !meta.is_dir() {
        let name = source.file_name().unwrap_or_default().to_string_lossy().into_owned();
        return Ok((Some((name, read(source)?)), Vec::new()));
    }
    let mut topics = Vec::new();
    let mut entries: Vec<_> = fs_err::read_dir(source)?.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_file()) && name.to_ascii_lowercase().ends_with(".md") {
            topics.push((name, read(&entry.path())?));
        }
    }
    let memory = topics.iter().position(|(name, _)| name == "MEMORY.md").map(|at| topics.remove(at));
    Ok((memory, topics))
}
