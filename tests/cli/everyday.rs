//! Living with it: status, doctor, history and undo, turning it off, and
//! the configuration file.

use std::fs;

use serde_json::{Value, json};

use crate::support::*;

#[test]
fn status_shows_size_topics_last_saves_and_cost() {
    let env = Env::new();
    env.script_output(
        1,
        &json!({"type":"result","is_error":false,
                "result": reply(json!([add(ARCH, "- Uses cargo.")]), json!([{"file":"history.md","append":"- x"}])),
                "usage":{"input_tokens":12,"cache_read_input_tokens":3400,"cache_creation_input_tokens":5,"output_tokens":56},
                "total_cost_usd":0.0123}),
    );
    env.saved_turn(SID, 1);

    let out = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok();
    let status = out.json();
    assert_eq!(status["project"], "proj");
    assert_eq!(status["memory_exists"], true);
    assert_eq!(status["max_lines"], 200);
    assert_eq!(status["max_chars"], 50_000);
    assert_eq!(status["lines"], env.memory().unwrap().lines().count());
    assert_eq!(status["topic_files"], json!(["history.md"]));
    assert_eq!(status["off"], json!(null));
    assert_eq!((status["saving"].clone(), status["queued"].clone()), (json!(0), json!(0)));
    let last = &status["recent_saves"][0];
    assert_eq!(last["status"], "+1 topic: history");
    assert_eq!(last["usage"]["cache_read_input_tokens"], 3400);
    assert_eq!(last["usage"]["output_tokens"], 56);
    assert!((last["usage"]["total_cost_usd"].as_f64().unwrap() - 0.0123).abs() < 1e-9, "{last}");

    let text = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(text.contains("project proj"), "{text}");
    assert!(text.contains("state     on"), "{text}");
    assert!(text.contains("of 200 lines"), "{text}");
    assert!(
        text.contains("+1 topic: history")
            && text.contains("cache read 3400")
            && text.contains("(the CLI said $0.012)\n"),
        "{text}"
    );
}

#[test]
fn status_names_the_last_failed_reply() {
    let env = Env::new();
    env.script_reply(1, "no json here");
    env.saved_turn(SID, 1);
    let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
    assert!(status["last_failed_reply"]["path"].as_str().unwrap().ends_with("memory-save.failed-reply.txt"));
    assert_eq!(status["last_failed_reply"]["bytes"], "no json here".len());
}

#[test]
fn doctor_reports_problems_and_passes_once_installed() {
    let env = Env::new();
    let out = env.cmd(&["doctor"]).status(3).run();
    assert!(out.stdout.contains("PROBLEM") && out.stdout.contains("run memory-save install"), "{out:#?}");

    // Installed from this very binary, with a claude that answers --version.
    env.cmd(&["install"]).run().ok();
    let out = env.cmd(&["doctor"]).run();
    assert!(out.stdout.contains("all 13 hook commands registered"), "{out:#?}");
    // The fake answers --version with no release: doctor warns, and passes.
    assert!(
        out.stdout.contains("WARNING  claude ") && out.stdout.contains("is not a release memory-save was tested with"),
        "{out:#?}"
    );
    assert_eq!(out.code, Some(0), "{out:#?}");

    let out = env.cmd(&["doctor"]).var("MEMORY_SAVE_CLAUDE", "/nonexistent/claude").status(3).run();
    assert!(out.stdout.contains("PROBLEM  claude not found") || out.stdout.contains("does not answer"), "{out:#?}");
}

#[test]
fn status_and_doctor_say_where_the_hooks_are_and_find_doubles() {
    let env = Env::new();
    let hooks_line = |env: &Env| {
        let out = env.cmd(&["status"]).run().ok();
        out.stdout.lines().find(|l| l.trim_start().starts_with("hooks")).unwrap_or_default().to_string()
    };
    assert!(hooks_line(&env).contains("not registered"), "{}", hooks_line(&env));
    env.cmd(&["install", "--project"]).run().ok();
    let line = hooks_line(&env);
    assert!(line.contains("project-local settings") && line.contains("settings.local.json"), "{line}");
    // Only in the project: doctor is content, and never advises a second install.
    let out = env.cmd(&["doctor"]).run();
    assert!(out.stdout.contains("all 13 hook commands registered"), "{out:#?}");
    assert!(!out.stdout.contains("run memory-save install"), "{out:#?}");

    env.cmd(&["install"]).run().ok();
    assert!(hooks_line(&env).contains("registered more than once"), "{}", hooks_line(&env));
    let out = env.cmd(&["doctor"]).status(3).run();
    assert!(
        out.stdout.contains("registered twice") && out.stdout.contains("memory-save uninstall --project"),
        "{out:#?}"
    );
    env.cmd(&["uninstall", "--project"]).run().ok();

    // The plugin enabled as well as the settings hooks.
    let settings = env.home.join(".claude/settings.json");
    let mut value: serde_json::Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    value["enabledPlugins"] = serde_json::json!({"memory-save@memory-save": true});
    fs::write(&settings, value.to_string()).unwrap();
    let out = env.cmd(&["doctor"]).run();
    assert!(out.stdout.contains("registered twice: the plugin memory-save@memory-save"), "{out:#?}");
    env.cmd(&["uninstall"]).run().ok();
    let line = hooks_line(&env);
    assert!(line.contains("plugin memory-save@memory-save") && !line.contains("more than once"), "{line}");
    // The plugin alone: Claude Code's own auto memory is named still, with a
    // fix that registers no hooks beside the plugin's.
    let out = env.cmd(&["doctor"]).status(3).run();
    assert!(out.stdout.contains("auto memory is on"), "{out:#?}");
    assert!(
        out.stdout.contains("\"autoMemoryEnabled\": false") && !out.stdout.contains("install --disable"),
        "{out:#?}"
    );
}

/// A command of ours registered under another event runs at the wrong
/// time: doctor counts it missing where it belongs.
#[test]
fn doctor_finds_a_hook_registered_under_the_wrong_event() {
    let env = Env::new();
    env.cmd(&["install"]).run().ok();
    let settings = env.home.join(".claude/settings.json");
    let mut value: Value = serde_json::from_str(&fs::read_to_string(&settings).unwrap()).unwrap();
    let stop = value["hooks"]["Stop"].take();
    value["hooks"]["PostToolUse"].as_array_mut().unwrap().extend(stop.as_array().unwrap().iter().cloned());
    value["hooks"].as_object_mut().unwrap().remove("Stop");
    fs::write(&settings, value.to_string()).unwrap();
    let out = env.cmd(&["doctor"]).status(3).run();
    assert!(out.stdout.contains("lacks: hook stop (under Stop)"), "{out:#?}");
}

#[test]
fn doctor_flags_a_broken_state_file_and_an_open_folder() {
    let env = Env::new();
    env.cmd(&["install"]).run().ok();
    env.saved_turn(SID, 1);
    fs::write(env.sessions_dir().join("broken.json"), "{not json").unwrap();
    // A state file that is only its lock so far holds no state to read.
    fs::write(env.sessions_dir().join("locked-only.json"), "").unwrap();
    let out = env.cmd(&["doctor"]).status(3).run();
    assert!(out.stdout.contains("unreadable session state") && out.stdout.contains("broken.json"), "{out:#?}");
    assert!(!out.stdout.contains("locked-only.json"), "{out:#?}");
    fs::remove_file(env.sessions_dir().join("broken.json")).unwrap();
    let state = env.mem.join("state/memory-save");
    fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let out = env.cmd(&["doctor"]).status(3).run();
    assert!(out.stdout.contains("readable by others") && out.stdout.contains("chmod 700"), "{out:#?}");
}

#[test]
fn every_save_is_in_the_history_and_undo_restores_the_state_before_it() {
    let env = Env::new();
    env.script_reply(1, &adds("- First fact."));
    env.script_reply(
        2,
        &reply(json!([{"op":"remove","line":"- First fact."}, add(ARCH, "- Second fact.")]), json!([])),
    );
    env.saved_turn(SID, 1);
    let after_first = env.memory().unwrap();
    env.saved_turn(SID, 2);
    let after_second = env.memory().unwrap();
    assert!(!after_second.contains("First fact."));

    let list = env.cmd(&["history"]).in_dir(&env.proj).run().ok().stdout;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    assert!(
        lines[0].starts_with("#2") && lines[0].contains("1 added, 1 removed") && lines[0].contains("[MEMORY.md]"),
        "{list}"
    );
    assert!(lines[1].starts_with("#1") && lines[1].contains("1 added"), "{list}");

    // What the fork removed comes back.
    // Change #2 as a diff.
    let show = env.cmd(&["history", "show", "2"]).in_dir(&env.proj).run().ok().stdout;
    assert!(show.contains("--- a/MEMORY.md") && show.contains("+++ b/MEMORY.md"), "{show}");
    assert!(show.contains("\n-- First fact.\n") && show.contains("\n+- Second fact.\n"), "{show}");
    let json: Value =
        serde_json::from_str(&env.cmd(&["history", "--json"]).in_dir(&env.proj).run().ok().stdout).unwrap();
    assert_eq!((json[0]["number"].as_u64(), json[1]["number"].as_u64()), (Some(2), Some(1)), "{json}");
    assert_eq!(json[0]["added"], json!(["- Second fact."]));
    let json: Value =
        serde_json::from_str(&env.cmd(&["history", "show", "2", "--json"]).in_dir(&env.proj).run().ok().stdout)
            .unwrap();
    assert!(json["diff"]["MEMORY.md"].as_str().unwrap().contains("+- Second fact."), "{json}");

    // What the fork removed comes back; undo says what it changes.
    let out = env.cmd(&["undo"]).in_dir(&env.proj).run().ok();
    assert!(out.stdout.contains("+- First fact.") && out.stdout.contains("-- Second fact."), "{out:#?}");
    assert!(out.stdout.contains("undo of #2: memory-save: MEMORY.md: 1 added, 1 removed"), "{out:#?}");
    assert_eq!(env.memory().unwrap(), after_first);
    // The undo is itself recorded: a second undo redoes, and labels do not nest.
    let out = env.cmd(&["undo"]).in_dir(&env.proj).run().ok();
    assert!(out.stdout.contains("redo of #3: memory-save: MEMORY.md: 1 added, 1 removed"), "{out:#?}");
    assert_eq!(env.memory().unwrap(), after_second);
    let list = env.cmd(&["history"]).in_dir(&env.proj).run().ok().stdout;
    assert!(!list.contains("undo of #3: undo"), "{list}");

    // Back to before #1, every later change with it: one entry.
    let out = env.cmd(&["undo", "1"]).in_dir(&env.proj).run().ok();
    assert!(out.stdout.contains("undo of #1-#4"), "{out:#?}");
    assert_eq!(env.memory(), None, "there was no MEMORY.md before #1");
    env.cmd(&["undo"]).in_dir(&env.proj).run().ok();
    assert_eq!(env.memory().unwrap(), after_second);
    let out = env.cmd(&["undo", "99"]).in_dir(&env.proj).status(1).run();
    assert!(out.stderr.contains("no history entry #99"), "{out:#?}");
}

#[test]
fn undo_keeps_a_hand_edit_unless_forced() {
    let env = Env::new();
    env.script_reply(1, &reply(json!([add(ARCH, "- First fact.")]), json!([])));
    env.saved_turn(SID, 1);
    let edited = env.memory().unwrap().replace("- First fact.", "- First fact, corrected by hand.");
    env.write_memory(&edited);
    let out = env.cmd(&["undo"]).in_dir(&env.proj).status(1).run();
    assert!(out.stderr.contains("MEMORY.md changed after the last recorded change (#1)"), "{}", out.stderr);
    assert!(out.stderr.contains("memory-save undo --force"), "{}", out.stderr);
    assert_eq!(env.memory().unwrap(), edited, "nothing changed");
    env.cmd(&["undo", "--force"]).in_dir(&env.proj).run().ok();
    assert_eq!(env.memory(), None);
}

#[test]
fn undoing_the_first_save_removes_the_files_it_created() {
    let env = Env::new();
    env.script_reply(1, &reply(json!([add(ARCH, "- Fact.")]), json!([{"file":"notes.md","append":"- n"}])));
    env.saved_turn(SID, 1);
    assert!(env.memory().is_some() && env.memory_file("notes.md").is_some());
    env.cmd(&["undo"]).in_dir(&env.proj).run().ok();
    assert_eq!((env.memory(), env.memory_file("notes.md")), (None, None));
}

#[test]
fn undo_without_history_says_so() {
    let env = Env::new();
    let out = env.cmd(&["undo"]).in_dir(&env.proj).status(1).run();
    assert!(out.stderr.contains("nothing to undo"), "{out:#?}");
}

#[test]
fn a_repair_is_recorded_too() {
    let env = Env::new();
    env.write_memory("## Notes\n- loose\n");
    env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg("1").run().ok();
    let list = env.cmd(&["history"]).in_dir(&env.proj).run().ok().stdout;
    assert!(list.contains("put into the four sections"), "{list}");
    env.cmd(&["undo"]).in_dir(&env.proj).run().ok();
    assert_eq!(env.memory().unwrap(), "## Notes\n- loose\n");
}

fn assert_off(env: &Env, reason: &str) {
    env.write_memory("# proj\n\n## CRITICAL RULES\n- r\n\n## Architecture & Config Facts\n- a\n\n## Active Warnings\n- w\n\n## Topic Files\n- t\n");
    env.turn(SID);
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    let out = env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg("1").run().ok();
    out.assert_silent();
    let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
    assert!(status["off"].as_str().unwrap_or_default().contains(reason), "{status:#}");
    // The hooks asked for no save (state written under the lock a worker
    // would need), so no worker runs one.
    env.assert_no_save(SID);
}

#[test]
fn a_marker_file_turns_a_project_off() {
    let env = Env::new();
    fs::write(env.proj.join(".memory-save-off"), "").unwrap();
    assert_off(&env, ".memory-save-off");
}

#[test]
fn the_config_turns_a_project_off() {
    let env = Env::new();
    env.config("disabled_projects = [\"proj\"]\n");
    assert_off(&env, "disabled_projects");
}

#[test]
fn the_environment_turns_everything_off() {
    let env = Env::new().with_var("MEMORY_SAVE_DISABLE", "1");
    env.write_memory("# proj\n\n## CRITICAL RULES\n- r\n\n## Architecture & Config Facts\n- a\n\n## Active Warnings\n- w\n\n## Topic Files\n- t\n");
    env.turn(SID);
    env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg("1").run().ok().assert_silent();
    assert!(env.state_files().is_empty(), "{:?}", env.state_files());
    let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
    assert_eq!(status["off"], "off: MEMORY_SAVE_DISABLE=1");
}

#[test]
fn the_config_sets_the_forks_model_effort_and_time_bound() {
    let env = Env::new();
    env.config("model = \"claude-haiku-9\"\neffort = \"low\"\nfork_timeout_seconds = 1\n");
    env.script_sleep(1, 30);
    // MEMORY_SAVE_FORK_TIMEOUT (the bench sets 60) wins over the file: the
    // hooks that start the worker run without it.
    let timeout = "MEMORY_SAVE_FORK_TIMEOUT";
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").unset(timeout).run().ok();
    env.hook("stop").fixture("Stop.json").unset(timeout).run().ok();
    let call = env.call(1);
    assert_eq!(call.flag("--model"), Some("claude-haiku-9"));
    assert_eq!(call.flag("--effort"), Some("low"));
    env.wait_saves(SID, 1);
    assert_eq!(env.status(SID), "error: fork timed out after 1s");
    // Killed, it reported no usage, and the API may have billed all of it:
    // the budget counts its estimate, never nothing.
    let saves = std::fs::read_to_string(env.mem.join("state/memory-save/saves.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(saves.lines().last().unwrap()).unwrap();
    assert!(record["counted_usd"].as_f64().unwrap() > 0.0, "{record}");
    assert_eq!(record["counted_usd"], record["estimate_usd"], "{record}");
}

/// A file that is not TOML cannot say which budget or review gate it
/// meant: saves stop (no fork runs), every session's start says so, and the
/// memory still loads.
#[test]
fn a_config_that_is_not_toml_stops_saves_and_every_start_says_so() {
    let env = Env::new();
    env.script_reply(1, &reply(json!([add(ARCH, "- First fact.")]), json!([])));
    env.saved_turn(SID, 1);
    env.config("save_every = [\n");
    env.turn(SID);
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 2);
    assert_eq!(env.status(SID), "paused: memory-save.toml has a problem (memory-save doctor)");
    let line = env.cmd(&["statusline"]).fixture("statusLine.json").session(SID).run().ok().stdout;
    assert_eq!(line.trim(), "memory-save: paused: memory-save.toml has a problem (memory-save doctor)");
    assert_eq!(env.call_count(), 1, "a fork ran with a broken config");
    let start = env.hook("session-start").fixture("SessionStart-startup.json").run().ok().json();
    let message = start["systemMessage"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("memory-save: saves are stopped: ") && message.contains("is not valid TOML"),
        "{start:#}"
    );
    assert!(start["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("- First fact."));
    let out = env.cmd(&["doctor"]).run();
    assert!(out.stdout.contains("is not valid TOML; saves stop until it is fixed"), "{out:#?}");
    // Fixed: the next turn saves.
    env.config("");
    env.turn(SID);
    env.wait_saves(SID, 3);
    // doctor asked claude its version (call 2); then one fork.
    assert_eq!(env.call_count(), 3);
    assert!(env.call(3).stdin.starts_with("[memory-save]"), "{:?}", env.call(3).args);
}

#[test]
fn an_append_is_undone_and_redone_without_copying_the_topic_file() {
    let env = Env::new();
    let old_history: String = (0..2_000).map(|i| format!("- old event {i}\n")).collect();
    env.write_memory(&template_with("proj", &["- Fact."]).replacen(
        "## Topic Files\n- None yet.\n",
        "## Topic Files\n- history.md\n",
        1,
    ));
    fs::write(env.memory_dir("proj").join("history.md"), &old_history).unwrap();
    env.script_reply(1, &reply(json!([]), json!([{"file":"history.md","append":"- new event"}])));
    env.saved_turn(SID, 1);
    let appended = env.memory_file("history.md").unwrap();
    assert!(appended.starts_with(&old_history) && appended.ends_with("- new event\n"));

    // The entry records where the file ended, not its 30 KB of text.
    let entries: Vec<_> = fs::read_dir(env.memory_dir("proj").join(".history")).unwrap().flatten().collect();
    assert_eq!(entries.len(), 1);
    let size = entries[0].metadata().unwrap().len();
    assert!(size < 1_000, "the history entry holds {size} bytes");

    env.cmd(&["undo"]).in_dir(&env.proj).run().ok();
    assert_eq!(env.memory_file("history.md").unwrap(), old_history);
    env.cmd(&["undo"]).in_dir(&env.proj).run().ok();
    assert_eq!(env.memory_file("history.md").unwrap(), appended, "a second undo redoes the append");
}

#[test]
fn undo_refuses_a_topic_file_cut_shorter_by_hand() {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Fact."]));
    fs::write(env.memory_dir("proj").join("history.md"), "- one\n- two\n").unwrap();
    env.script_reply(
        1,
        &reply(json!([add(ARCH, "- Second fact.")]), json!([{"file":"history.md","append":"- three"}])),
    );
    env.saved_turn(SID, 1);
    fs::write(env.memory_dir("proj").join("history.md"), "- one\n").unwrap();
    let memory = env.memory().unwrap();
    assert!(memory.contains("- Second fact."));
    let out = env.cmd(&["undo"]).in_dir(&env.proj).status(1).run();
    assert!(out.stderr.contains("was edited since; put it back by hand"), "{out:#?}");
    assert_eq!(env.memory_file("history.md").unwrap(), "- one\n", "nothing changed");
    assert_eq!(
        env.memory().as_deref(),
        Some(memory.as_str()),
        "MEMORY.md, undone first, is put back as the save left it"
    );
}

#[test]
fn status_puts_each_line_of_a_config_error_on_its_own_line() {
    let env = Env::new();
    env.config("save_every = [\n");
    let out = env.cmd(&["status"]).run().ok();
    let lines: Vec<&str> = out.stdout.lines().collect();
    let at = lines.iter().position(|l| l.starts_with("  config ")).unwrap_or_else(|| panic!("{}", out.stdout));
    assert!(lines[at].contains("memory-save.toml"), "{}", out.stdout);
    assert!(lines.len() > at + 1 && lines[at + 1].starts_with("            "), "continued, indented: {}", out.stdout);
}

/// Colour on a terminal only: `script` (util-linux) gives the command a
/// pseudo-terminal; piped, or with `NO_COLOR` or `CLICOLOR=0`, none.
#[cfg(target_os = "linux")]
#[test]
fn colour_on_a_terminal_and_never_when_piped_or_refused() {
    let env = Env::new();
    env.script_reply(1, &reply(json!([add(ARCH, "- First fact.")]), json!([])));
    env.saved_turn(SID, 1);
    let exe = env!("CARGO_BIN_EXE_memory-save");
    for command in ["history", "doctor", "status", "history show 1"] {
        let on_terminal = |vars: &[(&str, &str)]| {
            let mut cmd = std::process::Command::new("script");
            cmd.args(["-qec", &format!("{exe} {command}"), "/dev/null"]).current_dir(&env.proj);
            cmd.env("HOME", &env.home).env("MEMORY_SAVE_HOME", &env.mem).env_remove("NO_COLOR").env_remove("CLICOLOR");
            for (k, v) in vars {
                cmd.env(k, v);
            }
            String::from_utf8_lossy(&cmd.output().expect("script (util-linux) runs").stdout).into_owned()
        };
        assert!(on_terminal(&[]).contains("\x1b["), "{command} on a terminal: {:?}", on_terminal(&[]));
        assert!(!on_terminal(&[("NO_COLOR", "1")]).contains("\x1b["), "{command} with NO_COLOR");
        assert!(!on_terminal(&[("CLICOLOR", "0")]).contains("\x1b["), "{command} with CLICOLOR=0");
        let args: Vec<&str> = command.split(' ').collect();
        assert!(!env.cmd(&args).in_dir(&env.proj).run().stdout.contains('\x1b'), "{command} piped");
    }
}

#[test]
fn doctor_speaks_json_for_scripts() {
    let env = Env::new();
    let out = env.cmd(&["doctor", "--json"]).status(3).run();
    let report: Value = serde_json::from_str(&out.stdout).expect("one JSON document");
    assert!(report["problems"].as_u64() >= Some(1), "{report}");
    let findings = report["findings"].as_array().unwrap();
    assert!(findings.iter().any(|f| f["level"] == "problem" && f["fix"].as_str().unwrap().contains("install")));
    assert!(findings.iter().any(|f| f["level"] == "ok"), "{report}");
}

/// Each finding of doctor is one line and its fix one more: a folder name
/// holding a newline cannot print a finding of its own.
#[test]
fn a_newline_in_a_path_never_forges_a_doctor_finding() {
    let env = Env::new();
    env.cmd(&["install"]).run().ok();
    let repo = env.git_init("x\nPROBLEM  forged");
    fs::create_dir_all(repo.join(".claude")).unwrap();
    fs::write(repo.join(".claude/settings.json"), json!({"autoMemoryEnabled": true}).to_string()).unwrap();
    let out = env.cmd(&["doctor"]).in_dir(&repo).run();
    assert!(out.stdout.contains("auto memory is on"), "{out:#?}");
    assert!(!out.stdout.lines().any(|line| line.starts_with("PROBLEM  forged")), "{}", out.stdout);
}

/// A project's committed `.claude/settings.json` that turns Claude Code's
/// auto memory on outranks the user's settings: doctor's fix for a
/// plugin-only install names the file that decides, so following it to the
/// letter turns auto memory off.
#[test]
fn doctor_auto_memory_fix_for_the_plugin_names_the_file_that_decides() {
    let env = Env::new();
    let user = env.home.join(".claude/settings.json");
    fs::create_dir_all(user.parent().unwrap()).unwrap();
    fs::write(&user, json!({"enabledPlugins": {"memory-save@memory-save": true}}).to_string()).unwrap();
    fs::create_dir_all(env.proj.join(".claude")).unwrap();
    fs::write(env.proj.join(".claude/settings.json"), json!({"autoMemoryEnabled": true}).to_string()).unwrap();
    let out = env.cmd(&["doctor"]).in_dir(&env.proj).status(3).run();
    assert!(out.stdout.contains("auto memory is on"), "{out:#?}");
    // Follow the advice to the letter: the team's committed file stays as it is.
    const FIX: &str = "set \"autoMemoryEnabled\": false in ";
    let named = out.stdout.lines().find_map(|l| l.split_once(FIX)).map(|(_, path)| path.trim().to_string());
    let named = std::path::PathBuf::from(named.unwrap_or_else(|| panic!("no fix by hand: {out:#?}")));
    assert_eq!(named, env.proj.join(".claude/settings.local.json"), "{out:#?}");
    fs::write(&named, json!({"autoMemoryEnabled": false}).to_string()).unwrap();
    let again = env.cmd(&["doctor"]).in_dir(&env.proj).status(3).run();
    assert!(
        again.stdout.contains("auto memory is off"),
        "the fix was followed and auto memory is still on: {again:#?}"
    );

    // Hooks in the user settings: an install there could not outrank the
    // team's file either, so the fix is the same hand edit.
    let env = Env::new();
    env.cmd(&["install"]).run().ok();
    fs::create_dir_all(env.proj.join(".claude")).unwrap();
    fs::write(env.proj.join(".claude/settings.json"), json!({"autoMemoryEnabled": true}).to_string()).unwrap();
    let out = env.cmd(&["doctor"]).in_dir(&env.proj).run();
    let local = env.proj.join(".claude/settings.local.json");
    assert!(out.stdout.contains(&format!("{FIX}{}", local.display())), "{out:#?}");
    assert!(!out.stdout.contains("--disable-auto-memory"), "{out:#?}");
    // install's own note gives the same fix.
    let out = env.cmd(&["install"]).in_dir(&env.proj).run().ok();
    assert!(out.stdout.contains(&format!("{FIX}{}", local.display())), "{out:#?}");
    assert!(!out.stdout.contains("--disable-auto-memory"), "{out:#?}");
}

/// The kinds of file one ordinary use leaves (an install, saves with a
/// topic file and a guard that fires, review on, a sync remote, a
/// compaction, the session's end): exactly the list docs/design.md §6 gives.
#[test]
fn one_ordinary_use_leaves_the_kinds_of_file_design_lists() {
    let env = Env::new();
    env.cmd(&["install"]).run().ok();
    env.config("review = \"rules\"\n");
    let guard = json!({"op": "add", "section": "CRITICAL RULES", "text": "- Never run make ship by hand.",
        "guard": {"tool": "Bash", "match": "make ship"}});
    let topic = json!([{"file": "history.md", "append": "- x"}]);
    env.script_reply(1, &reply(json!([guard, add(ARCH, "- Uses cargo.")]), topic));
    env.saved_turn(SID, 1);
    env.hook("pre-tool-use")
        .fixture("PreToolUse-bash.json")
        .set("tool_input", json!({"command": "make ship"}))
        .run()
        .ok();
    let remote = env.bare_remote("memories.git");
    env.cmd(&["sync", "--init", remote.to_str().unwrap()]).in_dir(&env.proj).run().ok();
    env.hook("pre-compact").fixture("PreCompact-manual.json").session(SID).run().ok();
    env.script_reply(2, &adds("- After the compaction."));
    env.saved_turn(SID, 2);
    env.hook("session-end").fixture("SessionEnd-prompt_input_exit.json").session(SID).run().ok();

    let mut kinds = std::collections::BTreeSet::new();
    let mut stack = vec![env.mem.clone()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.strip_prefix(&env.mem).unwrap().to_string_lossy().into_owned();
            if path.is_dir() && name != "memory/.git" {
                stack.push(path);
                continue;
            }
            let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
            let kind = name.replace(SID, "<id>").replace("/proj/", "/<folder>/").replace("/proj.", "/<folder>.");
            let kind = match kind.rsplit_once('/') {
                Some((dir, file)) if file.strip_suffix(".json").is_some_and(digits) => format!("{dir}/<n>.json"),
                Some((dir, file))
                    if file.strip_prefix("slot-").and_then(|f| f.strip_suffix(".lock")).is_some_and(digits) =>
                {
                    format!("{dir}/slot-<n>.lock")
                }
                _ => kind,
            };
            kinds.insert(kind);
        }
    }
    let design = fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/design.md")).unwrap();
    let listed = design.split_once("One ordinary use leaves").and_then(|(_, rest)| rest.split_once("```text\n"));
    let listed = listed.and_then(|(_, rest)| rest.split_once("```")).map(|(block, _)| block).unwrap_or_default();
    let found: String = kinds.iter().map(|k| format!("{k}\n")).collect();
    assert_eq!(found, listed, "docs/design.md §6's list of the kinds of file");
}
