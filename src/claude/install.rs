//! The install transaction: our entries added or taken out where they stand
//! (`jsonedit`) in the file as it is now, keeping every other byte and the
//! file's mode; `store::installs` records only what install itself set.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::hooks::{BINARY_NAME, Program, install_into, uninstall_from};
use super::jsonedit;
use super::settings::{Scope, parse_settings, read_settings};
use crate::memory::text::unified_diff;
use crate::store::fsutil::write_atomic_keeping_mode;
use crate::store::installs::{self, InstallRecord};
use crate::store::paths::Roots;

const BACKUP_SUFFIX: &str = ".memory-save.bak";
pub const AUTO_MEMORY: &str = "autoMemoryEnabled";
const NEW_FILE_MODE: u32 = 0o600;

/// What `install` is asked to do.
pub struct Request<'a> {
    pub roots: &'a Roots,
    /// The settings file.
    pub path: &'a Path,
    pub scope: Scope,
    pub program: &'a Program,
    pub statusline: bool,
    pub disable_auto_memory: bool,
    pub dry_run: bool,
}

/// What an install did.
pub enum Installed {
    /// The file holds our entries as they should be.
    UpToDate,
    /// Nothing written: what would change, the diff, and why install would be refused.
    DryRun { what: String, diff: String, refused: Option<String> },
    /// Written: what changed, the backup of the file as it was (the
    /// first install of a cycle), and whether auto memory was turned off.
    Written { what: String, backup: Option<PathBuf>, auto_memory_off: bool },
}

/// Installs our entries into `req.path`, recording what was written for `uninstall`.
pub fn install(req: &Request) -> Result<Installed> {
    let (path, roots, program, scope) = (req.path, req.roots, req.program, req.scope);
    let before = read_settings(path)?;
    let settings = parse_settings(path, before.as_deref()).map_err(to_fix)?;
    let mut after = settings.clone();
    let change = install_into(&mut after, program, req.statusline)
        .with_context(|| format!("cannot install into {}", path.display()))?;
    let record = installs::find(roots, path);
    let first_of_cycle = record.is_none();
    let mut auto_memory = record.as_ref().map(|r| (r.auto_memory_set, r.auto_memory_before.clone()));
    if req.disable_auto_memory && after.get(AUTO_MEMORY) != Some(&Value::Bool(false)) {
        auto_memory = Some((true, after.get(AUTO_MEMORY).cloned()));
        after.insert(AUTO_MEMORY.into(), Value::Bool(false));
    }
    let text = jsonedit::edit_to(before.as_deref().unwrap_or(""), &settings, &after)
        .with_context(|| format!("cannot edit {}; nothing was changed", path.display()))?;
    let shown = path.display();
    if before.as_deref() == Some(text.as_str()) {
        return Ok(Installed::UpToDate);
    }
    if req.dry_run {
        return Ok(Installed::DryRun {
            what: change.describe(true),
            diff: unified_diff(before.as_deref().unwrap_or(""), &text, None),
            refused: writable(path).err(),
        });
    }
    refuse_unwritable(path, program)?;
    // A file the team commits is read by everyone: the usual 0644.
    let new_mode = if scope == Scope::Shared { 0o644 } else { NEW_FILE_MODE };
    let (file, mode, created_dir) = write_target(path, before.is_some(), new_mode)?;
    let mut record = record.unwrap_or_else(|| InstallRecord {
        path: path.display().to_string(),
        created: before.is_none(),
        created_dir: created_dir.map(|d| d.display().to_string()),
        ..InstallRecord::default()
    });
    let mut backup_made = None;
    if let Some(old) = before.as_ref().filter(|_| first_of_cycle) {
        // The file as it was before the first install: never overwritten,
        // and never a copy of a file that already holds our hooks.
        let backup = backup_path(path);
        if std::fs::symlink_metadata(&backup).is_err() {
            write_atomic_keeping_mode(&backup, old.as_bytes(), NEW_FILE_MODE)
                .with_context(|| format!("cannot write the backup {}; {shown} is unchanged", backup.display()))?;
            backup_made = Some(backup);
        }
    }
    if let Some((set, before)) = auto_memory {
        (record.auto_memory_set, record.auto_memory_before) = (set, before);
    }
    record.refresh_set |= change.refresh_added;
    write_atomic_keeping_mode(&file, text.as_bytes(), mode)?;
    if scope == Scope::Local && record.excluded_in.is_none() {
        record.excluded_in = crate::git::exclude_local_settings(path);
    }
    installs::put(roots, path, Some(record))?;
    let auto_memory_off =
        after.get(AUTO_MEMORY) == Some(&Value::Bool(false)) && settings.get(AUTO_MEMORY) != Some(&Value::Bool(false));
    Ok(Installed::Written { what: change.describe(false), backup: backup_made, auto_memory_off })
}

/// A settings file install cannot read: what to do, and that nothing changed.
fn to_fix(e: anyhow::Error) -> anyhow::Error {
    anyhow::anyhow!("{e:#}; fix it or move it away, then run this again; nothing was changed")
}

/// What an uninstall of one settings file did.
pub enum Uninstalled {
    /// The file holds no entries of ours (or does not exist).
    Nothing,
    /// Nothing written: what would change, and the diff.
    DryRun { what: String, diff: String },
    /// Done, in words: `… is back as it was before install`.
    Done(String),
}

/// Takes our entries out of one settings file as it is now, keeping every
/// other byte; a file install created goes only when nothing else is left in it.
pub fn uninstall(roots: &Roots, path: &Path, dry_run: bool) -> Result<Uninstalled> {
    let Some(before) = read_settings(path)? else {
        return Ok(Uninstalled::Nothing);
    };
    let shown = path.display();
    let record = installs::find(roots, path);
    let settings = parse_settings(path, Some(&before)).map_err(to_fix)?;
    let mut after = settings.clone();
    let change = uninstall_from(&mut after).with_context(|| format!("cannot uninstall from {shown}"))?;
    if let Some(r) = record.as_ref().filter(|r| r.auto_memory_set)
        && after.get(AUTO_MEMORY) == Some(&Value::Bool(false))
    {
        match &r.auto_memory_before {
            Some(value) => after.insert(AUTO_MEMORY.into(), value.clone()),
            None => after.shift_remove(AUTO_MEMORY),
        };
    }
    if record.as_ref().is_some_and(|r| r.refresh_set) {
        crate::claude::hooks::remove_refresh(&mut after);
    }
    if after == settings {
        // Leave a file without our entries alone, even its layout.
        return Ok(Uninstalled::Nothing);
    }
    let created = record.as_ref().is_some_and(|r| r.created);
    let after = (!created || !after.is_empty())
        .then(|| jsonedit::edit_to(&before, &settings, &after))
        .transpose()
        .with_context(|| format!("cannot edit {shown}; nothing was changed"))?;
    let what = change.describe(dry_run);
    if dry_run {
        return Ok(Uninstalled::DryRun { what, diff: unified_diff(&before, after.as_deref().unwrap_or(""), None) });
    }
    refuse_unwritable(path, &Program::Shared)?;
    let (file, mode, _) = write_target(path, true, NEW_FILE_MODE)?;
    let how = match &after {
        Some(text) => {
            write_atomic_keeping_mode(&file, text.as_bytes(), mode)?;
            // The backup goes once the file reads as it did before install.
            let backup = backup_path(path);
            let kept = crate::store::fsutil::read_regular(&backup, 16 * 1024 * 1024).ok().flatten();
            if kept.as_deref() == Some(text.as_bytes()) {
                let _ = std::fs::remove_file(&backup);
                format!("{shown} is back as it was before install")
            } else {
                format!("{what} in {shown}")
            }
        }
        None => {
            fs_err::remove_file(&file)?;
            if let Some(dir) = record.as_ref().and_then(|r| r.created_dir.as_deref()) {
                let _ = std::fs::remove_dir(dir); // only when empty
            }
            if let Some(exclude) = record.as_ref().and_then(|r| r.excluded_in.as_deref()) {
                crate::git::unexclude_local_settings(Path::new(exclude));
            }
            format!("{shown} removed: install had created it, and nothing else was in it")
        }
    };
    installs::put(roots, path, None)?;
    Ok(Uninstalled::Done(how))
}

/// Where a settings file is written, with what mode, and the folder made for
/// it: through a symlink (dotfile managers link settings.json) to the file it
/// names, keeping its mode.
fn write_target(path: &Path, exists: bool, new_mode: u32) -> Result<(PathBuf, u32, Option<PathBuf>)> {
    use std::os::unix::fs::PermissionsExt;
    if exists {
        let file = fs_err::canonicalize(path)?;
        let mode = fs_err::metadata(&file)?.permissions().mode() & 0o7777;
        return Ok((file, mode, None));
    }
    let dir = path.parent().with_context(|| format!("{} has no parent folder", path.display()))?;
    let created_dir = (!dir.exists()).then(|| dir.to_path_buf());
    fs_err::create_dir_all(dir)?;
    Ok((path.to_path_buf(), new_mode, created_dir))
}

/// A settings file the user cannot write (mode 0444, a link into a read-only
/// nix store) is refused, never replaced; the message carries the block to add
/// by hand. Mode bits are checked as well as `access`, since root ignores them.
fn refuse_unwritable(path: &Path, program: &Program) -> Result<()> {
    let Err(why) = writable(path) else {
        return Ok(());
    };
    let block = match program {
        Program::Path(_) => format!(
            "\nTo register memory-save by hand, merge this into it (or into the file it is generated from):\n{}",
            super::hooks::hand_block(program)
        ),
        Program::Shared => String::new(),
    };
    bail!("{} cannot be changed ({why}); nothing was changed{block}", path.display())
}

fn writable(path: &Path) -> std::result::Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let read_only =
        |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777).ok().filter(|m| m & 0o222 == 0);
    let access = |p: &Path, what: &str| -> std::result::Result<(), String> {
        crate::sys::check_writable(p).map_err(|e| format!("{what} {}: {e}", p.display()))
    };
    let file = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| format!("it is a link to {}, which cannot be read: {e}", path.display()))?,
        Ok(_) => path.to_path_buf(),
        Err(_) => {
            let dir = path.ancestors().skip(1).find(|d| d.exists()).unwrap_or(Path::new("/"));
            if read_only(dir).is_some() {
                return Err(format!("its folder {} is read-only", dir.display()));
            }
            return access(dir, "you cannot write in");
        }
    };
    let linked = if file != path { format!("it links to {}, which ", file.display()) } else { "it ".to_string() };
    if let Some(mode) = read_only(&file) {
        return Err(format!("{linked}is read-only, mode {mode:o}"));
    }
    access(&file, "you cannot write")?;
    let dir = file.parent().unwrap_or(Path::new("/"));
    if read_only(dir).is_some() {
        return Err(format!("{linked}is in the read-only folder {}", dir.display()));
    }
    access(dir, "you cannot write in")
}

/// The copy install kept of `settings` as it first found it, when it is there.
pub fn backup_of(settings: &Path) -> Option<PathBuf> {
    Some(backup_path(settings)).filter(|b| std::fs::symlink_metadata(b).is_ok())
}

fn backup_path(settings: &Path) -> PathBuf {
    let mut name = settings.file_name().unwrap_or_default().to_os_string();
    name.push(BACKUP_SUFFIX);
    settings.with_file_name(name)
}

/// The running binary's absolute path, shell-quoted.
pub fn our_command_word() -> Result<String> {
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot find the path of the running memory-save binary")?;
    if exe.file_name().and_then(|n| n.to_str()) != Some(BINARY_NAME) {
        // Our entries are recognised by this file name; under another name a
        // second install would add duplicates instead of replacing them.
        bail!(
            "this binary is {}, but install needs it named {BINARY_NAME}; install it with `cargo install --path .` and run that one",
            exe.display()
        );
    }
    let exe = exe.to_str().with_context(|| {
        format!("the path {} is not valid UTF-8; install memory-save under a plain path", exe.display())
    })?;
    Ok(super::hooks::shell_quote(exe))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_dry_run_diff_marks_changes_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nd\nX\nf\ng\n";
        assert_eq!(super::unified_diff(old, new, None), "@@ -3,5 +3,5 @@\n c\n d\n-e\n+X\n f\n g\n");
        assert_eq!(super::unified_diff("", "x\n", None), "@@ -0,0 +1 @@\n+x\n");
    }
}
