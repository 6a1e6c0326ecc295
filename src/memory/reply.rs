//! The fork's reply: find the JSON object in its text, then read each op and
//! topic on its own, so one malformed entry is refused alone.

use serde_json::{Map, Value};

/// An op, in the reply's own JSON form, also how a held op is stored.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "op", rename_all = "lowercase")]
pub enum Op {
    Add { section: String, text: String },
    Remove { line: String },
    Replace { line: String, text: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicAppend {
    pub file: String,
    pub append: String,
}

/// An entry of the reply that had the wrong shape, in the words the next
/// fork is told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub entry: String,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reply {
    pub ops: Vec<Op>,
    pub topics: Vec<TopicAppend>,
    pub malformed: Vec<Malformed>,
    /// Guards the reply attached to an add or replace, by the op's text.
    pub guards: Vec<Proposed>,
}

/// A guard an op carries, for the line it writes; `Err` says why it could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    pub rule: String,
    pub guard: Result<super::guard::Spec, String>,
}

/// `Err` carries the reason for the status line.
pub fn parse(text: &str) -> Result<Reply, String> {
    let object = find_object(text).0?;
    let mut reply = Reply::default();
    let ops = list(&object, "ops", &mut reply.malformed);
    for entry in ops.iter().take(MAX_OPS) {
        match read_op(entry) {
            Ok(op) => {
                if let Some(guard) = entry.get("guard").filter(|g| !g.is_null()) {
                    let guard = super::guard::Spec::read(guard);
                    match &op {
                        Op::Add { text, .. } | Op::Replace { text, .. } => {
                            reply.guards.push(Proposed { rule: text.trim().to_string(), guard });
                        }
                        Op::Remove { .. } => reply.malformed.push(Malformed {
                            entry: compact(entry),
                            why: "a remove carries no guard: its line's guard goes with it".into(),
                        }),
                    }
                }
                reply.ops.push(op);
            }
            Err(why) => reply.malformed.push(Malformed { entry: compact(entry), why }),
        }
    }
    let topics = list(&object, "topics", &mut reply.malformed);
    for entry in topics.iter().take(MAX_TOPICS) {
        match read_topic(entry) {
            Ok(topic) => reply.topics.push(topic),
            Err(why) => reply.malformed.push(Malformed { entry: compact(entry), why }),
        }
    }
    // One refusal for the excess, not one each: refusals are kept for the
    // next fork's notes.
    for (count, max, what) in [(ops.len(), MAX_OPS, "ops"), (topics.len(), MAX_TOPICS, "topics")] {
        if count > max {
            reply.malformed.push(Malformed {
                entry: format!("the {} {what} after the first {max}", count - max),
                why: format!("a reply carries at most {max} {what}; send the rest in a later save"),
            });
        }
    }
    Ok(reply)
}

/// A file under its caps never needs more ops (rewriting all 200 lines is
/// 400), and applying stays bounded however long the reply.
pub const MAX_OPS: usize = 1000;
pub const MAX_TOPICS: usize = 100;

/// From the last `}` back to the first `{` that opens an object and parses,
/// so prose and fences around it are fine. It must carry "ops" or "topics",
/// so a lone op is not mistaken for the answer.
///
/// Parsing each candidate on its own could be quadratic on a hostile reply
/// (millions of `{"`), so the parser's work is metered: bytes read plus a
/// charge per candidate, at most `finder_budget`; a candidate is tried only
/// when the text after it fits in what is left, else "gave up". With the
/// object, the work it spent (never over `finder_budget`).
fn find_object(text: &str) -> (Result<Map<String, Value>, String>, usize) {
    let allowed = finder_budget(text.rfind('}').map_or(0, |end| end + 1));
    let mut left = allowed;
    let found = find_within(text, &mut left);
    (found, allowed - left)
}

/// The work the finder may spend on a text whose last `}` ends at `len`.
fn finder_budget(len: usize) -> usize {
    len.saturating_mul(FINDER_WORK_PER_BYTE).saturating_add(FINDER_WORK_BASE)
}

fn find_within(text: &str, budget: &mut usize) -> Result<Map<String, Value>, String> {
    let Some(end) = text.rfind('}') else { return Err("reply has no JSON object".into()) };
    let body = &text[..=end];
    let mut first_error: Option<String> = None;
    let mut other_object = false;
    let mut tried = 0usize;
    let mut gave_up = false;
    let mut at = 0;
    while let Some(found) = body[at..].find('{') {
        let start = at + found;
        at = start + 1;
        // Only a `{` followed by a quoted key can open an object of named
        // fields; skipping the rest keeps huge replies cheap.
        if !body[at..].trim_start().starts_with('"') {
            continue;
        }
        let rest = &body[start..];
        if rest.len() > *budget {
            // Might overrun the budget: go on where the rest fits.
            gave_up = true;
            if *budget == 0 {
                break;
            }
            let mut fits = body.len() - *budget;
            while !body.is_char_boundary(fits) {
                fits += 1;
            }
            at = at.max(fits);
            continue;
        }
        tried += 1;
        // Check the syntax without building anything first: most candidates
        // fail, and failing there is cheap.
        let read = match serde_json::from_str::<serde::de::IgnoredAny>(rest) {
            Ok(_) => {
                match serde_json::from_str::<Value>(rest) {
                    Ok(Value::Object(map)) if map.contains_key("ops") || map.contains_key("topics") => return Ok(map),
                    Ok(_) => other_object = true,
                    // Deeper than the parser's recursion limit.
                    Err(e) => {
                        first_error.get_or_insert_with(|| format!("reply is not valid JSON ({e})"));
                    }
                }
                rest.len()
            }
            Err(e) => {
                first_error.get_or_insert_with(|| format!("reply is not valid JSON ({e})"));
                bytes_read(rest, &e)
            }
        };
        *budget = budget.saturating_sub(read.saturating_add(FINDER_WORK_PER_CANDIDATE));
    }
    if gave_up {
        let first = first_error.unwrap_or_else(|| "reply has no JSON object".into());
        return Err(format!("{first}; gave up after {tried} places where an object could start"));
    }
    Err(first_error.unwrap_or_else(|| {
        if other_object {
            "reply has no JSON object with \"ops\" or \"topics\"".into()
        } else {
            "reply has no JSON object".into()
        }
    }))
}

/// The finder's work budget (see `find_object`).
const FINDER_WORK_PER_BYTE: usize = 1;
const FINDER_WORK_BASE: usize = 64 * 1024;
const FINDER_WORK_PER_CANDIDATE: usize = 256;

/// How far into `text` the parser got before `error`, in bytes.
fn bytes_read(text: &str, error: &serde_json::Error) -> usize {
    let line_start = match error.line() {
        0 => return text.len(),
        1 => 0,
        line => text.match_indices('\n').nth(line - 2).map_or(text.len(), |(at, _)| at + 1),
    };
    line_start.saturating_add(error.column()).min(text.len())
}

fn list<'a>(object: &'a Map<String, Value>, key: &str, malformed: &mut Vec<Malformed>) -> &'a [Value] {
    match object.get(key) {
        None | Some(Value::Null) => &[],
        Some(Value::Array(items)) => items,
        Some(other) => {
            malformed.push(Malformed { entry: compact(other), why: format!("\"{key}\" is not a list") });
            &[]
        }
    }
}

fn read_op(entry: &Value) -> Result<Op, String> {
    let Value::Object(map) = entry else { return Err("an op is an object".into()) };
    let field = |name: &str| -> Result<String, String> {
        match map.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(format!("\"{name}\" is not a string")),
            None => Err(format!("\"{name}\" is missing")),
        }
    };
    match map.get("op").and_then(Value::as_str) {
        Some("add") => Ok(Op::Add { section: field("section")?, text: field("text")? }),
        Some("remove") => Ok(Op::Remove { line: field("line")? }),
        Some("replace") => Ok(Op::Replace { line: field("line")?, text: field("text")? }),
        Some(other) => Err(format!("unknown op \"{other}\" (use add, remove or replace)")),
        None => Err("\"op\" is missing".into()),
    }
}

fn read_topic(entry: &Value) -> Result<TopicAppend, String> {
    let Value::Object(map) = entry else { return Err("a topic is an object".into()) };
    match (map.get("file"), map.get("append")) {
        (Some(Value::String(file)), Some(Value::String(append))) => {
            Ok(TopicAppend { file: file.clone(), append: append.clone() })
        }
        _ => Err("a topic needs \"file\" and \"append\" strings".into()),
    }
}

/// One line of JSON, cut short: enough for the next fork to recognise it.
/// An entry that holds a secret is named by what it holds instead.
fn compact(value: &Value) -> String {
    let text = value.to_string();
    if super::secrets::find_secret(&text).is_some() {
        return super::secrets::redact(&text);
    }
    super::secrets::redact(&super::text::shorten(&text, 300))
}

#[cfg(test)]
mod tests;
