//! One record per memory folder in the state folder, beside its lock
//! (`projects/<folder>.json`): what this machine keeps about the folder
//! and never syncs (docs/design.md §6). One of a newer version is never
//! overwritten; every change is a read-modify-write under the lock.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::folder::Folder;
use super::notes::Notes;
use super::review::Pending;

pub const VERSION: u32 = 1;

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

/// A fresh record when there is none or it cannot be read; an installed
/// version's files are folded in first.
pub fn read(folder: &Folder) -> FolderRecord {
    match super::record::read::<FolderRecord>(&folder.state_file("json")) {
        Some(record) if record.version == VERSION => record,
        Some(record) if record.version > VERSION => FolderRecord::default(),
        _ if EARLIER.iter().chain(["json"].iter()).any(|ext| folder.state_file(ext).exists()) => fold_once(folder),
        _ => FolderRecord { version: VERSION, ..FolderRecord::default() },
    }
}

/// Changes the record under the folder's lock (unless this process holds
/// it), writing only a change. `durable`: a person's change a crash must
/// not take back.
pub fn update<T>(folder: &Folder, durable: bool, change: impl FnOnce(&mut FolderRecord) -> T) -> Result<T> {
    let _lock = if super::fsutil::held_here(folder.lock_path()) { None } else { Some(folder.lock()?) };
    let path = folder.state_file("json");
    let found = super::record::load::<FolderRecord>(&path)?;
    if let Some(newer) = found.as_ref().filter(|r| r.version > VERSION) {
        bail!(
            "{} was written by a newer memory-save (record version {}); upgrade memory-save to change it",
            path.display(),
            newer.version
        );
    }
    let mut record = match found {
        Some(record) if record.version == VERSION => record,
        _ => fold(folder),
    };
    let before = record.clone();
    let result = change(&mut record);
    if record != before || !path.exists() {
        super::record::write_record(&path, &record, durable)?;
    }
    Ok(result)
}

/// The files an installed version kept per folder beside the lock (its
/// notes were `<folder>.json`, where the record is now).
const EARLIER: &[&str] = &[
    "review.json",
    "own.json",
    "approvals-seen.json",
    "quoted.json",
    "paths.json",
    "rules.json",
    "noted.json",
    "checked",
    "orders.json",
    "check.json",
    "upgraded.json",
];

/// Whether a folder of this name would have its record or lock where another
/// folder's state is: `<other>.own.json` is where an installed version kept
/// `<other>`'s own rules, `<other>.team-<tag>.json` a team working tree's record.
/// Compared without case: a case-insensitive file system (macOS's default)
/// keeps `app.OWN.json` and `app.own.json` in one file.
pub fn shares_state(name: &str) -> bool {
    let Some((_, ext)) = name.rsplit_once('.') else { return false };
    let ext = ext.to_ascii_lowercase();
    let team_tag = |tag: &str| tag.len() == 8 && tag.bytes().all(|b| b.is_ascii_hexdigit());
    EARLIER.iter().any(|file| file.strip_suffix(".json") == Some(ext.as_str()))
        || ext.strip_prefix("team-").is_some_and(team_tag)
}

/// Folds the earlier files in under the lock, once: the record then has its version.
fn fold_once(folder: &Folder) -> FolderRecord {
    let folded = update(folder, true, |record| record.clone());
    folded.unwrap_or_else(|e| {
        crate::store::log::error(&format!("cannot fold the state of {}: {e:#}", folder.dir.display()));
        fold(folder)
    })
}

/// The record the earlier files make, removing them once written. Call under the lock.
fn fold(folder: &Folder) -> FolderRecord {
    fn list<T: serde::de::DeserializeOwned + Default>(folder: &Folder, ext: &str) -> T {
        earlier(folder, ext).and_then(|path| super::record::read(&path)).unwrap_or_default()
    }
    let upgraded = earlier(folder, "upgraded.json").is_some_and(|path| path.exists());
    let checked = super::fsutil::read_regular(&folder.state_file("checked"), 256).ok().flatten();
    let record = FolderRecord {
        version: VERSION,
        notes: list(folder, "json"),
        review: list(folder, "review.json"),
        own: list(folder, "own.json"),
        approved_here: list(folder, "approvals-seen.json"),
        quoted: list(folder, "quoted.json"),
        paths: list(folder, "paths.json"),
        team_rules: list(folder, "rules.json"),
        noted: list(folder, "noted.json"),
        checked: checked.map(|bytes| String::from_utf8_lossy(&bytes).trim().to_string()),
        orders: list(folder, "orders.json"),
        check: list(folder, "check.json"),
        ..FolderRecord::default()
    };
    // Written before anything goes: a crash in between leaves the earlier
    // files, folded again the same way.
    if super::record::write_durable(&folder.state_file("json"), &record).is_ok() {
        if upgraded {
            // This machine had its one-time approval already.
            super::approvals::mark_upgraded(&folder.state_root());
        }
        for path in EARLIER.iter().filter_map(|ext| earlier(folder, ext)) {
            let _ = std::fs::remove_file(path);
        }
    }
    record
}

/// An installed version's file of this folder, unless the path holds a
/// record, of a folder whose name made the same path (`app.own`'s record is
/// where `app` kept `own.json`): that is never read nor removed here.
fn earlier(folder: &Folder, ext: &str) -> Option<std::path::PathBuf> {
    let path = folder.state_file(ext);
    let versioned = |map: serde_json::Map<String, serde_json::Value>| map.contains_key("version");
    (!super::record::read(&path).is_some_and(versioned)).then_some(path)
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
            ("app.own", true),
            ("app.approvals-seen", true),
            ("x.y.check", true),
            ("proj.team-0123abcd", true),
            ("proj.team-0123abc", false),
            ("proj.team-0123abcg", false),
            ("app.checked", false),
            ("app.json", false),
            ("app", false),
            ("app.own-0123abcd", false),
            // A case-insensitive file system (macOS's default) holds one file for both.
            ("app.OWN", true),
            ("proj.TEAM-0123abcd", true),
            ("proj.Team-0123ABCD", true),
        ] {
            assert_eq!(shares_state(name), shares, "{name}");
        }
    }

    #[test]
    fn the_files_an_installed_version_wrote_are_folded_into_one_record_once() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, folder) = folder(dir.path());
        let projects = roots.projects_state_dir();
        std::fs::create_dir_all(&projects).unwrap();
        let put = |name: &str, text: &str| std::fs::write(projects.join(name), text).unwrap();
        put("proj.json", r#"{"skipped": ["- gone"], "refused": [], "more_skipped": 2, "more_refused": 0}"#);
        let op = r#"{"op": "add", "section": "CRITICAL RULES", "text": "- Never push."}"#;
        put("proj.review.json", &format!(r#"[{{"id": "ab12", "op": {op}, "at": 7}}]"#));
        put("proj.own.json", r#"["- Always test."]"#);
        put("proj.approvals-seen.json", r#"["- Approved here."]"#);
        put("proj.quoted.json", r#"["- Quoted once."]"#);
        put("proj.paths.json", r#"["path:/home/me/app"]"#);
        put("proj.noted.json", r#"{"stale": [["- a line", "src/a.rs"]], "duplicates": []}"#);
        put("proj.checked", "3:abc\n");
        put("proj.orders.json", r#"{"mark": "3:abc", "lines": ["- Always test."]}"#);
        put("proj.check.json", r#"{"head": "h"}"#);
        put("proj.upgraded.json", "true");
        put("proj.lock", "");
        put("other.own.json", r#"["- Another folder's."]"#);

        let record = read(&folder);
        assert_eq!(record.version, VERSION);
        assert_eq!(record.notes.skipped, vec!["- gone".to_string()]);
        assert_eq!(record.notes.more_skipped, 2);
        assert_eq!(record.review.len(), 1);
        assert_eq!(record.review[0].id, "ab12");
        assert_eq!(record.own, vec!["- Always test.".to_string()]);
        assert_eq!(record.approved_here, vec!["- Approved here.".to_string()]);
        assert_eq!(record.quoted, vec!["- Quoted once.".to_string()]);
        assert_eq!(record.paths, vec!["path:/home/me/app".to_string()]);
        assert_eq!(record.noted.stale, vec![("- a line".to_string(), "src/a.rs".to_string())]);
        assert_eq!(record.checked.as_deref(), Some("3:abc"));
        assert_eq!(record.orders.as_ref().map(|o| o.lines.clone()), Some(vec!["- Always test.".to_string()]));
        assert_eq!(record.check, Some(serde_json::json!({"head": "h"})));
        let mut left: Vec<String> =
            std::fs::read_dir(&projects).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, ["other.own.json", "proj.json", "proj.lock"], "the folder's state is its record and its lock");
        assert!(roots.state.join("rules-upgraded.json").exists(), "an earlier per-folder upgrade mark is kept");
        // Once: the record is read as it is from now on.
        update(&folder, false, |r| r.own.push("- New.".to_string())).unwrap();
        assert_eq!(read(&folder).own.len(), 2);
    }

    #[test]
    fn a_record_of_a_newer_version_is_never_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let (roots, folder) = folder(dir.path());
        std::fs::create_dir_all(roots.projects_state_dir()).unwrap();
        let newer = r#"{"version": 99, "own": ["- kept"]}"#;
        std::fs::write(folder.state_file("json"), newer).unwrap();
        assert_eq!(read(&folder), FolderRecord::default());
        let err = update(&folder, false, |r| r.own.clear()).unwrap_err();
        assert!(format!("{err:#}").contains("newer memory-save"), "{err:#}");
        assert_eq!(std::fs::read_to_string(folder.state_file("json")).unwrap(), newer);
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
