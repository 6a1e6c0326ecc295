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

#[test]
fn huge_hostile_replies_are_read_in_bounded_work() {
    const MB10: usize = 10 * 1024 * 1024;
    let fill = |unit: &str| unit.repeat(MB10 / unit.len());
    let nested = "{\"a\":".repeat(100) + &"[0,".repeat(MB10 / 3) + "}";
    let cases: Vec<(&str, String)> = vec![
        ("10 MB of {\"", fill("{\"")),
        ("10 MB of {\" and a }", fill("{\"") + "}"),
        ("10 MB of {\"a\":", fill("{\"a\":") + "}"),
        ("nested braces", fill("{\"a\":{") + &"}".repeat(1000)),
        ("100 deep, then a 10 MB array", nested),
        ("10 MB of {\"a\":1} objects", fill("{\"a\":1}")),
        ("10 MB of strings", fill("{\"ab\":\"cd\",") + "}"),
        ("an object after 10 MB of prose braces", fill("{\"x\" ") + "{\"ops\":[]}"),
        ("10 MB string then the object", format!("{{\"note\":\"{}\"}} {{\"ops\":[]}}", "x".repeat(MB10))),
    ];
    for (name, text) in &cases {
        // Bounded in work, not in seconds: the parser reads at most about
        // one byte per byte of text, however hostile (quadratic would be
        // ten trillion for 10 MB).
        let (result, spent) = find_object(text);
        eprintln!("{name}: {spent} units of work for {} bytes, {:?}", text.len(), result.as_ref().err());
        assert!(spent <= finder_budget(text.len()), "{name}: {spent}");
        assert!(spent <= 2 * text.len() + FINDER_WORK_BASE, "{name}: {spent}");
    }
    assert!(parse(&cases[8].1).is_ok(), "one long string before the object is not hostile");
}

#[test]
fn a_huge_valid_reply_is_read_once_and_cut_to_the_counts() {
    // Linear, but a tree of a quarter million ops: about 1.5 s in a
    // debug build, so no time limit here (a loaded machine would trip it).
    let op = r#"{"op":"add","section":"A","text":"- b"}"#;
    let text = format!("Here:\n{{\"ops\":[{}]}}", vec![op; 10 * 1024 * 1024 / 40].join(","));
    assert_eq!(parse(&text).map(|r| (r.ops.len(), r.malformed.len())), Ok((MAX_OPS, 1)));
}

#[test]
fn entries_past_the_counts_are_refused_in_one_entry() {
    let op = r#"{"op":"remove","line":"- x"}"#;
    let topic = r#"{"file":"a.md","append":"x"}"#;
    let text = format!(
        r#"{{"ops":[{}],"topics":[{}]}}"#,
        vec![op; MAX_OPS + 5].join(","),
        vec![topic; MAX_TOPICS + 1].join(",")
    );
    let reply = parse(&text).unwrap();
    assert_eq!((reply.ops.len(), reply.topics.len()), (MAX_OPS, MAX_TOPICS));
    let entries: Vec<&str> = reply.malformed.iter().map(|m| m.entry.as_str()).collect();
    assert_eq!(entries, vec!["the 5 ops after the first 1000", "the 1 topics after the first 100"]);
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
