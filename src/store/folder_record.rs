//! One record per memory folder in the state folder (`projects/<folder>.json`):
//! what this machine keeps about the folder and never syncs (docs/design.md
//! §6). It is also the folder's lock (`Folder::lock`); an empty one is the
//! lock taken before any record was written. One of a newer version is
//! never overwritten; every change is a read-modify-write under the lock.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::folder::Folder;
use super::notes::Notes;
use super::review::Pending;

pub use super::record::VERSION;

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FolderRecord {
    pub version: u32,
    /// What the last save could not apply, for the next fork.
    pub notes: Notes,
    /// CRITICAL RULES edits a save held for `memory-save review`.
    pub review: Vec<Pending>,
    /// The rules this machine's saves, edits, imports and approvals wrote.
    pub own: Vec<String>,
    /// The approvals this machine's own review gave, the only ones that count here.
    pub approved_here: Vec<String>,
    /// Foreign rules already quoted to the user (the gate off).
    pub quoted: Vec<String>,
    /// The paths this machine knew the folder's repository at.
    pub paths: Vec<String>,
    /// A team memory's rules as this machine last loaded them.
    pub team_rules: Option<Vec<String>>,
    /// The STALE and DUPLICATES findings already told to a fork.
    pub noted: Noted,
    /// The mark of the MEMORY.md last found clean (`folder::checked_mark`).
    pub checked: Option<String>,
    /// The order lines of the MEMORY.md of `mark`.
    pub orders: Option<Orders>,
    /// The memory check's last result (`project::check`'s own shape).
    pub check: Option<serde_json::Value>,
    /// The guards this machine made or the user changed here: with the
    /// review gate on, the only ones that bind.
    pub own_guards: Vec<String>,
    /// What this machine saw of each guard, by id.
    pub guards_seen: std::collections::BTreeMap<String, super::guard_counts::Seen>,
    /// Guards from elsewhere the user was told bind (their trust keys): told once.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub told_guards: Vec<String>,
    /// Guards from elsewhere (trust keys) whose breadth the gate judged and
    /// passed: a load judges each once, not at every start.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub narrow_guards: Vec<String>,
}

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct Noted {
    pub stale: Vec<(String, String)>,
    pub duplicates: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Orders {
    pub mark: String,
    pub lines: Vec<String>,
}

/// The record, or a fresh one when there is none, it cannot be read, or a
/// newer memory-save wrote it (read only: `update` refuses to change that one).
pub fn read(folder: &Folder) -> FolderRecord {
    match super::record::read::<FolderRecord>(folder.record_path()) {
        Some(record) if record.version == VERSION => record,
        _ => FolderRecord { version: VERSION, ..FolderRecord::default() },
    }
}

/// The record's bytes, refused when a newer memory-save wrote them: what
/// it holds (the paths this machine recorded, approvals) cannot be read,
/// so nothing may be decided or written on it.
pub fn read_for_change(folder: &Folder) -> Result<Vec<u8>> {
    let bytes = super::fsutil::read_regular(folder.record_path(), 1024 * 1024)?.unwrap_or_default();
    super::record::check_version(folder.record_path(), &bytes)?;
    Ok(bytes)
}

/// Changes the record under the folder's lock (unless this process holds
/// it), writing only a change. `durable`: a person's change a crash must
/// not take back.
pub fn update<T>(folder: &Folder, durable: bool, change: impl FnOnce(&mut FolderRecord) -> T) -> Result<T> {
    let _lock = if super::lock::held_here(folder.record_path()) { None } else { Some(folder.lock()?) };
    let path = folder.record_path();
    let bytes = read_for_change(folder)?;
    let mut record = serde_json::from_slice::<FolderRecord>(&bytes)
        .ok()
        .filter(|record| record.version == VERSION)
        .unwrap_or(FolderRecord { version: VERSION, ..FolderRecord::default() });
    let before = record.clone();
    let result = change(&mut record);
    if record != before || bytes.is_empty() {
        super::record::write_record(path, &record, durable)?;
    }
    Ok(result)
}

/// Whether a folder of this name would have its record where another
/// folder's state is: `<other>.team-<tag>.json` is a team working tree's record.
/// Compared without case: a case-insensitive file system (macOS's default)
/// keeps `app.TEAM-…` and `app.team-…` in one file.
pub fn shares_state(name: &str) -> bool {
    let Some((_, ext)) = name.rsplit_once('.') else { return false };
    let ext = ext.to_ascii_lowercase();
    ext.strip_prefix("team-").is_some_and(|tag| tag.len() == 8 && tag.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::paths::Roots;

    fn folder(dir: &std::path::Path) -> (Roots, Folder) {
        let roots = Roots::at(dir.to_path_buf());
        let folder = Folder::new(&roots, "proj");
        (roots, folder)
    }

    #[test]
    fn a_name_ending_like_another_folders_state_files_shares_state() {
        for (name, shares) in [
            ("app.own", false),
            ("x.y.check", false),
            ("proj.team-0123abcd", true),
            ("proj.team-0123abc", false),
            ("proj.team-0123abcg", false),
            ("app.checked", false),
            ("app.json", false),
            ("app", false),
            ("app.own-0123abcd", false),
            // A case-insensitive file system (macOS's default) holds one file for both.
            ("proj.TEAM-0123abcd", true),
            ("proj.Team-0123ABCD", true),
        ] {
            assert_eq!(shares_state(name), shares, "{name}");
        }
    }

    #[test]
    fn a_record_of_a_newer_version_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, folder) = folder(dir.path());
        std::fs::create_dir_all(roots.projects_state_dir()).unwrap();
        // The second's fields are of a shape this version cannot read.
        for newer in [r#"{"version": 99, "own": ["- kept"]}"#, r#"{"version": 2, "own": {"rules": ["- kept"]}}"#] {
            std::fs::write(folder.record_path(), newer).unwrap();
            assert_eq!(read(&folder).own, Vec::<String>::new());
            let err = update(&folder, false, |r| r.own.push("- new".to_string())).unwrap_err();
            assert!(format!("{err:#}").contains("record version"), "{err:#}");
            assert_eq!(std::fs::read_to_string(folder.record_path()).unwrap(), newer);
        }
    }

    #[test]
    fn an_update_inside_the_folder_lock_does_not_wait_for_itself() {
        let dir = tempfile::tempdir().unwrap();
        let (_roots, folder) = folder(dir.path());
        let _lock = folder.lock().unwrap();
        let started = std::time::Instant::now();
        update(&folder, false, |r| r.quoted.push("- q".to_string())).unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(read(&folder).quoted, vec!["- q".to_string()]);
    }
}
