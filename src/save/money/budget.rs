//! Budgets that hold before the spend: a save priced over one never starts
//! its fork (docs/cost.md, "Budgets that hold before the spend").

use super::ledger::{Ledger, Stopped, update};
use crate::config::Config;
use crate::memory::cost::{self, usd};
use crate::store::paths::Roots;

/// The share of a budget at which the user is told, once.
const WARN_SHARE: f64 = 0.8;

/// The calendar month holding `now`, local time: its start and end (Unix
/// time) and its first day, for labels. API usage bills by the calendar
/// month; a plan's saves have no billing month of their own.
pub fn calendar_month(now: i64) -> (i64, i64, (i32, u8, u8)) {
    let (year, month, _) = crate::env::local_date(now);
    let start = (year, month, 1);
    (crate::env::local_date_start(start), crate::env::local_date_start(cost::next_month(start)), start)
}

/// The budgets one save faces, with what they have spent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budgets {
    /// `max_cost_per_save_usd`.
    pub per_save: Option<f64>,
    /// (limit, spent this month by this route, when it turns)
    pub month: Option<(f64, f64, i64)>,
    /// Of the month's spent, what running saves hold (not yet billed).
    pub held: f64,
}

impl Budgets {
    /// The budgets of `config` for a save billed by `route`, from the
    /// locked ledger: spent includes what running saves hold.
    pub fn of(ledger: &Ledger, config: &Config, route: &crate::claude::route::Route, now: i64) -> Budgets {
        let mut held = 0.0;
        let month = config.max_cost_per_month_usd.or(None).map(|limit| {
            let (start, end, _) = calendar_month(now);
            let (spent, reserved) = ledger.spent_since(start, Some(&route.key()));
            held = reserved;
            (limit, spent, end)
        });
        Budgets { per_save: config.max_cost_per_save(), month, held }
    }

    /// The most a save whose cache has expired may cost: the smaller of the
    /// per-save cap and the month's rest.
    pub fn cold_cap(&self) -> f64 {
        let month_left = self.month.map(|(limit, spent, _)| (limit - spent).max(0.0));
        [self.per_save, month_left].into_iter().flatten().fold(f64::INFINITY, f64::min)
    }
}

/// What to do with a priced save.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Run,
    /// Not this save; the next one may run (`status`, a report line).
    Skip {
        status: String,
        report: String,
    },
    /// The cache has expired and the save is dear: the next turn warms it.
    WaitWarm {
        status: String,
    },
    /// A budget is reached: no save until its period turns or it rises.
    Stop {
        status: String,
        report: String,
        stopped: Stopped,
    },
    /// Resuming is over the per-save cap (a cold one with no warm turn to
    /// come): read the turns since the last save instead, judged again at
    /// that price.
    ReadTurns,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// It resumes the session (the prefix from the cache, or all again cold).
    Session,
    /// It resumes nothing and reads the turns since the last save.
    Turns,
}

/// The verdict on a save estimated at `estimate`; `ended`: no warm turn
/// will come (the session's end or the idle flush).
pub fn verdict(budgets: &Budgets, estimate: f64, warm: bool, ended: bool, reads: Reads, route: &str) -> Verdict {
    let about = usd(estimate);
    // A cold resume over the per-save cap or the month's rest waits for the
    // next turn, which warms the cache, rather than pay for it or stop a
    // budget a warm one would fit; when no turn will come it reads the turns.
    let cap = budgets.cold_cap();
    if reads == Reads::Session && !warm && estimate > cap {
        if ended {
            return Verdict::ReadTurns;
        }
        return Verdict::WaitWarm {
            status: format!("waiting: cache expired (about {about}); saved after the next turn"),
        };
    }
    // Over the per-save cap: reading the turns since the last save is the
    // cheaper save, and is dropped only when even that is over it.
    if let Some(max) = budgets.per_save
        && estimate > max
    {
        if reads == Reads::Session {
            return Verdict::ReadTurns;
        }
        return Verdict::Skip {
            status: format!("skipped: about {about}, over max_cost_per_save_usd ({})", usd(max)),
            report: format!(
                "memory-save: MEMORY.md: the turns since the last save were not saved: even reading them would have cost about {about}, over max_cost_per_save_usd ({})",
                usd(max)
            ),
        };
    }
    let name = "max_cost_per_month_usd";
    if let Some((limit, spent, until)) = budgets.month
        && spent + estimate > limit
    {
        // Only the saves running now leave no room: this one waits for
        // their bills rather than stopping saves for the period.
        if budgets.held > 0.0 && spent - budgets.held + estimate <= limit {
            return Verdict::Skip {
                status: format!("skipped: saves running now hold the rest of {name}"),
                report: format!(
                    "memory-save: MEMORY.md: not saved now: saves of other sessions running at this moment hold the rest of {name} ({} of {} spent or held); the next save tries again",
                    usd(spent),
                    usd(limit)
                ),
            };
        }
        let stopped = Stopped { budget: name.into(), limit, spent, until, route: route.into() };
        return Verdict::Stop {
            status: stopped.status(),
            report: format!(
                "memory-save: MEMORY.md: not saved: this save (about {about}) would pass {name} ({} of {} spent); saves stop until {} or until you raise it",
                usd(spent),
                usd(limit),
                crate::env::timestamp(until)
            ),
            stopped,
        };
    }
    Verdict::Run
}

/// The 80% warnings a save's spend (`counted`, on top of what `budgets`
/// had spent) brings, each given once per period.
pub fn warnings(roots: &Roots, budgets: &Budgets, counted: f64, route: &str) -> Vec<String> {
    let due: Vec<_> = [("max_cost_per_month_usd", "this month's", budgets.month)]
        .into_iter()
        .filter_map(|(name, when, budget)| {
            budget.map(|(limit, spent, until)| (name, when, limit, spent + counted, until))
        })
        .filter(|&(_, _, limit, spent, _)| limit > 0.0 && spent >= limit * WARN_SHARE)
        .collect();
    let mut lines = Vec::new();
    // Most saves pass no mark: they touch no file.
    if due.is_empty() {
        return lines;
    }
    let _ = update(roots, |limits| {
        for (name, when, limit, spent, until) in due {
            let key = format!("{name}:{route}:{until}:80");
            if limits.told.contains(&key) {
                continue;
            }
            limits.told.push(key);
            lines.push(format!(
                "memory-save: {}% of {when} save budget is spent ({} of {}, {name})",
                (spent / limit * 100.0).floor() as u64,
                usd(spent),
                usd(limit)
            ));
        }
        // Old periods' warnings are kept no longer than their periods.
        let now = crate::env::now_unix();
        limits.told.retain(|key| key.rsplit(':').nth(1).and_then(|u| u.parse::<i64>().ok()).is_none_or(|u| u > now));
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budgets(per_save: Option<f64>, month: Option<(f64, f64)>) -> Budgets {
        Budgets { per_save, month: month.map(|(l, s)| (l, s, 0)), held: 0.0 }
    }

    fn kind(v: &Verdict) -> &'static str {
        match v {
            Verdict::Run => "run",
            Verdict::Skip { .. } => "skip",
            Verdict::WaitWarm { .. } => "wait",
            Verdict::Stop { .. } => "stop",
            Verdict::ReadTurns => "read turns",
        }
    }

    #[test]
    fn a_save_runs_only_within_every_budget() {
        // (per save, month (limit, spent), estimate, warm, ended) → verdict,
        // for a save that resumes the session
        type Case = (Option<f64>, Option<(f64, f64)>, f64, bool, bool, &'static str);
        let cases: &[Case] = &[
            (None, None, 0.08, true, false, "run"),
            (Some(0.05), None, 0.08, true, false, "read turns"),
            (Some(0.10), None, 0.08, true, false, "run"),
            (None, Some((10.0, 9.95)), 0.08, true, false, "stop"),
            (None, Some((10.0, 9.90)), 0.08, true, false, "run"),
            (None, Some((10.0, 10.0)), 0.0, true, false, "run"),
            (None, Some((10.0, 10.01)), 0.0, true, false, "stop"),
            // Cold: under the smaller of per-save and what the month has left.
            (Some(0.25), None, 0.94, false, false, "wait"),
            (Some(0.25), None, 0.94, false, true, "read turns"),
            (Some(0.25), None, 0.20, false, false, "run"),
            (None, None, 0.94, false, false, "run"),
            (Some(0.10), None, 0.20, false, false, "wait"),
            (Some(0.10), None, 0.20, false, true, "read turns"),
            (None, Some((10.0, 9.85)), 0.20, false, false, "wait"),
            (None, Some((10.0, 9.85)), 0.20, false, true, "read turns"),
            (None, Some((10.0, 9.50)), 0.20, false, false, "run"),
        ];
        for (per_save, month, estimate, warm, ended, want) in cases {
            let v = verdict(&budgets(*per_save, *month), *estimate, *warm, *ended, Reads::Session, "subscription");
            assert_eq!(kind(&v), *want, "{per_save:?} {month:?} {estimate} warm={warm} ended={ended}: {v:?}");
        }
        // Reading the turns is judged by the same caps, and dropped with its
        // price when even that is over them: waiting would not make it cheaper.
        let at =
            |estimate, ended| verdict(&budgets(Some(0.10), None), estimate, false, ended, Reads::Turns, "subscription");
        assert_eq!(kind(&at(0.05, true)), "run");
        assert_eq!(kind(&at(0.20, false)), "skip");
        assert_eq!(kind(&at(0.05, false)), "run");
        let Verdict::Skip { report, .. } =
            verdict(&budgets(Some(0.25), None), 0.94, false, true, Reads::Turns, "subscription")
        else {
            unreachable!()
        };
        assert!(report.contains("would have cost about $0.94"), "{report}");
    }

    #[test]
    fn what_running_saves_hold_makes_a_save_wait_not_stop() {
        // Spent 9.5 of 10.0, of which 0.5 is held by a running save: a save
        // of 0.8 waits for that bill; one of 1.2 would pass even without it.
        let mut b = budgets(None, Some((10.0, 9.5)));
        b.held = 0.5;
        let at = |b: &Budgets, usd| kind(&verdict(b, usd, true, false, Reads::Session, "subscription"));
        assert_eq!(at(&b, 0.8), "skip");
        assert_eq!(at(&b, 1.2), "stop");
        assert_eq!(at(&b, 0.4), "run");
        b.held = 0.0;
        assert_eq!(at(&b, 0.8), "stop", "nothing held: the budget is reached");
    }
}
