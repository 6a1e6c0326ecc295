//! One small JSON record in our state folder: read bounded without
//! following links, parsed, and written atomically.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A record is a few kilobytes; anything larger is not ours.
const MAX_BYTES: u64 = 1024 * 1024;

/// The format every record of ours is at. One with a later `version` is a
/// newer memory-save's: never overwritten, whatever its fields hold.
pub const VERSION: u32 = 1;

/// For `skip_serializing_if`: a count that is 0 is left out.
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Refuses a record (its first JSON value) that a newer memory-save wrote.
pub fn check_version(path: &Path, bytes: &[u8]) -> Result<()> {
    #[derive(serde::Deserialize)]
    struct Versioned {
        version: u32,
    }
    let found = serde_json::Deserializer::from_slice(bytes).into_iter::<Versioned>().next();
    match found {
        Some(Ok(Versioned { version })) if version > VERSION => bail!(
            "{} was written by a newer memory-save (record version {version}); upgrade memory-save to change it",
            path.display()
        ),
        _ => Ok(()),
    }
}

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

/// Replaces the record at `path`, atomically, in a private folder.
pub fn write<T: Serialize>(path: &Path, record: &T) -> Result<()> {
    write_record(path, record, false)
}

/// `write`, fsynced: for a person's record that a crash must not take back.
pub fn write_durable<T: Serialize>(path: &Path, record: &T) -> Result<()> {
    write_record(path, record, true)
}

/// `write`, or `write_durable` when `durable`; never over a newer record.
pub fn write_record<T: Serialize>(path: &Path, record: &T, durable: bool) -> Result<()> {
    if let Ok(Some(bytes)) = crate::store::fsutil::read_regular(path, MAX_BYTES) {
        check_version(path, &bytes)?;
    }
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
        assert_eq!(read::<Vec<String>>(&path), Some(vec!["b".to_string()]));
        assert_eq!(read::<Vec<String>>(&dir.path().join("missing.json")), None);
        // Not the record's shape: none, as a fresh record.
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(read::<Vec<String>>(&path), None);
        // A link is taken for none.
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(read::<Vec<String>>(&link), None);
        assert_eq!(read_bounded::<Vec<String>>(&path, 3), None, "over its bound");
    }

    #[test]
    fn a_record_of_a_newer_version_is_never_overwritten_whatever_its_shape() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("limits.json");
        for newer in [r#"{"version": 2, "told": "a shape of its own"}"#, "{\"version\": 9}\n{\"tail\""] {
            std::fs::write(&path, newer).unwrap();
            let err = write(&path, &vec!["x".to_string()]).unwrap_err();
            assert!(format!("{err:#}").contains("record version"), "{err:#}");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), newer);
        }
        for ours in [r#"{"version": 1}"#, r#"["a"]"#, "{not json"] {
            std::fs::write(&path, ours).unwrap();
            write(&path, &vec!["x".to_string()]).unwrap();
        }
    }
}
