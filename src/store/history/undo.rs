//! Undo, recorded as a change of its own so a second undo redoes; and a
//! change another tool made (git's undo) recorded after the fact.

use std::collections::BTreeMap;

use anyhow::{Result, bail};

use super::{Before, Entry, Origin, check_name, numbers, put, read, restored, write_entry};
use crate::store::folder::{Folder, read_if_exists};

/// What `undo` would do: the entry it goes back before, the newest, and
/// each file as it is now and as it will be (`None`: removed).
pub struct UndoPlan {
    pub from: u64,
    pub newest: u64,
    /// The message of the first change undone, without undo labels.
    pub message: String,
    pub files: BTreeMap<String, (Option<String>, Option<String>)>,
    /// A file changed since the newest entry, by hand or another tool.
    pub hand_edited: Vec<String>,
}

/// Plans putting the files back as before change `from` (the newest when
/// `None`) and every later one. Call with the project lock held.
pub fn plan_undo(folder: &Folder, from: Option<u64>) -> Result<UndoPlan> {
    let numbers = numbers(folder);
    let Some(&newest) = numbers.last() else {
        bail!("no history for project {} yet: nothing to undo", folder.project);
    };
    let from = from.unwrap_or(newest);
    if !numbers.contains(&from) {
        bail!("project {} has no history entry #{from} (see memory-save history)", folder.project);
    }
    let mut files: BTreeMap<String, (Option<String>, Option<String>)> = BTreeMap::new();
    let mut hand_edited = Vec::new();
    let mut message = String::new();
    for number in numbers.iter().rev().take_while(|n| **n >= from) {
        let entry = read(folder, *number)?;
        for (name, before) in &entry.files {
            check_name(*number, name)?;
            if !files.contains_key(name) {
                let now = read_if_exists(&folder.dir.join(name))?;
                // The newest entry that touched this file says how it was left.
                if entry.after.get(name).is_some_and(|after| !after.holds(now.as_deref())) {
                    hand_edited.push(name.clone());
                }
                files.insert(name.clone(), (now.clone(), now));
            }
            let target = &mut files.get_mut(name).expect("inserted above").1;
            *target = restored(folder, name, before, target.as_deref(), *number)?;
        }
        message = unlabelled(&entry.message).to_string();
    }
    // An entry is a file in the memory folder, which a sync remote or a
    // hand may have written: what it puts back passes the one gate.
    let mut refused = Vec::new();
    for (name, (now, target)) in &files {
        if let (Some(target), true) = (target, name.ends_with(".md")) {
            for r in crate::memory::gate::refused_additions(now.as_deref().unwrap_or_default(), target) {
                refused.push(format!("{name} line {}: {}", r.line, r.why));
            }
        }
    }
    if !refused.is_empty() {
        bail!(
            "undo would put back lines the gate refuses, so nothing was changed; the history in {} holds text no save wrote:\n  {}",
            folder.dir.join(super::HISTORY_DIR).display(),
            refused.join("\n  ")
        );
    }
    Ok(UndoPlan { from, newest, message, files, hand_edited })
}

/// A message without the undo labels before it, so labels never nest.
fn unlabelled(message: &str) -> &str {
    let mut rest = message;
    while let Some(after) = rest.strip_prefix("undo of #").or_else(|| rest.strip_prefix("redo of #")) {
        match after.split_once(": ") {
            Some((number, tail)) if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
                rest = tail
            }
            _ => break,
        }
    }
    rest
}

/// `undo of #3: …`, `undo of #3-#5: …`; an undo of an undo says `redo of`.
fn undo_label(folder: &Folder, plan: &UndoPlan) -> Result<String> {
    let first = read(folder, plan.from)?;
    let redo = plan.from == plan.newest && first.message.starts_with("undo of #");
    let numbers =
        if plan.from == plan.newest { format!("#{}", plan.from) } else { format!("#{}-#{}", plan.from, plan.newest) };
    Ok(format!("{} of {numbers}: {}", if redo { "redo" } else { "undo" }, plan.message))
}

/// Carries out `plan`, recording it first. Call with the project lock held.
pub fn apply_undo(folder: &Folder, plan: &UndoPlan) -> Result<String> {
    let mut inverse = BTreeMap::new();
    for (name, (now, _)) in &plan.files {
        inverse.insert(name.clone(), now.clone().map_or(Before::Absent, Before::Text));
    }
    let label = undo_label(folder, plan)?;
    let origin = Origin { by: Some("memory-save undo".into()), ..Origin::default() };
    let undo = write_entry(folder, Entry::new(&label, inverse, origin, Vec::new()))?;
    let written =
        plan.files.iter().try_for_each(|(name, (now, target))| put(folder, name, now.as_deref(), target.as_deref()));
    if let Err(e) = written {
        let _ = undo.roll_back(folder);
        return Err(e);
    }
    undo.seal(folder)?;
    Ok(label)
}

/// Records a change another tool already made (git's undo, with sync on),
/// so the local history stays whole. Call with the project lock held.
pub fn record_made(
    folder: &Folder,
    message: &str,
    before: &BTreeMap<String, Option<String>>,
    origin: &Origin,
) -> Result<()> {
    let mut files = BTreeMap::new();
    for (name, old) in before {
        let now = read_if_exists(&folder.dir.join(name))?;
        if now != *old && check_name(0, name).is_ok() {
            files.insert(name.clone(), old.clone().map_or(Before::Absent, Before::Text));
        }
    }
    if files.is_empty() {
        return Ok(());
    }
    write_entry(folder, Entry::new(message, files, origin.clone(), Vec::new()))?.seal(folder)
}
