//! `memory-save guards`: the project's guards (a CRITICAL RULE that makes
//! Claude Code ask before a call breaks it), and the user's changes to them.

use anyhow::Result;
use serde::Serialize;

use crate::memory::guard::{Decision, Spec};
use crate::store::guards::{self, Action};

/// List this project's guards, or change one: --deny, --ask, --remove,
/// --approve (an id's first characters are enough).
#[derive(Debug, clap::Args)]
pub struct GuardsArgs {
    /// Refuse the calls it matches instead of asking.
    #[arg(long, value_name = "ID", group = "change")]
    deny: Option<String>,
    /// Ask before the calls it matches (the default).
    #[arg(long, value_name = "ID", group = "change")]
    ask: Option<String>,
    /// Remove the guard; its rule stays in MEMORY.md as words.
    #[arg(long, value_name = "ID", group = "change")]
    remove: Option<String>,
    /// Let a guard that came from elsewhere bind here (with `review = "rules"`).
    #[arg(long, value_name = "ID", group = "change")]
    approve: Option<String>,
    /// Print the list as JSON, for scripts.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Listed {
    id: String,
    rule: String,
    #[serde(flatten)]
    spec: Spec,
    decision: Decision,
    /// binds, waits for review, its rule is not loaded, or refused: why.
    standing: String,
    /// How often it fired and was let through here, and when it last fired.
    #[serde(flatten)]
    seen: crate::store::guard_counts::Seen,
    /// made here (a save of this machine, or the user's change), or came from elsewhere.
    origin: &'static str,
}

impl super::Run for GuardsArgs {
    fn run(&self) -> Result<()> {
        let super::Here { roots, config, folder, .. } = super::here()?;
        let review = config.review_rules();
        let change = [
            (&self.deny, Action::Decide(Decision::Deny)),
            (&self.ask, Action::Decide(Decision::Ask)),
            (&self.approve, Action::Approve),
            (&self.remove, Action::Remove),
        ]
        .into_iter()
        .find_map(|(id, change)| id.as_ref().map(|id| (id, change)));
        if let Some((id, change)) = change {
            let guard = guards::change(&folder, id, change)?;
            guards::publish(&folder, review);
            let done = match change {
                Action::Remove => "removed; its rule stays in MEMORY.md as words",
                Action::Approve => "binds on this machine now",
                Action::Decide(_) => "changed",
            };
            let words = crate::memory::guard::in_words(guard.spec.tool, &guard.spec.pattern, guard.decision);
            let rule = guard.rule.trim_start_matches("- ").replace('\n', "\\n");
            return super::println(&format!(
                "memory-save: guard {} ({}) {done}: {rule}",
                guard.id,
                words.replace('\n', "\\n")
            ));
        }
        guards::load(&folder)?;
        let seen = crate::store::guard_counts::seen(&roots, &folder.key());
        let own = crate::store::folder_record::read(&folder).own_guards;
        let listed: Vec<Listed> = guards::standings(&folder, || guards::rules_loaded_now(&folder, review), review)
            .into_iter()
            .map(|(g, standing)| Listed {
                origin: if own.contains(&guards::trust_key(&g)) { "this machine" } else { "elsewhere" },
                standing: standing.words(),
                seen: seen.get(&g.id).cloned().unwrap_or_default(),
                id: g.id,
                rule: g.rule,
                spec: g.spec,
                decision: g.decision,
            })
            .collect();
        if self.json {
            return super::print_json(&listed);
        }
        if listed.is_empty() {
            return super::println(&format!(
                "no guards in {}: a save adds one when a CRITICAL RULE forbids a command or a path",
                folder.project
            ));
        }
        // A rule or a pattern from a synced file is one field on its line,
        // whatever line breaks it holds.
        let one_line = |text: &str| text.replace('\r', "\\r").replace('\n', "\\n");
        let mut out = String::new();
        for l in &listed {
            let last = l.seen.last_fired.map(|at| format!(", last {}", crate::env::timestamp(at))).unwrap_or_default();
            out.push_str(&format!(
                "{}  {} {:?}: {}\n  rule: {}\n  {}; fired {} times, let through {}{last}; from {}\n",
                l.id,
                l.decision.word(),
                l.spec.tool,
                one_line(&l.spec.pattern),
                one_line(l.rule.trim_start_matches("- ")),
                one_line(&l.standing),
                l.seen.fired,
                l.seen.overridden,
                l.origin
            ));
        }
        super::print(&out)
    }
}
