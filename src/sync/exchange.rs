//! One pull and push: what the remote holds is checked before it reaches
//! the disk, merged through our driver, and what arrived is checked again.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{Caller, commit, state};
use crate::git;
use crate::store::folder::Folder;
use crate::store::fsutil;
use crate::store::owner::IDENTITY_FILE;
use crate::store::paths::Roots;

pub(super) fn pull_and_push(roots: &Roots, root: &Path, caller: Caller) -> Result<Vec<String>> {
    let mut report = Vec::new();
    super::write_git_info(root)?;
    let branch = state(roots).map(|s| s.branch().to_string()).unwrap_or_default();
    git::remote(root, &["fetch", "-q", "origin"], caller)?;
    let remote_branch = format!("origin/{branch}");
    let has_remote = git::run(root, &["rev-parse", "--verify", "-q", &remote_branch], git::LIMIT).is_ok();
    if has_remote {
        let names = folder_names(root);
        let _locks: Vec<_> = names.iter().filter_map(|name| Folder::new(roots, name).lock().ok()).collect();
        check_remote_tree(root, &remote_branch)?;
        // This machine's own writes (a save, a guard, a record) are committed
        // first: an untracked file the remote tracks would stop the merge.
        commit(root, &[], "memory-save: this machine's changes")?;
        report.extend(separate_identities(roots, root, &remote_branch)?);
        let records: Vec<(String, Vec<u8>)> = folder_names(root)
            .into_iter()
            .filter_map(|name| {
                let path = root.join(&name).join(IDENTITY_FILE);
                let bytes = fsutil::read_regular(&path, 64 * 1024).ok()??;
                crate::store::owner::parse(&bytes).map(|_| (name, bytes))
            })
            .collect();
        let before = git::run(root, &["rev-parse", "HEAD"], git::LIMIT)?.trim().to_string();
        let merged = git::run(
            root,
            &["merge", "-q", "--no-edit", "--allow-unrelated-histories", "-m", "memory-save: sync", &remote_branch],
            git::LIMIT,
        );
        if let Err(e) = merged {
            let _ = git::run(root, &["merge", "--abort"], git::LIMIT);
            return Err(e.context(
                "the merge with the remote failed and was undone, so nothing was lost; run memory-save sync again, and if it fails the same way, see docs/troubleshooting.md",
            ));
        }
        // A fast-forward, or a file only the remote changed, runs no driver:
        // what came is checked here as a save's lines are.
        let arrived = arrived(root, &before)?;
        report.extend(check_arrived(root, &arrived)?);
        report.extend(keep_records(root, &records)?);
        record_pulled(roots, &arrived)?;
    }
    git::remote(root, &["push", "-q", "origin", &format!("HEAD:refs/heads/{branch}")], caller)?;
    report.push(format!("synced with {}", state(roots).map(|s| s.remote).unwrap_or_default()));
    Ok(report)
}

/// What the remote holds must be memory alone: plain files (no link, no
/// submodule) at `<folder>/<file>` with names a memory may have. A tree's
/// own `.gitattributes` (`working-tree-encoding=UTF-16LE`) would act during
/// the merge itself, so it is refused here, before.
fn check_remote_tree(root: &Path, remote_branch: &str) -> Result<()> {
    let tree = git::run(root, &["ls-tree", "-r", "-z", remote_branch], git::LIMIT)?;
    for entry in tree.split('\0').filter(|e| !e.is_empty()) {
        let (meta, path) = entry.split_once('\t').unwrap_or((entry, ""));
        let plain = meta.starts_with("100644 blob") || meta.starts_with("100755 blob");
        let allowed = match path.split('/').collect::<Vec<_>>().as_slice() {
            [folder, file] => {
                crate::project::check_name(folder).is_ok()
                    && !folder.starts_with('.')
                    && (*file == crate::store::folder::MEMORY_FILE
                        || *file == IDENTITY_FILE
                        || *file == crate::store::guards::GUARDS_FILE
                        || crate::memory::apply::check_topic_name(file).is_ok())
            }
            _ => false,
        };
        if !plain || !allowed {
            bail!(
                "the remote holds {}, which is not a memory file (a link, a folder or a name memory-save never writes); nothing was merged: remove it from the remote, then sync",
                crate::memory::text::visible(path)
            );
        }
    }
    Ok(())
}

/// The memory files a pull changed since `before`, with their text (`None`: new).
fn arrived(root: &Path, before: &str) -> Result<Vec<(String, Option<String>)>> {
    let changed = git::run(root, &["diff", "--name-only", "-z", before, "HEAD"], git::LIMIT)?;
    Ok(changed
        .split('\0')
        .filter(|p| p.ends_with(".md"))
        .map(|path| (path.to_string(), git::run(root, &["show", &format!("{before}:{path}")], git::LIMIT).ok()))
        .collect())
}

/// Lines a pull brought that no save could write (a secret, control or bidi
/// text, a header look-alike) are taken out again in one commit, and named.
fn check_arrived(root: &Path, arrived: &[(String, Option<String>)]) -> Result<Vec<String>> {
    let mut report = Vec::new();
    for (path, old) in arrived {
        let file = root.join(path);
        let Some(now) = fsutil::read_regular(&file, crate::store::folder::MAX_FILE_BYTES)? else { continue };
        let now = String::from_utf8_lossy(&now).into_owned();
        let refused = crate::memory::gate::refused_additions(old.as_deref().unwrap_or_default(), &now);
        let dropped = refused.len();
        if dropped > 0 {
            let kept: Vec<&str> = (1..)
                .zip(now.lines())
                .filter(|(number, _)| !refused.iter().any(|r| r.line == *number))
                .map(|(_, line)| line)
                .collect();
            fsutil::write_atomic(&file, (kept.join("\n") + "\n").as_bytes(), true)?;
            report.push(format!(
                "{path}: left out {} from the remote that no save could write",
                crate::memory::report::plural(dropped as u64, "line")
            ));
        }
    }
    if !report.is_empty() {
        commit(root, &[], &format!("memory-save: {}", report.join("; ")))?;
    }
    Ok(report)
}

/// A folder without a readable `.identity` is taken for one from before
/// identities, every repository's of its name: a pull that took this
/// machine's record away (deleted, or not a record) gets it back.
fn keep_records(root: &Path, records: &[(String, Vec<u8>)]) -> Result<Vec<String>> {
    let mut kept = Vec::new();
    for (name, bytes) in records {
        let path = root.join(name).join(IDENTITY_FILE);
        let now = fsutil::read_regular(&path, 64 * 1024)?;
        if now.as_deref().and_then(crate::store::owner::parse).is_none() {
            fsutil::write_atomic(&path, bytes, true)?;
            kept.push(format!("{name}/{IDENTITY_FILE}: kept this machine's record, which the remote took away"));
        }
    }
    if !kept.is_empty() {
        commit(root, &[], &format!("memory-save: {}", kept.join("; ")))?;
    }
    Ok(kept)
}

/// Each folder the pull changed gets a history entry, so `undo` takes it back
/// like any change. Call with the folders' locks held.
fn record_pulled(roots: &Roots, arrived: &[(String, Option<String>)]) -> Result<()> {
    let mut by_folder: std::collections::BTreeMap<&str, std::collections::BTreeMap<String, Option<String>>> =
        Default::default();
    for (path, old) in arrived {
        let Some((folder, file)) = path.split_once('/') else { continue };
        by_folder.entry(folder).or_default().insert(file.to_string(), old.clone());
    }
    let origin = crate::store::history::Origin { by: Some("memory-save sync".into()), ..Default::default() };
    for (name, files) in by_folder {
        let folder = Folder::new(roots, name);
        crate::store::history::record_made(&folder, "pulled from the sync remote", &files, &origin)?;
    }
    Ok(())
}

fn folder_names(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// Two machines that gave one folder name to different repositories before
/// their first sync: ours moves to `<name>-<8 hex>` (the name a second
/// repository gets anyway), so the merge never mixes two memories.
fn separate_identities(roots: &Roots, root: &Path, remote_branch: &str) -> Result<Vec<String>> {
    let mut report = Vec::new();
    let listed = git::run(root, &["ls-tree", "-r", "--name-only", remote_branch], git::LIMIT)?;
    // A folder both histories held already met its other side at an
    // earlier sync: only a folder new to one of them is compared (a record
    // of a path and no root commit reads the same on any machine).
    let met = match git::run(root, &["merge-base", "HEAD", remote_branch], git::LIMIT) {
        Ok(base) => git::run(root, &["ls-tree", "-r", "--name-only", base.trim()], git::LIMIT)?,
        Err(_) => String::new(),
    };
    let met: std::collections::HashSet<&str> = met.lines().collect();
    for path in listed.lines().filter(|p| p.ends_with(&format!("/{IDENTITY_FILE}")) && !met.contains(p)) {
        let Some((name, _)) = path.split_once('/') else { continue };
        let Some(ours) = crate::store::owner::read_dir(&root.join(name)) else { continue };
        let text = git::run(root, &["show", &format!("{remote_branch}:{path}")], git::LIMIT)?;
        // A shared root commit alone is not one repository: forks and
        // template clones share theirs (`adopt` joins them).
        if crate::store::owner::parse(text.as_bytes()).is_none_or(|theirs| ours.same_repository(&theirs)) {
            continue;
        }
        // A second repository's name, by the identity that made the folder
        // (an adopter's, added later, is not its owner's); the lookup tries
        // each identity's. Taken here or on the remote, two memories would meet.
        let ours = ours.identity;
        let moved = crate::project::hashed_name(name, &ours);
        if root.join(&moved).exists() || listed.lines().any(|p| p.starts_with(&format!("{moved}/"))) {
            bail!("memory folders {name} and {moved} both exist for other repositories; rename one by hand, then sync");
        }
        // The old name's record is its lock: moved only by the one holding it.
        let (from, to) = (Folder::new(roots, name), Folder::new(roots, &moved));
        if !crate::store::lock::held_here(from.record_path()) {
            bail!("memory folder {name} is in use by another memory-save process; run memory-save sync again");
        }
        // The whole folder, its untracked history too.
        std::fs::rename(root.join(name), root.join(&moved))
            .with_context(|| format!("cannot move memory folder {name} to {moved}"))?;
        // What this machine keeps of the folder (its paths here, its own
        // rules, its notes) moves with it: left under the old name, it would
        // make the other repository's folder answer to this one's path.
        // Copied under the new name's lock, then emptied under the old's.
        let _to = to.lock()?;
        let read = |folder: &Folder| fsutil::read_regular(folder.record_path(), 1024 * 1024).ok().flatten();
        if let Some(kept) = read(&from).filter(|bytes| !bytes.is_empty())
            && read(&to).is_none_or(|bytes| bytes.is_empty())
        {
            fsutil::write_atomic(to.record_path(), &kept, true)?;
            fsutil::write_atomic(from.record_path(), b"", true)?;
        }
        crate::store::owner::move_adopted(roots, name, &moved)?;
        let message = format!("memory-save: {name} is {moved}: another machine's {name} belongs to another repository");
        commit(root, &[name, &moved], &message)?;
        report.push(format!("{name} (for {ours}) moved to {moved}: the remote's {name} belongs to another repository"));
    }
    Ok(report)
}
