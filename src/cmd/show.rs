//! `memory-save show [--path|--check]`: what the next session loads.

use anyhow::Result;

use crate::memory::block::{self, PART_LIMIT};
use crate::store::guards;

/// Print what the next session of this project loads, every part labelled
/// with its size against the 10,000-character budget.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// Print only the path of this project's MEMORY.md.
    #[arg(long)]
    path: bool,
    /// List the lines that name a path the repository no longer has, and
    /// near-duplicate lines, with their line numbers.
    #[arg(long, conflicts_with = "path")]
    check: bool,
    /// With --check: print it as JSON, for scripts.
    #[arg(long, requires = "check")]
    json: bool,
}

impl super::Run for ShowArgs {
    fn run(&self) -> Result<()> {
        let super::Here { cwd, config, project, folder, .. } = super::here()?;
        if self.path {
            return super::println(&folder.memory_path().display().to_string());
        }
        let name = &project.name;
        if let Some(off) = project.off_reason(&config) {
            return super::println(&format!("memory-save is {off} for project {name}: a session loads nothing"));
        }
        let Some(text) = folder.read_memory()? else {
            if self.check && self.json {
                return super::print_json(&crate::project::check::findings(&project, &folder, "", &cwd, false));
            }
            return super::println(&format!(
                "no MEMORY.md yet at {}: a session of project {name} loads nothing",
                folder.memory_path().display()
            ));
        };
        if self.check {
            let findings = crate::project::check::findings(&project, &folder, &text, &cwd, true);
            if self.json {
                return super::print_json(&findings);
            }
            let summary =
                findings.count().unwrap_or_else(|| "every path it names exists, no near-duplicate lines".to_string());
            return super::print(&format!(
                "memory-save show --check: {}: {summary}\n{}",
                findings.memory,
                findings.render()
            ));
        }
        // What SessionStart would do first, without writing it here.
        let repaired = crate::memory::template::repair(&text, &folder.project);
        let memory = repaired.as_deref().unwrap_or(&text);
        let topics = folder.topic_files();
        let topic_line =
            (!topics.is_empty()).then(|| format!("Topic files in {}: {}", folder.dir.display(), topics.join(", ")));
        // The load gate, as SessionStart applies it.
        let gated = crate::memory::gate::load(memory);
        let note = crate::memory::gate::block_note(gated.withheld.len());
        let review = config.review_rules();
        let active = guards::active(&folder, || guards::rules_loaded_now(&folder, review), review);
        let guard_line = crate::memory::guard::loaded_line(&active);
        let trailer: Vec<&str> =
            [topic_line.as_deref(), note.as_deref(), guard_line.as_deref()].into_iter().flatten().collect();
        let parts = block::context_parts(&project.label(), &gated.text, &trailer);
        let mut out = format!(
            "memory-save show: the next session of project {name} loads {} from {}\n",
            crate::memory::report::plural(parts.len() as u64, "part"),
            folder.memory_path().display()
        );
        if repaired.is_some() {
            out.push_str(
                "(the file is out of the template: the session first puts it into the four sections, as shown)\n",
            );
        }
        for (n, part) in parts.iter().enumerate() {
            out.push_str(&format!(
                "\n── part {} of {} · {} of {PART_LIMIT} characters ──\n{part}\n",
                n + 1,
                parts.len(),
                block::width(part)
            ));
        }
        if let Some(report) = crate::memory::gate::withheld_report(&gated.withheld) {
            out.push_str(&format!("\nthe session is also told: {report}\n"));
        }
        super::print(&out)
    }
}
