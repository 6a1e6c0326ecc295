//! Applies a reply to MEMORY.md as it is now: every op checked on its own,
//! then the caps. Ops address lines by content, so the same reply can be
//! re-applied to a file that another writer changed meanwhile.

mod checks;
mod doc;

pub use checks::{check_bullet, check_topic_name, describe_op, strip_marker};
use checks::{check_topic, topic_entry};

use doc::Doc;

use super::Size;
use super::reply::{Op, Reply, TopicAppend};
use super::secrets;
use super::template::{self, CRITICAL_RULES};

pub const HISTORY_FILE: &str = "history.md";
pub const RETIRED_HEADING: &str = "## Retired CRITICAL RULES";
/// One topic append may carry at most this much text.
pub const MAX_TOPIC_APPEND_CHARS: usize = 50_000;
/// All topic appends of one save: a hundred full appends must not add megabytes.
pub const MAX_TOPIC_CHARS_PER_SAVE: usize = 100_000;

/// An op or topic that was not written, and why. Kept between saves, so the
/// next fork is told.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Refusal {
    pub entry: String,
    pub why: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The new MEMORY.md (equal to the input when nothing changed).
    pub memory: String,
    /// Text to append to topic files, in order; history.md may appear twice.
    pub topics: Vec<TopicAppend>,
    pub added: usize,
    pub removed: usize,
    pub replaced: usize,
    /// CRITICAL RULES bullets removed and kept in history.md.
    pub retired: Vec<String>,
    /// Lines a remove or replace named that the file does not have.
    pub skipped: Vec<String>,
    pub refused: Vec<Refusal>,
    /// CRITICAL RULES bullets this save added or rewrote, shown to the user.
    pub rules: Vec<String>,
    /// Ops on CRITICAL RULES held for the user's review, not applied.
    pub held: Vec<Op>,
    /// New order lines outside CRITICAL RULES, quoted to the user as rules are.
    pub orders: Vec<String>,
    /// Guards that passed the gate, each with the CRITICAL RULES line it belongs to.
    pub guards: Vec<(String, super::guard::Spec)>,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The review gate: ops on a CRITICAL RULES bullet are held, not applied.
    pub hold_rules: bool,
    /// The rules that have a guard already, for the project's count.
    pub guarded: Vec<String>,
}

impl Outcome {
    pub fn topic_files(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for t in &self.topics {
            if !names.contains(&t.file.as_str()) {
                names.push(&t.file);
            }
        }
        names
    }
}

/// `existing_topics` are the topic files already in the memory folder, so a
/// new one can be listed under Topic Files.
pub fn apply(current: &str, reply: &Reply, project: &str, existing_topics: &[String]) -> Outcome {
    apply_with(current, reply, project, existing_topics, Options::default())
}

pub fn apply_with(
    current: &str,
    reply: &Reply,
    project: &str,
    existing_topics: &[String],
    options: Options,
) -> Outcome {
    let current = template::repair(current, project).unwrap_or_else(|| current.to_string());
    let mut held = Vec::new();
    let filtered;
    let reply = if options.hold_rules {
        let doc = Doc::new(&current);
        let (rules, rest): (Vec<Op>, Vec<Op>) =
            reply.ops.iter().cloned().partition(|op| doc.touches_rules(op) || gives_order(op));
        held = rules;
        filtered = Reply { ops: rest, ..reply.clone() };
        &filtered
    } else {
        reply
    };
    let mut outcome = apply_checked(&current, reply, existing_topics, options.hold_rules);
    // Held at the start (the op named a CRITICAL RULES line of the file as
    // the fork saw it) or when it ran (an earlier op moved its match there).
    for op in std::mem::take(&mut outcome.held) {
        if !held.contains(&op) {
            held.push(op);
        }
    }
    outcome.held = held;
    admit_guards(&reply.guards, &mut outcome, &options.guarded);
    outcome
}

/// The reply's guards that stand: each on a CRITICAL RULES line the reply
/// wrote (or holds for review), through the gate, within the project's
/// count. A refused guard leaves its rule standing.
fn admit_guards(proposed: &[super::reply::Proposed], outcome: &mut Outcome, guarded: &[String]) {
    let key = |line: &str| line.trim().trim_start_matches("- ").trim().to_string();
    // Only a line this reply wrote: an add of a rule the file has already
    // changes nothing, and must not swap that rule's guard.
    let written: Vec<String> = outcome.rules.iter().map(|r| key(r)).collect();
    let all_rules = template::critical_rules(&outcome.memory);
    let rules: Vec<String> = all_rules.iter().filter(|r| written.contains(&key(r))).cloned().collect();
    let held: Vec<String> = outcome
        .held
        .iter()
        .filter_map(|op| match op {
            Op::Add { text, .. } | Op::Replace { text, .. } => Some(key(text)),
            Op::Remove { .. } => None,
        })
        .collect();
    let mut count = guarded.iter().filter(|r| all_rules.contains(r)).count();
    for p in proposed {
        let line = rules.iter().find(|r| key(r) == key(&p.rule)).cloned();
        let verdict = match (&p.guard, &line) {
            (Err(why), _) => Err(why.clone()),
            (Ok(_), None) if !held.contains(&key(&p.rule)) || all_rules.iter().any(|r| key(r) == key(&p.rule)) => {
                Err("its CRITICAL RULES line was not written by this reply".to_string())
            }
            (Ok(spec), line) => {
                super::gate::guard_refusal(spec, line.as_deref().unwrap_or(&p.rule)).map_or(Ok(spec.clone()), Err)
            }
        };
        let rule = line.unwrap_or_else(|| p.rule.clone());
        let new = !guarded.contains(&rule) && !outcome.guards.iter().any(|(r, _)| *r == rule);
        let verdict = verdict.and_then(|spec| {
            if new && count >= super::guard::MAX_GUARDS {
                Err(format!("a project holds at most {} guards", super::guard::MAX_GUARDS))
            } else {
                Ok(spec)
            }
        });
        match verdict {
            Ok(spec) => {
                count += usize::from(new);
                outcome.guards.retain(|(r, _)| *r != rule);
                outcome.guards.push((rule, spec));
            }
            Err(why) => outcome.refused.push(refusal(
                secrets::redact(&format!("the guard of {}", super::text::shorten(&p.rule, 200))),
                format!("guard refused: {why}; the rule itself stands"),
            )),
        }
    }
}

fn apply_checked(current: &str, reply: &Reply, existing_topics: &[String], hold: bool) -> Outcome {
    let before = Size::of(current);
    let mut outcome = apply_ops(current, reply, before, existing_topics, false, hold);
    let after = Size::of(&outcome.memory);
    let shrinks = !before.under_caps() && after.lines <= before.lines && after.chars <= before.chars && after != before;
    if !after.under_caps() && !shrinks {
        // Keep the removes, which cannot grow the file; refuse the rest.
        let removes_only = Reply {
            ops: reply.ops.iter().filter(|op| matches!(op, Op::Remove { .. })).cloned().collect(),
            topics: Vec::new(),
            malformed: reply.malformed.clone(),
            guards: Vec::new(),
        };
        let why = format!(
            "the result would be over a cap ({} lines, {} characters; the caps are {} and {})",
            after.lines,
            after.chars,
            super::MAX_LINES,
            super::MAX_CHARS
        );
        let mut reduced = apply_ops(current, &removes_only, before, existing_topics, true, hold);
        for op in reply.ops.iter().filter(|op| !matches!(op, Op::Remove { .. })) {
            reduced.refused.push(refusal(describe_op(op), why.clone()));
        }
        for topic in &reply.topics {
            reduced.refused.push(refusal(topic_entry(topic), why.clone()));
        }
        outcome = reduced;
    }
    outcome
}

fn apply_ops(
    current: &str,
    reply: &Reply,
    before: Size,
    existing_topics: &[String],
    removes_only: bool,
    hold: bool,
) -> Outcome {
    let mut doc = Doc::new(current);
    let mut out = Outcome::default();
    for bad in &reply.malformed {
        out.refused.push(refusal(secrets::redact(&bad.entry), bad.why.clone()));
    }
    let over_cap = !before.under_caps();
    let offloading = before.needs_offload();
    for op in &reply.ops {
        // Looked at again on the file as the ops before left it: a replace
        // whose line an earlier op removed may now match a CRITICAL RULES line.
        if hold && (doc.touches_rules(op) || gives_order(op)) {
            out.held.push(op.clone());
            continue;
        }
        // Each op is applied to a copy: one whose result leaves the template
        // (a removed fence opening swallows the headings below) is refused alone.
        let before_op = (doc.clone(), out.clone());
        let result = match op {
            // No line of the file holds a newline: such a "line" is refused,
            // never kept as a skipped line for the report and notes to quote.
            Op::Remove { line } | Op::Replace { line, .. } if line.contains(['\n', '\r']) => {
                Err(NOT_A_LINE.to_string())
            }
            // The placeholder is memory-save's to put and take: removing it
            // is done already (an add took it, an empty section keeps it),
            // and a replace could not say which section's it meant.
            Op::Remove { line } if line.trim() == super::template::PLACEHOLDER => Ok(()),
            Op::Replace { line, .. } if line.trim() == super::template::PLACEHOLDER => Err(format!(
                "\"{}\" marks an empty section, which memory-save keeps; to fill one, add the line to its section",
                super::template::PLACEHOLDER
            )),
            Op::Add { section, text } => {
                if over_cap {
                    Err("the file is over a cap, so this save may only shrink it: add no new bullet".to_string())
                } else {
                    doc.add(section, text).map(|added| {
                        out.added += usize::from(added);
                        if let Some(at) = added.then_some(doc.last_insert).flatten() {
                            quote_if_rule_or_order(&doc, at, &mut out);
                        }
                    })
                }
            }
            Op::Remove { line } => match doc.locate(line) {
                None => skip(&mut out, line),
                Some(at) => doc.remove(at, offloading).map(|retired| {
                    out.removed += 1;
                    if let Some(rule) = retired {
                        retire(&mut out, rule);
                    }
                }),
            },
            Op::Replace { line, text } => match doc.locate(line) {
                None => skip(&mut out, line),
                Some(at) => {
                    // A rule replaced by another (a lifted rule's successor)
                    // is kept in history.md, as a removed one is.
                    let old = doc.rule_at(at).map(str::to_string);
                    doc.replace(at, text, over_cap).map(|()| {
                        out.replaced += 1;
                        if let Some(rule) = old.filter(|old| *old != doc.lines[at]) {
                            retire(&mut out, rule);
                        }
                        quote_if_rule_or_order(&doc, at, &mut out);
                    })
                }
            },
        };
        let result = result.and_then(|()| {
            if doc.in_template() {
                return Ok(());
            }
            (doc, out) = before_op;
            Err("the result would leave the four-section template (a code fence or heading would swallow the sections below)".to_string())
        });
        if let Err(why) = result {
            out.refused.push(refusal(describe_op(op), why));
        }
    }
    if !removes_only {
        let mut total: usize = out.topics.iter().map(|t| t.append.chars().count()).sum();
        for topic in &reply.topics {
            let checked = check_topic(topic).and_then(|()| {
                total += topic.append.chars().count();
                if total > MAX_TOPIC_CHARS_PER_SAVE {
                    return Err(format!(
                        "this save's topic appends pass {MAX_TOPIC_CHARS_PER_SAVE} characters; send the rest in a later save"
                    ));
                }
                Ok(())
            });
            match checked {
                Ok(()) => out.topics.push(topic.clone()),
                Err(why) => out.refused.push(refusal(topic_entry(topic), why)),
            }
        }
    }
    for name in out.topic_files() {
        if !existing_topics.iter().any(|t| t == name) {
            doc.list_topic(name);
        }
    }
    doc.fill_empty_sections();
    out.memory = doc.text();
    out
}

/// A CRITICAL RULES bullet that leaves the file, kept in history.md.
fn retire(out: &mut Outcome, rule: String) {
    out.topics.push(TopicAppend { file: HISTORY_FILE.into(), append: format!("{RETIRED_HEADING}\n\n{rule}\n") });
    out.retired.push(rule);
}

/// A new or rewritten line every later session reads as an instruction is
/// shown to the user: a CRITICAL RULES bullet, or an order elsewhere.
fn quote_if_rule_or_order(doc: &Doc, at: usize, out: &mut Outcome) {
    let line = doc.lines[at].clone();
    if doc.section_of(at) == Some(CRITICAL_RULES) {
        out.rules.push(line);
    } else if super::gate::gives_order(&line) {
        out.orders.push(line);
    }
}

/// Whether an op writes an order line (held with the review gate on).
fn gives_order(op: &Op) -> bool {
    match op {
        Op::Add { text, .. } | Op::Replace { text, .. } => super::gate::gives_order(text),
        Op::Remove { .. } => false,
    }
}

/// A refusal as it is kept and shown: a reason can quote the op, so it
/// passes the secret scanner too.
fn refusal(entry: String, why: String) -> Refusal {
    Refusal { entry, why: secrets::redact(&why) }
}

const NOT_A_LINE: &str =
    "the line to match holds a newline or a character no memory line may hold; copy one line of the file exactly";

/// A remove or replace whose line the file lacks is skipped and quoted in
/// the report and notes; so a line no door could have written is refused
/// instead. One the file does hold (a hand edit) may still be removed.
fn skip(out: &mut Outcome, line: &str) -> Result<(), String> {
    if super::text::check(line).is_err() {
        return Err(NOT_A_LINE.to_string());
    }
    out.skipped.push(secrets::redact(line));
    Ok(())
}

#[cfg(test)]
mod tests;
