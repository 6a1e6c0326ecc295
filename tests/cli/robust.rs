//! Hooks never break the session: whatever arrives, exit 0 and write nothing
//! they should not (SPEC 3).

use serde_json::json;

use crate::support::*;

const EVENTS: [&str; 5] = ["session-start", "user-prompt-submit", "post-tool-use", "stop", "session-end"];

#[test]
fn garbage_input_exits_zero_and_writes_nothing() {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Fact."]));
    let before = env.memory_tree();
    for event in EVENTS {
        for stdin in ["", "not json", "[1,2]", "{\"session_id\": 5}", "{"] {
            let out = env.hook(event).stdin(stdin).run();
            assert_eq!(out.code, Some(0), "{event} with {stdin:?}: {out:#?}");
            out.assert_silent();
        }
    }
    assert_eq!(env.memory_tree(), before);
    assert_eq!(env.call_count(), 0);
}

#[test]
fn a_session_id_with_a_path_is_refused() {
    let env = Env::new();
    for event in EVENTS {
        for id in ["../../escape", "../sessions/x", "a/b", ""] {
            let fixture = match event {
                "session-start" => "SessionStart-startup.json",
                "user-prompt-submit" => "UserPromptSubmit.json",
                "post-tool-use" => "PostToolUse-main.json",
                "stop" => "Stop.json",
                _ => "SessionEnd-other.json",
            };
            let out = env.hook(event).fixture(fixture).set("session_id", json!(id)).run();
            assert_eq!(out.code, Some(0), "{event} with {id:?}: {out:#?}");
            out.assert_silent();
        }
    }
    assert_eq!(env.memory_tree(), Vec::<String>::new());
    assert!(!env.mem.join("escape.json").exists() && !env.mem.join("state/escape.json").exists());
    let sessions: Vec<_> = std::fs::read_dir(env.sessions_dir()).map(|d| d.flatten().collect()).unwrap_or_default();
    assert!(sessions.is_empty(), "state written: {sessions:?}");
    assert_eq!(env.call_count(), 0);
}

#[test]
fn an_unusable_state_folder_still_exits_zero() {
    let env = Env::new();
    let blocker = env.root().join("a-file");
    std::fs::write(&blocker, "not a folder").unwrap();
    let env = env.with_var("MEMORY_SAVE_HOME", blocker.to_str().unwrap());
    for event in EVENTS {
        let out = env.hook(event).fixture("UserPromptSubmit.json").run();
        assert_eq!(out.code, Some(0), "{event}: {out:#?}");
    }
}
