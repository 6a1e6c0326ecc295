//! The STALE and DUPLICATES notes of a fork's message: only lines the fork
//! is shown, each finding told once (docs/design.md §4).

use std::path::Path;

use crate::memory::prompt::StaleNote;
use crate::project::Project;
use crate::store::folder::Folder;

/// What this save's fork is told.
#[derive(Debug, Default)]
pub struct ForFork {
    pub stale: Vec<StaleNote>,
    pub duplicates: Vec<(String, String)>,
}

/// The notes for a fork shown `shown` (the gated memory) of the file
/// `file`, from the session's folder `cwd`.
pub fn for_fork(project: &Project, folder: &Folder, file: &str, shown: &str, cwd: &Path) -> ForFork {
    let visible: std::collections::HashSet<&str> = shown.lines().collect();
    let noted = crate::store::folder_record::read(folder).noted;
    let rules = crate::memory::template::critical_rules(file);
    let stale = crate::project::check::stale(project, folder, file, cwd, true)
        .into_iter()
        .filter(|s| visible.contains(s.text.as_str()))
        .filter(|s| !noted.stale.contains(&(s.text.clone(), s.path.clone())))
        .map(|s| StaleNote {
            rule: rules.iter().any(|r| r == s.text.trim()),
            line: s.text,
            path: s.path,
            found: s.found.describe(),
        })
        .collect();
    let duplicates = crate::memory::duplicates::find(shown)
        .into_iter()
        .map(|p| (p.first.1, p.second.1))
        .filter(|pair| !noted.duplicates.contains(pair))
        .collect();
    ForFork { stale, duplicates }
}

/// Records what this fork was told, once it answered.
pub fn mark_noted(folder: &Folder, told: &ForFork) {
    if told.stale.is_empty() && told.duplicates.is_empty() {
        return;
    }
    // A record of what was said, not an archive: the newest few hundred.
    let keep = |v: &mut Vec<(String, String)>| {
        let excess = v.len().saturating_sub(400);
        v.drain(..excess);
    };
    let noted = crate::store::folder_record::update(folder, false, |r| {
        r.noted.stale.extend(told.stale.iter().map(|s| (s.line.clone(), s.path.clone())));
        r.noted.duplicates.extend(told.duplicates.iter().cloned());
        keep(&mut r.noted.stale);
        keep(&mut r.noted.duplicates);
    });
    if let Err(e) = noted {
        crate::store::log::error(&format!("cannot record the notes told: {e:#}"));
    }
}
