//! `memory-save install` and `uninstall`: our entries in a Claude Code
//! settings file (the merge itself is `claude::hooks`), edited where they
//! stand (`claude::jsonedit`) so every other byte and the file's mode stay
//! as the user had them, and undone exactly: what each install wrote is
//! recorded (`store::installs`), and a file nobody changed since comes back
//! byte for byte from its backup, or goes away if we created it.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::claude::hooks::{self, BINARY_NAME, Program, install_into, uninstall_from};
use crate::claude::jsonedit;
use crate::claude::settings::{Scope, parse_settings, read_settings};
use crate::store::fsutil::write_atomic_keeping_mode;
use crate::store::installs::{self, InstallRecord};
use crate::store::paths::Roots;

const BACKUP_SUFFIX: &str = ".memory-save.bak";
const AUTO_MEMORY: &str = "autoMemoryEnabled";
/// The mode of a settings file install creates.
const NEW_FILE_MODE: u32 = 0o600;

/// Register the hooks in your user settings (~/.claude/settings.json); your
/// other settings keep every byte; running it again changes nothing.
#[derive(Debug, Default, clap::Args)]
pub struct InstallArgs {
    /// Register for this project only, on this machine:
    /// <project>/.claude/settings.local.json (not committed).
    #[arg(long, conflicts_with = "shared")]
    project: bool,
    /// Register for everyone who clones this project:
    /// <project>/.claude/settings.json, running memory-save from PATH and
    /// doing nothing for a teammate who has none.
    #[arg(long)]
    shared: bool,
    /// Print what would change; write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Also show the save state in the status line (yours is kept, shown first).
    #[arg(long)]
    statusline: bool,
    /// Turn Claude Code's own auto memory off in the same file (uninstall
    /// puts it back), so each turn pays for one memory fork, not two.
    #[arg(long)]
    disable_auto_memory: bool,
}

/// Remove exactly our hooks (and status line) again.
#[derive(Debug, Default, clap::Args)]
pub struct UninstallArgs {
    /// Remove from this project's settings (.claude/settings.local.json and
    /// .claude/settings.json) instead; --shared is the same.
    #[arg(long, visible_alias = "shared")]
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

fn cwd() -> Result<PathBuf> {
    std::env::current_dir().context("cannot read the current folder")
}

fn run_install(options: &InstallArgs) -> Result<()> {
    let scope = match (options.project, options.shared) {
        (_, true) => Scope::Shared,
        (true, _) => Scope::Local,
        _ => Scope::User,
    };
    let program = if scope == Scope::Shared { Program::Shared } else { Program::Path(our_command_word()?) };
    let path = scope.path(&cwd()?)?;
    let roots = crate::config::roots()?;
    let before = read_settings(&path)?;
    let settings = parse_settings(&path, before.as_deref())?;
    let mut after = settings.clone();
    let change = install_into(&mut after, &program, options.statusline)
        .with_context(|| format!("cannot install into {}", path.display()))?;
    let record = installs::find(&roots, &path);
    let first_of_cycle = record.is_none();
    let mut auto_memory = record.as_ref().map(|r| (r.auto_memory_set, r.auto_memory_before.clone()));
    if options.disable_auto_memory && after.get(AUTO_MEMORY) != Some(&Value::Bool(false)) {
        auto_memory = Some((true, after.get(AUTO_MEMORY).cloned()));
        after.insert(AUTO_MEMORY.into(), Value::Bool(false));
    }
    let text = jsonedit::edit_to(before.as_deref().unwrap_or(""), &settings, &after)
        .with_context(|| format!("cannot edit {}; nothing was changed", path.display()))?;
    let shown = path.display();
    if before.as_deref() == Some(text.as_str()) {
        super::println(&format!("memory-save: {shown} already up to date; nothing changed"))?;
        return auto_memory_note(scope);
    }
    if options.dry_run {
        super::println(&format!("memory-save: dry run, nothing written: {} in {shown}", change.describe(true)))?;
        if let Err(why) = writable(&path) {
            super::println(&format!(
                "memory-save: note: a real install would be refused: {shown} cannot be changed ({why})"
            ))?;
        }
        return super::print(&dry_run_diff(before.as_deref().unwrap_or(""), &text));
    }
    refuse_unwritable(&path, &program)?;
    // A file the team commits is read by everyone: the usual 0644.
    let new_mode = if scope == Scope::Shared { 0o644 } else { NEW_FILE_MODE };
    let target = write_target(&path, before.is_some(), new_mode)?;
    let mut record = record.unwrap_or_else(|| InstallRecord {
        path: path.display().to_string(),
        original: before.clone(),
        created_dir: target.created_dir.as_ref().map(|d| d.display().to_string()),
        ..InstallRecord::default()
    });
    let mut backup_note = String::new();
    if let Some(old) = before.as_ref().filter(|_| first_of_cycle) {
        // The file as it was before the first install: never overwritten,
        // and never a copy of a file that already holds our hooks.
        let backup = backup_path(&path);
        if std::fs::symlink_metadata(&backup).is_err() {
            write_atomic_keeping_mode(&backup, old.as_bytes(), NEW_FILE_MODE)
                .with_context(|| format!("cannot write the backup {}; {shown} is unchanged", backup.display()))?;
            backup_note = format!(" (the file as it was is kept in {})", backup.display());
        }
    }
    if let Some((set, before)) = auto_memory {
        (record.auto_memory_set, record.auto_memory_before) = (set, before);
    }
    record.written = text.clone();
    write_atomic_keeping_mode(&target.file, text.as_bytes(), target.mode)?;
    if scope == Scope::Local && record.excluded_in.is_none() {
        record.excluded_in = crate::git::exclude_local_settings(&path);
    }
    installs::put(&roots, &path, Some(record))?;
    super::println(&format!("memory-save: {} in {shown}{backup_note}", change.describe(false)))?;
    if after.get(AUTO_MEMORY) == Some(&Value::Bool(false)) && settings.get(AUTO_MEMORY) != Some(&Value::Bool(false)) {
        super::println(&format!("memory-save: Claude Code's auto memory turned off in {shown}"))?;
    }
    super::println("Restart Claude Code so it loads the hooks.")?;
    cost_note(&roots)?;
    auto_memory_note(scope)
}

/// What saves cost and who pays, said once at install: every save is a
/// `claude -p` run, paid at API rates (docs/cost.md).
fn cost_note(roots: &crate::store::paths::Roots) -> Result<()> {
    let config = crate::config::of(roots);
    let month = match config.max_cost_per_month_usd {
        crate::config::Budget::Unset => format!(
            "a subscription login's saves stop at {} a billing month on this machine (the default)",
            crate::memory::cost::usd(crate::config::DEFAULT_SUBSCRIPTION_MONTH_USD)
        ),
        crate::config::Budget::Off => "max_cost_per_month_usd is \"none\": no monthly budget".to_string(),
        crate::config::Budget::Usd(limit) => {
            format!("saves stop at {} a billing month on this machine", crate::memory::cost::usd(limit))
        }
    };
    let limits = config.limits();
    let cadence = if limits.every_turns <= 1 {
        "Saves run after every turn".to_string()
    } else {
        format!(
            "Saves are batched: every {} turns, after {} of quiet and at the session's end",
            limits.every_turns,
            crate::memory::text::seconds(limits.idle_flush.as_secs())
        )
    };
    super::println(&format!(
        "note: each save is a `claude -p` run, paid at API rates (on a Claude plan, from its monthly Agent SDK credit). \
         {cadence}; {month}. \
         Change them with save_every_turns, max_cost_per_month_usd and billing_day in {} (docs/cost.md).",
        crate::config::file(roots).display()
    ))?;
    let who = match crate::save::budget::last_route(roots) {
        Some(seen) => format!("note: at the last session start, {}.", seen.route.sentence()),
        None => "note: who pays is read from a session's environment at its start: memory-save status says it then."
            .to_string(),
    };
    super::println(&who)
}

/// Says so when Claude Code's own auto memory is on beside ours.
fn auto_memory_note(scope: Scope) -> Result<()> {
    let (on, why) = crate::claude::settings::auto_memory(&cwd()?);
    if on {
        super::println(&format!(
            "note: Claude Code's own auto memory is on ({why}): with memory-save too, every turn pays for two memory forks. \
             To leave memory to memory-save: memory-save install --disable-auto-memory{}",
            if scope == Scope::User { "" } else { " (with the same --project or --shared)" }
        ))?;
    }
    Ok(())
}

fn run_uninstall(options: &UninstallArgs) -> Result<()> {
    let roots = crate::config::roots()?;
    let cwd = cwd()?;
    // A project's hooks may be in either of its files: earlier versions
    // installed into .claude/settings.json.
    let scopes: &[Scope] = if options.project { &[Scope::Local, Scope::Shared] } else { &[Scope::User] };
    let mut changed = false;
    let mut looked = Vec::new();
    for scope in scopes {
        let path = scope.path(&cwd)?;
        changed |= uninstall_one(&roots, &path, options.dry_run)?;
        looked.push(path.display().to_string());
    }
    if !changed {
        super::println(&format!("memory-save: no memory-save entries in {}; nothing changed", looked.join(" or ")))?;
    } else if !options.dry_run {
        super::println("Restart Claude Code so it stops running the hooks.")?;
    }
    Ok(())
}

/// Takes our entries out of one settings file; whether it had any.
fn uninstall_one(roots: &Roots, path: &Path, dry_run: bool) -> Result<bool> {
    let Some(before) = read_settings(path)? else {
        return Ok(false);
    };
    let shown = path.display();
    let record = installs::find(roots, path);
    let backup = backup_path(path);
    let untouched = record.as_ref().filter(|r| r.written == before);
    // Nobody changed the file since our install: give back what was there.
    let restored: Option<Option<String>> = untouched.map(|r| r.original.clone());
    let (after, change) = match &restored {
        Some(text) => (text.clone(), None),
        None => {
            let settings = parse_settings(path, Some(&before))?;
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
            if after == settings {
                // Leave a file without our entries alone, even its layout.
                return Ok(false);
            }
            let created = record.as_ref().is_some_and(|r| r.original.is_none());
            let text = if created && after.is_empty() {
                None
            } else {
                Some(
                    jsonedit::edit_to(&before, &settings, &after)
                        .with_context(|| format!("cannot edit {shown}; nothing was changed"))?,
                )
            };
            (text, Some(change))
        }
    };
    let what = change.as_ref().map_or("removed memory-save's entries".to_string(), |c| c.describe(dry_run));
    if dry_run {
        super::println(&format!("memory-save: dry run, nothing written: {what} in {shown}"))?;
        super::print(&dry_run_diff(&before, after.as_deref().unwrap_or("")))?;
        return Ok(true);
    }
    refuse_unwritable(path, &Program::Shared)?;
    let target = write_target(path, true, NEW_FILE_MODE)?;
    match &after {
        Some(text) => write_atomic_keeping_mode(&target.file, text.as_bytes(), target.mode)?,
        None => {
            fs_err::remove_file(&target.file)?;
            if let Some(dir) = record.as_ref().and_then(|r| r.created_dir.as_deref()) {
                let _ = std::fs::remove_dir(dir); // only when empty
            }
            if let Some(exclude) = record.as_ref().and_then(|r| r.excluded_in.as_deref()) {
                crate::git::unexclude_local_settings(Path::new(exclude));
            }
        }
    }
    let how = match (&restored, &after) {
        (Some(_), Some(text)) => {
            // The backup goes only when it is this cycle's own copy.
            let ours = crate::store::fsutil::read_regular(&backup, 16 * 1024 * 1024).ok().flatten();
            if ours.as_deref() == Some(text.as_bytes()) {
                let _ = std::fs::remove_file(&backup);
            }
            format!("{shown} is back as it was before install")
        }
        (_, None) => format!("{shown} removed: install had created it"),
        (None, Some(_)) => format!("{what} in {shown}"),
    };
    installs::put(roots, path, None)?;
    super::println(&format!("memory-save: {how}"))?;
    Ok(true)
}

/// Where a settings file is written: through a symlink (dotfile managers
/// link settings.json) to the file it names, keeping its mode.
struct WriteTarget {
    file: PathBuf,
    mode: u32,
    created_dir: Option<PathBuf>,
}

fn write_target(path: &Path, exists: bool, new_mode: u32) -> Result<WriteTarget> {
    use std::os::unix::fs::PermissionsExt;
    if exists {
        let file = fs_err::canonicalize(path)?;
        let mode = fs_err::metadata(&file)?.permissions().mode() & 0o7777;
        return Ok(WriteTarget { file, mode, created_dir: None });
    }
    let dir = path.parent().with_context(|| format!("{} has no parent folder", path.display()))?;
    let created_dir = (!dir.exists()).then(|| dir.to_path_buf());
    fs_err::create_dir_all(dir)?;
    Ok(WriteTarget { file: path.to_path_buf(), mode: new_mode, created_dir })
}

/// A settings file the user cannot write (mode 0444, a link into a
/// read-only store as home-manager and nix lay it out) is refused, never
/// replaced: nothing is written, and the message carries the block to add
/// by hand. Mode bits are checked as well as `access`, since root ignores
/// them.
fn refuse_unwritable(path: &Path, program: &Program) -> Result<()> {
    let Err(why) = writable(path) else {
        return Ok(());
    };
    let block = match program {
        Program::Path(_) => format!(
            "\nTo register memory-save by hand, merge this into it (or into the file it is generated from):\n{}",
            hooks::hand_block(program)
        ),
        Program::Shared => String::new(),
    };
    bail!("{} cannot be changed ({why}); nothing was changed{block}", path.display())
}

fn writable(path: &Path) -> std::result::Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
    let access = |p: &Path, what: &str| -> std::result::Result<(), String> {
        crate::sys::check_writable(p).map_err(|e| format!("{what} {}: {e}", p.display()))
    };
    let file = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| format!("it is a link to {}, which cannot be read: {e}", path.display()))?,
        Ok(_) => path.to_path_buf(),
        Err(_) => {
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| !d.exists()) {
                dir = d.parent();
            }
            let dir = dir.unwrap_or(Path::new("/"));
            return match meta(dir) {
                Ok(mode) if mode & 0o222 == 0 => Err(format!("its folder {} is read-only", dir.display())),
                _ => access(dir, "you cannot write in"),
            };
        }
    };
    let linked = if file != path { format!("it links to {}, which ", file.display()) } else { "it ".to_string() };
    if let Ok(mode) = meta(&file)
        && mode & 0o222 == 0
    {
        return Err(format!("{linked}is read-only, mode {mode:o}"));
    }
    access(&file, "you cannot write")?;
    let dir = file.parent().unwrap_or(Path::new("/"));
    if let Ok(mode) = meta(dir)
        && mode & 0o222 == 0
    {
        return Err(format!("{linked}is in the read-only folder {}", dir.display()));
    }
    access(dir, "you cannot write in")
}

fn backup_path(settings: &Path) -> PathBuf {
    let mut name = settings.file_name().unwrap_or_default().to_os_string();
    name.push(BACKUP_SUFFIX);
    settings.with_file_name(name)
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
