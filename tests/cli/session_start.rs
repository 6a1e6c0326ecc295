//! Loading the memory into the context (docs/design.md §2), split into parts, with the
//! repair of a file that is not in the template (docs/design.md §5).

use crate::support::*;

fn start(env: &Env, part: usize) -> Output {
    env.hook("session-start").arg("--part").arg(&part.to_string()).fixture("SessionStart-startup.json").run().ok()
}

fn context(out: &Output) -> String {
    let json = out.json();
    assert_eq!(json["hookSpecificOutput"]["hookEventName"], "SessionStart", "{json}");
    json["hookSpecificOutput"]["additionalContext"].as_str().expect("additionalContext").to_string()
}

#[test]
fn no_memory_no_output() {
    let env = Env::new();
    start(&env, 1).assert_silent();
    assert_eq!(env.memory_tree(), Vec::<String>::new());
}

#[test]
fn the_memory_is_loaded_in_one_part() {
    let env = Env::new();
    let memory = template_with("proj", &["- Deploys go through `make ship`."]);
    env.write_memory(&memory);
    for fixture in [
        "SessionStart-startup.json",
        "SessionStart-resume.json",
        "SessionStart-clear.json",
        "SessionStart-compact.json",
    ] {
        let out = env.hook("session-start").arg("--part").arg("1").fixture(fixture).run().ok();
        let text = context(&out);
        assert!(text.starts_with("[PROJECT MEMORY: proj]\n"), "{fixture}: {text}");
        assert!(text.contains(memory.trim_end()), "{fixture}: the file is not whole in {text}");
        assert!(out.json().get("systemMessage").is_none(), "{out:#?}");
    }
    start(&env, 2).assert_silent();
    assert_eq!(env.memory().unwrap(), memory, "loading changed a file in the template");
}

#[test]
fn a_fork_gets_no_memory() {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Fact."]));
    env.hook("session-start").arg("--part").arg("1").fixture("SessionStart-fork.json").run().ok().assert_silent();
}

#[test]
fn a_large_file_is_split_into_labelled_parts() {
    let env = Env::new();
    let mut memory =
        "# proj\n\n## CRITICAL RULES\n- Never commit secrets.\n\n## Architecture & Config Facts\n".to_string();
    let tail = "\n## Active Warnings\n- The staging database is shared.\n\n## Topic Files\n- None yet.\n";
    let mut i = 0;
    while memory.chars().count() + tail.len() + 200 <= 49_000 {
        let head = format!("- Fact {i:04}: ");
        memory.push_str(&format!("{head}{}\n", "x".repeat(199 - head.len())));
        i += 1;
    }
    memory.push_str(tail);
    assert!((48_500..=49_000).contains(&memory.chars().count()));
    env.write_memory(&memory);

    let first = context(&start(&env, 1));
    let label = first.lines().next().unwrap().to_string();
    let total: usize = label
        .strip_prefix("[PROJECT MEMORY: proj · part 1 of ")
        .and_then(|rest| rest.strip_suffix(']'))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("part 1 label: {label:?}"));
    assert!((5..=6).contains(&total), "{total} parts");

    let mut parts = vec![first];
    for n in 2..=total {
        parts.push(context(&start(&env, n)));
    }
    for n in total + 1..=6 {
        start(&env, n).assert_silent();
    }
    for (i, part) in parts.iter().enumerate() {
        let n = i + 1;
        assert!(part.chars().count() <= 10_000, "part {n} has {} characters", part.chars().count());
        assert!(
            part.starts_with(&format!("[PROJECT MEMORY: proj · part {n} of {total}]\n")),
            "part {n}: {}",
            &part[..80]
        );
        if n > 1 {
            let heading = part.lines().nth(1).unwrap();
            assert!(heading.starts_with("## "), "part {n} does not restate its section: {heading:?}");
        }
    }
    let loaded: std::collections::HashSet<&str> = parts.iter().flat_map(|p| p.lines()).collect();
    for line in memory.lines().filter(|l| !l.is_empty()) {
        assert!(loaded.contains(line), "not loaded: {line:?}");
    }
}

#[test]
fn a_legacy_file_is_repaired_on_load() {
    let env = Env::new();
    let old = "Notes kept by hand.\n\n## Notes\n- Old note.\n\n## CRITICAL RULES\n- Never push to main.\n\n## Notes\n- Second old note.\n";
    env.write_memory(old);

    let out = start(&env, 1);
    let json = out.json();
    let message = json["systemMessage"].as_str().unwrap_or_default();
    assert!(message.contains("put into the four sections"), "{json}");
    assert_eq!(env.memory_file("MEMORY.pre-migration.md").as_deref(), Some(old));

    let memory = env.memory().unwrap();
    assert!(memory.starts_with("# proj\n"), "{memory}");
    let headings: Vec<&str> = memory.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        ["## CRITICAL RULES", "## Architecture & Config Facts", "## Active Warnings", "## Topic Files"]
    );
    for line in old.lines().filter(|l| !l.is_empty() && !l.starts_with("## ")) {
        assert!(memory.contains(line), "repair dropped {line:?}:\n{memory}");
    }
    assert!(memory.contains("### Unsorted: Notes"), "{memory}");
    assert_eq!(section_lines(&memory, "CRITICAL RULES"), ["- Never push to main."]);
    assert!(context(&out).contains(memory.trim_end()), "the context is not the repaired file");

    // Repaired once: the next load says nothing about it.
    let again = start(&env, 1);
    assert!(again.json().get("systemMessage").is_none(), "{again:#?}");
    assert_eq!(env.memory().unwrap(), memory);
}

/// The save a session's end starts finishes after the session is gone: the
/// next session of the project shows its report once, a new standing rule
/// with it.
#[test]
fn the_next_session_shows_the_last_sessions_final_save_once() {
    let env = Env::new();
    env.script_default(&reply(
        serde_json::json!([add("CRITICAL RULES", "- Never push to main."), add(ARCH, "- Deploys use make ship.")]),
        serde_json::json!([]),
    ));
    env.turn(SID);
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 1);
    let next = env.hook("session-start").arg("--part").arg("1").fixture("SessionStart-startup.json").session(SID_OTHER);
    let out = next.run().ok();
    let shown = out.json()["systemMessage"].as_str().unwrap_or_default().to_string();
    assert!(shown.contains("the last session's save") && shown.contains("2 added"), "{out:#?}");
    assert!(shown.contains("new standing rule for every session") && shown.contains("Never push to main"), "{shown}");
    let again =
        env.hook("session-start").arg("--part").arg("1").fixture("SessionStart-startup.json").session(SID_OTHER);
    let out = again.run().ok();
    assert!(out.json().get("systemMessage").is_none(), "shown once: {out:#?}");
}
