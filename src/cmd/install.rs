//! `memory-save install` and `uninstall`: the arguments, and what is said
//! to the user. The transaction itself is `claude::install`.

use std::path::Path;

use anyhow::Result;

use crate::claude::hooks::Program;
use crate::claude::install::{self, Installed, Uninstalled};
use crate::claude::settings::Scope;
use crate::config::Budget;
use crate::memory::cost::usd;

use super::cwd;

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
        let scope = match (self.project, self.shared) {
            (_, true) => Scope::Shared,
            (true, _) => Scope::Local,
            _ => Scope::User,
        };
        let program =
            if scope == Scope::Shared { Program::Shared } else { Program::Path(install::our_command_word()?) };
        let cwd = cwd()?;
        let path = scope.path(&cwd)?;
        let roots = crate::config::roots()?;
        let shown = path.display();
        let request = install::Request {
            roots: &roots,
            path: &path,
            scope,
            program: &program,
            statusline: self.statusline,
            disable_auto_memory: self.disable_auto_memory,
            dry_run: self.dry_run,
        };
        let written = match install::install(&request)? {
            Installed::UpToDate => {
                super::println(&format!("memory-save: {shown} already up to date; nothing changed"))?;
                false
            }
            Installed::DryRun { what, diff, refused } => {
                super::println(&format!("memory-save: dry run, nothing written: {what} in {shown}"))?;
                if let Some(why) = refused {
                    super::println(&format!(
                        "memory-save: note: a real install would be refused: {shown} cannot be changed ({why})"
                    ))?;
                }
                super::print(&diff)?;
                // What a real install would warn of, a dry run warns of too.
                return registered_elsewhere(&cwd, scope, &shown.to_string());
            }
            Installed::Written { what, backup, auto_memory_off } => {
                let backup_note =
                    backup.map(|b| format!(" (the file as it was is kept in {})", b.display())).unwrap_or_default();
                super::println(&format!("memory-save: {what} in {shown}{backup_note}"))?;
                if auto_memory_off {
                    super::println(&format!("memory-save: Claude Code's auto memory turned off in {shown}"))?;
                }
                super::println("Restart Claude Code so it loads the hooks.")?;
                true
            }
        };
        registered_elsewhere(&cwd, scope, &shown.to_string())?;
        if written {
            cost_note(&roots)?;
            windows_note(&roots, &cwd, scope, self.statusline)?;
        }
        if let Some(note) = crate::claude::settings::token_only_login(&Scope::User.path(&cwd)?) {
            super::println(&format!("warning: {note}"))?;
        }
        auto_memory_note(&cwd, scope)
    }
}

/// What saves cost and who pays, said once at install (docs/cost.md).
fn cost_note(roots: &crate::store::paths::Roots) -> Result<()> {
    let config = crate::config::of(roots);
    let per_save = match config.max_cost_per_save() {
        Some(cap) => {
            format!("a save priced over {} (max_cost_per_save_usd) reads only the new turns, or waits", usd(cap))
        }
        None => "max_cost_per_save_usd is \"none\": no save is too dear".to_string(),
    };
    let month = match config.max_cost_per_month_usd {
        Budget::Usd(limit) => format!("; saves stop at {} a month (max_cost_per_month_usd)", usd(limit)),
        Budget::Unset | Budget::Off => String::new(),
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
        "note: each save is a `claude -p` run. On a Claude plan it draws on the plan's usage limits, the 5-hour and weekly windows your own prompts draw on; \
         with an API key, a cloud provider or a gateway it is billed at API rates. \
         {cadence}; {per_save}{month}. Change them in {} (docs/cost.md).",
        crate::config::file(roots).display()
    ))?;
    let who = match crate::save::money::ledger::last_route(roots) {
        Some(seen) => format!("note: at the last session start, {}.", seen.route.sentence()),
        None => "note: who pays is read from a session's environment at its start; until then memory-save status says who would, from this shell and the settings."
            .to_string(),
    };
    super::println(&who)
}

/// A plan's saves wait while its usage windows are nearly full, and only
/// the status line's input says how full they are: said once, at install,
/// when no status line of ours will read them (doctor says it too).
fn windows_note(roots: &crate::store::paths::Roots, cwd: &Path, scope: Scope, statusline: bool) -> Result<()> {
    let route = crate::save::money::ledger::last_route(roots).map(|seen| seen.route);
    let on_plan = route.unwrap_or_else(|| crate::claude::route::of_session(cwd)).draws_on_plan_windows();
    if !on_plan || statusline || scope == Scope::Shared || crate::claude::registrations::statusline_registered(cwd) {
        return Ok(());
    }
    super::println(&format!(
        "note: on a Claude plan, saves wait while your 5-hour or weekly window is {}% used or more, so that its last part stays yours; \
         memory-save reads the windows from Claude Code's status line, and without one of its own it cannot see them: \
         saves then run until the plan refuses one. To let them wait: memory-save install --statusline (a status line of yours keeps running).",
        crate::config::of(roots).wait_at_plan_percent()
    ))
}

/// Warns when a session here would run memory-save twice: the plugin, or
/// another settings file (user beside project, or back), registers it too.
/// `file` is the one installed into: run from the home folder, the
/// project's settings file is the user's.
fn registered_elsewhere(cwd: &Path, scope: Scope, file: &str) -> Result<()> {
    for r in crate::claude::registrations::registrations(cwd) {
        if let Some(plugin) = &r.plugin {
            super::println(&format!(
                "warning: the plugin {plugin} is enabled in {}: with these hooks too, every hook runs twice and every save is paid twice. \
                 Keep one: claude plugin disable {plugin}, or {}",
                r.path,
                scope.uninstall_command()
            ))?;
        }
        if r.commands > 0 && r.scope != scope && r.path != file {
            let remove = r.scope.uninstall_command();
            super::println(&format!(
                "warning: {} ({}) registers memory-save's hooks too: a session here runs both, every save twice. Keep one: {remove}",
                r.scope, r.path
            ))?;
        }
    }
    Ok(())
}

/// Says so when Claude Code's own auto memory is on beside ours.
fn auto_memory_note(cwd: &Path, scope: Scope) -> Result<()> {
    let (on, why, decided) = crate::claude::settings::auto_memory(cwd);
    if on {
        let fix = crate::claude::settings::auto_memory_fix(cwd, Some(scope), decided);
        super::println(&format!(
            "note: Claude Code's own auto memory is on ({why}): with memory-save too, one project keeps two memories, and where Anthropic turns on auto memory's background extraction, that adds a request of its own after each turn. \
             To leave memory to memory-save: {fix}"
        ))?;
    }
    Ok(())
}

impl super::Run for UninstallArgs {
    fn run(&self) -> Result<()> {
        let roots = crate::config::roots()?;
        let cwd = cwd()?;
        // A project's hooks may be in either file (--project's or --shared's).
        let scopes: &[Scope] = if self.project { &[Scope::Local, Scope::Shared] } else { &[Scope::User] };
        let mut changed = false;
        let mut looked = Vec::new();
        for scope in scopes {
            let path = scope.path(&cwd)?;
            let shown = path.display();
            looked.push(shown.to_string());
            match install::uninstall(&roots, &path, self.dry_run)? {
                Uninstalled::Nothing => continue,
                Uninstalled::DryRun { what, diff } => {
                    super::println(&format!("memory-save: dry run, nothing written: {what} in {shown}"))?;
                    super::print(&diff)?;
                }
                Uninstalled::Done(how) => {
                    super::println(&format!("memory-save: {how}"))?;
                    if let Some(backup) = install::backup_of(&path) {
                        super::println(&format!(
                            "memory-save: the copy install kept of the file as it was stays in {}; remove it when you no longer need it",
                            backup.display()
                        ))?;
                    }
                }
            }
            changed = true;
        }
        if !changed {
            super::println(&format!(
                "memory-save: no memory-save entries in {}; nothing changed",
                looked.join(" or ")
            ))?;
        } else if !self.dry_run {
            super::println("Restart Claude Code so it stops running the hooks.")?;
        }
        Ok(())
    }
}
