//! Which folder a save writes to (docs/design.md §7).

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
    env.saved_turn_in(SID, &sub, 1);
    assert!(env.memory().expect("memory/proj/MEMORY.md").contains("- Saved from a subfolder."));
}

#[test]
fn a_plain_folder_saves_under_its_own_name() {
    let env = Env::new();
    let plain = env.folder("plainfolder");
    env.script_default(&adds("- Saved from a plain folder."));
    env.saved_turn_in(SID, &plain, 1);
    assert!(
        env.memory_of("plainfolder").expect("memory/plainfolder/MEMORY.md").contains("- Saved from a plain folder.")
    );
}

#[test]
fn folder_names_in_any_script_and_with_spaces_work() {
    let env = Env::new();
    for (n, name) in ["çalışma", "日本語", "with space", "Ünïcödé"].into_iter().enumerate() {
        let dir = env.git_init(name);
        let session = format!("script-{n}");
        env.script_reply(n + 1, &adds(&format!("- Saved in {name}.")));
        env.saved_turn_in(&session, &dir, 1);
        let memory = env.memory_of(name).unwrap_or_else(|| panic!("memory/{name}/MEMORY.md: {}", env.status(&session)));
        assert!(
            memory.starts_with(&format!("# {name}\n")) && memory.contains(&format!("- Saved in {name}.")),
            "{memory}"
        );
        let out = env.hook("session-start").fixture("SessionStart-startup.json").cwd(&dir).run().ok();
        assert!(out.stdout.contains(&format!("[PROJECT MEMORY: {name}]")), "{out:#?}");
    }
}

#[test]
fn a_folder_name_that_cannot_name_a_memory_is_not_saved() {
    let env = Env::new();
    let bad = env.folder("bad\u{1b}name");
    env.script_default(&adds("- Must not be written."));
    env.saved_turn_in(SID, &bad, 1);
    let status = env.status(SID);
    assert!(
        status.starts_with("error: ") && status.contains("control, bidirectional or invisible character"),
        "status: {status:?}"
    );
    assert_eq!(env.memory_tree(), Vec::<String>::new());
    assert_eq!(env.call_count(), 0, "the fork ran for an unnamed project");
    let out = env.hook("session-start").fixture("SessionStart-startup.json").cwd(&bad).status(0).run();
    out.assert_silent();
}

/// A folder's state file is `<name>.json`, a team working
/// tree's `<name>.team-<tag>.json`: a repository whose name ends so takes
/// `<name>-<hash>`, so no two folders ever share a state file.
#[test]
fn a_name_that_another_folders_state_files_use_takes_a_name_of_its_own() {
    let env = Env::new();
    for (n, name) in ["app.own", "app.review", "proj.team-0123abcd", "app.v2"].into_iter().enumerate() {
        let dir = env.git_init(name);
        let session = format!("named-{n}");
        env.script_reply(n + 1, &adds(&format!("- Saved in {name}.")));
        env.saved_turn_in(&session, &dir, 1);
        let folder = env.memory_tree().into_iter().find(|f| f.starts_with(name) && !f.contains('/')).unwrap();
        let hashed = folder.len() == name.len() + 9 && folder.as_bytes()[name.len()] == b'-';
        assert_eq!(hashed, name == "proj.team-0123abcd", "{name} saved into {folder}");
        assert!(env.memory_of(&folder).unwrap().contains(&format!("- Saved in {name}.")));
    }
}

#[test]
fn two_repositories_with_one_name_never_share_a_memory() {
    let env = Env::new();
    let a = env.root().join("a/app");
    let b = env.root().join("b/app");
    for dir in [&a, &b] {
        std::fs::create_dir_all(dir).unwrap();
        env.git(dir, &["init", "-q"]);
    }
    env.git(&a, &["remote", "add", "origin", "git@github.com:client-a/app.git"]);
    env.script_reply(1, &adds("- Client A's rule."));
    env.script_reply(2, &adds("- Client B's rule."));
    env.saved_turn_in("sess-a", &a, 1);
    env.saved_turn_in("sess-b", &b, 1);

    let record = std::fs::read_to_string(env.memory_dir("app").join(".identity")).unwrap();
    let record: serde_json::Value = serde_json::from_str(&record).unwrap();
    assert_eq!(record["identity"], "github.com/client-a/app");
    let folders: Vec<String> = env.memory_tree().into_iter().filter(|f| !f.contains('/')).collect();
    assert_eq!(folders.len(), 2, "{folders:?}");
    let b_folder = folders.iter().find(|f| f.as_str() != "app").unwrap().clone();
    assert!(b_folder.starts_with("app-") && b_folder.len() == "app-".len() + 8, "{b_folder}");
    assert!(env.memory_of("app").unwrap().contains("Client A") && !env.memory_of("app").unwrap().contains("Client B"));
    assert!(env.memory_of(&b_folder).unwrap().contains("Client B"));

    // B's sessions load B's memory, never A's.
    let out = env.hook("session-start").fixture("SessionStart-startup.json").session("sess-b").cwd(&b).run().ok();
    assert!(out.stdout.contains("Client B") && !out.stdout.contains("Client A"), "{out:#?}");
    // status says which folder and why.
    let status = env.cmd(&["status"]).in_dir(&b).run().ok().stdout;
    assert!(status.contains(&format!("path:{}", b.canonicalize().unwrap().display())), "{status}");
    assert!(status.contains("app belongs to github.com/client-a/app"), "{status}");
    // disabled_projects takes an identity.
    env.config("disabled_projects = [\"github.com/client-a/app\"]\n");
    let status = env.cmd(&["status"]).in_dir(&a).run().ok().stdout;
    assert!(status.contains("off: disabled_projects"), "{status}");
}

#[test]
fn clones_over_ssh_and_https_and_worktrees_share_one_memory_and_credentials_are_never_recorded() {
    let env = Env::new();
    let ssh = env.git_init("app");
    env.git(&ssh, &["remote", "add", "origin", "git@github.com:me/app.git"]);
    env.shared_first_commit(&ssh);
    let https = env.root().join("elsewhere/app");
    std::fs::create_dir_all(&https).unwrap();
    env.git(&https, &["init", "-q"]);
    env.git(&https, &["remote", "add", "origin", "https://me:hunter2-token@github.com/me/app"]);
    env.shared_first_commit(&https);
    env.script_reply(1, &adds("- One."));
    env.script_reply(2, &adds("- Two."));
    env.saved_turn_in("s1", &ssh, 1);
    env.saved_turn_in("s2", &https, 1);
    let memory = env.memory_of("app").unwrap();
    assert!(memory.contains("- One.") && memory.contains("- Two."), "{memory}");
    for file in env.memory_tree() {
        let path = env.mem.join("memory").join(&file);
        if path.is_file() {
            assert!(!std::fs::read_to_string(&path).unwrap_or_default().contains("hunter2"), "{file}");
        }
    }
    let saves = std::fs::read_to_string(env.mem.join("state/memory-save/saves.jsonl")).unwrap();
    assert!(!saves.contains("hunter2"));
}

#[test]
fn an_older_folder_with_no_record_stays_with_the_first_repository_that_uses_it() {
    let env = Env::new();
    env.write_memory(&template_with("proj", &["- Written before identities."]));
    let out = env.hook("session-start").fixture("SessionStart-startup.json").run().ok();
    assert!(out.stdout.contains("- Written before identities."));
    let record = std::fs::read_to_string(env.memory_dir("proj").join(".identity")).unwrap();
    assert!(record.contains(&format!("path:{}", env.proj.canonicalize().unwrap().display())), "{record}");
    // Also one whose name ends like another folder's state files: it is
    // the user's memory, kept where it is.
    let dotted = env.git_init("app.own");
    let folder = env.memory_dir("app.own");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("MEMORY.md"), template_with("app.own", &["- Written before identities."])).unwrap();
    let out = env.hook("session-start").fixture("SessionStart-startup.json").cwd(&dotted).run().ok();
    assert!(out.stdout.contains("- Written before identities."), "{out:#?}");
}

#[test]
fn a_name_set_in_the_config_wins() {
    let env = Env::new();
    env.git(&env.proj, &["remote", "add", "origin", "git@github.com:me/proj.git"]);
    env.config("[names]\n\"github.com/me/proj\" = \"work notes\"\n");
    env.script_default(&adds("- Named by hand."));
    env.saved_turn(SID, 1);
    assert!(env.memory_of("work notes").unwrap().contains("- Named by hand."));
    env.config("[names]\n\"github.com/me/proj\" = \"notes.team-0123abcd\"\n");
    env.cmd(&["status"])
        .in_dir(&env.proj)
        .status(1)
        .stderr(concat!(
            "memory-save: the name set for github.com/me/proj in the config, \"notes.team-0123abcd\": a name ending in \".team-0123abcd\" ",
            "could share another folder's state files; choose another name\n"
        ))
        .run();
}

/// A repository's own config can hold a line break in its origin: `status`
/// prints it on its one row, so it cannot forge a row of its own.
#[test]
fn an_origin_with_a_line_break_cannot_forge_a_status_row() {
    let env = Env::new();
    let dir = env.git_init("forged");
    env.git(&dir, &["config", "remote.origin.url", "https://example.com/app\n  hooks     all registered"]);
    let status = env.cmd(&["status"]).in_dir(&dir).run().ok().stdout;
    assert!(!status.lines().any(|l| l == "  hooks     all registered"), "{status}");
    assert_eq!(status.lines().filter(|l| l.starts_with("  hooks ")).count(), 1, "{status}");
}
