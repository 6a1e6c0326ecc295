//! The memory block added to the session's context, split into parts that
//! each fit one hook's 10,000-character budget.

use super::template::{LineKind, classify};

/// Claude Code keeps one hook's output whole up to this many UTF-16 units
/// (measured); past it the model sees a 2 KB preview.
pub const PART_LIMIT: usize = 10_000;
/// How many `session-start --part N` commands hooks.json registers: enough
/// for a file at the 50,000-character cap.
pub const MAX_PARTS: usize = 6;

pub const LANGUAGE_LINE: &str = "Answer in the language of the user's own messages, in every reply and every \
progress line, also at the end of a long turn whose context (tool output, docs, this memory) is in another \
language. Keep technical terms and identifiers as they are.";

pub fn width(text: &str) -> usize {
    text.encode_utf16().count()
}

/// At most `MAX_PARTS` parts; `trailer` holds the lines after the file.
pub fn context_parts(project: &str, memory: &str, trailer: &[&str]) -> Vec<String> {
    let mut lines: Vec<&str> = vec![LANGUAGE_LINE, ""];
    lines.extend(memory.lines());
    for line in trailer {
        lines.push("");
        lines.push(line);
    }
    // The `##` heading each line sits under, to restate it when a part
    // starts mid-section.
    let mut kinds = vec![LineKind::Text, LineKind::Text];
    kinds.extend(classify(memory));
    kinds.resize(lines.len(), LineKind::Text);
    let mut section: Vec<Option<&str>> = Vec::with_capacity(lines.len());
    let mut current = None;
    for (line, kind) in lines.iter().zip(&kinds) {
        if *kind == LineKind::Section {
            current = Some(*line);
        }
        section.push(current);
    }

    let single = format!("[PROJECT MEMORY: {project}]");
    if width(&single) + 1 + lines.iter().map(|l| width(l) + 1).sum::<usize>() <= PART_LIMIT {
        return vec![format!("{single}\n{}", lines.join("\n"))];
    }

    // Room for the widest label ("part 6 of 6") and a restated heading.
    let label_room = width(&format!("[PROJECT MEMORY: {project} · part {MAX_PARTS} of {MAX_PARTS}]")) + 1;
    let mut bodies: Vec<String> = Vec::new();
    let mut body = String::new();
    // Kept beside `body`: measuring the growing part at every line would
    // make the split quadratic, and SessionStart runs on every start.
    let mut body_width = 0;
    let mut only_heading = false;
    let mut i = 0;
    while i < lines.len() {
        if body.is_empty()
            && let (Some(heading), true) = (section[i], kinds[i] != LineKind::Section)
        {
            body = format!("{heading} (continued)\n");
            body_width = width(&body);
            only_heading = true;
        }
        let room = PART_LIMIT.saturating_sub(label_room + body_width);
        let line = lines[i];
        let line_width = width(line) + 1;
        if line_width <= room {
            body.push_str(line);
            body.push('\n');
            body_width += line_width;
            only_heading = false;
            i += 1;
        } else if body_width > 0 && !only_heading {
            bodies.push(std::mem::take(&mut body));
            body_width = 0;
        } else {
            // One line longer than a whole part: cut it, carry the rest on.
            let (head, tail) = split_at_width(line, room.saturating_sub(1).max(1));
            body.push_str(head);
            body.push('\n');
            bodies.push(std::mem::take(&mut body));
            body_width = 0;
            lines[i] = tail;
            kinds[i] = LineKind::Text;
        }
    }
    if !body.is_empty() {
        bodies.push(body);
    }
    let total = bodies.len();
    if total > MAX_PARTS {
        let last = &mut bodies[MAX_PARTS - 1];
        let note = format!(
            "[memory-save: MEMORY.md is larger than {MAX_PARTS} parts can carry; the rest was not loaded. It shrinks at the next saves.]\n"
        );
        while width(last) + width(&note) + label_room > PART_LIMIT {
            let cut = last.trim_end_matches('\n').rfind('\n').map_or(0, |at| at + 1);
            last.truncate(cut);
        }
        last.push_str(&note);
        bodies.truncate(MAX_PARTS);
    }
    let shown = bodies.len();
    bodies
        .into_iter()
        .enumerate()
        .map(|(n, body)| {
            format!("[PROJECT MEMORY: {project} · part {} of {shown}]\n{}", n + 1, body.trim_end_matches('\n'))
        })
        .collect()
}

fn split_at_width(line: &str, max: usize) -> (&str, &str) {
    let mut used = 0;
    for (at, c) in line.char_indices() {
        used += c.len_utf16();
        if used > max {
            return line.split_at(at);
        }
    }
    (line, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::template::skeleton;

    fn big_memory(chars: usize) -> String {
        let mut text = skeleton("app").replace("- None yet.\n\n## Active", "");
        let mut n = 0;
        while text.chars().count() < chars - 300 {
            text = text.replacen(
                "## Architecture & Config Facts\n",
                &format!("## Architecture & Config Facts\n- fact {n:04}: {}\n", "x".repeat(190)),
                1,
            );
            n += 1;
        }
        text.replace("## Topic Files", "## Active Warnings\n- warn\n\n## Topic Files")
    }

    #[test]
    fn small_memory_is_one_unnumbered_part() {
        let parts = context_parts("app", &skeleton("app"), &["Topic files in /m/app: history.md"]);
        assert_eq!(parts.len(), 1);
        assert!(parts[0].starts_with("[PROJECT MEMORY: app]\nAnswer in the language"));
        assert!(parts[0].ends_with("\n\nTopic files in /m/app: history.md"));
    }

    #[test]
    fn memory_at_the_cap_fits_six_parts_with_every_line() {
        let memory = big_memory(49_000);
        let parts = context_parts("app", &memory, &[]);
        assert!(parts.len() <= MAX_PARTS && parts.len() >= 5, "{} parts", parts.len());
        let joined = parts.join("\n");
        for (n, part) in parts.iter().enumerate() {
            assert!(width(part) <= PART_LIMIT, "part {} has {}", n + 1, width(part));
            assert!(part.starts_with(&format!("[PROJECT MEMORY: app · part {} of {}]\n", n + 1, parts.len())));
            if n > 0 {
                assert!(part.lines().nth(1).unwrap().starts_with("## "), "part {} restates its section", n + 1);
            }
        }
        for line in memory.lines() {
            assert!(joined.contains(line), "missing {line}");
        }
    }

    #[test]
    fn a_line_longer_than_a_part_is_cut_not_lost() {
        let memory = format!("# app\n\n## CRITICAL RULES\n- {}\n", "é".repeat(25_000));
        let parts = context_parts("app", &memory, &[]);
        assert!(parts.iter().all(|p| width(p) <= PART_LIMIT));
        let total: usize = parts.iter().map(|p| p.matches('é').count()).sum();
        assert_eq!(total, 25_000);
    }

    #[test]
    fn memory_beyond_six_parts_says_so_in_the_last() {
        let memory = big_memory(90_000);
        let parts = context_parts("app", &memory, &[]);
        assert_eq!(parts.len(), MAX_PARTS);
        assert!(parts[MAX_PARTS - 1].contains("the rest was not loaded"));
        assert!(parts.iter().all(|p| width(p) <= PART_LIMIT));
    }

    #[test]
    fn astral_characters_count_twice() {
        let memory = format!("# app\n\n## CRITICAL RULES\n{}", "- 😀😀😀😀😀😀😀😀😀😀\n".repeat(1_000));
        let parts = context_parts("app", &memory, &[]);
        assert!(parts.len() > 1);
        assert!(parts.iter().all(|p| width(p) <= PART_LIMIT));
    }
}
