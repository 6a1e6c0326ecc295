//! What install itself set in each settings file beyond our entries (a file
//! or folder it created, `autoMemoryEnabled`, a status line's refresh), so
//! uninstall takes out exactly that (docs/design.md §6).

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
    /// The first install created the file: uninstall removes it when
    /// nothing but our entries is in it.
    pub created: bool,
    /// The folder the first install created for it (`.claude/`).
    pub created_dir: Option<String>,
    /// `--disable-auto-memory` set `autoMemoryEnabled`.
    pub auto_memory_set: bool,
    /// The git exclude file install added the project-local settings to.
    pub excluded_in: Option<String>,
    /// `autoMemoryEnabled` before (`None`: the key was absent).
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

/// Stores `record` for its file, or forgets the file with `None`, under
/// the record's own lock: concurrent installs each rewrite the whole list.
pub fn put(roots: &Roots, settings: &Path, record: Option<InstallRecord>) -> Result<()> {
    fsutil::create_private_dir(&roots.state)?;
    let _lock = crate::store::lock::Lock::acquire(&records_path(roots), std::time::Duration::from_secs(10))?;
    let key = settings.display().to_string();
    let mut records: Vec<InstallRecord> = all(roots).into_iter().filter(|r| r.path != key).collect();
    records.extend(record);
    super::record::write_durable(&records_path(roots), &records)
}
