//! The save's first step: what it reads before anything is priced, and the
//! fork's message built from it, in one place (docs/design.md §4).

use std::path::Path;

use anyhow::Result;

use super::{SaveJob, baseline, repair, truth};
use crate::memory::{prompt, report};
use crate::project::Project;
use crate::store::folder::Folder;
use crate::store::notes::{self, Notes};
use crate::store::paths::Roots;

pub(super) struct Gathered {
    pub folder: Folder,
    /// MEMORY.md as read, `None` when there is none yet.
    pub memory: Option<String>,
    /// The read repaired it into the template (its report line leads).
    pub repaired: bool,
    pub notes: Notes,
    /// The rules of `notes.let_through`'s guards, as the file has them.
    pub let_through: Vec<String>,
    /// The rules the fork sees that carry a guard.
    guarded: Vec<String>,
    /// What the last SessionStart loaded, when the fork resumes it as it is.
    loaded: Option<String>,
    /// The memory the fork may see: the load's gate applied, held rules out.
    shown: Option<String>,
    topic_files: Vec<String>,
    pub told: truth::ForFork,
}

pub(super) fn gather(
    roots: &Roots,
    job: &SaveJob,
    located: &Project,
    config: &crate::config::Config,
) -> Result<Gathered> {
    let folder = located.folder(roots);
    let (memory, repaired) = {
        let _lock = folder.lock()?;
        repair::read_repaired(&folder)?.map_or((None, false), |(text, repaired)| (Some(text), repaired))
    };
    let notes = notes::read(&folder);
    // The session holds the memory it loaded: point to it, unless the fork
    // resumes something else (a copy, an earlier message), the last save
    // missed lines it must now see whole, or a team gate held lines back.
    let plain =
        job.resume_from.is_none() && job.resume_at.is_none() && notes.skipped.is_empty() && located.team_dir.is_none();
    let sessions = crate::store::state::SessionStore::new(roots.sessions_dir());
    let loaded = plain.then(|| baseline::read(&sessions, &job.session_id, job.baseline.as_ref())).flatten();
    // A line the load withholds, or a team rule held for review, never
    // reaches the fork either.
    let held_rules = match (&located.team_dir, &memory) {
        (Some(dir), Some(text)) if config.review_rules() => {
            crate::team::held_rules(roots, &located.identity, &located.name, dir, text)
        }
        (None, Some(text)) if config.review_rules() => crate::store::approvals::foreign(&folder, text),
        _ => Vec::new(),
    };
    let shown = memory.as_deref().map(|text| crate::team::without(&crate::memory::gate::load(text).text, &held_rules));
    let told = match (&memory, &shown) {
        (Some(file), Some(shown)) => truth::for_fork(located, &folder, file, shown, Path::new(&job.project_dir)),
        _ => truth::ForFork::default(),
    };
    let topic_files = folder.topic_files();
    // A guard's rule, only as the fork sees it in the file.
    let guards: Vec<_> = match &shown {
        Some(shown) => crate::store::guards::read(&folder)
            .into_iter()
            .filter(|g| shown.lines().any(|line| line == g.rule))
            .collect(),
        None => Vec::new(),
    };
    let let_through = guards.iter().filter(|g| notes.let_through.contains(&g.id)).map(|g| g.rule.clone()).collect();
    // A rule with two guards is named once.
    let mut guarded: Vec<String> = Vec::new();
    for g in guards {
        if !guarded.contains(&g.rule) {
            guarded.push(g.rule);
        }
    }
    Ok(Gathered { folder, memory, repaired, notes, loaded, shown, topic_files, told, let_through, guarded })
}

impl Gathered {
    /// The fork's message; `conversation`: the turns a fresh save reads.
    pub fn message(&self, conversation: Option<&str>) -> String {
        let shown = self.shown.as_deref();
        prompt::fork_message(&prompt::PromptInput {
            view: shown.map_or(prompt::MemoryView::Whole, |now| prompt::view(now, self.loaded.as_deref())),
            project: &self.folder.project,
            memory: shown,
            topic_files: &self.topic_files,
            last_skipped: &self.notes.skipped,
            last_refused: &self.notes.refused,
            more_skipped: self.notes.more_skipped,
            more_refused: self.notes.more_refused,
            conversation,
            stale: &self.told.stale,
            duplicates: &self.told.duplicates,
            let_through: &self.let_through,
            guarded: &self.guarded,
        })
    }

    /// A report line of this save, after the repair's line if it made one.
    pub fn report_with(&self, line: &str) -> String {
        report::join(self.repaired.then_some(repair::REPAIR_REPORT), Some(line))
    }
}
