//! Which CRITICAL RULES of a personal memory are not foreign. A rule is
//! foreign when it did not come from this machine's own writes (a sync
//! pull, a hand edit outside `memory-save edit`); foreign rules are quoted
//! once, and with `review = "rules"` held until approved. An approval is
//! this machine's (`approved_here`) and never travels: anyone who can push
//! to a sync remote could write one (docs/design.md §5).

use anyhow::Result;

use super::folder::Folder;
use super::folder_record::{FolderRecord, Orders, read, update};

/// Approves `rules` here, the only place an approval counts, with their guards.
pub fn approve(folder: &Folder, rules: &[String]) -> Result<()> {
    update(folder, true, |r| add_new(&mut r.approved_here, rules))?;
    approve_guards(folder, rules)
}

/// A rule and its guard are approved together: the guard as the review
/// listed it, asking, and only that guard (a later change of it waits).
pub fn approve_guards(folder: &Folder, rules: &[String]) -> Result<()> {
    let guards: Vec<String> = super::guards::read(folder)
        .into_iter()
        .filter(|g| rules.contains(&g.rule))
        // Trust skips the gate at every load: one it refuses stays refused.
        .filter(|g| crate::memory::gate::guard_refusal(&g.spec, &g.rule).is_none())
        .map(|g| {
            super::guards::trust_key(&super::guards::Stored { decision: crate::memory::guard::Decision::Ask, ..g })
        })
        .collect();
    if guards.is_empty() {
        return Ok(());
    }
    update(folder, false, |r| add_new(&mut r.own_guards, &guards))
}

/// Adds each of `rules` that `list` lacks, in order.
pub(super) fn add_new(list: &mut Vec<String>, rules: &[String]) {
    for rule in rules {
        if !list.contains(rule) {
            list.push(rule.clone());
        }
    }
}

pub fn add_own(folder: &Folder, rules: &[String]) -> Result<()> {
    if rules.is_empty() {
        return Ok(());
    }
    update(folder, false, |r| add_new(&mut r.own, rules))
}

pub fn quoted(folder: &Folder) -> Vec<String> {
    read(folder).quoted
}

pub fn set_quoted(folder: &Folder, rules: &[String]) -> Result<()> {
    update(folder, false, |r| r.quoted = rules.to_vec())
}

/// The rules neither approved nor this machine's own: what a write must not
/// launder as its own.
pub fn foreign(folder: &Folder, memory: &str) -> Vec<String> {
    // One read of the record: every session start asks.
    let record = read(folder);
    instruction_lines(folder, &record, memory)
        .into_iter()
        .filter(|r| !record.approved_here.contains(r) && !record.own.contains(r))
        .collect()
}

/// `gate::instruction_lines`, remembered for the text last asked about:
/// every session start asks, and on a 49 KB file it is most of the load's
/// cost (5.8M of 9.2M instructions).
fn instruction_lines(folder: &Folder, record: &FolderRecord, memory: &str) -> Vec<String> {
    let mark = super::folder::checked_mark(memory);
    if let Some(remembered) = &record.orders
        && mark.as_deref() == Some(remembered.mark.as_str())
    {
        return remembered.lines.clone();
    }
    let lines = crate::memory::gate::instruction_lines(memory);
    if let Some(mark) = mark
        && let Err(e) = update(folder, false, |r| r.orders = Some(Orders { mark, lines: lines.clone() }))
    {
        crate::store::log::error(&format!("cannot remember the memory's order lines: {e:#}"));
    }
    lines
}
