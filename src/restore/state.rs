//! context-restore's setting and its last event (`memory-save restore`,
//! `status`): `state/memory-save/restore.json`.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::store::paths::Roots;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RestoreState {
    /// `memory-save restore off`; on by default.
    pub off: bool,
    pub last: Option<Event>,
}

/// The last call that got the current text of its file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub at: i64,
    pub name: String,
}

fn path(roots: &Roots) -> std::path::PathBuf {
    roots.state.join("restore.json")
}

pub fn read(roots: &Roots) -> RestoreState {
    crate::store::record::read(&path(roots)).unwrap_or_default()
}

pub fn write(roots: &Roots, state: &RestoreState) -> Result<()> {
    crate::store::record::write(&path(roots), state)
}
