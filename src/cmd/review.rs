//! `memory-save review`: the CRITICAL RULES changes the review gate
//! (`review = "rules"`) holds, and foreign rules (docs/design.md §5).

use anyhow::{Result, bail};

use crate::memory::apply::{self, Options};
use crate::memory::reply::{Op, Reply};
use crate::store::folder::Folder;
use crate::store::history::Origin;
use crate::store::paths::Roots;
use crate::store::review::{Pending, load, store};

/// `add to CRITICAL RULES: - Never …` and the like, for a person.
fn describe(op: &Op) -> String {
    match op {
        Op::Add { section, text } => format!("add to {section}: {text}"),
        Op::Remove { line } => format!("remove: {line}"),
        Op::Replace { line, text } => format!("replace: {line}\n             with: {text}"),
    }
}

/// With `review = "rules"`: list the CRITICAL RULES changes that wait, or
/// approve or reject one by its id.
#[derive(Debug, clap::Args)]
#[group(multiple = false)]
pub struct ReviewArgs {
    /// Write this held change (checked again, on the file as it is now).
    #[arg(long, value_name = "ID")]
    approve: Option<String>,
    /// Drop this held change (a held line is taken out of the file).
    #[arg(long, value_name = "ID")]
    reject: Option<String>,
    /// Approve every held change and rule, each quoted as it is approved.
    #[arg(long)]
    approve_all: bool,
}

impl super::Run for ReviewArgs {
    fn run(&self) -> Result<()> {
        let super::Here { roots, config, project, folder, .. } = super::here()?;
        let gate = config.review_rules();
        // A team memory's new CRITICAL RULES (by a pull) wait here too. A
        // personal memory's foreign rules (a sync pull, a hand edit) are held
        // with the gate on, approved here, and the approval travels with sync.
        // Only what the load gate lets through: a withheld line loads as nothing to approve.
        let memory = folder.gated(&folder.read_memory()?.unwrap_or_default(), false).text;
        let (team_held, foreign) = match &project.team_dir {
            Some(dir) if gate => {
                (crate::team::held_rules(&roots, &project.identity, &folder.project, dir, &memory), Vec::new())
            }
            Some(_) => (Vec::new(), Vec::new()),
            None => (Vec::new(), crate::store::approvals::foreign(&folder, &memory)),
        };
        let team_rule = |id: &str| team_held.iter().find(|r| crate::team::rule_id(r) == id);
        let foreign_rule = |id: &str| foreign.iter().find(|r| foreign_id(r) == id);
        let approve_team = |rule: &str| {
            crate::team::approve(&roots, &project.identity, &folder.project, &folder.dir, rule)?;
            crate::store::approvals::approve_guards(&folder, &[rule.to_string()])
        };
        let nothing_waits = format!("no CRITICAL RULES changes wait for review in project {}", folder.project);
        if let Some(id) = &self.approve {
            if let Some(rule) = foreign_rule(id) {
                approve_foreign(&folder, std::slice::from_ref(rule))?;
                return super::println(&format!(
                    "memory-save: approved {id}: {rule} loads from now on here; another machine you sync approves it with its own review"
                ));
            }
            if let Some(rule) = team_rule(id) {
                approve_team(rule)?;
                return super::println(&format!("memory-save: approved {id}: the team rule {rule} loads from now on"));
            }
            return approve(&roots, &project, &folder, id);
        }
        if let Some(id) = &self.reject {
            if let Some(rule) = foreign_rule(id) {
                take_out(&folder, rule, &format!("rejected the rule {rule}"))?;
                return super::println(&format!("memory-save: rejected {id}: {rule} is taken out of MEMORY.md"));
            }
            if let Some(rule) = team_rule(id) {
                take_out(&folder, rule, &format!("rejected the team rule {rule}"))?;
                return super::println(&format!(
                    "memory-save: rejected {id}: {rule} is taken out of {} (commit it to tell the team)",
                    folder.memory_path().display()
                ));
            }
            let _lock = folder.lock()?;
            let (gone, pending) = take_pending(&folder, id)?;
            store(&folder, &pending)?;
            return super::println(&format!("memory-save: rejected {id}: {}", describe(&gone.op)));
        }
        if self.approve_all {
            for rule in &team_held {
                approve_team(rule)?;
                super::println(&format!("memory-save: approved {}: the team rule {rule}", crate::team::rule_id(rule)))?;
            }
            if !foreign.is_empty() {
                approve_foreign(&folder, &foreign)?;
                for rule in &foreign {
                    super::println(&format!("memory-save: approved {}: {rule}", foreign_id(rule)))?;
                }
            }
            let ids: Vec<String> = load(&folder).into_iter().map(|p| p.id).collect();
            for id in &ids {
                approve(&roots, &project, &folder, id)?;
            }
            if team_held.is_empty() && foreign.is_empty() && ids.is_empty() {
                super::println(&nothing_waits)?;
            }
            return Ok(());
        }
        let state = if gate { "waits:" } else { "loads;" };
        // A held rule's guard is listed with it: approved together.
        let stored = crate::store::guards::read(&folder);
        let guard_of = |rule: &str| -> Result<()> {
            for g in stored.iter().filter(|g| g.rule == rule) {
                let words =
                    crate::memory::guard::in_words(g.spec.tool, &g.spec.pattern, crate::memory::guard::Decision::Ask);
                super::println(&format!("    guard: {}", crate::memory::text::visible(&words)))?;
            }
            Ok(())
        };
        for rule in &foreign {
            let id = foreign_id(rule);
            super::println(&format!(
                "{id}  ({state} it did not come from this machine's saves)  CRITICAL RULES: {rule}"
            ))?;
            guard_of(rule)?;
        }
        if !gate {
            super::println(
                "the review gate is off (review = \"rules\" in memory-save.toml turns it on): saves write CRITICAL RULES at once",
            )?;
        }
        for rule in &team_held {
            super::println(&format!(
                "{}  (team memory, not yet approved on this machine)  add to CRITICAL RULES: {rule}",
                crate::team::rule_id(rule)
            ))?;
            guard_of(rule)?;
        }
        let pending = load(&folder);
        if pending.is_empty() && team_held.is_empty() && foreign.is_empty() {
            super::println(&nothing_waits)?;
        }
        for p in &pending {
            super::println(&format!("{}  {}  {}", p.id, crate::env::timestamp(p.at), describe(&p.op)))?;
        }
        Ok(())
    }
}

/// The id `review` shows a foreign rule by.
fn foreign_id(rule: &str) -> String {
    format!("rule-{}", crate::memory::stable_id(rule))
}

/// A rejected rule taken out of MEMORY.md, under the lock, through the
/// same commit as every write (history, check, mark).
fn take_out(folder: &Folder, rule: &str, why: &str) -> Result<()> {
    let _lock = folder.lock()?;
    let current = crate::save::current_under_lock(folder)?;
    let outcome = apply::Outcome { memory: crate::team::without(&current, &[rule.to_string()]), ..Default::default() };
    let origin = Origin { by: Some("memory-save review".into()), ..Origin::default() };
    crate::save::commit(folder, &current, &outcome, why, &origin)
}

/// Approves foreign rules; with sync on, the approval is a commit of the
/// memory folder, so it travels to your other machines with the next sync.
fn approve_foreign(folder: &Folder, rules: &[String]) -> Result<()> {
    crate::store::approvals::approve(folder, rules)
}

/// The held change `id`, taken out of the list, and the changes left.
fn take_pending(folder: &Folder, id: &str) -> Result<(Pending, Vec<Pending>)> {
    let mut pending = load(folder);
    let Some(at) = pending.iter().position(|p| p.id == id) else {
        bail!("no pending change {id:?} in project {}; `memory-save review` lists them", folder.project)
    };
    Ok((pending.remove(at), pending))
}

/// Applies one held op as a save applies its reply, to the file as it is
/// now, and records it in the history.
fn approve(roots: &Roots, project: &crate::project::Project, folder: &Folder, id: &str) -> Result<()> {
    let _lock = folder.lock()?;
    let (held, pending) = take_pending(folder, id)?;
    let current = crate::save::current_under_lock(folder)?;
    let reply = Reply { ops: vec![held.op.clone()], ..Reply::default() };
    let outcome = apply::apply_with(&current, &reply, &folder.project, &folder.topic_files(), Options::default());
    if let Some(refused) = outcome.refused.first() {
        bail!("{id} cannot be written: {}; it stays pending (reject it with --reject {id})", refused.why);
    }
    let message = format!("review: approved {id}: {}", describe(&held.op).replace('\n', " "));
    let origin = Origin { by: Some("memory-save review --approve".into()), ..held.origin };
    crate::save::commit(folder, &current, &outcome, &message, &origin)?;
    // In a team memory the rule you approved is yours: never held again as
    // a teammate's.
    if let Some(dir) = &project.team_dir {
        for rule in &outcome.rules {
            crate::team::approve(roots, &project.identity, &folder.project, dir, rule.trim())?;
        }
    }
    store(folder, &pending)?;
    let line = if outcome.skipped.is_empty() {
        format!("memory-save: approved {id} and wrote it to {}", folder.memory_path().display())
    } else {
        format!("memory-save: {id} no longer applies (its line is gone); dropped from the list")
    };
    super::println(&line)
}
