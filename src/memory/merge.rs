//! A three-way merge that knows the format, for git's merge driver
//! (`memory-save merge-driver %O %A %B`), by line; the rules are in
//! docs/sync.md. A new line the gate refuses is left out and reported. A
//! merge never drops a line to meet a cap: the next save's offload note
//! brings a large result back. Text in, text out.

use std::collections::HashSet;

use super::{secrets, template};

#[derive(Debug, PartialEq)]
pub struct Merged {
    pub text: String,
    /// New lines left out, and why.
    pub refused: Vec<String>,
}

/// What one side did to each base line, and what it put before each.
struct Side<'a> {
    /// Per base line: `None` kept, `Some(lines)` replaced by `lines` (empty: removed).
    fate: Vec<Option<Vec<&'a str>>>,
    /// Per base position (0..=len): the lines inserted before it.
    inserted: Vec<Vec<&'a str>>,
    /// Every line this side brought in.
    new: HashSet<&'a str>,
}

/// A diff gets this long; past it, `similar` gives a coarser one (larger
/// replaced blocks, kept both ways), so a merge is bounded whatever git
/// hands the driver (20,000 lines took 8 s). The deadline is `similar`'s
/// own bound, the one clock this pure core touches.
const DIFF_TIME: std::time::Duration = std::time::Duration::from_millis(500);

fn side<'a>(base: &[&'a str], version: &[&'a str]) -> Side<'a> {
    let mut out =
        Side { fate: vec![None; base.len()], inserted: vec![Vec::new(); base.len() + 1], new: HashSet::new() };
    let deadline = std::time::Instant::now() + DIFF_TIME;
    for op in similar::capture_diff_slices_deadline(similar::Algorithm::Myers, base, version, Some(deadline)) {
        match op {
            similar::DiffOp::Equal { .. } => {}
            similar::DiffOp::Delete { old_index, old_len, .. } => {
                for fate in &mut out.fate[old_index..old_index + old_len] {
                    *fate = Some(Vec::new());
                }
            }
            similar::DiffOp::Insert { old_index, new_index, new_len } => {
                out.inserted[old_index].extend(&version[new_index..new_index + new_len]);
            }
            similar::DiffOp::Replace { old_index, old_len, new_index, new_len } => {
                out.fate[old_index] = Some(version[new_index..new_index + new_len].to_vec());
                for fate in &mut out.fate[old_index + 1..old_index + old_len] {
                    *fate = Some(Vec::new());
                }
            }
        }
    }
    out.new = out.inserted.iter().flatten().chain(out.fate.iter().flatten().flatten()).copied().collect();
    out
}

/// `base` is `None` when the two were started apart.
pub fn merge_memory(base: Option<&str>, ours: &str, theirs: &str, project: &str) -> Merged {
    let fit = |text: &str| template::repair(text, project).unwrap_or_else(|| text.to_string());
    let (ours, theirs) = (fit(ours), fit(theirs));
    let base = base.map_or_else(|| template::skeleton(project), fit);
    let (b, o, t): (Vec<&str>, Vec<&str>, Vec<&str>) =
        (base.lines().collect(), ours.lines().collect(), theirs.lines().collect());
    let (so, st) = (side(&b, &o), side(&b, &t));
    let mut lines: Vec<&str> = Vec::new();
    // A line both sides brought in comes once: theirs skips what ours has.
    let theirs_only = |line: &&str| line.trim().is_empty() || !so.new.contains(line);
    for i in 0..=b.len() {
        lines.extend(&so.inserted[i]);
        lines.extend(st.inserted[i].iter().filter(|l| theirs_only(l)));
        if i == b.len() {
            break;
        }
        match (&so.fate[i], &st.fate[i]) {
            (None, None) => lines.push(b[i]),
            (Some(x), None) | (None, Some(x)) => lines.extend(x),
            (Some(x), Some(y)) => {
                // Removed by one and rewritten by the other: the rewrite
                // stays; rewritten by both: both versions stay.
                lines.extend(x);
                lines.extend(y.iter().filter(|l| theirs_only(l)));
            }
        }
    }
    let mut refused = Vec::new();
    let kept: Vec<&str> = lines
        .into_iter()
        .filter(|line| !(so.new.contains(line) || st.new.contains(line)) || admitted(line, &mut refused))
        .collect();
    let text = kept.join("\n") + "\n";
    Merged { text: fit(&text), refused }
}

/// Topic files only grow: what either side appended, once each, ours first;
/// without a common start, every line of theirs that ours lacks.
pub fn merge_topic(base: Option<&str>, ours: &str, theirs: &str) -> Merged {
    // A teammate's CRLF line is a line.
    let bare = |line: &'_ str| line.trim_end_matches('\n').trim_end_matches('\r').to_string();
    let known: HashSet<String> = base.unwrap_or("").lines().chain(ours.lines()).map(bare).collect();
    let mut refused = Vec::new();
    let checked: String = theirs
        .split_inclusive('\n')
        .filter(|line| {
            let line = bare(line);
            known.contains(&line) || admitted(&line, &mut refused)
        })
        .collect();
    Merged { text: merge_topic_text(base, ours, &checked), refused }
}

/// Whether the gate admits a line a side brought in; one it refuses is
/// named in `refused`, redacted.
fn admitted(line: &str, refused: &mut Vec<String>) -> bool {
    let why = super::gate::refusal(line);
    if let Some(why) = &why {
        refused.push(format!("{}: {why}", secrets::redact(line)));
    }
    why.is_none()
}

fn merge_topic_text(base: Option<&str>, ours: &str, theirs: &str) -> String {
    let appended = base.and_then(|base| Some((ours.strip_prefix(base)?, theirs.strip_prefix(base)?)));
    if let Some((a, b)) = appended {
        return if a.starts_with(b) || a.ends_with(b) {
            ours.to_string()
        } else if b.starts_with(a) || b.ends_with(a) {
            theirs.to_string()
        } else {
            join(ours, b)
        };
    }
    // Lines as written, their ends (`\n` or `\r\n`) kept.
    let have: HashSet<&str> = ours.lines().collect();
    let mut missing: String = theirs
        .split_inclusive('\n')
        .filter(|l| {
            let bare = l.trim_end_matches('\n').trim_end_matches('\r');
            bare.trim().is_empty() || !have.contains(bare)
        })
        .collect();
    if !missing.is_empty() && !missing.ends_with('\n') {
        missing.push('\n');
    }
    if missing.trim().is_empty() { ours.to_string() } else { join(ours, &missing) }
}

fn join(head: &str, tail: &str) -> String {
    let mut out = head.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(tail);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn doc(facts: &[&str]) -> String {
        let facts = if facts.is_empty() { template::PLACEHOLDER.to_string() } else { facts.join("\n") };
        format!(
            "# p\n\n## CRITICAL RULES\n- None yet.\n\n## Architecture & Config Facts\n{facts}\n\n## Active Warnings\n- None yet.\n\n## Topic Files\n- None yet.\n"
        )
    }

    #[test]
    fn a_table_of_merges() {
        let base = doc(&["- a", "- b", "- c"]);
        let cases: [(&str, String, String, String); 6] = [
            (
                "both add",
                doc(&["- a", "- b", "- c", "- ours"]),
                doc(&["- a", "- b", "- c", "- theirs"]),
                doc(&["- a", "- b", "- c", "- ours", "- theirs"]),
            ),
            ("one removes", doc(&["- a", "- c"]), base.clone(), doc(&["- a", "- c"])),
            (
                "one replaces, other adds",
                doc(&["- a", "- B!", "- c"]),
                doc(&["- a", "- b", "- c", "- d"]),
                doc(&["- a", "- B!", "- c", "- d"]),
            ),
            (
                "replaced differently",
                doc(&["- a", "- b1", "- c"]),
                doc(&["- a", "- b2", "- c"]),
                doc(&["- a", "- b1", "- b2", "- c"]),
            ),
            (
                "the same line added on both",
                doc(&["- x", "- a", "- b", "- c"]),
                doc(&["- a", "- b", "- c", "- x"]),
                doc(&["- x", "- a", "- b", "- c"]),
            ),
            ("removed and replaced", doc(&["- a", "- c"]), doc(&["- a", "- b2", "- c"]), doc(&["- a", "- b2", "- c"])),
        ];
        for (name, ours, theirs, expected) in cases {
            assert_eq!(merge_memory(Some(&base), &ours, &theirs, "p").text, expected, "{name}");
        }
    }

    #[test]
    fn no_base_is_two_adds_and_a_secret_stays_out() {
        let key = ["ghp_", "Zx8Qp2Lm9Rt4", "Vw7Ky1Nb6Hc3", "Fd5Gs0Ja8Ue2"].concat();
        let theirs = doc(&["- t", &format!("- key {key}")]);
        let merged = merge_memory(None, &doc(&["- o"]), &theirs, "p");
        assert_eq!(merged.text, doc(&["- o", "- t"]));
        assert_eq!(merged.refused.len(), 1);
        assert!(!merged.refused[0].contains(&key));
    }

    #[test]
    fn topic_files_merge_as_appends() {
        let text = |base, ours, theirs| merge_topic(base, ours, theirs).text;
        assert_eq!(text(Some("a\n"), "a\nours\n", "a\ntheirs\n"), "a\nours\ntheirs\n");
        assert_eq!(text(Some("a\n"), "a\nx\n", "a\nx\n"), "a\nx\n");
        assert_eq!(text(Some("a\n"), "a\n", "a\nt\n"), "a\nt\n");
        assert_eq!(text(None, "o\n", "o\nt\n"), "o\nt\n");
        assert_eq!(text(None, "o\n", "t\n"), "o\nt\n");
        // A teammate's CRLF lines are lines, kept as they were written.
        assert_eq!(text(Some("a\n"), "a\nours\n", "a\r\n- windows\r\n"), "a\nours\n- windows\r\n");
        assert!(merge_topic(Some("a\n"), "a\n", "a\n- crlf\r\n").refused.is_empty());
    }

    /// The merge grows with its input, not with its square: 20,000 lines
    /// took 8 s and 40,000 took 37 s. The diff's own deadline bounds it.
    #[test]
    fn a_large_merge_is_bounded() {
        let lines = |seed: u64, n: usize| -> String {
            (0..n).map(|i| format!("- line {} {i}\n", (i as u64).wrapping_mul(seed) % 9973)).collect()
        };
        let started = std::time::Instant::now();
        let merged = merge_memory(Some(&lines(1, 20_000)), &lines(7, 20_000), &lines(13, 20_000), "p");
        assert!(started.elapsed() < std::time::Duration::from_secs(6), "{:?}", started.elapsed());
        assert!(merged.text.lines().count() >= 20_000);
    }

    fn refs(v: &[String]) -> Vec<&str> {
        v.iter().map(String::as_str).collect()
    }

    #[test]
    fn a_topic_merge_refuses_what_a_memory_merge_refuses() {
        let key = ["ghp_", "Zx8Qp2Lm9Rt4", "Vw7Ky1Nb6Hc3", "Fd5Gs0Ja8Ue2"].concat();
        let theirs = format!("a\n- key {key}\n- b\u{202e}c\n- fine\n");
        let merged = merge_topic(Some("a\n"), "a\nours\n", &theirs);
        assert_eq!(merged.text, "a\nours\n- fine\n");
        assert_eq!(merged.refused.len(), 2, "named, not dropped silently: {:?}", merged.refused);
        assert!(!merged.refused[0].contains(&key));
    }

    fn edit(base: &[String], keep: &[bool], add: &[String]) -> Vec<String> {
        let mut out: Vec<String> =
            base.iter().zip(keep.iter().cycle()).filter(|(_, k)| **k).map(|(l, _)| l.clone()).collect();
        out.extend(add.iter().cloned());
        out
    }

    proptest! {
        #[test]
        fn merges_keep_what_was_added_and_stay_in_the_template(
            base in proptest::collection::vec("- b[a-e]", 0..6),
            keep_o in proptest::collection::vec(any::<bool>(), 1..6),
            keep_t in proptest::collection::vec(any::<bool>(), 1..6),
            add_o in proptest::collection::vec("- o[a-e]", 0..4),
            add_t in proptest::collection::vec("- t[a-e]", 0..4),
        ) {
            let (o, t) = (edit(&base, &keep_o, &add_o), edit(&base, &keep_t, &add_t));
            let (bd, od, td) = (doc(&refs(&base)), doc(&refs(&o)), doc(&refs(&t)));
            let merged = merge_memory(Some(&bd), &od, &td, "p").text;
            prop_assert!(template::is_in_template(&merged), "{}", merged);
            for line in add_o.iter().chain(&add_t) {
                prop_assert!(merged.lines().any(|l| l == line), "{} lost:\n{}", line, merged);
            }
            // Merging a version with itself changes nothing.
            prop_assert_eq!(merge_memory(Some(&bd), &od, &od, "p").text, od.clone());
            prop_assert_eq!(merge_memory(Some(&od), &od, &od, "p").text, od);
        }
    }
}
