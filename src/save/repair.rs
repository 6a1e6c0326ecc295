//! The repair at load and before a save: a MEMORY.md out of the template is
//! put back into it, the old file kept (docs/design.md §5), as a history entry.

use anyhow::Result;

use crate::memory::template;
use crate::store::folder::{BACKUP_FILE, Folder, MEMORY_FILE};
use crate::store::history::{self, Change, Origin};

pub const REPAIR_REPORT: &str =
    "memory-save: MEMORY.md: put into the four sections (old copy: MEMORY.pre-migration.md)";

/// MEMORY.md in the template, repaired on disk first when needed (call with
/// the lock held); the flag says whether it was. `None`: no file.
pub fn read_repaired(folder: &Folder) -> Result<Option<(String, bool)>> {
    let Some(text) = folder.read_memory()? else { return Ok(None) };
    let Some(repaired) = template::repair(&text, &folder.project) else { return Ok(Some((text, false))) };
    folder.write_file(BACKUP_FILE, &text)?;
    let origin = Origin { by: Some("repair".into()), ..Default::default() };
    let recorded = history::record(folder, REPAIR_REPORT, &[Change::Rewrite(MEMORY_FILE)], &origin, Vec::new())?;
    folder.write_file(MEMORY_FILE, &repaired)?;
    recorded.seal(folder)?;
    Ok(Some((repaired, true)))
}
