//! The background save: read the memory, ask the fork, check and apply its
//! reply to the file as it is now, write.

mod ask;
pub mod baseline;
mod decide;
mod gather;
pub mod machine;
pub mod money;
pub mod queue;
pub mod repair;
mod truth;
mod write;

pub use write::{commit, current_under_lock, publish_guards};

use std::path::Path;

use anyhow::Result;

use crate::claude::fork;
use crate::config::Config;
use crate::memory::{apply, cost, prompt, reply, report};
use crate::save::money::budget;
use crate::store::history::Origin;
use crate::store::notes::{self, Notes};
use crate::store::paths::Roots;
use crate::store::state::{SessionId, StatusKind, Usage};

/// A reply larger than this is not a list of line edits.
const MAX_REPLY_BYTES: usize = 1024 * 1024;

pub struct SaveJob {
    pub session_id: SessionId,
    /// The session's project folder (`SessionInput::project_dir`): the
    /// memory's project is found from it, and the fork runs in it.
    pub project_dir: String,
    /// The turn the save follows, for the history; never the prompt's text.
    pub prompt_id: Option<String>,
    /// Resume the session at this message (a save asked for at PreCompact).
    pub resume_at: Option<String>,
    /// Resume this transcript copy instead of the session (`hook::pre_compact`).
    pub resume_from: Option<std::path::PathBuf>,
    pub transcript_path: String,
    pub effort: Option<String>,
    /// The last save of this session that read the prompt cache: a read
    /// keeps the cache alive as the parent's own requests do.
    pub cache_read_at: Option<i64>,
    /// SessionEnd came, or the idle flush: no warm turn will come, so a cold
    /// save reads the turns instead of resuming (`fresh`).
    pub last_chance: bool,
    /// When the last save whose fork answered was claimed: the turns
    /// since are the ones a fresh save reads.
    pub saved_through: Option<i64>,
    pub claimed_at: i64,
    /// What the session's last SessionStart loaded (`baseline`).
    pub baseline: Option<crate::store::state::Baseline>,
}

#[derive(Debug, Default)]
pub struct SaveResult {
    pub status: String,
    pub kind: StatusKind,
    pub report: Option<String>,
    pub usage: Option<Usage>,
    /// Who paid (`Route::key`).
    pub route: Option<String>,
    pub estimate_usd: Option<f64>,
    /// What budgets count of it.
    pub counted_usd: Option<f64>,
    /// The save waits for a warm cache: the next turn asks at once.
    pub wait_warm: bool,
    /// The plan's usage window was full, so nothing ran: the turns are held
    /// back, and the worker tries again at the time given, when it is soon.
    pub held_back: Option<Option<i64>>,
    /// This billing month's saves by the same route, this one included.
    pub month_usd: Option<f64>,
    /// A model the price table did not know (priced at the dearest entry).
    pub unknown_model: Option<String>,
    /// The fork's reply was read: the turns up to this job's claim are saved.
    pub read_through: Option<i64>,
    /// The save resumed nothing: it read the turns (`Job::last_chance`).
    pub fresh: bool,
    /// What to do about a failed save, as data beside its report line.
    pub advice: Option<String>,
}

pub fn run_save(roots: &Roots, job: &SaveJob) -> SaveResult {
    let config = crate::config::of(roots);
    let located = crate::project::settled(Path::new(&job.project_dir), roots, &config);
    // A session that began in a provisional folder is the project's once
    // settled: its guards, reports and status rows from this save on;
    // unless the session has moved to another folder meanwhile.
    if let Some(project) = located.as_ref().ok().filter(|p| p.provisional.is_none()) {
        let sessions = crate::store::state::SessionStore::new(roots.sessions_dir());
        let key = project.folder(roots).key();
        let named = |s: &crate::store::state::SessionInput| {
            s.project_folder() != job.project_dir || s.project.as_deref() == Some(key.as_str())
        };
        if !named(&sessions.peek(&job.session_id).input)
            && let Err(e) = sessions.update(&job.session_id, |s| {
                if !named(&s.input) {
                    s.input.project = Some(key.clone());
                }
            })
        {
            crate::store::log::error(&format!("cannot record session {}'s project: {e:#}", job.session_id));
        }
    }
    let project = located.as_ref().ok().map(|p| p.folder(roots).key());
    let result = match located.and_then(|located| save(roots, job, &located, &config)) {
        Ok(result) => result,
        // Failed on our side (a full disk, a refused symlink): a report line
        // says so, for a user without a status line too.
        Err(e) => {
            crate::store::log::error(&format!("save of session {} failed: {e:#}", job.session_id));
            SaveResult {
                status: format!("error: {e:#}"),
                kind: StatusKind::Error,
                report: Some(format!("memory-save: MEMORY.md: not saved ({e:#})")),
                ..SaveResult::default()
            }
        }
    };
    money::ledger::settle(roots, job, project.as_deref(), &result);
    result
}

/// Gather, decide (priced, one verdict), ask, apply (docs/design.md §4).
fn save(roots: &Roots, job: &SaveJob, located: &crate::project::Project, config: &Config) -> Result<SaveResult> {
    if let Some(off) = located.off_reason(config) {
        return Ok(SaveResult { status: off, kind: StatusKind::Off, ..SaveResult::default() });
    }
    // A setting that guards money or review is broken: no fork until it is
    // fixed (every session's start says so).
    if config.stopped().is_some() {
        let status = "paused: memory-save.toml has a problem (memory-save doctor)".to_string();
        return Ok(SaveResult { status, kind: StatusKind::Paused, ..SaveResult::default() });
    }
    // A used-up allowance holds every fork, and a plan's nearly full usage
    // window its saves: checked before the save reads anything. Nothing
    // runs and nothing is lost: the turns wait, held back.
    let now = crate::env::now_unix();
    let route = crate::claude::route::of_session(Path::new(&job.project_dir));
    if let Some(hold) = money::ledger::load(roots).allowance.filter(|h| h.holds(now)) {
        let held_back = Some(soon(hold.until, now, config));
        let (status, route) = (hold.status(), Some(route.key()));
        return Ok(SaveResult { status, kind: StatusKind::Paused, route, held_back, ..SaveResult::default() });
    }
    if let Some(full) = money::plan::wait(roots, config, route.draws_on_plan_windows(), now) {
        let held_back = Some(soon(Some(full.until), now, config));
        let (status, route) = (full.status(), Some(route.key()));
        return Ok(SaveResult { status, kind: StatusKind::Paused, route, held_back, ..SaveResult::default() });
    }
    let gathered = gather::gather(roots, job, located, config)?;
    let priced = match decide::decide(roots, job, config, &gathered)? {
        decide::Plan::Run(priced) => priced,
        decide::Plan::Done(result) => return Ok(*result),
    };
    match ask::ask_fork(roots, job, config, &priced) {
        Ok(reply) => applied(roots, job, config, &gathered, &priced, reply),
        Err(e) => failed(roots, config, &gathered, &priced, e),
    }
}

/// When a worker should try held-back turns again: at `until`, when that
/// comes within the idle flush; later, the next turn, the session's end or
/// the project's next start does.
fn soon(until: Option<i64>, now: i64, config: &Config) -> Option<i64> {
    let flush = i64::try_from(config.limits().idle_flush.as_secs()).unwrap_or(i64::MAX);
    until.filter(|until| until - now <= flush)
}

/// A fork that gave no reply to read: refused by the API (it costs
/// nothing), or failed on the way.
fn failed(
    roots: &Roots,
    config: &Config,
    gathered: &gather::Gathered,
    priced: &decide::Priced,
    e: fork::ForkError,
) -> Result<SaveResult> {
    // The notes may be what broke it ("Prompt is too long"): the next save
    // starts without them rather than failing the same way.
    if !gathered.notes.is_empty() {
        // What the user let through is kept for the next fork: it is small.
        let kept = Notes { let_through: gathered.notes.let_through.clone(), ..Notes::default() };
        notes::write(&gathered.folder, &kept)?;
    }
    if let fork::ForkError::Failed { refusal: Some(refusal), .. } = &e {
        let (kind, status, report) = ask::refused(roots, refusal, priced.model.as_deref(), priced.now)?;
        // Refused, nothing was read: the turns wait for the reset it named.
        let reset = match refusal {
            crate::claude::refusal::ApiRefusal::Allowance { reset, .. } => *reset,
            _ => None,
        };
        return Ok(SaveResult {
            held_back: Some(soon(reset, priced.now, config)),
            report: report.map(|line| gathered.report_with(&line)),
            usage: Some(e.usage()),
            counted_usd: Some(0.0),
            ..priced.result(kind, status)
        });
    }
    let advice = e.advice().map(str::to_string);
    let joined = advice.as_deref().map(|advice| format!("; {advice}")).unwrap_or_default();
    let usage = e.usage();
    // A fork whose result the CLI reported counts its usage: nothing when
    // the API billed nothing (not logged in), else the CLI's figure or its
    // tokens at the table's rate. One whose usage is unknown (timed out,
    // killed, no result) may have been billed in full: its estimate.
    let tokens =
        (usage.input_tokens, usage.cache_read_input_tokens, usage.cache_creation_input_tokens, usage.output_tokens);
    let counted = match e {
        fork::ForkError::NotFound(_) => 0.0,
        fork::ForkError::Failed { .. } | fork::ForkError::CalledTool { .. } | fork::ForkError::NoText { .. } => {
            if usage.total_cost_usd > 0.0 { usage.total_cost_usd } else { cost::priced(tokens, false, &priced.price) }
        }
        _ => priced.estimate_usd,
    };
    Ok(SaveResult {
        report: Some(gathered.report_with(&format!("memory-save: MEMORY.md: not saved ({e}){joined}"))),
        advice,
        counted_usd: Some(counted),
        usage: Some(usage),
        ..priced.result(StatusKind::Error, format!("error: {e}"))
    })
}

/// The fork's reply, read and applied to the file as it is now.
fn applied(
    roots: &Roots,
    job: &SaveJob,
    config: &Config,
    gathered: &gather::Gathered,
    priced: &decide::Priced,
    fork_reply: fork::ForkReply,
) -> Result<SaveResult> {
    let folder = &gathered.folder;
    truth::mark_noted(folder, &gathered.told);
    let counted = fork_reply.usage.total_cost_usd.max(priced.estimate_usd);
    let spent = SaveResult {
        counted_usd: Some(counted),
        month_usd: Some(priced.month_with(roots, counted)),
        ..priced.result(StatusKind::Saved, String::new())
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
                "memory-save: MEMORY.md: this turn's reply was not read ({why}); {} output tokens, kept in {}",
                fork_reply.usage.output_tokens,
                crate::store::folder::FAILED_REPLY_FILE
            );
            return Ok(SaveResult {
                status: format!("error: {why}"),
                kind: StatusKind::Error,
                report: Some(gathered.report_with(&line)),
                usage: Some(fork_reply.usage),
                ..spent
            });
        }
    };
    let origin = Origin {
        session_id: Some(job.session_id.to_string()),
        prompt_id: job.prompt_id.clone(),
        cost_usd: Some(counted),
        cli_cost_usd: Some(fork_reply.usage.total_cost_usd).filter(|cli| (cli - counted).abs() > 1e-9),
        by: None,
    };
    let options = apply::Options { hold_rules: config.review_rules(), ..apply::Options::default() };
    let (outcome, changed_meanwhile) =
        write::write_reply(folder, gathered.memory.as_deref(), &parsed, options, &origin)?;
    let notes = Notes::bounded(&outcome.skipped, &outcome.refused, prompt::MAX_NOTE_ENTRIES);
    notes::write_after_save(folder, notes, &gathered.notes.let_through)?;
    let summary = report::Summary::of(&outcome, changed_meanwhile);
    let repaired = gathered.repaired.then(|| repair::REPAIR_REPORT.to_string());
    let lines: Vec<String> = [repaired, summary.report_line()]
        .into_iter()
        .flatten()
        .chain(budget::warnings(roots, &priced.budgets, counted, &priced.route_key))
        .collect();
    Ok(SaveResult {
        status: summary.status(),
        report: (!lines.is_empty()).then(|| lines.join("\n")),
        usage: Some(fork_reply.usage),
        read_through: Some(job.claimed_at),
        ..spent
    })
}
