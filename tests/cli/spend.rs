//! Memory a subscriber can afford: who pays, a price before
//! every fork, budgets that hold before the spend, a used-up allowance
//! that stops forking, the month in view, and the smaller message.

use std::fs;

use serde_json::{Value, json};

use crate::support::*;

/// A fork result with this usage and cost.
fn answer(fresh: u64, read: u64, write: u64, cost: f64) -> Value {
    json!({
        "type": "result", "subtype": "success", "is_error": false, "result": no_change(), "session_id": "fork",
        "usage": {"input_tokens": fresh, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 400},
        "total_cost_usd": cost
    })
}

/// A refusal as `claude -p --output-format json` prints it (tests/e2e/billing.rs).
fn refusal(status: u16, result: &str) -> Value {
    json!({
        "type": "result", "subtype": "success", "is_error": true, "api_error_status": status,
        "terminal_reason": "api_error", "result": result, "total_cost_usd": 0,
        "usage": {"input_tokens": 0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0, "output_tokens": 0}
    })
}

/// The session's last request: `model`, `ago` seconds before now, with a
/// prefix of `tokens`.
fn transcript(env: &Env, model: &str, ago: i64, tokens: u64) {
    let at = time::OffsetDateTime::now_utc() - time::Duration::seconds(ago);
    let stamp = at.format(&time::format_description::well_known::Rfc3339).unwrap();
    let line = json!({"type": "assistant", "timestamp": stamp, "message": {"role": "assistant", "model": model, "content": [],
        "usage": {"input_tokens": 5, "cache_read_input_tokens": tokens, "cache_creation_input_tokens": 0, "output_tokens": 800}}});
    fs::write(env.transcript_path(), format!("{line}\n")).unwrap();
}

fn saves(env: &Env) -> Vec<Value> {
    fs::read_to_string(env.mem.join("state/memory-save/saves.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn start(env: &Env, session: &str) -> Output {
    env.hook("session-start").fixture("SessionStart-startup.json").session(session).run().ok()
}

#[test]
fn who_pays_is_recorded_at_session_start_and_shown_where_the_environment_is_not() {
    // The variables; the route recorded; what status and doctor say, and
    // the brief that closes the session's line in `sessions`.
    type Case<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str, &'a str, &'a str);
    let plan = "draws on the Claude plan's usage limits";
    let cases: &[Case] = &[
        (&[], "subscription", "bearer", "the 5-hour and weekly windows", plan),
        (&[("CLAUDE_CODE_OAUTH_TOKEN", "t")], "subscription", "bearer", "the 5-hour and weekly windows", plan),
        (
            &[("ANTHROPIC_API_KEY", "k"), ("CLAUDE_CODE_OAUTH_TOKEN", "t")],
            "api_key",
            "x_api_key",
            "billed to ANTHROPIC_API_KEY",
            "billed to ANTHROPIC_API_KEY",
        ),
        (
            &[("ANTHROPIC_AUTH_TOKEN", "a")],
            "auth_token",
            "bearer",
            "ANTHROPIC_AUTH_TOKEN",
            "billed to ANTHROPIC_AUTH_TOKEN's account",
        ),
        (
            &[("ANTHROPIC_BASE_URL", "https://llm.corp.example/v1"), ("ANTHROPIC_API_KEY", "k")],
            "gateway",
            "x_api_key",
            "llm.corp.example",
            "through the gateway at llm.corp.example, billed as it is set up",
        ),
        (&[("CLAUDE_CODE_USE_BEDROCK", "1")], "cloud", "provider", "Amazon Bedrock", "billed by Amazon Bedrock"),
    ];
    for (vars, payer, header, says, brief) in cases {
        let env = Env::new();
        let mut run = env.hook("session-start").fixture("SessionStart-startup.json");
        for (k, v) in *vars {
            run = run.var(k, v);
        }
        run.run().ok();
        let route = env.state(SID).route().clone();
        assert_eq!((route["payer"].as_str(), route["header"].as_str()), (Some(*payer), Some(*header)), "{vars:?}");
        // status and doctor run in a shell without the session's variables.
        let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
        assert!(status.contains("who pays") && status.contains(says), "{vars:?}: {status}");
        let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run().stdout;
        assert!(doctor.contains(says), "{vars:?}: {doctor}");
        let sessions = env.cmd(&["sessions"]).run().ok().stdout;
        assert!(sessions.ends_with(&format!(" · {brief}\n")), "{vars:?}: {sessions}");
    }
    // An apiKeyHelper in the settings the fork carries over.
    let env = Env::new();
    fs::create_dir_all(env.home.join(".claude")).unwrap();
    fs::write(env.home.join(".claude/settings.json"), r#"{"apiKeyHelper": "/bin/echo key"}"#).unwrap();
    start(&env, SID);
    assert_eq!(env.state(SID).route()["payer"], "api_key_helper");
}

#[test]
fn every_save_is_priced_before_its_fork_and_the_estimate_kept_beside_the_cost() {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5-20251101", 30, 100_000);
    env.script_output(1, &answer(3, 100_000, 2_000, 0.0));
    env.saved_turn(SID, 1);
    let record = saves(&env).pop().unwrap();
    let estimate = record["estimate_usd"].as_f64().unwrap();
    // A warm 100k prefix at $0.50/M, a few thousand written, 400 out.
    assert!((0.06..0.09).contains(&estimate), "{record:#}");
    assert_eq!(record["route"], "subscription");
    // The CLI said 0 (a model it does not know): the budget counts the estimate.
    assert_eq!(record["counted_usd"], record["estimate_usd"], "{record:#}");
    // status shows the counted figure, the month's, with the CLI's beside it.
    let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    let row = status.lines().skip_while(|l| *l != "last saves:").nth(1).unwrap_or_default().to_string();
    assert!(row.contains(&format!("· ${estimate:.3} (the CLI said $0.00)")), "{status}");
    env.script_output(2, &answer(3, 100_000, 2_000, 0.5));
    env.saved_turn(SID, 2);
    assert_eq!(saves(&env).pop().unwrap()["counted_usd"], 0.5, "the larger of the two");
}

/// The one per-save cap: a resume priced over it reads the turns since the
/// last save instead, and a save still over it never starts its fork.
#[test]
fn a_save_over_the_per_save_cap_reads_the_turns_or_never_starts_its_fork() {
    let env = Env::new();
    env.config("max_cost_per_save_usd = 0.05\n");
    transcript(&env, "claude-opus-4-5", 30, 100_000);
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 1);
    assert!(!env.call(1).args.iter().any(|a| a == "--resume"), "it read the turns: {:?}", env.call(1).args);
    assert_eq!(saves(&env).pop().unwrap()["fresh"], true);
    env.config("max_cost_per_save_usd = 0.00001\n");
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 1, "a fork ran over the per-save cap");
    assert!(env.status(SID).starts_with("skipped: about $0.0"), "{}", env.status(SID));
    let report = env.state(SID).report().unwrap().to_string();
    assert!(report.contains("over max_cost_per_save_usd ($0.000"), "{report}");
}

#[test]
fn a_cold_save_waits_for_the_next_turn_and_at_the_end_reads_the_turns_instead() {
    let env = Env::new();
    // The cache expired an hour ago: 150k tokens would be written again.
    transcript(&env, "claude-opus-4-5", 3600, 150_000);
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 0, "a cold save over max_cost_per_save_usd ran");
    assert!(env.status(SID).starts_with("waiting: cache expired (about $0.9"), "{}", env.status(SID));
    // The next turn warms the cache; with five turns a save, it still asks at once.
    env.config("save_every_turns = 5\n");
    transcript(&env, "claude-opus-4-5", 5, 150_000);
    // (A fork that read no cache keeps nothing warm.)
    env.script_output(1, &answer(3, 0, 2_000, 0.01));
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 1, "the warm save after the wait");
    assert!(env.call(1).args.iter().any(|a| a == "--resume"));
    // At the session's end no warm turn will come: the save resumes
    // nothing and reads the turns since the last save, for a tenth.
    transcript(&env, "claude-opus-4-5", 3600, 150_000);
    let mut file = fs::OpenOptions::new().append(true).open(env.transcript_path()).unwrap();
    let said = json!({"type": "user", "timestamp": time::OffsetDateTime::now_utc().format(&time::format_description::well_known::Rfc3339).unwrap(),
        "message": {"role": "user", "content": "from now on the API listens on port 8443"}});
    std::io::Write::write_all(&mut file, format!("{said}\n").as_bytes()).unwrap();
    env.config("");
    env.script_reply(2, r#"{"ops":[{"op":"add","section":"Architecture & Config Facts","text":"- The API listens on port 8443."}],"topics":[]}"#);
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 3);
    let call = env.call(2);
    assert!(!call.args.iter().any(|a| a == "--resume" || a == "--fork-session"), "{:?}", call.args);
    assert!(call.args.windows(2).any(|w| w[0] == "--tools" && w[1].is_empty()), "{:?}", call.args);
    assert!(
        call.stdin.contains("<<<CONVERSATION\n")
            && call.stdin.contains("USER: from now on the API listens on port 8443")
    );
    // Only the turns since the last save: the first turn's words were read then.
    assert_eq!(call.stdin.lines().filter(|l| l.starts_with("USER: ")).count(), 1, "{}", call.stdin);
    assert!(env.memory().unwrap().contains("- The API listens on port 8443."));
    let record = saves(&env).pop().unwrap();
    assert_eq!(record["fresh"], true, "{record:#}");
    assert!(record["estimate_usd"].as_f64().unwrap() < 0.05, "{record:#}");
}

/// At a cold end the cheaper of the two runs: resuming 20k tokens again is
/// under the cold cap, but reading the turns costs less.
#[test]
fn a_cold_end_under_the_cap_reads_the_turns_when_that_is_cheaper() {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5", 3600, 20_000);
    env.script_reply(1, &no_change());
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 1);
    let call = env.call(1);
    assert!(!call.args.iter().any(|a| a == "--resume"), "{:?}", call.args);
    let record = saves(&env).pop().unwrap();
    assert_eq!(record["fresh"], true, "{record:#}");
    assert!(record["estimate_usd"].as_f64().unwrap() < 0.05, "{record:#}");
    // Warm, the same session resumes: a cache read costs a tenth.
    let env = Env::new();
    transcript(&env, "claude-opus-4-5", 5, 20_000);
    env.script_reply(1, &no_change());
    env.saved_turn(SID, 1);
    assert!(env.call(1).args.iter().any(|a| a == "--resume"), "{:?}", env.call(1).args);
}

/// A session that never ends (a closed terminal sends no SessionEnd) is
/// saved once it has been quiet for the idle flush, an hour by default,
/// from its turns: its cache is long gone by then (virtual clock).
#[test]
#[cfg(debug_assertions)] // needs the debug build's virtual clock (`MEMORY_SAVE_DEBUG_CLOCK`)
fn a_session_quiet_for_an_hour_is_saved_from_its_turns() {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock");
    let env = Env::new().with_var("MEMORY_SAVE_DEBUG_CLOCK", clock.to_str().unwrap());
    env.config("save_every_turns = 5\n");
    let start = time::OffsetDateTime::now_utc().unix_timestamp();
    set_clock(&clock, start);
    transcript(&env, "claude-opus-4-5", 0, 150_000);
    env.turn(SID);
    assert_eq!(env.state(SID).held_until(), Some(start + 3600), "{}", env.state(SID));
    set_clock(&clock, start + 1800);
    std::thread::sleep(std::time::Duration::from_millis(300));
    // Its worker is there, waiting for the hour: not gone, not saving.
    assert!(env.worker_running(SID), "no worker waits for the flush");
    assert_eq!(env.call_count(), 0, "flushed before the hour");
    set_clock(&clock, start + 3601);
    env.wait_saves(SID, 1);
    assert_eq!(env.call_count(), 1);
    assert!(!env.call(1).args.iter().any(|a| a == "--resume"), "{:?}", env.call(1).args);
    assert_eq!(saves(&env).pop().unwrap()["fresh"], true);
}

#[test]
fn the_monthly_budget_stops_at_the_save_that_would_pass_it() {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5", 10, 100_000);
    // The CLI reports 0 (a model it does not know): each save counts its
    // estimate, E. A budget of 2.4 E holds two saves, not three.
    env.saved_turn(SID, 1);
    let estimate = saves(&env)[0]["counted_usd"].as_f64().unwrap();
    let limit = 2.4 * estimate;
    env.config(&format!("max_cost_per_month_usd = {limit}\n"));
    env.saved_turn(SID, 2);
    let report = env.state(SID).report().unwrap_or_default().to_string();
    assert!(report.contains("83% of this month's save budget is spent"), "told at 80%: {report}");
    env.saved_turn(SID, 3);
    assert_eq!(env.call_count(), 2, "the third save would pass the month's budget");
    let usd = |x: f64| memory_save::memory::cost::usd(x);
    let reached = format!("paused: max_cost_per_month_usd reached ({} of {})", usd(2.0 * estimate), usd(limit));
    assert_eq!(env.status(SID), reached);
    // Told once: the next turn says nothing new.
    env.saved_turn(SID, 4);
    assert!(env.state(SID).report().is_none(), "{}", env.state(SID));
    // Every session's start says so, to the user, not the model.
    let out = start(&env, SID_OTHER).json();
    let message = out["systemMessage"].as_str().unwrap();
    assert!(
        message.starts_with(&format!("memory-save: saves are stopped: {} of {}", usd(2.0 * estimate), usd(limit))),
        "{out:#}"
    );
    assert!(out.get("hookSpecificOutput").is_none(), "not model context: {out:#}");
    let line = env.cmd(&["statusline"]).fixture("statusLine.json").session(SID_OTHER).run().ok().stdout;
    assert_eq!(line.trim(), format!("memory-save: {reached}"));
    // Raised: saves go on, and the start says nothing more.
    env.config("max_cost_per_month_usd = 5\n");
    assert!(start(&env, SID_OTHER).stdout.is_empty());
    env.saved_turn(SID, 5);
    assert_eq!(env.call_count(), 3);
}

/// A stop is judged against the settings as they are now: with the key
/// removed, then the whole file, no start, status line, `status` or
/// `doctor` says saves are stopped, and saves run.
#[test]
fn a_budget_stop_ends_with_the_setting_that_made_it() {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5", 10, 100_000);
    env.config("max_cost_per_month_usd = 0.000001\n");
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 0, "the month's budget stops the first save");
    assert!(env.status(SID).starts_with("paused: max_cost_per_month_usd reached"), "{}", env.status(SID));
    for config in [Some("review = \"off\"\n"), None] {
        match config {
            Some(text) => env.config(text),
            None => fs::remove_file(env.mem.join("memory-save.toml")).unwrap(),
        }
        assert!(start(&env, SID_OTHER).stdout.is_empty(), "{config:?}");
        let line = env.cmd(&["statusline"]).fixture("statusLine.json").session(SID).run().ok().stdout;
        assert!(!line.contains("max_cost_per_month_usd"), "{config:?}: {line}");
        let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
        assert!(!status.contains("stopped") && !status.contains("reached"), "{config:?}: {status}");
        let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run().stdout;
        assert!(!doctor.contains("max_cost_per_month_usd"), "{config:?}: {doctor}");
    }
    env.config("");
    let before = env.call_count();
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), before + 1, "saves run again");
    assert!(env.call(before + 1).args.iter().any(|a| a == "--fork-session"), "{:?}", env.call(before + 1).args);
    assert!(!env.status(SID).starts_with("paused"), "{}", env.status(SID));
}

#[test]
fn the_month_is_counted_per_route_and_no_route_has_a_default_budget() {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5", 10, 10_000);
    // Earlier saves by a plan: $12 of usage at API prices this month.
    let now = time::OffsetDateTime::now_utc().unix_timestamp();
    let old: String = (0..3)
        .map(|i| format!("{}\n", json!({"at": now - 60 - i, "session_id": "x", "status": "+1", "route": "subscription", "counted_usd": 4.0})))
        .collect();
    fs::create_dir_all(env.mem.join("state/memory-save")).unwrap();
    fs::write(env.mem.join("state/memory-save/saves.jsonl"), old).unwrap();
    // No default: a plan's saves are not money, and the budget is the user's to set.
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 1, "no default budget stops a plan's saves");
    env.config("max_cost_per_month_usd = 10\n");
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 1, "the plan's API-priced month is past $10");
    assert!(env.status(SID).starts_with("paused: max_cost_per_month_usd reached ($12."), "{}", env.status(SID));
    // The same machine with an API key: another route, its own month.
    let run = |hook: &str, fixture: &str| {
        env.hook(hook).fixture(fixture).session(SID).var("ANTHROPIC_API_KEY", "k").run().ok()
    };
    run("user-prompt-submit", "UserPromptSubmit.json");
    run("stop", "Stop.json");
    env.wait_saves(SID, 3);
    assert_eq!(env.call_count(), 2);
    assert_eq!(saves(&env).pop().unwrap()["route"], "api_key");
}

/// A bench on the debug build's virtual clock, set to `START`.
#[cfg(debug_assertions)]
fn on_clock() -> (Env, impl Fn(i64)) {
    let env = Env::new();
    let clock = env.root().join("clock");
    set_clock(&clock, START);
    (env.with_var("MEMORY_SAVE_DEBUG_CLOCK", clock.to_str().unwrap()), move |at| set_clock(&clock, at))
}

/// 2026-12-01 16:00 UTC.
const START: i64 = 1_796_140_800;

#[test]
#[cfg(debug_assertions)] // needs the debug build's virtual clock (`MEMORY_SAVE_DEBUG_CLOCK`)
fn a_used_up_allowance_stops_forking_after_one_refusal_until_its_reset() {
    let (env, set) = on_clock();
    env.script_output(1, &refusal(429, "You've hit your 5-hour limit · resets 11:59pm (UTC)"));
    env.saved_turn(SID, 1);
    assert!(env.status(SID).starts_with("paused: allowance used up until "), "{}", env.status(SID));
    let report = env.state(SID).report().unwrap().to_string();
    assert!(report.contains("You've hit your 5-hour limit") && report.contains("the turns wait"), "{report}");
    // This session and another: no fork until the reset, and not told again.
    env.saved_turn(SID, 2);
    let other = env.git_init("other");
    env.saved_turn_in(SID_OTHER, &other, 1);
    assert_eq!(env.call_count(), 1, "a fork ran past a used-up allowance");
    assert!(env.state(SID_OTHER).report().is_none(), "told once: {}", env.state(SID_OTHER));
    let line = env.cmd(&["statusline"]).fixture("statusLine.json").session(SID_OTHER).run().ok().stdout;
    assert!(line.starts_with("memory-save: paused: allowance used up until "), "{line}");
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run();
    assert!(doctor.stdout.contains("You've hit your 5-hour limit") && doctor.code == Some(3), "{doctor:#?}");
    let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(status.contains("no save runs on this machine: paused: allowance used up"), "{status}");
    // A setting that fails closed as well: the save stops on it first, and
    // the status line and status name it first, as the save does.
    env.config("max_cost_per_save_usd = -1\n");
    let line = env.cmd(&["statusline"]).fixture("statusLine.json").session(SID_OTHER).run().ok().stdout;
    assert!(line.starts_with("memory-save: paused: memory-save.toml has a problem"), "{line}");
    let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(status.contains("no save runs on this machine: ") && status.contains("max_cost_per_save_usd"), "{status}");
    env.config("");
    // The reset it named comes: no status line goes on saying paused, and
    // the next save runs.
    set(START + 8 * 3600);
    for session in [SID, SID_OTHER] {
        let line = env.cmd(&["statusline"]).fixture("statusLine.json").session(session).run().ok().stdout;
        assert!(!line.contains("paused"), "{session}: {line}");
    }
    env.saved_turn(SID, 3);
    assert_eq!(env.call_count(), 3, "doctor asked claude its version (call 2); then one fork");
}

#[test]
#[cfg(debug_assertions)] // needs the debug build's virtual clock (`MEMORY_SAVE_DEBUG_CLOCK`)
fn a_refusal_without_a_reset_lets_one_fork_try_an_hour_later() {
    let (env, set) = on_clock();
    env.script_output(1, &refusal(429, "You're out of usage credits"));
    env.saved_turn(SID, 1);
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 1);
    assert_eq!(env.status(SID), "paused: allowance used up (memory-save doctor)");
    // Not before an hour; then one fork tries again.
    set(START + 3599);
    env.saved_turn(SID, 3);
    assert_eq!(env.call_count(), 1);
    set(START + 3601);
    env.saved_turn(SID, 4);
    assert_eq!(env.call_count(), 2);
}

#[test]
fn a_short_rate_limit_is_a_wait_and_a_model_the_plan_refuses_pauses_only_its_sessions() {
    let env = Env::new();
    env.script_output(
        1,
        &refusal(
            429,
            "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"slow down\"}}",
        ),
    );
    env.saved_turn(SID, 1);
    assert_eq!(env.status(SID), "waiting: rate limited; the next save tries again");
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 2, "a short rate limit does not pause");

    env.write_transcript("claude-sonnet-4-5[1m]");
    env.script_output(3, &refusal(429, "Usage credits required for 1M context"));
    env.saved_turn(SID, 3);
    assert_eq!(env.status(SID), "paused: claude-sonnet-4-5[1m] needs usage credits");
    env.saved_turn(SID, 4);
    assert_eq!(env.call_count(), 3, "the same model waits");
    // A session on another model goes on.
    let other = env.git_init("other");
    env.saved_turn_in(SID_OTHER, &other, 1);
    assert_eq!(env.call_count(), 3, "the transcript is shared here: same model");
    env.write_transcript("claude-opus-4-5");
    env.saved_turn_in(SID_OTHER, &other, 2);
    assert_eq!(env.call_count(), 4, "another model is not paused");
}

#[test]
fn a_misspelled_key_never_lets_a_rule_or_a_save_through() {
    // Measured before: with one misspelled key, review was off and a
    // $0.001 budget let a save run.
    let env = Env::new();
    env.config("max_cost_per_save_usd = 0.001\nreveiw = \"rules\"\n");
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 0);
    assert_eq!(env.status(SID), "paused: memory-save.toml has a problem (memory-save doctor)");
    let out = start(&env, SID).json();
    assert!(
        out["systemMessage"].as_str().unwrap().contains("unknown key \"reveiw\" (did you mean \"review\"?)"),
        "{out:#}"
    );
    // An unknown key far from any budget is ignored, and the budget holds.
    env.config("max_cost_per_save_usd = 0.001\nfavourite_colour = \"blue\"\n");
    transcript(&env, "claude-opus-4-5", 10, 10_000);
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 0);
    assert!(env.status(SID).starts_with("skipped: about $"), "{}", env.status(SID));
    let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(status.contains("unknown key \"favourite_colour\"; ignored"), "{status}");
}

#[test]
fn cost_shows_the_month_day_by_day_and_status_the_budgets_and_pace() {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5", 10, 10_000);
    start(&env, SID);
    env.config("max_cost_per_month_usd = 10\n");
    env.script_output(1, &answer(3, 10_000, 500, 0.41));
    env.saved_turn(SID, 1);
    let cost = env.cmd(&["cost"]).in_dir(&env.proj).run().ok().stdout;
    // On a plan the dollars are its usage at API prices, never money paid.
    let month = "1 save · in 3 · cache read 10000 · cache write 500 · out 400 · $0.41 at API prices";
    assert!(cost.contains(month), "{cost}");
    assert!(cost.contains("max_cost_per_month_usd $10.00: $0.41 spent at API prices (4%)"), "{cost}");
    assert!(
        cost.lines().any(|l| l.contains("##############################  ") && l.ends_with("1 save  $0.41")),
        "{cost}"
    );
    let json = env.cmd(&["cost", "--json"]).in_dir(&env.proj).run().ok().json();
    assert_eq!(json["saves"], 1);
    assert_eq!(json["cost_usd"], 0.41);
    assert_eq!(json["budgets"][0]["share"], 0.041);
    assert!(json["projected_usd"].as_f64().unwrap() >= 0.41);
    let status = env.cmd(&["status", "--json"]).in_dir(&env.proj).run().ok().json();
    assert_eq!(status["month"]["average_per_save_usd"], 0.41);
    // The status line shows the month after a save.
    let line = env.cmd(&["statusline"]).fixture("statusLine.json").session(SID).run().ok().stdout;
    assert!(line.starts_with("memory-save: no change · $0.41 at API prices this month · "), "{line}");
}

/// The fork holds the block its session loaded: the message points to it,
/// or carries only what changed since; the whole file when it must.
#[test]
fn the_message_points_to_the_loaded_block_and_repeats_the_file_only_when_it_must() {
    let env = Env::new();
    let facts: Vec<String> =
        (0..60).map(|i| format!("- Fact number {i} about the build, k{i}a k{i}b k{i}c.")).collect();
    let facts: Vec<&str> = facts.iter().map(String::as_str).collect();
    env.write_memory(&template_with("proj", &facts));
    // No SessionStart recorded: the whole file. (Each fact has words of its
    // own: lines that differ in one number would be near-duplicates.)
    env.saved_turn(SID, 1);
    assert!(env.call(1).stdin.contains("- Fact number 37 about the build, k37a k37b k37c."));
    // Loaded whole at SessionStart: a pointer, not the file.
    start(&env, SID);
    env.saved_turn(SID, 2);
    let stdin = env.call(2).stdin;
    assert!(
        stdin.contains("exactly the last [PROJECT MEMORY: …] block") && !stdin.contains("Fact number 37"),
        "{stdin}"
    );
    assert!(stdin.len() + 2_000 < env.call(1).stdin.len(), "{} vs {}", stdin.len(), env.call(1).stdin.len());
    // Changed since (a save, an edit): only the lines that changed.
    let changed =
        env.memory().unwrap().replace("- Fact number 37 about the build, k37a k37b k37c.", "- Fact 37, corrected.");
    env.write_memory(&changed);
    env.saved_turn(SID, 3);
    let stdin = env.call(3).stdin;
    assert!(
        stdin.contains(
            "Lines added:\n<<<\n- Fact 37, corrected.\n>>>\nLines removed:\n<<<\n- Fact number 37 about the build, k37a k37b k37c.\n>>>"
        ),
        "{stdin}"
    );
    assert!(!stdin.contains("Fact number 36"));
    // A part missing from the load: the whole file.
    let big: Vec<String> = (0..150).map(|i| format!("- A long fact {i}: {}", "x".repeat(100))).collect();
    let big: Vec<&str> = big.iter().map(String::as_str).collect();
    env.write_memory(&template_with("proj", &big));
    env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg("1").run().ok();
    env.saved_turn(SID, 4);
    assert!(env.call(4).stdin.contains("- A long fact 149: "), "part 2 never loaded: the whole file");
    // The last save skipped a line: the whole file, so it can copy exactly.
    for part in 1..=2 {
        env.hook("session-start").fixture("SessionStart-startup.json").arg("--part").arg(&part.to_string()).run().ok();
    }
    env.script_reply(5, &reply(json!([{"op": "remove", "line": "- not a line of the file"}]), json!([])));
    env.saved_turn(SID, 5);
    assert!(!env.call(5).stdin.contains("- A long fact 149: "), "a complete load: a pointer");
    env.saved_turn(SID, 6);
    assert!(env.call(6).stdin.contains("- A long fact 149: ") && env.call(6).stdin.contains("EXACT COPY NOTE"));
}

#[test]
fn a_p_run_at_the_defaults_is_saved_at_its_end() {
    let env = Env::new();
    env.config("save_every_turns = 5\n");
    env.turn(SID);
    assert_eq!(env.call_count(), 0, "one turn of five waits");
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 1);
    assert_eq!(env.call_count(), 1);
}

/// Claude Code passes CLAUDE_CODE_OAUTH_TOKEN to no hook (measured,
/// tests/e2e/spend.rs s20): a fork that cannot log in says what to do.
#[test]
fn a_fork_that_cannot_log_in_says_how_to_give_it_the_login() {
    let env = Env::new();
    env.script_output(1, &refusal(401, "Not logged in · Please run /login"));
    env.saved_turn(SID, 1);
    let report = env.state(SID).report().unwrap().to_string();
    assert!(report.contains("Claude Code passes CLAUDE_CODE_OAUTH_TOKEN to no hook"), "{report}");
    assert!(env.status(SID).starts_with("error: fork failed: Not logged in"));
    // The API billed nothing: the save counts nothing, however often it fails.
    let record = saves(&env).pop().unwrap();
    assert_eq!(record["counted_usd"], 0.0, "{record:#}");
    assert!(record["estimate_usd"].as_f64().unwrap() > 0.0, "{record:#}");
    // A long status is cut: the row keeps its columns apart.
    let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    let row = status.lines().skip_while(|l| *l != "last saves:").nth(1).unwrap_or_default().to_string();
    assert!(row.contains("… in 0 · cache read 0") && row.ends_with("· $0.00"), "{row}");
    // The month counts the failed fork apart, not as a save.
    assert!(status.contains("month     0 saves (1 failed) · in 0"), "{status}");
    // doctor names the failure and its fix until a save succeeds.
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run().stdout;
    assert!(doctor.contains("the last save") && doctor.contains("fork failed: Not logged in"), "{doctor}");
    assert!(doctor.contains("→ the fork could not log in: ") && doctor.contains("claude /login"), "{doctor}");
    // Logged in since: the failure is told as past, with when, and no problem.
    std::fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::fs::write(env.home.join(".claude/.credentials.json"), "{}").unwrap();
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run();
    let line = doctor.stdout.lines().find(|l| l.contains("fork failed: Not logged in")).unwrap_or_default();
    assert!(line.contains("a stored login now") && !line.contains("PROBLEM"), "{}", doctor.stdout);
    std::fs::remove_file(env.home.join(".claude/.credentials.json")).unwrap();
    env.script_output(2, &answer(3, 1_000, 200, 0.01));
    env.saved_turn(SID, 2);
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run().stdout;
    assert!(!doctor.contains("Not logged in"), "{doctor}");
}

#[test]
fn an_unknown_model_is_priced_at_the_dearest_entry_and_status_says_so() {
    let env = Env::new();
    let arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc";
    transcript(&env, arn, 10, 10_000);
    env.saved_turn(SID, 1);
    let record = saves(&env).pop().unwrap();
    assert_eq!(record["unknown_model"], arn);
    // The same save on a known Opus-class model costs a third as much.
    transcript(&env, "claude-opus-4-5", 10, 10_000);
    env.saved_turn(SID, 2);
    let known = saves(&env).pop().unwrap();
    assert!(known["unknown_model"].is_null());
    let ratio = record["estimate_usd"].as_f64().unwrap() / known["estimate_usd"].as_f64().unwrap();
    assert!((2.9..3.1).contains(&ratio), "{ratio}");
    let status = env.cmd(&["status"]).in_dir(&env.proj).run().ok().stdout;
    assert!(status.contains(&format!("\"{arn}\" is not in the price table")), "{status}");
}

#[test]
fn install_says_what_saves_cost_by_default_and_how_to_change_it() {
    let env = Env::new();
    env.config_exact("");
    let out = env.cmd(&["install"]).in_dir(&env.proj).run().ok().stdout;
    assert!(
        out.contains("On a Claude plan it draws on the plan's usage limits, the 5-hour and weekly windows")
            && out.contains("with an API key, a cloud provider or a gateway it is billed at API rates"),
        "{out}"
    );
    assert!(!out.contains("Agent SDK credit") && !out.contains("billing month"), "{out}");
    assert!(out.contains("Saves are batched: every 5 turns, after 1 h of quiet and at the session's end"), "{out}");
    assert!(out.contains("a save priced over $0.25 (max_cost_per_save_usd) reads only the new turns"), "{out}");
    assert!(out.contains("who pays is read from a session's environment at its start"), "{out}");
    // Once a session has started, install names who pays.
    start(&env, SID);
    env.cmd(&["uninstall"]).in_dir(&env.proj).run().ok();
    let out = env.cmd(&["install"]).in_dir(&env.proj).var("ANTHROPIC_API_KEY", "k").run().ok().stdout;
    assert!(out.contains("at the last session start, saves draw on your Claude plan's usage limits"), "{out}");
}

#[test]
fn a_cold_save_over_the_per_save_budget_at_the_end_starts_no_fork() {
    let env = Env::new();
    // Under even the save that reads only the turns.
    env.config("max_cost_per_save_usd = 0.005\n");
    transcript(&env, "claude-opus-4-5", 3600, 40_000);
    env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").run().ok();
    env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
    env.wait_saves(SID, 1);
    assert_eq!(env.call_count(), 0);
    let report = env.state(SID).report().unwrap().to_string();
    let said = "even reading them would have cost about $0.0";
    assert!(report.contains(said) && report.contains("over max_cost_per_save_usd ($0.0050)"), "{report}");
}

/// A record dated ahead (a clock set back since) counts as now, so a
/// budget never waits for its date, and doctor names it.
#[test]
fn a_save_record_dated_ahead_counts_now_and_doctor_names_it() {
    let env = Env::new();
    env.config("max_cost_per_month_usd = 1\n");
    transcript(&env, "claude-opus-4-5", 10, 10_000);
    let ahead = time::OffsetDateTime::now_utc().unix_timestamp() + 30 * 86_400;
    fs::create_dir_all(env.mem.join("state/memory-save")).unwrap();
    let record = json!({"at": ahead, "session_id": "x", "status": "+1", "route": "subscription", "counted_usd": 2.0});
    fs::write(env.mem.join("state/memory-save/saves.jsonl"), format!("{record}\n")).unwrap();
    env.saved_turn(SID, 1);
    assert_eq!(env.call_count(), 0, "a record dated ahead was not counted this month");
    assert!(
        env.status(SID).starts_with("paused: max_cost_per_month_usd reached ($2.00 of $1.00)"),
        "{}",
        env.status(SID)
    );
    let doctor = env.cmd(&["doctor"]).in_dir(&env.proj).run().stdout;
    assert!(doctor.contains("1 save record dated more than ten minutes ahead"), "{doctor}");
}

#[test]
fn sessions_saving_at_once_with_room_for_one_save_start_one_fork() {
    at_once_within("max_cost_per_month_usd");
}

/// Five sessions stop at once with room in `budget` for one save.
fn at_once_within(budget: &str) {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5", 10, 100_000);
    // The CLI reports 0: each save counts its estimate, E.
    env.saved_turn(SID, 1);
    let estimate = saves(&env)[0]["counted_usd"].as_f64().unwrap();
    // Room for one more save, not two.
    env.config(&format!("{budget} = {}\n", 2.5 * estimate));
    env.script_hold(2);
    let sessions: Vec<String> = (0..5).map(|n| format!("00000000-0000-4000-8000-00000000000{n}")).collect();
    std::thread::scope(|scope| {
        for session in &sessions {
            scope.spawn(|| env.turn(session));
        }
    });
    // One fork runs (held); the others were judged against its reservation.
    let started = std::time::Instant::now();
    let judged = |s: &String| env.status(s).starts_with("skipped: saves running now hold the rest");
    while sessions.iter().filter(|s| judged(s)).count() < sessions.len() - 1 {
        assert!(started.elapsed() < DEADLINE, "{:?}", sessions.iter().map(|s| env.status(s)).collect::<Vec<_>>());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(env.call_count(), 2, "one fork besides the first save");
    let report = sessions.iter().map(|s| env.state(s).report().unwrap_or_default().to_string()).find(|r| !r.is_empty());
    let report = report.unwrap_or_default();
    assert!(
        report.contains(&format!("saves of other sessions running at this moment hold the rest of {budget}")),
        "{report}"
    );
    env.release(2);
    for session in &sessions {
        env.wait_idle(session, 1);
    }
    assert_eq!(env.call_count(), 2);
    // The reservation went with the record: the month counts two saves,
    // and nothing is held.
    let month: f64 = saves(&env).iter().filter_map(|s| s["counted_usd"].as_f64()).sum();
    assert!((month - 2.0 * estimate).abs() < 1e-6, "{month} {estimate}");
    // Room for one more save runs one: a reservation left held would be
    // counted as a dead worker's and leave no room.
    assert_nothing_held(&env, budget, 2.0 * estimate, estimate);
}

/// With room in `budget` for one more save of `estimate` past `spent`, the
/// next save runs and adds one record: nothing else holds or counts.
#[track_caller]
fn assert_nothing_held(env: &Env, budget: &str, spent: f64, estimate: f64) {
    env.config(&format!("{budget} = {}\n", spent + 1.5 * estimate));
    let (calls, records) = (env.call_count(), saves(env).len());
    env.turn(SID);
    env.wait_idle(SID, 1);
    assert_eq!(env.call_count(), calls + 1, "no room: {}", env.status(SID));
    assert_eq!(saves(env).len(), records + 1, "{:#?}", saves(env));
}

/// One save, a monthly budget of `budgets` times its estimate, and another
/// session's reservation of about the same estimate whose worker was killed
/// mid-fork: the fork had started, so it may have been billed.
fn one_save_and_a_dead_workers_reservation(env: &Env, budgets: f64) -> f64 {
    transcript(env, "claude-opus-4-5", 10, 100_000);
    env.saved_turn(SID, 1);
    let estimate = saves(env)[0]["counted_usd"].as_f64().unwrap();
    env.config(&format!("max_cost_per_month_usd = {}\n", budgets * estimate));
    env.script_hold(2);
    env.turn(SID_OTHER);
    let fork = env.call(2);
    kill(fork.ppid);
    wait_until("the killed worker to be gone", || !process_alive(fork.ppid));
    env.release(2);
    estimate
}

/// A worker that died mid-fork left its reservation: its fork may have run,
/// so its estimate is counted once, as a record, and holds no more.
#[test]
fn a_reservation_whose_worker_died_is_counted_once_and_holds_no_more() {
    let env = Env::new();
    let estimate = one_save_and_a_dead_workers_reservation(&env, 3.5);
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 3, "{}", env.status(SID));
    let lost: Vec<Value> = saves(&env).into_iter().filter(|r| r["session_id"] == SID_OTHER).collect();
    assert_eq!(lost.len(), 1, "{lost:#?}");
    // Its own estimate: the same session, a message a bullet longer.
    let counted = lost[0]["counted_usd"].as_f64().unwrap();
    assert!((counted - estimate).abs() < estimate / 100.0, "{counted} against {estimate}");
    // Counted once: three estimates spent, the fourth would pass 3.5.
    env.saved_turn(SID, 3);
    assert_eq!(env.call_count(), 3, "{}", env.status(SID));
    assert_eq!(saves(&env).iter().filter(|r| r["session_id"] == SID_OTHER).count(), 1);
}

/// A dead worker's reservation found by a save that does not run (a budget
/// stops it) is counted once too: the save's own ledger, dropped unclosed,
/// and the stop's record both saw it.
#[test]
fn a_reservation_whose_worker_died_is_counted_once_by_a_save_that_does_not_run() {
    let env = Env::new();
    one_save_and_a_dead_workers_reservation(&env, 2.5);
    env.saved_turn(SID, 2);
    assert_eq!(env.call_count(), 2, "{}", env.status(SID));
    assert_eq!(saves(&env).iter().filter(|r| r["session_id"] == SID_OTHER).count(), 1, "{:#?}", saves(&env));
}

/// Before any session has started, status says who would pay, as far as
/// this shell and the settings tell, and the budget that would apply.
#[test]
fn status_before_the_first_session_says_who_would_pay_and_what_the_windows_hold() {
    let env = Env::new();
    let run = |key: Option<&str>| {
        let cmd = env.cmd(&["status"]).in_dir(&env.proj).unset("CLAUDE_CODE_OAUTH_TOKEN");
        match key {
            Some(key) => cmd.var("ANTHROPIC_API_KEY", key).run().ok().stdout,
            None => cmd.unset("ANTHROPIC_API_KEY").run().ok().stdout,
        }
    };
    let plan = run(None);
    assert!(
        plan.contains("who pays  saves draw on your Claude plan's usage limits")
            && plan.contains("first session start confirms it"),
        "{plan}"
    );
    assert!(!plan.contains("budget    "), "no default budget: {plan}");
    assert!(plan.contains("plan      memory-save cannot see your plan's usage windows"), "{plan}");
    let key = run(Some("k"));
    assert!(key.contains("who pays  saves are billed to ANTHROPIC_API_KEY"), "{key}");
    assert!(!key.contains("plan      "), "an API key's saves draw on no plan window: {key}");
}

/// A fork that used tokens and failed counts them, priced by the table,
/// when the CLI put no figure on them.
#[test]
fn a_failed_fork_that_used_tokens_counts_them() {
    let env = Env::new();
    transcript(&env, "claude-opus-4-5-20251101", 30, 100_000);
    env.script_output(1, &json!({
        "type": "result", "subtype": "error_during_execution", "is_error": true, "result": "the stream broke",
        "total_cost_usd": 0,
        "usage": {"input_tokens": 10, "cache_read_input_tokens": 100_000, "cache_creation_input_tokens": 0, "output_tokens": 0}
    }));
    env.saved_turn(SID, 1);
    assert!(env.status(SID).starts_with("error: "), "{}", env.status(SID));
    let record = saves(&env).pop().unwrap();
    let counted = record["counted_usd"].as_f64().unwrap();
    // 100k cache reads at Opus 4.5's $0.50/M.
    assert!((0.049..0.052).contains(&counted), "{record:#}");
}

/// The refactor of `save::failed` keeps what a failed fork counts: one
/// killed at its bound (usage unknown, maybe billed in full) counts its
/// estimate, and its reservation is released with the record.
#[test]
fn a_fork_killed_at_its_bound_counts_its_estimate_and_releases_its_reservation() {
    let env = Env::new().with_var("MEMORY_SAVE_FORK_TIMEOUT", "1");
    env.write_memory(&template_with("proj", &["- Kept."]));
    env.script_sleep(1, 120);
    env.script_reply(1, &adds("- Too late."));
    env.saved_turn(SID, 1);
    assert!(env.status(SID).contains("timed out"), "{}", env.status(SID));
    let record = saves(&env).pop().unwrap();
    let estimate = record["estimate_usd"].as_f64().unwrap();
    assert!(estimate > 0.0, "{record:#}");
    assert_eq!(record["counted_usd"].as_f64(), Some(estimate), "{record:#}");
    let env = env.with_var("MEMORY_SAVE_FORK_TIMEOUT", "60");
    assert_nothing_held(&env, "max_cost_per_month_usd", estimate, estimate);
}

/// A fork whose `claude` cannot be found billed nothing: it counts 0, and
/// the save is still priced (an estimate is kept) before it is tried.
#[test]
fn a_missing_claude_counts_nothing_but_the_save_was_priced_first() {
    let env = Env::new().with_var("MEMORY_SAVE_CLAUDE", "/nonexistent/claude");
    env.write_memory(&template_with("proj", &["- Kept."]));
    env.saved_turn(SID, 1);
    let record = saves(&env).pop().unwrap();
    assert!(record["estimate_usd"].as_f64().is_some_and(|e| e > 0.0), "{record:#}");
    assert!(record["counted_usd"].as_f64().is_some_and(|c| c == 0.0), "{record:#}");
}

/// A session that ended with its save failed ("Not logged in") keeps its
/// turns: the project's next session start asks that save once more, and
/// only once, while its transcript is there.
#[test]
fn an_ended_sessions_failed_save_is_tried_once_more_at_the_next_start() {
    for fixed in [true, false] {
        let env = Env::new();
        transcript(&env, "claude-opus-4-5", 10, 10_000);
        env.script_output(1, &refusal(401, "Not logged in · Please run /login"));
        env.turn(SID);
        env.hook("session-end").fixture("SessionEnd-other.json").session(SID).run().ok();
        env.wait_saves(SID, 1);
        assert!(env.status(SID).starts_with("error: fork failed: Not logged in"), "{}", env.status(SID));
        // The user logs in (or not); the next session of the project starts.
        if fixed {
            env.script_default(&adds("- Kept from the session whose save failed."));
        } else {
            env.script_output(2, &refusal(401, "Not logged in · Please run /login"));
        }
        start(&env, SID_OTHER);
        env.wait_idle(SID, 2);
        assert_eq!(env.call_count(), 2);
        assert_eq!(env.call(2).flag("--resume"), Some(SID), "{:?}", env.call(2).args);
        let memory = env.memory().unwrap_or_default();
        assert_eq!(memory.contains("- Kept from the session whose save failed."), fixed, "{memory}");
        // Once: a later start asks nothing more, saved or failed again.
        start(&env, "33333333-3333-4333-8333-333333333333");
        std::thread::sleep(std::time::Duration::from_millis(300));
        env.wait_idle(SID, 2);
        assert_eq!(env.call_count(), 2, "fixed: {fixed}");
    }
}

/// A user's settings.json that is a dotfiles manager's link: the session's
/// start sees its apiKeyHelper, and the fork carries the same, so the save
/// is paid as the session is.
#[test]
fn a_linked_settings_file_pays_the_fork_as_it_pays_the_session() {
    let env = Env::new();
    let dotfiles = env.root().join("dotfiles");
    fs::create_dir_all(&dotfiles).unwrap();
    fs::write(dotfiles.join("settings.json"), r#"{"apiKeyHelper": "/bin/echo key"}"#).unwrap();
    fs::create_dir_all(env.home.join(".claude")).unwrap();
    std::os::unix::fs::symlink(dotfiles.join("settings.json"), env.home.join(".claude/settings.json")).unwrap();
    start(&env, SID);
    assert_eq!(env.state(SID).route()["payer"], "api_key_helper");
    env.saved_turn(SID, 1);
    let settings: Value = serde_json::from_str(&env.call(1).settings).unwrap();
    assert_eq!(settings["apiKeyHelper"], "/bin/echo key", "{settings}");
}
