//! Asking the fork, and what the API's refusal of it holds back (`refused`).

use std::path::Path;

use anyhow::Result;

use super::SaveJob;
use super::decide::Priced;
use super::money::ledger;
use crate::claude::{fork, settings};
use crate::config::Config;
use crate::store::paths::Roots;
use crate::store::state::StatusKind;

/// A fork the API refused: a used-up allowance holds every fork until its
/// reset (none named: one try an hour), a refused model its sessions, and a
/// short rate limit is a wait. Returns the status and, once, the report line.
pub(super) fn refused(
    roots: &Roots,
    refusal: &crate::claude::refusal::ApiRefusal,
    model: Option<&str>,
    now: i64,
) -> Result<(StatusKind, String, Option<String>)> {
    use crate::claude::refusal::ApiRefusal;
    let hold = |text: &str, until: Option<i64>| ledger::Hold {
        text: text.to_string(),
        at: now,
        until,
        next_try: now + ledger::RETRY_UNNAMED_SECONDS,
    };
    match refusal {
        ApiRefusal::Brief { .. } => {
            Ok((StatusKind::Waiting, "waiting: rate limited; the next save tries again".to_string(), None))
        }
        ApiRefusal::Allowance { text, reset } => {
            let hold = hold(text, *reset);
            let status = hold.status();
            let first = ledger::update(roots, |l| l.allowance.replace(hold).is_none())?;
            let when = match reset {
                Some(at) => format!("until {} (the reset it named)", crate::env::timestamp(*at)),
                None => "and tries again at most once an hour".to_string(),
            };
            let line = format!(
                "memory-save: saves wait on this machine: the API refused a save: \"{}\". memory-save forks no more {when}; the turns wait and are saved then",
                crate::memory::text::shorten(text, 160)
            );
            Ok((StatusKind::Paused, status, first.then_some(line)))
        }
        ApiRefusal::Model { text } => {
            let model = model.unwrap_or("this model").to_string();
            let status = format!("paused: {model} needs usage credits");
            let first = ledger::update(roots, |l| l.models.insert(model.clone(), hold(text, None)).is_none())?;
            let line = format!(
                "memory-save: saves of sessions on {model} wait: \"{}\". Turn on usage credits, or set model = \"…\" in memory-save.toml for the fork; it is tried again within the hour",
                crate::memory::text::shorten(text, 160)
            );
            Ok((StatusKind::PausedModel, status, first.then_some(line)))
        }
    }
}

/// Runs the fork for this save: the session's model and effort unless the
/// configuration names others.
pub(super) fn ask_fork(
    roots: &Roots,
    job: &SaveJob,
    config: &Config,
    priced: &Priced,
) -> Result<fork::ForkReply, fork::ForkError> {
    let (cwd, fresh) = (Path::new(&job.project_dir), priced.fresh);
    fork::run(&fork::ForkRequest {
        claude: fork::find_claude()?,
        session_id: &job.session_id,
        cwd,
        model: priced.model.clone(),
        resume_at: job.resume_at.clone().filter(|_| !fresh),
        resume_from: job.resume_from.as_deref().filter(|_| !fresh),
        fresh,
        // A resumed session's total counts the parent's cost too; a fresh
        // run's is its own.
        parent_cost_usd: if fresh { 0.0 } else { priced.facts.cost_usd },
        effort: config.effort().map(str::to_string).or_else(|| job.effort.clone()),
        message: &priced.message,
        settings: settings::fork_settings(&settings::settings_files(cwd)),
        timeout: config.fork_timeout(),
        scratch: &roots.state,
    })
}
