//! Memory on every machine through the `git` program (gitoxide cannot push): each
//! save commits; at most once a minute the worker pulls through our merge driver
//! and pushes, and a failure never fails a save (docs/sync.md).

mod exchange;
mod setup;

pub use crate::git::Caller;
pub use setup::{init, off, register_driver};

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::git;
use crate::store::fsutil;
use crate::store::paths::Roots;

/// The branch memories go to when the remote does not name its own.
const BRANCH: &str = "main";
/// Pulls and pushes after a save are this far apart at least.
pub const SYNC_EVERY: i64 = 60;
const STATE_FILE: &str = "sync.json";

/// Only memories travel: a repair's backup, failed replies and `.history/`
/// stay on this machine.
const EXCLUDE: &str = "# memory-save sync: only memories travel\n/*/*\n!/*/*.md\n!/*/.identity\n!/*/guards.json\n/*/MEMORY.pre-migration.md\n";
const ATTRIBUTES: &str = "*.md merge=memory-save\nguards.json merge=memory-save\n.identity merge=memory-save\n";

/// Writes which files travel and which merge through our driver into the
/// repository's own `info/exclude` and `info/attributes`: nothing of ours is
/// tracked, and `info/attributes` outranks any a tree could carry.
fn write_git_info(root: &Path) -> Result<()> {
    let info = root.join(".git/info");
    fsutil::create_private_dir(&info)?;
    for (name, text) in [("exclude", EXCLUDE), ("attributes", ATTRIBUTES)] {
        let path = info.join(name);
        if fsutil::read_regular(&path, 64 * 1024)?.as_deref() != Some(text.as_bytes()) {
            fsutil::write_atomic(&path, text.as_bytes(), true)?;
        }
    }
    Ok(())
}

/// What the last sync did, for the status line and `doctor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyncState {
    pub remote: String,
    /// Unix time of the last pull and push that worked.
    pub synced_at: Option<i64>,
    pub attempted_at: Option<i64>,
    /// Why the last attempt failed.
    pub error: Option<String>,
    /// The remote's own default branch, learned at `--init` (`None`: `main`).
    pub branch: Option<String>,
}

impl SyncState {
    pub fn branch(&self) -> &str {
        self.branch.as_deref().unwrap_or(BRANCH)
    }
}

fn state_path(roots: &Roots) -> PathBuf {
    roots.state.join(STATE_FILE)
}

/// `None` when sync is off.
pub fn state(roots: &Roots) -> Option<SyncState> {
    crate::store::record::read(&state_path(roots))
}

fn write_state(roots: &Roots, state: &SyncState) -> Result<()> {
    crate::store::record::write(&state_path(roots), state)
}

/// Whether the memory root at `root` syncs: it holds our repository.
pub fn is_on(root: &Path) -> bool {
    root.join(".git").is_dir()
        && std::fs::read_to_string(root.join(".git/info/attributes")).is_ok_and(|t| t.contains("merge=memory-save"))
}

/// Commits the files of one memory folder after a change (called under
/// its lock): the report line as the message, session and cost as trailers.
pub fn commit_change(folder_dir: &Path, message: &str, session: Option<&str>, cost: Option<f64>) -> Result<()> {
    let Some(root) = folder_dir.parent().filter(|root| is_on(root)) else {
        return Ok(());
    };
    let name = folder_dir.file_name().and_then(|n| n.to_str()).context("a memory folder has a name")?;
    let trailers: Vec<String> =
        [session.map(|s| format!("Session: {s}")), cost.map(|c| format!("Cost: {}", crate::memory::cost::usd(c)))]
            .into_iter()
            .flatten()
            .collect();
    let text = if trailers.is_empty() { message.to_string() } else { format!("{message}\n\n{}", trailers.join("\n")) };
    commit(root, &[name], &text)
}

/// Stages `paths` (everything, given none) and commits when anything is staged.
fn commit(root: &Path, paths: &[&str], message: &str) -> Result<()> {
    git::run(root, &[&["add", "-A", "--"], paths].concat(), git::LIMIT)?;
    if git::run(root, &["diff", "--cached", "--quiet"], git::LIMIT).is_err() {
        git::run(root, &["commit", "-q", "--no-verify", "-m", message], git::LIMIT)?;
    }
    Ok(())
}

/// The sync after a save, at most once a minute; a failure is recorded, never
/// fails the save.
pub fn after_save(roots: &Roots) {
    let Some(state) = state(roots) else { return };
    let now = crate::env::now_unix();
    if state.attempted_at.is_some_and(|at| now - at < SYNC_EVERY) || !is_on(&roots.memory) {
        return;
    }
    if let Err(e) = sync_now(roots, Caller::Background) {
        crate::store::log::error(&format!("sync failed: {e:#}"));
    }
}

/// Pull (merging through the driver) and push, now. Every project's lock is
/// held while git changes the files, so no save writes under it.
pub fn sync_now(roots: &Roots, caller: Caller) -> Result<Vec<String>> {
    let root = &roots.memory;
    let mut state = state(roots).context("sync is off; turn it on with memory-save sync --init <git-url>")?;
    // `sync.json` is its own lock (`store::lock`).
    let Some(_lock) = crate::store::lock::Lock::try_acquire(&state_path(roots))? else {
        return Ok(vec!["another sync is running".into()]);
    };
    let now = crate::env::now_unix();
    state.attempted_at = Some(now);
    let result = exchange::pull_and_push(roots, root, caller);
    state.error = result.as_ref().err().map(|e| format!("{e:#}"));
    if result.is_ok() {
        state.synced_at = Some(now);
    }
    write_state(roots, &state)?;
    result
}
