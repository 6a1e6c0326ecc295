//! A session's state as it is on disk: one flat object, the shape every
//! earlier release wrote, converted to and from the typed parts at once.

use serde::{Deserialize, Serialize};

use super::*;

/// The session file as it is on disk: flat, every field optional.
#[derive(Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub(super) struct SessionFile {
    cwd: String,
    project_dir: String,
    transcript_path: String,
    effort: Option<String>,
    person_spoke: bool,
    tool_ran: bool,
    prompt_id: Option<String>,
    turn_open: bool,
    save_pending: bool,
    saving_since: Option<i64>,
    claim_retries: u32,
    status: Option<Status>,
    report: Option<String>,
    saves: u64,
    last_usage: Option<Usage>,
    project_cwd: String,
    project: Option<String>,
    off: Option<String>,
    last_request_at: Option<i64>,
    paused: Option<Pause>,
    cache_misses: u32,
    missed_cost_usd: f64,
    ended: bool,
    turns_unsaved: u64,
    flush_at: Option<i64>,
    resume_at: Option<String>,
    snapshot: Option<String>,
    save_when_warm: bool,
    cache_read_at: Option<i64>,
    month_usd: Option<f64>,
    route: Option<crate::memory::route::Route>,
    baseline: Option<Baseline>,
    saved_through: Option<i64>,
}

impl From<SessionFile> for SessionState {
    fn from(f: SessionFile) -> SessionState {
        // A claim comes first: what else is set waits behind it. Without
        // one, a request covers held turns, since a save reads them all.
        let job = match (f.saving_since, f.save_pending, f.flush_at) {
            (Some(since), pending, flush) => Job::Claimed {
                since,
                takeovers: f.claim_retries,
                queued: match (pending, flush) {
                    (true, _) => Queued::Save,
                    (false, Some(until)) => Queued::Held { until },
                    (false, None) => Queued::Nothing,
                },
            },
            (None, true, _) => Job::Pending,
            (None, false, Some(until)) => Job::Held { until },
            (None, false, None) => Job::Idle,
        };
        SessionState {
            input: SessionInput {
                cwd: f.cwd,
                project_dir: f.project_dir,
                transcript_path: f.transcript_path,
                effort: f.effort,
                prompt_id: f.prompt_id,
                project_cwd: f.project_cwd,
                project: f.project,
                off: f.off,
                route: f.route,
                baseline: f.baseline,
            },
            protocol: Protocol {
                turn: Turn {
                    person_spoke: f.person_spoke,
                    tool_ran: f.tool_ran,
                    open: f.turn_open,
                    unsaved: f.turns_unsaved,
                    last_request_at: f.last_request_at,
                    ended: f.ended,
                },
                job,
                guard: Guard {
                    paused: f.paused,
                    cache_misses: f.cache_misses,
                    missed_cost_usd: f.missed_cost_usd,
                    save_when_warm: f.save_when_warm,
                    cache_read_at: f.cache_read_at,
                    saved_through: f.saved_through,
                },
                snapshot: Snapshot { resume_at: f.resume_at, copy: f.snapshot },
            },
            outcome: LastSave {
                status: f.status,
                report: f.report,
                saves: f.saves,
                last_usage: f.last_usage,
                month_usd: f.month_usd,
            },
        }
    }
}

impl From<SessionState> for SessionFile {
    fn from(s: SessionState) -> SessionFile {
        let SessionState { input, protocol, outcome } = s;
        let Protocol { turn, job, guard, snapshot } = protocol;
        let (saving_since, claim_retries, save_pending, flush_at) = match job {
            Job::Idle => (None, 0, false, None),
            Job::Pending => (None, 0, true, None),
            Job::Held { until } => (None, 0, false, Some(until)),
            Job::Claimed { since, takeovers, queued } => match queued {
                Queued::Nothing => (Some(since), takeovers, false, None),
                Queued::Save => (Some(since), takeovers, true, None),
                Queued::Held { until } => (Some(since), takeovers, false, Some(until)),
            },
        };
        SessionFile {
            cwd: input.cwd,
            project_dir: input.project_dir,
            transcript_path: input.transcript_path,
            effort: input.effort,
            person_spoke: turn.person_spoke,
            tool_ran: turn.tool_ran,
            prompt_id: input.prompt_id,
            turn_open: turn.open,
            save_pending,
            saving_since,
            claim_retries,
            status: outcome.status,
            report: outcome.report,
            saves: outcome.saves,
            last_usage: outcome.last_usage,
            project_cwd: input.project_cwd,
            project: input.project,
            off: input.off,
            last_request_at: turn.last_request_at,
            paused: guard.paused,
            cache_misses: guard.cache_misses,
            missed_cost_usd: guard.missed_cost_usd,
            ended: turn.ended,
            turns_unsaved: turn.unsaved,
            flush_at,
            resume_at: snapshot.resume_at,
            snapshot: snapshot.copy,
            save_when_warm: guard.save_when_warm,
            cache_read_at: guard.cache_read_at,
            month_usd: outcome.month_usd,
            route: input.route,
            baseline: input.baseline,
            saved_through: guard.saved_through,
        }
    }
}
