//! SessionStart: loads the memory (repaired into the template first) at
//! startup, resume, /clear and compaction. Part N of the block comes from the
//! N-th registered command: each has its own 10,000-character budget.

use anyhow::Result;

use super::Ctx;
use super::wire::{HookOutput, HookSpecificOutput};
use crate::memory::{block, gate};
use crate::save::repair::REPAIR_REPORT;
use crate::store::session::BoundGuards;

/// A load waits this long for a save's write, then loads nothing: well
/// inside the hook's deadline.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);
/// A moved repository's first commit is looked up this long: milliseconds
/// in most repositories, and the start stays well inside its deadline.
const ROOT_COMMIT_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

pub fn run(ctx: &Ctx, part: usize) -> Result<Option<HookOutput>> {
    // A `--fork-session` run is our own save (or a user's fork, whose parent
    // already had the memory).
    if ctx.input.source.as_deref() == Some("fork") {
        return Ok(None);
    }
    // The guards that bind are the loaded rules' own: a start that loads
    // nothing (the project off, its memory gone, another folder, a
    // provisional one) leaves none of an earlier load's. One that failed (a
    // save holding the lock past the wait) leaves them as they were.
    let (output, bound) = load(ctx, part)?;
    if part == 1 {
        record_guards(ctx, bound);
    }
    Ok(output)
}

/// The guards a session binds, and the memory (`Folder::key`) and top folder they are of.
type Bound = (String, String, Vec<crate::memory::guard::Active>);

/// What the start loads, and on part 1 the guards of what it loaded.
fn load(ctx: &Ctx, part: usize) -> Result<(Option<HookOutput>, Option<Bound>)> {
    if part == 1 {
        ctx.sessions().remove_stale();
    }
    let folder_path = crate::env::claude_project_dir().unwrap_or_else(|| ctx.input.cwd.clone());
    let config = crate::config::of(&ctx.roots);
    let mut located = crate::project::locate(std::path::Path::new(&folder_path), &ctx.roots, &config)?;
    if located.off_reason(&config).is_some() {
        return Ok((None, None));
    }
    // A moved repository's folder is confirmed by its root commit now, when
    // git finds it in time; otherwise it stays provisional (below).
    if let Err(e) = crate::project::confirm_within(&ctx.roots, &mut located, ROOT_COMMIT_WAIT) {
        crate::store::log::error(&format!("cannot confirm {} by its root commit: {e:#}", located.name));
    }
    let folder = located.folder(&ctx.roots);
    let label = located.label();
    if part == 1 && located.team_dir.is_some() {
        // A merge driver lives in git's config, not in .gitattributes: each
        // clone gets ours here, once.
        crate::team::register_driver(located.git_dir.as_deref());
    }
    let project = located.name;
    let mut told = Vec::new();
    if part == 1 {
        crate::save::queue::take_over_ended(&ctx.sessions(), &folder.key(), &ctx.session);
        crate::save::queue::retry_failed_ended(&ctx.sessions(), &folder.key(), &ctx.session);
        told = crate::save::queue::take_ended_reports(&ctx.sessions(), &folder.key(), &ctx.session)
            .iter()
            .map(|line| format!("memory-save: the last session's save: {}", line.trim_start_matches("memory-save: ")))
            .collect();
        record_route(ctx, &folder_path);
        // What stops saves (a setting that fails closed, a budget reached), told
        // the user, not the model, at every session's start until it is fixed.
        let stops = crate::save::money::ledger::stops(&ctx.roots, &config);
        let setting = stops.config.map(|why| format!("memory-save: saves are stopped: {why}"));
        told.extend(setting.or(stops.budget.map(|s| s.line())));
    }
    // A folder recorded for a repository that is gone, or for this origin at
    // another path, may be this one's, or a stranger's: until its root commit
    // confirmed it (above, or a save), one line says so and nothing of it loads.
    let provisional = located.provisional.is_some() && folder.memory_path().exists();
    if !folder.memory_path().exists() || provisional {
        // The model is told only that nothing loaded; how to take it over is
        // the user's to read, never a command a hostile file could have the
        // model run.
        let context = (provisional && part == 1).then(|| {
            format!(
                "[PROJECT MEMORY: {label}]\nmemory-save holds a memory that may be this repository's; it loads from the next session once a save has found that it is (the same first commit)."
            )
        });
        if provisional && part == 1 {
            told.push(format!(
                "memory-save: {project}'s memory is not loaded until a save finds this repository's first commit in it; if it is yours, take it over now with: memory-save adopt {project}"
            ));
        }
        return Ok((output(context, told), None));
    }
    // Several parts start at once; the lock lets exactly one of them repair.
    let (memory, repaired) = {
        let _lock = folder.lock_within(LOCK_WAIT)?;
        if part == 1 {
            // A folder no repository recorded yet: the first to load it
            // keeps it, its path recorded under the lock taken here.
            folder.claim()?;
        }
        match crate::save::repair::read_repaired(&folder)? {
            Some(read) => read,
            None => return Ok((None, None)),
        }
    };
    let topics = folder.topic_files();
    let topic_line =
        (!topics.is_empty()).then(|| format!("Topic files in {}: {}", folder.dir.display(), topics.join(", ")));
    // The last gate: a line no door could have admitted never reaches the
    // model, nor the user as a rule to quote or review; a text found clean is remembered by hash (docs/design.md §5).
    let gated = folder.gated(&memory, part == 1);
    // A team memory's new CRITICAL RULES wait for review when the gate is
    // on: every part leaves the same lines out.
    let team_gate = label != project && config.review_rules();
    let mut held = if team_gate {
        crate::team::held_rules(&ctx.roots, &located.identity, &project, &folder.dir, &gated.text)
    } else {
        Vec::new()
    };
    // A personal memory's foreign rules (a sync pull, a hand edit outside
    // `memory-save edit`): held with the gate on, quoted once with it off.
    let foreign = if label == project { crate::store::approvals::foreign(&folder, &gated.text) } else { Vec::new() };
    if config.review_rules() {
        held.extend(foreign.iter().cloned());
    }
    let loaded = crate::team::without(&gated.text, &held);
    let note = gate::block_note(gated.withheld.len());
    let held_note = gate::held_note(held.len());
    let guards = crate::store::guards::active(
        &folder,
        || crate::memory::template::critical_rules(&loaded),
        config.review_rules(),
    );
    let guard_line = crate::memory::guard::loaded_line(&guards);
    let trailer: Vec<&str> = [topic_line.as_deref(), note.as_deref(), held_note.as_deref(), guard_line.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let parts = block::context_parts(&label, &loaded, &trailer);
    let total = parts.len();
    let context = parts.into_iter().nth(part - 1);
    if context.is_some() {
        // What the model now holds: a save's message points to it (docs/cost.md).
        crate::save::baseline::record(&ctx.sessions(), &ctx.session, &loaded, part, total);
    }
    // Part 1 names what the load left out, once per load.
    let unwanted = (part == 1).then(|| gate::withheld_report(&gated.withheld)).flatten();
    let mut report: Vec<String> = [repaired.then(|| REPAIR_REPORT.into()), unwanted].into_iter().flatten().collect();
    report.extend(told);
    if part == 1 {
        let rules = crate::store::guard_counts::first_bound_foreign(&folder, &guards);
        if !rules.is_empty() {
            let quoted: Vec<String> = rules.iter().map(|r| format!("\"{r}\"")).collect();
            report.push(format!(
                "memory-save: a guard that did not come from this machine binds from now on: Claude Code asks before a call that breaks {} (memory-save guards lists it; --remove ID turns it off)",
                quoted.join("; ")
            ));
        }
    }
    if part == 1 && label == project && !foreign.is_empty() {
        let said = if config.review_rules() {
            Some(crate::team::held_report_for("CRITICAL RULES that did not come from this machine's saves", &foreign))
        } else {
            let quoted = crate::store::approvals::quoted(&folder);
            let new: Vec<String> = foreign.iter().filter(|r| !quoted.contains(r)).cloned().collect();
            if let Err(e) = crate::store::approvals::set_quoted(&folder, &foreign) {
                crate::store::log::error(&format!("cannot record the quoted rules: {e:#}"));
            }
            (!new.is_empty()).then(|| {
                format!(
                    "memory-save: MEMORY.md holds CRITICAL RULES that did not come from this machine's saves (a sync pull, a hand edit), and every session loads them: {} (memory-save review --approve-all marks them yours)",
                    crate::team::quote_rules(&new)
                )
            })
        };
        report.extend(said);
    }
    if part == 1 && label != project {
        // A team memory changes by pulls too: new CRITICAL RULES are shown.
        let rules = if team_gate {
            crate::team::held_report(&held)
        } else {
            crate::team::new_rules(&ctx.roots, &project, &folder.dir, &gated.text)
        };
        report.extend(rules);
    }
    let top = located.roots.first().map(|top| top.display().to_string()).unwrap_or_default();
    Ok((output(context, report), (part == 1).then(|| (folder.key(), top, guards))))
}

/// The lines for the user and the part for the model; nothing when both are empty.
fn output(context: Option<String>, lines: Vec<String>) -> Option<HookOutput> {
    if context.is_none() && lines.is_empty() {
        return None;
    }
    Some(HookOutput {
        system_message: (!lines.is_empty()).then(|| crate::memory::text::visible(&lines.join("\n"))),
        hook_specific_output: context.map(|context| HookSpecificOutput {
            hook_event_name: "SessionStart",
            additional_context: Some(context),
            ..HookSpecificOutput::default()
        }),
    })
}

/// The guards that bind in this session, where PreToolUse reads them; none
/// when the start loaded no memory.
fn record_guards(ctx: &Ctx, bound: Option<Bound>) {
    let sessions = ctx.sessions();
    let now = sessions.peek(&ctx.session).input;
    let unchanged = match &bound {
        Some((project, root, guards)) => {
            now.project.as_deref() == Some(project.as_str())
                && now.guard_root == *root
                && now.guards == BoundGuards::of(guards)
        }
        None => now.guards.is_empty(),
    };
    if unchanged {
        return;
    }
    let recorded = sessions.update(&ctx.session, |s| match bound {
        Some((project, root, guards)) => {
            s.input.project = Some(project);
            s.input.guard_root = root;
            s.input.guards = BoundGuards::of(&guards);
        }
        None => s.input.guards = BoundGuards::default(),
    });
    if let Err(e) = recorded {
        crate::store::log::error(&format!("cannot record the session's guards: {e:#}"));
    }
}

/// Who pays, read where the session's environment is (`install`, `status`
/// and `doctor` lack it): kept in the session's state and as the last route.
fn record_route(ctx: &Ctx, project_dir: &str) {
    let route = crate::claude::route::of_session(std::path::Path::new(project_dir));
    let sessions = ctx.sessions();
    if sessions.peek(&ctx.session).input.route.as_ref() != Some(&route)
        && let Err(e) = sessions.update(&ctx.session, |s| s.input.route = Some(route.clone()))
    {
        crate::store::log::error(&format!("cannot record the billing route: {e:#}"));
    }
    crate::save::money::ledger::record_route(&ctx.roots, &route);
}
