//! The fork command line, its stdin and its environment (docs/design.md §4).

use serde_json::Value;

use crate::support::*;

#[test]
fn stop_after_prompt_runs_one_fork_with_exactly_the_measured_flags() {
    let env = Env::new();
    env.copy_transcript_fixture();
    let memory = template_with("proj", &["- The build runs with `cargo build -j1`."]);
    env.write_memory(&memory);

    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok().assert_silent();
    let stop = env.hook("stop").fixture("Stop.json").run().ok();
    stop.assert_silent();
    env.wait_saves(SID, 1);

    assert_eq!(env.call_count(), 1);
    let call = env.call(1);
    let fixed = [
        "-p",
        "--resume",
        SID,
        "--fork-session",
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--settings",
        call.flag("--settings").unwrap_or("<missing>"),
        "--permission-mode",
        "dontAsk",
        "--max-turns",
        "1",
        "--output-format",
        "json",
    ];
    assert_eq!(call.args[..fixed.len().min(call.args.len())], fixed, "args: {:?}", call.args);
    let mut rest: Vec<&str> = call.args[fixed.len()..].iter().map(String::as_str).collect();
    rest.sort();
    assert_eq!(rest, ["--effort=medium", "--model=claude-opus-5-5"], "args: {:?}", call.args);
    for banned in ["--tools", "--disallowedTools", "--json-schema", "--bare", "--allowedTools"] {
        assert!(!call.args.iter().any(|a| a == banned), "{banned} in {:?}", call.args);
    }

    // A private file, never the JSON itself: a command line is readable by
    // every local user for the fork's whole run.
    let settings_file = std::path::Path::new(call.flag("--settings").unwrap());
    assert!(settings_file.starts_with(env.mem.join("state/memory-save")), "{}", settings_file.display());
    assert_eq!(call.settings_mode, "600");
    assert!(!settings_file.exists(), "the settings file outlived the fork");
    let settings: Value = serde_json::from_str(&call.settings).expect("--settings names a JSON file");
    assert_eq!(settings["disableAllHooks"], true, "{settings}");
    assert!(settings.get("permissions").is_none() && settings.get("hooks").is_none(), "{settings}");

    assert!(call.stdin.starts_with("[memory-save]"), "stdin: {}", call.stdin);
    assert!(call.stdin.contains(&memory), "the fork's message lacks the current MEMORY.md:\n{}", call.stdin);
    assert_eq!(call.env.trim(), "MEMORY_SAVE_FORK=1");
    assert_eq!(
        call.cwd.canonicalize().unwrap(),
        env.proj.canonicalize().unwrap(),
        "the fork runs in the session's folder"
    );
    // The fork's message, output and error files do not stay behind.
    assert_eq!(env.state_files(), ["saves.jsonl"]);
}

#[test]
fn the_fork_uses_the_sessions_last_model() {
    let env = Env::new();
    env.write_transcript("claude-haiku-9-1");
    env.saved_turn(SID, 1);
    assert_eq!(env.call(1).flag("--model"), Some("claude-haiku-9-1"));
}

#[test]
fn no_transcript_no_model_flag_and_no_memory_gives_the_template() {
    let env = Env::new();
    env.saved_turn(SID, 1);

    let call = env.call(1);
    assert!(!call.args.iter().any(|a| a.starts_with("--model")), "args: {:?}", call.args);
    assert!(call.stdin.starts_with("[memory-save]"));
    assert!(call.stdin.contains("## Architecture & Config Facts"), "the template is missing: {}", call.stdin);
    // No reply content: nothing is written.
    assert_eq!(env.memory(), None);
    assert_eq!(env.status(SID), "no change");
}

#[test]
fn a_hook_inside_the_fork_does_nothing() {
    let env = Env::new().with_var("MEMORY_SAVE_FORK", "1");
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok().assert_silent();
    env.hook("stop").fixture("Stop.json").run().ok().assert_silent();
    env.assert_no_save(SID);
    env.cmd(&["sessions", "--json"]).stdout("[]\n").run().ok();
}
