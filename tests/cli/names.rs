//! Names that are another file's: a repository's folder name never makes
//! its state files land on another memory's record, an adoption's aliases
//! or a team's approvals (docs/design.md §7).

use std::path::Path;

use serde_json::{Value, json};

use crate::support::*;

const RULES: &str = "CRITICAL RULES";
const NO_ITEST: &str = "- Never run the integration tests locally: they hit the shared staging database.";

fn guarded(rule: &str, tool: &str, pattern: &str) -> Value {
    json!({"op": "add", "section": RULES, "text": rule, "guard": {"tool": tool, "match": pattern}})
}

fn session_start(env: &Env, session: &str, dir: &Path) -> String {
    env.hook("session-start").fixture("SessionStart-startup.json").session(session).cwd(dir).run().ok().stdout
}

fn load_part1(env: &Env, dir: &Path, session: &str) -> Value {
    let out = env
        .hook("session-start")
        .fixture("SessionStart-startup.json")
        .session(session)
        .cwd(dir)
        .arg("--part")
        .arg("1")
        .run()
        .ok();
    serde_json::from_str(&out.stdout).unwrap_or(Value::Null)
}

/// Whether `pytest tests/integration` in `dir` is refused (not only asked about).
fn denied(env: &Env, session: &str, dir: &Path) -> bool {
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

fn projects_state(env: &Env) -> std::path::PathBuf {
    env.mem.join("state/memory-save/projects")
}

/// `adopt`'s aliases are `projects/adopted.json`, and a folder named
/// `adopted` keeps its record at `projects/adopted.json` too: a repository
/// named `adopted` must never take another repository's adoption away.
#[test]
fn a_repository_named_adopted_never_undoes_another_repositorys_adoption() {
    let env = Env::new();
    let first = env.git_init("app");
    env.git(&first, &["commit", "-q", "--allow-empty", "-m", "first"]);
    env.script_reply(1, &adds("- The original's line."));
    env.saved_turn_in("first-app", &first, 1);
    // A copy under another name, sharing the root commit: adopt takes it over.
    let copy = env.root().join("copy/app-renamed");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    let cp = std::process::Command::new("cp").arg("-R").arg(&first).arg(&copy).status().unwrap();
    assert!(cp.success());
    assert!(!session_start(&env, "c1", &copy).contains("- The original's line."));
    let adopted = env.cmd(&["adopt", "app"]).in_dir(&copy).run().ok().stdout;
    assert!(adopted.contains("now uses memory folder app"), "{adopted}");
    assert!(session_start(&env, "c2", &copy).contains("- The original's line."), "the adoption works");

    // An unrelated repository that happens to be called `adopted` saves once.
    let other = env.git_init("work/adopted");
    env.git(&other, &["commit", "-q", "--allow-empty", "-m", "x"]);
    session_start(&env, "o1", &other);
    env.script_reply(2, &adds("- The adopted project's own line."));
    env.saved_turn_in("other", &other, 1);
    session_start(&env, "o2", &other);

    let aliases = std::fs::read_to_string(projects_state(&env).join("adopted.json")).unwrap_or_default();
    let out = session_start(&env, "c3", &copy);
    assert!(
        out.contains("- The original's line."),
        "the copy lost its adoption after a repository named `adopted` saved; projects/adopted.json now: {aliases}\n{out}"
    );
}

/// The other way round: `adopt` run anywhere must not overwrite the record
/// of a folder named `adopted` (its own rules, guards, paths).
#[test]
fn an_adoption_never_overwrites_the_record_of_a_folder_named_adopted() {
    let env = Env::new();
    let user = env.git_init("work/adopted");
    env.git(&user, &["commit", "-q", "--allow-empty", "-m", "start"]);
    session_start(&env, "u1", &user);
    env.script_reply(1, &reply(json!([guarded(NO_ITEST, "Bash", "pytest tests/integration")]), json!([])));
    env.saved_turn_in("u", &user, 1);
    let listed = env.cmd(&["guards", "--json"]).in_dir(&user).run().ok().json();
    env.cmd(&["guards", "--deny", listed[0]["id"].as_str().unwrap()]).in_dir(&user).run().ok();
    session_start(&env, "u2", &user);
    assert!(denied(&env, "u2", &user), "the promoted guard refuses before the adopt");

    // Elsewhere: a repository and a renamed copy of it, which adopts it.
    let first = env.git_init("app");
    env.git(&first, &["commit", "-q", "--allow-empty", "-m", "first"]);
    env.script_reply(2, &adds("- The original's line."));
    env.saved_turn_in("first-app", &first, 1);
    let copy = env.root().join("copy/app-renamed");
    std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
    let cp = std::process::Command::new("cp").arg("-R").arg(&first).arg(&copy).status().unwrap();
    assert!(cp.success());
    session_start(&env, "c1", &copy);
    env.cmd(&["adopt", "app"]).in_dir(&copy).run().ok();

    session_start(&env, "after", &user);
    let after = std::fs::read_to_string(projects_state(&env).join("adopted.json")).unwrap_or_default();
    let out = env
        .hook("pre-tool-use")
        .fixture("PreToolUse-bash.json")
        .session("after")
        .cwd(&user)
        .set("tool_input", json!({"command": "pytest tests/integration"}))
        .run()
        .ok();
    assert!(
        out.stdout.contains("\"deny\""),
        "the guard the user promoted to deny in `adopted` no longer refuses after an adopt elsewhere; record now: {after}\n{out:#?}"
    );
}

/// An installed version kept a team's approvals at
/// `projects/team-<8 hex>.approved.json`, the record path of a folder named
/// `team-<8 hex>.approved`: such a repository never takes them away.
#[test]
fn a_repository_named_like_a_teams_approvals_never_takes_them_away() {
    let env = Env::new();
    env.config("review = \"rules\"\n");
    env.git(&env.proj, &["commit", "-q", "--allow-empty", "-m", "start"]);
    env.cmd(&["team", "init"]).in_dir(&env.proj).run().ok();
    load_part1(&env, &env.proj, "first");
    let team = env.proj.join(".claude/memory/MEMORY.md");
    let text = std::fs::read_to_string(&team).unwrap().replacen(
        "## CRITICAL RULES\n",
        "## CRITICAL RULES\n- A teammate's rule, approved here.\n",
        1,
    );
    std::fs::write(&team, text).unwrap();
    load_part1(&env, &env.proj, "pulled");
    env.cmd(&["review", "--approve-all"]).in_dir(&env.proj).run().ok();
    let block = load_part1(&env, &env.proj, "approved");
    let context = block["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default().to_string();
    assert!(context.contains("A teammate's rule, approved here."), "{block}");
    let approvals = std::fs::read_dir(env.mem.join("state/memory-save/team-approvals"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("team-") && n.ends_with(".approved.json"))
        .expect("the team's approvals file");
    let stem = approvals.strip_suffix(".json").unwrap();

    let hostile = env.git_init(&format!("clones/{stem}"));
    env.git(&hostile, &["commit", "-q", "--allow-empty", "-m", "hostile"]);
    session_start(&env, "h1", &hostile);
    env.script_reply(1, &adds("- The other repository's line."));
    env.saved_turn_in("hostile", &hostile, 1);
    session_start(&env, "h2", &hostile);

    let now = std::fs::read_to_string(projects_state(&env).join(format!("{stem}.json"))).unwrap_or_default();
    let block = load_part1(&env, &env.proj, "later");
    let context = block["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(
        context.contains("A teammate's rule, approved here."),
        "the approved team rule is held again after a repository named {stem} saved; {approvals} now: {now}\n{block}"
    );
}

/// A folder `app.own` that the release before the naming rule recorded
/// (its `.identity` names this repository) is kept by name; its record is
/// still `projects/app.own.json`, which a later folder `app`'s first read
/// folds in as `app`'s earlier own-rules file and deletes.
#[test]
fn a_kept_app_own_folder_never_loses_its_record_to_a_new_app() {
    let env = Env::new();
    let user = env.git_init("work/app.own");
    env.git(&user, &["commit", "-q", "--allow-empty", "-m", "start"]);
    // As the release before the rule left it: folder app.own, recorded for this repository.
    let canon = user.canonicalize().unwrap();
    let dir = env.memory_dir("app.own");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("MEMORY.md"), template_with("app.own", &["- Written by the release before."])).unwrap();
    std::fs::write(dir.join(".identity"), json!({"identity": format!("path:{}", canon.display())}).to_string())
        .unwrap();
    let out = session_start(&env, "u1", &user);
    assert!(out.contains("- Written by the release before."), "{out}");
    env.script_reply(1, &reply(json!([guarded(NO_ITEST, "Bash", "pytest tests/integration")]), json!([])));
    env.saved_turn_in("u", &user, 1);
    assert!(env.memory_of("app.own").unwrap().contains(NO_ITEST), "kept its folder");
    let listed = env.cmd(&["guards", "--json"]).in_dir(&user).run().ok().json();
    env.cmd(&["guards", "--deny", listed[0]["id"].as_str().unwrap()]).in_dir(&user).run().ok();
    session_start(&env, "u2", &user);
    assert!(denied(&env, "u2", &user), "the promoted guard refuses before the stranger saves");

    let stranger = env.git_init("clones/app");
    env.git(&stranger, &["commit", "-q", "--allow-empty", "-m", "x"]);
    session_start(&env, "s1", &stranger);
    env.script_reply(2, &adds("- The stranger's note."));
    env.saved_turn_in("stranger", &stranger, 1);
    session_start(&env, "after", &user);
    let out = env
        .hook("pre-tool-use")
        .fixture("PreToolUse-bash.json")
        .session("after")
        .cwd(&user)
        .set("tool_input", json!({"command": "pytest tests/integration"}))
        .run()
        .ok();
    assert!(out.stdout.contains("\"deny\""), "app.own's promoted guard no longer refuses: {out:#?}");
}
