//! `memory-save doctor`: checks what a working setup needs and says what to
//! do about each problem. Exits 3 when something is wrong (`exit`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use anyhow::Result;

use crate::env::timestamp;
use crate::memory::cost::usd;
use crate::memory::report::plural;
use crate::memory::text::visible;
use crate::store::paths::Roots;

mod guards;
mod setup;
use setup::{check_claude, check_hooks, check_login};

/// Doctor's findings, printed as they come (a slow check shows what was
/// found before it), or gathered for `--json`.
struct Report {
    problems: usize,
    warnings: usize,
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
        // One line each: a newline in a path would print a finding of its own.
        let line = |text: &str| visible(&text.replace('\n', "\\n"));
        let fix = fix.map(|f| format!("\n         {}", c.plain(&format!("→ {}", line(f))))).unwrap_or_default();
        let _ = super::print_painted(&format!("{label} {}{fix}\n", line(what)));
    }

    fn ok(&mut self, what: &str) {
        self.add("ok", what, None);
    }

    /// Worth knowing, not wrong: does not fail doctor.
    fn warn(&mut self, what: &str, fix: &str) {
        self.warnings += 1;
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
        let roots = crate::config::roots()?;
        let colour = super::colour::Colour::for_stdout();
        let mut report = Report { problems: 0, warnings: 0, json: self.json, colour, findings: Vec::new() };
        check_claude(&mut report);
        check_login(&mut report);
        check_hooks(&mut report)?;
        for (name, dir) in [("memory folder", &roots.memory), ("state folder", &roots.state)] {
            check_folder(&mut report, name, dir);
        }
        check_state(&mut report, &roots);
        check_memory_text(&mut report);
        guards::check_guards(&mut report);
        check_sync(&mut report, &roots);
        check_attributes(&mut report, &roots);
        check_config(&mut report, &roots);
        check_spend(&mut report, &roots);
        check_last_save(&mut report, &roots);
        if self.json {
            super::print_json(&serde_json::json!({"problems": report.problems, "findings": report.findings}))?;
        }
        if report.problems > 0 {
            return Err(super::exit::ProblemsFound(report.problems).into());
        }
        match report.warnings {
            _ if self.json => Ok(()),
            0 => super::println("all good"),
            n => super::println(&format!("no problems; {} above worth a look", plural(n as u64, "warning"))),
        }
    }
}

fn check_sync(report: &mut Report, roots: &Roots) {
    let Some(state) = crate::sync::state(roots) else {
        return report.ok("sync off (memory-save sync --init <git-url> keeps memory the same on your machines)");
    };
    match &state.error {
        None => report.ok(&format!(
            "synced with {}{}",
            state.remote,
            state.synced_at.map(|at| format!(" at {}", timestamp(at))).unwrap_or_default()
        )),
        Some(error) => report.problem(
            &format!(
                "not synced with {} since {}: {error}",
                state.remote,
                state.synced_at.map_or_else(|| "sync was turned on".to_string(), timestamp)
            ),
            "check the remote and your access to it (git fetch in the memory folder), then run memory-save sync",
        ),
    }
}

/// Only memory files may go to our merge driver: it declines others with
/// git's own conflict, but a line routing them there should not be.
fn check_attributes(report: &mut Report, roots: &Roots) {
    let cwd = std::env::current_dir().unwrap_or_default();
    let files: [(_, &[&str]); 2] = [
        (roots.memory.join(".git/info/attributes"), &["*.md", "guards.json", ".identity"]),
        (
            crate::project::work_tree_top(&cwd).join(".gitattributes"),
            &[".claude/memory/*.md", ".claude/memory/guards.json"],
        ),
    ];
    for (file, ours) in files {
        let Ok(Some(text)) = crate::store::folder::read_if_exists(&file) else { continue };
        for line in text.lines().filter(|l| l.contains("merge=memory-save")) {
            let pattern = line.split_whitespace().next().unwrap_or("");
            if !ours.contains(&pattern) {
                report.problem(
                    &format!("{}: \"{}\" sends files that are not memory to memory-save's merge driver", file.display(), line.trim()),
                    &format!("keep only \"{} merge=memory-save\" (the driver declines other files, leaving git's own conflict)", ours.join(" merge=memory-save\" and \"")),
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
fn check_memory_text(report: &mut Report) {
    let Ok(super::Here { roots, cwd, project, folder, .. }) = super::here() else { return };
    for (name, record) in crate::project::adoptable(&roots, &project) {
        report.warn(
            &format!(
                "memory folder {name}, recorded for {}, could be this repository's memory (a moved or copied repository's)",
                record.seen_at()
            ),
            &format!("if it is, take it over with: memory-save adopt {name}"),
        );
    }
    let path = folder.memory_path();
    let text = match crate::store::folder::read_if_exists(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return,
        Err(e) => return report.problem(&format!("{e:#}"), "replace it with a regular file"),
    };
    let file = path.display();
    let findings = crate::project::check::findings(&project, &folder, &text, &cwd, true);
    // Said as it stands: a finding a fork was told of is not told again.
    let noted = crate::store::folder_record::read(&folder).noted;
    let rules = crate::memory::template::critical_rules(&text);
    let withheld = |line: usize| findings.withheld.iter().any(|w| w.line == line);
    for s in findings.stale.iter().take(10) {
        let fix = if withheld(s.line) {
            "no session nor fork is shown this line (below): edit it: memory-save edit"
        } else if noted.stale.contains(&(s.text.clone(), s.path.clone())) {
            "a save has asked the fork about it already, and it kept the line; if it is wrong, edit it: memory-save edit"
        } else if rules.contains(&s.text.trim().to_string()) {
            "a CRITICAL RULE: the next save asks the fork to keep it unless the path moved; or edit it: memory-save edit"
        } else {
            "the next save asks the fork to update or remove it; or edit it: memory-save edit"
        };
        report.warn(&format!("{file} line {}: `{}` {}", s.line, s.path, s.found.describe()), fix);
    }
    for d in findings.duplicates.iter().take(10) {
        let fix = if noted.duplicates.contains(&(d.texts[0].clone(), d.texts[1].clone())) {
            "a save has asked the fork about them already, and it kept both; if they are one fact, edit them: memory-save edit"
        } else {
            "the next save asks the fork to merge them; or edit them: memory-save edit"
        };
        report.warn(&format!("{file} lines {} and {} say nearly the same thing", d.lines[0], d.lines[1]), fix);
    }
    if findings.withheld.is_empty() {
        report.ok(&format!("{file} holds plain text"));
    }
    // The lines the load gate leaves out of every session.
    for w in &findings.withheld {
        report.problem(
            &format!("{file} line {}: {}; sessions do not load it", w.line, w.why),
            "edit that line (memory-save edit): every session loads this file as instructions",
        );
    }
}

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
    let billing = match crate::save::money::ledger::last_route(roots) {
        Some(seen) => format!("{} (seen at a session start, {})", seen.route.sentence(), timestamp(seen.at)),
        None => "no session has started since install; who pays is known at the first one".to_string(),
    };
    report.ok(&format!("billing: {billing}"));
    let now = crate::env::now_unix();
    let config = crate::config::of(roots);
    // A plan's windows are seen only through a status line of ours.
    let route = crate::save::money::ledger::last_route(roots).map(|s| s.route);
    let route = route.unwrap_or_else(|| crate::claude::route::of_session(std::path::Path::new(".")));
    let cwd = std::env::current_dir().unwrap_or_default();
    if let Some(plan) = crate::cmd::status::plan_line(roots, &config, &cwd, route.draws_on_plan_windows()) {
        if crate::claude::registrations::statusline_registered(&cwd) {
            report.ok(&format!("plan usage: {plan}"));
        } else {
            report.warn(
                "a Claude plan's saves cannot wait for its 5-hour and weekly windows: memory-save reads them from its status line, which is not installed",
                "memory-save install --statusline (a status line of yours keeps running)",
            );
        }
    }
    let stops = crate::save::money::ledger::stops(roots, &config);
    if let Some(hold) = &stops.allowance {
        report.problem(
            &format!("{}: the API refused a save: \"{}\"", hold.status(), hold.text),
            "forks wait for the reset (a refusal that names none is tried once an hour), and the turns they hold back are saved then; nothing to do",
        );
    }
    for (model, hold) in &stops.models {
        report.problem(
            &format!("paused: sessions on {model}: \"{}\"", hold.text),
            "turn on usage credits, or set model in memory-save.toml for the fork; it is tried again within the hour",
        );
    }
    if let Some(stopped) = &stops.budget {
        report.problem(
            &stopped.status(),
            &format!("saves go on {}, or raise {} in memory-save.toml", timestamp(stopped.until), stopped.budget),
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
                plural(ahead as u64, "save record")
            ),
            "check the clock (date); budgets stay safe meanwhile",
        );
    }
    let month = crate::save::money::month::gather(roots, &config, now);
    for b in month.budgets.iter().filter(|b| b.share >= 0.8 && b.share < 1.0) {
        report.warn(
            &format!("{} of {} ({}) spent", usd(b.spent_usd), usd(b.limit_usd), b.budget),
            "memory-save cost shows the month day by day",
        );
    }
}

/// The machine's last save, when it failed: a finding, with when and the
/// fix its report line gave, until one succeeds or its cause is gone (a
/// fork that could not log in, and a login the fork finds is there now).
fn check_last_save(report: &mut Report, roots: &Roots) {
    let Some(last) = crate::store::saves::all(roots).pop().filter(|l| l.status.starts_with("error")) else { return };
    let project =
        last.project.as_deref().map_or("?".into(), |key| crate::store::folder::Folder::of_key(roots, key).project);
    let what = format!("the last save ({project}, {}) failed: {}", timestamp(last.at), last.status);
    if last.status.contains("Not logged in") && crate::claude::settings::stored_login() {
        report.ok(&format!("{what}; Claude Code has a stored login now, so the next save can log in"));
        return;
    }
    let log = "see the log (~/.cli-tweaks/state/memory-save/memory-save.log); the next save tries again";
    report.problem(&what, last.advice.as_deref().unwrap_or(log));
}

fn check_state(report: &mut Report, roots: &Roots) {
    use crate::store::state::{parse_state, read_state_bytes};
    let Ok(entries) = std::fs::read_dir(roots.sessions_dir()) else { return };
    let broken: Vec<String> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| read_state_bytes(p).and_then(|b| parse_state(&b)).is_none())
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
