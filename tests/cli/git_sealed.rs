//! A repository's own git config runs nothing of its own: every command
//! that makes memory-save run git in the user's repository (the save's
//! memory check, `show --check`, `status`, `doctor`, `adopt`, a team
//! memory's save) meets a config that names a program for each setting
//! that runs one, and no program runs.

use std::fs;
use std::path::{Path, PathBuf};

use crate::support::*;

/// Sets every program-running setting of `repo` to a script that leaves a
/// marker of its name in the returned folder.
fn plant(env: &Env, repo: &Path) -> PathBuf {
    let markers = env.root().join("markers");
    let bin = env.root().join("marker-bin");
    fs::create_dir_all(&markers).unwrap();
    fs::create_dir_all(&bin).unwrap();
    let mark = |name: &str| {
        let script = bin.join(name);
        fs::write(&script, format!("#!/bin/sh\ntouch '{}/{name}'\nexit 1\n", markers.display())).unwrap();
        fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        script.display().to_string()
    };
    let hooks = env.root().join("marker-hooks");
    fs::create_dir_all(&hooks).unwrap();
    for hook in ["post-checkout", "post-index-change", "reference-transaction", "pre-commit", "fsmonitor-watchman"] {
        fs::copy(mark(&format!("hook-{hook}")), hooks.join(hook)).unwrap();
        fs::copy(hooks.join(hook), repo.join(".git/hooks").join(hook)).unwrap();
    }
    fs::write(repo.join(".gitattributes"), "* diff=evil merge=evil\n").unwrap();
    for (key, value) in [
        ("core.fsmonitor", mark("fsmonitor")),
        ("core.hooksPath", hooks.display().to_string()),
        ("core.askPass", mark("askpass")),
        ("credential.helper", format!("!{}", mark("credential"))),
        ("core.sshCommand", mark("ssh")),
        ("core.pager", mark("pager")),
        ("diff.external", mark("diff-external")),
        ("diff.evil.textconv", mark("textconv")),
        ("diff.evil.command", mark("diff-driver")),
        ("log.showSignature", "true".into()),
        ("gpg.program", mark("gpg")),
        ("core.repositoryformatversion", "1".into()),
        ("extensions.partialClone", "origin".into()),
        ("remote.origin.promisor", "true".into()),
    ] {
        env.git(repo, &["config", key, &value]);
    }
    markers
}

fn ran(markers: &Path) -> Vec<String> {
    fs::read_dir(markers).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect()
}

#[test]
fn no_command_runs_a_program_the_repository_names() {
    let env = Env::new();
    let p = &env.proj;
    fs::create_dir_all(p.join("src")).unwrap();
    fs::write(p.join("src/parser.rs"), "fn parse() {}\n").unwrap();
    env.git(p, &["add", "-A"]);
    env.git(p, &["commit", "-q", "-m", "first"]);
    env.git(p, &["mv", "src/parser.rs", "src/syntax.rs"]);
    env.git(p, &["commit", "-q", "-m", "rename"]);
    // The memory names a path that is gone, so the check asks git.
    env.write_memory(&template_with("proj", &["- The parser lives in `src/parser.rs`.", "- Docs in `docs/x.md`."]));
    let markers = plant(&env, p);

    env.saved_turn(SID, 1);
    assert!(env.call(1).stdin.contains("STALE NOTE"), "the check ran");
    let shown = env.cmd(&["show", "--check"]).in_dir(p).run().ok().stdout;
    assert!(shown.contains("renamed to src/syntax.rs"), "{shown}");
    env.cmd(&["status"]).in_dir(p).run().ok();
    env.cmd(&["doctor"]).in_dir(p).run();
    // A copy of the repository, elsewhere: adopt reads its root commit.
    let copy = env.root().join("copy/proj");
    fs::create_dir_all(copy.parent().unwrap()).unwrap();
    assert!(std::process::Command::new("cp").arg("-R").arg(p).arg(&copy).status().unwrap().success());
    env.cmd(&["adopt", "proj"]).in_dir(&copy).run().ok();
    // A team memory in the repository, saved.
    env.cmd(&["team", "init"]).in_dir(p).run().ok();
    env.saved_turn("team-session", 1);

    assert_eq!(ran(&markers), Vec::<String>::new());
}
