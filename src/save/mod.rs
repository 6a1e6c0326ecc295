//! The background save: read the memory, ask the fork, check and apply its
//! reply to the file as it is now, write.

mod ask;
pub mod baseline;
pub mod budget;
pub mod guard;
pub mod ledger;
pub mod machine;
pub mod month;
pub mod queue;
pub mod repair;
mod truth;
mod write;

use ask::{ask_fork, refused};

use write::write_reply;
pub use write::{commit, current_under_lock};

use std::path::Path;

use anyhow::Result;

use crate::claude::{fork, transcript};
use crate::env::now_unix;
use crate::memory::apply;
use crate::memory::report;
use crate::memory::{prompt, reply};
use crate::store::folder::FAILED_REPLY_FILE;
use crate::store::history::Origin;
use crate::store::notes::{self, Notes};
use crate::store::paths::Roots;
use crate::store::state::{SessionId, StatusKind, Usage};
use repair::REPAIR_REPORT;

/// A reply larger than this is not a list of line edits.
const MAX_REPLY_BYTES: usize = 1024 * 1024;
/// A reservation outlives its fork's time bound by this much (the reply
/// applied and recorded), then counts no more.
const RESERVATION_SLACK: i64 = 120;

pub struct Job {
    pub session_id: SessionId,
    /// The session's project folder (see `SessionState::project_dir`).
    pub cwd: String,
    /// The turn the save follows, for the history; never the prompt's text.
    pub prompt_id: Option<String>,
    /// Resume the session at this message (a save asked for at PreCompact).
    pub resume_at: Option<String>,
    /// Resume this copy of the transcript instead of the session (taken at
    /// PreCompact, see `hook::pre_compact`).
    pub resume_from: Option<std::path::PathBuf>,
    pub transcript_path: String,
    pub effort: Option<String>,
    /// The last save of this session that read the prompt cache: a read
    /// keeps the cache alive as the parent's own requests do.
    pub cache_read_at: Option<i64>,
    /// SessionEnd has come, or the session has been quiet past its idle
    /// flush: a save that waits for a warm cache may wait for ever, so a
    /// cold one reads the turns instead of resuming (`fresh`).
    pub last_chance: bool,
    /// When the last save whose fork answered was claimed: the turns
    /// since are the ones a fresh save reads.
    pub saved_through: Option<i64>,
    /// When this job was claimed.
    pub claimed_at: i64,
    /// What the session's last SessionStart loaded (`baseline`).
    pub baseline: Option<baseline::Baseline>,
}

#[derive(Debug, Default)]
pub struct SaveResult {
    pub status: String,
    /// What the status is, for whoever acts on it.
    pub kind: StatusKind,
    pub report: Option<String>,
    pub usage: Option<Usage>,
    /// When the parent's last request was made: a cache older than its
    /// lifetime is expected to miss (docs/design.md §4).
    pub parent_last_request_at: Option<i64>,
    /// A budget this save found passed.
    pub pause: Option<crate::store::state::Pause>,
    /// Who paid (`Route::key`).
    pub route: Option<String>,
    /// The price worked out before the fork ran.
    pub estimate_usd: Option<f64>,
    /// What budgets count of it.
    pub counted_usd: Option<f64>,
    /// The save waits for a warm cache: the next turn asks at once.
    pub wait_warm: bool,
    /// What this billing month's saves by the same route counted, with
    /// this one.
    pub month_usd: Option<f64>,
    /// A model the price table did not know (priced at the dearest entry).
    pub unknown_model: Option<String>,
    /// The fork answered with a reply that was read: the turns up to this
    /// job's claim are saved.
    pub read_through: Option<i64>,
    /// The save resumed nothing: it read the turns (`Job::last_chance`).
    pub fresh: bool,
}

impl SaveResult {
    /// A save that failed on our side (a full disk, a refused symlink): the
    /// status and one report line say why, so the user learns the turn was
    /// not saved even without a status line.
    fn error(status: impl Into<String>) -> SaveResult {
        let status = status.into();
        let report = format!("memory-save: MEMORY.md: not saved ({status})");
        SaveResult {
            status: format!("error: {status}"),
            kind: StatusKind::Error,
            report: Some(report),
            ..SaveResult::default()
        }
    }
}

pub fn run_save(roots: &Roots, job: &Job) -> SaveResult {
    let located = crate::project::locate(Path::new(&job.cwd), roots, &crate::config::of(roots)).and_then(|mut p| {
        crate::project::settle(roots, &mut p)?;
        Ok(p)
    });
    let project = located.as_ref().ok().map(|p| p.name.clone());
    let result = match located.and_then(|located| save(roots, job, &located)) {
        Ok(result) => result,
        Err(e) => {
            crate::store::log::error(&format!("save of session {} failed: {e:#}", job.session_id));
            SaveResult::error(format!("{e:#}"))
        }
    };
    ledger::record(roots, job, project.as_deref(), &result);
    result
}

fn save(roots: &Roots, job: &Job, located: &crate::project::Project) -> Result<SaveResult> {
    let config = crate::config::of(roots);
    if let Some(off) = located.off_reason(&config) {
        return Ok(SaveResult { status: off, kind: StatusKind::Off, ..SaveResult::default() });
    }
    // A setting that guards money or review is broken: no fork until it is
    // fixed (every session's start says so).
    if config.stopped().is_some() {
        let status = "paused: memory-save.toml has a problem (memory-save doctor)".to_string();
        return Ok(SaveResult { status, kind: StatusKind::Paused, ..SaveResult::default() });
    }
    let now = now_unix();
    let route = crate::claude::route::of_session(Path::new(&job.cwd));
    let route_key = route.key();
    let held =
        |kind, status: String| SaveResult { status, kind, route: Some(route_key.clone()), ..SaveResult::default() };
    let limits = ledger::load(roots);
    if let Some(hold) = limits.allowance.as_ref().filter(|h| h.holds(now)) {
        return Ok(held(StatusKind::Paused, hold.status()));
    }
    let folder = located.folder(roots);

    let (snapshot, repaired) = {
        let _lock = folder.lock()?;
        repair::read_repaired(&folder)?.map_or((None, false), |(text, repaired)| (Some(text), repaired))
    };
    // Every report of this save starts with the repair's line, if there was one.
    let report_with = |line: &str| report::join(repaired.then_some(REPAIR_REPORT), Some(line));
    let notes = notes::read(roots, &located.name)?;
    // The session holds the memory it loaded: point to it, unless the fork
    // resumes something else (a copy, an earlier message), the last save
    // missed lines it must now see whole, or a team gate held lines back.
    let plain =
        job.resume_from.is_none() && job.resume_at.is_none() && notes.skipped.is_empty() && located.team_dir.is_none();
    let sessions = crate::store::state::SessionStore::new(roots.sessions_dir());
    let loaded = plain.then(|| baseline::read(&sessions, &job.session_id, job.baseline.as_ref())).flatten();
    // A line the load withholds, or a team rule held for review, never
    // reaches the fork either.
    let held_rules = match (&located.team_dir, &snapshot) {
        (Some(dir), Some(text)) if config.review_rules() => {
            crate::team::held_rules(roots, &located.identity, &located.name, dir, text)
        }
        (None, Some(text)) if config.review_rules() => {
            crate::store::approvals::foreign_as_recorded(roots, &folder, text)
        }
        _ => Vec::new(),
    };
    let shown =
        snapshot.as_deref().map(|text| crate::team::without(&crate::memory::gate::load(text).text, &held_rules));
    let topic_files = folder.topic_files();
    let told = match (&snapshot, &shown) {
        (Some(file), Some(shown)) => truth::for_fork(located, &folder, file, shown, Path::new(&job.cwd)),
        _ => truth::ForFork::default(),
    };
    let message_with = |conversation: Option<&str>| {
        prompt::fork_message(&prompt::PromptInput {
            view: shown.as_deref().map_or(prompt::MemoryView::Whole, |now| prompt::view(now, loaded.as_deref())),
            project: &folder.project,
            memory: shown.as_deref(),
            topic_files: &topic_files,
            last_skipped: &notes.skipped,
            last_refused: &notes.refused,
            more_skipped: notes.more_skipped,
            more_refused: notes.more_refused,
            conversation,
            stale: &told.stale,
            duplicates: &told.duplicates,
        })
    };
    let mut message = message_with(None);

    let facts = transcript::transcript_facts(Path::new(&job.transcript_path));
    let model = config.model().map(str::to_string).or_else(|| facts.model.clone());
    if let Some(hold) = model.as_deref().and_then(|m| limits.models.get(m)).filter(|h| h.holds(now)) {
        return Ok(held(StatusKind::PausedModel, format!("paused: {} (this model)", hold.text)));
    }
    if let Some(why) = guard::near_window(&facts, model.as_deref(), message.len()) {
        // Nothing is lost: the turns stay in the transcript, and the first
        // save after the session compacts reads them.
        return Ok(held(StatusKind::Skipped, why));
    }
    let priced = crate::memory::cost::PriceList { overrides: &config.prices }.price(model.as_deref().unwrap_or(""));
    let refreshed = [facts.last_request_at, job.cache_read_at].into_iter().flatten().max();
    let shape = crate::memory::cost::SaveShape {
        prefix_tokens: facts.last_request_tokens,
        parent_output_tokens: facts.last_output_tokens,
        one_hour: facts.one_hour_cache,
        idle_seconds: refreshed.map(|at| now - at),
        message_bytes: message.len(),
    };
    let mut estimate = crate::memory::cost::estimate(&shape, &priced.price);
    // Judged and reserved under the ledger's lock: sessions saving at once
    // see each other's estimates, so together they pass no budget.
    let ledger = ledger::Ledger::open(roots)?;
    let budgets = budget::Budgets::of(&ledger, &config, &route, now);
    let judge = |usd: f64, warm: bool, reads| budget::verdict(&budgets, usd, warm, job.last_chance, reads, &route_key);
    let mut verdict = judge(estimate.usd, estimate.warm, budget::Reads::Session);
    // Resuming past the cache is over the cold cap and no warm turn will
    // come: the turns since the last save are read instead, priced again
    // before anything runs.
    let fresh = matches!(verdict, budget::Verdict::ReadTurns);
    if fresh {
        let conversation = transcript::conversation_since(Path::new(&job.transcript_path), job.saved_through);
        message = message_with(Some(conversation.as_deref().unwrap_or("")));
        estimate = crate::memory::cost::estimate_fresh(message.len(), &priced.price);
        verdict = judge(estimate.usd, estimate.warm, budget::Reads::Turns);
    }
    if verdict == budget::Verdict::Run {
        let until = now + i64::try_from(config.fork_timeout().as_secs()).unwrap_or(i64::MAX / 2) + RESERVATION_SLACK;
        ledger.reserve(job.session_id.as_str(), &route_key, estimate.usd, until)?;
    } else {
        drop(ledger);
    }
    let unknown_model = priced.prefix.is_none().then(|| model.clone().unwrap_or_default());
    let priced_result = |kind, status: String| SaveResult {
        status,
        kind,
        route: Some(route_key.clone()),
        estimate_usd: Some(estimate.usd),
        unknown_model: unknown_model.clone(),
        fresh,
        ..SaveResult::default()
    };
    match verdict {
        budget::Verdict::Run => {}
        budget::Verdict::ReadTurns => unreachable!("a save that reads the turns is judged again above"),
        budget::Verdict::Skip { status, report } => {
            return Ok(SaveResult { report: Some(report_with(&report)), ..priced_result(StatusKind::Skipped, status) });
        }
        budget::Verdict::WaitWarm { status } => {
            return Ok(SaveResult { wait_warm: true, ..priced_result(StatusKind::Waiting, status) });
        }
        budget::Verdict::Stop { status, report, stopped } => {
            // Told once per stop: every session's start says it after.
            let first = ledger::update(roots, |l| {
                let first =
                    l.stopped.as_ref().is_none_or(|old| old.budget != stopped.budget || old.until != stopped.until);
                l.stopped = Some(stopped);
                first
            })?;
            return Ok(SaveResult {
                report: first.then(|| report_with(&report)),
                ..priced_result(StatusKind::Paused, status)
            });
        }
    }
    let fork_reply = match ask_fork(roots, job, &config, &message, &facts, fresh) {
        Ok(reply) => reply,
        Err(e) => {
            // The notes may be what broke it ("Prompt is too long"): the
            // next save starts without them rather than failing the same way.
            if !notes.is_empty() {
                notes::write(roots, &located.name, &Notes::default())?;
            }
            if let Some(refusal) = &e.refusal {
                let (kind, status, report) = refused(roots, refusal, model.as_deref(), now)?;
                return Ok(SaveResult {
                    status,
                    kind,
                    report: report.map(|line| report_with(&line)),
                    usage: Some(e.usage),
                    counted_usd: Some(0.0),
                    ..priced_result(kind, String::new())
                });
            }
            // Claude Code gives its hooks no CLAUDE_CODE_OAUTH_TOKEN
            // (measured, tests/e2e/spend.rs s20): a login that lives only in
            // that variable never reaches the fork.
            let advice = if e.kind == fork::ForkFailure::NotLoggedIn {
                "; the fork could not log in: Claude Code passes CLAUDE_CODE_OAUTH_TOKEN to no hook, so log in with claude /login, or put the variable in the env of ~/.claude/settings.json"
            } else {
                ""
            };
            return Ok(SaveResult {
                report: Some(report_with(&format!("memory-save: MEMORY.md: not saved ({}){advice}", e.status))),
                counted_usd: Some(e.usage.total_cost_usd.max(estimate.usd)),
                usage: Some(e.usage),
                parent_last_request_at: facts.last_request_at,
                ..priced_result(StatusKind::Error, format!("error: {}", e.status))
            });
        }
    };
    truth::mark_noted(&folder, &told);
    let counted = fork_reply.usage.total_cost_usd.max(estimate.usd);
    let spent = SaveResult {
        counted_usd: Some(counted),
        month_usd: budgets.month.map_or_else(
            || {
                Some(
                    crate::store::saves::spent_since(
                        roots,
                        budget::billing_month(now, config.billing_day()).0,
                        Some(&route_key),
                    ) + counted,
                )
            },
            |(_, spent, _)| Some(spent - budgets.held.0 + counted),
        ),
        parent_last_request_at: facts.last_request_at,
        ..priced_result(StatusKind::Saved, String::new())
    };
    let parsed = if fork_reply.text.len() > MAX_REPLY_BYTES {
        Err(format!("reply is larger than {} KiB", MAX_REPLY_BYTES / 1024))
    } else {
        reply::parse(&fork_reply.text)
    };
    let parsed = match parsed {
        Ok(parsed) => parsed,
        Err(why) => {
            folder.keep_failed_reply(&fork_reply.text)?;
            let line = format!(
                "memory-save: MEMORY.md: this turn's reply was not read ({why}); {} output tokens, kept in {FAILED_REPLY_FILE}",
                fork_reply.usage.output_tokens
            );
            return Ok(SaveResult {
                status: format!("error: {why}"),
                kind: StatusKind::Error,
                report: Some(report_with(&line)),
                usage: Some(fork_reply.usage),
                ..spent
            });
        }
    };

    let spent = SaveResult { read_through: Some(job.claimed_at), ..spent };
    let origin = Origin {
        session_id: Some(job.session_id.to_string()),
        prompt_id: job.prompt_id.clone(),
        cost_usd: Some(fork_reply.usage.total_cost_usd),
        by: None,
    };
    let options = apply::Options { hold_rules: config.review_rules() };
    let outcome = write_reply(roots, &folder, snapshot.as_deref(), &parsed, options, &origin)?;
    let next = Notes::bounded(&outcome.outcome.skipped, &outcome.outcome.refused, prompt::MAX_NOTE_ENTRIES);
    notes::write(roots, &located.name, &next)?;

    let summary = report::Summary::of(&outcome.outcome, outcome.changed_meanwhile);
    let mut report =
        summary.report_line().map(|line| report_with(&line)).or(repaired.then(|| REPAIR_REPORT.to_string()));
    // This save's spend, counted: the budgets it brought to 80%.
    let after = budget::Budgets {
        month: budgets.month.map(|(limit, spent, until)| (limit, spent + counted, until)),
        day: budgets.day.map(|(limit, spent, until)| (limit, spent + counted, until)),
        ..budgets
    };
    for line in budget::warnings(roots, &after, &route_key) {
        report = Some(report::join(report.as_deref(), Some(&line)));
    }
    Ok(SaveResult {
        status: summary.status(),
        report,
        pause: guard::over_save_budget(&fork_reply.usage, &config),
        usage: Some(fork_reply.usage),
        ..spent
    })
}
