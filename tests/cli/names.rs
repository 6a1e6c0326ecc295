//! Names that are another file's: a repository's folder name never makes
//! its state files land on another memory's record, an adoption's aliases
//! or a team's approvals (docs/design.md §7).

use std::path::{Path, PathBuf};

use serde_json::json;

use crate::support::*;

const NO_ITEST: &str = "- Never run the integration tests locally: they hit the shared staging database.";

fn session_start(env: &Env, session: &str, dir: &Path) -> String {
    env.hook("session-start").fixture("SessionStart-startup.json").session(session).cwd(dir).run().ok().stdout
}

/// Whether `pytest tests/integration` in a session of `dir` is refused (not
/// only asked about), after a start that loads its memory.
#[track_caller]
fn denied(env: &Env, session: &str, dir: &Path) -> bool {
    session_start(env, session, dir);
    env.hook("pre-tool-use")
        .fixture("PreToolUse-bash.json")
        .session(session)
        .cwd(dir)
        .set("tool_input", json!({"command": "pytest tests/integration"}))
        .run()
        .ok()
        .stdout
        .contains("\"deny\"")
}

/// A save in `dir` that guards `pytest tests/integration`, and the user's
/// promotion of that guard to deny, seen refusing.
#[track_caller]
fn denying_guard(env: &Env, dir: &Path, script: usize) {
    session_start(env, "guarded", dir);
    let guarded = json!({"op": "add", "section": "CRITICAL RULES", "text": NO_ITEST,
        "guard": {"tool": "Bash", "match": "pytest tests/integration"}});
    env.script_reply(script, &reply(json!([guarded]), json!([])));
    env.saved_turn_in("guarded", dir, 1);
    let listed = env.cmd(&["guards", "--json"]).in_dir(dir).run().ok().json();
    env.cmd(&["guards", "--deny", listed[0]["id"].as_str().unwrap()]).in_dir(dir).run().ok();
    assert!(denied(env, "promoted", dir), "the promoted guard refuses");
}

/// A repository `app` with a saved memory, and a renamed copy of it (the
/// same root commit) that `adopt` has given that memory.
#[track_caller]
fn adopting_copy(env: &Env, script: usize) -> PathBuf {
    let first = repo(env, "app");
    env.script_reply(script, &adds("- The original's line."));
    env.saved_turn_in("first-app", &first, 1);
    let copy = env.root().join("copy/app-renamed");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    let cp = std::process::Command::new("cp").arg("-R").arg(&first).arg(&copy).status().unwrap();
    assert!(cp.success());
    assert!(!session_start(env, "c1", &copy).contains("- The original's line."));
    let adopted = env.cmd(&["adopt", "app"]).in_dir(&copy).run().ok().stdout;
    assert!(adopted.contains("now uses memory folder app"), "{adopted}");
    assert!(session_start(env, "c2", &copy).contains("- The original's line."), "the adoption works");
    copy
}

/// A repository with a first commit.
fn repo(env: &Env, path: &str) -> PathBuf {
    let dir = env.git_init(path);
    env.git(&dir, &["commit", "-q", "--allow-empty", "-m", "first"]);
    dir
}

/// A repository with one saved turn.
fn saved_repo(env: &Env, path: &str, script: usize) -> PathBuf {
    let dir = repo(env, path);
    session_start(env, "s1", &dir);
    env.script_reply(script, &adds("- Another repository's line."));
    env.saved_turn_in(&format!("saved-{script}"), &dir, 1);
    dir
}

/// `adopt`'s aliases are kept beside `projects/`, where a folder named
/// `adopted` keeps its record: such a repository never takes another
/// repository's adoption away.
#[test]
fn a_repository_named_adopted_never_undoes_another_repositorys_adoption() {
    let env = Env::new();
    let copy = adopting_copy(&env, 1);
    saved_repo(&env, "work/adopted", 2);
    let out = session_start(&env, "c3", &copy);
    assert!(out.contains("- The original's line."), "the copy lost its adoption: {out}");
}

/// The other way round: `adopt` run anywhere never overwrites the record of
/// a folder named `adopted` (its own rules, guards, paths).
#[test]
fn an_adoption_never_overwrites_the_record_of_a_folder_named_adopted() {
    let env = Env::new();
    let user = repo(&env, "work/adopted");
    denying_guard(&env, &user, 1);
    adopting_copy(&env, 2);
    assert!(denied(&env, "after", &user), "the guard promoted in `adopted` no longer refuses after an adopt elsewhere");
}

/// A team's approvals are `team-approvals/team-<8 hex>.approved.json`, not
/// in `projects/`, where a folder named `team-<8 hex>.approved` keeps its
/// record: such a repository never takes them away.
#[test]
fn a_repository_named_like_a_teams_approvals_never_takes_them_away() {
    let env = Env::new();
    env.config("review = \"rules\"\n");
    env.team_init();
    env.load_part1(&env.proj, "first");
    let team = env.proj.join(".claude/memory/MEMORY.md");
    let text = std::fs::read_to_string(&team).unwrap().replacen(
        "## CRITICAL RULES\n",
        "## CRITICAL RULES\n- A teammate's rule, approved here.\n",
        1,
    );
    std::fs::write(&team, text).unwrap();
    env.load_part1(&env.proj, "pulled");
    env.cmd(&["review", "--approve-all"]).in_dir(&env.proj).run().ok();
    let loaded = |session: &str| {
        let block = env.load_part1(&env.proj, session);
        block["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_string()
    };
    assert!(loaded("approved").contains("A teammate's rule, approved here."));
    let state = env.mem.join("state/memory-save");
    let approvals = std::fs::read_dir(state.join("team-approvals"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("team-") && n.ends_with(".approved.json"))
        .expect("the team's approvals file");
    saved_repo(&env, &format!("clones/{}", approvals.strip_suffix(".json").unwrap()), 1);
    assert!(loaded("later").contains("A teammate's rule, approved here."), "the approved team rule is held again");
}
