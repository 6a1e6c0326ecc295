//! With sync on, git's log is a memory folder's history: its changes,
//! one shown as a diff, and undo as a new commit.

use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use super::is_on;
use crate::git;

/// One change of a memory folder in git's log.
#[derive(Debug, Clone, Serialize)]
pub struct GitChange {
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
pub fn is_history(folder_dir: &Path) -> bool {
    repo_of(folder_dir).is_some()
}

/// The folder's changes, newest first.
pub fn changes(folder_dir: &Path) -> Result<Vec<GitChange>> {
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
pub fn show(folder_dir: &Path, number: u64) -> Result<(GitChange, String)> {
    let (root, name) = repo_of(folder_dir).context("sync is off")?;
    let change = changes(folder_dir)?
        .into_iter()
        .find(|c| c.number == number)
        .with_context(|| format!("{name} has no change #{number} (see memory-save history)"))?;
    let diff = git::run(root, &["show", "--format=", "--first-parent", &change.commit, "--", name], git::LIMIT)?;
    Ok((change, diff))
}

/// Puts the folder back as it was before change `number` (the newest when
/// `None`), every later change with it, as one commit; refuses to throw
/// away uncommitted edits unless `force`. Returns the diff and the label.
/// Call with the folder's lock held.
pub fn undo(folder_dir: &Path, number: Option<u64>, force: bool) -> Result<(String, String)> {
    let (root, name) = repo_of(folder_dir).context("sync is off")?;
    let all = changes(folder_dir)?;
    let newest = all.first().with_context(|| format!("no history for {name} yet: nothing to undo"))?;
    let number = number.unwrap_or(newest.number);
    let target = all
        .iter()
        .find(|c| c.number == number)
        .with_context(|| format!("{name} has no change #{number} (see memory-save history)"))?;
    let edited = git::run(root, &["status", "--porcelain", "--", name], git::LIMIT)?;
    if !edited.trim().is_empty() && !force {
        bail!(
            "{name} changed after the last recorded change (#{}), by hand or another tool; undo would throw that away. \
             See the edit with: git -C {} diff -- {name}; undo anyway, losing it, with: memory-save undo{} --force",
            newest.number,
            root.display(),
            if number == newest.number { String::new() } else { format!(" {number}") }
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
        format!("{} of #{number}: {subject}", if redo { "redo" } else { "undo" })
    } else {
        format!("undo of #{number}-#{}: {subject}", newest.number)
    };
    if !diff.trim().is_empty() {
        git::run(root, &["commit", "-q", "--no-verify", "-m", &label, "--", name], git::LIMIT)?;
    }
    Ok((diff, label))
}
