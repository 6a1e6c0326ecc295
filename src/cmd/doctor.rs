//! `memory-save doctor`: checks what a working setup needs and says what to
//! do about each problem. Exits 3 when something is wrong (`exit`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::Result;

use crate::claude::hooks::BINARY_NAME;
use crate::claude::settings::Scope;
use crate::memory::text::visible;
use crate::store::paths::Roots;

/// Every hook command a full install registers, with its event.
fn expected_hooks() -> Vec<(String, String)> {
    crate::claude::events::HookEvent::command_lines().into_iter().map(|(event, c)| (event.to_string(), c)).collect()
}

/// Doctor's findings, printed as they come (a slow check shows what was
/// found before it), or gathered for `--json`.
struct Report {
    problems: usize,
    json: bool,
    colour: super::colour::Colour,
    findings: Vec<Finding>,
}

#[derive(serde::Serialize)]
struct Finding {
    level: &'static str,
    what: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

impl Report {
    fn add(&mut self, level: &'static str, what: &str, fix: Option<&str>) {
        if self.json {
            self.findings.push(Finding { level, what: what.to_string(), fix: fix.map(str::to_string) });
            return;
        }
        let c = self.colour;
        let label = match level {
            "ok" => c.good("ok      "),
            "warning" => c.warn("WARNING "),
            _ => c.bad("PROBLEM "),
        };
        let fix = fix.map(|f| format!("\n         {}", c.plain(&format!("→ {f}")))).unwrap_or_default();
        let _ = super::print_painted(&format!("{label} {}{fix}\n", visible(what)));
    }

    fn ok(&mut self, what: &str) {
        self.add("ok", what, None);
    }

    /// Worth knowing, not wrong: does not fail doctor.
    fn warn(&mut self, what: &str, fix: &str) {
        self.add("warning", what, Some(fix));
    }

    fn problem(&mut self, what: &str, fix: &str) {
        self.problems += 1;
        self.add("problem", what, Some(fix));
    }
}

/// Check the setup and say what to do about each problem; exit 3 when
/// something is wrong.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Print the findings as JSON, for scripts (exit 3 still means a problem).
    #[arg(long)]
    json: bool,
}

impl super::Run for DoctorArgs {
    fn run(&self) -> Result<()> {
        run(self.json)
    }
}

fn run(json: bool) -> Result<()> {
    let roots = crate::config::roots()?;
    let mut report = Report { problems: 0, json, colour: super::colour::Colour::for_stdout(), findings: Vec::new() };
    check_claude(&mut report);
    check_hooks(&mut report)?;
    for (name, dir) in [("memory folder", &roots.memory), ("state folder", &roots.state)] {
        check_folder(&mut report, name, dir);
    }
    check_state(&mut report, &roots);
    check_memory_text(&mut report, &roots);
    check_paused(&mut report, &roots);
    check_sync(&mut report, &roots);
    check_attributes(&mut report, &roots);
    check_config(&mut report, &roots);
    check_spend(&mut report, &roots);
    if json {
        let out = serde_json::json!({"problems": report.problems, "findings": report.findings});
        super::println(&crate::memory::text::json_visible(&serde_json::to_string_pretty(&out)?))?;
    }
    if report.problems > 0 {
        return Err(super::exit::ProblemsFound(report.problems).into());
    }
    if !json {
        super::println("all good")?;
    }
    Ok(())
}

fn check_claude(report: &mut Report) {
    let claude = match crate::claude::fork::find_claude() {
        Ok(path) => path,
        Err(e) => {
            report.problem(&e.status, "install Claude Code, or set MEMORY_SAVE_CLAUDE to its full path");
            return;
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
const TESTED_FILE: &str = include_str!("../../tests/e2e/versions.txt");
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

/// The flag that installs into the settings file of `scope`, so advice to
/// install names the file that already holds the hooks, never a second one.
fn install_flag(scope: &str) -> &'static str {
    match scope {
        s if s == Scope::Local.label() => " --project",
        s if s == Scope::Shared.label() => " --shared",
        _ => "",
    }
}

fn uninstall_command(scope: &str) -> &'static str {
    if scope == Scope::User.label() { "memory-save uninstall" } else { "memory-save uninstall --project" }
}

fn check_hooks(report: &mut Report) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let found = crate::claude::hooks::registrations(&cwd);
    for r in found.iter().filter(|r| r.error.is_some()) {
        let error = r.error.as_deref().unwrap_or_default();
        report.problem(error, &format!("fix {} by hand; Claude Code cannot read it either", r.path));
    }
    let with_hooks: Vec<_> = found.iter().filter(|r| r.commands > 0).collect();
    let plugin = found.iter().find_map(|r| r.plugin.clone().map(|p| (p, r.scope)));
    match (with_hooks.as_slice(), &plugin) {
        ([], None) => {
            report.problem(
                "memory-save's hooks are registered nowhere (user, project or project-local settings, or the plugin)",
                "run memory-save install (or ./install.sh)",
            );
            return Ok(());
        }
        ([], Some((plugin, _))) => {
            // The plugin's hooks run `memory-save` from PATH.
            match which::which("memory-save") {
                Ok(path) => report.ok(&format!("hooks registered by the plugin {plugin}, running {}", path.display())),
                Err(_) => report.problem(
                    &format!("the plugin {plugin} runs memory-save from PATH, and it is not there"),
                    "put cargo's bin folder (~/.cargo/bin) on the PATH Claude Code starts with",
                ),
            }
            return Ok(());
        }
        ([one, ..], Some((plugin, scope))) => report.problem(
            &format!("registered twice: the plugin {plugin} (enabled in {scope}) and hooks in {}", one.path),
            &format!("keep one: {} removes the settings hooks, or disable the plugin", uninstall_command(one.scope)),
        ),
        ([first, second, ..], None) => report.problem(
            &format!("hooks registered twice: in {} and in {}; every hook runs twice", first.path, second.path),
            &format!("keep one: {} removes the hooks in {}", uninstall_command(second.scope), second.path),
        ),
        _ => {}
    }
    let this = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    for r in &with_hooks {
        // Registered under another event, a command runs at the wrong time:
        // it counts as missing where it belongs.
        let missing: Vec<String> = expected_hooks()
            .into_iter()
            .filter(|want| !r.words.contains(want))
            .map(|(event, words)| format!("{words} (under {event})"))
            .collect();
        if missing.is_empty() {
            report.ok(&format!("all {} hook commands registered in {} ({})", expected_hooks().len(), r.path, r.scope));
        } else {
            report.problem(
                &format!("{} lacks: {}", r.path, missing.join(", ")),
                &format!("run memory-save install{} (it replaces what is there)", install_flag(r.scope)),
            );
        }
        // A shared install runs memory-save by name, from PATH.
        let programs = r.programs.iter().map(|p| {
            if p == BINARY_NAME {
                which::which(p).ok().and_then(|p| std::fs::canonicalize(p).ok())
            } else {
                std::fs::canonicalize(p).ok()
            }
        });
        if let Some(program) = r.programs.iter().zip(programs).find(|(_, real)| *real != this).map(|(p, _)| p) {
            report.problem(
                &format!(
                    "hooks in {} run {program}, not this binary ({})",
                    r.path,
                    this.as_ref().map(|p| p.display().to_string()).unwrap_or_default()
                ),
                &format!("run memory-save install{} from the binary you want the hooks to use", install_flag(r.scope)),
            );
        }
    }
    let (on, why) = crate::claude::settings::auto_memory(&cwd);
    if on {
        // In the file that holds the hooks: an install anywhere else would
        // register them a second time.
        let flag = with_hooks.first().map_or("", |r| install_flag(r.scope));
        report.warn(
            &format!("Claude Code's own auto memory is on ({why}): every turn pays for two memory forks"),
            &format!("memory-save install{flag} --disable-auto-memory turns it off (uninstall puts it back)"),
        );
    } else {
        report.ok(&format!("Claude Code's own auto memory is off ({why})"));
    }
    Ok(())
}

fn check_sync(report: &mut Report, roots: &Roots) {
    let Some(state) = crate::sync::state(roots) else {
        return report.ok("sync off (memory-save sync --init <git-url> keeps memory the same on your machines)");
    };
    match &state.error {
        None => report.ok(&format!(
            "synced with {}{}",
            state.remote,
            state.synced_at.map(|at| format!(" at {}", crate::env::timestamp(at))).unwrap_or_default()
        )),
        Some(error) => report.problem(
            &format!(
                "not synced with {} since {}: {error}",
                state.remote,
                state.synced_at.map_or_else(|| "sync was turned on".to_string(), crate::env::timestamp)
            ),
            "check the remote and your access to it (git fetch in the memory folder), then run memory-save sync",
        ),
    }
}

/// Only memory files may go to our merge driver: a `.gitattributes` line
/// that routes others there (a teammate's edit, a remote's) gets them
/// declined with git's own conflict, but it should not be there.
fn check_attributes(report: &mut Report, roots: &Roots) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let files = [
        (roots.memory.join(".gitattributes"), "*.md"),
        (crate::project::work_tree_top(&cwd).join(".gitattributes"), ".claude/memory/*.md"),
    ];
    for (file, ours) in files {
        let Ok(Some(text)) = crate::store::folder::read_if_exists(&file) else { continue };
        for line in text.lines().filter(|l| l.contains("merge=memory-save")) {
            let pattern = line.split_whitespace().next().unwrap_or("");
            if pattern != ours {
                report.problem(
                    &format!("{}: \"{}\" sends files that are not memory to memory-save's merge driver", file.display(), line.trim()),
                    &format!("keep only \"{ours} merge=memory-save\" (the driver declines other files, leaving git's own conflict)"),
                );
            }
        }
    }
}

fn check_folder(report: &mut Report, name: &str, dir: &Path) {
    match std::fs::symlink_metadata(dir) {
        Err(_) => report.ok(&format!("{name} {} not created yet (the first save creates it)", dir.display())),
        Ok(meta) if meta.file_type().is_symlink() => {
            report.problem(&format!("{name} {} is a symlink", dir.display()), "replace it with a real folder")
        }
        Ok(meta) if meta.permissions().mode() & 0o077 != 0 => report.problem(
            &format!("{name} {} is readable by others (mode {:o})", dir.display(), meta.permissions().mode() & 0o777),
            &format!("chmod 700 {}", dir.display()),
        ),
        Ok(_) => report.ok(&format!("{name} {} private", dir.display())),
    }
}

/// A MEMORY.md edited by hand may hold what no save may write: a control
/// or bidirectional character, a line posing as our block header.
fn check_memory_text(report: &mut Report, roots: &Roots) {
    let Ok(cwd) = std::env::current_dir() else { return };
    let Ok(project) = crate::project::locate(&cwd, &roots.memory, &crate::config::of(roots)) else { return };
    let folder = project.folder(roots);
    match crate::store::folder::read_if_exists(&folder.memory_path()) {
        Ok(Some(text)) => {
            let withheld = crate::memory::gate::load(&text).withheld;
            if withheld.is_empty() {
                report.ok(&format!("{} holds plain text", folder.memory_path().display()));
            }
            // The lines the load gate leaves out of every session.
            for w in &withheld {
                report.problem(
                    &format!("{} line {}: {}; sessions do not load it", folder.memory_path().display(), w.line, w.why),
                    "edit that line (memory-save edit): every session loads this file as instructions",
                );
            }
        }
        Ok(None) => {}
        Err(e) => report.problem(&format!("{e:#}"), "replace it with a regular file"),
    }
}

/// Sessions whose saves the cost guard or a budget stopped.
fn check_config(report: &mut Report, roots: &Roots) {
    let file = crate::config::file(roots);
    let config = crate::config::of(roots);
    for problem in &config.problems {
        let fix = "fix the file; docs/configuration.md lists every key with its type and range";
        if problem.closed { report.problem(&problem.text, fix) } else { report.warn(&problem.text, fix) }
    }
    if config.problems.is_empty() {
        report.ok(&format!("configuration {} readable (or absent: defaults)", file.display()));
    }
}

/// Who pays for saves, and what stops them on this machine.
fn check_spend(report: &mut Report, roots: &Roots) {
    match crate::save::budget::last_route(roots) {
        Some(seen) => report.ok(&format!(
            "billing: {} (seen at a session start, {})",
            seen.route.sentence(),
            crate::env::timestamp(seen.at)
        )),
        None => report.ok("billing: no session has started since install; who pays is known at the first one"),
    }
    let now = crate::env::now_unix();
    let config = crate::config::of(roots);
    let limits = crate::save::budget::load(roots);
    if let Some(hold) = limits.allowance.as_ref().filter(|h| h.holds(now)) {
        report.problem(
            &format!("{}: the API refused a save: \"{}\"", hold.status(), hold.text),
            "forks wait for the reset (a refusal that names none is tried once an hour); turn on usage credits or raise your plan's limit, then: memory-save resume",
        );
    }
    for (model, hold) in limits.models.iter().filter(|(_, h)| h.holds(now)) {
        report.problem(
            &format!("paused: sessions on {model}: \"{}\"", hold.text),
            "turn on usage credits, or set model in memory-save.toml for the fork, then: memory-save resume",
        );
    }
    if let Some(stopped) = limits.stopped.as_ref().filter(|s| s.holds(&config, now)) {
        report.problem(
            &stopped.status(),
            &format!(
                "saves go on {}, or raise {} in memory-save.toml",
                crate::env::timestamp(stopped.until),
                stopped.budget
            ),
        );
    }
    // A record dated ahead counts as now (so a budget never waits for its
    // date); one far ahead means the clock was wrong when it was written.
    let ahead = crate::store::saves::all(roots).into_iter().filter(|r| r.at > now + 600).count();
    if ahead > 0 {
        report.warn(
            &format!(
                "{} holds {} dated more than ten minutes ahead of this machine's clock; they count as now",
                roots.saves_log().display(),
                super::cost::plural(ahead as u64, "save record")
            ),
            "check the clock (date); budgets stay safe meanwhile",
        );
    }
    let month = crate::save::month::gather(roots, &config, now);
    for b in month.budgets.iter().filter(|b| b.share >= 0.8 && b.share < 1.0) {
        report.warn(
            &format!(
                "{} of {} ({}) spent",
                crate::memory::cost::usd(b.spent_usd),
                crate::memory::cost::usd(b.limit_usd),
                b.budget
            ),
            "memory-save cost shows the month day by day",
        );
    }
}

fn check_paused(report: &mut Report, roots: &Roots) {
    let sessions = crate::store::state::SessionStore::new(roots.sessions_dir());
    for (id, state) in sessions.all() {
        if let Some(pause) = &state.protocol.guard.paused {
            let project = state.input.project.as_deref().unwrap_or("?");
            report.problem(
                &format!("session {id} of project {project}: {}", pause.text),
                &format!("check the cost (memory-save status), then: memory-save resume --session {id}"),
            );
        }
    }
}

fn check_state(report: &mut Report, roots: &Roots) {
    let Ok(entries) = std::fs::read_dir(roots.sessions_dir()) else {
        return;
    };
    let broken: Vec<String> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| {
            crate::store::state::read_state_bytes(p).and_then(|b| crate::store::state::parse_state(&b)).is_none()
        })
        .map(|p| p.display().to_string())
        .collect();
    if broken.is_empty() {
        report.ok("session state readable");
    } else {
        report.problem(
            &format!("unreadable session state: {}", broken.join(", ")),
            "remove those files; the sessions start afresh",
        );
    }
}
