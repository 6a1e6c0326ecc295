//! `memory-save resume [--session ID]`: lifts pauses and the machine's holds.

use anyhow::{Result, bail};

use crate::store::state::{SessionStore, Status, StatusKind};

/// What a resumed session's status line says until its next save.
const RESUMED: &str = "resumed: saves at the next turn";

/// Let this project's paused sessions save again (a new session always
/// starts unpaused).
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// Only this session.
    #[arg(long, value_name = "ID")]
    session: Option<String>,
}

impl super::Run for ResumeArgs {
    fn run(&self) -> Result<()> {
        let super::Here { roots, project, folder, .. } = super::here()?;
        let key = folder.key();
        let sessions = SessionStore::new(roots.sessions_dir());
        let mut resumed = Vec::new();
        // A used-up allowance or a model's refusal holds every session on
        // this machine: lifted early here, the next save tries at once.
        let lifted = crate::save::money::ledger::update(&roots, |limits| {
            let models =
                std::mem::take(&mut limits.models).into_iter().map(|(model, h)| format!("{model}: {}", h.text));
            limits.allowance.take().map(|h| h.text).into_iter().chain(models).collect::<Vec<_>>()
        })?;
        let machine = !lifted.is_empty();
        if machine {
            resumed.push(format!("this machine's forks (were waiting on: {})", lifted.join("; ")));
        }
        let now = crate::env::now_unix();
        for (id, state) in sessions.all() {
            let wanted = self.session.as_deref().is_none_or(|only| only == id.as_str());
            let ours = state.input.project.as_deref() == Some(key.as_str());
            // The status line must not go on saying a lifted pause (a
            // machine-wide hold reached every project's sessions).
            let said_paused = state
                .outcome
                .status
                .as_ref()
                .is_some_and(|s| matches!(s.kind, StatusKind::Paused | StatusKind::PausedModel));
            let guard_paused = wanted && ours && state.protocol.watch.paused.is_some();
            if !guard_paused && !(said_paused && ((machine && self.session.is_none()) || (wanted && ours))) {
                continue;
            }
            let reason = sessions.update(&id, |s| {
                let guard = &mut s.protocol.watch;
                let reason = guard_paused.then(|| guard.paused.take().map(|p| p.text)).flatten();
                if guard_paused {
                    guard.cache_misses = 0;
                    guard.missed_cost_usd = 0.0;
                }
                s.outcome.status = Some(Status::new(StatusKind::Waiting, RESUMED, now));
                reason
            })?;
            if let Some(reason) = reason {
                resumed.push(format!("{id} (was {reason})"));
            }
        }
        if resumed.is_empty() {
            if let Some(id) = &self.session {
                bail!("session {id} of project {} is not paused", project.name);
            }
            return super::println(&format!("no paused session in project {}; nothing to resume", project.name));
        }
        super::println(&format!("memory-save: resumed {}", resumed.join(", ")))
    }
}
