//! Per-session state on disk: every hook is a new process, so it lives in
//! one small JSON file per session, which is also its lock (it is rewritten
//! in place).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result, bail};

pub use super::session::*;

use crate::store::{fsutil, lock::Lock};

/// Hooks wait this long at most for another process's lock.
const LOCK_WAIT: Duration = Duration::from_secs(2);
/// A session file is a few hundred bytes; anything larger is not ours.
const MAX_STATE_BYTES: u64 = 1024 * 1024;
/// Stale session files are looked for at most this often.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);
/// Session files untouched for this long are removed.
const STALE_AFTER: Duration = Duration::from_secs(14 * 24 * 3600);

const SNAPSHOT_EXT: &str = "transcript.jsonl";

/// A session's id, checked once where it arrives: it names files, so only
/// a plain id is one.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SessionId(String);

impl SessionId {
    pub fn parse(id: &str) -> Result<SessionId> {
        let plain = id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
        // Never a flag's shape either: it is passed to the fork's --resume.
        if id.is_empty() || id.len() > 128 || !plain || id.starts_with('-') {
            bail!("session id {id:?} is not a plain id (letters, digits, '-', '_'); ignoring this hook call");
        }
        Ok(SessionId(id.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for SessionId {
    type Error = String;
    fn try_from(id: String) -> std::result::Result<SessionId, String> {
        SessionId::parse(&id).map_err(|e| e.to_string())
    }
}

impl From<SessionId> for String {
    fn from(id: SessionId) -> String {
        id.0
    }
}

impl std::ops::Deref for SessionId {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

pub struct SessionStore {
    dir: PathBuf,
}

impl SessionStore {
    pub fn new(sessions_dir: PathBuf) -> SessionStore {
        SessionStore { dir: sessions_dir }
    }

    fn path(&self, id: &SessionId, ext: &str) -> PathBuf {
        self.dir.join(format!("{id}.{ext}"))
    }

    /// The memory text the session's last load emitted (`save::baseline`).
    pub fn baseline_path(&self, id: &SessionId) -> PathBuf {
        self.path(id, "baseline.md")
    }

    pub fn worker_lock_path(&self, id: &SessionId) -> PathBuf {
        self.path(id, "worker.lock")
    }

    /// A new name for a PreCompact copy of the transcript, one per copy so a
    /// save still reading an earlier one keeps it. `.jsonl` is how `claude
    /// --resume` tells a file from a session id.
    pub fn new_snapshot_name(&self, id: &SessionId) -> String {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        format!("{id}.{nanos}.{SNAPSHOT_EXT}")
    }

    /// Where a copy named by `new_snapshot_name` lives; `None` for any
    /// other name, so a state file cannot point the fork elsewhere.
    pub fn snapshot_path(&self, id: &SessionId, name: &str) -> Option<PathBuf> {
        let plain = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
        // Only this session's copy: a state file cannot have a save read and
        // remove another session's.
        let own = name.strip_prefix(id.as_str()).is_some_and(|rest| rest.starts_with('.'));
        (plain && own && name.ends_with(SNAPSHOT_EXT)).then(|| self.dir.join(name))
    }

    /// Marks a claimed job with an empty file, so the next SessionStart finds
    /// a dead worker's job by listing the folder, not reading every state.
    pub fn mark_claim(&self, id: &SessionId, claimed: bool) {
        let path = self.path(id, "claim");
        if claimed {
            let _ = fsutil::create_new_private(&path);
        } else {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Whether the session's claim is marked for the next start to find.
    pub fn claim_marked(&self, id: &SessionId) -> bool {
        self.path(id, "claim").symlink_metadata().is_ok()
    }

    /// The session's state as a hook would take it (a garbled file is a
    /// fresh session), or why no hook could: not a regular file, or a
    /// newer release's.
    pub fn read(&self, id: &SessionId) -> Result<SessionState> {
        let path = self.path(id, "json");
        let bytes = fsutil::read_regular(&path, MAX_STATE_BYTES)?.unwrap_or_default();
        if let Some(state) = parse_state(&bytes) {
            return Ok(state);
        }
        crate::store::record::check_version(&path, &bytes)?;
        Ok(SessionState::default())
    }

    /// The sessions that have a state file.
    pub fn ids(&self) -> Vec<SessionId> {
        self.ids_with("json")
    }

    pub fn all(&self) -> Vec<(SessionId, SessionState)> {
        self.with_file("json")
    }

    pub fn claimed(&self) -> Vec<(SessionId, SessionState)> {
        self.with_file("claim")
    }

    /// The sessions that have a `<id>.<ext>` file, with their state.
    fn with_file(&self, ext: &str) -> Vec<(SessionId, SessionState)> {
        self.ids_with(ext)
            .into_iter()
            .map(|id| {
                let state = self.peek(&id);
                (id, state)
            })
            .collect()
    }

    fn ids_with(&self, ext: &str) -> Vec<SessionId> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        let suffix = format!(".{ext}");
        entries
            .flatten()
            .filter_map(|e| SessionId::parse(e.file_name().to_str()?.strip_suffix(&suffix)?).ok())
            .collect()
    }

    /// Creates the sessions folder (0700); a link, or another user's folder,
    /// here or at the state root would carry every file below it away.
    pub fn ensure_dir(&self) -> Result<()> {
        if let Some(root) = self.dir.parent() {
            fsutil::create_private_dir(root)?;
        }
        fsutil::create_private_dir(&self.dir)
    }

    /// Whether a worker holds the session's worker lock (a killed one holds nothing).
    pub fn worker_running(&self, id: &SessionId) -> bool {
        crate::store::lock::is_locked(&self.worker_lock_path(id))
    }

    /// Reads without locking: fine for a glance (status line, a flag that is
    /// already set), never for a read-modify-write. A missing or unreadable
    /// state file is a fresh session: the state is ours and never worth
    /// failing a hook over.
    pub fn peek(&self, id: &SessionId) -> SessionState {
        self.peek_firings(id).0
    }

    /// `peek`, and how many firings follow the state (`note_firing`).
    pub fn peek_firings(&self, id: &SessionId) -> (SessionState, usize) {
        read_state_bytes(&self.path(id, "json")).and_then(|bytes| parse_with_firings(&bytes)).unwrap_or_default()
    }

    /// Runs `change` under the session's lock, writing back only a change.
    pub fn update<R>(&self, id: &SessionId, change: impl FnOnce(&mut SessionState) -> R) -> Result<R> {
        let (path, lock) = self.lock(id)?;
        change_locked(&path, &lock, change)
    }

    /// The session's state file, locked: it is its own lock. The folders
    /// are made, and checked, with the state's first write.
    fn lock(&self, id: &SessionId) -> Result<(PathBuf, Lock)> {
        let path = self.path(id, "json");
        if std::fs::symlink_metadata(&path).is_err() {
            self.ensure_dir()?;
        }
        let lock = Lock::acquire(&path, LOCK_WAIT)?;
        Ok((path, lock))
    }

    /// Notes that guard `guard` fired (and the call it asked about) after
    /// the state, under its lock: PreToolUse's one write, where a change of
    /// the state parsed and wrote all of it, 0.05 ms of a 0.8 ms hook
    /// (measured); every read folds it in and the next change writes it
    /// into the state, as this does after `FOLD_AFTER` (`following`, as
    /// the caller's `peek_firings` found them), so every read stays short.
    pub fn note_firing(&self, id: &SessionId, guard: &str, asked: Option<String>, following: usize) -> Result<()> {
        let mut line = serde_json::to_vec(&Firing { fired: guard.to_string(), asked })?;
        line.push(b'\n');
        let (path, lock) = self.lock(id)?;
        lock.append(&line)?;
        if following >= FOLD_AFTER {
            change_locked(&path, &lock, |_| ())?;
        }
        Ok(())
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
        if recent || self.ensure_dir().is_err() || fsutil::touch(&mark).is_err() {
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
                for ext in ["json", "worker.lock", "claim", "baseline.md"] {
                    let _ = std::fs::remove_file(path.with_extension(ext));
                }
            }
            // A copy a killed worker never removed.
            let snapshot = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(SNAPSHOT_EXT));
            if stale && snapshot {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

pub fn read_state_bytes(path: &Path) -> Option<Vec<u8>> {
    fsutil::read_regular(path, MAX_STATE_BYTES).ok().flatten()
}

/// Runs `change` on the state `lock` holds, writing back only a change
/// (firings found after the state are one: they are written into it).
fn change_locked<R>(path: &Path, lock: &Lock, change: impl FnOnce(&mut SessionState) -> R) -> Result<R> {
    // One parse on the hot path: only a file that does not parse is asked
    // whether a newer release wrote it.
    let bytes = lock.read(MAX_STATE_BYTES).ok();
    let (before, firings) = match bytes.as_deref().map(|bytes| (bytes, parse_with_firings(bytes))) {
        Some((_, Some(parsed))) => parsed,
        Some((bytes, None)) => {
            crate::store::record::check_version(path, bytes)?;
            (SessionState::default(), 0)
        }
        None => (SessionState::default(), 0),
    };
    let mut state = before.clone();
    let result = change(&mut state);
    if firings > 0 || state != before {
        let text = serde_json::to_vec(&state).context("cannot encode session state")?;
        lock.rewrite(&text)?;
    }
    Ok(result)
}

/// Firings that may follow a state before one more is written into it: a
/// turn may fire guards many times with no other change.
const FOLD_AFTER: usize = 8;

/// A guard's firing, appended after the state (`note_firing`).
#[derive(serde::Serialize, serde::Deserialize)]
struct Firing {
    fired: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    asked: Option<String>,
}

/// The state in a session file: its first JSON value, with the firings
/// appended after it folded in. The file is rewritten in place and, killed
/// mid-write, may end in the old state's tail (`Lock::rewrite`),
/// where the firings end.
pub fn parse_state(bytes: &[u8]) -> Option<SessionState> {
    parse_with_firings(bytes).map(|(state, _)| state)
}

/// `parse_state`, and how many firings it folded in. An empty file is a
/// lock taken before any state was written: a fresh session.
fn parse_with_firings(bytes: &[u8]) -> Option<(SessionState, usize)> {
    if bytes.is_empty() {
        return Some((SessionState::default(), 0));
    }
    let mut values = serde_json::Deserializer::from_slice(bytes);
    let mut state: SessionState = serde::Deserialize::deserialize(&mut values).ok()?;
    let mut firings = 0;
    for firing in values.into_iter::<Firing>().map_while(Result::ok) {
        *state.input.fired.entry(firing.fired.clone()).or_default() += 1;
        if let Some(call) = firing.asked {
            state.input.asked = Some((call, firing.fired));
        }
        firings += 1;
    }
    Some((state, firings))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PreToolUse appends a firing after the state, leaving the state's
    /// bytes as they were; every read folds the firings in, the next change
    /// writes them into the state once, and what follows a torn tail is
    /// not read as a firing.
    #[test]
    fn a_firing_is_appended_after_the_state_and_folded_in_by_every_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = &SessionId::parse("abc-123").unwrap();
        let path = store.path(id, "json");
        store.update(id, |s| s.input.cwd = "/p".into()).unwrap();
        let state = std::fs::read(&path).unwrap();
        store.note_firing(id, "0000000a", Some("call-1".into()), 0).unwrap();
        store.note_firing(id, "0000000a", None, 1).unwrap();
        assert!(std::fs::read(&path).unwrap().starts_with(&state), "the state's bytes stay");
        let asked = Some(("call-1".to_string(), "0000000a".to_string()));
        let seen = store.peek(id);
        assert_eq!((seen.input.fired.get("0000000a"), &seen.input.asked), (Some(&2), &asked));
        let fired = store.update(id, |s| std::mem::take(&mut s.input.fired)).unwrap();
        assert_eq!(fired.get("0000000a"), Some(&2));
        let seen = store.peek(id);
        assert!(seen.input.fired.is_empty(), "counted once");
        assert_eq!(seen.input.asked, asked);
        let mut torn = std::fs::read(&path).unwrap();
        torn.extend_from_slice(b"ired\":\"x\"}\n{\"fired\":\"0000000b\"}\n");
        std::fs::write(&path, torn).unwrap();
        assert!(store.peek(id).input.fired.is_empty(), "{:?}", store.peek(id).input.fired);
        // A turn that fires a thousand times keeps few firings to read.
        store.update(id, |s| s.input.cwd = "/q".into()).unwrap();
        for _ in 0..1000 {
            let (_, following) = store.peek_firings(id);
            assert!(following <= FOLD_AFTER, "{following}");
            store.note_firing(id, "0000000c", None, following).unwrap();
        }
        assert_eq!(store.peek(id).input.fired.get("0000000c"), Some(&1000));
    }

    /// A session idle two weeks loses its files, at most one sweep an hour
    /// (the sweep's mark keeps the time of the last).
    #[test]
    fn the_sweep_removes_an_idle_sessions_files_at_most_once_an_hour() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        store.ensure_dir().unwrap();
        let ago = |d: Duration| std::time::SystemTime::now() - d;
        let plant = |id: &str| {
            let state = store.dir.join(format!("{id}.json"));
            std::fs::write(&state, "{}").unwrap();
            std::fs::write(store.dir.join(format!("{id}.worker.lock")), "").unwrap();
            let file = std::fs::File::options().write(true).open(&state).unwrap();
            file.set_modified(ago(STALE_AFTER + SWEEP_EVERY)).unwrap();
        };
        let left = |id: &str| store.dir.join(format!("{id}.json")).exists();
        plant("a");
        store.remove_stale();
        assert!(!left("a") && !store.dir.join("a.worker.lock").exists(), "swept");
        plant("b");
        store.remove_stale();
        assert!(left("b"), "a second sweep within the hour");
        let mark = std::fs::File::options().write(true).open(store.dir.join(".swept")).unwrap();
        mark.set_modified(ago(SWEEP_EVERY * 2)).unwrap();
        store.remove_stale();
        assert!(!left("b"), "swept an hour later");
        plant("c");
        store.remove_stale();
        assert!(left("c"), "the mark's time was set again");
    }

    #[test]
    fn a_state_rewritten_in_place_reads_back_whole_or_as_new() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = &SessionId::parse("abc-123").unwrap();
        store.update(id, |s| s.outcome.report = Some("x".repeat(500))).unwrap();
        store.update(id, |s| s.outcome.report = None).unwrap();
        assert_eq!(store.peek(id).outcome.report, None, "a shorter rewrite leaves no tail");

        // Killed between the write and the truncation: new JSON, old tail.
        let path = dir.path().join("sessions").join(format!("{id}.json"));
        let mut seven = SessionState::default();
        seven.outcome.saves = 7;
        let mut bytes = serde_json::to_vec(&seven).unwrap();
        bytes.extend_from_slice(b"\"report\":\"an old tail\"}");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(store.peek(id).outcome.saves, 7);

        std::fs::write(&path, b"{not json").unwrap();
        assert_eq!(store.peek(id), SessionState::default(), "a corrupt file is a fresh session");
        assert!(parse_state(b"{not json").is_none(), "and one doctor reports");

        // The lock taken before any state was written leaves an empty file.
        std::fs::write(&path, b"").unwrap();
        assert_eq!(parse_state(b""), Some(SessionState::default()), "an empty file is a fresh session");
        assert_eq!(store.update(id, |s| std::mem::replace(&mut s.outcome.saves, 3)).unwrap(), 0);
        assert_eq!(store.peek(id).outcome.saves, 3);
    }

    /// The file is the types under a version: every part round-trips, a
    /// file of an earlier format (no version) reads as a fresh session,
    /// and one of a newer version is left as it is.
    #[test]
    fn session_files_are_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let store = SessionStore::new(dir.path().join("sessions"));
        let id = &SessionId::parse("abc").unwrap();
        let mut full = SessionState::default();
        full.input.project_dir = "/home/dev/app".into();
        full.protocol.job = Job::Claimed { since: 10, takeovers: 1, queued: Queued::Held { until: 20 } };
        full.protocol.watch.saved_through = Some(5);
        full.outcome.status = Some(Status::new(StatusKind::Waiting, "waiting: x", 9));
        full.outcome.saves = 3;
        store.update(id, |s| *s = full.clone()).unwrap();
        assert_eq!(store.peek(id), full);
        let path = dir.path().join("sessions/abc.json");
        let written: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(written["version"], VERSION);
        assert_eq!(
            written["protocol"]["job"],
            serde_json::json!({"claimed": {"since": 10, "takeovers": 1, "queued": {"held": {"until": 20}}}})
        );

        std::fs::write(&path, br#"{"saves": 3, "save_pending": true, "cwd": "/x"}"#).unwrap();
        assert_eq!(store.peek(id), SessionState::default(), "an earlier format is a fresh session");
        store.update(id, |s| s.outcome.saves = 1).unwrap();
        assert_eq!(store.peek(id).outcome.saves, 1);

        let newer = br#"{"version": 99, "outcome": {"saves": 8}}"#;
        std::fs::write(&path, newer).unwrap();
        let err = store.update(id, |s| s.outcome.saves = 1).unwrap_err();
        assert!(format!("{err:#}").contains("newer memory-save"), "{err:#}");
        assert_eq!(std::fs::read(&path).unwrap(), newer);
    }

    #[test]
    fn plain_ids_only() {
        for bad in ["", "../x", "a/b", "a b", "-x", "--help", &"x".repeat(129)] {
            assert!(SessionId::parse(bad).is_err(), "{bad:?}");
            assert!(serde_json::from_value::<SessionId>(serde_json::json!(bad)).is_err(), "{bad:?} at the wire");
        }
        assert!(SessionId::parse("c7913528-c726-407d-a030-104c5096a70b").is_ok());
        // A copy's name must be this session's own.
        let store = SessionStore::new(PathBuf::from("/s"));
        let a = SessionId::parse("aaa").unwrap();
        assert!(store.snapshot_path(&a, "aaa.123.transcript.jsonl").is_some());
        for other in ["bbb.123.transcript.jsonl", "aaab.1.transcript.jsonl", "aaa.1.json", "../aaa.1.transcript.jsonl"]
        {
            assert!(store.snapshot_path(&a, other).is_none(), "{other}");
        }
    }
}
