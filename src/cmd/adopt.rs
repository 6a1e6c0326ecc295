//! `memory-save adopt <folder>`: this repository takes over a memory folder
//! recorded for another identity (a moved, copied or forked repository's),
//! as a history entry `undo` takes back (docs/design.md §7). Its approved
//! rules come with it, since they live in the folder and beside its name.

use anyhow::{Result, bail};

use crate::store::folder::Folder;
use crate::store::history::{self, Change, Origin};
use crate::store::owner::{self, IDENTITY_FILE};

/// Use a memory folder recorded for another path or repository as this
/// repository's memory (status names the candidates).
#[derive(Debug, clap::Args)]
pub struct AdoptArgs {
    /// The memory folder's name, as `memory-save status` shows it.
    folder: String,
}

impl super::Run for AdoptArgs {
    fn run(&self) -> Result<()> {
        let super::Here { roots, project, .. } = super::here()?;
        if project.team_dir.is_some() {
            bail!(
                "this repository keeps a team memory in {}; adopt takes over a personal memory folder only",
                crate::project::TEAM_DIR
            );
        }
        crate::project::check_name(&self.folder)?;
        // The memory root's own `.git` and the like are no memory folder.
        if self.folder.starts_with('.') {
            bail!("{} is not a memory folder (a name starting with . is the memory root's own)", self.folder);
        }
        let dir = roots.project_dir(&self.folder);
        if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            bail!(
                "no memory folder {} in {}; memory-save status names the folders this repository could adopt",
                self.folder,
                roots.memory.display()
            );
        }
        let Some(record) = crate::project::adoption(&roots, &project, &self.folder) else {
            return super::println(&format!("memory folder {} is already this repository's memory", self.folder));
        };
        let was = record.shown_identity();
        let folder = Folder::with_identity(&roots, &self.folder, &project.identity);
        let message = format!("adopt: {} took over this memory, recorded for {}", project.identity, record.seen_at());
        {
            let _lock = folder.lock()?;
            let origin = Origin { by: Some("memory-save adopt".into()), ..Origin::default() };
            let recorded = history::record(&folder, &message, &[Change::Rewrite(IDENTITY_FILE)], &origin, Vec::new())?;
            if let Err(e) = folder.write_file(IDENTITY_FILE, &record.text()) {
                recorded.roll_back(&folder)?;
                return Err(e);
            }
            recorded.seal(&folder)?;
            crate::sync::commit_change(&folder.dir, &message, None, None)?;
        }
        owner::set_adopted(&roots, &project.identity, &self.folder)?;
        let number =
            crate::store::changes::History { folder: &folder }.changes()?.first().map(|c| c.number).unwrap_or_default();
        super::println(&format!(
            "memory-save: this repository ({}) now uses memory folder {} (recorded for {was}; it used {} before). \
             Its approved rules came with it. Take it back with: memory-save undo {number}",
            project.identity, self.folder, project.name
        ))
    }
}
