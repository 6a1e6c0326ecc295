//! Doctor's checks of the set-up: `claude` runs a tested release, and our
//! hooks are registered once, in full, under the right events, running us.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Result;

use super::Report;
use crate::claude::hooks::BINARY_NAME;
use crate::claude::settings::Scope;

pub(super) fn check_login(report: &mut Report) {
    let settings = Scope::User.path(Path::new("."));
    if let Some(note) = settings.ok().and_then(|s| crate::claude::settings::token_only_login(&s)) {
        report.warn(&note, "log in with claude /login, or add the variable to your settings' env as said");
    }
}

pub(super) fn check_claude(report: &mut Report) {
    let claude = match crate::claude::fork::find_claude() {
        Ok(path) => path,
        Err(e) => {
            return report.problem(&e.to_string(), "install Claude Code, or set MEMORY_SAVE_CLAUDE to its full path");
        }
    };
    match version_of(&claude) {
        Some(version) if !tested(&version) => report.warn(
            &format!(
                "claude {} ({version}) is not a release memory-save was tested with ({})",
                claude.display(),
                TESTED.join(", ")
            ),
            "it probably works; watch the first saves' cache reads in memory-save status",
        ),
        Some(version) => report.ok(&format!("claude {} ({version})", claude.display())),
        None => report.problem(
            &format!("{} does not answer --version within 10 s", claude.display()),
            "check that it runs: claude --version",
        ),
    }
}

/// The Claude Code releases the real-engine suite runs against.
const TESTED_FILE: &str = include_str!("../../../tests/e2e/versions.txt");
static TESTED: std::sync::LazyLock<Vec<&'static str>> = std::sync::LazyLock::new(|| {
    TESTED_FILE.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).collect()
});

/// Whether `claude --version`'s answer (`2.1.332 (Claude Code)`) names a
/// tested release.
fn tested(version: &str) -> bool {
    version.split_whitespace().next().is_some_and(|v| TESTED.contains(&v))
}

fn version_of(claude: &Path) -> Option<String> {
    let run = crate::process::run_captured(Command::new(claude).arg("--version"), b"", VERSION_LIMIT, 4096).ok()?;
    let crate::process::Ended::Exited(_) = run.ended else { return None };
    Some(String::from_utf8_lossy(&run.stdout).trim().to_string()).filter(|v| !v.is_empty())
}

/// `claude --version` answers in about a second, or not at all.
const VERSION_LIMIT: Duration = Duration::from_secs(10);

pub(super) fn check_hooks(report: &mut Report) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let found = crate::claude::registrations::registrations(&cwd);
    for r in &found {
        if let Some(error) = &r.error {
            report.problem(error, &format!("fix {} by hand, or move it away", r.path));
        }
    }
    let with_hooks: Vec<_> = found.iter().filter(|r| r.commands > 0).collect();
    let plugin = found.iter().find_map(|r| r.plugin.clone().map(|p| (p, r.scope)));
    match (with_hooks.as_slice(), &plugin) {
        ([], None) => report.problem(
            "memory-save's hooks are registered nowhere (user, project or project-local settings, or the plugin)",
            "run memory-save install (or ./install.sh)",
        ),
        // The plugin's hooks run `memory-save` from PATH.
        ([], Some((plugin, _))) => match which::which("memory-save") {
            Ok(path) => report.ok(&format!("hooks registered by the plugin {plugin}, running {}", path.display())),
            Err(_) => report.problem(
                &format!("the plugin {plugin} runs memory-save from PATH, and it is not there"),
                "put cargo's bin folder (~/.cargo/bin) on the PATH Claude Code starts with",
            ),
        },
        ([one, ..], Some((plugin, scope))) => report.problem(
            &format!("registered twice: the plugin {plugin} (enabled in {scope}) and hooks in {}", one.path),
            &format!("keep one: {} removes the settings hooks, or disable the plugin", one.scope.uninstall_command()),
        ),
        ([first, second, ..], None) => report.problem(
            &format!("hooks registered twice: in {} and in {}; every hook runs twice", first.path, second.path),
            &format!("keep one: {} removes the hooks in {}", second.scope.uninstall_command(), second.path),
        ),
        _ => {}
    }
    if with_hooks.is_empty() {
        if plugin.is_some() {
            check_auto_memory(report, &cwd, None);
        }
        return Ok(());
    }
    let this = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    // Every hook command a full install registers, with its event.
    let expected = crate::claude::events::HookEvent::command_lines();
    for r in &with_hooks {
        // Registered under another event, a command runs at the wrong time:
        // it counts as missing where it belongs.
        let missing: Vec<String> = expected
            .iter()
            .filter(|(event, words)| !r.words.iter().any(|(e, w)| e == event && w == words))
            .map(|(event, words)| format!("{words} (under {event})"))
            .collect();
        if missing.is_empty() {
            report.ok(&format!("all {} hook commands registered in {} ({})", expected.len(), r.path, r.scope));
        } else {
            report.problem(
                &format!("{} lacks: {}", r.path, missing.join(", ")),
                &format!("run memory-save install{} (it replaces what is there)", r.scope.install_flag()),
            );
        }
        // A shared install runs memory-save by name, from PATH.
        let real = |program: &str| {
            let path = if program == BINARY_NAME { which::which(program).ok()? } else { program.into() };
            std::fs::canonicalize(path).ok()
        };
        if let Some(program) = r.programs.iter().find(|p| real(p) != this) {
            report.problem(
                &format!(
                    "hooks in {} run {program}, not this binary ({})",
                    r.path,
                    this.as_ref().map(|p| p.display().to_string()).unwrap_or_default()
                ),
                &format!("run memory-save install{} from the binary you want the hooks to use", r.scope.install_flag()),
            );
        }
    }
    check_auto_memory(report, &cwd, with_hooks.first().map(|r| r.scope));
    Ok(())
}

/// Claude Code's own auto memory beside ours; `hooks`: the settings file
/// that holds our hooks (`None`: the plugin).
fn check_auto_memory(report: &mut Report, cwd: &Path, hooks: Option<Scope>) {
    let (on, why, decided) = crate::claude::settings::auto_memory(cwd);
    if !on {
        return report.ok(&format!("Claude Code's own auto memory is off ({why})"));
    }
    let fix = crate::claude::settings::auto_memory_fix(cwd, hooks, decided);
    report.warn(
        &format!(
            "Claude Code's own auto memory is on ({why}): two memories of one project; where Anthropic turns on its background extraction, that adds a request of its own after each turn"
        ),
        &fix,
    );
}
