//! The review gate's pending list of held CRITICAL RULES edits, in the
//! project folder's record.

use anyhow::Result;
use serde::{Deserialize, Serialize};

use crate::memory::reply::Op;
use crate::store::folder::Folder;
use crate::store::history::Origin;

/// One held op. Its id is a hash of the op, so the same op held twice is
/// one entry, and an id read off the status line still names it later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pending {
    pub id: String,
    pub op: Op,
    /// Unix time it was held.
    pub at: i64,
    #[serde(default)]
    pub origin: Origin,
}

pub fn id_of(op: &Op) -> String {
    crate::memory::stable_id(&serde_json::to_string(op).unwrap_or_default())
}

/// The pending list of a memory (empty when none or unreadable): each
/// working tree of a team memory holds its own copy, and so its own list.
pub fn load(folder: &Folder) -> Vec<Pending> {
    super::folder_record::read(folder).review
}

pub fn store(folder: &Folder, pending: &[Pending]) -> Result<()> {
    super::folder_record::update(folder, true, |r| r.review = pending.to_vec())
}

pub fn hold(folder: &Folder, ops: &[Op], origin: &Origin) -> Result<()> {
    if ops.is_empty() {
        return Ok(());
    }
    super::folder_record::update(folder, true, |r| {
        for op in ops {
            let id = id_of(op);
            if !r.review.iter().any(|p| p.id == id) {
                r.review.push(Pending { id, op: op.clone(), at: crate::env::now_unix(), origin: origin.clone() });
            }
        }
    })
}
