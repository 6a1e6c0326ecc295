//! A project's memory folder: MEMORY.md, its topic files, the backup of the
//! last repair and the last unreadable reply. All I/O on user files is here.

use std::path::{Path, PathBuf};
use std::time::Duration;

use std::os::unix::fs::OpenOptionsExt;

use anyhow::{Context, Result, bail};

use crate::memory::apply::check_topic_name;
use crate::memory::reply::TopicAppend;
use crate::store::paths::Roots;
use crate::store::{fsutil, lock::Lock};

pub const MEMORY_FILE: &str = "MEMORY.md";
/// A team memory's key starts so (`Folder::key`).
const TEAM_KEY: &str = "team/";
pub const BACKUP_FILE: &str = "MEMORY.pre-migration.md";
pub const FAILED_REPLY_FILE: &str = "memory-save.failed-reply.txt";
/// The kept failed reply is cut to this many characters.
const MAX_FAILED_REPLY_CHARS: usize = 64 * 1024;
/// Readers and writers of one project's files take turns for at most this long.
const LOCK_WAIT: Duration = Duration::from_secs(10);

pub struct Folder {
    pub project: String,
    pub dir: PathBuf,
    /// The folder's record in the state folder (`folder_record`), which is
    /// also the lock every writer of the folder's files holds.
    record_path: PathBuf,
    /// The repository this folder belongs to, recorded in it on the first
    /// write (see `claim`); `None` for a folder named by hand in a test.
    identity: Option<crate::store::owner::Record>,
    /// A team memory lives in a working tree, which can ship any file
    /// (`.history/` too): its history is kept in our state folder instead.
    team: bool,
}

impl Folder {
    pub fn new(roots: &Roots, project: &str) -> Folder {
        Folder {
            project: project.to_string(),
            dir: roots.project_dir(project),
            record_path: roots.projects_state_dir().join(format!("{project}.json")),
            team: false,
            identity: None,
        }
    }

    /// A team's memory in its repository's working tree: no identity record
    /// (the repository says whose it is), and a lock per worktree.
    pub fn team(roots: &Roots, project: &str, dir: &Path) -> Folder {
        let tag = crate::memory::stable_id(&dir.display().to_string());
        let record_path = roots.projects_state_dir().join(format!("{project}.team-{tag}.json"));
        Folder { dir: dir.to_path_buf(), record_path, team: true, ..Folder::new(roots, project) }
    }

    /// Beside MEMORY.md for a personal memory (sync never carries it), in
    /// the state folder for a team memory, never inside a working tree.
    pub fn history_dir(&self) -> PathBuf {
        if self.team {
            self.record_path.with_extension("history")
        } else {
            self.dir.join(crate::store::history::HISTORY_DIR)
        }
    }

    pub fn with_identity(roots: &Roots, project: &str, identity: &str) -> Folder {
        Folder::with_record(roots, project, crate::store::owner::Record::new(identity))
    }

    /// A folder that writes `record` as its owner on its first write.
    pub fn with_record(roots: &Roots, project: &str, record: crate::store::owner::Record) -> Folder {
        Folder { identity: Some(record), ..Folder::new(roots, project) }
    }

    /// Records the folder's repository in it unless one is: the first keeps
    /// it. `O_EXCL` makes two claims race-free.
    pub fn claim(&self) -> Result<()> {
        use std::io::Write;
        let Some(identity) = &self.identity else { return Ok(()) };
        let path = self.dir.join(crate::store::owner::IDENTITY_FILE);
        // Only a real folder: never record into a folder a link points at.
        let real_dir = std::fs::symlink_metadata(&self.dir).is_ok_and(|m| m.is_dir());
        if !real_dir || std::fs::symlink_metadata(&path).is_ok() {
            return Ok(());
        }
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .custom_flags(crate::sys::NO_FOLLOW)
            .mode(0o600)
            .open(&path)
            .and_then(|mut file| file.write_all(identity.text().as_bytes()));
        match written {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                Err(e).with_context(|| format!("cannot record the repository of {}", self.dir.display()))
            }
            // A path proves whose the folder is only on the machine that
            // recorded it (`Record::whose`): this one. Unrecorded (a newer
            // memory-save's record), the next save's `settle` tries again.
            Ok(()) if identity.identity.starts_with(crate::store::owner::PATH) => {
                if let Err(e) = crate::store::owner::add_here(self, std::slice::from_ref(&identity.identity)) {
                    crate::store::log::error(&format!("cannot record this path for {}: {e:#}", self.dir.display()));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Whether `text` is the MEMORY.md last found clean: the load's scan
    /// compiles the secret rules, five times a hook's own cost, so it runs
    /// only on a text nobody checked.
    pub fn is_checked(&self, text: &str) -> bool {
        let mark = crate::store::folder_record::read(self).checked;
        checked_mark(text).is_some_and(|wanted| mark.as_deref() == Some(wanted.as_str()))
    }

    /// `memory` as the load gate lets it through; a text found clean is
    /// remembered by hash, when `remember`, so the next load skips the scan.
    pub fn gated(&self, memory: &str, remember: bool) -> crate::memory::gate::Loaded {
        if self.is_checked(memory) {
            return crate::memory::gate::Loaded { text: memory.to_string(), withheld: Vec::new() };
        }
        let gated = crate::memory::gate::load(memory);
        if gated.withheld.is_empty() && remember {
            self.mark_checked(memory);
        }
        gated
    }

    pub fn mark_checked(&self, text: &str) {
        let Some(mark) = checked_mark(text) else { return };
        if let Err(e) = crate::store::folder_record::update(self, false, |r| r.checked = Some(mark)) {
            crate::store::log::error(&format!("cannot mark {} checked: {e:#}", self.memory_path().display()));
        }
    }

    /// A session's project: the memory's name, or a team memory's
    /// `team/<name>.team-<tag>`, one per working tree, since each holds its
    /// own copy; a name never holds `/`, so no folder's name is a team's key.
    pub fn key(&self) -> String {
        let stem = self.record_path.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
        if self.team { format!("{TEAM_KEY}{stem}") } else { stem }
    }

    /// The folder whose record and lock a key (`key`) names.
    pub fn of_key(roots: &Roots, key: &str) -> Folder {
        match key.strip_prefix(TEAM_KEY) {
            Some(stem) => Folder {
                record_path: roots.projects_state_dir().join(format!("{stem}.json")),
                team: true,
                ..Folder::new(roots, stem.rsplit_once(".team-").map_or(stem, |(name, _)| name))
            },
            None => Folder::new(roots, key),
        }
    }

    pub fn record_path(&self) -> &Path {
        &self.record_path
    }

    /// The state folder the folder's record is in.
    pub fn state_root(&self) -> PathBuf {
        self.record_path.parent().and_then(Path::parent).map(Path::to_path_buf).unwrap_or_default()
    }

    pub fn memory_path(&self) -> PathBuf {
        self.dir.join(MEMORY_FILE)
    }

    /// Holds every other memory-save process of this project off the files.
    pub fn lock(&self) -> Result<Lock> {
        self.lock_within(LOCK_WAIT)
    }

    pub fn lock_within(&self, limit: Duration) -> Result<Lock> {
        if let Some(parent) = self.record_path.parent() {
            fsutil::create_private_dir(parent)?;
        }
        Lock::acquire(&self.record_path, limit)
    }

    /// MEMORY.md, `None` when there is none. A folder planted as a link
    /// would hand another folder's file to the fork, so it is refused.
    pub fn read_memory(&self) -> Result<Option<String>> {
        if std::fs::symlink_metadata(&self.dir).is_ok_and(|m| m.file_type().is_symlink()) {
            bail!("{} is a symlink; memory-save reads only from a real folder", self.dir.display());
        }
        read_if_exists(&self.memory_path())
    }

    /// The topic files present, by name.
    pub fn topic_files(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            // A FIFO or link planted under a topic name is not a topic file.
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| check_topic_name(n).is_ok())
            .collect();
        names.sort();
        names
    }

    /// Appends each topic text to its file; topic files are written before
    /// MEMORY.md, so a listed topic file always exists.
    pub fn append_topics(&self, topics: &[TopicAppend]) -> Result<()> {
        for topic in topics {
            check_topic_name(&topic.file).map_err(anyhow::Error::msg)?;
            let mut text = read_if_exists(&self.dir.join(&topic.file))?.unwrap_or_default();
            if !text.is_empty() {
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push('\n');
            }
            text.push_str(topic.append.trim_end_matches('\n'));
            text.push('\n');
            self.write_file(&topic.file, &text)?;
        }
        Ok(())
    }

    pub fn write_memory(&self, text: &str) -> Result<()> {
        self.write_file(MEMORY_FILE, text)
    }

    /// Keeps an unreadable reply as evidence, any line holding a secret redacted.
    pub fn keep_failed_reply(&self, text: &str) -> Result<()> {
        use crate::memory::secrets::{find_secret, redact};
        // Evidence, not an archive: the head of a huge reply says enough.
        let cut = crate::memory::text::shorten(text, MAX_FAILED_REPLY_CHARS);
        let text = cut.as_str();
        if find_secret(text).is_none() {
            return self.write_file(FAILED_REPLY_FILE, text);
        }
        let mut kept: String = text.lines().map(|line| redact(line) + "\n").collect();
        // A secret spread over lines (a key block) is caught only whole.
        if let Some(kind) = find_secret(&kept) {
            kept = format!("[not shown: the reply looks like it holds {kind}]\n");
        }
        self.write_file(FAILED_REPLY_FILE, &kept)
    }

    /// Atomic and durable. A file planted as a symlink is not followed: the
    /// rename replaces the link itself.
    pub fn write_file(&self, name: &str, text: &str) -> Result<()> {
        fsutil::create_private_dir(&self.dir)?;
        let dir_meta =
            std::fs::symlink_metadata(&self.dir).with_context(|| format!("cannot read {}", self.dir.display()))?;
        if dir_meta.file_type().is_symlink() {
            bail!("{} is a symlink; memory-save writes only into a real folder", self.dir.display());
        }
        self.claim()?;
        fsutil::write_atomic(&self.dir.join(name), text.as_bytes(), true)
    }
}

/// Memory files, history entries and notes are read up to this size: far
/// past any cap, and a bound on what a planted file can make us load.
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Reads a file that may not exist. A symlink, FIFO or device is refused
/// (`fsutil::open_regular`): a planted one neither leaks a file nor blocks.
pub fn read_if_exists(path: &Path) -> Result<Option<String>> {
    Ok(fsutil::read_regular(path, MAX_FILE_BYTES)?.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
}

/// What marks a text as checked: its SHA-1 (with collision detection)
/// under the gate's version. A sync remote knows the texts found clean, so
/// a computable hash such as FNV would let a forged text skip the gate
/// (docs/design.md §5); a detected collision attack marks nothing.
pub fn checked_mark(text: &str) -> Option<String> {
    // A load asks twice for the same text, and the hash is most of what a
    // load costs: the last answer is kept, by the whole text.
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, Option<String>)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| {
        if let Some((seen, mark)) = last.as_ref()
            && seen == text
        {
            return mark.clone();
        }
        let mark = sha1dc::digest(text.as_bytes()).ok().map(|d| format!("{}:{d:x}", crate::memory::gate::VERSION));
        *last = Some((text.to_string(), mark.clone()));
        mark
    })
}
