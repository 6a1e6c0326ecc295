//! A memory folder's history as `history` and `undo` see it: our own
//! `.history/`, the one history; with sync on, git's log only mirrors it.

use anyhow::{Result, bail};
use serde::Serialize;

use crate::memory::text::unified_diff;
use crate::store::folder::Folder;
use crate::store::history::{After, Before, Entry, Origin, apply_undo, list, plan_undo};

/// One recorded change, newest numbered highest.
#[derive(Debug, Clone, Serialize)]
pub struct Listed {
    pub number: u64,
    pub at: i64,
    /// The report line of the change.
    pub message: String,
    /// The files it changed (git's log: those of the commit).
    pub files: Vec<String>,
    pub origin: Origin,
    /// The lines it put into MEMORY.md.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
}

pub struct Undone {
    /// Each file it changed, as a unified diff.
    pub diffs: Vec<(String, String)>,
    pub label: String,
}

/// A folder's history: `.history/` beside its MEMORY.md (a team memory's
/// in our state folder).
pub struct History<'a> {
    pub folder: &'a Folder,
}

impl History<'_> {
    /// Every change, newest first.
    pub fn changes(&self) -> Result<Vec<Listed>> {
        Ok(list(self.folder)?.into_iter().map(|(number, entry)| listed(number, entry)).collect())
    }

    /// Change `number`, with each file it changed as a unified diff.
    pub fn show(&self, number: u64) -> Result<(Listed, Vec<(String, String)>)> {
        let entries = list(self.folder)?;
        let files = before_and_after(self.folder, number, &entries)?;
        let diffs = files.iter().map(|(name, old, new)| (name.clone(), unified_diff(old, new, Some(name)))).collect();
        let (number, entry) = entries.into_iter().find(|(n, _)| *n == number).expect("found above");
        Ok((listed(number, entry), diffs))
    }

    /// `plan_undo` and `apply_undo`, refusing to throw away a hand edit made
    /// since the newest change unless `force`. Call with the lock held.
    pub fn undo(&self, number: Option<u64>, force: bool) -> Result<Undone> {
        let plan = plan_undo(self.folder, number)?;
        if !plan.hand_edited.is_empty() && !force {
            bail!(
                "{} changed after the last recorded change (#{}), by hand or another tool; undo would throw that away. \
                 Keep the edit by saving a copy first, or undo anyway, losing it, with: memory-save undo{} --force",
                plan.hand_edited.join(", "),
                plan.newest,
                number.map(|n| format!(" {n}")).unwrap_or_default()
            );
        }
        let diffs = plan
            .files
            .iter()
            .map(|(name, (now, target))| {
                (name.clone(), unified_diff(now.as_deref().unwrap_or(""), target.as_deref().unwrap_or(""), Some(name)))
            })
            .collect();
        let label = apply_undo(self.folder, &plan)?;
        Ok(Undone { diffs, label })
    }
}

fn listed(number: u64, entry: Entry) -> Listed {
    Listed {
        number,
        at: entry.at,
        message: entry.message,
        files: entry.files.into_keys().collect(),
        origin: entry.origin,
        added: entry.added,
    }
}

/// The text of each file of change `number` before and after it. An entry
/// without `after` takes the next entry's before, or the file now.
fn before_and_after(folder: &Folder, number: u64, entries: &[(u64, Entry)]) -> Result<Vec<(String, String, String)>> {
    let Some((_, entry)) = entries.iter().find(|(n, _)| *n == number) else {
        bail!("project {} has no history entry #{number} (see memory-save history)", folder.project);
    };
    let mut files = Vec::new();
    for (name, before) in &entry.files {
        let recorded = entry.after.get(name);
        let later = entries.iter().rev().filter(|(n, _)| *n > number).find_map(|(_, e)| e.files.get(name));
        let now = || crate::store::folder::read_if_exists(&folder.dir.join(name)).ok().flatten().unwrap_or_default();
        let (old, new) = match (before, recorded) {
            (_, Some(After::Appended { text, .. })) => (String::new(), text.clone()),
            (Before::Length(_), None) => {
                (String::new(), String::from("(appended text not recorded by this version)\n"))
            }
            (before, after) => {
                let old = match before {
                    Before::Text(text) => text.clone(),
                    _ => String::new(),
                };
                let new = match (after, later) {
                    (Some(After::Text(text)), _) => text.clone(),
                    (Some(_), _) => String::new(),
                    (None, Some(Before::Text(text))) => text.clone(),
                    (None, Some(_)) => String::new(),
                    (None, None) => now(),
                };
                (old, new)
            }
        };
        files.push((name.clone(), old, new));
    }
    Ok(files)
}
