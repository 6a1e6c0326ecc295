//! A local history of every change to a project's memory files, one JSON
//! entry per change in `.history/`, so nothing the fork removes is gone for
//! good. An undo is itself recorded, so a second undo redoes.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::memory::apply::check_topic_name;
use crate::store::folder::{Folder, MEMORY_FILE, read_if_exists};
use crate::store::fsutil;

mod undo;
pub use undo::{apply_undo, plan_undo, record_made};

pub const HISTORY_DIR: &str = ".history";
/// Entries kept per project; older ones are dropped.
pub const KEEP: usize = 1000;

#[derive(Debug, Serialize, Deserialize)]
pub struct Entry {
    /// Unix time.
    pub at: i64,
    /// The report line of the change.
    pub message: String,
    /// How to get each changed file back to where it was.
    pub files: BTreeMap<String, Before>,
    /// Who made the change (absent in entries of earlier versions).
    #[serde(default)]
    pub origin: Origin,
    /// The lines the change put into MEMORY.md (`history --line`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// Each changed file as the change left it, to tell a later hand edit
    /// (absent in entries of earlier versions).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub after: BTreeMap<String, After>,
}

impl Entry {
    /// An entry made now; `after` is filled in when it is sealed.
    fn new(message: &str, files: BTreeMap<String, Before>, origin: Origin, added: Vec<String>) -> Entry {
        Entry { at: crate::env::now_unix(), message: message.to_string(), files, origin, added, after: BTreeMap::new() }
    }
}

/// A file as a change left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum After {
    Text(String),
    Absent,
    /// A topic file grew to this length by this text (see `Before::Length`).
    Appended {
        length: u64,
        text: String,
    },
}

impl After {
    /// Whether `now` (`None`: missing) is still what the change left.
    pub fn holds(&self, now: Option<&str>) -> bool {
        match (self, now) {
            (After::Text(text), Some(now)) => text == now,
            (After::Absent, None) => true,
            (After::Appended { length, text }, Some(now)) => {
                now.len() as u64 == *length && now.ends_with(text.as_str())
            }
            _ => false,
        }
    }
}

/// Where a change came from (a `prompt_id`, never the prompt's text); all
/// absent for a repair, an undo or a hand command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Origin {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt_id: Option<String>,
    /// What the save counts against a budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The CLI's own figure, where it differs from `cost_usd`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cli_cost_usd: Option<f64>,
    /// A person's command rather than a save (`review --approve`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// The lines of `after` that `before` does not hold (as many times).
pub fn added_lines(before: &str, after: &str) -> Vec<String> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for line in before.lines() {
        *counts.entry(line).or_default() += 1;
    }
    after
        .lines()
        .filter(|line| match counts.get_mut(line) {
            Some(n) if *n > 0 => {
                *n -= 1;
                false
            }
            _ => !line.trim().is_empty(),
        })
        .map(str::to_string)
        .collect()
}

/// A file as it was before a change, in as few bytes as undoing it needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Before {
    /// The whole text (MEMORY.md, which its cap keeps small).
    Text(String),
    /// The file did not exist.
    Absent,
    /// It was this many bytes long and the change appended to it: a whole
    /// topic file at every save would grow the history with its square.
    Length(u64),
    /// The change cut this tail off (an undone append).
    Tail(String),
}

/// What a change is about to do to a file.
pub enum Change<'a> {
    Rewrite(&'a str),
    Append(&'a str),
}

fn entry_path(folder: &Folder, number: u64) -> PathBuf {
    folder.history_dir().join(format!("{number:08}.json"))
}

/// A recorded entry, so a change that fails halfway can be put back.
#[must_use = "a recorded change must be sealed once written, or rolled back"]
pub struct Recorded {
    number: u64,
    entry: Entry,
}

impl Recorded {
    /// Records how the change left each of its files, once it is written.
    pub fn seal(mut self, folder: &Folder) -> Result<()> {
        self.entry.after = state_after(folder, &self.entry.files)?;
        fsutil::write_atomic(&entry_path(folder, self.number), serde_json::to_string(&self.entry)?.as_bytes(), true)
    }

    /// Puts the files back and drops the entry: the change did not happen.
    pub fn roll_back(self, folder: &Folder) -> Result<()> {
        put_back(folder, self.number, &self.entry)?;
        let _ = std::fs::remove_file(entry_path(folder, self.number));
        Ok(())
    }
}

/// Records the files a change is about to write, as they are now. Call with
/// the project lock held.
pub fn record(
    folder: &Folder,
    message: &str,
    changes: &[Change],
    origin: &Origin,
    added: Vec<String>,
) -> Result<Recorded> {
    let mut files = BTreeMap::new();
    for change in changes {
        let (name, before) = match *change {
            Change::Rewrite(name) => {
                (name, read_if_exists(&folder.dir.join(name))?.map_or(Before::Absent, Before::Text))
            }
            Change::Append(name) => {
                let len = read_if_exists(&folder.dir.join(name))?.map(|t| t.len() as u64);
                (name, len.map_or(Before::Absent, Before::Length))
            }
        };
        files.insert(name.to_string(), before);
    }
    write_entry(folder, Entry::new(message, files, origin.clone(), added))
}

fn state_after(folder: &Folder, files: &BTreeMap<String, Before>) -> Result<BTreeMap<String, After>> {
    let mut after = BTreeMap::new();
    for (name, before) in files {
        let now = read_if_exists(&folder.dir.join(name))?;
        let state = match (before, now) {
            (_, None) => After::Absent,
            (Before::Length(len), Some(now)) if name != MEMORY_FILE => After::Appended {
                length: now.len() as u64,
                text: now.get(*len as usize..).unwrap_or_default().to_string(),
            },
            (Before::Absent, Some(now)) if name != MEMORY_FILE => {
                After::Appended { length: now.len() as u64, text: now }
            }
            (_, Some(now)) => After::Text(now),
        };
        after.insert(name.clone(), state);
    }
    Ok(after)
}

fn write_entry(folder: &Folder, entry: Entry) -> Result<Recorded> {
    let dir = folder.history_dir();
    fsutil::create_private_dir(&folder.dir)?;
    fsutil::create_private_dir(&dir)?;
    let numbers = numbers(folder);
    let next = numbers.last().map_or(1, |n| n.saturating_add(1));
    // The lock makes any temp file here a killed writer's.
    fsutil::remove_stale_temps(&dir, |name| name.ends_with(".json"));
    fsutil::write_atomic(&entry_path(folder, next), serde_json::to_string(&entry)?.as_bytes(), true)?;
    for old in numbers.iter().take((numbers.len() + 1).saturating_sub(KEEP)) {
        let _ = std::fs::remove_file(entry_path(folder, *old));
    }
    Ok(Recorded { number: next, entry })
}

fn numbers(folder: &Folder) -> Vec<u64> {
    let Ok(entries) = std::fs::read_dir(folder.history_dir()) else {
        return Vec::new();
    };
    // Only names we write count (eight digits): a forged
    // `18446744073709551615.json` would wrap the next number to 0.
    let ours = |stem: &str| stem.len() == 8 && stem.bytes().all(|b| b.is_ascii_digit());
    let mut numbers: Vec<u64> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").filter(|s| ours(s))?.parse().ok())
        .collect();
    numbers.sort_unstable();
    numbers
}

fn read(folder: &Folder, number: u64) -> Result<Entry> {
    let path = entry_path(folder, number);
    let text = read_if_exists(&path)?.with_context(|| format!("cannot read {}: it is gone", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{} is not a history entry; remove it", path.display()))
}

/// Newest first.
pub fn list(folder: &Folder) -> Result<Vec<(u64, Entry)>> {
    numbers(folder).into_iter().rev().map(|n| read(folder, n).map(|e| (n, e))).collect()
}

/// The entry is a file on disk: its names must still be ours.
fn check_name(number: u64, name: &str) -> Result<()> {
    // `.identity` too: `adopt` changes it, and undo takes that back.
    if name != MEMORY_FILE && name != crate::store::owner::IDENTITY_FILE && check_topic_name(name).is_err() {
        bail!("history entry #{number} names {name:?}, which is not a memory file; remove that entry");
    }
    Ok(())
}

fn put_back(folder: &Folder, number: u64, entry: &Entry) -> Result<()> {
    for (name, before) in &entry.files {
        check_name(number, name)?;
        let now = read_if_exists(&folder.dir.join(name))?;
        let target = restored(folder, name, before, now.as_deref(), number)?;
        put(folder, name, now.as_deref(), target.as_deref())?;
    }
    Ok(())
}

/// File `name` as `before` (of entry `number`) says it was, from the text
/// it has now (`None`: missing, and so it is to be).
fn restored(folder: &Folder, name: &str, before: &Before, now: Option<&str>, number: u64) -> Result<Option<String>> {
    Ok(match before {
        Before::Text(text) => Some(text.clone()),
        Before::Absent => None,
        Before::Length(len) => match now.and_then(|t| t.get(..*len as usize)) {
            Some(kept) => Some(kept.to_string()),
            None => bail!(
                "{} is shorter than history entry #{number} expects: it was edited since; put it back by hand",
                folder.dir.join(name).display()
            ),
        },
        Before::Tail(tail) => Some(format!("{}{tail}", now.unwrap_or_default())),
    })
}

/// Makes file `name` `target` (`None`: removed). A file already so is left
/// alone: rewriting it gains nothing, and after a failed write it may fail again.
fn put(folder: &Folder, name: &str, now: Option<&str>, target: Option<&str>) -> Result<()> {
    match target {
        Some(text) if now != Some(text) => folder.write_file(name, text),
        None if now.is_some() => Ok(fs_err::remove_file(folder.dir.join(name))?),
        _ => Ok(()),
    }
}
