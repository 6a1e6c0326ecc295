//! What this machine saw of a project's guards (fired, let through, told
//! once, judged narrow), kept in the folder's record beside the guards
//! themselves (`store::guards`).

use std::collections::BTreeMap;

use anyhow::Result;
use serde::{Deserialize, Serialize};

use super::folder::Folder;
use super::paths::Roots;
use crate::memory::guard::Active;

/// What this machine saw of the project's guards.
pub fn seen(roots: &Roots, project: &str) -> BTreeMap<String, Seen> {
    let mut seen = super::folder_record::read(&Folder::of_key(roots, project)).guards_seen;
    // With what the project's open sessions fired and have not folded in yet.
    let sessions = super::state::SessionStore::new(roots.sessions_dir());
    for (_, state) in sessions.all().into_iter().filter(|(_, s)| s.input.project.as_deref() == Some(project)) {
        for (id, times) in state.input.fired {
            seen.entry(id).or_default().fired += times;
        }
    }
    seen
}

/// Counts guards that fired in a session (`SessionInput::fired`), folded in
/// from the session's state after the hot hook that answered.
pub fn count_fired(roots: &Roots, project: &str, fired: &BTreeMap<String, u64>) -> Result<()> {
    let now = crate::env::now_unix();
    super::folder_record::update(&Folder::of_key(roots, project), false, |r| {
        for (id, times) in fired {
            let seen = r.guards_seen.entry(id.clone()).or_default();
            seen.fired += times;
            seen.last_fired = Some(now);
        }
    })
}

/// Counts the user's answer to a guard's question, letting the call run,
/// which the next save's fork is told of (`Notes::let_through`).
pub fn count_let_through(roots: &Roots, project: &str, id: &str) -> Result<()> {
    super::folder_record::update(&Folder::of_key(roots, project), false, |r| {
        r.guards_seen.entry(id.to_string()).or_default().overridden += 1;
        if !r.notes.let_through.iter().any(|known| known == id)
            && r.notes.let_through.len() < crate::memory::prompt::MAX_NOTE_ENTRIES
        {
            r.notes.let_through.push(id.to_string());
        }
    })
}

/// The rules of the binding guards that did not come from this machine
/// and the user was not yet told of, recorded as told: a guard from
/// elsewhere is named once, when it first binds, as a foreign rule is.
pub fn first_bound_foreign(folder: &Folder, bound: &[Active]) -> Vec<String> {
    let key = |a: &Active| serde_json::json!([a.rule, a.tool, a.pattern, a.decision]).to_string();
    let record = super::folder_record::read(folder);
    let new: Vec<&Active> = bound
        .iter()
        .filter(|a| !record.own_guards.contains(&key(a)) && !record.told_guards.contains(&key(a)))
        .collect();
    if new.is_empty() {
        return Vec::new();
    }
    let keys: Vec<String> = new.iter().map(|a| key(a)).collect();
    if let Err(e) =
        super::folder_record::update(folder, false, |r| super::approvals::add_new(&mut r.told_guards, &keys))
    {
        crate::store::log::error(&format!("cannot record the guards told: {e:#}"));
    }
    new.iter().map(|a| a.rule.trim().trim_start_matches("- ").to_string()).collect()
}

/// What this machine saw of a guard.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Seen {
    pub fired: u64,
    /// Times the user let the call run after the question.
    pub overridden: u64,
    pub last_fired: Option<i64>,
}

/// Guards from elsewhere one load judges at most: as many again as bind.
pub(super) const FOREIGN_JUDGED: usize = 2 * crate::memory::guard::MAX_GUARDS;

/// Records the guards newly judged narrow; what the file no longer holds
/// is forgotten, so the folder's record stays small whatever syncs bring.
pub(super) fn remember_narrow(folder: &Folder, guards: &[super::guards::Stored], narrow: &[String], judged: &[String]) {
    let held: Vec<String> = guards.iter().map(super::guards::trust_key).collect();
    if (!judged.is_empty() || narrow.iter().any(|k| !held.contains(k)))
        && let Err(e) = super::folder_record::update(folder, false, |r| {
            r.narrow_guards.retain(|k| held.contains(k));
            super::approvals::add_new(&mut r.narrow_guards, judged);
        })
    {
        crate::store::log::error(&format!("cannot record the guards judged narrow: {e:#}"));
    }
}

/// The gate's verdict on a guard from elsewhere: its shape every time, its
/// breadth (a scan of the corpus) once, remembered in `narrow` by its whole
/// content; a newly passed one joins `judged`.
pub(super) fn foreign_refusal(
    g: &super::guards::Stored,
    narrow: &[String],
    judged: &mut Vec<String>,
) -> Option<String> {
    let key = super::guards::trust_key(g);
    if narrow.contains(&key) {
        return g.spec.shape_refusal();
    }
    let why = crate::memory::gate::guard_refusal(&g.spec, &g.rule);
    if why.is_none() {
        judged.push(key);
    }
    why
}
