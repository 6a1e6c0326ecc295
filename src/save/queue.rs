//! One save per session at a time, and exactly one more for turns that end
//! while it runs. The running worker is whoever holds the session's worker
//! lock; why no request and no started save is lost (the lock order, the
//! claim and its one takeover) is docs/design.md §3, Request and Claim.

use anyhow::Result;

use crate::env::now_unix;
use crate::store::lock::Lock;
use crate::store::paths::Roots;
use crate::store::state::{SessionId, SessionState, SessionStore, Status, StatusKind};

use super::machine::Next;
use super::{SaveJob, SaveResult, run_save};

/// Runs `change` (a `save::machine` transition, which also says whether the
/// job needs a worker) under the session lock, then starts a worker when it
/// does and none runs. Every hook that may request a save goes through here.
pub fn update_then_start<R>(
    sessions: &SessionStore,
    id: &SessionId,
    change: impl FnOnce(&mut SessionState) -> (R, bool),
) -> Result<R> {
    // Tried under the session lock: a worker that holds its lock runs and will see the request.
    let free = || {
        Lock::try_acquire(&sessions.worker_lock_path(id)).inspect_err(|e| crate::store::log::error(&format!("{e:#}")))
    };
    let (result, start) = sessions.update(id, |s| {
        let (result, needs) = change(s);
        (result, needs && free().is_ok_and(|free| free.is_some()))
    })?;
    if start {
        start_worker(id);
    }
    Ok(result)
}

/// Detached (`process::spawn_self_detached`), so the worker outlives the CLI,
/// which exits right after a `-p` turn, and holds no hook pipe open. An exec
/// failure ends the child with 127; the next hook tries again.
fn start_worker(id: &SessionId) {
    if let Err(e) = crate::process::spawn_self_detached(&["worker", "--session", id]) {
        crate::store::log::error(&format!("cannot start the save worker for session {id}: {e:#}"));
    }
}

pub fn run_worker(roots: &Roots, id: &SessionId) -> Result<()> {
    let sessions = SessionStore::new(roots.sessions_dir());
    sessions.ensure_dir()?;
    let Some(worker_lock) = Lock::try_acquire(&sessions.worker_lock_path(id))? else {
        return Ok(()); // another worker has it
    };
    // Holding this session's worker lock, any scratch file of its fork is a
    // dead worker's; other sessions' are stale when no worker holds theirs.
    crate::claude::fork::remove_stale_scratch(&roots.state, |session| {
        session != id && sessions.worker_running(session)
    });
    let mut worker_lock = Some(worker_lock);
    let idle = crate::config::of(roots).limits().idle_flush.as_secs() as i64;
    loop {
        let job = match next_step(&sessions, id, idle, &mut worker_lock)? {
            (Next::Save { .. }, Some(job)) => job,
            (Next::GaveUp { .. }, _) => {
                sessions.mark_claim(id, false);
                continue;
            }
            (Next::Wait(seconds), _) => {
                let millis = if crate::env::virtual_clock() { 5 } else { (seconds.clamp(0, 1) * 1000).max(200) };
                std::thread::sleep(std::time::Duration::from_millis(millis as u64));
                continue;
            }
            _ => return Ok(()),
        };
        let result = run_save(roots, &job);
        if let Some(copy) = &job.resume_from {
            let _ = std::fs::remove_file(copy);
        }
        sessions.update(id, |s| record(&sessions, id, s, &job, &result))?;
        sessions.mark_claim(id, false);
        // After the record: a slow remote delays nothing the status line shows.
        crate::sync::after_save(roots);
    }
}

/// The worker's next step, under the session lock: a claimed job, or what
/// else the protocol says (on `Idle` the worker lock goes, still under it).
fn next_step(
    sessions: &SessionStore,
    id: &SessionId,
    idle: i64,
    worker_lock: &mut Option<Lock>,
) -> Result<(Next, Option<Box<SaveJob>>)> {
    sessions.update(id, |s| {
        let now = now_unix();
        let transcript = std::path::Path::new(&s.input.transcript_path);
        let next = s.protocol.worker_next(now, idle, || crate::claude::transcript::last_activity_at(transcript));
        let remove_copy = |copy: &Option<String>| {
            if let Some(path) = copy.as_deref().and_then(|name| sessions.snapshot_path(id, name)) {
                let _ = std::fs::remove_file(path);
            }
        };
        match &next {
            Next::Idle => {
                worker_lock.take();
            }
            Next::GaveUp { copy } => {
                let lost = "error: a save was lost (its worker was stopped twice)";
                s.outcome.status = Some(Status::new(StatusKind::Error, lost, now));
                s.outcome.report = Some("memory-save: MEMORY.md: a save was not made: its worker was stopped twice before it could write (see memory-save status)".into());
                remove_copy(copy);
            }
            Next::Wait(_) => {}
            Next::Save { last_chance } => {
                // Marked before the claim is written: a worker killed
                // between the two leaves a mark, which a start clears,
                // never a claim no start can find.
                sessions.mark_claim(id, true);
                let job = job_of(sessions, id, s, now, *last_chance);
                return (next.clone(), Some(Box::new(job)));
            }
        }
        (next, None)
    })
}

/// The job a save claimed at `now` runs.
fn job_of(sessions: &SessionStore, id: &SessionId, s: &SessionState, now: i64, last_chance: bool) -> SaveJob {
    let p = &s.protocol;
    SaveJob {
        session_id: id.clone(),
        project_dir: s.input.project_folder().to_string(),
        prompt_id: s.input.prompt_id.clone(),
        transcript_path: s.input.transcript_path.clone(),
        // Kept in the state until the save is done, so a job taken over
        // from a dead worker resumes from the same copy.
        resume_from: p.snapshot.copy.as_deref().and_then(|name| sessions.snapshot_path(id, name)),
        resume_at: p.snapshot.resume_at.clone(),
        effort: s.input.effort.clone(),
        cache_read_at: p.watch.cache_read_at,
        last_chance,
        saved_through: p.watch.saved_through,
        claimed_at: now,
        baseline: s.input.baseline.clone(),
    }
}

/// The one place a save's result enters the session's state: the protocol's
/// step, what the status line and hooks show.
fn record(sessions: &SessionStore, id: &SessionId, s: &mut SessionState, job: &SaveJob, result: &SaveResult) {
    let p = &mut s.protocol;
    let copy = p.snapshot.copy.as_deref().and_then(|name| sessions.snapshot_path(id, name));
    let same = copy == job.resume_from && p.snapshot.resume_at == job.resume_at;
    let done = super::machine::Done {
        read_through: result.read_through,
        at_next_stop: result.wait_warm,
        held_back: result.held_back,
    };
    p.worker_done(same, done);
    if result.usage.as_ref().is_some_and(|u| u.cache_read_input_tokens > 0) {
        p.watch.cache_read_at = Some(now_unix());
    }
    let o = &mut s.outcome;
    o.saves += 1;
    // What a save kept or was told can quote a reply: nothing of it is
    // kept, or shown again, before the secret scanner passes it.
    let redact = crate::memory::secrets::redact;
    o.status = Some(Status::new(result.kind, redact(&result.status), now_unix()));
    o.report = result.report.as_deref().map(redact).or(o.report.take());
    o.month_usd = result.month_usd.or(o.month_usd);
    // A save held back did not run: an ended session's may be tried again.
    if result.held_back.is_some() {
        o.retried = false;
    }
}

/// At the project's SessionStart: a worker for every session that left a
/// claim (its worker killed, after SessionEnd or with no hook to come) that
/// a start can take over.
pub fn take_over_ended(sessions: &SessionStore, project: &str, current: &SessionId) {
    for (id, state) in sessions.claimed() {
        if state.protocol.job.claimed_since().is_none() {
            sessions.mark_claim(&id, false); // a mark its worker had no time to remove
            continue;
        }
        let orphaned = id != *current
            && state.input.project.as_deref() == Some(project)
            && a_start_takes_over(&state)
            && !sessions.worker_running(&id);
        if orphaned {
            start_worker(&id);
        }
    }
}

/// Whether its project's next start takes a marked claim over: the
/// session's transcript, which the save reads, is still there.
pub fn a_start_takes_over(state: &crate::store::state::SessionState) -> bool {
    state.input.project.is_some() && std::path::Path::new(&state.input.transcript_path).is_file()
}

/// At the project's SessionStart: an ended session whose last save failed
/// (not logged in, a fork that timed out) or was held back (a plan's full
/// window, a refusal) and whose transcript is still there is saved once
/// more, so its turns are not lost to a cause gone since; a failure once
/// only, since a cause that stays would fail again.
pub fn retry_failed_ended(sessions: &SessionStore, project: &str, current: &SessionId) {
    let failed = |s: &crate::store::state::SessionState| {
        s.protocol.turn.ended
            && !s.outcome.retried
            && s.protocol.job == crate::store::state::Job::Idle
            && s.input.project.as_deref() == Some(project)
            && (s.protocol.turn.held_back || s.outcome.status.as_ref().is_some_and(|st| st.kind == StatusKind::Error))
            && std::path::Path::new(&s.input.transcript_path).is_file()
    };
    for (id, _) in sessions.all().into_iter().filter(|(id, s)| id != current && failed(s)) {
        let asked = sessions.update(&id, |s| {
            let again = failed(s);
            if again {
                s.outcome.retried = true;
                s.protocol.request();
            }
            again
        });
        match asked {
            Ok(true) => start_worker(&id),
            Ok(false) => {}
            Err(e) => crate::store::log::error(&format!("cannot ask session {id}'s failed save again: {e:#}")),
        }
    }
}

/// At the project's SessionStart: the report lines of ended sessions that
/// nobody saw (the save their end started finished after them), taken so
/// each is shown once.
pub fn take_ended_reports(sessions: &SessionStore, project: &str, current: &SessionId) -> Vec<String> {
    let ended = |s: &crate::store::state::SessionState| {
        s.protocol.turn.ended && s.input.project.as_deref() == Some(project) && s.outcome.report.is_some()
    };
    let mut reports = Vec::new();
    let ended_now = sessions.all().into_iter().filter(|(id, s)| id != current && ended(s));
    for (id, _) in ended_now.filter(|(id, _)| !sessions.worker_running(id)) {
        match sessions.update(&id, |s| if ended(s) { s.outcome.report.take() } else { None }) {
            Ok(Some(line)) => reports.push(line),
            Ok(None) => {}
            Err(e) => crate::store::log::error(&format!("cannot take session {id}'s report: {e:#}")),
        }
    }
    reports
}
