//! One save per session at a time, and exactly one more for turns that end
//! while it runs. The request is a flag in the session state; the running
//! worker is whoever holds the session's worker lock.
//!
//! Why no request is lost: hooks set the flag and look at the worker lock
//! while holding the session lock, and the worker gives up its worker lock
//! only while holding the session lock after finding no flag set. So a hook
//! either sees the worker still holding (and the worker will see the flag),
//! or sees it free and starts a new one. The start itself comes after the
//! session lock is released, so the hook writes its state before forking;
//! two hooks may then both start a worker, and the one that finds the worker
//! lock taken exits, since the other will see the request.
//!
//! Why no started save is lost: the worker claims a job (`saving_since`)
//! and clears the claim only after the save's write. A worker killed before
//! then leaves the claim set and its worker lock free (the system drops a
//! dead process's locks), which every hook that looks at the queue reads as
//! "a job needs a worker": the session's next hook, or for a session that
//! has ended the project's next SessionStart, starts one, and it takes the
//! job over. A job is taken over once; a second loss is reported.

use anyhow::{Context, Result};

use crate::env::now_unix;
use crate::store::fsutil::Lock;
use crate::store::paths::Roots;
use crate::store::state::{PauseKind, SessionState, SessionStore, Status};

use super::{Job, run_save};

/// Runs `change` on the session's state under its lock, then starts a
/// worker when a save is pending and none runs. Every hook that may request
/// a save goes through here, so the protocol above lives in one place.
pub fn update_then_start<R>(
    sessions: &SessionStore,
    id: &str,
    change: impl FnOnce(&mut SessionState) -> R,
) -> Result<R> {
    update_then_start_if(sessions, id, SessionState::has_job, change)
}

/// `update_then_start` for a new prompt: a session whose only job is an
/// idle flush has its worker already, started by the Stop that set it and
/// waiting for the quiet; a prompt right after that Stop would race the
/// worker's own start and fork a second one (a millisecond on the prompt,
/// measured). If that worker died, the next Stop or SessionEnd starts one.
pub fn update_then_start_for_prompt<R>(
    sessions: &SessionStore,
    id: &str,
    change: impl FnOnce(&mut SessionState) -> R,
) -> Result<R> {
    update_then_start_if(sessions, id, |s| s.save_pending || s.saving_since.is_some(), change)
}

fn update_then_start_if<R>(
    sessions: &SessionStore,
    id: &str,
    needs_worker: impl FnOnce(&SessionState) -> bool,
    change: impl FnOnce(&mut SessionState) -> R,
) -> Result<R> {
    let (result, start) = sessions.update(id, |s| {
        let result = change(s);
        (result, needs_worker(s) && worker_needed(sessions, id))
    })?;
    if start {
        start_worker(id);
    }
    Ok(result)
}

/// Whether a worker must be started for the session's pending save: none
/// holds the worker lock. Called under the session lock.
fn worker_needed(sessions: &SessionStore, id: &str) -> bool {
    match Lock::try_acquire(&sessions.worker_lock_path(id)) {
        Ok(free) => free.is_some(), // held: a worker runs and will see the request
        Err(e) => {
            crate::store::log::error(&format!("{e:#}"));
            false
        }
    }
}

fn start_worker(id: &str) {
    if let Err(e) = spawn_worker(id) {
        crate::store::log::error(&format!("cannot start the save worker for session {id}: {e:#}"));
    }
}

/// The worker is this binary again, detached: its own session and process
/// group, stdio on /dev/null, so it outlives the CLI (which exits right after
/// a `-p` turn) and never holds the hook's pipes open.
///
/// A plain fork and exec rather than `std::process::Command`: `Command`
/// waits until the child has exec'd (to report exec errors), which put
/// about a millisecond on every Stop that starts a save. The parent here
/// returns right after fork; an exec failure ends the child with 127, and the
/// next hook's `ensure_worker` tries again.
fn spawn_worker(id: &str) -> Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let exe = CString::new(exe.as_os_str().as_bytes()).context("this program's path holds a NUL byte")?;
    let args = [exe.clone(), c"worker".into(), c"--session".into(), CString::new(id)?];
    let mut argv: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    // Everything the child needs is prepared above: between fork and exec
    // it may only make async-signal-safe calls.
    // SAFETY: hooks are single-threaded, and the child only calls setsid,
    // open, dup2, close, close_range or getrlimit, execv and _exit before
    // it is replaced.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()).context("cannot fork the worker"),
        0 => unsafe {
            libc::setsid();
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
            if null >= 0 {
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
            }
            // Claude Code may have passed descriptors beyond stdio; a worker
            // holding one of its pipes would keep the hook looking unfinished.
            crate::claude::child::close_descriptors_from(3);
            libc::execv(exe.as_ptr(), argv.as_ptr());
            libc::_exit(127)
        },
        _ => Ok(()),
    }
}

/// The report line of a job given up after its worker died twice.
pub const LOST_REPORT: &str = "memory-save: MEMORY.md: a save was not made: its worker was stopped twice before it could write (see memory-save status)";

/// What the worker does next, decided under the session lock.
enum Next {
    Save(Box<Job>),
    /// A job whose worker died twice: dropped, with a report line.
    GaveUp,
    /// An idle flush is due in this many seconds.
    Wait(i64),
    Idle,
}

pub fn run_worker(roots: &Roots, id: &str) -> Result<()> {
    crate::store::state::check_session_id(id)?;
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
        let next = sessions.update(id, |s| {
            let now = now_unix();
            // A save the quiet asked for: no warm turn may come after it.
            let mut quiet = false;
            // A request made before its session was paused is not run:
            // a budget stops everything, a cache-miss pause all but the
            // save at the session's end.
            if s.paused.as_ref().is_some_and(|p| p.kind == PauseKind::Budget || !s.ended) {
                s.save_pending = false;
                s.flush_at = None;
            }
            if s.saving_since.is_some() {
                // A claim while we hold the worker lock: its worker died
                // before the write. A new request folds into it, since a
                // save reads the whole session.
                if s.save_pending {
                    s.save_pending = false;
                    s.claim_retries = 0;
                } else if s.claim_retries >= 1 {
                    s.saving_since = None;
                    s.claim_retries = 0;
                    s.status =
                        Some(Status { text: "error: a save was lost (its worker was stopped twice)".into(), at: now });
                    s.report = Some(LOST_REPORT.into());
                    s.resume_at = None;
                    if let Some(copy) = s.snapshot.take().and_then(|name| sessions.snapshot_path(&name)) {
                        let _ = std::fs::remove_file(copy);
                    }
                    return Next::GaveUp;
                } else {
                    s.claim_retries += 1;
                }
            } else if s.save_pending {
                s.save_pending = false;
                s.claim_retries = 0;
            } else if let Some(at) = s.flush_at {
                // The session's gathered turns wait for it to be quiet; a
                // new Stop moves the moment on. The worker holds its lock
                // meanwhile, so the hooks see it running.
                if now < at {
                    return Next::Wait(at - now);
                }
                // Quiet since the last Stop is not quiet: a long turn writes
                // its transcript as it goes, and flushing in its middle
                // would pay a save the turn's own Stop makes anyway.
                let last = crate::claude::transcript::last_activity_at(std::path::Path::new(&s.transcript_path));
                if let Some(quiet_from) = last.map(|t| t.min(now)).filter(|_| !s.ended)
                    && now < quiet_from + idle
                {
                    s.flush_at = Some(quiet_from + idle);
                    return Next::Wait(quiet_from + idle - now);
                }
                s.request_save();
                s.save_pending = false;
                s.claim_retries = 0;
                quiet = true;
            } else {
                // Released under the session lock: see the module comment.
                worker_lock.take();
                return Next::Idle;
            }
            s.saving_since = Some(now);
            Next::Save(Box::new(Job {
                session_id: id.to_string(),
                cwd: s.project_folder().to_string(),
                prompt_id: s.prompt_id.clone(),
                transcript_path: s.transcript_path.clone(),
                // Kept in the state until the save is done, so a job taken
                // over from a dead worker resumes from the same copy.
                resume_from: s.snapshot.as_deref().and_then(|name| sessions.snapshot_path(name)),
                resume_at: s.resume_at.clone(),
                effort: s.effort.clone(),
                cache_read_at: s.cache_read_at,
                last_chance: s.ended || quiet,
                saved_through: s.saved_through,
                claimed_at: now,
                baseline: s.baseline.clone(),
            }))
        })?;
        let job = match next {
            Next::Save(job) => {
                sessions.mark_claim(id, true);
                job
            }
            Next::GaveUp => {
                sessions.mark_claim(id, false);
                continue;
            }
            Next::Wait(seconds) => {
                let pause = if crate::env::virtual_clock() {
                    std::time::Duration::from_millis(5)
                } else {
                    std::time::Duration::from_secs(seconds.clamp(0, 1) as u64)
                        .max(std::time::Duration::from_millis(200))
                };
                std::thread::sleep(pause);
                continue;
            }
            Next::Idle => return Ok(()),
        };
        let result = run_save(roots, &job);
        if let Some(copy) = &job.resume_from {
            let _ = std::fs::remove_file(copy);
        }
        sessions.update(id, |s| {
            s.saving_since = None;
            // Unless a new PreCompact asked again meanwhile.
            let same = s.snapshot.as_deref().and_then(|name| sessions.snapshot_path(name)) == job.resume_from;
            if same && s.resume_at == job.resume_at {
                s.snapshot = None;
                s.resume_at = None;
            }
            s.claim_retries = 0;
            s.saves += 1;
            if result.read_through.is_some() {
                s.saved_through = result.read_through;
            }
            // What a save kept or was told can quote a reply: nothing of it
            // is kept, or shown again, before the secret scanner passes it.
            let redact = crate::memory::secrets::redact;
            s.status = Some(Status { text: redact(&result.status), at: now_unix() });
            if let Some(report) = &result.report {
                s.report = Some(redact(report));
            }
            if result.usage.is_some() {
                s.last_usage.clone_from(&result.usage);
            }
            if result.usage.as_ref().is_some_and(|u| u.cache_read_input_tokens > 0) {
                s.cache_read_at = Some(now_unix());
            }
            if result.month_usd.is_some() {
                s.month_usd = result.month_usd;
            }
            s.save_when_warm = result.wait_warm;
            let paused = super::guard::count(s, result.usage.as_ref(), result.parent_last_request_at);
            let budget = result.pause.clone().filter(|_| s.paused.as_ref().is_none_or(|p| p.kind != PauseKind::Budget));
            let budget_line = budget.as_ref().map(|p| {
                format!("memory-save: {}; no more saves in this session. Resume with: memory-save resume", p.text)
            });
            if let Some(pause) = budget {
                s.paused = Some(pause);
            }
            for line in [paused, budget_line].into_iter().flatten() {
                s.report = Some(crate::memory::report::join(s.report.as_deref(), Some(&line)));
            }
        })?;
        sessions.mark_claim(id, false);
        // After the save is recorded: a slow remote delays nothing the
        // status line shows.
        crate::sync::after_save(roots);
    }
}

/// Starts a worker for every ended session of `project` that left a
/// claimed job behind (its worker was killed after SessionEnd), while its
/// transcript still exists. Called at the project's SessionStart.
pub fn take_over_ended(sessions: &SessionStore, project: &str, current: &str) {
    for (id, state) in sessions.claimed() {
        if state.saving_since.is_none() {
            sessions.mark_claim(&id, false); // a mark its worker had no time to remove
            continue;
        }
        let orphaned = id != current
            && state.saving_since.is_some()
            && state.project.as_deref() == Some(project)
            && std::path::Path::new(&state.transcript_path).is_file()
            && !sessions.worker_running(&id);
        if orphaned {
            start_worker(&id);
        }
    }
}
