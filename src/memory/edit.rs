//! A person's edit of MEMORY.md, checked as a save's result is. It comes
//! back as ops, so it merges by line into a file a save changed meanwhile.

use super::reply::Op;
use super::template::{self, ARCHITECTURE, LineKind, SECTIONS};
use super::{MAX_BULLET_CHARS, Size};

/// The edit from `base` to `edited` as ops, or every reason it is refused.
pub fn check_edit(base: &str, edited: &str) -> Result<Vec<Op>, Vec<String>> {
    let mut reasons = Vec::new();
    if !template::is_in_template(edited) {
        reasons.push(
            "it is not in the template: the # title, then ## CRITICAL RULES, ## Architecture & Config Facts, \
             ## Active Warnings and ## Topic Files, in that order"
                .to_string(),
        );
    }
    let size = Size::of(edited);
    if !size.under_caps() {
        reasons.push(format!(
            "it is over a cap ({} lines, {} characters; MEMORY.md stays under {} and {}): move detail to a topic file",
            size.lines,
            size.chars,
            super::MAX_LINES,
            super::MAX_CHARS
        ));
    }
    let (old, new): (Vec<&str>, Vec<&str>) = (base.lines().collect(), edited.lines().collect());
    let kinds = template::classify(edited);
    let sections = template::sections_of_lines(edited);
    let mut ops = Vec::new();
    let diff = similar::TextDiff::from_slices(&old, &new);
    for op in diff.ops() {
        let (removed, added) = (op.old_range(), op.new_range());
        if matches!(op, similar::DiffOp::Equal { .. }) {
            continue;
        }
        let removed: Vec<&str> = old[removed].iter().copied().filter(|l| !l.trim().is_empty()).collect();
        let added_at: Vec<usize> = added.filter(|&i| !new[i].trim().is_empty()).collect();
        for &at in &added_at {
            let line = new[at];
            // The four headings are the template's; every other line (a
            // `###` subheading, the title) is text every session reads.
            if kinds[at] == LineKind::Section {
                continue;
            }
            let why = super::gate::refusal(line).or_else(|| {
                let chars = line.chars().count();
                if kinds[at] != LineKind::Text {
                    return None;
                }
                (chars > MAX_BULLET_CHARS).then(|| {
                    format!("it has {chars} characters, over {MAX_BULLET_CHARS}: move its detail to a topic file")
                })
            });
            if let Some(why) = why {
                reasons.push(format!("line {}: {why}", at + 1));
            }
        }
        let mut removed = removed.into_iter();
        for &at in &added_at {
            let text = new[at].to_string();
            match removed.next() {
                Some(line) => ops.push(Op::Replace { line: line.to_string(), text }),
                None => {
                    let section = SECTIONS[sections[at].unwrap_or(ARCHITECTURE)].to_string();
                    ops.push(Op::Add { section, text });
                }
            }
        }
        ops.extend(removed.map(|line| Op::Remove { line: line.to_string() }));
    }
    if reasons.is_empty() { Ok(ops) } else { Err(reasons) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = "# p\n\n## CRITICAL RULES\n- a\n\n## Architecture & Config Facts\n- f\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n";

    #[test]
    fn an_edit_comes_back_as_ops() {
        let edited = BASE
            .replace("- a\n", "- a, sharper\n")
            .replace("- f\n", "- f\n- g\n")
            .replace("- None yet.\n\n## Topic", "- w\n\n## Topic");
        let ops = check_edit(BASE, &edited).unwrap();
        assert_eq!(
            ops,
            [
                Op::Replace { line: "- a".into(), text: "- a, sharper".into() },
                Op::Add { section: SECTIONS[1].into(), text: "- g".into() },
                Op::Replace { line: "- None yet.".into(), text: "- w".into() },
            ]
        );
    }

    #[test]
    fn an_edit_is_refused_with_every_reason() {
        let key = [
            "sk-ant-",
            "api03-",
            &"Q7wE9rT2yU4iO6pA8sD1fG3hJ5kL7zX9cV2bN4mQ6wE8rT0yU2iO4pA6sD8fG0hJ2kL4zX6cV8bN0mQ2wE4rT6yU8iO0p"[..80],
            "AA",
        ]
        .concat();
        let edited = BASE.replace("- f\n", &format!("- f\n- key {key}\n- bell \u{7}\n- {}\n", "y".repeat(700)));
        let reasons = check_edit(BASE, &edited).unwrap_err();
        assert_eq!(reasons.len(), 3, "{reasons:?}");
        assert!(reasons[0].starts_with("line 8:") && reasons[1].starts_with("line 9:"), "{reasons:?}");
        assert!(reasons[2].contains("over 600"), "{reasons:?}");
        let broken = BASE.replace("## Active Warnings", "## Something else");
        assert!(check_edit(BASE, &broken).unwrap_err()[0].contains("not in the template"));
    }
}
