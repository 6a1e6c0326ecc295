//! The lines of MEMORY.md that name a path the repository no longer has, and
//! what became of it (docs/design.md §4, the STALE note); never run by a hook.
//! The remote's default branch counts, so lines do not flap between machines.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::Project;
use crate::memory::refs::{self, Reference};
use crate::store::folder::Folder;

/// The log walk's bounds: commits that renamed or deleted files, and time.
pub const WALK_COMMITS: usize = 1000;
pub const WALK_LIMIT: Duration = Duration::from_secs(2);
/// Each of the other git commands is quick, or git is stuck.
const QUICK: Duration = Duration::from_secs(2);
/// Branches whose trees are asked about, at most.
const MAX_BRANCHES: usize = 20;

/// A line that names a path the repository does not have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stale {
    pub line: usize,
    pub text: String,
    pub path: String,
    pub found: Fate,
}

/// What became of a missing path, as far as the walk saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fate {
    Renamed {
        to: String,
        commit: String,
    },
    Deleted {
        commit: String,
    },
    /// Not on disk, on a branch, nor in the walk (`walked`: how far, if it ran).
    NotFound {
        walked: Option<Walked>,
    },
}

/// How far the log walk went.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "through", rename_all = "snake_case")]
pub enum Walked {
    /// The whole history this clone has.
    History,
    /// The newest `WALK_COMMITS` commits that renamed or deleted files.
    Newest,
    /// As many as it read before its time ran out.
    TimedOut { commits: usize },
}

impl Fate {
    pub fn describe(&self) -> String {
        match self {
            Fate::Renamed { to, commit } => match crate::memory::refs::plain_path(to) {
                Some(to) => format!("renamed to {to} (commit {commit})"),
                // A file's name can be anything; the note quotes no odd one.
                None => format!("renamed to a name not shown here (commit {commit})"),
            },
            Fate::Deleted { commit } => format!("deleted in commit {commit}"),
            Fate::NotFound { walked: Some(Walked::History) } => {
                "not found (not in the repository's history)".to_string()
            }
            Fate::NotFound { walked: Some(Walked::Newest) } => {
                format!("not found (not in the last {WALK_COMMITS} commits that renamed or deleted files)")
            }
            Fate::NotFound { walked: Some(Walked::TimedOut { commits }) } => format!(
                "not found (not in the {commits} newest commits that renamed or deleted files, walked in {} s)",
                WALK_LIMIT.as_secs()
            ),
            Fate::NotFound { walked: None } => "not found".to_string(),
        }
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Cached {
    head: String,
    memory: u64,
    walked: bool,
    stale: Vec<Stale>,
}

/// The stale lines of `memory` (line numbers are the file's); `walk`: search git's log.
pub fn stale(project: &Project, folder: &Folder, memory: &str, cwd: &Path, walk: bool) -> Vec<Stale> {
    let refs = refs::find(memory);
    if refs.is_empty() {
        return Vec::new();
    }
    let Some(top) = project.roots.first() else { return Vec::new() };
    let git = project.git_dir.is_some();
    let head = if git {
        crate::git::local(top, &["rev-parse", "-q", "--verify", "HEAD"], b"", QUICK)
            .map(|(out, _)| out.trim().to_string())
            .unwrap_or_default()
    } else {
        String::new()
    };
    let memory_hash = crate::memory::stable_hash(memory);
    if let Some(cached) =
        crate::store::folder_record::read(folder).check.and_then(|v| serde_json::from_value::<Cached>(v).ok())
        && cached.head == head
        && cached.memory == memory_hash
        && (cached.walked || !walk)
    {
        return cached.stale;
    }
    // From the session's folder too, when it is inside the repository.
    let prefix = cwd.strip_prefix(top).ok().filter(|p| !p.as_os_str().is_empty()).and_then(|p| p.to_str());
    let forms = |path: &str| -> Vec<String> {
        let mut forms = vec![path.to_string()];
        if let Some(prefix) = prefix {
            forms.push(format!("{prefix}/{path}"));
        }
        forms
    };
    let on_disk = |path: &str| forms(path).iter().any(|p| std::fs::symlink_metadata(top.join(p)).is_ok());
    let mut missing: Vec<&Reference> = refs.iter().filter(|r| !on_disk(&r.path)).collect();
    if git && !missing.is_empty() {
        let mut paths: Vec<String> = missing.iter().flat_map(|r| forms(&r.path)).collect();
        paths.sort();
        paths.dedup();
        let known = known_to_git(top, &paths);
        missing.retain(|r| !forms(&r.path).iter().any(|p| known.contains(p)));
    }
    // A name under a folder the same line names (`crates/core` holds
    // lib.rs, a vendored package's `conf/`), or a file the repository has
    // by that name somewhere (`main.go`), is the repository's: two model
    // runs rewrote good lines when such names were called gone.
    missing.retain(|r| {
        !refs.iter().filter(|o| o.line == r.line && o.path != r.path).any(|o| {
            let parent = o.path.rsplit_once('/').map(|(dir, _)| dir);
            [Some(o.path.as_str()), parent].into_iter().flatten().any(|dir| on_disk(&format!("{dir}/{}", r.path)))
        })
    });
    if git && !missing.is_empty() {
        let tracked = crate::git::local(top, &["ls-files", "-z"], b"", QUICK).map(|(out, _)| out).unwrap_or_default();
        // One pass over the list, whatever its size: each tail after a `/`
        // is a file's name, and each of its folder prefixes a folder's.
        let wanted: std::collections::HashSet<&str> = missing.iter().map(|r| r.path.as_str()).collect();
        let mut present = std::collections::HashSet::new();
        for file in tracked.split('\0') {
            for (at, _) in file.match_indices('/') {
                let tail = &file[at + 1..];
                let folders = tail.match_indices('/').map(|(end, _)| &tail[..end]);
                present.extend(std::iter::once(tail).chain(folders).filter(|name| wanted.contains(name)));
            }
        }
        missing.retain(|r| !present.contains(r.path.as_str()));
    }
    // A repository with no commit has no log to walk.
    let found = if walk && !head.is_empty() && !missing.is_empty() {
        let wanted: Vec<String> = missing.iter().map(|r| r.path.clone()).collect();
        walk_log(top, &wanted, &on_disk)
    } else {
        BTreeMap::new()
    };
    let lines: Vec<&str> = memory.lines().collect();
    let stale: Vec<Stale> = missing
        .iter()
        .map(|r| Stale {
            line: r.line,
            text: lines.get(r.line - 1).copied().unwrap_or_default().to_string(),
            path: r.path.clone(),
            found: found.get(&r.path).cloned().unwrap_or(Fate::NotFound { walked: None }),
        })
        .collect();
    let record = Cached { head, memory: memory_hash, walked: walk, stale: stale.clone() };
    let cached = serde_json::to_value(&record)
        .map_err(anyhow::Error::from)
        .and_then(|value| crate::store::folder_record::update(folder, false, |r| r.check = Some(value)));
    if let Err(e) = cached {
        crate::store::log::error(&format!("cannot cache the memory check: {e:#}"));
    }
    stale
}

/// Which of `paths` git knows: tracked on a local branch or the remote's
/// default branch, or ignored.
fn known_to_git(top: &Path, paths: &[String]) -> std::collections::BTreeSet<String> {
    let mut known = std::collections::BTreeSet::new();
    let branches = crate::git::local(
        top,
        &["for-each-ref", "--format=%(refname)", "refs/heads", "refs/remotes/origin/HEAD"],
        b"",
        QUICK,
    )
    .map(|(out, _)| out.lines().take(MAX_BRANCHES).map(str::to_string).collect::<Vec<_>>())
    .unwrap_or_default();
    if !branches.is_empty() {
        let asked: Vec<(String, String)> =
            branches.iter().flat_map(|b| paths.iter().map(move |p| (p.clone(), format!("{b}:{p}")))).collect();
        let input: String = asked.iter().map(|(_, line)| format!("{line}\n")).collect();
        if let Ok((out, _)) = crate::git::local(top, &["cat-file", "--batch-check"], input.as_bytes(), QUICK) {
            for ((path, _), answer) in asked.iter().zip(out.lines()) {
                if !answer.ends_with(" missing") && !answer.ends_with(" ambiguous") {
                    known.insert(path.clone());
                }
            }
        }
    }
    // A folder's pattern (`/target/`) matches only a name known to be a folder,
    // so each path is asked both ways; NUL-separated, since git quotes a
    // non-ASCII name in its line output.
    let input: String = paths.iter().filter(|p| !known.contains(*p)).map(|p| format!("{p}\0{p}/\0")).collect();
    if !input.is_empty()
        && let Ok((out, _)) = crate::git::local(top, &["check-ignore", "-z", "--stdin"], input.as_bytes(), QUICK)
    {
        known.extend(out.split('\0').filter(|l| !l.is_empty()).map(|l| l.trim_end_matches('/').to_string()));
    }
    known
}

/// One bounded walk of git's log: for each wanted path, the newest rename or
/// deletion of it or a file in it, followed while the new name is gone too.
fn walk_log(top: &Path, wanted: &[String], on_disk: &dyn Fn(&str) -> bool) -> BTreeMap<String, Fate> {
    let count = format!("--max-count={WALK_COMMITS}");
    let args =
        ["-c", "core.quotePath=false", "log", &count, "--diff-filter=DR", "-M", "--name-status", "--format=%x1e%h"];
    let (log, timed_out) = match crate::git::local(top, &args, b"", WALK_LIMIT) {
        Ok(run) => run,
        Err(e) => {
            crate::store::log::error(&format!("the memory check's log walk failed: {e:#}"));
            return BTreeMap::new();
        }
    };
    // Newest first: the first event that took a path away is its latest.
    let mut gone: BTreeMap<String, Fate> = BTreeMap::new();
    let mut commits = 0;
    for record in log.split('\x1e').filter(|r| !r.trim().is_empty()) {
        let mut lines = record.lines();
        let commit = lines.next().unwrap_or_default().trim().to_string();
        commits += 1;
        for line in lines {
            let fields: Vec<&str> = line.split('\t').collect();
            let event = match fields.as_slice() {
                [status, old, new] if status.starts_with('R') => {
                    Some((old.to_string(), Fate::Renamed { to: new.to_string(), commit: commit.clone() }))
                }
                [status, path] if status.starts_with('D') => {
                    Some((path.to_string(), Fate::Deleted { commit: commit.clone() }))
                }
                _ => None,
            };
            if let Some((path, found)) = event {
                gone.entry(path).or_insert(found);
            }
        }
    }
    let walked = if timed_out {
        Walked::TimedOut { commits }
    } else if commits >= WALK_COMMITS {
        Walked::Newest
    } else {
        Walked::History
    };
    let mut out = BTreeMap::new();
    for path in wanted {
        let mut found = event_for(&gone, path);
        // A → B, then B → C: name C, if C is there.
        for _ in 0..10 {
            match &found {
                Some(Fate::Renamed { to, .. }) if !on_disk(to) => match event_for(&gone, to) {
                    Some(next) => found = Some(next),
                    None => break,
                },
                _ => break,
            }
        }
        out.insert(path.clone(), found.unwrap_or(Fate::NotFound { walked: Some(walked) }));
    }
    out
}

/// The event that took `path` away, or for a folder the newest of a file in it.
fn event_for(gone: &BTreeMap<String, Fate>, path: &str) -> Option<Fate> {
    if let Some(found) = gone.get(path) {
        return Some(found.clone());
    }
    let inside = format!("{path}/");
    gone.iter().find(|(old, _)| old.starts_with(&inside)).map(|(old, found)| match found {
        Fate::Renamed { to, commit } => {
            let rest = &old[inside.len()..];
            let to = to.strip_suffix(&format!("/{rest}")).unwrap_or(to).to_string();
            Fate::Renamed { to, commit: commit.clone() }
        }
        other => other.clone(),
    })
}

/// What `show --check`, `status` and `doctor` report about a memory.
#[derive(Debug, Serialize)]
pub struct Findings {
    pub memory: String,
    /// The lines the load gate leaves out of every session and fork.
    pub withheld: Vec<crate::memory::gate::Withheld>,
    pub stale: Vec<Stale>,
    pub duplicates: Vec<Duplicate>,
}

/// Two lines of one section that say nearly the same thing.
#[derive(Debug, Serialize)]
pub struct Duplicate {
    pub section: String,
    pub lines: [usize; 2],
    pub texts: [String; 2],
    pub similarity: f64,
}

/// The findings about `memory`, MEMORY.md's text at `folder`; a command a
/// person waits on may skip the log `walk` and take the last one's answer.
pub fn findings(project: &Project, folder: &Folder, memory: &str, cwd: &Path, walk: bool) -> Findings {
    Findings {
        memory: folder.memory_path().display().to_string(),
        withheld: crate::memory::gate::load(memory).withheld,
        stale: stale(project, folder, memory, cwd, walk),
        duplicates: crate::memory::duplicates::find(memory)
            .into_iter()
            .map(|p| Duplicate {
                section: p.section,
                lines: [p.first.0, p.second.0],
                texts: [p.first.1, p.second.1],
                similarity: (p.similarity * 100.0).round() / 100.0,
            })
            .collect(),
    }
}

impl Findings {
    /// `1 line no session loads, 2 stale lines, 1 near-duplicate pair`, or
    /// `None` when all is well.
    pub fn count(&self) -> Option<String> {
        let plural = crate::memory::report::plural;
        let mut parts = Vec::new();
        if !self.withheld.is_empty() {
            parts.push(format!("{} no session loads", plural(self.withheld.len() as u64, "line")));
        }
        if !self.stale.is_empty() {
            parts.push(format!(
                "{} naming a path the repository no longer has",
                plural(self.stale.len() as u64, "line")
            ));
        }
        if !self.duplicates.is_empty() {
            parts.push(plural(self.duplicates.len() as u64, "near-duplicate pair"));
        }
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    /// Each finding with its line numbers, for a person.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for w in &self.withheld {
            out.push_str(&format!("line {}: {}; no session loads it: memory-save edit\n", w.line, w.why));
        }
        for s in &self.stale {
            out.push_str(&format!("line {}: `{}` {}\n    {}\n", s.line, s.path, s.found.describe(), s.text));
        }
        for d in &self.duplicates {
            out.push_str(&format!(
                "lines {} and {} ({}) say nearly the same thing:\n    {}\n    {}\n",
                d.lines[0], d.lines[1], d.section, d.texts[0], d.texts[1]
            ));
        }
        out
    }
}
