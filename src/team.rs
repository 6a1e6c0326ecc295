//! A team's memory in its own repository (`team init`): `.claude/memory/` in the
//! working tree, merged through our driver. Saves never commit it: a person
//! reviews with `git diff` and commits it like any file.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::memory::gate::instruction_lines;
use crate::memory::template;
use crate::project::{TEAM_DIR, TEAM_MARKER};
use crate::store::folder::Folder;
use crate::store::fsutil;
use crate::store::paths::Roots;

const ATTRIBUTES: [&str; 2] = [".claude/memory/*.md merge=memory-save", ".claude/memory/guards.json merge=memory-save"];
const TEAM_GITIGNORE: &str =
    "# memory-save: what stays on each machine\n/.history/\n/MEMORY.pre-migration.md\n/memory-save.failed-reply.txt\n";
const MARKER_TEXT: &str = "This repository keeps its Claude Code memory here (memory-save team mode).\n\
Every clone with memory-save loads and saves .claude/memory/MEMORY.md; review its changes with git diff and commit them like any file.\n";

/// Registers the merge driver in the repository's config unless it is there;
/// fails open (a clone without it merges as text).
pub fn register_driver(git_dir: Option<&Path>) {
    let Some(git_dir) = git_dir else { return };
    if crate::git::has_merge_driver(git_dir) {
        return;
    }
    if let Err(e) = crate::sync::register_driver(git_dir) {
        crate::store::log::error(&format!("cannot register the merge driver in {}: {e:#}", git_dir.display()));
    }
}

fn read_seen(roots: &Roots, project: &str, dir: &Path) -> Option<Vec<String>> {
    crate::store::folder_record::read(&Folder::team(roots, project, dir)).team_rules
}

fn write_seen(roots: &Roots, project: &str, dir: &Path, seen: &[String]) {
    let folder = Folder::team(roots, project, dir);
    if let Err(e) = crate::store::folder_record::update(&folder, false, |r| r.team_rules = Some(seen.to_vec())) {
        crate::store::log::error(&format!("cannot record the team's rules: {e:#}"));
    }
}

/// Rules quoted for a report line.
pub fn quote_rules(rules: &[String]) -> String {
    rules.iter().map(|r| format!("\"{}\"", crate::memory::text::shorten(r, 200))).collect::<Vec<_>>().join("; ")
}

/// The CRITICAL RULES a team memory gained since this machine last loaded it
/// (a pull, a teammate's commit, a hand edit), quoted for the user; without
/// the review gate they count as seen from now on.
pub fn new_rules(roots: &Roots, project: &str, dir: &Path, memory: &str) -> Option<String> {
    let now = instruction_lines(memory);
    let seen = read_seen(roots, project, dir);
    if seen.as_ref() != Some(&now) {
        write_seen(roots, project, dir, &now);
    }
    let seen = seen?; // the first load sees nothing new
    let new: Vec<String> = now.into_iter().filter(|r| !seen.contains(r)).collect();
    (!new.is_empty()).then(|| {
        crate::memory::text::visible(&format!(
            "memory-save: the team memory has new CRITICAL RULES since this machine last loaded it: {}",
            quote_rules(&new)
        ))
    })
}

/// The team rules this machine approved, kept by the repository's identity,
/// never a path, so every clone and worktree of it shares them; beside
/// `projects/`, where a folder named `team-<8 hex>.approved` keeps its record.
fn approved_path(roots: &Roots, identity: &str) -> PathBuf {
    let file = format!("team-{}.approved.json", crate::memory::stable_id(identity));
    roots.state.join("team-approvals").join(file)
}

/// The rules approved for `identity`; until the first approval, the rules this
/// clone last saw stand in, so none disappear.
fn approved(roots: &Roots, identity: &str, project: &str, dir: &Path) -> Vec<String> {
    crate::store::record::read(&approved_path(roots, identity))
        .unwrap_or_else(|| read_seen(roots, project, dir).unwrap_or_default())
}

/// With the review gate: team CRITICAL RULES not approved here, even at first load.
pub fn held_rules(roots: &Roots, identity: &str, project: &str, dir: &Path, memory: &str) -> Vec<String> {
    let approved = approved(roots, identity, project, dir);
    instruction_lines(memory).into_iter().filter(|r| !approved.contains(r)).collect()
}

/// `memory` without the `held` lines (an emptied section gets its placeholder).
pub fn without(memory: &str, held: &[String]) -> String {
    if held.is_empty() {
        return memory.to_string();
    }
    let kept: Vec<&str> = memory.lines().filter(|l| !held.iter().any(|h| h == l.trim())).collect();
    crate::memory::template::tidy_placeholders(&(kept.join("\n") + "\n"))
}

/// The report of held rules, for the session's first message.
pub fn held_report(held: &[String]) -> Option<String> {
    (!held.is_empty()).then(|| held_report_for("new CRITICAL RULES in the team memory", held))
}

pub fn held_report_for(what: &str, held: &[String]) -> String {
    crate::memory::text::visible(&format!(
        "memory-save: {what} wait for your review and are not loaded (memory-save review): {}",
        quote_rules(held)
    ))
}

/// The id `review` shows a held team rule by.
pub fn rule_id(rule: &str) -> String {
    format!("team-{}", crate::memory::stable_id(rule))
}

/// `review --approve` of a team rule, for this repository on this machine.
pub fn approve(roots: &Roots, identity: &str, project: &str, dir: &Path, rule: &str) -> Result<()> {
    let mut approved = approved(roots, identity, project, dir);
    if !approved.iter().any(|r| r == rule) {
        approved.push(rule.to_string());
    }
    crate::store::record::write(&approved_path(roots, identity), &approved)
}

/// `memory-save team init` in `cwd`'s repository; what it wrote.
pub fn init(roots: &Roots, cwd: &Path, config: &crate::config::Config) -> Result<Vec<String>> {
    let located = crate::project::locate(cwd, roots, config)?;
    let Some(git_dir) = located.git_dir.clone() else {
        bail!("{} is not in a git repository; team memory lives in one (git init first)", cwd.display());
    };
    let top = located.roots.first().cloned().context("a project has a top folder")?;
    let dir = top.join(TEAM_DIR);
    let mut report = Vec::new();
    fs_err::create_dir_all(&dir)?;
    let memory = dir.join(crate::store::folder::MEMORY_FILE);
    if !memory.exists() {
        // The personal memory of this project, if it has one, starts it.
        let personal = located.folder(roots).read_memory()?;
        let text = personal.unwrap_or_else(|| template::skeleton(&located.name));
        fsutil::write_atomic(&memory, text.as_bytes(), true)?;
        report.push(format!("wrote {}", memory.display()));
    }
    for (name, text) in [(TEAM_MARKER, MARKER_TEXT), (".gitignore", TEAM_GITIGNORE)] {
        let path = dir.join(name);
        if !path.exists() {
            fsutil::write_atomic(&path, text.as_bytes(), true)?;
            report.push(format!("wrote {}", path.display()));
        }
    }
    let attributes = top.join(".gitattributes");
    let before = std::fs::read_to_string(&attributes).unwrap_or_default();
    let missing: Vec<&str> = ATTRIBUTES.into_iter().filter(|a| !before.lines().any(|l| l.trim() == *a)).collect();
    if !missing.is_empty() {
        let mut text = before.clone();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for attribute in missing {
            text.push_str(attribute);
            text.push('\n');
        }
        fsutil::write_atomic(&attributes, text.as_bytes(), true)?;
        report.push(format!("added the merge driver to {}", attributes.display()));
    }
    register_driver(Some(&git_dir));
    report.push(format!(
        "commit {TEAM_DIR} and .gitattributes to share it; every clone with memory-save then loads and saves it"
    ));
    Ok(report)
}
