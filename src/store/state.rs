//! Per-session state on disk. Every hook is a new process, so the turn's
//! flags, the save queue and the last result live in one small JSON file per
//! session, read and written under a separate `.lock` file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::env::now_unix;
use crate::store::fsutil::{self, Lock};

/// Hooks wait this long at most for another process's lock.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// A session file is a few hundred bytes; anything larger is not ours.
const MAX_STATE_BYTES: u64 = 1024 * 1024;
/// Stale session files are looked for at most this often.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);
/// Session files untouched for this long are removed.
const STALE_AFTER: Duration = Duration::from_secs(14 * 24 * 3600);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionState {
    pub cwd: String,
    /// The session's project folder, where Claude Code reads the project's
    /// settings and CLAUDE.md: `CLAUDE_PROJECT_DIR`, else the first working
    /// folder a hook reported. A `cd` inside the session does not move it,
    /// so a cloned dependency's folder can neither name the memory nor
    /// supply the fork's settings.
    pub project_dir: String,
    pub transcript_path: String,
    pub effort: Option<String>,
    /// A person sent a prompt since the last save was requested.
    pub person_spoke: bool,
    /// A main-loop tool ran since the last save was requested.
    pub tool_ran: bool,
    pub prompt_id: Option<String>,
    /// A prompt was submitted and its Stop has not come (yet).
    pub turn_open: bool,
    /// A save is requested and no worker has taken it yet.
    pub save_pending: bool,
    /// The claim of the save being run: Unix time it was claimed; `None`
    /// when idle. It is cleared only after the save's write, so a worker
    /// killed before then leaves it set, with its worker lock free, and the
    /// next worker takes the job over.
    pub saving_since: Option<i64>,
    /// How often the claimed job was taken over from a worker that died.
    pub claim_retries: u32,
    /// The last finished save's short result, for the status line.
    pub status: Option<Status>,
    /// The last save's report line, shown to the user once.
    pub report: Option<String>,
    pub saves: u64,
    pub last_usage: Option<Usage>,
    /// The project, worked out once per working folder (it costs a git
    /// discovery, too much for every hook).
    pub project_cwd: String,
    pub project: Option<String>,
    /// Why memory-save is off for this project (`off: …`), if it is.
    pub off: Option<String>,
    /// Unix time of the last save request, for `save_every_minutes`.
    pub last_request_at: Option<i64>,
    /// Why per-turn saves of this session stopped, if they did (the cost
    /// guard, docs/design.md §4).
    pub paused: Option<Pause>,
    /// Saves in a row whose input was mostly not read from the cache, and
    /// what they cost.
    pub cache_misses: u32,
    pub missed_cost_usd: f64,
    /// SessionEnd has come: a cache-miss pause still allows this last save.
    pub ended: bool,
    /// The subscription's quota, as the status line last reported it.
    pub quota: Option<Quota>,
    /// Turns worth a save since the last request (`save_every_turns`).
    pub turns_unsaved: u64,
    /// Unix time at which a quiet session's unsaved turns are saved
    /// (`idle_flush_seconds`); the worker waits for it.
    pub flush_at: Option<i64>,
    /// The message a save asked for at PreCompact resumes at.
    pub resume_at: Option<String>,
    /// The copy of the transcript that save resumes from, when one was
    /// taken (`SessionStore::snapshot_path`); its worker removes it.
    pub snapshot: Option<String>,
    /// A save waited for a warm cache (its own would have been dear): the
    /// next turn's Stop asks for it at once.
    pub save_when_warm: bool,
    /// The last save that read the prompt cache (Unix time): it kept the
    /// cache alive.
    pub cache_read_at: Option<i64>,
    /// What this billing month's saves by this session's route counted,
    /// as of its last save, for the status line.
    pub month_usd: Option<f64>,
    /// Who pays for this session's saves, recorded at SessionStart, where
    /// the hook sees the session's environment.
    pub route: Option<crate::memory::route::Route>,
    /// What the session's last SessionStart loaded (`save::baseline`).
    pub baseline: Option<Baseline>,
    /// When the last save whose fork answered was claimed: a save that
    /// cannot resume the session reads the turns since (`save::Job`).
    pub saved_through: Option<i64>,
}

/// What a session's last SessionStart loaded, part by part
/// (`save::baseline`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub hash: u64,
    pub parts: usize,
    /// Bit N-1: part N was emitted.
    pub seen: u64,
    pub at: i64,
}

impl Baseline {
    pub fn complete(&self) -> bool {
        self.parts > 0 && self.parts <= 64 && self.seen == (u64::MAX >> (64 - self.parts))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pause {
    pub kind: PauseKind,
    /// `paused: 2 saves missed the prompt cache ($0.41)`.
    pub text: String,
    /// Unix time.
    pub at: i64,
    /// The one save at a session's end that a cache-miss pause allows has
    /// been asked for: a `claude -p --resume` workflow ends its session every
    /// run, and must not get a save from each.
    #[serde(default)]
    pub end_save_used: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PauseKind {
    /// The fork's requests miss the prompt cache: saved once more at
    /// SessionEnd, then nothing until `memory-save resume`.
    CacheMiss,
    /// A budget was passed: a hard stop, no save at SessionEnd either.
    Budget,
}

/// `rate_limits` from the status-line input (subscription logins only).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Quota {
    pub five_hour: Option<f64>,
    pub seven_day: Option<f64>,
    /// Unix time it was read.
    pub at: i64,
}

impl Quota {
    /// The fuller of the two limits, as `(percent, "5-hour")`.
    pub fn highest(&self) -> Option<(f64, &'static str)> {
        let five = self.five_hour.map(|p| (p, "5-hour"));
        let seven = self.seven_day.map(|p| (p, "7-day"));
        [five, seven].into_iter().flatten().max_by(|a, b| a.0.total_cmp(&b.0))
    }
}

impl SessionState {
    /// The folder the project is found from and the fork runs in.
    pub fn project_folder(&self) -> &str {
        if self.project_dir.is_empty() { &self.cwd } else { &self.project_dir }
    }

    pub fn worth_saving(&self) -> bool {
        self.person_spoke || self.tool_ran
    }

    /// A save is requested, a claimed one must go on, or an idle flush
    /// waits.
    pub fn has_job(&self) -> bool {
        self.save_pending || self.saving_since.is_some() || self.flush_at.is_some()
    }

    /// A turn that is due a save (`save_due`) ended: with `save_every_turns`
    /// it is saved when N have gathered, or when the session has been quiet
    /// for `idle_flush_seconds`; else at once.
    pub fn turn_saved_or_held(&mut self, limits: &SaveLimits) {
        self.turns_unsaved += 1;
        if limits.every_turns <= 1 || self.turns_unsaved >= limits.every_turns || self.save_when_warm {
            self.request_save();
        } else {
            self.flush_at = Some(now_unix() + limits.idle_flush.as_secs() as i64);
        }
    }

    /// Turns the turn's flags into a save request.
    pub fn request_save(&mut self) {
        self.turns_unsaved = 0;
        self.save_when_warm = false;
        self.flush_at = None;
        self.save_pending = true;
        self.person_spoke = false;
        self.tool_ran = false;
        self.last_request_at = Some(now_unix());
    }

    /// Worth saving, on, and (with `save_every_minutes`) not too soon after
    /// the last save. A turn held back stays flagged, so a later Stop or the
    /// session's end saves it. `interval` is asked only when it matters, so
    /// the common hook call never reads the configuration file.
    pub fn save_due(&self, limits: impl FnOnce() -> SaveLimits) -> bool {
        if !self.worth_saving() || self.off.is_some() {
            return false;
        }
        match &self.paused {
            Some(pause) if pause.kind == PauseKind::Budget => return false,
            Some(pause) if !self.ended || pause.end_save_used => return false,
            _ => {}
        }
        // Only a session that has both an interval or a quota to look at
        // reads the configuration: the common hook call never does.
        if self.last_request_at.is_none() && self.quota.is_none() {
            return true;
        }
        let limits = limits();
        if let (Some(quota), Some(threshold)) = (&self.quota, limits.pause_at_quota_percent)
            && quota.highest().is_some_and(|(percent, _)| percent >= threshold)
        {
            return false;
        }
        match (self.last_request_at, limits.interval) {
            (Some(last), Some(every)) if !self.ended => now_unix() - last >= every.as_secs() as i64,
            _ => true,
        }
    }
}

/// What of the configuration decides whether a save is due.
#[derive(Debug, Clone, Copy, Default)]
pub struct SaveLimits {
    pub interval: Option<Duration>,
    pub pause_at_quota_percent: Option<f64>,
    /// Save after this many turns (0 or 1: every turn).
    pub every_turns: u64,
    pub idle_flush: Duration,
}

impl SessionState {
    /// Why the quota holds saves back, if it does (for the status line).
    pub fn quota_pause(&self, threshold: Option<f64>) -> Option<String> {
        let (percent, which) = self.quota.as_ref()?.highest()?;
        (percent >= threshold?).then(|| format!("paused: quota at {percent:.0}% of the {which} limit"))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub text: String,
    /// Unix time.
    pub at: i64,
}

/// What one fork cost, as `claude --output-format json` reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub output_tokens: u64,
    pub total_cost_usd: f64,
    pub duration_ms: u64,
}

/// Session ids name files, so only a plain id is accepted.
const SNAPSHOT_EXT: &str = "transcript.jsonl";

pub fn check_session_id(id: &str) -> Result<()> {
    if id.is_empty() || id.len() > 128 || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') {
        bail!("session id {id:?} is not a plain id (letters, digits, '-', '_'); ignoring this hook call");
    }
    Ok(())
}

pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    pub fn new(sessions_dir: PathBuf) -> SessionStore {
        SessionStore { dir: sessions_dir }
    }

    fn path(&self, id: &str, ext: &str) -> PathBuf {
        self.dir.join(format!("{id}.{ext}"))
    }

    /// The memory text the session's last load emitted (`save::baseline`).
    pub fn baseline_path(&self, id: &str) -> PathBuf {
        self.path(id, "baseline.md")
    }

    pub fn worker_lock_path(&self, id: &str) -> PathBuf {
        self.path(id, "worker.lock")
    }

    /// A new name for a copy of a session's transcript taken at PreCompact
    /// (see `hook::pre_compact`): one per copy, so a save still reading an
    /// earlier copy keeps it. It ends in `.jsonl`: that is how `claude
    /// --resume` tells a file from a session id.
    pub fn new_snapshot_name(&self, id: &str) -> String {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{id}.{nanos}.{SNAPSHOT_EXT}")
    }

    /// Where a copy named by `new_snapshot_name` lives; `None` for any
    /// other name, so a state file cannot point the fork elsewhere.
    pub fn snapshot_path(&self, name: &str) -> Option<PathBuf> {
        let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
        (plain && !name.starts_with('.') && name.ends_with(SNAPSHOT_EXT)).then(|| self.dir.join(name))
    }

    /// Marks that a session has a claimed job (see `save::queue`): an empty
    /// file beside its state, so the project's next SessionStart finds a
    /// dead worker's job by listing the folder, without reading every
    /// session's state.
    pub fn mark_claim(&self, id: &str, claimed: bool) {
        let path = self.path(id, "claim");
        if claimed {
            let _ = fsutil::create_new_private(&path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Every session's id and state.
    pub fn all(&self) -> Vec<(String, SessionState)> {
        self.with_file("json")
    }

    /// The sessions whose claim mark is set, with their state.
    pub fn claimed(&self) -> Vec<(String, SessionState)> {
        self.with_file("claim")
    }

    /// The sessions that have a `<id>.<ext>` file, with their state.
    fn with_file(&self, ext: &str) -> Vec<(String, SessionState)> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let suffix = format!(".{ext}");
        entries
            .flatten()
            .filter_map(|e| {
                let id = e.file_name().to_str()?.strip_suffix(&suffix)?.to_string();
                check_session_id(&id).ok()?;
                let state = self.peek(&id);
                Some((id, state))
            })
            .collect()
    }

    /// Creates the sessions folder (0700) when missing; refuses one that is
    /// a symlink, so no state or lock file lands outside our folder.
    pub fn ensure_dir(&self) -> Result<()> {
        // The state root is checked too: a link or a folder of someone
        // else's there would carry every file below it away.
        if let Some(root) = self.dir.parent() {
            fsutil::create_private_dir(root)?;
        }
        fsutil::create_private_dir(&self.dir)
    }

    /// Whether a worker holds the session's worker lock right now. A worker
    /// that was killed holds nothing: the system drops its lock.
    pub fn worker_running(&self, id: &str) -> bool {
        fsutil::is_locked(&self.worker_lock_path(id))
    }

    /// Reads without locking: fine for a glance (status line, a flag that is
    /// already set), never for a read-modify-write.
    pub fn peek(&self, id: &str) -> SessionState {
        read_state(&self.path(id, "json"))
    }

    /// Runs `change` on the session's state under its lock and writes the
    /// result back when it changed.
    pub fn update<R>(&self, id: &str, change: impl FnOnce(&mut SessionState) -> R) -> Result<R> {
        check_session_id(id)?;
        self.ensure_dir()?;
        let _lock = Lock::acquire(&self.path(id, "lock"), LOCK_WAIT)?;
        let path = self.path(id, "json");
        let before = read_state(&path);
        let mut state = before.clone();
        let result = change(&mut state);
        if state != before {
            let text = serde_json::to_vec(&state).context("cannot encode session state")?;
            fsutil::overwrite(&path, &text)?;
        }
        Ok(result)
    }

    /// Removes the files of sessions idle for two weeks, at most once an
    /// hour: SessionStart calls this, and a sweep stats every file.
    pub fn remove_stale(&self) {
        let mark = self.dir.join(".swept");
        let recent = std::fs::symlink_metadata(&mark)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|age| age < SWEEP_EVERY);
        if recent || self.ensure_dir().is_err() || fsutil::overwrite(&mark, b"").is_err() {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = std::time::SystemTime::now();
        for entry in entries.flatten() {
            let path = entry.path();
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|m| now.duration_since(m).ok())
                .is_some_and(|age| age > STALE_AFTER);
            if stale && path.extension().is_some_and(|e| e == "json") {
                let _ = std::fs::remove_file(&path);
                let _ = std::fs::remove_file(path.with_extension("lock"));
                let _ = std::fs::remove_file(path.with_extension("worker.lock"));
                let _ = std::fs::remove_file(path.with_extension("claim"));
                let _ = std::fs::remove_file(path.with_extension("baseline.md"));
            }
            // A copy a killed worker never removed.
            let snapshot = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(SNAPSHOT_EXT));
            if stale && snapshot {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// A missing or unreadable state file is a fresh session: the state is ours
/// and never worth failing a hook over.
fn read_state(path: &Path) -> SessionState {
    read_state_bytes(path).and_then(|bytes| parse_state(&bytes)).unwrap_or_default()
}

/// A session file's bytes, if it is a small regular file of ours.
pub fn read_state_bytes(path: &Path) -> Option<Vec<u8>> {
    fsutil::read_regular(path, MAX_STATE_BYTES).ok().flatten()
}

/// The state in a session file, for every reader. Only the first JSON value
/// counts: the file is rewritten in place (`fsutil::overwrite`), and a
/// writer killed between its write and its truncation, or a reader that
/// looks right then, finds the new state followed by the old one's tail.
pub fn parse_state(bytes: &[u8]) -> Option<SessionState> {
    serde_json::Deserializer::from_slice(bytes).into_iter::<SessionState>().next()?.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_rewritten_in_place_reads_back_whole_or_as_new() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = "abc-123";
        store.update(id, |s| s.report = Some("x".repeat(500))).unwrap();
        store.update(id, |s| s.report = None).unwrap();
        assert_eq!(store.peek(id).report, None, "a shorter rewrite leaves no tail");

        // Killed between the write and the truncation: new JSON, old tail.
        let path = dir.path().join("sessions").join(format!("{id}.json"));
        let mut bytes = serde_json::to_vec(&SessionState { saves: 7, ..Default::default() }).unwrap();
        bytes.extend_from_slice(b"\"report\":\"an old tail\"}");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(store.peek(id).saves, 7);

        std::fs::write(&path, b"{not json").unwrap();
        assert_eq!(store.peek(id), SessionState::default(), "a corrupt file is a fresh session");
    }

    #[test]
    fn plain_ids_only() {
        for bad in ["", "../x", "a/b", "a b", &"x".repeat(129)] {
            assert!(check_session_id(bad).is_err(), "{bad:?}");
        }
        assert!(check_session_id("c7913528-c726-407d-a030-104c5096a70b").is_ok());
    }
}
