//! Advisory locks on our files (`flock`), released on drop, and the
//! record of which this process holds.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::fsutil::{open_own, read_open};
use crate::sys::SAFE_OPEN;

/// An exclusive advisory lock on a file, released on drop. The file may be
/// the record it guards: an atomic write of it by its holder (`write_atomic`)
/// locks the new file before the rename and lets the old one go, so the
/// lock is always on the file at the path. A waiter that wakes holding a
/// file renamed away locks the one there now (`still_linked`).
#[must_use = "the lock is released when dropped"]
pub struct Lock {
    id: u64,
}

/// The locks this process holds, with their files: by path, since a lock
/// taken again in the same process would wait for itself (`flock` is per
/// open file), and as the one owner of each file, since an atomic write
/// of a locked file swaps it for the new one.
static HELD: std::sync::Mutex<Vec<Held>> = std::sync::Mutex::new(Vec::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

struct Held {
    id: u64,
    path: PathBuf,
    file: File,
}

fn held_locks() -> std::sync::MutexGuard<'static, Vec<Held>> {
    HELD.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

pub fn held_here(path: &Path) -> bool {
    held_locks().iter().any(|held| held.path == path)
}

/// Moves this process's lock on `path`, if it holds one, to `file`, which
/// the caller locked and renamed there: the old file's lock goes with it.
pub(super) fn move_lock(path: &Path, file: File) {
    if let Some(held) = held_locks().iter_mut().find(|held| held.path == path) {
        held.file = file;
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        held_locks().retain(|held| held.id != self.id);
    }
}

impl Lock {
    fn held(file: File, path: &Path) -> Lock {
        let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        held_locks().push(Held { id, path: path.to_path_buf(), file });
        Lock { id }
    }

    /// The locked file and its path, which the table of held locks owns.
    fn with_file<T>(&self, use_file: impl FnOnce(&File, &Path) -> Result<T>) -> Result<T> {
        let held = held_locks();
        match held.iter().find(|held| held.id == self.id) {
            Some(held) => use_file(&held.file, &held.path),
            None => bail!("a lock of this process is no longer held"),
        }
    }

    /// The locked file's text, at most `max` bytes: for a file that is its
    /// own lock, read through the lock's descriptor.
    pub fn read(&self, max: u64) -> Result<Vec<u8>> {
        self.with_file(|file, path| {
            std::io::Seek::seek(&mut &*file, std::io::SeekFrom::Start(0))?;
            read_open(file, path, max)
        })
    }

    /// Appends to the locked file: a record after the one rewritten in it.
    pub fn append(&self, contents: &[u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.with_file(|file, path| {
            let appended = file.metadata().and_then(|m| file.write_all_at(contents, m.len()));
            appended.with_context(|| format!("cannot write {}", path.display()))
        })
    }

    /// Rewrites the locked file in place, for the session state: a rename
    /// costs a journal commit, 0.2 ms of a 1 ms hook (docs/design.md §3).
    /// Killed before the truncation, the file holds the new JSON and the
    /// old one's tail; its reader takes the first JSON value only.
    pub fn rewrite(&self, contents: &[u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.with_file(|file, path| {
            let written = file.write_all_at(contents, 0).and_then(|()| file.set_len(contents.len() as u64));
            written.with_context(|| format!("cannot write {}", path.display()))
        })
    }

    /// Waits at most `limit`: a holder that hangs must not hang the hooks behind it.
    pub fn acquire(path: &Path, limit: Duration) -> Result<Lock> {
        let mut file = open_lock_file(path)?;
        let deadline = Instant::now() + limit;
        // Holders keep these locks well under a millisecond: poll soon, then
        // back off, rather than wait a fixed tick.
        let mut pause = Duration::from_micros(50);
        loop {
            match file.try_lock() {
                Ok(()) if still_linked(&file, path) => return Ok(Lock::held(file, path)),
                // A sweep unlinked the file we locked: lock the one there now.
                Ok(()) if Instant::now() < deadline => file = open_lock_file(path)?,
                Ok(()) => anyhow::bail!("{} keeps being removed while it is locked; try again", path.display()),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => anyhow::bail!(
                    "{} is still locked after {:?}; another memory-save process holds it",
                    path.display(),
                    limit
                ),
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", path.display()));
                }
            }
        }
    }

    /// `None` when another process holds it.
    pub fn try_acquire(path: &Path) -> Result<Option<Lock>> {
        // A file replaced between our open and our lock: the one there now
        // is tried, a few times (a holder that replaced it holds that one).
        for _ in 0..3 {
            let file = open_lock_file(path)?;
            match file.try_lock() {
                Ok(()) if still_linked(&file, path) => return Ok(Some(Lock::held(file, path))),
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e).with_context(|| format!("cannot lock {}", path.display()));
                }
            }
        }
        Ok(None)
    }
}

/// Whether another process holds the lock on `path` now; only looks.
pub fn is_locked(path: &Path) -> bool {
    let Ok(file) = OpenOptions::new().read(true).custom_flags(SAFE_OPEN).open(path) else {
        return false;
    };
    matches!(file.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

/// Whether the file we locked is still the one at `path` (jj's check): else
/// a sweep left us holding a lock no one else can see.
fn still_linked(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::symlink_metadata(path)) {
        (Ok(held), Ok(there)) => held.nlink() > 0 && held.ino() == there.ino() && held.dev() == there.dev(),
        _ => false,
    }
}

fn open_lock_file(path: &Path) -> Result<File> {
    open_own(path, OpenOptions::new().read(true).write(true).create(true).truncate(false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lock file a sweep removed while we held it open is not the lock:
    /// we take the file that stands at the path now.
    #[test]
    fn a_lock_on_an_unlinked_file_is_taken_again_on_the_file_there_now() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.lock");
        let opened = open_lock_file(&path).unwrap();
        assert!(still_linked(&opened, &path));
        std::fs::remove_file(&path).unwrap();
        assert!(!still_linked(&opened, &path), "unlinked");
        let _old = open_lock_file(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, b"").unwrap();
        assert!(!still_linked(&_old, &path), "another file at the path");
        let lock = Lock::acquire(&path, Duration::from_secs(1)).unwrap();
        assert!(lock.with_file(|file, _| Ok(still_linked(file, &path))).unwrap());
        assert!(is_locked(&path), "the lock is on the file others see");
        drop(lock);
        assert!(Lock::try_acquire(&path).unwrap().is_some());
    }

    /// A thread that waits for the lock on `path`, then answers what it
    /// read there and whether the file there is locked, holding the lock.
    fn waiter(path: &Path) -> std::thread::JoinHandle<(String, bool, Lock)> {
        let path = path.to_path_buf();
        std::thread::spawn(move || {
            let lock = Lock::acquire(&path, Duration::from_secs(5)).unwrap();
            (std::fs::read_to_string(&path).unwrap(), is_locked(&path), lock)
        })
    }

    /// A record that is its own lock: its holder's atomic writes of it keep
    /// the lock, on the new file, until the holder lets it go. One waiting
    /// on the old file then locks the new one and reads the last write.
    #[test]
    fn a_record_its_holder_rewrites_stays_locked_for_whoever_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("proj.json");
        let holder = Lock::acquire(&path, Duration::from_secs(1)).unwrap();
        let waiter = waiter(&path);
        std::thread::sleep(Duration::from_millis(50));
        super::super::fsutil::write_atomic(&path, b"first", false).unwrap();
        assert!(Lock::try_acquire(&path).unwrap().is_none(), "the new file is locked as the old one was");
        super::super::fsutil::write_atomic(&path, b"second", true).unwrap();
        assert!(is_locked(&path));
        assert_eq!(holder.read(100).unwrap(), b"second", "the holder reads through the new file");
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the waiter waits while the holder writes");
        drop(holder);
        let (read, locked, _lock) = waiter.join().unwrap();
        assert_eq!(read, "second");
        assert!(locked, "the waiter holds the file others see");
    }

    /// A file replaced by someone not holding its lock (a hand, a backup
    /// restored over it): one waiting on the old file locks the new one.
    #[test]
    fn a_waiter_on_a_file_replaced_by_another_hand_locks_the_one_there_now() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("installs.json");
        let holder = Lock::acquire(&path, Duration::from_secs(1)).unwrap();
        let waiter = waiter(&path);
        std::thread::sleep(Duration::from_millis(50));
        let other = dir.path().join("other");
        std::fs::write(&other, "written").unwrap();
        std::fs::rename(&other, &path).unwrap();
        let newcomer = Lock::try_acquire(&path).unwrap().expect("a file no holder wrote is free");
        drop(holder);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the waiter waits for the newcomer, on the file there now");
        drop(newcomer);
        let (read, locked, _lock) = waiter.join().unwrap();
        assert_eq!(read, "written");
        assert!(locked);
    }

    /// The ledger's lock is `saves.jsonl`: rotated under it, the file at the
    /// path is still the locked one, and the old lines are kept in `.1`.
    #[test]
    fn a_log_rotated_under_its_lock_keeps_the_lock_and_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("saves.jsonl");
        let lock = Lock::acquire(&path, Duration::from_secs(1)).unwrap();
        super::super::fsutil::append_line(&path, "first", 4);
        super::super::fsutil::append_line(&path, "second", 4);
        assert_eq!(std::fs::read_to_string(dir.path().join("saves.jsonl.1")).unwrap(), "first\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "second\n");
        assert!(Lock::try_acquire(&path).unwrap().is_none(), "still locked after the rotation");
        assert_eq!(lock.read(100).unwrap(), b"second\n", "the lock is on the file at the path");
        drop(lock);
        assert!(Lock::try_acquire(&path).unwrap().is_some());
    }

    /// A rotation that cannot replace the file (its temp name is taken by
    /// a folder) takes its link back: the two names never end as one file,
    /// read twice and never rotated again. One that cannot link (a folder
    /// at `.1`) does not rotate. Either way the line is appended and the
    /// lock stays.
    #[test]
    fn a_rotation_that_cannot_finish_leaves_one_file_locked() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("saves.jsonl");
        let old = dir.path().join("saves.jsonl.1");
        let _lock = Lock::acquire(&path, Duration::from_secs(1)).unwrap();
        std::fs::write(&path, "first\n").unwrap();
        let inode = std::fs::metadata(&path).unwrap().ino();
        let temp = dir.path().join(format!(".saves.jsonl.{}.tmp", std::process::id()));
        std::fs::create_dir_all(temp.join("taken")).unwrap();
        super::super::fsutil::append_line(&path, "second", 4);
        assert!(!old.exists(), "the link is taken back");
        std::fs::remove_dir_all(&temp).unwrap();
        std::fs::create_dir_all(old.join("taken")).unwrap();
        super::super::fsutil::append_line(&path, "third", 4);
        assert!(old.is_dir(), "nothing rotated over the folder");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first\nsecond\nthird\n");
        assert_eq!(std::fs::metadata(&path).unwrap().ino(), inode);
        assert!(Lock::try_acquire(&path).unwrap().is_none(), "still locked");
    }
}
