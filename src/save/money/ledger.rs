//! The ledger, machine-wide: `saves.jsonl` (what each save counted) and
//! `limits.json` (holds, the stopped budget, warnings given, the running
//! saves' reservations), judged and reserved under one lock, so sessions
//! saving at once see each other's spend (docs/design.md §4, §6).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::Config;
use crate::memory::cost::usd;
use crate::store::paths::Roots;

/// A refusal that names no reset is tried again at most this often: a
/// refused request costs nothing, but each try runs a whole fork.
pub const RETRY_UNNAMED_SECONDS: i64 = 3600;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LedgerRecord {
    /// Forks on this machine wait for this refusal.
    pub allowance: Option<Hold>,
    /// Sessions on these models wait (the plan needs usage credits).
    pub models: BTreeMap<String, Hold>,
    /// A budget that stops saves until its period turns or it rises.
    pub stopped: Option<Stopped>,
    /// The warnings already given, by budget and period.
    pub told: Vec<String>,
    /// Saves whose fork runs now, one per session.
    pub reserved: Vec<Reservation>,
    /// A Claude plan's usage windows, as the status line last read them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub windows: Option<super::plan::Windows>,
}

/// A save's estimate, held against the budgets from its verdict to its record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reservation {
    pub session_id: String,
    pub route: String,
    pub usd: f64,
    /// Past this (Unix time) it holds no more: its worker outlived every bound.
    pub until: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    /// What the CLI said, as it said it.
    pub text: String,
    pub at: i64,
    /// The reset the refusal named.
    pub until: Option<i64>,
    /// With no reset named: one fork may try from then.
    pub next_try: i64,
}

impl Hold {
    pub fn holds(&self, now: i64) -> bool {
        now < self.until.unwrap_or(self.next_try)
    }

    /// The status-line words.
    pub fn status(&self) -> String {
        match self.until {
            Some(until) => format!("paused: allowance used up until {}", crate::env::clock(until)),
            None => "paused: allowance used up (memory-save doctor)".to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    /// `max_cost_per_month_usd`.
    pub budget: String,
    pub limit: f64,
    pub spent: f64,
    /// When its period turns.
    pub until: i64,
    pub route: String,
}

impl Stopped {
    /// It still stops saves: its period has not turned, and the budget in
    /// force now, from the settings as they are, is still at most the one
    /// that stopped it (a key removed, a file deleted, a budget raised or
    /// turned off each end it).
    pub fn holds(&self, config: &Config, now: i64) -> bool {
        now < self.until && config.max_cost_per_month_usd.or(None).is_some_and(|limit| limit <= self.limit)
    }

    /// The one line every session's start shows while saves are stopped.
    pub fn line(&self) -> String {
        format!(
            "memory-save: saves are stopped: {} of {} ({}) spent; they go on {} or when you raise or remove it in memory-save.toml",
            usd(self.spent),
            usd(self.limit),
            self.budget,
            crate::env::timestamp(self.until)
        )
    }

    pub fn status(&self) -> String {
        format!("paused: {} reached ({} of {})", self.budget, usd(self.spent), usd(self.limit))
    }
}

/// The route the machine's last session start saw, for the commands that
/// run outside a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeenRoute {
    pub route: crate::claude::route::Route,
    pub at: i64,
}

fn route_path(roots: &Roots) -> std::path::PathBuf {
    roots.state.join("route.json")
}

/// Keeps `route` as the last seen, rewritten only when it changed (or a
/// day passed, so `at` stays roughly true).
pub fn record_route(roots: &Roots, route: &crate::claude::route::Route) {
    let now = crate::env::now_unix();
    if last_route(roots).is_some_and(|old| &old.route == route && now - old.at < 86_400) {
        return;
    }
    let seen = SeenRoute { route: route.clone(), at: now };
    if let Err(e) = crate::store::record::write(&route_path(roots), &seen) {
        crate::store::log::error(&format!("cannot record the billing route: {e:#}"));
    }
}

pub fn last_route(roots: &Roots) -> Option<SeenRoute> {
    crate::store::record::read(&route_path(roots))
}

fn path(roots: &Roots) -> std::path::PathBuf {
    roots.state.join("limits.json")
}

pub fn load(roots: &Roots) -> LedgerRecord {
    crate::store::record::read(&path(roots)).unwrap_or_default()
}

/// What stops saves on this machine now: a setting that fails closed, a
/// used-up allowance, a budget reached, and the models the plan refused.
pub struct Stops {
    pub config: Option<String>,
    pub allowance: Option<Hold>,
    pub budget: Option<Stopped>,
    pub models: Vec<(String, Hold)>,
}

pub fn stops(roots: &Roots, config: &Config) -> Stops {
    let (now, limits) = (crate::env::now_unix(), load(roots));
    Stops {
        config: config.stopped().map(str::to_string),
        allowance: limits.allowance.filter(|h| h.holds(now)),
        budget: limits.stopped.filter(|s| s.holds(config, now)),
        models: limits.models.into_iter().filter(|(_, h)| h.holds(now)).collect(),
    }
}

/// Changes `limits.json` under its lock.
pub fn update<R>(roots: &Roots, change: impl FnOnce(&mut LedgerRecord) -> R) -> anyhow::Result<R> {
    let mut ledger = Ledger::open(roots)?;
    let result = change(&mut ledger.limits);
    ledger.close()?;
    Ok(result)
}

/// The ledger, locked: `limits.json` and the spend in `saves.jsonl`, one
/// process at a time. Never held across a fork.
pub struct Ledger<'a> {
    roots: &'a Roots,
    limits: LedgerRecord,
    before: LedgerRecord,
    _lock: crate::store::lock::Lock,
}

impl<'a> Ledger<'a> {
    /// Locks the ledger. A reservation whose worker is gone (the session's
    /// worker lock is free) or whose time is up no longer holds.
    pub fn open(roots: &'a Roots) -> anyhow::Result<Ledger<'a>> {
        crate::store::fsutil::create_private_dir(&roots.state)?;
        // `saves.jsonl`, only appended and rotated under this lock, is it.
        let lock = crate::store::lock::Lock::acquire(&roots.saves_log(), LEDGER_WAIT)?;
        let before = load(roots);
        let mut limits = before.clone();
        let sessions = crate::store::state::SessionStore::new(roots.sessions_dir());
        let now = crate::env::now_unix();
        let running = |r: &Reservation| {
            crate::store::state::SessionId::parse(&r.session_id).is_ok_and(|id| sessions.worker_running(&id))
        };
        // A worker that is gone with its reservation never wrote its save's
        // record: its fork may have run, so its estimate is counted now. One
        // that outlived its bound writes its own record when it ends.
        let lost: Vec<Reservation> = limits.reserved.iter().filter(|r| !running(r)).cloned().collect();
        limits.reserved.retain(|r| r.until > now && running(r));
        let mut ledger = Ledger { roots, limits, before, _lock: lock };
        if !lost.is_empty() {
            for lost in &lost {
                count_lost(roots, lost, now);
            }
            // Its reservation goes at once, whatever the caller does next:
            // a ledger only read and dropped would count it again.
            ledger.write()?;
            ledger.before = ledger.limits.clone();
        }
        Ok(ledger)
    }

    /// Spent since `since` (Unix time), running saves' holds included, and
    /// the part held; with `route`, only that route's (and pre-route) saves.
    pub fn spent_since(&self, since: i64, route: Option<&str>) -> (f64, f64) {
        let held: f64 =
            self.limits.reserved.iter().filter(|r| route.is_none_or(|route| r.route == route)).map(|r| r.usd).sum();
        (crate::store::saves::spent_since(self.roots, since, route) + held, held)
    }

    /// Holds `usd` for `session_id`'s save until its record is written. A
    /// reservation the session still has is an earlier worker's, stopped
    /// before its record (one worker a session runs at a time): counted.
    pub fn reserve(mut self, session_id: &str, route: &str, usd: f64, until: i64) -> anyhow::Result<()> {
        let now = crate::env::now_unix();
        for earlier in self.limits.reserved.iter().filter(|r| r.session_id == session_id) {
            count_lost(self.roots, earlier, now);
        }
        self.limits.reserved.retain(|r| r.session_id != session_id);
        self.limits.reserved.push(Reservation { session_id: session_id.into(), route: route.into(), usd, until });
        self.close()
    }

    /// Writes what changed, and unlocks.
    fn close(self) -> anyhow::Result<()> {
        if self.limits == self.before {
            return Ok(());
        }
        self.write()
    }

    /// A record holding nothing is no file.
    fn write(&self) -> anyhow::Result<()> {
        if self.limits == LedgerRecord::default() {
            return crate::store::fsutil::remove_if_there(&path(self.roots));
        }
        crate::store::record::write(&path(self.roots), &self.limits)
    }
}

/// A reservation whose worker stopped before writing its save's record:
/// its fork may have run, so its estimate is counted.
fn count_lost(roots: &Roots, lost: &Reservation, now: i64) {
    crate::store::saves::append(
        roots,
        &crate::store::saves::SaveRecord {
            at: now,
            session_id: lost.session_id.clone(),
            status: "error: its worker stopped while its fork may have run; its estimate is counted".into(),
            route: Some(lost.route.clone()),
            estimate_usd: Some(lost.usd),
            counted_usd: Some(lost.usd),
            ..crate::store::saves::SaveRecord::default()
        },
    );
}

/// A save holds the ledger only to judge and reserve, or to record.
const LEDGER_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Writes a save's one record in `saves.jsonl`, and its reservation goes:
/// one step, so the spend is never counted twice nor missing between the two.
pub(in crate::save) fn settle(
    roots: &Roots,
    job: &crate::save::SaveJob,
    project: Option<&str>,
    result: &crate::save::SaveResult,
) {
    let record = crate::store::saves::SaveRecord {
        at: crate::env::now_unix(),
        session_id: job.session_id.to_string(),
        project: project.map(str::to_string),
        cwd: job.project_dir.clone(),
        status: crate::memory::secrets::redact(&result.status),
        report: result.report.as_deref().map(crate::memory::secrets::redact),
        usage: result.usage.clone(),
        route: result.route.clone(),
        estimate_usd: result.estimate_usd.map(crate::memory::cost::round_usd),
        counted_usd: result.counted_usd.map(crate::memory::cost::round_usd),
        unknown_model: result.unknown_model.clone(),
        fresh: result.fresh,
        advice: result.advice.clone(),
    };
    let ledger = Ledger::open(roots);
    crate::store::saves::append(roots, &record);
    let closed = ledger.and_then(|mut ledger| {
        ledger.limits.reserved.retain(|r| r.session_id != record.session_id);
        ledger.close()
    });
    if let Err(e) = closed {
        crate::store::log::error(&format!("cannot release a save's reservation: {e:#}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_waits_for_its_reset_or_an_hour() {
        let named = Hold { text: "x".into(), at: 0, until: Some(100), next_try: 0 };
        assert!(named.holds(99) && !named.holds(100));
        let unnamed = Hold { text: "x".into(), at: 0, until: None, next_try: RETRY_UNNAMED_SECONDS };
        assert!(unnamed.holds(10) && !unnamed.holds(RETRY_UNNAMED_SECONDS));
    }
}
