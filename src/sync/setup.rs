//! Turning sync on and off, and our merge driver's registration.

use std::path::Path;

use anyhow::{Context, Result, bail};

use super::{Caller, SyncState, state_path, sync_now, write_state};
use crate::git;
use crate::store::fsutil;
use crate::store::paths::Roots;

/// Defines our merge driver in the config of the repository at `git_dir` (git
/// reads a driver only from its config); in-process, so a hook may call it.
pub fn register_driver(git_dir: &Path) -> Result<()> {
    let exe = std::env::current_exe().and_then(std::fs::canonicalize).context("cannot find the running binary")?;
    let exe = exe.to_str().context("the binary's path is not UTF-8; install memory-save under a plain path")?;
    let driver = format!("{} merge-driver %O %A %B %P", crate::claude::hooks::shell_quote(exe));
    git::define_merge_driver(git_dir, &driver)
}

/// Sets up the memory root as a repository with `url` as its remote, then
/// syncs: memories already on the remote are merged with ours.
pub fn init(roots: &Roots, url: &str, caller: Caller) -> Result<Vec<String>> {
    if url.starts_with('-') || url.trim().is_empty() {
        bail!("{url:?} is not a git remote; give its URL or path");
    }
    let root = &roots.memory;
    fsutil::create_private_dir(root)?;
    let mut report = Vec::new();
    let fresh = !root.join(".git").exists();
    if fresh {
        git::run(root, &["init", "-q"], git::LIMIT)?;
        report.push(format!("made {} a git repository", root.display()));
    }
    super::write_git_info(root)?;
    register_driver(&root.join(".git"))?;
    if git::run(root, &["config", "user.email"], git::LIMIT).is_err() {
        git::run(root, &["config", "user.email", "memory-save@localhost"], git::LIMIT)?;
        git::run(root, &["config", "user.name", "memory-save"], git::LIMIT)?;
    }
    if git::run(root, &["remote", "get-url", "origin"], git::LIMIT).is_ok() {
        git::run(root, &["remote", "set-url", "origin", url], git::LIMIT)?;
    } else {
        git::run(root, &["remote", "add", "origin", url], git::LIMIT)?;
    }
    // The remote's word becomes part of our git commands' arguments.
    let branch = remote_default_branch(roots, root, url)
        .filter(|b| git::run(root, &["check-ref-format", "--branch", b], git::LIMIT).is_ok());
    let branch_name = branch.as_deref().unwrap_or(super::BRANCH).to_string();
    if branch.is_none() {
        report.push(format!(
            "the remote did not name its default branch (git 2.31 or newer learns it, also from an empty remote): \
             memories go to branch {branch_name}; make {branch_name} the remote's default branch, or its clones warn \
             \"remote HEAD refers to nonexistent ref\""
        ));
    }
    if fresh {
        git::run(root, &["symbolic-ref", "HEAD", &format!("refs/heads/{branch_name}")], git::LIMIT)?;
    }
    git::run(root, &["add", "-A"], git::LIMIT)?;
    let first = git::run(root, &["rev-parse", "--verify", "-q", "HEAD"], git::LIMIT).is_err();
    if first || git::run(root, &["diff", "--cached", "--quiet"], git::LIMIT).is_err() {
        git::run(
            root,
            &["commit", "-q", "--no-verify", "--allow-empty", "-m", "memory-save: memories of this machine"],
            git::LIMIT,
        )?;
    }
    write_state(roots, &SyncState { remote: url.to_string(), branch, ..SyncState::default() })?;
    let first = sync_now(roots, caller).context(
        "sync is set up, but its first pull and push failed; it is tried again after each save \
         (memory-save sync tries now, memory-save sync --off turns it off)",
    )?;
    report.extend(first);
    Ok(report)
}

/// The branch the remote's HEAD names, so its clones check our memories out
/// (no "remote HEAD refers to nonexistent ref"). An empty remote names it only
/// to a clone (git 2.31 or newer). `None` when it cannot be learned.
fn remote_default_branch(roots: &Roots, root: &Path, url: &str) -> Option<String> {
    let listed = git::run(root, &["ls-remote", "--symref", "origin", "HEAD"], git::LIMIT).ok()?;
    if let Some(branch) = listed.lines().find_map(|l| l.strip_prefix("ref: refs/heads/")?.strip_suffix("\tHEAD")) {
        return Some(branch.to_string());
    }
    if !listed.trim().is_empty() || !git_at_least(root, (2, 31)) {
        return None;
    }
    let probe = roots.state.join("sync-probe.git");
    let _ = std::fs::remove_dir_all(&probe);
    let probe_arg = probe.to_str()?;
    let cloned = git::run(&roots.state, &["clone", "-q", "--bare", "--", url, probe_arg], git::LIMIT);
    let head = cloned.and_then(|_| git::run(&probe, &["symbolic-ref", "HEAD"], git::LIMIT));
    let _ = std::fs::remove_dir_all(&probe);
    Some(head.ok()?.trim().strip_prefix("refs/heads/")?.to_string())
}

fn git_at_least(root: &Path, wanted: (u32, u32)) -> bool {
    let version = git::run(root, &["version"], git::LIMIT).unwrap_or_default();
    let mut parts = version.trim().trim_start_matches("git version ").split('.').map(|p| p.parse::<u32>().ok());
    matches!((parts.next().flatten(), parts.next().flatten()), (Some(major), Some(minor)) if (major, minor) >= wanted)
}

/// Stops syncing: the remote and merge setup go; the repository (the history) stays.
pub fn off(roots: &Roots) -> Result<()> {
    let _ = std::fs::remove_file(roots.memory.join(".git/info/attributes"));
    let _ = git::run(&roots.memory, &["remote", "remove", "origin"], git::LIMIT);
    let _ = std::fs::remove_file(state_path(roots));
    Ok(())
}
