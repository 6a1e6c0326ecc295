//! What each install wrote, so that uninstall can give a settings file back
//! exactly as it was: `state/memory-save/installs.json`, one record per
//! settings file. The file's bytes before the first install are its backup
//! (`<file>.memory-save.bak`, beside it, never overwritten).

use std::path::Path;

use anyhow::Result;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fsutil;
use super::paths::Roots;

const INSTALLS_FILE: &str = "installs.json";
const MAX_INSTALLS_BYTES: u64 = 16 * 1024 * 1024;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct InstallRecord {
    /// The settings file, as install named it.
    pub path: String,
    /// The file's text as our last install or uninstall left it: when it
    /// still reads so, nobody else changed it since.
    pub written: String,
    /// The file's text before the first install (`None`: there was no
    /// file): what an uninstall of an untouched file gives back.
    /// The backup beside it may be older (a cycle whose uninstall found the
    /// file edited keeps it), so it is never what is restored.
    pub original: Option<String>,
    /// The folder the first install created for it (`.claude/`).
    pub created_dir: Option<String>,
    /// `--disable-auto-memory` set `autoMemoryEnabled`; this was its value
    /// before (`None`: the key was absent).
    pub auto_memory_set: bool,
    /// The git exclude file install added the project-local settings to
    /// (so git never offers to commit them); uninstall takes the line out.
    pub excluded_in: Option<String>,
    pub auto_memory_before: Option<Value>,
    /// `--statusline` gave the user's own statusLine a `refreshInterval`.
    pub refresh_set: bool,
}

fn records_path(roots: &Roots) -> std::path::PathBuf {
    roots.state.join(INSTALLS_FILE)
}

pub fn all(roots: &Roots) -> Vec<InstallRecord> {
    super::record::read_bounded(&records_path(roots), MAX_INSTALLS_BYTES).unwrap_or_default()
}

pub fn find(roots: &Roots, settings: &Path) -> Option<InstallRecord> {
    let key = settings.display().to_string();
    all(roots).into_iter().find(|r| r.path == key)
}

/// Stores `record` for its file, or forgets the file with `None`.
/// Under `installs.lock`: installs into several projects at once each read
/// and rewrite the whole list, and without the lock one lost another's
/// record (measured: 4 or 5 of 7 kept).
pub fn put(roots: &Roots, settings: &Path, record: Option<InstallRecord>) -> Result<()> {
    fsutil::create_private_dir(&roots.state)?;
    let _lock = fsutil::Lock::acquire(&roots.state.join("installs.lock"), std::time::Duration::from_secs(10))?;
    let key = settings.display().to_string();
    let mut records: Vec<InstallRecord> = all(roots).into_iter().filter(|r| r.path != key).collect();
    records.extend(record);
    super::record::write_durable(&records_path(roots), &records)
}
