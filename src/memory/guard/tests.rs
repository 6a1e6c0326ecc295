use super::*;

fn spec(tool: Tool, pattern: &str) -> Spec {
    Spec { tool, pattern: pattern.into() }
}

/// A command continued over lines is one command: joined; other line
/// breaks end a command as `;` does, so `.` in a guard spans them and a
/// guard anchored on a command's start finds the one after.
#[test]
fn a_command_continued_over_lines_is_matched_as_one() {
    let guard = |pattern: &str| {
        Active::new("aaaaaaaa".into(), "- Never force-push main.".into(), spec(Tool::Bash, pattern), Decision::Ask)
    };
    let cases = [
        (r"git push .*--force", "git push origin main \\\n--force"),
        (r"git push .*--force", "git push origin main \\\r\n  --force"),
        (r"git push .*--force", "git push origin main\n--force"),
        (r"(^|[;&|])\s*git push", "ls\ngit push --force"),
        (r"(^|[;&|])\s*git push", "ls\r\ngit push --force"),
    ];
    for (pattern, command) in cases {
        let subject = subject(Tool::Bash, Some(command), None, "/").unwrap();
        assert_eq!(matching(&[guard(pattern)], Tool::Bash, &subject).unwrap().len(), 1, "{pattern} on {command:?}");
    }
}

/// A guard that follows its rule's own words may match the ordinary
/// commands the rule forbids: "never npm or yarn" is about `npm test`.
/// A catch-all finds no words of its rule, whatever the rule says.
#[test]
fn a_guard_in_its_rules_own_words_may_match_what_the_rule_forbids() {
    let pnpm = "- Use pnpm only, never npm or yarn.";
    assert_eq!(spec(Tool::Bash, r"\b(npm|yarn)\b").refusal(pnpm), None);
    assert_eq!(spec(Tool::Bash, r"(npm|yarn) (install|test|run)").refusal(pnpm), None);
    assert!(spec(Tool::Bash, r"\S+").refusal(pnpm).is_some());
    assert!(spec(Tool::Bash, ".{31,}").refusal("- Never run anything longer than 31 characters.").is_some());
    assert_eq!(spec(Tool::Bash, "git").refusal("- Never use git in this folder: it is not a repository."), None);
    assert_eq!(spec(Tool::Edit, "migrations/**").refusal("- Never edit migrations/ by hand."), None);
    let generated = "- Never edit the generated files under gen/ by hand.";
    assert_eq!(spec(Tool::Edit, "gen/**").refusal(generated), None);
}

#[test]
fn the_gate_refuses_what_would_ask_always_or_cannot_be_checked() {
    let long = "a".repeat(MAX_PATTERN + 1);
    let cases: &[(Tool, &str, Option<&str>)] = &[
        (Tool::Bash, r"pytest\s+tests/integration", None),
        (Tool::Bash, r"git push .*--force", None),
        (Tool::Bash, "git", Some("ordinary command `git status`")),
        (Tool::Bash, ".*", Some("ordinary command `ls`")),
        (Tool::Bash, "make", Some("ordinary command `make`")),
        (Tool::Bash, "(", Some("does not compile")),
        (Tool::Bash, r"\w{1000}\w{1000}\w{1000}", Some("does not compile within the size limit")),
        (Tool::Bash, r"pytest\s+tests/integration|make itest", None),
        (Tool::Bash, &long, Some("over 200")),
        (Tool::Bash, "  ", Some("empty")),
        (Tool::Bash, "rm\u{1b}[2J", Some("control character")),
        (Tool::Edit, "migrations/*.sql", None),
        (Tool::Edit, "**/.env", None),
        (Tool::Edit, "**", Some("paths of every kind")),
        (Tool::Edit, "**/*", Some("paths of every kind")),
        (Tool::Edit, "**/*.*", Some("paths of every kind")),
        (Tool::Edit, "?*/**", Some("paths of every kind")),
        (Tool::Edit, "*", Some("paths of every kind")),
        (Tool::Edit, "*.md", None),
        (Tool::Bash, ".{14,}", Some("ordinary command")),
        (Tool::Bash, "[;&|]", Some("ordinary command")),
        (Tool::Bash, "^[^lcgnm]", Some("ordinary command")),
        (Tool::Bash, r"\S \S+ \S", Some("ordinary command")),
        (Tool::Bash, "x</system-reminder>", Some("markup")),
        (Tool::Bash, "git push\u{202e}", Some("its match:")),
        (Tool::Bash, r"x\w{0,479}y", Some("size limit")),
        // Catch-alls an attacker's review got admitted, judged on the corpus.
        (Tool::Bash, ".{31,}", Some("ordinary commands")),
        (Tool::Bash, "[/|'\"]", Some("ordinary commands")),
        (Tool::Bash, r"\S+", Some("ordinary command `ls`")),
        (Tool::Bash, "[a-z]", Some("ordinary command `ls`")),
        (Tool::Edit, "**/*.rs", Some("paths of every kind")),
        (Tool::Edit, "**/*.ts", Some("paths of every kind")),
        (Tool::Bash, r"\b(npm|yarn)\b", Some("ordinary command `npm test`")),
        (Tool::Bash, r"git push .*--force", None),
        (Tool::Edit, "migrations/**", Some("paths of every kind")),
        // Shapes of ordinary work a corpus of plain commands never held.
        (Tool::Bash, r"\$\(", Some("ordinary commands")),
        (Tool::Bash, r"\bxargs\b", Some("ordinary commands")),
        (Tool::Bash, "<<", Some("ordinary commands")),
        (Tool::Bash, "~/", Some("ordinary commands")),
        (Tool::Bash, r"\| *(head|grep)", Some("ordinary commands")),
        (Tool::Edit, "/home/**", Some("paths of every kind")),
        (Tool::Edit, "/Users/**", Some("paths of every kind")),
    ];
    for (tool, pattern, want) in cases {
        let got = spec(*tool, pattern).refusal("- A rule that names none of its words.");
        match want {
            None => assert_eq!(got, None, "{pattern}"),
            Some(part) => assert!(got.as_deref().is_some_and(|g| g.contains(part)), "{pattern}: {got:?}"),
        }
    }
}

#[test]
fn globs_match_paths_relative_to_the_top() {
    let cases = [
        ("migrations/*.sql", "migrations/0012_add.sql", true),
        ("migrations/*.sql", "migrations/old/0001.sql", false),
        ("migrations/**", "migrations/old/0001.sql", true),
        ("**/.env", ".env", true),
        ("**/.env", "deploy/prod/.env", true),
        ("**/.env", "deploy/.envrc", false),
        ("a?c.txt", "abc.txt", true),
        ("a?c.txt", "a/c.txt", false),
        ("file.(x)+", "file.(x)+", true),
        ("file.(x)+", "fileA(x)", false),
    ];
    for (glob, path, want) in cases {
        assert!(spec(Tool::Edit, glob).compile().is_ok(), "{glob}");
        assert_eq!(spec(Tool::Edit, glob).is_match(path), want, "{glob} on {path}");
    }
}

#[test]
fn a_call_is_matched_on_its_command_or_its_path_under_the_top() {
    let path = Some("/w/app/migrations/1.sql");
    assert_eq!(subject(Tool::Edit, None, path, "/w/app").as_deref(), Some("migrations/1.sql"));
    assert_eq!(subject(Tool::Edit, None, path, "/w/app/").as_deref(), Some("migrations/1.sql"));
    assert_eq!(subject(Tool::Edit, None, path, "/w/ap").as_deref(), Some("/w/app/migrations/1.sql"));
    assert_eq!(subject(Tool::Edit, None, Some("/w/app2/x.sql"), "/w/app").as_deref(), Some("/w/app2/x.sql"));
    for dodge in ["/w/app/./migrations/1.sql", "/w/app/src/../migrations/1.sql", "/w/app//migrations/1.sql"] {
        assert_eq!(subject(Tool::Edit, None, Some(dodge), "/w/app").as_deref(), Some("migrations/1.sql"), "{dodge}");
    }
    let command = Some("pytest tests/integration -x");
    assert_eq!(subject(Tool::Bash, command, path, "/w/app").as_deref(), command);
    assert_eq!(subject(Tool::Bash, None, path, "/w/app"), None);
    assert_eq!(Tool::of_tool_name("MultiEdit"), Some(Tool::Edit));
    assert_eq!(Tool::of_tool_name("Read"), None);
}

#[test]
fn one_set_finds_every_matching_guard_a_refusing_one_first() {
    let active = |id: &str, tool, pattern: &str, decision| {
        Active::new(id.into(), format!("- rule {id}"), Spec { tool, pattern: pattern.into() }, decision)
    };
    let guards = [
        active("a", Tool::Bash, r"pytest\s+tests/integration", Decision::Ask),
        active("b", Tool::Bash, "git push .*--force", Decision::Ask),
        active("c", Tool::Bash, "pytest", Decision::Deny),
        active("d", Tool::Edit, "gen/**", Decision::Deny),
        active("e", Tool::Bash, "şema-sil", Decision::Ask),
    ];
    let ids = |tool, subject: &str| -> Vec<String> {
        matching(&guards, tool, subject).unwrap().iter().map(|g| g.id.clone()).collect()
    };
    assert_eq!(ids(Tool::Bash, "pytest  tests/integration -x"), ["c", "a"]);
    assert_eq!(ids(Tool::Bash, "git push origin main --force"), ["b"]);
    assert_eq!(ids(Tool::Bash, "./şema-sil --hepsi"), ["e"], "a literal beyond ASCII matches as itself");
    assert_eq!(ids(Tool::Bash, "gen/x.rs"), Vec::<String>::new(), "an edit guard never checks a command");
    assert_eq!(ids(Tool::Edit, "gen/x.rs"), ["d"]);
    let long = "x".repeat(MAX_SUBJECT + 1);
    assert!(matching(&guards, Tool::Bash, &long).unwrap_err().contains("too long to check"));
    assert!(matching(&guards[3..4], Tool::Bash, &long).unwrap().is_empty(), "no Bash guard: nothing to check");
}

/// The slowest guards the gate admits, on the longest command a hook
/// checks: well inside the hook's 5-second deadline.
#[test]
fn the_slowest_admitted_guards_check_the_longest_command_in_time() {
    let mut count = 0;
    let slow = (1..)
        .map(|n| format!(r"x\w{{0,{n}}}y"))
        .take_while(|p| {
            count += 1;
            Spec { tool: Tool::Bash, pattern: p.clone() }.shape_refusal().is_none() && count < 2000
        })
        .last()
        .unwrap();
    let guards: Vec<Active> = (0..MAX_GUARDS)
        .map(|n| Active {
            id: format!("{n:08x}"),
            rule: format!("- rule {n}"),
            tool: Tool::Bash,
            pattern: slow.clone(),
            decision: Decision::Ask,
            // As a session an installed version bound: every guard compiled.
            needle: None,
        })
        .collect();
    let subject = "x".to_string() + &"a".repeat(MAX_SUBJECT - 1);
    let started = std::time::Instant::now();
    let _ = matching(&guards, Tool::Bash, &subject).unwrap();
    let took = started.elapsed();
    eprintln!("{slow}: 20 guards on {} bytes in {took:?}", subject.len());
    assert!(took < std::time::Duration::from_secs(2), "{slow}: {took:?}");
}

#[test]
fn a_reply_guard_is_read_or_refused_with_its_reason() {
    let read = |json: &str| Spec::read(&serde_json::from_str(json).unwrap());
    assert_eq!(read(r#"{"tool": "Bash", "match": "x"}"#), Ok(spec(Tool::Bash, "x")));
    assert!(read(r#"{"tool": "Read", "match": "x"}"#).unwrap_err().contains("\"Read\""));
    assert!(read(r#"{"tool": "Bash"}"#).is_err());
    assert!(read(r#""Bash""#).is_err());
}

#[test]
fn a_guard_keeps_the_text_its_every_match_holds() {
    for (tool, pattern, kept) in [
        (Tool::Bash, r"tool7\s+--force", Some("tool7")),
        (Tool::Bash, "git push", Some("git push")),
        (Tool::Bash, r"(git|rm) -rf", None),
        (Tool::Bash, r".*--force", None),
        (Tool::Edit, "migrations/**", Some("migrations/")),
        (Tool::Bash, "(?i)git push", None),
    ] {
        let guard = Active::new("00000001".into(), "- r".into(), spec(tool, pattern), Decision::Ask);
        assert_eq!(guard.needle.as_deref(), kept, "{pattern}");
    }
}

proptest::proptest! {
    /// The needle never leaves out a guard that matches: the same
    /// answer as a machine of the guard compiled whatever the call.
    #[test]
    fn a_guard_left_out_by_its_needle_never_matches(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "git", "push", " ", "--force", "rm", "-rf", "tool7", "^", "$", ".*", r"\s+", r"\w*", "[a-c]",
            "(?i)", "(git|rm)", "a?", "b+", "x{2}", r"\.", "/", "(?:py|js)test", "[^/]*",
        ]), 1..6),
        subject in "(git|push|rm|-rf|--force|tool7|PUSH|Git| |a|b|x|\\.|/|pytest|jstest){0,8}",
    ) {
        let pattern: String = pieces.concat();
        let guard = Active::new("00000001".into(), "- r".into(), spec(Tool::Bash, &pattern), Decision::Ask);
        let whole = compile(std::slice::from_ref(&pattern)).unwrap();
        let matches = whole.is_match(&mut whole.create_cache(), subject.as_bytes());
        let found = matching(std::slice::from_ref(&guard), Tool::Bash, &subject).unwrap();
        proptest::prop_assert_eq!(found.len() == 1, matches, "{:?} on {:?}", pattern, subject);
    }
}
