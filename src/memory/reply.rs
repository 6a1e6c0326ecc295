//! The fork's reply: find the JSON object in its text, then read each op and
//! topic on its own, so one malformed entry is refused alone.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// Reads the reply text. `Err` carries the reason for the status line
/// ("reply has no JSON object").
pub fn parse(text: &str) -> Result<Reply, String> {
    let object = find_object(text)?;
    let mut reply = Reply::default();
    for entry in list(&object, "ops", &mut reply.malformed) {
        match read_op(entry) {
            Ok(op) => reply.ops.push(op),
            Err(why) => reply.malformed.push(Malformed { entry: compact(entry), why }),
        }
    }
    for entry in list(&object, "topics", &mut reply.malformed) {
        match read_topic(entry) {
            Ok(topic) => reply.topics.push(topic),
            Err(why) => reply.malformed.push(Malformed { entry: compact(entry), why }),
        }
    }
    Ok(reply)
}

/// The object runs from the last `}` back to the first `{` that opens an
/// object of named fields and parses: prose before it, braces in that prose
/// (`{ tool: 'Edit' }`) and code fences around it are all fine. It must
/// carry "ops" or "topics", so a lone op cut from a longer reply is not
/// mistaken for the answer.
pub fn find_object(text: &str) -> Result<Map<String, Value>, String> {
    let Some(end) = text.rfind('}') else { return Err("reply has no JSON object".into()) };
    let body = &text[..=end];
    let mut first_error: Option<String> = None;
    let mut other_object = false;
    for (start, _) in body.match_indices('{') {
        // Only a `{` followed by a quoted key can open an object of named
        // fields; skipping the rest keeps huge replies cheap.
        if !body[start + 1..].trim_start().starts_with('"') {
            continue;
        }
        match serde_json::from_str::<Value>(&body[start..]) {
            Ok(Value::Object(map)) if map.contains_key("ops") || map.contains_key("topics") => return Ok(map),
            Ok(_) => other_object = true,
            Err(e) => {
                first_error.get_or_insert_with(|| format!("reply is not valid JSON ({e})"));
            }
        }
    }
    Err(first_error.unwrap_or_else(|| {
        if other_object {
            "reply has no JSON object with \"ops\" or \"topics\"".into()
        } else {
            "reply has no JSON object".into()
        }
    }))
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
fn compact(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(300) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finder_cases() {
        let ok: &[(&str, &str)] = &[
            ("{\"ops\":[],\"topics\":[]}", "bare object"),
            ("Here is the update:\n{\"ops\":[]}", "prose before"),
            ("The matcher { tool: 'Edit' } fires.\n{\"ops\":[]}", "braces in prose"),
            ("```json\n{\"ops\":[]}\n```\n", "code fence"),
            ("{\"ops\":[{\"op\":\"remove\",\"line\":\"a } b\"}]}", "brace in a string"),
            ("{\"a\":1} and then {\"ops\":[]}", "a smaller object first"),
            ("{\"ops\":[]}\nThat is all.", "prose after"),
        ];
        for (text, name) in ok {
            let reply = parse(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(reply.malformed.is_empty(), "{name}");
        }
        let bad: &[(&str, &str, &str)] = &[
            ("I have nothing to add.", "no JSON object", "no object"),
            ("[{\"op\":\"add\"}]", "no JSON object with", "an array of ops"),
            ("[1, 2]", "no JSON object", "array without object"),
            ("{\"ops\":[", "no JSON object", "cut before any }"),
            ("{\"ops\":[{\"op\":\"remove\",\"line\":\"x\"}", "not valid JSON", "cut mid-object"),
            ("{\"answer\":42}", "no JSON object with", "object without ops"),
            ("{}", "no JSON object", "empty object"),
        ];
        for (text, want, name) in bad {
            let err = parse(text).expect_err(name);
            assert!(err.contains(want), "{name}: {err}");
        }
    }

    #[test]
    fn ops_and_topics_are_read_one_by_one() {
        let text = r#"{"ops":[
            {"op":"add","section":"CRITICAL RULES","text":"- a"},
            {"op":"remove","line":"- b"},
            {"op":"replace","line":"- c","text":"- d"},
            {"op":"move","line":"x"},
            {"op":"add","section":"X"},
            {"op":"add","section":"X","text":7},
            "just a string"
        ],"topics":[{"file":"history.md","append":"text"},{"file":"x.md"}]}"#;
        let reply = parse(text).unwrap();
        assert_eq!(
            reply.ops,
            vec![
                Op::Add { section: "CRITICAL RULES".into(), text: "- a".into() },
                Op::Remove { line: "- b".into() },
                Op::Replace { line: "- c".into(), text: "- d".into() },
            ]
        );
        assert_eq!(reply.topics, vec![TopicAppend { file: "history.md".into(), append: "text".into() }]);
        let whys: Vec<&str> = reply.malformed.iter().map(|m| m.why.as_str()).collect();
        assert_eq!(
            whys,
            vec![
                "unknown op \"move\" (use add, remove or replace)",
                "\"text\" is missing",
                "\"text\" is not a string",
                "an op is an object",
                "a topic needs \"file\" and \"append\" strings",
            ]
        );
    }

    #[test]
    fn ops_that_are_not_a_list_are_refused() {
        let reply = parse(r#"{"ops":{"op":"add"},"topics":[]}"#).unwrap();
        assert!(reply.ops.is_empty());
        assert_eq!(reply.malformed[0].why, "\"ops\" is not a list");
    }

    proptest::proptest! {
        #[test]
        fn finder_never_panics(text in ".{0,300}") {
            let _ = parse(&text);
        }

        #[test]
        fn finder_reads_an_object_after_any_prose(prose in "[^{}]{0,100}") {
            let text = format!("{prose}\n{{\"ops\":[],\"topics\":[]}}");
            proptest::prop_assert!(parse(&text).is_ok());
        }
    }
}
