//! A project's guards (`memory::guard`) in `guards.json` beside MEMORY.md, so
//! they travel with the memory (sync, a team's repository). A guard belongs
//! to its rule's line: it binds only while that line is among the CRITICAL
//! RULES a session loaded, and it goes when a write takes the line away.
//! A guard that came from elsewhere is foreign, as a rule is: with the
//! review gate on it binds nothing until approved here. What this machine
//! saw of each (fired, overridden) stays in the folder's record.

use anyhow::{Result, bail};
use serde::{Deserialize, Serialize};

use super::folder::Folder;
use crate::memory::guard::{Active, Decision, Spec};

pub const GUARDS_FILE: &str = "guards.json";
/// `guards.json`'s format: another version binds nothing and is never overwritten.
pub use super::record::VERSION;
/// A guards file is a few kilobytes; anything larger is not ours.
const MAX_BYTES: u64 = 256 * 1024;

#[derive(Debug, Default, Serialize, Deserialize)]
struct GuardsFile {
    version: u32,
    guards: Vec<Stored>,
}

/// The file as read: each entry on its own, so one bad entry (a synced
/// file can hold anything) costs only itself.
#[derive(Deserialize)]
struct RawFile {
    version: u32,
    #[serde(default)]
    guards: Vec<serde_json::Value>,
}

/// A guard as `guards.json` keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    pub id: String,
    /// The CRITICAL RULES line it belongs to, exactly.
    pub rule: String,
    #[serde(flatten)]
    pub spec: Spec,
    #[serde(default)]
    pub decision: Decision,
    /// Unix time it was made.
    #[serde(default)]
    pub since: i64,
}

/// Where a guard stands on this machine.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    Binds,
    /// Foreign, with `review = "rules"`: `memory-save guards --approve ID`.
    WaitsForReview,
    /// Its line is not among the CRITICAL RULES loaded.
    RuleNotLoaded,
    /// The gate refuses it (a synced file can carry anything).
    Refused(String),
}

impl Standing {
    pub fn words(&self) -> String {
        match self {
            Standing::Binds => "binds".into(),
            Standing::WaitsForReview => "waits for review".into(),
            Standing::RuleNotLoaded => "its rule is not loaded".into(),
            Standing::Refused(why) => format!("refused: {why}"),
        }
    }
}

fn id_of(rule: &str, spec: &Spec) -> String {
    crate::memory::stable_id(&format!("{rule}\n{:?}\n{}", spec.tool, spec.pattern))
}

/// The folder's guards; none when the file is missing, or cannot be read
/// (`load` says why): such a file binds nothing.
pub fn read(folder: &Folder) -> Vec<Stored> {
    load(folder).unwrap_or_default()
}

/// A guards file that is there but cannot be read as this version's: it
/// binds nothing, and is never written over, since its guards may be
/// someone's. Holds what is wrong; `Display` adds what to do.
#[derive(Debug)]
pub struct Unreadable(pub String);

/// What to do about an unreadable guards file.
pub const UNREADABLE_FIX: &str = "fix it (a sync conflict leaves git's markers in it) or remove it";

impl std::fmt::Display for Unreadable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}; {UNREADABLE_FIX}", self.0)
    }
}

impl std::error::Error for Unreadable {}

/// The folder's guards, or why the file there cannot be read (a conflict
/// git left, a newer memory-save's format).
pub fn load(folder: &Folder) -> Result<Vec<Stored>, Unreadable> {
    let path = folder.dir.join(GUARDS_FILE);
    let unreadable = |why: String| {
        Unreadable(format!(
            "{GUARDS_FILE} in {} cannot be read ({why}), so its guards bind nothing",
            folder.dir.display()
        ))
    };
    let bytes = match crate::store::fsutil::read_regular(&path, MAX_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => return Err(unreadable(format!("{e:#}"))),
    };
    let file = serde_json::from_slice::<RawFile>(&bytes).map_err(|e| unreadable(format!("not JSON: {e}")))?;
    if file.version != VERSION {
        return Err(unreadable(format!("format version {}, not {VERSION}: upgrade memory-save", file.version)));
    }
    let mut guards: Vec<Stored> = Vec::new();
    for entry in file.guards {
        // An id is ours (8 hex digits, as `id_of` makes them) and names one
        // guard: the first of a repeated id stands.
        let Ok(guard) = serde_json::from_value::<Stored>(entry) else { continue };
        let ours = guard.id.len() == 8 && guard.id.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        if ours && !guards.iter().any(|g| g.id == guard.id) {
            guards.push(guard);
        }
    }
    Ok(guards)
}

/// What makes a guard this machine's: all of it, not its id (which a
/// synced file can copy onto another pattern or decision).
pub fn trust_key(guard: &Stored) -> String {
    serde_json::json!([guard.rule, guard.spec.tool, guard.spec.pattern, guard.decision]).to_string()
}

/// Replaces the folder's guards (the file goes when none is left). Call
/// under the project lock, after `load` read the file (never over one it
/// could not).
fn write(folder: &Folder, guards: &[Stored]) -> Result<()> {
    let path = folder.dir.join(GUARDS_FILE);
    if guards.is_empty() {
        return crate::store::fsutil::remove_if_there(&path);
    }
    let file = GuardsFile { version: VERSION, guards: guards.to_vec() };
    crate::store::record::write_durable(&path, &file)
}

/// After a write of MEMORY.md from `before` to `after`: the guards of the
/// rules it took away go, and `added` stand (a rule's new guard replaces
/// its old one). This machine's own guards are recorded as such. Call
/// under the project lock.
pub fn after_write(folder: &Folder, before: &str, after: &str, added: &[(String, Spec)]) -> Result<()> {
    let kept = crate::memory::template::critical_rules(after);
    let gone: Vec<String> =
        crate::memory::template::critical_rules(before).into_iter().filter(|r| !kept.contains(r)).collect();
    if gone.is_empty() && added.is_empty() {
        return Ok(());
    }
    let existing = load(folder)?;
    // A guard the user made refuse is never swapped for a reply's.
    let added: Vec<&(String, Spec)> = added
        .iter()
        .filter(|(rule, _)| !existing.iter().any(|g| g.rule == *rule && g.decision == Decision::Deny))
        .collect();
    let mut guards = existing.clone();
    guards.retain(|g| !gone.contains(&g.rule) && !added.iter().any(|(rule, _)| *rule == g.rule));
    let now = crate::env::now_unix();
    let new: Vec<Stored> = added
        .into_iter()
        .map(|(rule, spec)| Stored {
            id: id_of(rule, spec),
            rule: rule.clone(),
            spec: spec.clone(),
            decision: Decision::Ask,
            since: now,
        })
        .collect();
    guards.extend(new.iter().cloned());
    if guards == existing {
        return Ok(());
    }
    write(folder, &guards)?;
    let keys: Vec<String> = new.iter().map(trust_key).collect();
    super::folder_record::update(folder, false, |r| super::approvals::add_new(&mut r.own_guards, &keys))
}

/// Each guard and where it stands, given the CRITICAL RULES a session
/// loads (held rules left out), worked out only when there are guards: a
/// load of a 49 KB memory without any should not pay for it.
pub fn standings(folder: &Folder, rules: impl FnOnce() -> Vec<String>, review: bool) -> Vec<(Stored, Standing)> {
    let guards = read(folder);
    if guards.is_empty() {
        return Vec::new();
    }
    let rules = rules();
    let record = super::folder_record::read(folder);
    let (own, narrow) = (record.own_guards, record.narrow_guards);
    let mut judged = Vec::new();
    // A guard this machine made refuse stays refusing: a change from
    // elsewhere (a sync) never weakens it to asking without the user here.
    let guards: Vec<Stored> = guards
        .into_iter()
        .map(|g| {
            let denied_here = own.contains(&trust_key(&Stored { decision: Decision::Deny, ..g.clone() }));
            if denied_here { Stored { decision: Decision::Deny, ..g } } else { g }
        })
        .collect();
    let is_own = |g: &Stored| own.contains(&trust_key(g));
    // Approved here as it was listed, asking (`change`).
    let trusted = |g: &Stored| is_own(g) || own.contains(&trust_key(&Stored { decision: Decision::Ask, ..g.clone() }));
    // This machine's own first, so planted guards cannot crowd them out;
    // the cap counts only guards that would bind, and what is past it is
    // never compiled.
    let mut order: Vec<usize> = (0..guards.len()).collect();
    order.sort_by_key(|&at| !trusted(&guards[at]));
    let mut standing: Vec<Standing> = vec![Standing::RuleNotLoaded; guards.len()];
    let (mut binding, mut foreign) = (0, 0);
    let too_many = || Standing::Refused(format!("a project holds at most {} guards", crate::memory::guard::MAX_GUARDS));
    for at in order {
        let g = &guards[at];
        standing[at] = if !rules.contains(&g.rule) {
            Standing::RuleNotLoaded
        } else if binding >= crate::memory::guard::MAX_GUARDS {
            too_many()
        } else if !trusted(g) && foreign >= super::guard_counts::FOREIGN_JUDGED {
            // A synced file of refused guards would otherwise have each
            // judged at every load, past the start's deadline.
            too_many()
        } else if let Some(why) = (!trusted(g))
            .then(|| {
                foreign += 1;
                super::guard_counts::foreign_refusal(g, &narrow, &mut judged)
            })
            .flatten()
        {
            // This machine's own guards passed the gate when written; one
            // from elsewhere is judged at every load, its breadth once.
            Standing::Refused(why)
        } else if review && !trusted(g) {
            Standing::WaitsForReview
        } else {
            binding += 1;
            Standing::Binds
        };
    }
    super::guard_counts::remember_narrow(folder, &guards, &narrow, &judged);
    guards
        .into_iter()
        .zip(standing)
        .map(|(mut g, standing)| {
            // Only the user's own guard refuses: one from elsewhere asks.
            if !is_own(&g) {
                g.decision = Decision::Ask;
            }
            (g, standing)
        })
        .collect()
}

/// The guards that bind, as a session keeps them.
pub fn active(folder: &Folder, rules: impl FnOnce() -> Vec<String>, review: bool) -> Vec<Active> {
    standings(folder, rules, review)
        .into_iter()
        .filter(|(_, s)| *s == Standing::Binds)
        .map(|(g, _)| Active::new(g.id, g.rule, g.spec, g.decision))
        .collect()
}

/// The CRITICAL RULES a session of this folder loads now: through the load
/// gate, as SessionStart reads them, without the foreign ones the review
/// gate holds.
pub fn rules_loaded_now(folder: &Folder, review: bool) -> Vec<String> {
    let memory = folder.read_memory().ok().flatten().unwrap_or_default();
    let held = if review { super::approvals::foreign(folder, &memory) } else { Vec::new() };
    let loaded = folder.gated(&memory, false).text;
    crate::memory::template::critical_rules(&loaded).into_iter().filter(|r| !held.contains(r)).collect()
}

/// Gives every open session of the folder's project the guards that bind
/// now, so a change binds from the next tool call.
pub fn publish(folder: &Folder, review: bool) {
    let active = super::session::BoundGuards::of(&active(folder, || rules_loaded_now(folder, review), review));
    let sessions = super::state::SessionStore::new(folder.state_root().join("sessions"));
    for (id, state) in sessions.all() {
        if state.input.project.as_deref() != Some(folder.key().as_str()) || state.input.guards == active {
            continue;
        }
        if let Err(e) = sessions.update(&id, |s| s.input.guards.clone_from(&active)) {
            crate::store::log::error(&format!("cannot give session {id} its guards: {e:#}"));
        }
    }
}

/// The user's change to a guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Decide(Decision),
    /// It binds here, with the review gate on.
    Approve,
    Remove,
}

/// Changes one guard, named by its id or the id's first characters. The
/// user's own change: the guard becomes this machine's.
pub fn change(folder: &Folder, id: &str, action: Action) -> Result<Stored> {
    let _lock = folder.lock()?;
    let mut guards = load(folder)?;
    let exact: Vec<usize> = (0..guards.len()).filter(|&i| guards[i].id == id).collect();
    let prefix = || (0..guards.len()).filter(|&i| !id.is_empty() && guards[i].id.starts_with(id)).collect();
    let at = match (if exact.is_empty() { prefix() } else { exact })[..] {
        [at] => at,
        [] => bail!("no guard {id:?} in {}; `memory-save guards` lists them", folder.project),
        _ => bail!("{id:?} names more than one guard; give more of its id"),
    };
    // Trust is in the guard as the user last left it: what they removed or
    // changed is foreign again if a sync brings it back. An approval trusts
    // it as the list showed it: a foreign one asking, whatever the file
    // (another machine's, left as it is) says.
    let was = [Decision::Ask, Decision::Deny].map(|decision| trust_key(&Stored { decision, ..guards[at].clone() }));
    let own = super::folder_record::read(folder).own_guards.contains(&trust_key(&guards[at]));
    if !own
        && action != Action::Remove
        && let Some(why) = crate::memory::gate::guard_refusal(&guards[at].spec, &guards[at].rule)
    {
        bail!(
            "the gate refuses guard {} ({why}), so it never binds; memory-save guards --remove {} drops it",
            guards[at].id,
            guards[at].id
        );
    }
    let mut trusted = guards[at].clone();
    match action {
        Action::Decide(decision) => trusted.decision = decision,
        Action::Approve if !own => trusted.decision = Decision::Ask,
        Action::Approve | Action::Remove => {}
    }
    if action != Action::Approve {
        if action == Action::Remove {
            guards.remove(at);
        } else {
            guards[at] = trusted.clone();
        }
        write(folder, &guards)?;
    }
    super::folder_record::update(folder, true, |r| {
        r.own_guards.retain(|k| !was.contains(k));
        if action != Action::Remove {
            r.own_guards.push(trust_key(&trusted));
        }
    })?;
    Ok(trusted)
}

/// Merges two versions of a guards file for git, by guard id against the
/// base: a guard one side added stays, one side removed goes unless the
/// other changed it, and when both changed one the one that refuses wins.
/// `Err` (a version cannot be read) leaves git's conflict.
pub fn merge(base: Option<&str>, ours: &str, theirs: &str) -> Result<String> {
    let parse = |text: &str, which: &str| -> Result<Vec<Stored>> {
        match serde_json::from_str::<GuardsFile>(text) {
            Ok(file) if file.version == VERSION => Ok(file.guards),
            _ => bail!("{which} is not a guards file of version {VERSION}; git keeps its own conflict"),
        }
    };
    let base = match base {
        Some(text) => parse(text, "the base")?,
        None => Vec::new(),
    };
    let (ours, theirs) = (parse(ours, "ours")?, parse(theirs, "theirs")?);
    let find = |list: &[Stored], id: &str| list.iter().find(|g| g.id == id).cloned();
    let mut merged = Vec::new();
    for mine in &ours {
        let was = find(&base, &mine.id);
        match find(&theirs, &mine.id) {
            Some(other) if was.as_ref() == Some(mine) => merged.push(other),
            Some(other) if other.decision == Decision::Deny => merged.push(other),
            Some(_) => merged.push(mine.clone()),
            // They removed it: gone, unless this side changed it since.
            None if was.as_ref() == Some(mine) => {}
            None => merged.push(mine.clone()),
        }
    }
    for other in theirs.iter().filter(|g| find(&ours, &g.id).is_none()) {
        if find(&base, &other.id).as_ref() != Some(other) {
            merged.push(other.clone());
        }
    }
    let file = GuardsFile { version: VERSION, guards: merged };
    Ok(serde_json::to_string_pretty(&file)? + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::guard::Tool;
    use crate::store::paths::Roots;
    use serde_json::json;

    fn memory(rules: &[&str]) -> String {
        let mut text = String::from("# p\n\n## CRITICAL RULES\n");
        for rule in rules {
            text.push_str(&format!("{rule}\n"));
        }
        text.push_str("\n## Architecture & Config Facts\n- None yet.\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n");
        text
    }

    fn bash(pattern: &str) -> Spec {
        Spec { tool: Tool::Bash, pattern: pattern.into() }
    }

    /// A memory folder `proj` under a fresh root (the root lives as long as the guard).
    fn folder() -> (tempfile::TempDir, Folder) {
        let dir = tempfile::tempdir().unwrap();
        let folder = Folder::new(&Roots::at(dir.path().to_path_buf()), "proj");
        std::fs::create_dir_all(&folder.dir).unwrap();
        (dir, folder)
    }

    #[test]
    fn a_guard_goes_with_its_rule_and_binds_only_while_it_is_loaded() {
        let (_dir, folder) = folder();
        let rule = "- Never run the integration tests locally.";
        let with = memory(&[rule, "- Keep it small."]);
        let rules = |text: &str| crate::memory::template::critical_rules(text);
        after_write(&folder, &memory(&[]), &with, &[(rule.into(), bash("pytest tests/integration"))]).unwrap();
        assert_eq!(active(&folder, || rules(&with), false).len(), 1);
        assert_eq!(active(&folder, || rules(&with), true).len(), 1, "this machine's own guard binds under review");
        assert_eq!(
            active(&folder, || rules(&memory(&["- Keep it small."])), false),
            Vec::new(),
            "not loaded: binds nothing"
        );
        // Another write keeps it; one that takes the rule away removes it.
        after_write(&folder, &with, &memory(&[rule]), &[]).unwrap();
        assert_eq!(read(&folder).len(), 1);
        after_write(&folder, &memory(&[rule]), &memory(&["- Keep it sharp."]), &[]).unwrap();
        assert!(read(&folder).is_empty());
        assert!(!folder.dir.join(GUARDS_FILE).exists(), "no guards: no file");
    }

    /// A foreign guard's breadth is judged once and remembered; one past the
    /// bound of judged guards is not judged, so not remembered; one gone
    /// from the file is forgotten.
    #[test]
    fn only_a_judged_narrow_guard_is_remembered_and_a_gone_one_is_forgotten() {
        let (_dir, folder) = folder();
        let rule = "- Never run the integration tests locally.";
        let loaded = || vec![rule.to_string()];
        let broad =
            |n: usize| json!({"id": format!("{n:08x}"), "rule": rule, "tool": "Bash", "match": format!(".{{0,{n}}}")});
        let narrow = json!({"id": "eeeeeeee", "rule": rule, "tool": "Bash", "match": "pytest tests/integration"});
        let load = |guards: &[serde_json::Value]| {
            let file = json!({"version": 1, "guards": guards}).to_string();
            std::fs::write(folder.dir.join(GUARDS_FILE), file).unwrap();
            standings(&folder, loaded, true);
            crate::store::folder_record::read(&folder).narrow_guards.len()
        };
        let mut planted: Vec<serde_json::Value> = (1..=60).map(broad).collect();
        planted.push(narrow);
        assert_eq!(load(&planted), 0, "past the bound: not judged");
        planted.rotate_right(1);
        assert_eq!(load(&planted), 1, "judged narrow");
        assert_eq!(load(&[broad(1)]), 0, "gone from the file");
    }

    #[test]
    fn a_merge_keeps_each_sides_changes_and_a_refusal_wins() {
        let guard = |id: &str, decision: &str| json!({"id": id, "rule": format!("- rule {id}"), "tool": "Bash", "match": id, "decision": decision});
        let file = |guards: Vec<serde_json::Value>| json!({"version": 1, "guards": guards}).to_string();
        let ids = |text: &str| -> Vec<(String, Decision)> {
            serde_json::from_str::<GuardsFile>(text).unwrap().guards.into_iter().map(|g| (g.id, g.decision)).collect()
        };
        let base = file(vec![guard("kept", "ask"), guard("gone", "ask"), guard("both", "ask")]);
        let ours = file(vec![guard("kept", "ask"), guard("both", "ask"), guard("mine", "ask")]);
        let theirs =
            file(vec![guard("kept", "deny"), guard("gone", "ask"), guard("both", "deny"), guard("new", "ask")]);
        let merged = merge(Some(&base), &ours, &theirs).unwrap();
        let d = |id: &str, decision| (id.to_string(), decision);
        assert_eq!(
            ids(&merged),
            [d("kept", Decision::Deny), d("both", Decision::Deny), d("mine", Decision::Ask), d("new", Decision::Ask)]
        );
        assert_eq!(ids(&merge(None, &ours, &file(vec![])).unwrap()).len(), 3);
        assert!(merge(None, &ours, "{\"version\": 2, \"guards\": []}").is_err());
        assert!(merge(None, "not json", &ours).is_err());
    }

    #[test]
    fn a_foreign_guard_waits_for_review_and_a_refused_one_never_binds() {
        let (_dir, folder) = folder();
        let rule = "- Never push to main.";
        let planted = serde_json::json!({"version": 1, "guards": [
            {"id": "aaaaaaaa", "rule": rule, "tool": "Bash", "match": "git push", "decision": "deny"},
            {"id": "bbbbbbbb", "rule": rule, "tool": "Bash", "match": ".*"},
            {"id": "aaaaaaaa", "rule": rule, "tool": "Bash", "match": ".{3,}", "decision": "deny"},
            {"id": "not-ours", "rule": rule, "tool": "Bash", "match": "rm -rf"},
            {"id": "cccccccc", "rule": rule, "tool": "Bash", "match": "x", "decision": "allow"},
        ]});
        std::fs::write(folder.dir.join(GUARDS_FILE), planted.to_string()).unwrap();
        let loaded = vec![rule.to_string()];
        let words: Vec<String> = standings(&folder, || loaded.clone(), true).iter().map(|(_, s)| s.words()).collect();
        assert_eq!(
            words,
            [
                "waits for review",
                "refused: it matches the ordinary command `ls` and 100% of 2500 ordinary commands, so it would ask all the time"
            ]
        );
        assert_eq!(
            active(&folder, || loaded.clone(), false).len(),
            1,
            "the gate off: a foreign guard binds, as its rule loads"
        );
        change(&folder, "aa", Action::Decide(Decision::Ask)).unwrap();
        let bound = active(&folder, || loaded.clone(), true);
        assert_eq!((bound.len(), bound[0].decision), (1, Decision::Ask), "approved here by the user's change");
        assert!(change(&folder, "zz", Action::Remove).unwrap_err().to_string().contains("no guard"));
        let many: Vec<serde_json::Value> = (0..2000)
            .map(|n| json!({"id": format!("{n:08x}"), "rule": rule, "tool": "Bash", "match": format!("cmd{n} --x")}))
            .collect();
        std::fs::write(folder.dir.join(GUARDS_FILE), json!({"version": 1, "guards": many}).to_string()).unwrap();
        let started = std::time::Instant::now();
        assert_eq!(active(&folder, || loaded.clone(), false).len(), 20, "the first 20 bind");
        assert!(started.elapsed() < std::time::Duration::from_secs(1), "{:?}", started.elapsed());
        std::fs::write(folder.dir.join(GUARDS_FILE), r#"{"version": 2, "guards": []}"#).unwrap();
        assert!(read(&folder).is_empty(), "another version binds nothing");
        assert!(change(&folder, "aa", Action::Remove).is_err());
    }
}
