//! Memory on every machine, through git (the `git` program: gitoxide cannot
//! push). `sync --init <url>` makes the memory root a repository with that
//! remote and our merge driver; each save commits its change; at most once
//! a minute, bounded in time, the worker pulls (merging through the driver)
//! and pushes. git never waits for a password (`GIT_TERMINAL_PROMPT=0`, ssh
//! in batch mode), and a failed pull or push never fails a save: the status
//! line says since when it has not synced, `doctor` says why.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use crate::store::folder::IDENTITY_FILE;
use crate::store::fsutil;
use crate::store::paths::Roots;

const BRANCH: &str = "main";
/// Pulls and pushes after a save are this far apart at least.
pub const SYNC_EVERY: i64 = 60;
/// One git command of a background sync takes at most this long.
const GIT_LIMIT: Duration = Duration::from_secs(30);
/// Reading one setting is quick, or git is stuck.
const GIT_CONFIG_LIMIT: Duration = Duration::from_secs(5);
/// What of git's output is kept: the memory files it shows are at most
/// 50,000 characters each; far more is not git answering us.
const GIT_OUTPUT_MAX: usize = 64 * 1024 * 1024;
const STATE_FILE: &str = "sync.json";

/// Only memories travel: MEMORY.md, topic files and identity records.
/// A folder's backup from before a repair, its failed replies and its
/// `.history/` stay on this machine.
const GITIGNORE: &str = "# memory-save sync: only memories travel\n/*/*\n!/*/*.md\n!/*/.identity\n!/*/.approved\n/*/MEMORY.pre-migration.md\n";
const GITATTRIBUTES: &str = "*.md merge=memory-save\n.approved merge=union\n";

/// What the last sync did, for the status line and `doctor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyncState {
    pub remote: String,
    /// Unix time of the last pull and push that worked.
    pub synced_at: Option<i64>,
    pub attempted_at: Option<i64>,
    /// Why the last attempt failed.
    pub error: Option<String>,
}

fn state_path(roots: &Roots) -> PathBuf {
    roots.state.join(STATE_FILE)
}

/// `None` when sync is off.
pub fn state(roots: &Roots) -> Option<SyncState> {
    let bytes = fsutil::read_regular(&state_path(roots), 1024 * 1024).ok()??;
    serde_json::from_slice(&bytes).ok()
}

fn write_state(roots: &Roots, state: &SyncState) -> Result<()> {
    fsutil::create_private_dir(&roots.state)?;
    fsutil::write_atomic(&state_path(roots), &serde_json::to_vec(state)?, false)
}

/// Whether the memory root at `root` syncs: it holds our repository.
pub fn is_on(root: &Path) -> bool {
    root.join(".git").is_dir()
        && std::fs::read_to_string(root.join(".gitattributes")).is_ok_and(|t| t.contains("merge=memory-save"))
}

/// ssh never asks (batch mode) and gives up on a dead host, but runs as
/// the user has it: their `GIT_SSH_COMMAND`, else the repository's or
/// global `core.sshCommand`, else `ssh`, with our two options added.
/// `None` with `GIT_SSH` set: that program may take no ssh options.
fn ssh_command(root: &Path) -> Option<String> {
    const OPTIONS: &str = "-o BatchMode=yes -o ConnectTimeout=10";
    if let Some(theirs) = crate::env::passed_to_fork("GIT_SSH_COMMAND").filter(|c| !c.trim().is_empty()) {
        return Some(format!("{theirs} {OPTIONS}"));
    }
    if crate::env::passed_to_fork("GIT_SSH").is_some() {
        return None;
    }
    let configured = crate::process::run_captured(
        Command::new("git").arg("-C").arg(root).args(["config", "--get", "core.sshCommand"]),
        b"",
        GIT_CONFIG_LIMIT,
        64 * 1024,
    )
    .ok()
    .filter(|run| matches!(run.ended, crate::process::Ended::Exited(status) if status.success()))
    .map(|run| String::from_utf8_lossy(&run.stdout).trim().to_string())
    .filter(|c| !c.is_empty());
    Some(format!("{} {OPTIONS}", configured.as_deref().unwrap_or("ssh")))
}

/// Who a sync runs for: the worker after a save, in the background, where
/// nothing may ask and everything is bounded; or a person who ran
/// `memory-save sync` at a terminal, whose fetch and push run in the
/// foreground with no bound, so ssh can ask for a passphrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Background,
    Person,
}

impl Caller {
    /// A person, when the command's input and error output are a terminal.
    pub fn of_terminal() -> Caller {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Caller::Person
        } else {
            Caller::Background
        }
    }
}

/// `git fetch` and `git push`, the steps that reach the remote: for a
/// person, in the foreground, where git and ssh may ask and print to the
/// terminal; else bounded and asking nothing (`git`).
fn git_remote(root: &Path, args: &[&str], caller: Caller) -> Result<()> {
    if caller == Caller::Background {
        return git(root, args, GIT_LIMIT).map(drop);
    }
    let status = crate::process::run_in_foreground(
        Command::new("git").arg("-C").arg(root).args(args).env("GIT_MERGE_AUTOEDIT", "no"),
    )
    .context("cannot run git; install git to sync memory")?;
    if !status.success() {
        bail!("git {} failed (what git said is above)", args.first().unwrap_or(&""));
    }
    Ok(())
}

/// Runs `git -C root …` bounded in time, in its own process group (a
/// hung ssh dies with it), never asking for anything.
pub fn git(root: &Path, args: &[&str], limit: Duration) -> Result<String> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(ssh_command(root).map(|c| ("GIT_SSH_COMMAND", c)))
        .env("GIT_MERGE_AUTOEDIT", "no");
    let run = crate::process::run_captured(&mut command, b"", limit, GIT_OUTPUT_MAX)
        .context("cannot run git; install git to sync memory")?;
    let (status, stdout, stderr) = match run.ended {
        crate::process::Ended::Exited(status) => (status, run.stdout, run.stderr),
        crate::process::Ended::TimedOut => {
            bail!("git {} took over {} s and was stopped", args.first().unwrap_or(&""), limit.as_secs())
        }
    };
    if !status.success() {
        // git's message spans lines ("fatal: …", then advice): all of it,
        // on one line, bounded.
        let stderr = String::from_utf8_lossy(&stderr);
        let said: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let said = crate::memory::text::shorten(&said.join(" "), 400);
        bail!("git {} failed: {said}", args.first().unwrap_or(&""));
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// Defines our merge driver in the config of the repository whose git
/// folder is `git_dir` (git reads a driver from its config only, never
/// from .gitattributes), run by this binary's path.
pub fn register_driver(git_dir: &Path) -> Result<()> {
    let exe = std::env::current_exe().and_then(std::fs::canonicalize).context("cannot find the running binary")?;
    let exe = exe.to_str().context("the binary's path is not UTF-8; install memory-save under a plain path")?;
    let driver = format!("{} merge-driver %O %A %B %P", crate::claude::hooks::quote_program(exe));
    let file = git_dir.join("config");
    let file = file.to_str().context("the git folder's path is not UTF-8")?;
    for (key, value) in [
        ("merge.memory-save.name", "memory-save: merge memory files by meaning"),
        ("merge.memory-save.driver", &driver),
    ] {
        git(git_dir, &["config", "--file", file, key, value], GIT_LIMIT)?;
    }
    Ok(())
}

/// Commits the files of one memory folder after a change (called under
/// its lock): the report line as the message, session and cost as trailers.
pub fn commit_change(folder_dir: &Path, message: &str, session: Option<&str>, cost: Option<f64>) -> Result<()> {
    let Some(root) = folder_dir.parent().filter(|root| is_on(root)) else {
        return Ok(());
    };
    let name = folder_dir.file_name().and_then(|n| n.to_str()).context("a memory folder has a name")?;
    git(root, &["add", "-A", "--", name], GIT_LIMIT)?;
    if git(root, &["diff", "--cached", "--quiet"], GIT_LIMIT).is_ok() {
        return Ok(()); // nothing staged
    }
    let mut text = message.to_string();
    let trailers: Vec<String> = [session.map(|s| format!("Session: {s}")), cost.map(|c| format!("Cost: ${c:.4}"))]
        .into_iter()
        .flatten()
        .collect();
    if !trailers.is_empty() {
        text.push_str("\n\n");
        text.push_str(&trailers.join("\n"));
    }
    git(root, &["commit", "-q", "--no-verify", "-m", &text], GIT_LIMIT)?;
    Ok(())
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
    if !root.join(".git").exists() {
        git(root, &["init", "-q"], GIT_LIMIT)?;
        git(root, &["symbolic-ref", "HEAD", &format!("refs/heads/{BRANCH}")], GIT_LIMIT)?;
        report.push(format!("made {} a git repository", root.display()));
    }
    fsutil::write_atomic(&root.join(".gitignore"), GITIGNORE.as_bytes(), true)?;
    fsutil::write_atomic(&root.join(".gitattributes"), GITATTRIBUTES.as_bytes(), true)?;
    register_driver(&root.join(".git"))?;
    if git(root, &["config", "user.email"], GIT_LIMIT).is_err() {
        git(root, &["config", "user.email", "memory-save@localhost"], GIT_LIMIT)?;
        git(root, &["config", "user.name", "memory-save"], GIT_LIMIT)?;
    }
    if git(root, &["remote", "get-url", "origin"], GIT_LIMIT).is_ok() {
        git(root, &["remote", "set-url", "origin", url], GIT_LIMIT)?;
    } else {
        git(root, &["remote", "add", "origin", url], GIT_LIMIT)?;
    }
    git(root, &["add", "-A"], GIT_LIMIT)?;
    let first = git(root, &["rev-parse", "--verify", "-q", "HEAD"], GIT_LIMIT).is_err();
    if first || git(root, &["diff", "--cached", "--quiet"], GIT_LIMIT).is_err() {
        git(
            root,
            &["commit", "-q", "--no-verify", "--allow-empty", "-m", "memory-save: memories of this machine"],
            GIT_LIMIT,
        )?;
    }
    write_state(roots, &SyncState { remote: url.to_string(), ..SyncState::default() })?;
    let first = sync_now(roots, caller).context(
        "sync is set up, but its first pull and push failed; it is tried again after each save \
         (memory-save sync tries now, memory-save sync --off turns it off)",
    )?;
    report.extend(first);
    Ok(report)
}

/// Stops syncing: the repository stays (it is the history), the remote and
/// the merge setup go.
pub fn off(roots: &Roots) -> Result<()> {
    let _ = std::fs::remove_file(root_marker(&roots.memory));
    let _ = git(&roots.memory, &["remote", "remove", "origin"], GIT_LIMIT);
    let _ = std::fs::remove_file(state_path(roots));
    Ok(())
}

fn root_marker(root: &Path) -> PathBuf {
    root.join(".gitattributes")
}

/// The sync after a save: at most once a minute. Never fails the save: a
/// failure is recorded for the status line and `doctor`.
pub fn after_save(roots: &Roots) {
    let Some(state) = state(roots) else { return };
    let now = crate::env::now_unix();
    if state.attempted_at.is_some_and(|at| now - at < SYNC_EVERY) || !is_on(&roots.memory) {
        return;
    }
    if let Err(e) = sync_now(roots, Caller::Background) {
        crate::store::log::error(&format!("sync failed: {e:#}"));
    }
}

/// Pull (merging through the driver) and push, now. Every project's lock is
/// held while git changes the files, so no save writes under it.
pub fn sync_now(roots: &Roots, caller: Caller) -> Result<Vec<String>> {
    let root = &roots.memory;
    let mut state = state(roots).context("sync is off; turn it on with memory-save sync --init <git-url>")?;
    let Some(_lock) = fsutil::Lock::try_acquire(&roots.state.join("sync.lock"))? else {
        return Ok(vec!["another sync is running".into()]);
    };
    let now = crate::env::now_unix();
    state.attempted_at = Some(now);
    let result = pull_and_push(roots, root, caller);
    match &result {
        Ok(_) => {
            state.synced_at = Some(now);
            state.error = None;
        }
        Err(e) => state.error = Some(format!("{e:#}")),
    }
    write_state(roots, &state)?;
    result
}

/// What `.gitattributes` may say: ours, or what an earlier version wrote.
const KNOWN_GITATTRIBUTES: [&str; 2] = [GITATTRIBUTES, "*.md merge=memory-save\n"];

fn pull_and_push(roots: &Roots, root: &Path, caller: Caller) -> Result<Vec<String>> {
    let mut report = Vec::new();
    // Our attributes are ours: an older version's, or one a remote changed,
    // are written back before anything merges.
    let attributes = root.join(".gitattributes");
    if fsutil::read_regular(&attributes, 64 * 1024)?.as_deref() != Some(GITATTRIBUTES.as_bytes()) {
        fsutil::write_atomic(&attributes, GITATTRIBUTES.as_bytes(), true)?;
        git(root, &["add", "--", ".gitattributes"], GIT_LIMIT)?;
        if git(root, &["diff", "--cached", "--quiet"], GIT_LIMIT).is_err() {
            git(root, &["commit", "-q", "--no-verify", "-m", "memory-save: its own .gitattributes"], GIT_LIMIT)?;
        }
    }
    git_remote(root, &["fetch", "-q", "origin"], caller)?;
    let remote_branch = format!("origin/{BRANCH}");
    let has_remote = git(root, &["rev-parse", "--verify", "-q", &remote_branch], GIT_LIMIT).is_ok();
    if has_remote {
        // A remote's own attributes (`working-tree-encoding=UTF-16LE`, the
        // driver taken away) would act during the merge itself.
        let theirs = git(root, &["show", &format!("{remote_branch}:.gitattributes")], GIT_LIMIT).unwrap_or_default();
        if !theirs.is_empty() && !KNOWN_GITATTRIBUTES.contains(&theirs.as_str()) {
            bail!(
                "the remote's .gitattributes is not memory-save's; nothing was merged: put back \"*.md merge=memory-save\" and \".approved merge=union\" there, then sync"
            );
        }
        let names = folder_names(root);
        let _locks: Vec<_> =
            names.iter().filter_map(|name| crate::store::folder::Folder::new(roots, name).lock().ok()).collect();
        check_remote_tree(root, &remote_branch)?;
        report.extend(separate_identities(root, &remote_branch)?);
        let before = git(root, &["rev-parse", "HEAD"], GIT_LIMIT)?.trim().to_string();
        let merged = git(
            root,
            &["merge", "-q", "--no-edit", "--allow-unrelated-histories", "-m", "memory-save: sync", &remote_branch],
            GIT_LIMIT,
        );
        if let Err(e) = merged {
            let _ = git(root, &["merge", "--abort"], GIT_LIMIT);
            return Err(e.context("the merge with the remote failed and was undone"));
        }
        // A fast-forward, or a file only the remote changed, runs no driver:
        // what came is checked here as a save's lines are.
        report.extend(check_arrived(root, &before)?);
    }
    git_remote(root, &["push", "-q", "origin", &format!("HEAD:refs/heads/{BRANCH}")], caller)?;
    report.push(format!("synced with {}", state(roots).map(|s| s.remote).unwrap_or_default()));
    Ok(report)
}

/// What the remote holds must be memory and nothing else: `<folder>/<file>`
/// paths of plain files (no link, no submodule), with names a memory may
/// have, beside our two top-level files. Anything else is refused before
/// it reaches the disk.
fn check_remote_tree(root: &Path, remote_branch: &str) -> Result<()> {
    let tree = git(root, &["ls-tree", "-r", "-z", remote_branch], GIT_LIMIT)?;
    for entry in tree.split('\0').filter(|e| !e.is_empty()) {
        let (meta, path) = entry.split_once('\t').unwrap_or((entry, ""));
        let plain = meta.starts_with("100644 blob") || meta.starts_with("100755 blob");
        let allowed = match path.split('/').collect::<Vec<_>>().as_slice() {
            [".gitignore" | ".gitattributes"] => true,
            [folder, file] => {
                crate::project::check_name(folder).is_ok()
                    && !folder.starts_with('.')
                    && (*file == crate::store::folder::MEMORY_FILE
                        || *file == IDENTITY_FILE
                        || *file == crate::store::approvals::APPROVED_FILE
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

/// The lines that came with a pull (changed since `before`) that no save
/// could write (a secret, a control or bidi character, a header look-alike)
/// are taken out again, in one commit, and named.
fn check_arrived(root: &Path, before: &str) -> Result<Vec<String>> {
    let changed = git(root, &["diff", "--name-only", "-z", before, "HEAD"], GIT_LIMIT)?;
    let mut report = Vec::new();
    for path in changed.split('\0').filter(|p| p.ends_with(".md")) {
        let file = root.join(path);
        let Some(now) = fsutil::read_regular(&file, crate::store::folder::MAX_FILE_BYTES)? else { continue };
        let now = String::from_utf8_lossy(&now).into_owned();
        let old = git(root, &["show", &format!("{before}:{path}")], GIT_LIMIT).unwrap_or_default();
        let had: std::collections::HashSet<&str> = old.lines().collect();
        let mut dropped = 0;
        let kept: Vec<&str> = now
            .lines()
            .filter(|line| {
                let bad = !had.contains(line) && crate::memory::gate::refusal(line).is_some();
                dropped += usize::from(bad);
                !bad
            })
            .collect();
        if dropped > 0 {
            fsutil::write_atomic(&file, (kept.join("\n") + "\n").as_bytes(), true)?;
            report.push(format!("{path}: left out {dropped} line(s) from the remote that no save could write"));
        }
    }
    if !report.is_empty() {
        git(root, &["add", "-A"], GIT_LIMIT)?;
        git(root, &["commit", "-q", "--no-verify", "-m", &format!("memory-save: {}", report.join("; "))], GIT_LIMIT)?;
    }
    Ok(report)
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
fn separate_identities(root: &Path, remote_branch: &str) -> Result<Vec<String>> {
    let mut report = Vec::new();
    let listed = git(root, &["ls-tree", "-r", "--name-only", remote_branch], GIT_LIMIT)?;
    for path in listed.lines().filter(|p| p.ends_with(&format!("/{IDENTITY_FILE}"))) {
        let Some((name, _)) = path.split_once('/') else { continue };
        let Some(ours) = crate::store::folder::recorded_identity(&root.join(name)) else { continue };
        let text = git(root, &["show", &format!("{remote_branch}:{path}")], GIT_LIMIT)?;
        let theirs = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v.get("identity").and_then(|i| i.as_str()).map(str::to_string));
        if theirs.as_deref().is_none_or(|t| t == ours) {
            continue;
        }
        let moved = format!("{name}-{}", crate::memory::stable_id(&ours));
        if root.join(&moved).exists() {
            bail!("memory folders {name} and {moved} both exist for other repositories; rename one by hand, then sync");
        }
        // The whole folder, its untracked history too.
        std::fs::rename(root.join(name), root.join(&moved))
            .with_context(|| format!("cannot move memory folder {name} to {moved}"))?;
        git(root, &["add", "-A", "--", name, &moved], GIT_LIMIT)?;
        git(
            root,
            &[
                "commit",
                "-q",
                "--no-verify",
                "-m",
                &format!("memory-save: {name} is {moved}: another machine's {name} belongs to another repository"),
            ],
            GIT_LIMIT,
        )?;
        report.push(format!("{name} (for {ours}) moved to {moved}: the remote's {name} belongs to another repository"));
    }
    Ok(report)
}

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
    let log = git(root, &["log", "--format=%H%x1f%ct%x1f%B%x1e", "--", name], GIT_LIMIT)?;
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
    let diff = git(root, &["show", "--format=", "--first-parent", &change.commit, "--", name], GIT_LIMIT)?;
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
    let edited = git(root, &["status", "--porcelain", "--", name], GIT_LIMIT)?;
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
    if git(root, &["rev-parse", "--verify", "-q", &parent], GIT_LIMIT).is_ok() {
        git(root, &["checkout", "-q", &parent, "--", name], GIT_LIMIT)?;
        // Files the change added are not in the parent: they go too.
        let added = git(root, &["diff", "--name-only", "--diff-filter=A", &parent, "HEAD", "--", name], GIT_LIMIT)?;
        for file in added.lines().filter(|l| !l.is_empty()) {
            git(root, &["rm", "-q", "--cached", "--ignore-unmatch", "--", file], GIT_LIMIT)?;
            let _ = std::fs::remove_file(root.join(file));
        }
    } else {
        git(root, &["rm", "-q", "-r", "--cached", "--ignore-unmatch", "--", name], GIT_LIMIT)?;
        for file in git(root, &["ls-tree", "-r", "--name-only", &target.commit, "--", name], GIT_LIMIT)?.lines() {
            let _ = std::fs::remove_file(root.join(file));
        }
    }
    let diff = git(root, &["diff", "--cached", "HEAD", "--", name], GIT_LIMIT)?;
    let subject = target.message.lines().next().unwrap_or_default();
    let subject = crate::store::history::unlabelled(subject);
    let label = if number == newest.number {
        let redo = target.message.starts_with("undo of #");
        format!("{} of #{number}: {subject}", if redo { "redo" } else { "undo" })
    } else {
        format!("undo of #{number}-#{}: {subject}", newest.number)
    };
    if !diff.trim().is_empty() {
        git(root, &["commit", "-q", "--no-verify", "-m", &label, "--", name], GIT_LIMIT)?;
    }
    Ok((diff, label))
}
