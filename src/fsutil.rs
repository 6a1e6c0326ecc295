//! Small file-system helpers shared by every writer: atomic replace and locks.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

/// Replaces `path` with `contents` so that a reader sees the old file or the
/// new one, never a mix: a temp file in the same folder, then rename. With
/// `durable` the data is fsynced before the rename (user files); state files
/// skip it, because losing the last flag flip on power loss is harmless and the
/// hot paths must stay fast.
pub fn write_atomic(path: &Path, contents: &[u8], durable: bool) -> Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{} has no parent folder", path.display()))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| -> Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .with_context(|| format!("cannot create {}", tmp.display()))?;
        file.write_all(contents)
            .with_context(|| format!("cannot write {}", tmp.display()))?;
        if durable {
            file.sync_all()
                .with_context(|| format!("cannot flush {} to disk", tmp.display()))?;
        }
        std::fs::rename(&tmp, path)
            .with_context(|| format!("cannot move {} over {}", tmp.display(), path.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    } else if durable {
        // The rename itself lives in the folder; flush it too so the new name
        // survives a crash.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
    }
    result
}

/// Creates `dir` (and parents) private to the user.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    if !dir.is_dir() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create folder {}", dir.display()))?;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// An exclusive advisory lock on a separate `.lock` file, released on drop.
/// Never lock the file that gets renamed over: the rename would orphan the lock.
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Waits at most `limit`: every wait has a bound, and a holder that hangs
    /// must not hang the hooks behind it.
    pub fn acquire(path: &Path, limit: Duration) -> Result<Lock> {
        let file = open_lock_file(path)?;
        let deadline = Instant::now() + limit;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
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
        let file = open_lock_file(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(Lock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock {}", path.display()))
            }
        }
    }
}

fn open_lock_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot open lock file {}", path.display()))
}
