//! One small JSON record in our state folder: read bounded without
//! following links, parsed, and written atomically.

use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A record is a few kilobytes; anything larger is not ours.
const MAX_BYTES: u64 = 1024 * 1024;

/// The record at `path`; `None` when it is missing, not ours, or unreadable
/// (a record is state, never worth failing over).
pub fn read<T: DeserializeOwned>(path: &Path) -> Option<T> {
    read_bounded(path, MAX_BYTES)
}

/// `read`, for a larger record (install records keep whole settings files).
pub fn read_bounded<T: DeserializeOwned>(path: &Path, max: u64) -> Option<T> {
    let bytes = crate::store::fsutil::read_regular(path, max).ok().flatten()?;
    serde_json::from_slice(&bytes).ok()
}

/// `read`, but a link, FIFO or oversized file is an error, not a missing
/// record. Missing, or not the record's shape: `None`.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    let bytes = crate::store::fsutil::read_regular(path, MAX_BYTES)?;
    Ok(bytes.and_then(|bytes| serde_json::from_slice(&bytes).ok()))
}

/// Replaces the record at `path`, atomically, in a private folder.
pub fn write<T: Serialize>(path: &Path, record: &T) -> Result<()> {
    write_record(path, record, false)
}

/// `write`, fsynced: for a person's record that a crash must not take back.
pub fn write_durable<T: Serialize>(path: &Path, record: &T) -> Result<()> {
    write_record(path, record, true)
}

/// `write`, or `write_durable` when `durable`.
pub fn write_record<T: Serialize>(path: &Path, record: &T, durable: bool) -> Result<()> {
    if let Some(dir) = path.parent() {
        crate::store::fsutil::create_private_dir(dir)?;
    }
    let text = serde_json::to_vec_pretty(record).context("cannot encode a state record")?;
    crate::store::fsutil::write_atomic(path, &text, durable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_a_planted_file_is_never_read_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/notes.json");
        write(&path, &vec!["a".to_string()]).unwrap();
        assert_eq!(read::<Vec<String>>(&path), Some(vec!["a".to_string()]));
        write_durable(&path, &vec!["b".to_string()]).unwrap();
        assert_eq!(load::<Vec<String>>(&path).unwrap(), Some(vec!["b".to_string()]));
        assert_eq!(load::<Vec<String>>(&dir.path().join("missing.json")).unwrap(), None);
        // Not the record's shape: none, as a fresh record.
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(load::<Vec<String>>(&path).unwrap(), None);
        // A link: `read` takes it for none, `load` names it.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read::<Vec<String>>(&link), None);
        assert!(format!("{:#}", load::<Vec<String>>(&link).unwrap_err()).contains("symlink"));
        assert_eq!(read_bounded::<Vec<String>>(&path, 3), None, "over its bound");
    }
}
