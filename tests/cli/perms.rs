//! Private files, and symlinks that are not followed out of our folders
//!.

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use crate::support::*;

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every folder and file under `dir`, with its mode.
fn modes(dir: &Path, out: &mut Vec<(String, u32, bool)>) {
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let is_dir = entry.file_type().unwrap().is_dir();
        out.push((path.display().to_string(), mode(&path), is_dir));
        if is_dir {
            modes(&path, out);
        }
    }
}

#[test]
fn memory_and_state_folders_are_0700_and_files_0600() {
    let env = Env::new();
    env.script_reply(1, &save_reply("- A fact.", "- An event."));
    env.saved_turn(SID, 1);
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    assert!(env.memory().is_some() && env.memory_file("history.md").is_some());

    let mut all = Vec::new();
    modes(&env.mem, &mut all);
    assert!(all.len() > 8, "{all:?}");
    let wrong: Vec<_> = all
        .iter()
        .filter(|(_, mode, is_dir)| *mode != if *is_dir { 0o700 } else { 0o600 })
        .map(|(path, mode, _)| format!("{path}: {mode:o}"))
        .collect();
    assert!(wrong.is_empty(), "not private: {wrong:#?}");
}

/// A file outside our folders that a planted link points at.
fn outside_file(env: &Env, text: &str) -> std::path::PathBuf {
    let path = env.root().join("outside.md");
    fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_symlink_planted_as_memory_md_is_not_followed() {
    let env = Env::new();
    let secret = template_with("proj", &["- A secret of another folder."]);
    let outside = outside_file(&env, &secret);
    fs::create_dir_all(env.memory_dir("proj")).unwrap();
    symlink(&outside, env.memory_path()).unwrap();

    // Not loaded into the context.
    let out = env.hook("session-start").fixture("SessionStart-startup.json").run().ok();
    assert!(!out.stdout.contains("secret"), "{out:#?}");
    // Not sent to the fork, not written through.
    env.script_reply(1, &adds("- A fact."));
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 0, "the fork ran with the linked file");
    assert_eq!(fs::read_to_string(&outside).unwrap(), secret);
    assert!(fs::symlink_metadata(env.memory_path()).unwrap().file_type().is_symlink());
    let link = env.memory_path();
    let status = env.status(SID);
    assert_eq!(
        status,
        format!("error: {} is a symlink; memory-save reads only real files: replace it with a file", link.display())
    );
    assert!(env.log().contains(&format!("{} is a symlink", link.display())), "log:\n{}", env.log());
    let out = env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    assert_eq!(
        out.json()["systemMessage"],
        format!("memory-save: MEMORY.md: not saved ({})", status.strip_prefix("error: ").unwrap())
    );
}

#[test]
fn a_symlink_planted_as_a_topic_file_is_not_followed() {
    let env = Env::new();
    let before = template_with("proj", &["- Kept."]);
    env.write_memory(&before);
    let outside = outside_file(&env, "# someone else's notes\n");
    let link = env.memory_dir("proj").join("history.md");
    symlink(&outside, &link).unwrap();
    env.script_reply(1, &save_reply("- A fact.", "- An event."));
    env.saved_turn(SID, 1);
    assert_eq!(fs::read_to_string(&outside).unwrap(), "# someone else's notes\n");
    assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    assert_eq!(env.memory().unwrap(), before, "MEMORY.md was written without its topic file");
    assert_eq!(
        env.status(SID),
        format!("error: {} is a symlink; memory-save reads only real files: replace it with a file", link.display())
    );
}

#[test]
fn a_symlink_planted_as_the_memory_folder_is_not_followed() {
    let env = Env::new();
    let outside = env.folder("outside-memory");
    let secret = template_with("proj", &["- A secret of another folder."]);
    fs::write(outside.join("MEMORY.md"), &secret).unwrap();
    fs::create_dir_all(env.mem.join("memory")).unwrap();
    symlink(&outside, env.memory_dir("proj")).unwrap();

    let out = env.hook("session-start").fixture("SessionStart-startup.json").run().ok();
    assert!(!out.stdout.contains("secret"), "{out:#?}");
    env.script_reply(1, &save_reply("- A fact.", "- An event."));
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 0, "the fork ran with the linked folder's file");
    let names: Vec<_> = fs::read_dir(&outside).unwrap().flatten().map(|e| e.file_name()).collect();
    assert_eq!(names, ["MEMORY.md"]);
    assert_eq!(fs::read_to_string(outside.join("MEMORY.md")).unwrap(), secret);
    let status = env.status(SID);
    assert!(status.starts_with("error: ") && status.contains("is a symlink"), "{status}");
}

/// `state/memory-save/<name>` is a link to a folder outside: no hook writes
/// anything through it, each says so in the log, and none starts a save.
fn state_folder_link(name: &str) {
    let env = Env::new();
    let state = env.mem.join("state/memory-save");
    fs::create_dir_all(&state).unwrap();
    let outside = env.folder("outside-state");
    symlink(&outside, state.join(name)).unwrap();
    env.write_memory(&template_with("proj", &["- Kept."]));

    for event in hook_events() {
        let event = event.as_str();
        let fixture = fixture_for(event);
        env.hook(event).fixture(fixture).session(SID).run().ok();
    }
    if name == "projects" {
        // The session state works; the save refuses the project's lock.
        env.wait_saves(SID, 1);
        let status = env.status(SID);
        assert!(status.starts_with("error: ") && status.contains("is a symlink"), "{status}");
    }
    // A worker started some other way refuses too.
    env.cmd(&["worker", "--session", SID]).run().ok();
    let out = env.cmd(&["statusline"]).fixture("statusLine.json").session(SID).run().ok();
    assert!(!out.stdout.contains("saving"), "{out:#?}");

    let planted: Vec<_> = fs::read_dir(&outside).unwrap().flatten().map(|e| e.path()).collect();
    assert!(planted.is_empty(), "written through the link: {planted:?}");
    let link = state.join(name);
    assert!(
        env.log().contains(&format!("{} is a symlink", link.display())),
        "no log line about the link:\n{}",
        env.log()
    );
    assert_eq!(env.call_count(), 0);
}

#[test]
fn a_symlink_planted_as_the_sessions_folder_is_not_followed() {
    state_folder_link("sessions");
}

#[test]
fn a_symlink_planted_as_the_projects_state_folder_is_not_followed() {
    state_folder_link("projects");
}
