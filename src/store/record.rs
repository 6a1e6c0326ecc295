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
    let bytes = crate::store::fsutil::read_regular(path, MAX_BYTES).ok().flatten()?;
    serde_json::from_slice(&bytes).ok()
}

/// Replaces the record at `path`, atomically, in a private folder.
pub fn write<T: Serialize>(path: &Path, record: &T) -> Result<()> {
    if let Some(dir) = path.parent() {
        crate::store::fsutil::create_private_dir(dir)?;
    }
    let text = serde_json::to_vec_pretty(record).context("cannot encode a state record")?;
    crate::store::fsutil::write_atomic(path, &text, false)
}
