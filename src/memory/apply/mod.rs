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
mod tests {
    use super::*;
    use crate::memory::MAX_BULLET_CHARS;
    use crate::memory::reply::parse;
    use crate::memory::template::PLACEHOLDER;
    use crate::memory::template::{is_in_template, skeleton};
    use crate::memory::{MAX_CHARS, MAX_LINES};

    const FILE: &str = "\
# app

## CRITICAL RULES
- Run tests with cargo test
- **Never** push to main

## Architecture & Config Facts
- Rust 2024 edition
Plain paragraph line
### Build
- cargo build --release

## Active Warnings
- None yet.

## Topic Files
- history.md
";

    fn run(ops: &str) -> Outcome {
        let reply = parse(&format!("{{\"ops\":[{ops}],\"topics\":[]}}")).unwrap();
        apply(FILE, &reply, "app", &["history.md".to_string()])
    }

    fn refusal(out: &Outcome) -> &str {
        assert_eq!(out.refused.len(), 1, "{out:#?}");
        &out.refused[0].why
    }

    #[test]
    fn add_goes_to_the_end_of_the_named_block() {
        let out = run(r#"{"op":"add","section":"architecture & config facts","text":"- new fact"}"#);
        assert_eq!(out.added, 1);
        assert!(out.memory.contains("Plain paragraph line\n- new fact\n### Build\n"), "{}", out.memory);
        let out = run(r#"{"op":"add","section":"Build","text":"- cargo test -j1"}"#);
        assert!(out.memory.contains("- cargo build --release\n- cargo test -j1\n\n## Active"), "{}", out.memory);
        let out = run(r###"{"op":"add","section":"## Active Warnings","text":"flaky test"}"###);
        assert!(out.memory.contains("## Active Warnings\n- flaky test\n\n"), "placeholder replaced: {}", out.memory);
    }

    #[test]
    fn add_refusals() {
        let long = "x".repeat(MAX_BULLET_CHARS);
        let cases: &[(&str, &str)] = &[
            (r#"{"op":"add","section":"Nope","text":"- a"}"#, "no heading"),
            (r###"{"op":"add","section":"CRITICAL RULES","text":"- a\n## Injected"}"###, "one line"),
            (r#"{"op":"add","section":"CRITICAL RULES","text":"-  "}"#, "empty"),
            (&format!(r#"{{"op":"add","section":"CRITICAL RULES","text":"- {long}"}}"#), "split it"),
        ];
        for (op, want) in cases {
            let out = run(op);
            assert!(refusal(&out).contains(want), "{op}: {:?}", out.refused);
            assert_eq!(out.memory, FILE);
        }
        // Exactly 600 characters is allowed.
        let ok = "y".repeat(MAX_BULLET_CHARS - 2);
        assert_eq!(run(&format!(r#"{{"op":"add","section":"CRITICAL RULES","text":"- {ok}"}}"#)).added, 1);
    }

    #[test]
    fn a_duplicate_add_changes_nothing() {
        let out = run(r#"{"op":"add","section":"CRITICAL RULES","text":"- Run tests with cargo test"}"#);
        assert_eq!((out.added, out.refused.len()), (0, 0));
        assert_eq!(out.memory, FILE);
    }

    #[test]
    fn remove_and_replace_match_exactly_or_by_one_marker_difference() {
        let out = run(r#"{"op":"remove","line":"- Rust 2024 edition"}"#);
        assert_eq!(out.removed, 1);
        assert!(!out.memory.contains("Rust 2024"));
        let out = run(r#"{"op":"replace","line":"- Plain paragraph line","text":"- A bullet now"}"#);
        assert_eq!(out.replaced, 1);
        assert!(out.memory.contains("- Rust 2024 edition\n- A bullet now\n### Build"));
        let out = run(r#"{"op":"remove","line":"- Never push to main"}"#);
        assert_eq!(out.skipped, vec!["- Never push to main".to_string()], "misquoted markup is skipped");
        assert_eq!(out.memory, FILE);
    }

    #[test]
    fn headings_and_title_cannot_go_but_subheadings_can() {
        for line in ["# app", "## CRITICAL RULES", "## Topic Files"] {
            let out = run(&format!(r#"{{"op":"remove","line":"{line}"}}"#));
            assert!(refusal(&out).contains("cannot be removed"), "{line}");
            let out = run(&format!(r#"{{"op":"replace","line":"{line}","text":"- x"}}"#));
            assert!(refusal(&out).contains("cannot be removed"), "{line}");
        }
        let out = run(r####"{"op":"remove","line":"### Build"}"####);
        assert_eq!(out.removed, 1);
        assert!(is_in_template(&out.memory));
    }

    /// One template check: the apply's, on kept kinds, says what the
    /// write's says of the same text.
    #[test]
    fn the_apply_and_the_write_judge_the_template_alike() {
        let sections = "## CRITICAL RULES\n- a\n## Architecture & Config Facts\n## Active Warnings\n## Topic Files\n";
        for text in [
            format!("# a\n{sections}"),
            format!("# a\n### Sub\n{sections}"),
            format!("# a\n```\n## x\n```\n{sections}"),
            format!("# a\n# b\n{sections}"),
            format!("note\n# a\n{sections}"),
            sections.to_string(),
            format!("# a\n{}", sections.replace("## Active Warnings\n", "")),
        ] {
            assert_eq!(doc::Doc::new(&text).in_template(), is_in_template(&text), "{text}");
        }
    }

    #[test]
    fn removing_a_critical_rule_retires_it_to_history() {
        let out = run(r#"{"op":"remove","line":"- Run tests with cargo test"}"#);
        assert_eq!(out.retired, vec!["- Run tests with cargo test".to_string()]);
        assert_eq!(out.topics[0].file, HISTORY_FILE);
        assert!(out.topics[0].append.starts_with(RETIRED_HEADING));
        assert!(out.topics[0].append.contains("- Run tests with cargo test"));
    }

    fn grown(lines: usize, bullet_len: usize) -> String {
        let bullets: String = (0..lines).map(|i| format!("- fact {i} {}\n", "z".repeat(bullet_len))).collect();
        FILE.replace("### Build\n", &format!("{bullets}### Build\n"))
    }

    #[test]
    fn under_the_offload_note_a_critical_rule_is_not_moved_out() {
        let file = grown(160, 10);
        let reply = parse(r#"{"ops":[{"op":"remove","line":"- Run tests with cargo test"}]}"#).unwrap();
        let out = apply(&file, &reply, "app", &[]);
        assert!(refusal(&out).contains("shorten it with a replace"));
        assert_eq!(out.memory, file);
        let reply =
            parse(r#"{"ops":[{"op":"replace","line":"- Run tests with cargo test","text":"- cargo test"}]}"#).unwrap();
        assert_eq!(apply(&file, &reply, "app", &[]).replaced, 1);
    }

    #[test]
    fn a_result_over_a_cap_keeps_only_the_removes() {
        let file = grown(MAX_LINES - 20, 10);
        let adds: Vec<String> =
            (0..30).map(|i| format!(r#"{{"op":"add","section":"Active Warnings","text":"- warning {i}"}}"#)).collect();
        let reply = parse(&format!(
            r#"{{"ops":[{},{{"op":"remove","line":"- fact 3 zzzzzzzzzz"}}],"topics":[{{"file":"notes.md","append":"x"}}]}}"#,
            adds.join(",")
        ))
        .unwrap();
        let out = apply(&file, &reply, "app", &[]);
        assert_eq!((out.added, out.removed), (0, 1));
        assert_eq!(out.refused.len(), 31, "30 adds and one topic");
        assert!(out.refused.iter().all(|r| r.why.contains("over a cap")));
        assert!(out.topics.is_empty());
        assert!(Size::of(&out.memory).under_caps());
    }

    #[test]
    fn a_file_over_a_cap_may_only_shrink() {
        let file = grown(MAX_LINES, 10);
        assert!(!Size::of(&file).under_caps());
        let reply = parse(
            r#"{"ops":[{"op":"add","section":"Active Warnings","text":"- new"},{"op":"remove","line":"- fact 1 zzzzzzzzzz"}],
               "topics":[{"file":"facts.md","append":"- fact 1 zzzzzzzzzz"}]}"#,
        )
        .unwrap();
        let out = apply(&file, &reply, "app", &[]);
        assert_eq!((out.added, out.removed), (0, 1));
        assert!(refusal(&out).contains("only shrink"));
        assert_eq!(out.topics.len(), 1, "moving an entry to a topic file is the point of a shrink");
        let after = Size::of(&out.memory);
        let before = Size::of(&file);
        assert!(after.lines <= before.lines && after.chars < before.chars);
    }

    #[test]
    fn topic_names() {
        let good = ["history.md", "build-notes.md", "v2.md", "a_b.md"];
        let bad = [
            "../x.md",
            "/etc/x.md",
            "a/b.md",
            "memory.md",
            "MEMORY.md",
            "History.md",
            "notes.txt",
            ".md",
            "-x.md",
            "hіstory.md", /* Cyrillic і */
        ];
        for name in good {
            assert!(check_topic_name(name).is_ok(), "{name}");
        }
        for name in bad {
            assert!(check_topic_name(name).is_err(), "{name}");
        }
        assert!(check_topic_name(&format!("{}.md", "a".repeat(80))).is_err());
    }

    #[test]
    fn a_new_topic_file_is_listed_once() {
        let reply = parse(
            r#"{"ops":[],"topics":[{"file":"build.md","append":"- detail"},{"file":"build.md","append":"- more"}]}"#,
        )
        .unwrap();
        let out = apply(FILE, &reply, "app", &["history.md".into()]);
        assert_eq!(out.topics.len(), 2);
        assert!(out.memory.ends_with("## Topic Files\n- history.md\n- build.md\n"), "{}", out.memory);
        let out = apply(FILE, &reply, "app", &["history.md".into(), "build.md".into()]);
        assert_eq!(out.memory.matches("build.md").count(), 0, "already present files are not listed again by apply");
    }

    #[test]
    fn secrets_are_refused_alone_and_never_repeated() {
        // Assembled at run time so this file does not look like a leak.
        let key = ["sk-ant-", "api03-", "Xb7Qm2Lp9Rt4Vw6Yz1Ac3De5Fg8Hj0Kn2Mq4Ps6U"].concat();
        let url = ["postgres://app:", "Tr0ub4dor3", "@db.internal/app"].concat();
        let reply = parse(
            &serde_json::json!({
                "ops": [
                    {"op": "add", "section": "Active Warnings", "text": format!("- The API key is {key}")},
                    {"op": "add", "section": "Active Warnings", "text": "- Rotate the API key monthly"},
                    {"op": "replace", "line": "- Rust 2024 edition", "text": format!("- DB at {url}")},
                    {"op": "remove", "line": format!("- {key}")},
                    {"op": "add", "section": "Nope", "text": format!("- {key}")},
                    {"op": "add", "text": format!("- {key}")},
                ],
                "topics": [
                    {"file": "creds.md", "append": format!("ANTHROPIC_API_KEY={key}\n")},
                    {"file": "notes.md", "append": "- PASSWORD_MIN_LENGTH=12\n"},
                ],
            })
            .to_string(),
        )
        .unwrap();
        let out = apply(FILE, &reply, "app", &["history.md".into()]);
        assert_eq!((out.added, out.replaced, out.removed), (1, 0, 0));
        assert!(out.memory.contains("- Rotate the API key monthly"));
        assert!(out.memory.contains("- Rust 2024 edition"));
        assert_eq!(out.topic_files(), vec!["notes.md"]);
        let whys: Vec<&str> = out.refused.iter().map(|r| r.why.as_str()).collect();
        assert_eq!(
            whys,
            vec![
                "\"section\" is missing",
                "it looks like it holds an Anthropic API key; secrets are never written to memory",
                "it looks like it holds a password in a URL; secrets are never written to memory",
                "it looks like it holds an Anthropic API key; secrets are never written to memory",
                "it looks like it holds an Anthropic API key; secrets are never written to memory",
            ],
            "{out:#?}"
        );
        let shown = format!("{:?} {:?}", out.refused, out.skipped);
        for secret in [key.as_str(), "Tr0ub4dor3"] {
            assert!(!shown.contains(secret), "{shown}");
            assert!(!out.memory.contains(secret));
            assert!(out.topics.iter().all(|t| !t.append.contains(secret)));
        }
        assert!(shown.contains("[not shown: it looks like it holds an Anthropic API key]"), "{shown}");
        assert_eq!(out.skipped.len(), 1, "the remove named a line the file does not have");

        // Found by the fuzzer: the text alone holds no URL password, but its
        // JSON quoting does (the escaped newline no longer ends the URL).
        let out = run(r#"{"op":"add","section":"Active Warnings","text":"- see s://a\nb:pw123456@db"}"#);
        assert!(refusal(&out).contains("one line"));
        assert!(!out.refused[0].entry.contains("pw123456"), "{:?}", out.refused);
    }

    #[test]
    fn near_misses_are_written() {
        let out = run(concat!(
            r#"{"op":"add","section":"CRITICAL RULES","text":"- Set ANTHROPIC_API_KEY in your shell; never commit it"},"#,
            r#"{"op":"add","section":"Architecture & Config Facts","text":"- TOKEN_TTL=3600, PASSWORD_MIN_LENGTH=12, DB_PASSWORD=${DB_PASSWORD}"},"#,
            r#"{"op":"add","section":"Architecture & Config Facts","text":"- Clone with https://user@git.example.com/app.git"}"#
        ));
        assert_eq!((out.added, out.refused.len()), (3, 0), "{:?}", out.refused);
    }

    #[test]
    fn a_reply_is_applied_up_to_its_op_limit_and_no_further() {
        use crate::memory::reply::MAX_OPS;
        let file = grown(150, 40);
        let adds: Vec<String> = (0..MAX_OPS)
            .map(|i| format!(r#"{{"op":"add","section":"Active Warnings","text":"- warning {i}"}}"#))
            .collect();
        let removes: Vec<String> =
            (0..MAX_OPS).map(|i| format!(r#"{{"op":"remove","line":"- fact {i} {}"}}"#, "z".repeat(40))).collect();
        let replaces: Vec<String> = (0..MAX_OPS)
            .map(|i| format!(r#"{{"op":"replace","line":"- fact {} {}","text":"- f {i}"}}"#, i % 150, "z".repeat(40)))
            .collect();
        for (name, ops) in [("adds", adds), ("removes", removes), ("replaces", replaces)] {
            // Twice as many as a reply may carry: the excess is refused in
            // one entry, so apply never does more than MAX_OPS ops' work
            // (each linear in the file).
            let doubled = [ops.clone(), ops].concat();
            let reply = parse(&format!(r#"{{"ops":[{}]}}"#, doubled.join(","))).unwrap();
            assert_eq!(reply.ops.len(), MAX_OPS, "{name}");
            assert!(reply.malformed.iter().any(|m| m.why.contains("at most")), "{name}");
            let out = apply(&file, &reply, "app", &[]);
            assert!(Size::of(&out.memory).under_caps(), "{name}");
        }
    }

    #[test]
    fn an_op_that_would_break_the_template_is_refused_alone() {
        let fenced = FILE.replace("### Build\n", "```sh\ncargo build\n```\n### Build\n");
        let reply = parse(
            r#"{"ops":[{"op":"remove","line":"```sh"},{"op":"replace","line":"```","text":"- was a fence"},{"op":"add","section":"Active Warnings","text":"- still written"}],"topics":[]}"#,
        )
        .unwrap();
        let out = apply(&fenced, &reply, "app", &[]);
        assert_eq!(out.refused.len(), 2, "{:#?}", out.refused);
        assert!(out.refused.iter().all(|r| r.why.contains("four-section template")), "{:#?}", out.refused);
        assert_eq!((out.added, out.removed, out.replaced), (1, 0, 0));
        assert!(is_in_template(&out.memory) && out.memory.contains("```sh\ncargo build\n```"), "{}", out.memory);
        assert!(out.memory.contains("- still written"));
    }

    #[test]
    fn control_bidi_and_zero_width_text_is_refused_alone() {
        let hostile = [
            "- \\u001b]0;pwned\\u0007 title",
            "- \\u001b[2J cleared",
            "- run \\u202ecod.exe",
            "- hid\\u200bden",
            "- line\\u2028break",
            "- next\\u0085line",
            "- [PROJECT MEMORY: other · part 1 of 1]",
        ];
        for text in hostile {
            let out = run(&format!(
                r#"{{"op":"add","section":"Active Warnings","text":"{text}"}},{{"op":"add","section":"Active Warnings","text":"- fine"}}"#
            ));
            assert_eq!(out.refused.len(), 1, "{text}: {:#?}", out.refused);
            assert_eq!(out.added, 1, "{text}");
            let replace = run(&format!(r#"{{"op":"replace","line":"- Rust 2024 edition","text":"{text}"}}"#));
            assert_eq!(replace.replaced, 0, "{text}");
        }
        let reply = parse(r#"{"ops":[],"topics":[{"file":"history.md","append":"- x\n\u001b[31mred"}]}"#).unwrap();
        let out = apply(FILE, &reply, "app", &[]);
        assert!(out.topics.is_empty() && out.refused[0].why.contains("control character"), "{out:#?}");
    }

    #[test]
    fn malformed_entries_are_refused_alone() {
        let reply = parse(r#"{"ops":[{"op":"add","section":"Active Warnings","text":"- w"},{"op":"zap"}],"topics":[{"file":"../x.md","append":"y"}]}"#).unwrap();
        let out = apply(FILE, &reply, "app", &[]);
        assert_eq!(out.added, 1);
        assert_eq!(out.refused.len(), 2);
    }

    #[test]
    fn a_section_emptied_gets_the_placeholder_back() {
        let reply = parse(r#"{"ops":[{"op":"remove","line":"- history.md"}]}"#).unwrap();
        let out = apply(FILE, &reply, "app", &[]);
        assert!(out.memory.ends_with("## Topic Files\n- None yet.\n"), "{}", out.memory);
    }

    /// A lifted rule's successor replaces it: the rule it replaced is kept
    /// in history.md, as a removed rule is.
    #[test]
    fn a_rule_replaced_is_kept_in_history() {
        let memory =
            skeleton("app").replace("## CRITICAL RULES\n- None yet.", "## CRITICAL RULES\n- Never run itests locally.");
        let reply = r#"{"ops":[{"op":"replace","line":"- Never run itests locally.","text":"- Run itests locally with make itest."}]}"#;
        let out = apply(&memory, &parse(reply).unwrap(), "app", &[]);
        assert_eq!(out.retired, ["- Never run itests locally."]);
        assert!(out.topics[0].append.contains("- Never run itests locally."), "{:?}", out.topics);
        assert!(out.memory.contains("- Run itests locally with make itest."));
        let same =
            r#"{"ops":[{"op":"replace","line":"- Never run itests locally.","text":"- Never run itests locally."}]}"#;
        assert!(apply(&memory, &parse(same).unwrap(), "app", &[]).retired.is_empty());
    }

    /// A model told to copy lines exactly removes the placeholder of a
    /// section it adds to: that is done already, never a skipped line.
    #[test]
    fn the_placeholder_is_memory_saves_to_keep() {
        let add = r#"{"op":"add","section":"Active Warnings","text":"- The nightly export times out."}"#;
        let remove = r#"{"op":"remove","line":"- None yet."}"#;
        for ops in [format!("[{add},{remove}]"), format!("[{remove},{add}]"), format!("[{remove}]")] {
            let out = apply(&skeleton("app"), &parse(&format!(r#"{{"ops":{ops}}}"#)).unwrap(), "app", &[]);
            assert!(out.skipped.is_empty() && out.refused.is_empty(), "{ops}: {:?} {:?}", out.skipped, out.refused);
            assert!(is_in_template(&out.memory), "{}", out.memory);
            assert_eq!(out.memory.matches("- None yet.").count(), if ops.contains("nightly") { 3 } else { 4 });
        }
        let replace = r#"{"ops":[{"op":"replace","line":"- None yet.","text":"- A fact."}]}"#;
        let out = apply(&skeleton("app"), &parse(replace).unwrap(), "app", &[]);
        assert_eq!(out.refused.len(), 1, "which section's? {:?}", out.skipped);
        assert!(out.refused[0].why.contains("add the line to its section"), "{:?}", out.refused);
        assert_eq!(out.memory, skeleton("app"));
    }

    #[test]
    fn new_file_from_the_skeleton() {
        let reply = parse(r#"{"ops":[{"op":"add","section":"CRITICAL RULES","text":"- Use tabs"}]}"#).unwrap();
        let out = apply(&skeleton("app"), &reply, "app", &[]);
        assert!(out.memory.contains("## CRITICAL RULES\n- Use tabs\n\n"));
        assert!(is_in_template(&out.memory));
    }

    fn op_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let line = prop_oneof![
            Just("- Run tests with cargo test".to_string()),
            Just("Run tests with cargo test".to_string()),
            Just("## CRITICAL RULES".to_string()),
            Just("# app".to_string()),
            Just("### Build".to_string()),
            Just("- None yet.".to_string()),
            Just("Plain paragraph line".to_string()),
            "[ -~]{0,20}",
        ];
        let section = prop_oneof![
            Just("CRITICAL RULES".to_string()),
            Just("build".to_string()),
            Just("Topic Files".to_string()),
            Just("Nope".to_string()),
        ];
        let text = prop_oneof!["- [ -~]{0,30}", "[ -~\n]{0,30}", Just("x".repeat(700)), Just("- ## hi".to_string())];
        prop_oneof![
            (section, text.clone())
                .prop_map(|(s, t)| { serde_json::json!({"op":"add","section":s,"text":t}).to_string() }),
            line.clone().prop_map(|l| serde_json::json!({"op":"remove","line":l}).to_string()),
            (line, text).prop_map(|(l, t)| serde_json::json!({"op":"replace","line":l,"text":t}).to_string()),
            Just(r#"{"op":"bogus"}"#.to_string()),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        #[test]
        fn written_file_is_in_template_under_caps_and_keeps_unremoved_lines(
            ops in proptest::collection::vec(op_strategy(), 0..12),
            extra in 0usize..220,
            topic in "[a-z./]{0,10}",
        ) {
            let file = grown(extra, 40);
            let before = Size::of(&file);
            let text = format!(r#"{{"ops":[{}],"topics":[{{"file":"{topic}","append":"t"}}]}}"#, ops.join(","));
            let reply = parse(&text).unwrap();
            let out = apply(&file, &reply, "app", &[]);
            proptest::prop_assert!(is_in_template(&out.memory), "{}", out.memory);
            let after = Size::of(&out.memory);
            if before.under_caps() {
                proptest::prop_assert!(after.under_caps(), "{after:?}");
            } else {
                proptest::prop_assert!(after.lines <= before.lines && after.chars <= before.chars);
            }
            // Every line survives unless an op named it (or it was the
            // placeholder an add replaced).
            let named: Vec<String> = reply.ops.iter().filter_map(|op| match op {
                Op::Remove { line } | Op::Replace { line, .. } => Some(strip_marker(line.trim()).to_string()),
                Op::Add { .. } => None,
            }).collect();
            for line in file.lines().filter(|l| !l.trim().is_empty() && l.trim() != PLACEHOLDER) {
                let kept = out.memory.lines().any(|l| l == line);
                let removed_by_op = named.iter().any(|n| n == strip_marker(line.trim()) || n.trim_end() == line);
                proptest::prop_assert!(kept || removed_by_op, "lost {:?}", line);
            }
            for t in &out.topics {
                proptest::prop_assert!(check_topic_name(&t.file).is_ok());
            }
            proptest::prop_assert!(out.memory.lines().all(|l| l.chars().count() <= MAX_BULLET_CHARS || file.contains(l)));
            let _ = MAX_CHARS;
        }
    }
}
