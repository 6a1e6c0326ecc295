//! With sync on, git's log is a memory folder's history: its changes,
//! one shown as a diff, and undo as a new commit.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};

use super::is_on;
use crate::git;
use crate::store::changes::{History, Listed, Local, Undone};
use crate::store::folder::Folder;
use crate::store::history::Origin;

/// One change of a memory folder in git's log.
#[derive(Debug, Clone)]
struct GitChange {
    /// From 1, the oldest change of the folder.
    pub number: u64,
    pub commit: String,
    pub at: i64,
    pub message: String,
}

/// The repository and the folder's name in it, when sync makes git the
/// history of `folder_dir`.
fn repo_of(folder_dir: &Path) -> Option<(&Path, &str)> {
    let root = folder_dir.parent().filter(|root| is_on(root))?;
    Some((root, folder_dir.file_name()?.to_str()?))
}

/// Whether git is the history of this memory folder (sync is on).
fn is_history(folder_dir: &Path) -> bool {
    repo_of(folder_dir).is_some()
}

/// The folder's changes, newest first.
fn changes(folder_dir: &Path) -> Result<Vec<GitChange>> {
    let (root, name) = repo_of(folder_dir).context("sync is off")?;
    let log = git::run(root, &["log", "--format=%H%x1f%ct%x1f%B%x1e", "--", name], git::LIMIT)?;
    let mut out: Vec<GitChange> = log
        .split('\x1e')
        .filter_map(|entry| {
            let mut fields = entry.trim_start_matches('\n').splitn(3, '\x1f');
            let commit = fields.next()?.trim().to_string();
            let at = fields.next()?.trim().parse().ok()?;
            let message = fields.next()?.trim().to_string();
            (!commit.is_empty()).then_some(GitChange { number: 0, commit, at, message })
        })
        .collect();
    let total = out.len() as u64;
    for (i, change) in out.iter_mut().enumerate() {
        change.number = total - i as u64;
    }
    Ok(out)
}

/// Change `number` as a diff of the folder's files.
fn show(folder_dir: &Path, number: u64, offset: u64) -> Result<(GitChange, String)> {
    let (root, name) = repo_of(folder_dir).context("sync is off")?;
    let change = changes(folder_dir)?
        .into_iter()
        .find(|c| c.number == number)
        .with_context(|| format!("{name} has no change #{} (see memory-save history)", number + offset))?;
    let diff = git::run(root, &["show", "--format=", "--first-parent", &change.commit, "--", name], git::LIMIT)?;
    Ok((change, diff))
}

/// Puts the folder back as it was before change `number` (the newest when
/// `None`), every later change with it, as one commit; refuses to throw
/// away uncommitted edits unless `force`. Returns the diff and the label.
/// Call with the folder's lock held.
/// `offset`: the folder's own entries from before sync, numbered before
/// git's changes in what a person sees.
fn undo(folder_dir: &Path, number: Option<u64>, force: bool, offset: u64) -> Result<(String, String)> {
    let (root, name) = repo_of(folder_dir).context("sync is off")?;
    let all = changes(folder_dir)?;
    let newest = all.first().with_context(|| format!("no history for {name} yet: nothing to undo"))?;
    let number = number.unwrap_or(newest.number);
    let target = all
        .iter()
        .find(|c| c.number == number)
        .with_context(|| format!("{name} has no change #{} (see memory-save history)", number + offset))?;
    let edited = git::run(root, &["status", "--porcelain", "--", name], git::LIMIT)?;
    if !edited.trim().is_empty() && !force {
        bail!(
            "{name} changed after the last recorded change (#{}), by hand or another tool; undo would throw that away. \
             See the edit with: git -C {} diff -- {name}; undo anyway, losing it, with: memory-save undo{} --force",
            newest.number + offset,
            root.display(),
            if number == newest.number { String::new() } else { format!(" {}", number + offset) }
        );
    }
    let parent = format!("{}^", target.commit);
    if git::run(root, &["rev-parse", "--verify", "-q", &parent], git::LIMIT).is_ok() {
        git::run(root, &["checkout", "-q", &parent, "--", name], git::LIMIT)?;
        // Files the change added are not in the parent: they go too.
        let added =
            git::run(root, &["diff", "--name-only", "--diff-filter=A", &parent, "HEAD", "--", name], git::LIMIT)?;
        for file in added.lines().filter(|l| !l.is_empty()) {
            git::run(root, &["rm", "-q", "--cached", "--ignore-unmatch", "--", file], git::LIMIT)?;
            let _ = std::fs::remove_file(root.join(file));
        }
    } else {
        git::run(root, &["rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", name], git::LIMIT)?;
        for file in git::run(root, &["ls-tree", "-r", "--name-only", &target.commit, "--", name], git::LIMIT)?.lines() {
            let _ = std::fs::remove_file(root.join(file));
        }
    }
    let diff = git::run(root, &["diff", "--cached", "HEAD", "--", name], git::LIMIT)?;
    let subject = target.message.lines().next().unwrap_or_default();
    let subject = crate::store::history::unlabelled(subject);
    let label = if number == newest.number {
        let redo = target.message.starts_with("undo of #");
        format!("{} of #{}: {subject}", if redo { "redo" } else { "undo" }, number + offset)
    } else {
        format!("undo of #{}-#{}: {subject}", number + offset, newest.number + offset)
    };
    if !diff.trim().is_empty() {
        git::run(root, &["commit", "-q", "--no-verify", "-m", &label, "--", name], git::LIMIT)?;
    }
    Ok((diff, label))
}

/// Git's log as a memory folder's history (sync on).
pub struct Git<'a> {
    folder: &'a Folder,
}

/// The history of `folder`: git's log with sync on, else memory-save's own.
pub fn of(folder: &Folder) -> Box<dyn History + '_> {
    if is_history(&folder.dir) { Box::new(Git { folder }) } else { Box::new(Local { folder }) }
}

impl Git<'_> {
    /// The folder's own entries from before sync began, newest first, with
    /// their own numbers; git's changes are numbered after the newest.
    fn before_sync(&self) -> Result<Vec<Listed>> {
        let mut before = Local { folder: self.folder }.changes()?;
        let recorded = repo_of(&self.folder.dir)
            .and_then(|(root, _)| super::state(&crate::store::paths::Roots::at(root.parent()?.to_path_buf())))
            .and_then(|s| s.before_sync);
        match recorded {
            Some(newest) => {
                let newest = newest.get(&self.folder.project).copied().unwrap_or(0);
                before.retain(|l| l.number <= newest);
            }
            // A state of an earlier version: what came before the folder's
            // first commit.
            None => {
                let first = changes(&self.folder.dir)?.last().map_or(i64::MAX, |c| c.at);
                before.retain(|l| l.at < first);
            }
        }
        Ok(before)
    }

    fn offset(&self) -> Result<u64> {
        Ok(self.before_sync()?.first().map_or(0, |l| l.number))
    }
}

impl History for Git<'_> {
    fn changes(&self) -> Result<Vec<Listed>> {
        let before = self.before_sync()?;
        let offset = before.first().map_or(0, |l| l.number);
        let mut all: Vec<Listed> =
            changes(&self.folder.dir)?.into_iter().map(|c| Listed { number: c.number + offset, ..listed(c) }).collect();
        all.extend(before);
        Ok(all)
    }

    fn show(&self, number: u64) -> Result<(Listed, Vec<(String, String)>)> {
        let offset = self.offset()?;
        if number <= offset {
            return Local { folder: self.folder }.show(number);
        }
        let (change, diff) = show(&self.folder.dir, number - offset, offset)?;
        Ok((Listed { number, ..listed(change) }, per_file(&diff)))
    }

    fn undo(&self, number: Option<u64>, force: bool) -> Result<Undone> {
        let folder = self.folder;
        let offset = self.offset()?;
        if let Some(number) = number.filter(|n| *n <= offset) {
            // The folder's own history put it back (every later change with
            // it, as git's undo does); git records that as a new commit.
            let undone = Local { folder }.undo(Some(number), force)?;
            super::commit_change(&folder.dir, &undone.label, None, None)?;
            return Ok(Undone { recorded_as: " (a commit)", ..undone });
        }
        let number = number.map(|n| n - offset);
        let memory_files = || -> Vec<String> {
            let Ok(entries) = std::fs::read_dir(&folder.dir) else { return Vec::new() };
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| n.ends_with(".md"))
                .collect()
        };
        let read = |name: &str| crate::store::folder::read_if_exists(&folder.dir.join(name)).ok().flatten();
        let mut before: BTreeMap<String, Option<String>> =
            memory_files().into_iter().map(|n| (n.clone(), read(&n))).collect();
        let (diff, label) = undo(&folder.dir, number, force, offset)?;
        for name in memory_files() {
            before.entry(name).or_insert(None);
        }
        // The local history stays whole, so turning sync off later leaves
        // nothing unexplained.
        let origin = Origin { by: Some("memory-save undo".into()), ..Default::default() };
        crate::store::history::record_made(folder, &label, &before, &origin)?;
        Ok(Undone { diffs: per_file(&diff), label, recorded_as: " (a commit)" })
    }
}

/// A change of git's log as the history lists it: the subject as its
/// message, the session and cost from its trailers.
fn listed(change: GitChange) -> Listed {
    let mut lines = change.message.lines();
    let subject = lines.next().unwrap_or_default().to_string();
    let mut origin = Origin::default();
    for line in lines {
        if let Some(session) = line.strip_prefix("Session: ") {
            origin.session_id = Some(session.trim().to_string());
        } else if let Some(cost) = line.strip_prefix("Cost: $") {
            origin.cost_usd = cost.trim().parse().ok();
        }
    }
    Listed {
        number: change.number,
        at: change.at,
        message: subject,
        files: Vec::new(),
        origin,
        added: Vec::new(),
        commit: Some(change.commit),
    }
}

/// git's diff of a folder, file by file (`<folder>/<file>` as the file's
/// name).
fn per_file(diff: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = Vec::new();
    for part in diff.split_inclusive('\n') {
        if let Some(rest) = part.strip_prefix("diff --git a/") {
            let path = rest.split(" b/").next().unwrap_or(rest).trim();
            let name = path.rsplit('/').next().unwrap_or(path).to_string();
            files.push((name, String::new()));
        }
        match files.last_mut() {
            Some((_, text)) => text.push_str(part),
            None => files.push((String::new(), part.to_string())),
        }
    }
    files
}
