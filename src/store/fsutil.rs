//! Small file-system helpers shared by every writer: atomic replace and locks.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::sys::{SAFE_OPEN, is_link_refused};

/// Opens `path` for reading when it is a regular file; `None` when missing.
/// Anything else is an error, with no check-then-open race: the open cannot
/// block or follow a link, and `fstat` looks at what was opened.
pub fn open_regular(path: &Path) -> Result<Option<File>> {
    open_checked(path, SAFE_OPEN)
}

/// `path` opened with `flags` (never blocking), when it is a regular file.
fn open_checked(path: &Path, flags: i32) -> Result<Option<File>> {
    let file = match OpenOptions::new().read(true).custom_flags(flags).open(path) {
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

/// `read_regular` for a file of the user's that may be a link (a dotfiles
/// manager's settings.json): followed, but a FIFO or device in its place
/// is still refused, never waited on.
pub fn read_regular_followed(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let Some(file) = open_checked(path, libc::O_NONBLOCK | libc::O_CLOEXEC)? else {
        return Ok(None);
    };
    read_open(&file, path, max).map(Some)
}

/// The last `max` bytes of a file of lines, from the first line that starts
/// in them; `None` when missing or not a regular file. A log past its
/// bound still reads (a rotation that could not run must not hide it).
pub fn read_tail(path: &Path, max: u64) -> Option<Vec<u8>> {
    use std::io::Seek;
    let mut file = open_regular(path).ok()??;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(max);
    file.seek(std::io::SeekFrom::Start(start)).ok()?;
    let mut bytes = read_open(&file, path, max).ok()?;
    if start > 0 {
        let first = bytes.iter().position(|&b| b == b'\n').map_or(bytes.len(), |at| at + 1);
        bytes.drain(..first);
    }
    Some(bytes)
}

/// At most `max` bytes of an open file, from where it stands.
pub(super) fn read_open(file: &File, path: &Path, max: u64) -> Result<Vec<u8>> {
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
    let kind = meta.file_type();
    if !kind.is_file() {
        use std::os::unix::fs::FileTypeExt;
        let what = match () {
            _ if kind.is_dir() => "a folder",
            _ if kind.is_fifo() => "a FIFO",
            _ if kind.is_socket() => "a socket",
            _ => "a device",
        };
        bail!("{} is not a regular file but {what}; memory-save does not open it: move it away", path.display());
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
        // A file this process holds locked stays locked as the new one.
        let locked = super::lock::held_here(path);
        if locked {
            file.file().try_lock().with_context(|| format!("cannot lock {}", tmp.display()))?;
        }
        fs_err::rename(&tmp, path)?;
        if locked {
            super::lock::move_lock(path, file.into_parts().0);
        }
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
    let open =
        || OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).custom_flags(SAFE_OPEN).open(path);
    match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            open()
        }
        other => other,
    }
}

/// Removes a file; one already gone is removed as well.
pub fn remove_if_there(path: &Path) -> Result<()> {
    match fs_err::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
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

/// Opens (or creates, 0600) a file of ours: never a symlink, FIFO or device.
pub(super) fn open_own(path: &Path, options: &mut OpenOptions) -> Result<File> {
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

/// Where `append_line` keeps the lines before the last rotation.
pub fn rotated(path: &Path) -> PathBuf {
    let mut old = path.as_os_str().to_os_string();
    old.push(".1");
    old.into()
}

/// Appends one line, rotating to `<name>.1` past `max_bytes`. Best effort: a
/// log that cannot be written must not fail what it logs.
pub fn append_line(path: &Path, line: &str, max_bytes: u64) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.len() > max_bytes) {
        let old = rotated(path);
        // Linked, then replaced by an empty file: the name never goes
        // missing, so a file that is its own lock (`saves.jsonl`) keeps it
        // (`write_atomic`). A crash in between leaves one file under both
        // names, read twice, which over-counts; a replace that fails takes
        // the link back. Without hard links, no rotation: readers of a
        // large file read its end (`read_tail`).
        let _ = std::fs::remove_file(&old);
        if std::fs::hard_link(path, &old).is_ok() && write_atomic(path, b"", false).is_err() {
            let _ = std::fs::remove_file(&old);
        }
    }
    if let Ok(mut file) = open_own(path, OpenOptions::new().create(true).append(true)) {
        let _ = writeln!(file, "{line}");
    }
}
