//! The four fixed sections, the skeleton of a new file, and the repair that
//! puts any other file into that shape without dropping a line.

pub const SECTIONS: [&str; 4] = ["CRITICAL RULES", "Architecture & Config Facts", "Active Warnings", "Topic Files"];
pub const CRITICAL_RULES: usize = 0;
pub const ARCHITECTURE: usize = 1;
pub const TOPIC_FILES: usize = 3;
pub const PLACEHOLDER: &str = "- None yet.";
pub const UNSORTED_PREFIX: &str = "### Unsorted: ";

pub fn skeleton(project: &str) -> String {
    let mut out = format!("# {project}\n");
    for section in SECTIONS {
        out.push_str(&format!("\n## {section}\n{PLACEHOLDER}\n"));
    }
    out
}

/// What a line is, as far as the template cares. Lines inside a fenced code
/// block are always `Text`, so a `## ` in a pasted snippet is not a heading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Title,
    Section,
    Subheading,
    Text,
}

/// `text` with the placeholder exactly where a section holds nothing (a
/// person may have added a bullet above it, or removed a section's last).
pub fn tidy_placeholders(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let kinds = classify(text);
    let headings: Vec<usize> = kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| matches!(k, LineKind::Section | LineKind::Title))
        .map(|(i, _)| i)
        .collect();
    let mut out: Vec<&str> = Vec::with_capacity(lines.len() + 4);
    out.extend(&lines[..headings.first().copied().unwrap_or(lines.len())]);
    for (n, &heading) in headings.iter().enumerate() {
        let end = headings.get(n + 1).copied().unwrap_or(lines.len());
        let body = &lines[heading + 1..end];
        let content = body.iter().any(|l| !l.trim().is_empty() && l.trim() != PLACEHOLDER);
        out.push(lines[heading]);
        if kinds[heading] == LineKind::Section && !content && !body.iter().any(|l| l.trim() == PLACEHOLDER) {
            out.push(PLACEHOLDER);
        }
        out.extend(body.iter().filter(|l| !content || l.trim() != PLACEHOLDER));
    }
    let mut tidy = out.join("\n");
    if text.ends_with('\n') {
        tidy.push('\n');
    }
    tidy
}

pub fn classify(text: &str) -> Vec<LineKind> {
    let mut in_fence = false;
    text.lines()
        .map(|line| {
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                in_fence = !in_fence;
                return LineKind::Text;
            }
            if in_fence {
                LineKind::Text
            } else if line.starts_with("# ") {
                LineKind::Title
            } else if line.starts_with("## ") {
                LineKind::Section
            } else if line.starts_with("### ") {
                LineKind::Subheading
            } else {
                LineKind::Text
            }
        })
        .collect()
}

/// The heading's text without its `#` marks, for comparisons.
pub fn heading_name(line: &str) -> &str {
    line.trim_start_matches('#').trim()
}

/// For each line, the index in `SECTIONS` of its section; `None` above the first.
pub fn sections_of_lines(text: &str) -> Vec<Option<usize>> {
    let mut current = None;
    text.lines()
        .zip(classify(text))
        .map(|(line, kind)| {
            if kind == LineKind::Section {
                current = SECTIONS.iter().position(|s| heading_name(line) == *s);
            }
            current
        })
        .collect()
}

/// The CRITICAL RULES lines of `memory`, trimmed, without blanks and the placeholder.
pub fn critical_rules(memory: &str) -> Vec<String> {
    memory
        .lines()
        .zip(sections_of_lines(memory))
        .zip(classify(memory))
        .filter(|((line, section), kind)| {
            *section == Some(0) && *kind != LineKind::Section && !line.trim().is_empty() && line.trim() != PLACEHOLDER
        })
        .map(|((line, _), _)| line.trim().to_string())
        .collect()
}

fn canonical_section(line: &str) -> Option<usize> {
    let name = heading_name(line).trim_end_matches(':').trim();
    SECTIONS.iter().position(|s| s.eq_ignore_ascii_case(name))
}

/// Exactly in the template: a `# ` title first and no other, and the four
/// `##` headings once each, in order, spelled exactly.
pub fn is_in_template(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().collect();
    in_template(&lines, &classify(text))
}

/// `is_in_template` on lines already classified (`kinds`, one a line).
pub fn in_template(lines: &[impl AsRef<str>], kinds: &[LineKind]) -> bool {
    let lines: Vec<&str> = lines.iter().map(AsRef::as_ref).collect();
    let Some(first) = lines.iter().position(|l| !l.trim().is_empty()) else { return false };
    if kinds[first] != LineKind::Title {
        return false;
    }
    let mut sections = Vec::new();
    for (i, kind) in kinds.iter().enumerate() {
        match kind {
            LineKind::Title if i != first => return false,
            // A subheading before the first section belongs to none: it
            // would catch adds meant for a section of its name.
            LineKind::Subheading if sections.is_empty() => return false,
            LineKind::Section => sections.push(lines[i].trim_end()),
            _ => {}
        }
    }
    sections.len() == SECTIONS.len()
        && sections.iter().zip(SECTIONS).all(|(line, want)| line.strip_prefix("## ") == Some(want))
}

/// Puts `text` into the template; `None` when it already is. Any other `##`
/// section moves under `### Unsorted: <heading>` at the end of Architecture
/// & Config Facts. Every non-blank line survives (docs/design.md §5).
pub fn repair(text: &str, project: &str) -> Option<String> {
    if is_in_template(text) {
        return None;
    }
    let kinds = classify(text);
    let lines: Vec<&str> = text.lines().collect();
    let title_at = lines.iter().position(|l| !l.trim().is_empty()).filter(|&i| kinds[i] == LineKind::Title);

    let mut preamble: Vec<&str> = Vec::new();
    let mut bodies: [Vec<&str>; 4] = Default::default();
    let mut unsorted: Vec<String> = Vec::new();
    enum Target {
        Preamble,
        Known(usize),
        Unsorted,
    }
    let mut target = Target::Preamble;
    for (i, (line, kind)) in lines.iter().zip(&kinds).enumerate() {
        if Some(i) == title_at {
            continue;
        }
        // A second title, or a `###` above the first section, is a heading
        // the template has no room for: it goes to the unsorted tail.
        let known = match kind {
            LineKind::Section => canonical_section(line),
            LineKind::Title => None,
            LineKind::Subheading if matches!(target, Target::Preamble) => None,
            _ => {
                match target {
                    Target::Preamble => preamble.push(line),
                    Target::Known(s) => bodies[s].push(line),
                    Target::Unsorted => unsorted.push(line.to_string()),
                }
                continue;
            }
        };
        target = match known {
            Some(s) => Target::Known(s),
            None => {
                unsorted.push(format!("{UNSORTED_PREFIX}{}", heading_name(line)));
                Target::Unsorted
            }
        };
    }
    let title = title_at.map(|i| lines[i]);
    Some(render(title, &preamble, &bodies, &unsorted, project))
}

fn render(
    title: Option<&str>,
    preamble: &[&str],
    bodies: &[Vec<&str>; 4],
    unsorted: &[String],
    project: &str,
) -> String {
    let mut out = String::new();
    let name = title.map(heading_name).filter(|t| !t.is_empty()).unwrap_or(project);
    out.push_str(&format!("# {name}"));
    out.push('\n');
    let preamble = trim_blank(preamble.iter().copied());
    if !preamble.is_empty() {
        out.push('\n');
        push_lines(&mut out, &preamble);
    }
    for (i, section) in SECTIONS.iter().enumerate() {
        out.push_str(&format!("\n## {section}\n"));
        let mut body: Vec<&str> = trim_blank(bodies[i].iter().copied());
        let extra: Vec<&str> =
            if i == ARCHITECTURE { trim_blank(unsorted.iter().map(String::as_str)) } else { Vec::new() };
        let has_content = body.iter().chain(&extra).any(|l| !l.trim().is_empty() && l.trim() != PLACEHOLDER);
        if has_content {
            body.retain(|l| l.trim() != PLACEHOLDER);
            let body = trim_blank(body.into_iter());
            push_lines(&mut out, &body);
            if !extra.is_empty() {
                if !body.is_empty() {
                    out.push('\n');
                }
                push_lines(&mut out, &extra);
            }
        } else {
            out.push_str(PLACEHOLDER);
            out.push('\n');
        }
    }
    out
}

/// Drops leading and trailing blank lines and folds blank runs into one.
fn trim_blank<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for line in lines {
        let blank = line.trim().is_empty();
        if blank && out.last().is_none_or(|l: &&str| l.trim().is_empty()) {
            continue;
        }
        out.push(if blank { "" } else { line });
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out
}

/// Writes a block of lines, closing a code fence the block left open: an
/// open fence would swallow every heading after it.
fn push_lines(out: &mut String, lines: &[&str]) {
    let mut open_fence: Option<&str> = None;
    for line in lines {
        let trimmed = line.trim_start();
        for marker in ["```", "~~~"] {
            if trimmed.starts_with(marker) {
                open_fence = if open_fence.is_some() { None } else { Some(marker) };
            }
        }
        out.push_str(line.trim_end_matches('\r'));
        out.push('\n');
    }
    if let Some(marker) = open_fence {
        out.push_str(marker);
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_placeholder_stands_exactly_where_nothing_else_is() {
        let text = "# p\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n- a\n- None yet.\n\n## Active Warnings\n\n## Topic Files\n- None yet.\n";
        let tidy = tidy_placeholders(text);
        let expected = text
            .replace("- a\n- None yet.\n", "- a\n")
            .replace("## Active Warnings\n", "## Active Warnings\n- None yet.\n");
        assert_eq!(tidy, expected);
        assert_eq!(tidy_placeholders(&tidy), tidy);
        assert!(is_in_template(&tidy));
    }

    fn nonblank(text: &str) -> Vec<String> {
        let mut lines: Vec<String> =
            text.lines().map(|l| l.trim_end().to_string()).filter(|l| !l.trim().is_empty()).collect();
        lines.sort();
        lines
    }

    #[test]
    fn skeleton_is_in_template() {
        assert!(is_in_template(&skeleton("app")));
        assert_eq!(repair(&skeleton("app"), "app"), None);
    }

    #[test]
    fn template_check_cases() {
        let cases: &[(&str, bool, &str)] = &[
            (
                "# a\n## CRITICAL RULES\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n",
                true,
                "bare headings",
            ),
            (
                "## CRITICAL RULES\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n",
                false,
                "no title",
            ),
            (
                "# a\n## Architecture & Config Facts\n## CRITICAL RULES\n## Active Warnings\n## Topic Files\n",
                false,
                "out of order",
            ),
            (
                "# a\n## critical rules\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n",
                false,
                "wrong case",
            ),
            (
                "# a\n## CRITICAL RULES\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n## Notes\n",
                false,
                "extra section",
            ),
            (
                "# a\n## CRITICAL RULES\n## CRITICAL RULES\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n",
                false,
                "repeat",
            ),
            ("# a\n## CRITICAL RULES\n## Architecture & Config Facts\n## Active Warnings\n", false, "missing section"),
            (
                "# a\n## CRITICAL RULES\n```\n## Not a heading\n```\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n",
                true,
                "heading inside a fence",
            ),
            (
                "# a\n# b\n## CRITICAL RULES\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n",
                false,
                "two titles",
            ),
            (
                "# a\nnote\n## CRITICAL RULES\n### Sub\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n",
                true,
                "preamble and subheading",
            ),
            ("", false, "empty"),
        ];
        for (text, want, name) in cases {
            assert_eq!(is_in_template(text), *want, "{name}");
        }
    }

    #[test]
    fn repair_legacy_file_with_extra_repeated_and_missing_sections() {
        let legacy = "\
## Notes
- loose note

## critical rules
- Run tests with cargo test

## Build
```
## inside fence
```

## CRITICAL RULES
- Never push to main
- None yet.
";
        let fixed = repair(legacy, "app").expect("needs repair");
        assert!(is_in_template(&fixed), "{fixed}");
        assert_eq!(
            fixed,
            "\
# app

## CRITICAL RULES
- Run tests with cargo test

- Never push to main

## Architecture & Config Facts
### Unsorted: Notes
- loose note

### Unsorted: Build
```
## inside fence
```

## Active Warnings
- None yet.

## Topic Files
- None yet.
"
        );
    }

    #[test]
    fn repair_keeps_the_title_and_preamble() {
        let fixed = repair("# My App\nintro line\n\n## Active Warnings\n- flaky test\n", "app").unwrap();
        assert!(fixed.starts_with("# My App\n\nintro line\n\n## CRITICAL RULES\n- None yet.\n"), "{fixed}");
        assert!(fixed.contains("## Active Warnings\n- flaky test\n"));
    }

    #[test]
    fn repair_moves_a_second_title_to_unsorted() {
        let fixed = repair("# one\n## CRITICAL RULES\n- a\n# two\n- b\n", "app").unwrap();
        assert!(is_in_template(&fixed), "{fixed}");
        assert!(fixed.contains("### Unsorted: two\n- b\n"), "{fixed}");
    }

    #[test]
    fn repair_closes_an_open_fence_so_headings_stay_headings() {
        let fixed = repair("# a\n## CRITICAL RULES\n```\ncode\n", "app").unwrap();
        assert!(is_in_template(&fixed), "{fixed}");
        assert!(fixed.contains("code\n```\n"));
    }

    #[test]
    fn repair_of_plain_text_keeps_every_line() {
        let text = "just some notes\nno headings at all\n";
        let fixed = repair(text, "app").unwrap();
        assert!(is_in_template(&fixed));
        for line in text.lines() {
            assert!(fixed.contains(line));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        #[test]
        fn repair_is_in_template_idempotent_and_keeps_lines(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::string::string_regex("- [a-z ]{0,12}").unwrap(),
                    proptest::string::string_regex("#{1,3} [A-Za-z &]{0,12}").unwrap(),
                    proptest::sample::select(vec![
                        "## CRITICAL RULES".to_string(), "## Topic Files".into(), "## active warnings".into(),
                        "## Architecture & Config Facts".into(), "```".into(), "- None yet.".into(), "".into(),
                    ]),
                ],
                0..30,
            )
        ) {
            let text = lines.join("\n");
            let fixed = repair(&text, "proj").unwrap_or_else(|| text.clone());
            proptest::prop_assert!(is_in_template(&fixed), "not in template:\n{}", fixed);
            proptest::prop_assert_eq!(repair(&fixed, "proj"), None);
            // Every non-blank line survives, possibly as an Unsorted heading or
            // under its canonical section name; placeholders may fold.
            let kept = nonblank(&fixed);
            for line in nonblank(&text) {
                let name = heading_name(&line).to_string();
                let survives = kept.contains(&line)
                    || line.trim() == PLACEHOLDER
                    || kept.iter().any(|k| k.to_lowercase().ends_with(&name.to_lowercase()) && k.starts_with('#'))
                    || (line.starts_with("```") && kept.iter().any(|k| k.starts_with("```")));
                proptest::prop_assert!(survives, "lost {:?} in\n{}", line, fixed);
            }
        }
    }
}
