//! Which memory a folder belongs to: the project's name, its identity, and
//! from both the memory folder it uses (docs/design.md §7).

pub mod check;
mod choice;
pub mod identity;

use choice::{Choice, choose_folder};
pub use choice::{adoptable, adoption, confirm_within, hashed_name, settle};

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use unicode_normalization::UnicodeNormalization;

use crate::store::paths::Roots;

/// The file that turns memory-save off for a repository (or folder).
pub const OFF_MARKER: &str = ".memory-save-off";

pub struct Project {
    /// The memory folder's name under the memory root.
    pub name: String,
    /// The project folder's own name, in NFC (`name` may add an identity hash).
    pub base: String,
    /// The repository's identity: its origin, else its path.
    pub identity: String,
    /// Every identity it has now: `identity`, then its path when it has an
    /// origin (a folder recorded before it gained one is still its own).
    pub identities: Vec<String>,
    /// Why `name` is the folder, in the words `status` shows.
    pub why: String,
    /// A moved repository's folder, found by name, not yet confirmed by its root.
    pub provisional: Option<String>,
    /// The repository's root commit, once `settle` looked.
    pub root: Option<String>,
    /// Where an off marker may sit: the work tree's top, and a worktree's primary.
    pub roots: Vec<PathBuf>,
    /// The team's memory in the working tree, when it keeps one (`team init`).
    pub team_dir: Option<PathBuf>,
    /// The git folder holding the repository's config.
    pub git_dir: Option<PathBuf>,
}

/// Where a repository keeps its team memory, from its working tree's top.
pub const TEAM_DIR: &str = ".claude/memory";
/// The file in it that records the choice, so every clone uses it.
pub const TEAM_MARKER: &str = ".memory-save-team";

impl Project {
    pub fn folder(&self, roots: &crate::store::paths::Roots) -> crate::store::folder::Folder {
        match &self.team_dir {
            Some(dir) => crate::store::folder::Folder::team(roots, &self.name, dir),
            None => crate::store::folder::Folder::with_record(
                roots,
                &self.name,
                crate::store::owner::Record {
                    root: self.root.clone(),
                    ..crate::store::owner::Record::new(&self.identity)
                },
            ),
        }
    }

    /// The repository's root commit, asked of git within `limit`.
    pub fn root_commit(&self, limit: std::time::Duration) -> Option<String> {
        match (&self.git_dir, self.roots.first()) {
            (Some(git_dir), Some(top)) => crate::git::root_commit(top, git_dir, limit),
            _ => None,
        }
    }

    /// What the memory block calls this memory.
    pub fn label(&self) -> String {
        match (&self.team_dir, &self.provisional) {
            (Some(_), _) => format!("{} · team memory in {TEAM_DIR}/MEMORY.md", self.name),
            (None, Some(why)) => format!("{} · {why}", self.name),
            (None, None) => self.name.clone(),
        }
    }

    /// Why memory-save is off for this project, or `None` when it is on.
    pub fn off_reason(&self, config: &crate::config::Config) -> Option<String> {
        if crate::env::disabled() {
            return Some(format!("off: {}=1", crate::env::DISABLE));
        }
        let named = |p: &String| *p == self.name || nfc(p) == self.base || self.identities.contains(p);
        if config.disabled_projects.iter().any(named) {
            return Some(format!("off: disabled_projects in {}", crate::config::FILE_NAME));
        }
        self.roots
            .iter()
            .map(|root| root.join(OFF_MARKER))
            .find(|marker| marker.exists())
            .map(|marker| format!("off: {}", marker.display()))
    }
}

/// The project of `cwd` and the folder under the memory root its memory
/// lives in. Reads only what is recorded: a hook calls it.
pub fn locate(cwd: &Path, roots: &Roots, config: &crate::config::Config) -> Result<Project> {
    let found = project_folders(cwd);
    let base = nfc(&folder_name(&found.primary));
    check_name(&base).map_err(|why| anyhow::anyhow!("cannot name the project of {}: {why}", cwd.display()))?;
    let path = identity::of_folder(&found.primary);
    let identity = found.common_dir.as_deref().and_then(identity::of_origin).unwrap_or_else(|| path.clone());
    let mut identities = vec![identity.clone()];
    if path != identity {
        identities.push(path);
    }
    let explicit = identities.iter().find_map(|id| config.names.get(id).map(|name| (id.as_str(), name.as_str())));
    // A marker that is a real file in a real folder: never a link.
    let team = found.top.join(TEAM_DIR);
    let real = |p: &Path| std::fs::symlink_metadata(p).is_ok_and(|m| !m.file_type().is_symlink());
    let team_dir = (real(&found.top.join(".claude")) && real(&team) && real(&team.join(TEAM_MARKER))).then_some(team);
    // A team memory is the working tree's own files: its state is its key's
    // (`Folder::key`, by the working tree's path), so no folder of the
    // memory root, recorded or pulled later, has a say in its name.
    let Choice { name, why, provisional } = match &team_dir {
        Some(_) => choice::team_name(&base, explicit)?,
        None => choose_folder(roots, &base, &identities, explicit, found.common_dir.is_some())?,
    };
    let mut roots = vec![found.top];
    if !roots.contains(&found.primary) {
        roots.push(found.primary);
    }
    Ok(Project {
        name,
        base,
        identity,
        identities,
        why,
        provisional,
        root: None,
        roots,
        team_dir,
        git_dir: found.common_dir,
    })
}

/// The project of `cwd` with its folder confirmed by the root commit and
/// recorded (`settle`): the decision a save and every command that writes a
/// memory (import, edit) make alike. May run git, so never a hook's.
pub fn settled(cwd: &Path, roots: &Roots, config: &crate::config::Config) -> Result<Project> {
    let mut project = locate(cwd, roots, config)?;
    settle(roots, &mut project)?;
    Ok(project)
}

pub(crate) fn nfc(name: &str) -> String {
    name.nfc().collect()
}

fn folder_name(folder: &Path) -> String {
    let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.strip_suffix(".git").filter(|n| !n.is_empty()).unwrap_or(&name).to_string()
}

/// The name becomes a folder and MEMORY.md's title: any script and spaces are
/// fine; refused is only what cannot be a folder name (empty, `.`, `..`, `/`,
/// NUL, over 255 bytes) or would break the title line (a control character).
pub fn check_name(name: &str) -> Result<()> {
    let why = if name.is_empty() || name == "." || name == ".." {
        "it is not a folder name"
    } else if name.contains('/') || name.contains('\0') {
        "it holds a '/' or NUL"
    } else if name.len() > 255 {
        "it is longer than 255 bytes"
    } else if name.chars().any(char::is_control) || crate::memory::text::check(name).is_err() {
        "it holds a control, bidirectional or invisible character"
    } else {
        return Ok(());
    };
    bail!(
        "folder name {name:?} cannot name a memory folder ({why}); rename the folder or set a name in the config ([names])"
    )
}

/// The top of the working tree `cwd` is in (`cwd` itself outside git):
/// where a project's `.claude/` settings live.
pub fn work_tree_top(cwd: &Path) -> PathBuf {
    project_folders(cwd).top
}

struct Found {
    top: PathBuf,
    primary: PathBuf,
    /// The git folder holding the repository's `config`.
    common_dir: Option<PathBuf>,
}

/// The working tree's top, the folder that names the project, and the git folder.
fn project_folders(cwd: &Path) -> Found {
    use gix_discover::repository::Path as Repo;
    let plain = |dir: &Path| Found { top: dir.to_path_buf(), primary: dir.to_path_buf(), common_dir: None };
    if let Err(why) = git_files_are_plain(cwd) {
        crate::store::log::error(&format!("not looking for a repository above {}: {why}", cwd.display()));
        return plain(cwd);
    }
    match gix_discover::upwards(cwd) {
        Ok((Repo::WorkTree(work_dir), _)) => {
            Found { common_dir: Some(work_dir.join(".git")), top: work_dir.clone(), primary: work_dir }
        }
        Ok((Repo::LinkedWorkTree { work_dir, git_dir }, _)) => {
            let common = common_of(&git_dir);
            let primary = common.as_deref().and_then(primary_of).unwrap_or_else(|| work_dir.clone());
            Found { top: work_dir, primary, common_dir: Some(common.unwrap_or(git_dir)) }
        }
        Ok((Repo::Repository(git_dir), _)) => {
            Found { top: git_dir.clone(), primary: git_dir.clone(), common_dir: Some(git_dir) }
        }
        Err(_) => plain(cwd),
    }
}

/// gix-discover opens `.git`, `HEAD` and `commondir` blocking, and tries every
/// folder from `cwd` up as a bare repository: a planted FIFO would hang the
/// hook. So each file it reads, up to the nearest `.git`, must be a regular
/// file or folder; the race left is bounded by the deadline (docs/security.md).
fn git_files_are_plain(cwd: &Path) -> std::result::Result<(), String> {
    let plain = |path: &Path| match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Err(format!("{} is not a regular file", path.display())),
        _ => Ok(()),
    };
    let mut nearest = None;
    for dir in cwd.ancestors() {
        for name in ["HEAD", "commondir", "gitdir", ".git"] {
            plain(&dir.join(name))?;
        }
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            nearest = Some(dir.join(".git"));
            break;
        }
    }
    let Some(dot_git) = nearest else {
        return Ok(());
    };
    let git_dir = if dot_git.is_file() {
        let text =
            crate::store::fsutil::read_regular(&dot_git, 4096).map_err(|e| format!("{e:#}"))?.unwrap_or_default();
        let text = String::from_utf8_lossy(&text);
        let Some(target) = text.trim().strip_prefix("gitdir:") else {
            return Ok(());
        };
        dot_git.parent().unwrap_or(cwd).join(target.trim())
    } else {
        dot_git
    };
    for name in ["HEAD", "commondir", "gitdir", "config"] {
        plain(&git_dir.join(name))?;
    }
    Ok(())
}

/// A linked worktree's git dir is `<common>/worktrees/<name>` and names its
/// common dir in `commondir`. A submodule has no `commondir`.
fn common_of(git_dir: &Path) -> Option<PathBuf> {
    // A FIFO planted as `commondir` must not hang the hook.
    let common = crate::store::fsutil::read_regular(&git_dir.join("commondir"), 4096).ok()??;
    let common = String::from_utf8(common).ok()?;
    git_dir.join(common.trim()).canonicalize().ok()
}

/// The folder holding the common dir (`<repo>/.git`), or the bare repository.
fn primary_of(common: &Path) -> Option<PathBuf> {
    if common.file_name()? == ".git" { common.parent().map(Path::to_path_buf) } else { Some(common.to_path_buf()) }
}
