//! The save's second step: the price and the one verdict. Every way a save
//! does not run ends here, before anything is spent; one that runs has
//! reserved its estimate (docs/design.md §4).

use std::path::Path;

use anyhow::Result;

use super::gather::Gathered;
use super::money::{budget, ledger};
use super::{SaveJob, SaveResult};
use crate::claude::transcript::{self, TranscriptFacts};
use crate::config::Config;
use crate::store::paths::Roots;
use crate::store::state::StatusKind;

/// A reservation outlives its fork's time bound by this much (the reply
/// applied and recorded), then counts no more.
const RESERVATION_SLACK: i64 = 120;

/// What the fork is asked and what it was priced at.
pub(super) struct Priced {
    pub now: i64,
    pub route_key: String,
    pub facts: TranscriptFacts,
    pub model: Option<String>,
    pub price: crate::memory::cost::Price,
    pub message: String,
    pub estimate_usd: f64,
    /// The save resumes nothing and reads the turns instead.
    pub fresh: bool,
    pub unknown_model: Option<String>,
    pub budgets: budget::Budgets,
}

pub(super) enum Plan {
    Run(Box<Priced>),
    /// Not this save, and why, for the state and the report.
    Done(Box<SaveResult>),
}

impl Priced {
    /// This month's saves by the same route, with this one's `counted`.
    pub fn month_with(&self, roots: &Roots, counted: f64) -> f64 {
        match self.budgets.month {
            Some((_, spent, _)) => spent - self.budgets.held + counted,
            None => {
                let start = budget::calendar_month(self.now).0;
                crate::store::saves::spent_since(roots, start, Some(&self.route_key)) + counted
            }
        }
    }

    pub fn result(&self, kind: StatusKind, status: String) -> SaveResult {
        SaveResult {
            status,
            kind,
            route: Some(self.route_key.clone()),
            estimate_usd: Some(self.estimate_usd),
            unknown_model: self.unknown_model.clone(),
            fresh: self.fresh,
            ..SaveResult::default()
        }
    }
}

pub(super) fn decide(roots: &Roots, job: &SaveJob, config: &Config, gathered: &Gathered) -> Result<Plan> {
    let now = crate::env::now_unix();
    let route = crate::claude::route::of_session(Path::new(&job.project_dir));
    let route_key = route.key();
    let held = |kind, status: String| {
        Plan::Done(Box::new(SaveResult { status, kind, route: Some(route_key.clone()), ..SaveResult::default() }))
    };
    let limits = ledger::load(roots);
    let mut message = gathered.message(None);
    let facts = transcript::transcript_facts(Path::new(&job.transcript_path));
    let model = config.model().map(str::to_string).or_else(|| facts.model.clone());
    if let Some(hold) = model.as_deref().and_then(|m| limits.models.get(m)).filter(|h| h.holds(now)) {
        return Ok(held(StatusKind::PausedModel, format!("paused: {} (this model)", hold.text)));
    }
    if let Some(why) = near_window(&facts, model.as_deref(), message.len()) {
        // Nothing is lost: the turns stay in the transcript, and the first
        // save after the session compacts reads them.
        return Ok(held(StatusKind::Skipped, why));
    }
    let price = crate::memory::cost::PriceList { overrides: &config.prices }.price(model.as_deref().unwrap_or(""));
    let refreshed = [facts.last_request_at, job.cache_read_at].into_iter().flatten().max();
    // A debug build's stand-in for a cache that expired (the evaluation's
    // --fresh), where the transcript's own times stay as they are.
    #[cfg(debug_assertions)]
    let refreshed = refreshed.filter(|_| crate::env::fault("MEMORY_SAVE_DEBUG_CACHE_EXPIRED").is_none());
    let shape = crate::memory::cost::SaveShape {
        prefix_tokens: facts.last_request_tokens,
        parent_output_tokens: facts.last_output_tokens,
        one_hour: facts.one_hour_cache,
        idle_seconds: refreshed.map(|at| now - at),
        message_bytes: message.len(),
    };
    let mut estimate = crate::memory::cost::estimate(&shape, &price.price);
    // Judged and reserved under the ledger's lock: sessions saving at once
    // see each other's estimates, so together they pass no budget.
    let ledger = ledger::Ledger::open(roots)?;
    let budgets = budget::Budgets::of(&ledger, config, &route, now);
    let judge = |usd: f64, warm: bool, reads| budget::verdict(&budgets, usd, warm, job.last_chance, reads, &route_key);
    let mut verdict = judge(estimate.usd, estimate.warm, budget::Reads::Session);
    // With no warm turn to come and the cache expired, the turns since the
    // last save are read instead when resuming is over the cold cap, and
    // also under it when that is cheaper: a model wrote as good a memory
    // from them (docs/quality.md). Priced again before anything runs.
    let over_cap = matches!(verdict, budget::Verdict::ReadTurns);
    let mut fresh = false;
    if over_cap || (job.last_chance && !estimate.warm) {
        let conversation = transcript::conversation_since(Path::new(&job.transcript_path), job.saved_through);
        let turns = gathered.message(Some(conversation.as_deref().unwrap_or("")));
        let turns_estimate = crate::memory::cost::estimate_fresh(turns.len(), &price.price);
        if over_cap || turns_estimate.usd < estimate.usd {
            (fresh, message, estimate) = (true, turns, turns_estimate);
            verdict = judge(estimate.usd, estimate.warm, budget::Reads::Turns);
        }
    }
    if verdict == budget::Verdict::Run {
        let until = now + i64::try_from(config.fork_timeout().as_secs()).unwrap_or(i64::MAX / 2) + RESERVATION_SLACK;
        ledger.reserve(job.session_id.as_str(), &route_key, estimate.usd, until)?;
    } else {
        drop(ledger);
    }
    let unknown_model = price.prefix.is_none().then(|| model.clone().unwrap_or_default());
    let (price, estimate_usd) = (price.price, estimate.usd);
    let priced = Priced { now, route_key, facts, model, price, message, estimate_usd, fresh, unknown_model, budgets };
    plan(roots, verdict, priced, gathered)
}

/// The plan a verdict makes: the fork runs, or the save is done without it.
fn plan(roots: &Roots, verdict: budget::Verdict, priced: Priced, gathered: &Gathered) -> Result<Plan> {
    let done = match verdict {
        budget::Verdict::Run => return Ok(Plan::Run(Box::new(priced))),
        budget::Verdict::ReadTurns => unreachable!("a save that reads the turns is judged again above"),
        budget::Verdict::Skip { status, report } => {
            SaveResult { report: Some(gathered.report_with(&report)), ..priced.result(StatusKind::Skipped, status) }
        }
        budget::Verdict::WaitWarm { status } => {
            SaveResult { wait_warm: true, ..priced.result(StatusKind::Waiting, status) }
        }
        budget::Verdict::Stop { status, report, stopped } => {
            // Told once per stop: every session's start says it after.
            let first = ledger::update(roots, |l| {
                let first =
                    l.stopped.as_ref().is_none_or(|old| old.budget != stopped.budget || old.until != stopped.until);
                l.stopped = Some(stopped);
                first
            })?;
            SaveResult {
                report: first.then(|| gathered.report_with(&report)),
                ..priced.result(StatusKind::Paused, status)
            }
        }
    };
    Ok(Plan::Done(Box::new(done)))
}

/// Tokens a fork's reply may need, on top of the request.
const REPLY_ROOM_TOKENS: u64 = 8_000;

/// Why this save is skipped when the fork would not fit the window: with
/// compaction off (DISABLE_COMPACT) it would only fail at the API's price.
/// A message's tokens are taken as its bytes over three, on the high side.
fn near_window(facts: &TranscriptFacts, model: Option<&str>, message_bytes: usize) -> Option<String> {
    let needed = facts.last_request_tokens + message_bytes as u64 / 3 + REPLY_ROOM_TOKENS;
    // The context window: a model name ending `[1m]` has 1M tokens, others 200K.
    let window = if model.is_some_and(|m| m.ends_with("[1m]")) { 1_000_000 } else { 200_000 };
    (facts.last_request_tokens > 0 && needed > window).then(|| {
        format!(
            "skipped: the session is near its context window ({} of {window} tokens); the next save after it compacts goes on",
            facts.last_request_tokens
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_is_skipped_only_when_the_fork_would_not_fit_the_window() {
        let facts = |tokens| TranscriptFacts { last_request_tokens: tokens, ..TranscriptFacts::default() };
        assert_eq!(near_window(&facts(150_000), Some("claude-opus-5-5"), 6_000), None);
        let skipped = near_window(&facts(195_000), Some("claude-opus-5-5"), 6_000).expect("skipped");
        assert!(
            skipped.starts_with("skipped: the session is near its context window (195000 of 200000 tokens)"),
            "{skipped}"
        );
        assert_eq!(near_window(&facts(195_000), Some("claude-sonnet-4-5[1m]"), 6_000), None, "a 1M window");
        assert!(near_window(&facts(995_000), Some("claude-sonnet-4-5[1m]"), 6_000).is_some());
        assert_eq!(near_window(&facts(0), None, 6_000), None, "no usage known: try");
    }
}
