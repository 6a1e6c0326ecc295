//! Which folder a save writes to (SPEC 2).

use crate::support::*;

#[test]
fn a_worktree_saves_into_its_primary_repository() {
    let env = Env::new();
    let repo = env.git_init("myrepo");
    env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
    env.git(&repo, &["worktree", "add", "-q", "../wt-feature"]);
    let worktree = env.root().join("wt-feature");
    assert!(worktree.join(".git").is_file());

    env.script_default(&adds("- Saved from the worktree."));
    env.turn_in(SID, &worktree.join(".")); // any path inside it
    env.wait_saves(SID, 1);

    assert!(env.memory_of("myrepo").expect("memory/myrepo/MEMORY.md").contains("- Saved from the worktree."));
    assert_eq!(env.memory_of("wt-feature"), None);
}

#[test]
fn a_subfolder_of_a_repository_saves_into_the_repository() {
    let env = Env::new();
    let sub = env.proj.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    env.script_default(&adds("- Saved from a subfolder."));
    env.turn_in(SID, &sub);
    env.wait_saves(SID, 1);
    assert!(env.memory().expect("memory/proj/MEMORY.md").contains("- Saved from a subfolder."));
}

#[test]
fn a_plain_folder_saves_under_its_own_name() {
    let env = Env::new();
    let plain = env.folder("plainfolder");
    env.script_default(&adds("- Saved from a plain folder."));
    env.turn_in(SID, &plain);
    env.wait_saves(SID, 1);
    assert!(
        env.memory_of("plainfolder").expect("memory/plainfolder/MEMORY.md").contains("- Saved from a plain folder.")
    );
}

#[test]
fn a_folder_name_that_is_not_safe_is_not_saved() {
    let env = Env::new();
    let bad = env.folder("bad name");
    env.script_default(&adds("- Must not be written."));
    env.turn_in(SID, &bad);
    env.wait_saves(SID, 1);
    let status = env.status(SID);
    assert!(status.starts_with("error: "), "status: {status:?}");
    assert!(status.contains("bad name"), "status: {status:?}");
    assert_eq!(env.memory_tree(), Vec::<String>::new());
    assert_eq!(env.call_count(), 0, "the fork ran for an unnamed project");

    // Loading from there says nothing either.
    let out = env.hook("session-start").fixture("SessionStart-startup.json").cwd(&bad).run();
    assert_eq!(out.code, Some(0));
    out.assert_silent();
}
