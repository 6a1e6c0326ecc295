//! `memory-save doctor`: checks what a working setup needs and says what to
//! do about each problem. Exits 1 when something is wrong.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};

use crate::memory::block::MAX_PARTS;
use crate::memory::text::visible;
use crate::store::paths::Roots;

/// Every hook command a full install registers.
fn expected_hooks() -> Vec<String> {
    let mut hooks: Vec<String> = (1..=MAX_PARTS).map(|n| format!("hook session-start --part {n}")).collect();
    for event in ["user-prompt-submit", "post-tool-use", "stop", "pre-compact", "session-end"] {
        hooks.push(format!("hook {event}"));
    }
    hooks
}

struct Report {
    problems: usize,
}

impl Report {
    fn ok(&mut self, what: &str) {
        let _ = super::println(&format!("ok       {}", visible(what)));
    }

    /// Worth knowing, not wrong: does not fail doctor.
    fn warn(&mut self, what: &str, fix: &str) {
        let _ = super::println(&format!("WARNING  {what}\n         → {fix}"));
    }

    fn problem(&mut self, what: &str, fix: &str) {
        self.problems += 1;
        let _ = super::println(&format!("PROBLEM  {}\n         → {}", visible(what), visible(fix)));
    }
}

/// Check the setup and say what to do about each problem; exit 1 when
/// something is wrong.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {}

impl super::Run for DoctorArgs {
    fn run(&self) -> Result<()> {
        run()
    }
}

fn run() -> Result<()> {
    let roots = crate::config::roots()?;
    let mut report = Report { problems: 0 };
    check_claude(&mut report);
    check_hooks(&mut report)?;
    for (name, dir) in [("memory folder", &roots.memory), ("state folder", &roots.state)] {
        check_folder(&mut report, name, dir);
    }
    check_state(&mut report, &roots);
    check_memory_text(&mut report, &roots);
    check_paused(&mut report, &roots);
    match crate::config::Config::load(&crate::config::file(&roots)) {
        Ok(_) => report
            .ok(&format!("configuration {} readable (or absent: defaults)", crate::config::file(&roots).display())),
        Err(e) => report.problem(&format!("{e:#}"), "fix the file; the README's Settings section lists every key"),
    }
    if report.problems > 0 {
        bail!("{} problem(s) found", report.problems);
    }
    super::println("all good")?;
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
    let mut child = Command::new(claude)
        .arg("--version")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let started = Instant::now();
    while child.try_wait().ok()?.is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take()?, &mut out).ok()?;
    Some(out.trim().to_string()).filter(|v| !v.is_empty())
}

fn check_hooks(report: &mut Report) -> Result<()> {
    let settings = crate::env::home()?.join(".claude").join("settings.json");
    let found = match crate::claude::hooks::registered_hooks(&settings) {
        Ok(found) => found,
        Err(e) => {
            report.problem(&format!("{e:#}"), "fix the settings file, then run memory-save install");
            return Ok(());
        }
    };
    if found.is_empty()
        && let Some(plugin) = crate::claude::hooks::enabled_plugin(&settings)
    {
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
    let this = std::env::current_exe().and_then(std::fs::canonicalize).ok();
    let missing: Vec<String> =
        expected_hooks().into_iter().filter(|want| !found.iter().any(|(_, words)| words.join(" ") == *want)).collect();
    if missing.is_empty() {
        report.ok(&format!("all {} hook commands registered in {}", expected_hooks().len(), settings.display()));
    } else {
        report.problem(
            &format!("{} lacks: {}", settings.display(), missing.join(", ")),
            "run memory-save install (or ./install.sh)",
        );
    }
    let elsewhere: Vec<&str> = found
        .iter()
        .map(|(program, _)| program.as_str())
        .filter(|program| std::fs::canonicalize(program).ok() != this)
        .collect();
    if let Some(program) = elsewhere.first() {
        report.problem(
            &format!(
                "hooks run {program}, not this binary ({})",
                this.map(|p| p.display().to_string()).unwrap_or_default()
            ),
            "run memory-save install from the binary you want the hooks to use",
        );
    }
    Ok(())
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
        Ok(Some(text)) => match crate::memory::text::first_unwanted_line(&text) {
            None => report.ok(&format!("{} holds plain text", folder.memory_path().display())),
            Some((line, why)) => report.problem(
                &format!("{} line {line}: {why}", folder.memory_path().display()),
                "edit that line: every session loads this file as instructions",
            ),
        },
        Ok(None) => {}
        Err(e) => report.problem(&format!("{e:#}"), "replace it with a regular file"),
    }
}

/// Sessions whose saves the cost guard or a budget stopped.
fn check_paused(report: &mut Report, roots: &Roots) {
    let sessions = crate::store::state::SessionStore::new(roots.sessions_dir());
    for (id, state) in sessions.all() {
        if let Some(pause) = &state.paused {
            let project = state.project.as_deref().unwrap_or("?");
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
