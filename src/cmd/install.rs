//! `memory-save install` and `uninstall`: our entries in a Claude Code
//! settings file (the merge itself is `claude::hooks`), written atomically,
//! with a backup of the file as it was.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::claude::hooks::{self, BINARY_NAME, Change, install_into, uninstall_from};
use crate::claude::settings::{parse_settings, read_settings, render};
use crate::store::fsutil::write_atomic;

const BACKUP_SUFFIX: &str = ".memory-save.bak";

/// Register the hooks in ~/.claude/settings.json (your other settings and
/// hooks are kept; running it again changes nothing).
#[derive(Debug, Default, clap::Args)]
pub struct InstallArgs {
    /// Register in ./.claude/settings.json of the current folder instead.
    #[arg(long)]
    project: bool,
    /// Print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also show the save state in the status line (yours is kept, shown first).
    #[arg(long)]
    statusline: bool,
}

/// Remove exactly our hooks (and status line) again.
#[derive(Debug, Default, clap::Args)]
pub struct UninstallArgs {
    /// Remove from ./.claude/settings.json of the current folder instead.
    #[arg(long)]
    project: bool,
    /// Print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
}

impl super::Run for InstallArgs {
    fn run(&self) -> Result<()> {
        run_install(self)
    }
}

impl super::Run for UninstallArgs {
    fn run(&self) -> Result<()> {
        run_uninstall(self)
    }
}

fn run_install(options: &InstallArgs) -> Result<()> {
    let exe = our_command_word()?;
    let path = settings_path(options.project)?;
    let before = read_settings(&path)?;
    let mut settings = parse_settings(&path, before.as_deref())?;
    let change = install_into(&mut settings, &exe, options.statusline)
        .with_context(|| format!("cannot install into {}", path.display()))?;
    let after = render(&settings);
    finish(&path, before.as_deref(), &after, &change, options.dry_run)
}

fn run_uninstall(options: &UninstallArgs) -> Result<()> {
    let path = settings_path(options.project)?;
    let before = read_settings(&path)?;
    let Some(before_text) = before.as_deref() else {
        super::println(&format!("memory-save: {} does not exist; nothing to remove", path.display()))?;
        return Ok(());
    };
    let mut settings = parse_settings(&path, Some(before_text))?;
    let change = uninstall_from(&mut settings).with_context(|| format!("cannot uninstall from {}", path.display()))?;
    if change == Change::default() {
        // Leave a file without our entries alone, even its layout.
        super::println(&format!("memory-save: no memory-save entries in {}; nothing changed", path.display()))?;
        return Ok(());
    }
    let after = render(&settings);
    finish(&path, before.as_deref(), &after, &change, options.dry_run)
}

/// Writes `after` (with a backup of `before`), or only shows it with
/// `--dry-run`, and prints the one-line summary.
fn finish(path: &Path, before: Option<&str>, after: &str, change: &Change, dry_run: bool) -> Result<()> {
    let shown = path.display();
    if before == Some(after) {
        super::println(&format!("memory-save: {shown} already up to date; nothing changed"))?;
        return Ok(());
    }
    if dry_run {
        super::println(&format!("memory-save: dry run, nothing written: {} in {shown}", change.describe(true)))?;
        super::print(&dry_run_diff(before.unwrap_or(""), after))?;
        return Ok(());
    }
    // Write through a symlink (dotfile managers link settings.json) instead of
    // replacing the link with a plain file.
    let target = if before.is_some() {
        fs_err::canonicalize(path)?
    } else {
        let dir = path.parent().with_context(|| format!("{shown} has no parent folder"))?;
        fs_err::create_dir_all(dir)?;
        path.to_path_buf()
    };
    let mut backup_note = String::new();
    if let Some(old) = before {
        let backup = backup_path(path);
        write_atomic(&backup, old.as_bytes(), true)
            .with_context(|| format!("cannot write the backup {}; {shown} is unchanged", backup.display()))?;
        backup_note = format!(" (old file kept as {})", backup.display());
    }
    write_atomic(&target, after.as_bytes(), true)?;
    super::println(&format!("memory-save: {} in {shown}{backup_note}", change.describe(false)))?;
    Ok(())
}

fn backup_path(settings: &Path) -> PathBuf {
    let mut name = settings.file_name().unwrap_or_default().to_os_string();
    name.push(BACKUP_SUFFIX);
    settings.with_file_name(name)
}

fn settings_path(project: bool) -> Result<PathBuf> {
    let base =
        if project { std::env::current_dir().context("cannot read the current folder")? } else { crate::env::home()? };
    Ok(base.join(".claude").join("settings.json"))
}

/// The running binary's absolute path, shell-quoted, as the first word of our
/// commands.
fn our_command_word() -> Result<String> {
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
    Ok(hooks::quote_program(exe))
}

/// A unified diff for `--dry-run`: changed lines with `-`/`+` and two lines
/// of context (similar's Myers diff, linear in what changed).
fn dry_run_diff(old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new).unified_diff().context_radius(2).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_dry_run_diff_marks_changes_with_context() {
        let old = "a\nb\nc\nd\ne\nf\ng\n";
        let new = "a\nb\nc\nd\nX\nf\ng\n";
        assert_eq!(super::dry_run_diff(old, new), "@@ -3,5 +3,5 @@\n c\n d\n-e\n+X\n f\n g\n");
        assert_eq!(super::dry_run_diff("", "x\n"), "@@ -0,0 +1 @@\n+x\n");
    }
}
