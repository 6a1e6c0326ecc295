//! Edits of a settings file that keep every other byte: a member is set,
//! replaced or removed where it stands, in the file's own indentation and line
//! ends. Pure text to text.

use std::ops::Range;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value};

/// How a file lays out its JSON, read from its text.
#[derive(Debug, Clone, PartialEq)]
struct Style {
    /// One level of indentation; `None` for JSON on one line.
    indent: Option<String>,
    newline: &'static str,
}

impl Style {
    fn of(text: &str) -> Style {
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        // The first indented line that opens a member or a value.
        let indent = text.split('\n').skip(1).find_map(|line| {
            let body = line.trim_start_matches([' ', '\t']);
            let lead = &line[..line.len() - body.len()];
            (!lead.is_empty() && !body.trim().is_empty()).then(|| lead.to_string())
        });
        // An empty object says nothing: it gets Claude Code's two spaces.
        let empty = text.trim().trim_start_matches('{').trim_end_matches('}').trim().is_empty();
        let indent = indent.or_else(|| (empty || text.trim().contains('\n')).then(|| "  ".into()));
        Style { indent, newline }
    }

    /// `value` as it would stand at `depth` in this file.
    fn render(&self, value: &Value, depth: usize) -> String {
        let Some(indent) = &self.indent else {
            return value.to_string();
        };
        let mut out = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
        serde::Serialize::serialize(value, &mut ser).expect("a JSON value always serializes");
        let text = String::from_utf8(out).expect("serde_json writes UTF-8");
        text.replace('\n', &format!("{}{}", self.newline, indent.repeat(depth)))
    }

    fn member(&self, key: &str, value: &Value, depth: usize) -> String {
        let key = Value::String(key.into()).to_string();
        match &self.indent {
            Some(indent) => {
                format!("{}{}{key}: {}", self.newline, indent.repeat(depth), self.render(value, depth))
            }
            None => format!("{key}:{}", self.render(value, depth)),
        }
    }
}

/// One member of an object: where its key starts and where its value lies.
#[derive(Debug)]
struct Member {
    key: String,
    start: usize,
    value: Range<usize>,
}

/// Past the white space at `at`.
fn skip_space(text: &str, at: usize) -> usize {
    text.len() - text[at..].trim_start_matches([' ', '\t', '\n', '\r']).len()
}

/// The JSON value that starts at `start`, and where it ends.
fn value_at<T: serde::de::DeserializeOwned>(text: &str, start: usize) -> Result<(T, usize)> {
    let mut values = serde_json::Deserializer::from_str(&text[start..]).into_iter::<T>();
    let value = values.next().context("a value was expected")??;
    Ok((value, start + values.byte_offset()))
}

/// The members of the object whose `{` is at `open`, and where its `}` is.
fn members(text: &str, open: usize) -> Result<(Vec<Member>, usize)> {
    let mut members = Vec::new();
    let mut at = skip_space(text, open + 1);
    loop {
        match text.as_bytes().get(at) {
            Some(b'}') => return Ok((members, at)),
            Some(b',') => at = skip_space(text, at + 1),
            Some(b'"') => {
                let (key, key_end) = value_at::<String>(text, at)?;
                let colon = skip_space(text, key_end);
                if text.as_bytes().get(colon) != Some(&b':') {
                    bail!("a colon was expected");
                }
                let value_start = skip_space(text, colon + 1);
                let (_, value_end) = value_at::<serde::de::IgnoredAny>(text, value_start)?;
                members.push(Member { key, start: at, value: value_start..value_end });
                at = skip_space(text, value_end);
            }
            _ => bail!("not a JSON object"),
        }
    }
}

/// Sets (`Some`) or removes (`None`) the member at `path` (object keys from
/// the top), keeping every other byte. The objects along the path must exist.
fn set_member(text: &str, path: &[&str], value: Option<&Value>, style: &Style) -> Result<String> {
    let mut open = skip_space(text, 0);
    if text.as_bytes().get(open) != Some(&b'{') {
        bail!("not a JSON object");
    }
    let (last, parents) = path.split_last().expect("a path names a member");
    // A key given twice: JSON readers (Claude Code's too) take the last,
    // so an edit of either could say it worked and change nothing.
    let once = |members: &[Member], key: &str| -> Result<()> {
        if members.iter().filter(|m| m.key == key).count() > 1 {
            bail!("the key {key:?} is in it twice (Claude Code reads only the last): remove one, then run this again");
        }
        Ok(())
    };
    for key in parents {
        let (members, _) = members(text, open)?;
        once(&members, key)?;
        match members.iter().find(|m| m.key == *key) {
            Some(m) if text.as_bytes()[m.value.start] == b'{' => open = m.value.start,
            _ => bail!("{key:?} is not an object"),
        }
    }
    let depth = path.len();
    let (members, close) = members(text, open)?;
    once(&members, last)?;
    let at = members.iter().position(|m| m.key == *last);
    let mut out = text.to_string();
    match (at, value) {
        (Some(i), Some(value)) => out.replace_range(members[i].value.clone(), &style.render(value, depth)),
        (Some(i), None) => {
            let range = if i + 1 < members.len() {
                members[i].start..members[i + 1].start
            } else if i > 0 {
                members[i - 1].value.end..members[i].value.end
            } else {
                open + 1..close
            };
            out.replace_range(range, "");
        }
        (None, Some(value)) => {
            let member = style.member(last, value, depth);
            match members.last() {
                Some(previous) => out.insert_str(previous.value.end, &format!(",{member}")),
                None => {
                    let end = match &style.indent {
                        Some(indent) => format!("{}{}", style.newline, indent.repeat(depth - 1)),
                        None => String::new(),
                    };
                    out.replace_range(open + 1..close, &format!("{member}{end}"));
                }
            }
        }
        (None, None) => {}
    }
    Ok(out)
}

const BOM: &str = "\u{feff}";

/// The text of a settings file whose settings were `before` (parsed from
/// `text`) and are to be `after`: each changed top-level member, and each event
/// under `hooks`, edited where it stands; an empty file gets Claude Code's layout.
pub fn edit_to(text: &str, before: &Map<String, Value>, after: &Map<String, Value>) -> Result<String> {
    let body = text.strip_prefix(BOM).unwrap_or(text);
    let bom = &text[..text.len() - body.len()];
    if body.trim().is_empty() {
        return Ok(format!("{bom}{}", crate::claude::settings::render(after)));
    }
    let style = Style::of(body);
    let mut out = body.to_string();
    let keys = before.keys().chain(after.keys().filter(|k| !before.contains_key(*k)));
    for key in keys.cloned().collect::<Vec<_>>() {
        let (old, new) = (before.get(&key), after.get(&key));
        if old == new {
            continue;
        }
        match (old, new) {
            (Some(Value::Object(old)), Some(Value::Object(new))) if key == "hooks" && !old.is_empty() => {
                for event in old.keys().chain(new.keys().filter(|k| !old.contains_key(*k))) {
                    if old.get(event) != new.get(event) {
                        out = set_member(&out, &[&key, event], new.get(event), &style)?;
                    }
                }
            }
            _ => out = set_member(&out, &[&key], new, &style)?,
        }
    }
    // It must read back as meant, whatever the file held, or nothing is written.
    let reads_back = serde_json::from_str::<Value>(&out).ok() == Some(Value::Object(after.clone()));
    if !reads_back {
        bail!("the edited file would not read back as intended");
    }
    Ok(format!("{bom}{out}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    fn edit(text: &str, after: Value) -> String {
        let before: Value = serde_json::from_str(text.trim_start_matches(BOM)).unwrap();
        let out = edit_to(text, before.as_object().unwrap(), &map(after.clone())).unwrap();
        let parsed: Value = serde_json::from_str(out.trim_start_matches(BOM)).unwrap();
        assert_eq!(parsed, after, "{out}");
        out
    }

    #[test]
    fn members_are_edited_in_the_files_own_layout() {
        let cases: [(&str, Value, &str); 8] = [
            // Four spaces, a member added at the end.
            (
                "{\n    \"a\": 1\n}\n",
                json!({"a": 1, "b": [2]}),
                "{\n    \"a\": 1,\n    \"b\": [\n        2\n    ]\n}\n",
            ),
            // Tabs and CRLF, a value replaced where it stands.
            (
                "{\r\n\t\"a\": 1,\r\n\t\"z\": 0\r\n}",
                json!({"a": {"x": 1}, "z": 0}),
                "{\r\n\t\"a\": {\r\n\t\t\"x\": 1\r\n\t},\r\n\t\"z\": 0\r\n}",
            ),
            // One line stays one line.
            ("{\"a\":1}", json!({"a": 1, "b": true}), "{\"a\":1,\"b\":true}"),
            // The first member removed, then the last, then the only one.
            ("{\n  \"a\": 1,\n  \"b\": 2\n}\n", json!({"b": 2}), "{\n  \"b\": 2\n}\n"),
            ("{\n  \"a\": 1,\n  \"b\": 2\n}\n", json!({"a": 1}), "{\n  \"a\": 1\n}\n"),
            ("{\n  \"a\": 1\n}\n", json!({}), "{}\n"),
            // Into an empty object.
            ("{}\n", json!({"a": 1}), "{\n  \"a\": 1\n}\n"),
            // A key with an escape, and a brace inside a string.
            ("{ \"q\\\"k\": \"}\" , \"n\": 1 }", json!({"q\"k": "}", "n": 2}), "{ \"q\\\"k\": \"}\" , \"n\": 2 }"),
        ];
        for (text, after, expected) in cases {
            assert_eq!(edit(text, after), expected, "{text:?}");
        }
    }

    #[test]
    fn one_hook_event_is_edited_and_the_others_keep_their_bytes() {
        let text = "{\n   \"hooks\": {\n      \"Stop\": [ {\"hooks\": []} ],\n      \"Pre\": [1]\n   }\n}";
        let out = edit(text, json!({"hooks": {"Stop": [{"hooks": []}], "Pre": [1, 2]}}));
        assert_eq!(
            out,
            "{\n   \"hooks\": {\n      \"Stop\": [ {\"hooks\": []} ],\n      \"Pre\": [\n         1,\n         2\n      ]\n   }\n}"
        );
    }

    #[test]
    fn a_key_given_twice_is_refused() {
        let text = "{\"hooks\": {\"A\": []}, \"hooks\": {\"B\": []}}";
        let before: Value = serde_json::from_str(text).unwrap();
        let after = json!({"hooks": {"B": [], "Stop": [1]}});
        let err = edit_to(text, before.as_object().unwrap(), &map(after)).unwrap_err();
        assert!(err.to_string().contains("twice"), "{err}");
    }

    #[test]
    fn a_byte_order_mark_stays() {
        let out = edit("\u{feff}{\n  \"a\": 1\n}\n", json!({"a": 2}));
        assert_eq!(out, "\u{feff}{\n  \"a\": 2\n}\n");
    }

    proptest! {
        /// Adding members and taking them out again gives back every byte.
        #[test]
        fn add_then_remove_is_the_identity(
            keys in proptest::collection::vec("[a-z]{1,4}", 0..5),
            added in proptest::collection::vec(("[A-Z]{1,4}", 0i64..100), 1..4),
            indent in prop::sample::select(vec!["  ", "    ", "\t", ""]),
        ) {
            let mut original = Map::new();
            for (n, k) in keys.iter().enumerate() {
                original.insert(k.clone(), json!(n));
            }
            let text = if indent.is_empty() {
                Value::Object(original.clone()).to_string()
            } else {
                let mut out = Vec::new();
                let f = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
                serde::Serialize::serialize(&Value::Object(original.clone()), &mut serde_json::Serializer::with_formatter(&mut out, f)).unwrap();
                String::from_utf8(out).unwrap() + "\n"
            };
            let mut grown = original.clone();
            for (k, v) in &added {
                grown.insert(k.clone(), json!({"v": v}));
            }
            let installed = edit_to(&text, &original, &grown).unwrap();
            prop_assert_eq!(serde_json::from_str::<Value>(&installed).unwrap(), Value::Object(grown.clone()));
            let back = edit_to(&installed, &grown, &original).unwrap();
            if original.is_empty() && !indent.is_empty() {
                prop_assert_eq!(back, "{}\n");
            } else {
                prop_assert_eq!(back, text);
            }
        }
    }
}
