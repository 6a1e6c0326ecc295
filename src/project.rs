//! The project's name: the primary repository's folder, also from inside a
//! linked worktree; else the git top level; else the working directory.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

pub fn name_for(cwd: &Path) -> Result<String> {
    let folder = project_folder(cwd);
    let name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = name.strip_suffix(".git").filter(|n| !n.is_empty()).unwrap_or(&name).to_string();
    check_name(&name).map_err(|why| {
        anyhow::anyhow!("cannot name the project of {}: {why}", cwd.display())
    })?;
    Ok(name)
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

fn project_folder(cwd: &Path) -> PathBuf {
    use gix_discover::repository::Path as Repo;
    match gix_discover::upwards(cwd) {
        Ok((Repo::WorkTree(work_dir), _)) => work_dir,
        Ok((Repo::LinkedWorkTree { work_dir, git_dir }, _)) => primary_of(&git_dir).unwrap_or(work_dir),
        Ok((Repo::Repository(git_dir), _)) => git_dir,
        Err(_) => cwd.to_path_buf(),
    }
}

/// A linked worktree's git dir is `<common>/worktrees/<name>` and names its
/// common dir in `commondir`; the primary repository is the folder holding
/// that common dir (`<repo>/.git`), or the bare repository itself. A
/// submodule has no `commondir` and keeps its own name.
fn primary_of(git_dir: &Path) -> Option<PathBuf> {
    let common = std::fs::read_to_string(git_dir.join("commondir")).ok()?;
    let common = git_dir.join(common.trim()).canonicalize().ok()?;
    if common.file_name()? == ".git" { common.parent().map(Path::to_path_buf) } else { Some(common) }
}
