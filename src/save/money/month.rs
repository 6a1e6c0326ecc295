//! The calendar month as `status` and `memory-save cost` show it, from this
//! machine's `saves.jsonl`: day by day, against the budgets, with its pace.

use serde::Serialize;

use crate::config::Config;
use crate::memory::cost::round_usd;
use crate::store::paths::Roots;
use crate::store::saves::SaveRecord;

#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    /// Forks that answered.
    pub saves: u64,
    /// Forks that failed (their cost, if any, is in `cost_usd` all the same).
    #[serde(skip_serializing_if = "crate::store::record::is_zero")]
    pub failed: u64,
    pub input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub output_tokens: u64,
    /// What budgets count: per save, the larger of estimate and CLI figure.
    pub cost_usd: f64,
}

impl Totals {
    /// The totals of `records`, but for saves that never ran a fork.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a SaveRecord>) -> Totals {
        let mut t = Totals::default();
        for record in records.into_iter().filter(|r| r.usage.is_some() || r.counted_usd.is_some()) {
            if record.status.starts_with("error") {
                t.failed += 1;
            } else {
                t.saves += 1;
            }
            if let Some(u) = &record.usage {
                t.input_tokens += u.input_tokens;
                t.cache_read_input_tokens += u.cache_read_input_tokens;
                t.cache_creation_input_tokens += u.cache_creation_input_tokens;
                t.output_tokens += u.output_tokens;
            }
            t.cost_usd = round_usd(t.cost_usd + record.counted());
        }
        t
    }

    /// `3 saves · in 12 · …`, and `(1 failed)` after the count when one did.
    pub fn count(&self) -> String {
        let failed = if self.failed > 0 { format!(" ({} failed)", self.failed) } else { String::new() };
        format!("{}{failed}", crate::memory::report::plural(self.saves, "save"))
    }

    /// `3 saves · in 12 · cache read 40000 · cache write 300 · out 9 · $0.41`
    pub fn line(&self) -> String {
        format!(
            "{} · in {} · cache read {} · cache write {} · out {} · {}",
            self.count(),
            self.input_tokens,
            self.cache_read_input_tokens,
            self.cache_creation_input_tokens,
            self.output_tokens,
            crate::memory::cost::usd(self.cost_usd)
        )
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Day {
    /// `2026-12-01`
    pub date: String,
    #[serde(flatten)]
    pub totals: Totals,
}

#[derive(Debug, Clone, Serialize)]
pub struct BudgetShare {
    pub budget: String,
    pub limit_usd: f64,
    pub spent_usd: f64,
    pub share: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Month {
    pub start: String,
    pub end: String,
    /// The route counted (`Route::key`), and who pays, in a sentence.
    pub route: Option<String>,
    pub pays: Option<String>,
    /// The dollar figures are a plan's usage at API prices, not money paid.
    pub api_priced: bool,
    /// Its saves draw on a plan's usage windows (`Route::draws_on_plan_windows`).
    #[serde(skip)]
    pub on_plan_windows: bool,
    #[serde(flatten)]
    pub totals: Totals,
    pub average_per_save_usd: Option<f64>,
    /// What the month comes to at this month's pace so far.
    pub projected_usd: f64,
    pub budgets: Vec<BudgetShare>,
    pub days: Vec<Day>,
}

/// This month on this machine, for the route its last session
/// started with (every save when none was seen yet).
pub fn gather(roots: &Roots, config: &Config, now: i64) -> Month {
    let seen = super::ledger::last_route(roots).map(|s| s.route);
    let route = seen.as_ref().map(crate::claude::route::Route::key);
    // Before any session start: who would pay as far as this shell and the
    // settings files tell, and the budget that would apply.
    let payer = seen.clone().unwrap_or_else(|| crate::claude::route::of_session(std::path::Path::new(".")));
    let (start, end, first) = super::budget::calendar_month(now);
    let records: Vec<SaveRecord> = crate::store::saves::all(roots)
        .into_iter()
        .filter(|r| (start..end).contains(&r.counted_at(now)))
        .filter(|r| r.billed_to(route.as_deref()))
        .collect();
    let fmt = |(y, m, d): (i32, u8, u8)| format!("{y:04}-{m:02}-{d:02}");
    let totals = Totals::of(&records);
    let mut days: Vec<Day> = Vec::new();
    let mut day_start = crate::env::local_date_start(first);
    while day_start < end.min(now + 1) {
        let next = crate::env::local_date_start(next_day(crate::env::local_date(day_start)));
        let day = Totals::of(records.iter().filter(|r| (day_start..next).contains(&r.counted_at(now))));
        days.push(Day { date: fmt(crate::env::local_date(day_start)), totals: day });
        if next <= day_start {
            break;
        }
        day_start = next;
    }
    let elapsed = ((now - start).max(1)) as f64;
    let projected_usd = round_usd(totals.cost_usd * (end - start) as f64 / elapsed);
    let guessed =
        if seen.is_some() { "" } else { " (as this shell and the settings tell; the first session start confirms it)" };
    let budgets =
        [config.max_cost_per_month_usd.or(None).map(|limit| share("max_cost_per_month_usd", limit, totals.cost_usd))];
    Month {
        start: fmt(first),
        end: fmt(crate::memory::cost::next_month(first)),
        pays: Some(format!("{}{guessed}", payer.sentence())),
        api_priced: payer.is_subscription(),
        on_plan_windows: payer.draws_on_plan_windows(),
        route,
        average_per_save_usd: (totals.saves > 0).then(|| round_usd(totals.cost_usd / totals.saves as f64)),
        projected_usd,
        totals,
        budgets: budgets.into_iter().flatten().collect(),
        days,
    }
}

fn share(budget: &str, limit: f64, spent: f64) -> BudgetShare {
    let share = if limit > 0.0 {
        spent / limit
    } else if spent > 0.0 {
        1.0
    } else {
        0.0
    };
    BudgetShare {
        budget: budget.into(),
        limit_usd: limit,
        spent_usd: round_usd(spent),
        share: (share * 1000.0).round() / 1000.0,
    }
}

fn next_day((year, month, day): (i32, u8, u8)) -> (i32, u8, u8) {
    let date = time::Month::try_from(month).ok().and_then(|m| time::Date::from_calendar_date(year, m, day).ok());
    date.and_then(|d| d.next_day()).map_or((year, month, day), |next| (next.year(), next.month() as u8, next.day()))
}
