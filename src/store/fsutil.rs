//! Small file-system helpers shared by every writer: atomic replace and locks.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::sys::{SAFE_OPEN, is_link_refused};

/// Opens `path` for reading when it is a regular file; `None` when missing.
/// Anything else is an error, with no check-then-open race: the open cannot
/// block or follow a link, and `fstat` looks at what was opened.
pub fn open_regular(path: &Path) -> Result<Option<File>> {
    let file = match OpenOptions::new().read(true).custom_flags(SAFE_OPEN).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if is_link_refused(&e) => {
            bail!("{} is a symlink; memory-save reads only real files: replace it with a file", path.display())
        }
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    check_regular(&file, path)?;
    Ok(Some(file))
}

/// `open_regular`, then at most `max` bytes: a larger file is an error.
pub fn read_regular(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let Some(file) = open_regular(path)? else {
        return Ok(None);
    };
    read_open(&file, path, max).map(Some)
}

/// At most `max` bytes of an open file, from where it stands.
fn read_open(file: &File, path: &Path, max: u64) -> Result<Vec<u8>> {
    // Sized up front: one read for a 49 KB MEMORY.md, where a growing Vec took a dozen.
    let len = file.metadata().map_or(0, |m| m.len()).min(max);
    let mut bytes = Vec::with_capacity(len as usize + 1);
    file.take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > max {
        bail!("{} is larger than {max} bytes; memory-save does not read it", path.display());
    }
    Ok(bytes)
}

fn check_regular(file: &File, path: &Path) -> Result<()> {
    let meta = file.metadata().with_context(|| format!("cannot read {}", path.display()))?;
    if !meta.file_type().is_file() {
        bail!("{} is not a regular file (a FIFO, socket or device?); memory-save does not open it", path.display());
    }
    Ok(())
}

/// Replaces `path` via a temp file and rename, so a reader sees the old file
/// or the new one. `durable` (user files) fsyncs first; state files skip it:
/// losing the last flag flip on power loss is harmless, and hooks are hot.
pub fn write_atomic(path: &Path, contents: &[u8], durable: bool) -> Result<()> {
    write_atomic_inner(path, contents, durable, None)
}

/// `write_atomic`, durable, keeping a user's file's mode (0644 must not come back 0600).
pub fn write_atomic_keeping_mode(path: &Path, contents: &[u8], mode: u32) -> Result<()> {
    write_atomic_inner(path, contents, true, Some(mode))
}

fn write_atomic_inner(path: &Path, contents: &[u8], durable: bool, mode: Option<u32>) -> Result<()> {
    let dir = path.parent().with_context(|| format!("{} has no parent folder", path.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| -> Result<()> {
        #[cfg(debug_assertions)]
        fault::read_only(&name).with_context(|| format!("cannot create {}", tmp.display()))?;
        let file = create_new_private(&tmp).with_context(|| format!("cannot create {}", tmp.display()))?;
        // fs-err names the file in every error from here on.
        let mut file = fs_err::File::from_parts(file, &tmp);
        if let Some(mode) = mode {
            file.set_permissions(std::fs::Permissions::from_mode(mode & 0o7777))?;
        }
        #[cfg(debug_assertions)]
        // Worded as fs-err words a real write error.
        fault::inject(&name, &mut file, contents)
            .with_context(|| format!("failed to write to file `{}`", tmp.display()))?;
        file.write_all(contents)?;
        if durable {
            file.sync_all()?;
        }
        fs_err::rename(&tmp, path)?;
        #[cfg(debug_assertions)]
        fault::after_rename(&name);
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    } else if durable {
        // The rename lives in the folder: flush it so the new name survives a crash.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    result
}

/// A new 0600 file, `O_EXCL` and `O_NOFOLLOW`: anything planted at the name
/// is removed, never written through. Every caller holds the lock that makes
/// a file of that name a stale one of ours.
pub fn create_new_private(path: &Path) -> std::io::Result<File> {
    let open = || OpenOptions::new().write(true).create_new(true).mode(0o600).custom_flags(SAFE_OPEN).open(path);
    match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            open()
        }
        other => other,
    }
}

/// Creates a mark of ours, or sets its time to now.
pub fn touch(path: &Path) -> Result<()> {
    let file = open_own(path, OpenOptions::new().write(true).create(true).truncate(false))?;
    file.set_modified(std::time::SystemTime::now()).with_context(|| format!("cannot touch {}", path.display()))
}

/// Removes the temp files (`.<name>.<pid>.tmp`) a killed `write_atomic` left
/// for the files `of` names. Only call holding the lock every writer of those
/// files holds, so no such temp file belongs to a live write.
pub fn remove_stale_temps(dir: &Path, of: impl Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let stale = name
            .to_str()
            .and_then(|n| n.strip_prefix('.'))
            .and_then(|n| n.strip_suffix(".tmp"))
            .and_then(|n| n.rsplit_once('.'))
            .is_some_and(|(file, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) && of(file));
        if stale {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Creates `dir` (and every missing parent) with mode 0700. A symlink in its
/// place is refused, so nothing of ours is written through it.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => {
            bail!("{} is a symlink; memory-save keeps its files only in a real folder: remove the link", dir.display())
        }
        Ok(meta) if meta.is_dir() => check_private_dir(dir, &meta),
        _ => {
            // std's DirBuilder: every missing parent is created 0700 too,
            // which fs-err's create_dir_all cannot ask for.
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .with_context(|| format!("cannot create folder {}", dir.display()))?;
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
            Ok(())
        }
    }
}

/// One owned by someone else is refused (they could swap its files under
/// us); one open to others is closed to 0700.
fn check_private_dir(dir: &Path, meta: &std::fs::Metadata) -> Result<()> {
    let me = crate::sys::effective_uid();
    if meta.uid() != me {
        bail!(
            "{} belongs to user id {}, not to you ({me}); memory-save keeps its files only in a folder of yours: remove it or move MEMORY_SAVE_HOME",
            dir.display(),
            meta.uid()
        );
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .with_context(|| format!("{} is open to other users and cannot be closed (chmod 700 it)", dir.display()))?;
    }
    Ok(())
}

/// Test-only fault injection (debug builds only): `MEMORY_SAVE_FAULT_WRITE`
/// fails a write halfway as on a full disk; `MEMORY_SAVE_FAULT_KILL`
/// SIGKILLs halfway or after the rename, moments a random kill rarely hits.
#[cfg(debug_assertions)]
mod fault {
    use std::io::Write;

    pub const FAULT_ENV: &str = "MEMORY_SAVE_FAULT_WRITE";
    pub const KILL_ENV: &str = "MEMORY_SAVE_FAULT_KILL";
    pub const READ_ONLY_ENV: &str = "MEMORY_SAVE_FAULT_READ_ONLY";

    /// With `MEMORY_SAVE_FAULT_READ_ONLY=<file name>`, creating that file's
    /// temp copy fails as in a folder on a read-only mount (root ignores
    /// permission bits, so chmod cannot stand in for one).
    pub fn read_only(name: &str) -> std::io::Result<()> {
        if crate::env::fault(READ_ONLY_ENV).is_some_and(|v| v == name) {
            return Err(crate::sys::read_only());
        }
        Ok(())
    }

    pub fn inject(name: &str, file: &mut fs_err::File, contents: &[u8]) -> std::io::Result<()> {
        if crate::env::fault(FAULT_ENV).is_some_and(|v| v == name) {
            file.write_all(&contents[..contents.len() / 2])?;
            return Err(crate::sys::disk_full());
        }
        if kill_wanted(name, "half") {
            file.write_all(&contents[..contents.len() / 2])?;
            let _ = file.sync_all();
            crate::sys::kill_self();
        }
        Ok(())
    }

    pub fn after_rename(name: &str) {
        if kill_wanted(name, "renamed") {
            crate::sys::kill_self();
        }
    }

    fn kill_wanted(name: &str, stage: &str) -> bool {
        crate::env::fault(KILL_ENV).is_some_and(|v| v == format!("{name}:{stage}"))
    }
}

/// An exclusive advisory lock on a file, released on drop. The file may be
/// the record it guards when the holder's one write of it (in place, or a
/// rename over it) is its last step: a waiter that wakes holding a file
/// renamed away locks the one there now (`still_linked`), and a newcomer
/// that locks the new one reads the finished write.
pub struct Lock {
    file: File,
    path: PathBuf,
}

/// The locks this process holds, by path: a lock taken again in the same
/// process would wait for itself (`flock` is per open file).
static HELD: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

pub fn held_here(path: &Path) -> bool {
    HELD.lock().is_ok_and(|held| held.iter().any(|p| p == path))
}

impl Drop for Lock {
    fn drop(&mut self) {
        if let Ok(mut held) = HELD.lock()
            && let Some(at) = held.iter().position(|p| *p == self.path)
        {
            held.remove(at);
        }
    }
}

impl Lock {
    fn held(file: File, path: &Path) -> Lock {
        if let Ok(mut held) = HELD.lock() {
            held.push(path.to_path_buf());
        }
        Lock { file, path: path.to_path_buf() }
    }

    /// The locked file's text, at most `max` bytes: for a file that is its
    /// own lock, read through the lock's descriptor.
    pub fn read(&self, max: u64) -> Result<Vec<u8>> {
        std::io::Seek::seek(&mut &self.file, std::io::SeekFrom::Start(0))?;
        read_open(&self.file, &self.path, max)
    }

    /// Appends to the locked file: a record after the one rewritten in it.
    pub fn append(&self, contents: &[u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let appended = self.file.metadata().and_then(|m| self.file.write_all_at(contents, m.len()));
        appended.with_context(|| format!("cannot write {}", self.path.display()))
    }

    /// Rewrites the locked file in place, for the session state: a rename
    /// costs a journal commit, 0.2 ms of a 1 ms hook (docs/design.md §3).
    /// Killed before the truncation, the file holds the new JSON and the
    /// old one's tail; its reader takes the first JSON value only.
    pub fn rewrite(&self, contents: &[u8]) -> Result<()> {
        use std::os::unix::fs::FileExt;
        let written = self.file.write_all_at(contents, 0).and_then(|()| self.file.set_len(contents.len() as u64));
        written.with_context(|| format!("cannot write {}", self.path.display()))
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
        // A file replaced between our open and our lock was the last step
        // of a holder that is done: the one there now is tried, a few times.
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

/// Opens (or creates, 0600) a file of ours: never a symlink, FIFO or device.
fn open_own(path: &Path, options: &mut OpenOptions) -> Result<File> {
    let file = match options.mode(0o600).custom_flags(SAFE_OPEN).open(path) {
        Ok(file) => file,
        Err(e) if is_link_refused(&e) => {
            bail!("{} is a symlink; memory-save does not follow links in its state folder: remove it", path.display())
        }
        Err(e) => return Err(e).with_context(|| format!("cannot open {}", path.display())),
    };
    check_regular(&file, path)?;
    Ok(file)
}

/// Appends one line, rotating to `<name>.1` past `max_bytes`. Best effort: a
/// log that cannot be written must not fail what it logs.
pub fn append_line(path: &Path, line: &str, max_bytes: u64) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.len() > max_bytes) {
        let mut old = path.as_os_str().to_os_string();
        old.push(".1");
        let _ = std::fs::rename(path, old);
    }
    if let Ok(mut file) = open_own(path, OpenOptions::new().create(true).append(true)) {
        let _ = writeln!(file, "{line}");
    }
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
        assert!(still_linked(&lock.file, &path));
        assert!(is_locked(&path), "the lock is on the file others see");
        drop(lock);
        assert!(Lock::try_acquire(&path).unwrap().is_some());
    }

    /// A record that is its own lock: its holder's last step renames the
    /// new record over it. One waiting on the old file then locks the new
    /// one, after any newcomer that locked it first, and reads the write.
    #[test]
    fn a_record_renamed_over_while_locked_is_locked_again_by_whoever_waited() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("installs.json");
        let holder = Lock::acquire(&path, Duration::from_secs(1)).unwrap();
        assert!(Lock::try_acquire(&path).unwrap().is_none(), "held");
        let waiter = std::thread::spawn({
            let path = path.clone();
            move || {
                let lock = Lock::acquire(&path, Duration::from_secs(5)).unwrap();
                (std::fs::read_to_string(&path).unwrap(), is_locked(&path), lock)
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        write_atomic(&path, b"written", false).unwrap();
        let newcomer = Lock::try_acquire(&path).unwrap().expect("the new record is free once written");
        std::thread::sleep(Duration::from_millis(50));
        drop(holder);
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the waiter waits for the newcomer, on the record there now");
        drop(newcomer);
        let (read, locked, _lock) = waiter.join().unwrap();
        assert_eq!(read, "written");
        assert!(locked, "the waiter holds the file others see");
    }
}
