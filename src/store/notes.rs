//! What the last save leaves for the next fork's notes, bounded, in the
//! project folder's record.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::memory::apply::Refusal;
use crate::store::folder::Folder;

#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Notes {
    pub skipped: Vec<String>,
    pub refused: Vec<Refusal>,
    /// How many more there were than are kept.
    pub more_skipped: usize,
    pub more_refused: usize,
    /// Guards (ids) whose question the user answered by letting the call
    /// run since the last save: the next fork is told their rules.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub let_through: Vec<String>,
}

impl Notes {
    /// The first `keep` of each and a count of the rest, so one bad reply
    /// does not make every later message large.
    pub fn bounded(skipped: &[String], refused: &[Refusal], keep: usize) -> Notes {
        Notes {
            let_through: Vec::new(),
            skipped: skipped.iter().take(keep).cloned().collect(),
            refused: refused.iter().take(keep).cloned().collect(),
            more_skipped: skipped.len().saturating_sub(keep),
            more_refused: refused.len().saturating_sub(keep),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.skipped.is_empty() && self.refused.is_empty() && self.let_through.is_empty()
    }
}

/// The project's notes, in its folder's record; none when absent.
pub fn read(folder: &Folder) -> Notes {
    super::folder_record::read(folder).notes
}

pub fn write(folder: &Folder, notes: &Notes) -> Result<()> {
    super::folder_record::update(folder, false, |r| r.notes = notes.clone())
}

/// A save's notes for the next fork; the let-through guards it was told of
/// go, and any the user let through while it ran stay.
pub fn write_after_save(folder: &Folder, notes: Notes, told: &[String]) -> Result<()> {
    super::folder_record::update(folder, false, |r| {
        let since: Vec<String> = r.notes.let_through.iter().filter(|id| !told.contains(id)).cloned().collect();
        r.notes = Notes { let_through: since, ..notes };
    })
}
