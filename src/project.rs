//! The project's name: the primary repository's folder, also from inside a
//! linked worktree; else the git top level; else the working directory.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// The file that turns memory-save off for a repository (or folder).
pub const OFF_MARKER: &str = ".memory-save-off";

pub struct Project {
    pub name: String,
    /// The folders an off marker may sit in: the working tree's top level
    /// and, for a linked worktree, the primary repository.
    pub roots: Vec<PathBuf>,
}

impl Project {
    /// Why memory-save is off for this project, or `None` when it is on.
    pub fn off_reason(&self, config: &crate::config::Config) -> Option<String> {
        if std::env::var_os(crate::hook::DISABLE_ENV).is_some_and(|v| v == "1") {
            return Some(format!("off: {}=1", crate::hook::DISABLE_ENV));
        }
        if config.disabled_projects.iter().any(|p| p == &self.name) {
            return Some(format!("off: disabled_projects in {}", crate::config::FILE_NAME));
        }
        self.roots
            .iter()
            .map(|root| root.join(OFF_MARKER))
            .find(|marker| marker.exists())
            .map(|marker| format!("off: {}", marker.display()))
    }
}

pub fn locate(cwd: &Path) -> Result<Project> {
    let (top, primary) = project_folders(cwd);
    let name = folder_name(&primary);
    check_name(&name).map_err(|why| anyhow::anyhow!("cannot name the project of {}: {why}", cwd.display()))?;
    let mut roots = vec![top];
    if !roots.contains(&primary) {
        roots.push(primary);
    }
    Ok(Project { name, roots })
}

fn folder_name(folder: &Path) -> String {
    let name = folder.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    name.strip_suffix(".git").filter(|n| !n.is_empty()).unwrap_or(&name).to_string()
}

/// The name becomes a folder under the memory root, so it must not be able
/// to point anywhere else.
pub fn check_name(name: &str) -> Result<()> {
    let safe = !name.is_empty()
        && name != "."
        && name != ".."
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if !safe {
        bail!(
            "folder name {name:?} is not a safe project name (allowed: letters, digits, '.', '_', '-'); rename the folder to use memory-save there"
        );
    }
    Ok(())
}

/// The working tree's top level, and the folder that names the project.
fn project_folders(cwd: &Path) -> (PathBuf, PathBuf) {
    use gix_discover::repository::Path as Repo;
    if let Err(why) = git_files_are_plain(cwd) {
        crate::log::error(&format!("not looking for a repository above {}: {why}", cwd.display()));
        return (cwd.to_path_buf(), cwd.to_path_buf());
    }
    match gix_discover::upwards(cwd) {
        Ok((Repo::WorkTree(work_dir), _)) => (work_dir.clone(), work_dir),
        Ok((Repo::LinkedWorkTree { work_dir, git_dir }, _)) => {
            let primary = primary_of(&git_dir).unwrap_or_else(|| work_dir.clone());
            (work_dir, primary)
        }
        Ok((Repo::Repository(git_dir), _)) => (git_dir.clone(), git_dir),
        Err(_) => (cwd.to_path_buf(), cwd.to_path_buf()),
    }
}

/// gix-discover opens `.git`, `HEAD` and `commondir` itself, with plain
/// blocking opens: a FIFO planted at one of them would hang the hook and the
/// worker. So the nearest `.git` above `cwd` and the files discovery reads
/// are checked first to be regular files or folders. What remains is the
/// race of a file swapped for a FIFO between this check and gix's open,
/// which needs a writer already inside the repository; the hook's deadline
/// bounds it.
fn git_files_are_plain(cwd: &Path) -> std::result::Result<(), String> {
    let plain = |path: &Path| match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() && !meta.is_dir() => Err(format!("{} is not a regular file", path.display())),
        _ => Ok(()),
    };
    let Some(dot_git) = cwd.ancestors().map(|dir| dir.join(".git")).find(|p| std::fs::symlink_metadata(p).is_ok())
    else {
        return Ok(());
    };
    plain(&dot_git)?;
    let git_dir = if dot_git.is_file() {
        let text = crate::fsutil::read_regular(&dot_git, 4096).map_err(|e| format!("{e:#}"))?.unwrap_or_default();
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
/// common dir in `commondir`; the primary repository is the folder holding
/// that common dir (`<repo>/.git`), or the bare repository itself. A
/// submodule has no `commondir` and keeps its own name.
fn primary_of(git_dir: &Path) -> Option<PathBuf> {
    // A FIFO planted as `commondir` must not hang the hook: read only a
    // small regular file.
    let common = crate::fsutil::read_regular(&git_dir.join("commondir"), 4096).ok()??;
    let common = String::from_utf8(common).ok()?;
    let common = git_dir.join(common.trim()).canonicalize().ok()?;
    if common.file_name()? == ".git" { common.parent().map(Path::to_path_buf) } else { Some(common) }
}
