//! The checks of what a reply may write: a bullet, a topic file's name
//! and its append; and how an op is named in notes and reports.

use super::super::reply::{Op, TopicAppend};
use super::super::{MAX_BULLET_CHARS, secrets};
use super::{MAX_TOPIC_APPEND_CHARS, RETIRED_HEADING};

/// A short name for an op in refusals and notes; a secret is named, never shown.
pub fn describe_op(op: &Op) -> String {
    let r = secrets::redact;
    let json = match op {
        Op::Add { section, text } => {
            serde_json::json!({"op": "add", "section": r(section), "text": r(text)})
        }
        Op::Remove { line } => serde_json::json!({"op": "remove", "line": r(line)}),
        Op::Replace { line, text } => {
            serde_json::json!({"op": "replace", "line": r(line), "text": r(text)})
        }
    };
    // Quoting or cutting can make a shape the fields alone did not have.
    secrets::redact(&super::super::text::shorten(&json.to_string(), 300))
}

/// A topic in refusals: its file name, unless that holds a secret.
pub(super) fn topic_entry(topic: &TopicAppend) -> String {
    secrets::redact(&format!("topic {}", secrets::redact(&topic.file)))
}

/// Topic file names: lowercase, `.md`, no folder, not MEMORY.md.
pub fn check_topic_name(name: &str) -> Result<(), String> {
    let valid_chars = name
        .bytes()
        .enumerate()
        .all(|(i, b)| b.is_ascii_lowercase() || b.is_ascii_digit() || (i > 0 && matches!(b, b'.' | b'_' | b'-')));
    if name.len() > 64 || !valid_chars || !name.ends_with(".md") || name.len() <= 3 {
        return Err(format!(
            "topic file name {name:?} is not allowed: use lowercase letters, digits, '.', '_' or '-', ending in .md, no folder"
        ));
    }
    if name == "memory.md" {
        return Err("memory.md is not a topic file".into());
    }
    Ok(())
}

pub(super) fn check_topic(topic: &TopicAppend) -> Result<(), String> {
    if let Some(kind) = secrets::find_secret(&topic.file).or_else(|| secrets::find_secret(&topic.append)) {
        return Err(secrets::refusal(kind));
    }
    check_topic_name(&topic.file)?;
    if let Some(why) = topic.append.lines().find_map(super::super::gate::fork_refusal) {
        return Err(why);
    }
    // Only a save that retires a rule writes this heading: a forged block
    // would pass invented rules off as the user's own, retired.
    let forged = |line: &str| {
        let line = super::super::gate::fold_ascii(line).to_lowercase();
        line.trim_start().starts_with('#')
            && line.split_whitespace().collect::<Vec<_>>().join(" ").contains("retired critical rules")
    };
    if topic.append.lines().any(forged) {
        return Err(format!("only memory-save writes \"{RETIRED_HEADING}\" (when a save retires a rule)"));
    }
    if topic.append.trim().is_empty() {
        return Err("the append text is empty".into());
    }
    if topic.append.chars().count() > MAX_TOPIC_APPEND_CHARS {
        return Err(format!("the append text is longer than {MAX_TOPIC_APPEND_CHARS} characters"));
    }
    Ok(())
}

/// A new bullet: no secret, one line, a list item, at most 600 characters.
pub fn check_bullet(text: &str) -> Result<String, String> {
    if let Some(kind) = secrets::find_secret(text) {
        return Err(secrets::refusal(kind));
    }
    let text = text.trim();
    if text.contains(['\n', '\r']) {
        return Err("a bullet is one line; split it into several add ops".into());
    }
    if let Some(why) = super::super::gate::fork_refusal(text) {
        return Err(why);
    }
    let content = strip_marker(text);
    if content.trim_start_matches(['-', '*', '+']).trim().is_empty() {
        return Err("the bullet is empty".into());
    }
    let bullet = format!("- {content}");
    let chars = bullet.chars().count();
    if chars > MAX_BULLET_CHARS {
        return Err(format!(
            "the bullet has {chars} characters, over {MAX_BULLET_CHARS}: split it or move its detail to a topic file"
        ));
    }
    Ok(bullet)
}

/// The text of a list item without its marker (`- `, `* `, `+ `, `1. `).
pub fn strip_marker(line: &str) -> &str {
    let line = line.trim_start();
    for marker in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(marker) {
            return rest.trim_start();
        }
    }
    let digits = line.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0
        && let Some(rest) = line[digits..].strip_prefix(". ").or_else(|| line[digits..].strip_prefix(") "))
    {
        return rest.trim_start();
    }
    line
}
