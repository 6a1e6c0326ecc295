//! What the user sees of a save: the short status-line text and the report
//! line shown once in the transcript.

use super::apply::Outcome;
use super::text::shorten;

/// A reply of a thousand bad ops makes one readable line, not a megabyte.
const MAX_REPORT_CHARS: usize = 1_500;
/// Items listed per clause; the rest are counted.
const MAX_LISTED: usize = 3;
/// A quoted line or reason is cut to this many characters.
const MAX_QUOTE_CHARS: usize = 160;

/// At most `MAX_LISTED` items, each shortened, then "+N more".
fn listed(items: &[String]) -> String {
    let mut out: Vec<String> = items.iter().take(MAX_LISTED).map(|i| shorten(i, MAX_QUOTE_CHARS)).collect();
    if items.len() > MAX_LISTED {
        out.push(format!("+{} more", items.len() - MAX_LISTED));
    }
    out.join(" | ")
}

/// `1 save`, `2 saves`.
pub fn plural(count: u64, noun: &str) -> String {
    if count == 1 { format!("1 {noun}") } else { format!("{count} {noun}s") }
}

pub struct Summary<'a> {
    outcome: &'a Outcome,
    changed_meanwhile: bool,
}

impl<'a> Summary<'a> {
    pub fn of(outcome: &'a Outcome, changed_meanwhile: bool) -> Summary<'a> {
        Summary { outcome, changed_meanwhile }
    }

    /// `+2 -1 ~1 topic: history 1 refused`, or `no change`.
    pub fn status(&self) -> String {
        let o = self.outcome;
        let mut parts: Vec<String> = Vec::new();
        for (n, sign) in [(o.added, '+'), (o.removed, '-'), (o.replaced, '~')] {
            if n > 0 {
                parts.push(format!("{sign}{n}"));
            }
        }
        let topics = o.topic_files();
        if !topics.is_empty() {
            let names: Vec<&str> = topics.iter().map(|t| t.trim_end_matches(".md")).collect();
            parts.push(format!("topic: {}", names.join(", ")));
        }
        if !o.refused.is_empty() {
            parts.push(format!("{} refused", o.refused.len()));
        }
        if !o.skipped.is_empty() {
            parts.push(format!("{} skipped", o.skipped.len()));
        }
        if !o.retired.is_empty() {
            parts.push(format!("{} retired", plural(o.retired.len() as u64, "rule")));
        }
        if !o.held.is_empty() {
            parts.push(format!("{} held for review", o.held.len()));
        }
        if parts.is_empty() { "no change".into() } else { parts.join(" ") }
    }

    /// `memory-save: MEMORY.md: 2 added, 1 removed; appended to history.md`;
    /// `None` when the save neither changed, refused nor skipped anything.
    pub fn report_line(&self) -> Option<String> {
        let o = self.outcome;
        let mut counts: Vec<String> = Vec::new();
        for (n, word) in [(o.added, "added"), (o.removed, "removed"), (o.replaced, "replaced")] {
            if n > 0 {
                counts.push(format!("{n} {word}"));
            }
        }
        let mut clauses: Vec<String> = Vec::new();
        let topics = o.topic_files();
        match (counts.is_empty(), topics.is_empty()) {
            (false, _) => clauses.push(counts.join(", ")),
            (true, false) => clauses.push("topic files only".into()),
            (true, true) => {}
        }
        if !topics.is_empty() {
            clauses.push(format!("appended to {}", topics.join(", ")));
        }
        if !o.rules.is_empty() {
            clauses.push(format!("new standing rule for every session: {}", listed(&o.rules)));
        }
        if !o.guards.is_empty() {
            let each: Vec<String> = o
                .guards
                .iter()
                .map(|(rule, spec)| {
                    let words = super::guard::in_words(spec.tool, &spec.pattern, super::guard::Decision::Ask);
                    format!("{} {words}", rule.trim_start_matches("- "))
                })
                .collect();
            clauses.push(format!("new guard, Claude Code asks you first (memory-save guards): {}", listed(&each)));
        }
        if !o.orders.is_empty() {
            clauses.push(format!("new order outside CRITICAL RULES, read by every session: {}", listed(&o.orders)));
        }
        if !o.retired.is_empty() {
            clauses.push(format!("retired from CRITICAL RULES, kept in history.md: {}", listed(&o.retired)));
        }
        if !o.held.is_empty() {
            clauses.push(format!(
                "{} to CRITICAL RULES or orders {} for your review: memory-save review",
                plural(o.held.len() as u64, "change"),
                if o.held.len() == 1 { "waits" } else { "wait" }
            ));
        }
        if !o.refused.is_empty() {
            let why: Vec<String> = o.refused.iter().map(|r| r.why.clone()).collect();
            clauses.push(format!("{} refused ({})", o.refused.len(), listed(&dedup(why)).replace(" | ", "; ")));
        }
        if !o.skipped.is_empty() {
            clauses.push(format!("{} skipped (line not in the file: {})", o.skipped.len(), listed(&o.skipped)));
        }
        if clauses.is_empty() {
            return None;
        }
        if self.changed_meanwhile {
            clauses.push("applied to the file as another writer left it".into());
        }
        Some(shorten(&format!("memory-save: MEMORY.md: {}", clauses.join("; ")), MAX_REPORT_CHARS))
    }
}

fn dedup(mut items: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items.retain(|i| seen.insert(i.clone()));
    items
}

pub fn join(first: Option<&str>, second: Option<&str>) -> String {
    [first, second].into_iter().flatten().collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::apply::Refusal;
    use crate::memory::reply::TopicAppend;

    fn outcome(added: usize, removed: usize, replaced: usize, topics: &[&str]) -> Outcome {
        Outcome {
            added,
            removed,
            replaced,
            topics: topics.iter().map(|f| TopicAppend { file: f.to_string(), append: "x".into() }).collect(),
            ..Outcome::default()
        }
    }

    #[test]
    fn status_and_report_lines() {
        let cases: Vec<(Outcome, &str, Option<&str>)> = vec![
            (outcome(0, 0, 0, &[]), "no change", None),
            (outcome(2, 1, 0, &[]), "+2 -1", Some("memory-save: MEMORY.md: 2 added, 1 removed")),
            (
                outcome(3, 1, 3, &["history.md"]),
                "+3 -1 ~3 topic: history",
                Some("memory-save: MEMORY.md: 3 added, 1 removed, 3 replaced; appended to history.md"),
            ),
            (
                outcome(0, 0, 0, &["history.md"]),
                "topic: history",
                Some("memory-save: MEMORY.md: topic files only; appended to history.md"),
            ),
        ];
        for (o, status, report) in cases {
            let s = Summary::of(&o, false);
            assert_eq!(s.status(), status);
            assert_eq!(s.report_line().as_deref(), report);
        }
        let mut o = outcome(2, 0, 0, &[]);
        o.refused.push(Refusal { entry: "x".into(), why: "too long".into() });
        o.skipped.push("- gone".into());
        let s = Summary::of(&o, true);
        assert_eq!(s.status(), "+2 1 refused 1 skipped");
        assert_eq!(
            s.report_line().unwrap(),
            "memory-save: MEMORY.md: 2 added; 1 refused (too long); 1 skipped (line not in the file: - gone); applied to the file as another writer left it"
        );
    }
}
