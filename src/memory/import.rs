//! `memory-save import`: a markdown file repaired into the template and
//! merged into ours by section, topic files copied, every line that cannot
//! come in named in the report. Text in, text out.

use super::MAX_BULLET_CHARS;
use super::apply::check_topic_name;
use super::reply::TopicAppend;
use super::template::{self, ARCHITECTURE, LineKind, PLACEHOLDER, SECTIONS, TOPIC_FILES};

/// Where a bullet too long for MEMORY.md goes.
pub const LONG_BULLETS_FILE: &str = "imported.md";

#[derive(Debug, Default, PartialEq)]
pub struct Imported {
    pub memory: String,
    pub topics: Vec<TopicAppend>,
    /// One line per thing that did not come in as it was.
    pub report: Vec<String>,
}

/// The lines before the first section, and each section's body.
fn sections(text: &str) -> (Vec<String>, [Vec<String>; 4]) {
    let mut preamble = Vec::new();
    let mut bodies: [Vec<String>; 4] = Default::default();
    let kinds = template::classify(text);
    for ((line, section), kind) in text.lines().zip(template::sections_of_lines(text)).zip(kinds) {
        match (section, kind) {
            (_, LineKind::Section) => {}
            (None, LineKind::Title) => {}
            (Some(s), _) => bodies[s].push(line.to_string()),
            (None, _) => preamble.push(line.to_string()),
        }
    }
    (preamble, bodies)
}

/// `ours` with the lines of `theirs` it lacks added at the end of their
/// section (lines above the first go to Architecture & Config Facts). Both
/// must be in the template; so is the result.
pub fn merge_sections(ours: &str, theirs: &str, project: &str) -> String {
    let title = ours.lines().find(|l| !l.trim().is_empty()).map_or_else(|| format!("# {project}"), str::to_string);
    let ((preamble, mut bodies), (their_preamble, mut theirs)) = (sections(ours), sections(theirs));
    let mut loose = their_preamble;
    loose.append(&mut theirs[ARCHITECTURE]);
    theirs[ARCHITECTURE] = loose;
    for (body, new) in bodies.iter_mut().zip(theirs) {
        for line in new {
            let fresh = !line.trim().is_empty()
                && line.trim() != PLACEHOLDER
                && !body.iter().chain(&preamble).any(|l| l.trim() == line.trim());
            if fresh {
                while body.last().is_some_and(|l| l.trim().is_empty()) {
                    body.pop();
                }
                body.push(line);
            }
        }
    }
    render(&title, &preamble, bodies)
}

fn render(title: &str, preamble: &[String], bodies: [Vec<String>; 4]) -> String {
    let mut out = format!("{title}\n");
    let preamble = without_blank_ends(preamble);
    if !preamble.is_empty() {
        out.push_str(&format!("\n{}\n", preamble.join("\n")));
    }
    for (name, mut body) in SECTIONS.iter().zip(bodies) {
        if body.iter().any(|l| !l.trim().is_empty() && l.trim() != PLACEHOLDER) {
            body.retain(|l| l.trim() != PLACEHOLDER);
        }
        let body = without_blank_ends(&body);
        let body = if body.is_empty() { PLACEHOLDER.to_string() } else { body.join("\n") };
        out.push_str(&format!("\n## {name}\n{body}\n"));
    }
    out
}

fn without_blank_ends(lines: &[String]) -> &[String] {
    let start = lines.iter().position(|l| !l.trim().is_empty()).unwrap_or(lines.len());
    let end = lines.iter().rposition(|l| !l.trim().is_empty()).map_or(start, |i| i + 1);
    &lines[start..end]
}

/// A topic file name that passes the rule, made from `name`.
pub fn valid_topic_name(name: &str) -> String {
    let stem = name.strip_suffix(".md").or_else(|| name.strip_suffix(".MD")).unwrap_or(name);
    let mut out: String = stem
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .map(|c| if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-' { c } else { '-' })
        .collect();
    out = out.trim_start_matches(['-', '_']).chars().take(60).collect();
    if out.is_empty() || out == "memory" {
        out = format!("imported-{}", super::stable_id(name));
    }
    format!("{out}.md")
}

/// `memory`: the source and text to bring in; `existing`: our topic files.
pub fn import(
    current: Option<&str>,
    memory: Option<(&str, &str)>,
    topics: &[(String, String)],
    existing: &[String],
    project: &str,
) -> Imported {
    let mut out = Imported::default();
    let mut long = Vec::new();
    let base = current.map_or_else(|| template::skeleton(project), str::to_string);
    let mut merged = base.clone();
    if let Some((source, text)) = memory {
        let repaired = template::repair(text, project).unwrap_or_else(|| text.to_string());
        if repaired != text {
            out.report.push(format!("{source}: put into the four sections"));
        }
        let kinds = template::classify(&repaired);
        let mut kept = Vec::new();
        // Lines are named by their number in the file given, not the repair.
        let source_lines: Vec<&str> = text.lines().collect();
        let line_of = |n: usize, line: &str| source_lines.iter().position(|l| *l == line).map_or(n + 1, |i| i + 1);
        for (n, (line, kind)) in repaired.lines().zip(kinds).enumerate() {
            // Every line but the four headings is checked: a `###` line or
            // a title carries text into every session as well as a bullet.
            let checked = kind != LineKind::Section && !line.trim().is_empty();
            let content = matches!(kind, LineKind::Text) && !line.trim().is_empty();
            if let Some(why) = super::gate::refusal(line).filter(|_| checked) {
                out.report.push(format!("{source}: line {} refused: {why}", line_of(n, line)));
                continue;
            }
            if content && line.chars().count() > MAX_BULLET_CHARS {
                out.report.push(format!(
                    "{source}: line {} has over {MAX_BULLET_CHARS} characters: moved to {LONG_BULLETS_FILE}",
                    line_of(n, line)
                ));
                long.push(line.to_string());
                continue;
            }
            kept.push(line);
        }
        merged = merge_sections(&merged, &(kept.join("\n") + "\n"), project);
    }
    let mut files: Vec<(String, String, String)> =
        topics.iter().map(|(n, t)| (n.clone(), n.clone(), t.clone())).collect();
    if !long.is_empty() {
        files.push((LONG_BULLETS_FILE.into(), LONG_BULLETS_FILE.into(), long.join("\n") + "\n"));
    }
    let mut listed = Vec::new();
    for (source, name, content) in files {
        let name = if check_topic_name(&name).is_ok() {
            name
        } else {
            let valid = valid_topic_name(&name);
            out.report.push(format!("{source}: copied as {valid} (topic file names are lowercase, ending in .md)"));
            valid
        };
        let mut lines = Vec::new();
        for (n, line) in content.lines().enumerate() {
            match super::gate::refusal(line) {
                Some(why) => out.report.push(format!("{source}: line {} refused: {why}", n + 1)),
                None => lines.push(line),
            }
        }
        if lines.iter().all(|l| l.trim().is_empty()) {
            continue;
        }
        if existing.contains(&name) || out.topics.iter().any(|t| t.file == name) {
            out.report.push(format!("{source}: appended to the existing {name}"));
        }
        out.topics.push(TopicAppend { file: name.clone(), append: lines.join("\n") + "\n" });
        listed.push(name);
    }
    // Every topic file named under Topic Files, once.
    let (preamble, mut bodies) = sections(&merged);
    for name in listed {
        if !bodies[TOPIC_FILES].iter().any(|l| l.contains(&name)) {
            bodies[TOPIC_FILES].push(format!("- {name}"));
        }
    }
    let title = merged.lines().next().unwrap_or_default().to_string();
    out.memory = render(&title, &preamble, bodies);
    if current.is_some_and(|c| c == out.memory) || (current.is_none() && out.memory == template::skeleton(project)) {
        out.memory = base;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn with(rules: &[&str], facts: &[&str]) -> String {
        let body = |lines: &[&str]| if lines.is_empty() { PLACEHOLDER.to_string() } else { lines.join("\n") };
        format!(
            "# p\n\n## CRITICAL RULES\n{}\n\n## Architecture & Config Facts\n{}\n\n## Active Warnings\n{PLACEHOLDER}\n\n## Topic Files\n{PLACEHOLDER}\n",
            body(rules),
            body(facts)
        )
    }

    #[test]
    fn lines_land_in_their_section_once() {
        let ours = with(&["- a"], &[]);
        let theirs = with(&["- a", "- b"], &["- f"]);
        assert_eq!(merge_sections(&ours, &theirs, "p"), with(&["- a", "- b"], &["- f"]));
    }

    #[test]
    fn a_loose_file_is_repaired_and_nothing_goes_silently() {
        // Built from parts, so no scanner takes this file for a leak.
        let secret = ["- token ", "ghp_", "Zx8Qp2Lm9Rt4", "Vw7Ky1Nb6Hc3", "Fd5Gs0Ja8Ue2"].concat();
        let long = format!("- {}", "x".repeat(700));
        let source =
            format!("# Notes\n\n## CRITICAL RULES\n- never push to main\n{secret}\n\n## Misc\n{long}\n- kept\n");
        let topics = vec![("Deploy Notes.md".to_string(), "step one\n".to_string())];
        let out = import(None, Some(("MEMORY.md", &source)), &topics, &[], "p");
        assert!(template::is_in_template(&out.memory), "{}", out.memory);
        assert!(out.memory.contains("- never push to main") && out.memory.contains("- kept"), "{}", out.memory);
        assert!(!out.memory.contains("ghp_"), "{}", out.memory);
        assert!(!out.memory.contains(&long), "{}", out.memory);
        let report = out.report.join("\n");
        assert!(report.contains("refused") && report.contains("moved to imported.md"), "{report}");
        assert!(report.contains("copied as deploy-notes.md"), "{report}");
        let files: Vec<&str> = out.topics.iter().map(|t| t.file.as_str()).collect();
        assert_eq!(files, ["deploy-notes.md", "imported.md"]);
        assert!(out.memory.contains("- deploy-notes.md") && out.memory.contains("- imported.md"));
    }

    #[test]
    fn topic_names_are_made_valid() {
        for (name, valid) in
            [("Notes.md", "notes.md"), ("a b.MD", "a-b.md"), ("MEMORY.md", "imported-"), ("ok.md", "ok.md")]
        {
            let made = valid_topic_name(name);
            assert!(
                made.starts_with(valid.trim_end_matches(".md")) && check_topic_name(&made).is_ok(),
                "{name} → {made}"
            );
        }
    }

    proptest! {
        /// Merging never loses a line of either side, and stays in the template.
        #[test]
        fn merging_keeps_every_line(ours in proptest::collection::vec("- [a-d]{1,3}", 0..6), theirs in proptest::collection::vec("- [a-d]{1,3}", 0..6)) {
            let a: Vec<&str> = ours.iter().map(String::as_str).collect();
            let b: Vec<&str> = theirs.iter().map(String::as_str).collect();
            let merged = merge_sections(&with(&a, &[]), &with(&[], &b), "p");
            prop_assert!(template::is_in_template(&merged));
            for line in a.iter().chain(&b) {
                prop_assert!(merged.lines().any(|l| l == *line), "{} lost in {}", line, merged);
            }
            prop_assert_eq!(merge_sections(&merged, &merged, "p"), merged.clone());
        }
    }
}
