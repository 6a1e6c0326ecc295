use super::*;
use crate::claude::settings::{parse_settings, render};
use serde_json::json;

const EXE: &str = "/opt/bin/memory-save";

fn program() -> Program {
    Program::Path(EXE.into())
}

fn obj(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => panic!("not an object"),
    }
}

fn installed(settings: Value) -> Map<String, Value> {
    let mut settings = obj(settings);
    install_into(&mut settings, &program(), false).unwrap();
    settings
}

fn uninstalled(settings: Map<String, Value>) -> Map<String, Value> {
    let mut settings = settings;
    uninstall_from(&mut settings).unwrap();
    settings
}

fn all_commands(settings: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    for groups in settings["hooks"].as_object().unwrap().values() {
        for group in groups.as_array().unwrap() {
            for entry in group["hooks"].as_array().unwrap() {
                out.push(entry["command"].as_str().unwrap().to_owned());
            }
        }
    }
    out
}

/// hooks.json is the events table (`claude::events`), entry for entry:
/// Claude Code's name, the matcher, and the commands in order.
#[test]
fn hooks_json_is_the_events_table() {
    use super::super::events::HookEvent;
    let hooks = our_hooks(&program());
    // Each event of the table is one group, in order; an event name
    // may hold more than one (PostToolUse: every tool, and the Skill
    // tool alone).
    let groups: Vec<(&str, &Value)> = hooks
        .iter()
        .flat_map(|(name, groups)| groups.as_array().unwrap().iter().map(move |g| (name.as_str(), g)))
        .collect();
    assert_eq!(groups.iter().map(|(name, _)| *name).collect::<Vec<_>>(), HookEvent::ALL.map(HookEvent::name));
    let mut commands = Vec::new();
    for (event, (_, group)) in HookEvent::ALL.into_iter().zip(&groups) {
        assert_eq!(group.get("matcher").and_then(Value::as_str), event.matcher(), "{}", event.name());
        let entries = group["hooks"].as_array().unwrap();
        assert_eq!(entries.len(), event.commands(), "{}", event.name());
        for entry in entries {
            assert_eq!(entry["type"], "command");
            assert!(entry["timeout"].as_u64().unwrap() <= 10);
            assert!(entry_is_ours(entry));
            commands.push(entry["command"].as_str().unwrap().to_owned());
        }
    }
    let expected: Vec<String> = HookEvent::command_lines().iter().map(|(_, c)| format!("{EXE} {c}")).collect();
    assert_eq!(commands, expected);
    assert_eq!(expected.len(), 13);
    assert_eq!(expected[5], format!("{EXE} hook session-start --part 6"));
}

#[test]
fn shell_quote_round_trips_through_shell_words() {
    let cases = [
        "/usr/local/bin/memory-save",
        "/Users/Ann Lee/.cargo/bin/memory-save",
        "it's",
        "a'b'c",
        "echo \"$HOME\" | tr a-z A-Z",
        "~/.claude/statusline.sh",
        "",
        "line one\nline two",
        "back\\slash",
        "ünïcødé ✓",
    ];
    for case in cases {
        assert_eq!(shell_words(&shell_quote(case)), Some(vec![case.to_owned()]), "{case:?}");
        assert_eq!(shell_words(&single_quote(case)), Some(vec![case.to_owned()]), "{case:?}");
    }
    assert_eq!(shell_quote("/usr/bin/memory-save"), "/usr/bin/memory-save");
    assert_eq!(shell_quote("/a b/memory-save"), "'/a b/memory-save'");
}

#[test]
fn shell_words_table() {
    let cases: &[(&str, Option<&[&str]>)] = &[
        ("a b  c", Some(&["a", "b", "c"])),
        ("'a b' c", Some(&["a b", "c"])),
        ("\"a \\\"b\\\" \\x\" c", Some(&["a \"b\" \\x", "c"])),
        ("a\\ b", Some(&["a b"])),
        ("x''", Some(&["x"])),
        ("''", Some(&[""])),
        ("'open", None),
        ("\"open", None),
        ("", Some(&[])),
    ];
    for (line, expected) in cases {
        let expected = expected.map(|w| w.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(shell_words(line), expected, "{line:?}");
    }
}

#[test]
fn recognises_only_our_commands() {
    let cases = [
        ("memory-save hook stop", true),
        ("/home/a/.cargo/bin/memory-save hook session-start --part 3", true),
        ("'/home/a b/memory-save' hook stop", true),
        ("~/.cargo/bin/memory-save hook stop", true),
        ("memory-save statusline", false), // a status line, not a hook entry
        ("memory-save install", false),
        ("/bin/not-memory-save hook stop", false),
        ("echo memory-save hook stop", false),
        ("python3 ~/hooks/memory-save.py hook", false),
        ("'unterminated memory-save hook stop", false),
    ];
    for (command, ours) in cases {
        assert_eq!(entry_is_ours(&json!({"type": "command", "command": command})), ours, "{command}");
    }
}

#[test]
fn fresh_install_adds_every_event() {
    let settings = installed(json!({}));
    assert_eq!(all_commands(&settings).len(), 13);
    assert!(all_commands(&settings).iter().all(|c| c.starts_with(EXE)));
    assert_eq!(settings["hooks"], Value::Object(our_hooks(&program())));
    assert!(!settings.contains_key("statusLine"));
}

#[test]
fn install_keeps_other_settings_and_hooks_in_order() {
    let original = json!({
        "model": "opus",
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
        },
        "permissions": {"allow": ["Bash"]}
    });
    let settings = installed(original.clone());
    let keys: Vec<&str> = settings.keys().map(String::as_str).collect();
    assert_eq!(keys, ["model", "hooks", "permissions"]);
    let events: Vec<&str> = settings["hooks"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        events,
        ["PreToolUse", "Stop", "SessionStart", "UserPromptSubmit", "PostToolUse", "PreCompact", "SessionEnd"]
    );
    assert_eq!(settings["hooks"]["PreToolUse"][0], original["hooks"]["PreToolUse"][0]);
    assert_eq!(settings["hooks"]["PreToolUse"][1]["hooks"][0]["command"], format!("{EXE} hook pre-tool-use"));
    assert_eq!(settings["hooks"]["Stop"][0], original["hooks"]["Stop"][0]);
    assert_eq!(settings["hooks"]["Stop"][1]["hooks"][0]["command"], format!("{EXE} hook stop"));
    assert_eq!(Value::Object(uninstalled(settings)), original);
}

#[test]
fn reinstall_replaces_in_place() {
    let original = json!({
        "hooks": {
            "Stop": [
                {"hooks": [{"type": "command", "command": "first.sh"}]},
                {"hooks": [{"type": "command", "command": "/old/place/memory-save hook stop", "timeout": 99}]},
                {"hooks": [{"type": "command", "command": "last.sh"}]}
            ]
        }
    });
    let once = installed(original);
    let stop = &once["hooks"]["Stop"];
    assert_eq!(stop.as_array().unwrap().len(), 3);
    assert_eq!(stop[0]["hooks"][0]["command"], "first.sh");
    assert_eq!(stop[1]["hooks"][0]["command"], format!("{EXE} hook stop"));
    assert_eq!(stop[1]["hooks"][0]["timeout"], 10);
    assert_eq!(stop[2]["hooks"][0]["command"], "last.sh");
    let twice = installed(Value::Object(once.clone()));
    assert_eq!(render(&twice), render(&once));
}

#[test]
fn ours_inside_a_mixed_group_leaves_their_entry() {
    let settings = json!({
        "hooks": {
            "Stop": [{"hooks": [
                {"type": "command", "command": "mine.sh"},
                {"type": "command", "command": "memory-save hook stop"}
            ]}]
        }
    });
    let settings = installed(settings);
    let stop = settings["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop.len(), 2);
    assert_eq!(stop[0]["hooks"][0]["command"], format!("{EXE} hook stop"));
    assert_eq!(stop[1]["hooks"], json!([{"type": "command", "command": "mine.sh"}]));
    // Stable from here on.
    let again = installed(Value::Object(settings.clone()));
    assert_eq!(render(&again), render(&settings));
}

#[test]
fn uninstall_drops_what_it_emptied_only() {
    let cases = [
        // (before, after)
        (json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "memory-save hook stop"}]}]}}), json!({})),
        (
            json!({"hooks": {"Stop": [], "SessionEnd": [{"hooks": [{"type": "command", "command": "memory-save hook session-end"}]}]}}),
            json!({"hooks": {"Stop": []}}),
        ),
        (
            json!({"hooks": {"Stop": [{"hooks": []}, {"hooks": [{"type": "command", "command": "memory-save hook stop"}]}]}}),
            json!({"hooks": {"Stop": [{"hooks": []}]}}),
        ),
        (
            json!({"hooks": {"Odd": "not a list", "Stop": [{"hooks": [{"command": "memory-save hook stop"}, {"command": "x"}]}]}}),
            json!({"hooks": {"Odd": "not a list", "Stop": [{"hooks": [{"command": "x"}]}]}}),
        ),
        (json!({"hooks": {}}), json!({"hooks": {}})),
        (json!({"a": 1}), json!({"a": 1})),
    ];
    for (before, after) in cases {
        assert_eq!(Value::Object(uninstalled(obj(before.clone()))), after, "{before}");
    }
}

#[test]
fn install_refuses_a_non_list_event_of_ours() {
    let mut settings = obj(json!({"hooks": {"Stop": {"oops": true}}}));
    assert!(install_into(&mut settings, &program(), false).is_err());
}

#[test]
fn parse_refuses_bad_shapes() {
    let path = Path::new("/x/settings.json");
    for text in ["{", "[1]", "\"s\"", "{\"hooks\": []}", "{\"hooks\": null}", "// c\n{}"] {
        let err = parse_settings(path, Some(text)).unwrap_err().to_string();
        assert!(err.contains("/x/settings.json"), "{err}");
        assert!(err.contains("settings file") && !err.contains("run this again"), "{err}");
    }
    assert!(parse_settings(path, None).unwrap().is_empty());
    assert!(parse_settings(path, Some(" \n")).unwrap().is_empty());
}

#[test]
fn statusline_table() {
    let theirs = r#"echo "$(whoami)" 'it'\''s' | cut -c1-40"#;
    let wrapped = format!("{EXE} statusline -- sh -c {}", single_quote(theirs));
    let cases = [
        // (before, wanted, after install)
        (
            json!({}),
            true,
            json!({"statusLine": {"type": "command", "command": format!("{EXE} statusline"), "refreshInterval": 2}}),
        ),
        (json!({}), false, json!({})),
        (
            json!({"statusLine": {"type": "command", "command": theirs, "padding": 0}}),
            true,
            json!({"statusLine": {"type": "command", "command": wrapped, "padding": 0, "refreshInterval": 2}}),
        ),
        // A refresh of their own stays theirs.
        (
            json!({"statusLine": {"type": "command", "command": theirs, "refreshInterval": 30}}),
            true,
            json!({"statusLine": {"type": "command", "command": wrapped, "refreshInterval": 30}}),
        ),
        (
            json!({"statusLine": {"type": "command", "command": theirs}}),
            false,
            json!({"statusLine": {"type": "command", "command": theirs}}),
        ),
        // Ours from an older path: refreshed, still wrapping theirs.
        (
            json!({"statusLine": {"type": "command", "command": format!("/old/memory-save statusline -- sh -c {}", single_quote(theirs))}}),
            false,
            json!({"statusLine": {"type": "command", "command": wrapped, "refreshInterval": 2}}),
        ),
    ];
    for (before, wanted, after) in cases {
        let mut settings = obj(before.clone());
        let (_, refresh_added) = install_statusline(&mut settings, EXE, wanted).unwrap();
        if refresh_added {
            remove_refresh(&mut settings);
            assert_eq!(Value::Object(settings.clone()).get("statusLine").and_then(|s| s.get("refreshInterval")), None);
            install_statusline(&mut settings, EXE, wanted).unwrap();
        }
        assert_eq!(Value::Object(settings.clone()), after, "{before}");
        // Installing again changes nothing; uninstall gives theirs back.
        let mut again = settings.clone();
        install_statusline(&mut again, EXE, wanted).unwrap();
        assert_eq!(render(&again), render(&settings));
        uninstall_statusline(&mut settings);
        if refresh_added {
            remove_refresh(&mut settings);
        }
        let mut expected = obj(before);
        if let Some(c) = expected.get_mut("statusLine").and_then(|s| s.get_mut("command")) {
            *c = theirs.into();
        }
        assert_eq!(Value::Object(settings), Value::Object(expected));
    }
}

#[test]
fn statusline_without_command_is_refused_only_when_asked() {
    let mut settings = obj(json!({"statusLine": {"type": "static"}}));
    assert!(install_statusline(&mut settings, EXE, true).is_err());
    assert_eq!(install_statusline(&mut settings, EXE, false).unwrap(), (None, false));
}

#[test]
fn hand_wrapped_statusline_is_restored_as_one_command() {
    assert_eq!(
        wrapped_statusline("memory-save statusline -- ~/bin/line.sh --short 'a b'"),
        Ok(Some("'~/bin/line.sh' --short 'a b'".to_owned()))
    );
    assert_eq!(wrapped_statusline("memory-save statusline"), Ok(None));
    assert_eq!(wrapped_statusline("memory-save hook stop"), Err(()));
    assert_eq!(wrapped_statusline("starship prompt"), Err(()));
}

#[test]
fn full_round_trip_is_byte_identical_for_files_we_wrote() {
    let original = render(&obj(json!({
        "env": {"FOO": "1"},
        "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt.sh"}]}]},
        "statusLine": {"type": "command", "command": "~/.claude/line.sh", "padding": 1}
    })));
    let mut settings = parse_settings(Path::new("s"), Some(&original)).unwrap();
    let change = install_into(&mut settings, &program(), true).unwrap();
    assert!(change.refresh_added, "the install record keeps this, for uninstall");
    let once = render(&settings);
    let mut again = parse_settings(Path::new("s"), Some(&once)).unwrap();
    install_into(&mut again, &program(), true).unwrap();
    assert_eq!(render(&again), once);
    uninstall_from(&mut again).unwrap();
    remove_refresh(&mut again);
    assert_eq!(render(&again), original);
}

#[test]
fn summary_reads_in_both_tenses() {
    let change = InstallChange {
        removed_commands: 10,
        added_commands: 10,
        statusline: Some(("wrap", "your status line")),
        refresh_added: true,
    };
    assert_eq!(change.describe(false), "installed 10 hook commands (replacing 10 of ours), wrapped your status line");
    assert_eq!(
        change.describe(true),
        "would install 10 hook commands (replacing 10 of ours), would wrap your status line"
    );
    let change = InstallChange {
        removed_commands: 10,
        added_commands: 0,
        statusline: Some(("restore", "your status line")),
        refresh_added: false,
    };
    assert_eq!(change.describe(false), "removed 10 hook commands, restored your status line");
    let change = InstallChange {
        removed_commands: 0,
        added_commands: 0,
        statusline: Some(("set", "the status line")),
        refresh_added: false,
    };
    assert_eq!(change.describe(false), "set the status line");
}

#[test]
fn a_shared_install_runs_us_by_name_and_is_found_again() {
    let mut settings = Map::new();
    install_into(&mut settings, &Program::Shared, false).unwrap();
    let commands = all_commands(&settings);
    assert!(commands.iter().all(|c| c.starts_with(SHARED_GUARD) && c.ends_with(SHARED_TAIL)), "{commands:?}");
    assert!(commands.contains(&format!("{SHARED_GUARD}memory-save hook stop{SHARED_TAIL}")));
    // Installing again replaces, and uninstall finds every one of them.
    install_into(&mut settings, &Program::Shared, false).unwrap();
    assert_eq!(all_commands(&settings), commands);
    let change = uninstall_from(&mut settings).unwrap();
    assert_eq!(change.removed_commands, commands.len());
    assert!(settings.is_empty(), "{settings:?}");
    assert!(install_into(&mut Map::new(), &Program::Shared, true).is_err(), "no shared status line");
    // A command that only looks like the guard is not ours.
    assert_eq!(our_subcommand("command -v memory-save >/dev/null 2>&1 && rm -rf x || true"), None);
}
