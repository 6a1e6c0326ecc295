//! The real CLI, continued: the save cadence against every turn (s12), the
//! held turns saved at compaction (s13), the context window (s14, s15), the
//! fork's weight (s16) and a project-local install into a team memory
//! (s18).

use crate::app::{self, App, is_fork, report, wait_for};
use crate::harness;
use crate::scenarios::*;
use crate::standin::{RecordedRequest, Reply, StandIn};
use std::process::Command;
use std::time::{Duration, Instant};

/// Scenario 12: what the default cadence (every 5 turns, after an hour of
/// quiet, at the end) saves against every turn, on a 20-turn interactive
/// session (a `-p` run ends its session each time, and SessionEnd saves what
/// gathered): forks, and the tokens they sent by kind as the stand-in
/// counted them. docs/cost.md leads with this table.
#[test]
fn s12_save_every_five_turns_against_every_turn() {
    let (Some((claude, _g)), Some(())) = (claude_alone(), harness::tmux()) else {
        return;
    };
    let mut figures = Vec::new();
    for every in [1u64, 5] {
        let standin = quiet_standin();
        let app = app_configured(claude.clone(), &standin, "");
        // Every turn, or the defaults as a new install has them.
        app.config_exact(if every == 1 { "save_every_turns = 1\n" } else { "" });
        let (tmux, sid) = start_interactive(&app);
        std::thread::sleep(Duration::from_secs(2));
        for n in 1..=20 {
            let text = format!("cadence turn {n} of 20");
            interactive_turn(&tmux, &standin, &app, &sid, &text);
        }
        app.wait_saved(&sid, 1, SAVE_LIMIT);
        // The session ends: what it held is saved then, and every turn has
        // been read by some save.
        tmux.send_line("/exit");
        wait_for(SAVE_LIMIT, "the session's end and its last save", || {
            let s = app.session_state(&sid);
            let idle = !s.pending() && s.claimed_since().is_none() && s.held_until().is_none();
            (s.ended() && idle).then_some(())
        });
        let f = forks(&standin);
        if every == 1 {
            // The interactive parent with no MEMORY.md (scenario 8 has one).
            let reqs = standin.message_requests();
            let fork_at = reqs.iter().position(is_fork).expect("a fork");
            let parent = reqs[..fork_at].iter().rev().find(|r| !is_fork(r)).unwrap();
            let (raw, without_header) = app::interactive_shares(parent, &reqs[fork_at]);
            report(
                "12 interactive parent, no MEMORY.md",
                "cacheable share raw / without billing header",
                format!("{raw:.4} / {without_header:.4}"),
            );
        }
        let sum =
            |key: fn(&crate::standin::Usage) -> u64| f.iter().filter_map(|r| r.usage.as_ref()).map(key).sum::<u64>();
        let label = if every == 1 { "every turn".to_string() } else { "the default (every 5 turns)".to_string() };
        report(
            "12 save cadence, 20 interactive turns",
            &format!("{label}: forks / input / cache read / cache write / output tokens"),
            format!(
                "{} / {} / {} / {} / {}",
                f.len(),
                sum(|u| u.input_tokens),
                sum(|u| u.cache_read_input_tokens),
                sum(|u| u.cache_creation_input_tokens),
                sum(|u| u.output_tokens)
            ),
        );
        figures.push(f.len());
    }
    // Every turn: one fork per turn, or fewer where turns that ended while
    // a save ran folded into one more. Every five: four saves of the
    // twenty turns, the session's end included: after turns 5, 10, 15 and
    // 20, or, when a turn ended before the worker took the save asked for
    // before it (the save reads that turn too, and the count starts
    // again), fewer in the session and one at its end.
    assert!((10..=20).contains(&figures[0]), "every turn: {} forks", figures[0]);
    assert_eq!(figures[1], 4, "every five turns, the end included");
}

/// Scenario 13: turns held back by `save_every_turns` are saved at
/// PreCompact. The hook copies the transcript before compaction writes its
/// boundary, and the fork resumes that copy (`--resume <file>.jsonl`):
/// Claude Code loads a session from its last boundary on, so resuming the
/// live session, even `--resume-session-at` a message before the boundary,
/// gives the summary instead of the turns once it is written (measured on
/// 2.1.328 and 2.1.332). Both orders are run: the fork at once, and the
/// fork only after the summary is written (both fork slots held until then).
#[test]
fn s13_pre_compact_saves_the_held_turns() {
    let (Some((claude, _g)), Some(())) = (claude_alone(), harness::tmux()) else {
        return;
    };
    for fork_after_summary in [false, true] {
        let standin = quiet_standin();
        let app = app_configured(claude.clone(), &standin, "save_every_turns = 5\nidle_flush_seconds = 600\n");
        let (tmux, sid) = start_interactive(&app);
        std::thread::sleep(Duration::from_secs(2));
        for text in ["HELD-ONE before compaction", "HELD-TWO before compaction"] {
            interactive_turn(&tmux, &standin, &app, &sid, text);
        }
        assert!(forks(&standin).is_empty(), "two turns of five waited");
        let slots = app.state_dir().join("forks");
        std::fs::create_dir_all(&slots).unwrap();
        let held: Vec<std::fs::File> = if fork_after_summary {
            (0..2)
                .map(|n| {
                    let file = std::fs::File::create(slots.join(format!("slot-{n}.lock"))).unwrap();
                    file.lock().unwrap();
                    file
                })
                .collect()
        } else {
            Vec::new()
        };
        tmux.send_line("/compact");
        wait_for(LIMIT, "SessionStart compact", || {
            app.hook_log()
                .iter()
                .any(|h| h["hook_event_name"] == "SessionStart" && h["source"] == "compact")
                .then_some(())
        });
        drop(held);
        let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
        assert_eq!(state.status(), "no change", "the fork failed: {state}");
        let f = forks(&standin);
        assert_eq!(f.len(), 1, "PreCompact asked for one save");
        let text = f[0].all_message_text();
        let held_turns = text.contains("HELD-ONE") && text.contains("HELD-TWO");
        let order = if fork_after_summary { "fork started after the summary" } else { "fork started at once" };
        report("13 PreCompact", &format!("{order}: fork request holds the held turns"), held_turns);
        assert!(held_turns, "{order}: the fork saw the summary, not the turns");
        let messages = f[0].body["messages"].as_array().map_or(0, Vec::len);
        assert!(messages > 2, "the fork resumed the whole copy: {messages} messages");
        // Resumed from a copy, the fork still repeats the parent's last turn.
        let reqs = standin.message_requests();
        let parent = reqs.iter().rev().find(|r| !is_fork(r) && r.last_user_text().contains("HELD-TWO")).unwrap();
        let (raw, without_header) = app::interactive_shares(parent, &f[0]);
        report(
            "13 PreCompact",
            &format!("{order}: cacheable share raw / without billing header"),
            format!("{raw:.4} / {without_header:.4}"),
        );
        tmux.send_line("/exit");
    }
}

/// Scenario 14: a fork whose request passes the window (the stand-in
/// answers it with the API's 400 "prompt is too long") fails at once: one
/// request, never a summarising one after it (the fork runs with
/// DISABLE_COMPACT=1; without it the CLI compacts itself on every save).
#[test]
fn s14_an_over_window_fork_fails_at_once_and_never_compacts() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin =
        StandIn::start(script(|_| Reply::Error(400, "prompt is too long: 210000 tokens > 200000 maximum".into())));
    let app = App::new(claude, &standin);
    let sid = tool_turn(&app, "TOOL parent turn");
    let parent_requests = standin.message_requests().len();
    let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
    let status = state.status().to_string();
    assert!(
        status.starts_with("error: fork failed") && status.to_lowercase().contains("prompt is too long"),
        "{state}"
    );
    let after: Vec<_> = standin.message_requests().into_iter().skip(parent_requests).collect();
    let sizes: Vec<usize> = after.iter().map(|r| r.body.to_string().len()).collect();
    report("14 over-window fork", "requests after the parent (bytes each)", format!("{} ({sizes:?})", after.len()));
    assert_eq!(after.len(), 1, "a fork past its window must not summarise: {sizes:?}");
    assert!(is_fork(&after[0]));
}

/// Scenario 15: a session on the 1M-token window (`--model
/// 'claude-sonnet-4-5[1m]'`). The transcript's `message.model` drops the
/// `[1m]`, its `requestedModel` keeps it; the fork is given the latter, so
/// its request asks for the same window as the parent's.
#[test]
fn s15_a_1m_window_session_forks_with_its_window() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = StandIn::start(script(|_| Reply::text(NO_EDITS)));
    let app = App::new(claude, &standin);
    let run =
        app.bench.print("TOOL parent turn", &["--allowedTools", "Bash", "--model", "claude-sonnet-4-5[1m]"], LIMIT);
    let sid = app::session_of(&run);
    app.wait_saved(&sid, 1, SAVE_LIMIT);
    let reqs = standin.message_requests();
    let fork_at = reqs.iter().position(is_fork).expect("a fork request");
    let parent = reqs[..fork_at].iter().rev().find(|r| !is_fork(r)).unwrap();
    let fork = &reqs[fork_at];
    let beta = |r: &RecordedRequest| r.header("anthropic-beta").unwrap_or_default().to_string();
    report(
        "15 1M window",
        "parent / fork model and anthropic-beta",
        format!("{} {} / {} {}", parent.model(), beta(parent), fork.model(), beta(fork)),
    );
    assert_eq!(fork.model(), parent.model());
    assert!(beta(parent).contains("context-1m"), "the parent did not ask for the 1M window: {}", beta(parent));
    assert_eq!(beta(fork), beta(parent), "the fork asked for another window");
}

/// Scenario 16: the fork's own weight. Per save, as the parent's transcript
/// grows (0.1, 1, 5 and 20 MB of assistant text): the fork's wall time, the
/// time from the CLI's exit (its Stop) to the written save, and the fork's
/// peak memory (a python3 wrapper reads the child's ru_maxrss). Then eight
/// sessions stopping at once, which the two fork slots queue.
#[test]
fn s16_the_forks_weight() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let wrapper_dir = tempfile::tempdir().unwrap();
    let wrapper = wrapper_dir.path().join("claude-rss");
    std::fs::write(
        &wrapper,
        format!(
            "#!/usr/bin/env python3\nimport os, resource, subprocess, sys\ncode = subprocess.call([{:?}] + sys.argv[1:])\nkb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\nopen(os.path.join({:?}, 'rss-%d' % os.getpid()), 'w').write(str(kb))\nsys.exit(code)\n",
            claude.display().to_string(),
            wrapper_dir.path().display().to_string()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let rss_mb = || -> Vec<f64> {
        std::fs::read_dir(wrapper_dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("rss-"))
            .filter_map(|e| std::fs::read_to_string(e.path()).ok()?.trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
            .collect()
    };
    for mb in [0.1f64, 1.0, 5.0, 20.0] {
        let bytes = (mb * 1024.0 * 1024.0) as usize;
        let standin = StandIn::start(
            move |req| {
                if is_fork(req) { Reply::text(NO_EDITS) } else { Reply::text("x".repeat(bytes)) }
            },
        );
        let mut app = App::new(claude.clone(), &standin);
        app.bench.extra_env.push(("MEMORY_SAVE_CLAUDE".into(), wrapper.display().to_string()));
        for entry in std::fs::read_dir(wrapper_dir.path()).unwrap().flatten() {
            if entry.file_name().to_string_lossy().starts_with("rss-") {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        let run = app.bench.print("a turn with a long answer", &[], LIMIT);
        let stopped = Instant::now();
        let sid = app::session_of(&run);
        let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
        let to_written = stopped.elapsed();
        assert_eq!(state.status(), "no change", "{mb} MB: {state}");
        let transcript_mb = std::fs::metadata(app.transcript(&sid).unwrap()).unwrap().len() as f64 / 1048576.0;
        let saved = app.saves();
        let fork_ms = saved.last().and_then(|r| r["usage"]["duration_ms"].as_u64()).unwrap_or(0);
        let rss = rss_mb().into_iter().fold(0.0, f64::max);
        report(
            "16 fork weight",
            &format!("{transcript_mb:.1} MB transcript: fork s / exit to written s / fork peak MB"),
            format!("{:.2} / {:.2} / {rss:.0}", fork_ms as f64 / 1000.0, to_written.as_secs_f64()),
        );
        assert!(rss > 0.0, "{mb} MB: no memory figure");
    }
    // Eight sessions of one project stop at once.
    let standin = quiet_standin();
    let mut app = App::new(claude, &standin);
    app.bench.extra_env.push(("MEMORY_SAVE_CLAUDE".into(), wrapper.display().to_string()));
    let app = &app;
    let sids: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = (0..8).map(|n| s.spawn(move || tool_turn(app, &format!("TOOL session {n}")))).collect();
        runs.into_iter().map(|r| r.join().unwrap()).collect()
    });
    let started = Instant::now();
    for sid in &sids {
        app.wait_saved(sid, 1, SAVE_LIMIT);
    }
    report(
        "16 fork weight",
        "eight sessions at once: all saved after (s)",
        format!("{:.2}", started.elapsed().as_secs_f64()),
    );
}

/// Scenario 18: issues 11 and 12 on the real CLI. Installed for the project
/// only (`install --project`: `.claude/settings.local.json`, no user
/// settings at all) and with the memory kept in the repository (`team
/// init`): the CLI runs the project-local hooks, the save writes the team
/// file in the working tree and commits nothing, and the next session's
/// request carries the team memory's block.
#[test]
fn s18_a_project_local_install_saves_into_the_team_memory() {
    let Some((claude, _g)) = claude_alone() else {
        return;
    };
    let standin = StandIn::start(script(|_| Reply::text(add_op(BULLET))));
    let bench = app::bench_with_claude_on_path(claude, &standin);
    for args in [&["install", "--project"][..], &["team", "init"][..]] {
        let out = Command::new(app::BIN)
            .args(args)
            .current_dir(&bench.project)
            .env_clear()
            .env("HOME", bench.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let user = std::fs::read_to_string(bench.home().join(".claude/settings.json")).unwrap_or_default();
    assert!(!user.contains("memory-save"), "no hook in the user settings: {user}");
    let app = App { bench };
    app.config("");
    let sid = tool_turn(&app, "TOOL team session");
    let state = app.wait_saved(&sid, 1, SAVE_LIMIT);
    assert_eq!(state.status(), "+1", "{state}");
    let team = std::fs::read_to_string(app.bench.project.join(".claude/memory/MEMORY.md")).unwrap();
    assert!(team.contains(BULLET), "{team}");
    assert!(app.memory().is_none(), "the personal memory stays unwritten");
    let commits =
        Command::new("git").args(["rev-list", "--all", "--count"]).current_dir(&app.bench.project).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&commits.stdout).trim(), "0", "a save never commits");

    let before = standin.message_requests().len();
    app::session_of(&app.bench.print("second team session", &[], LIMIT));
    let text = standin.message_requests()[before].all_message_text();
    let header = "[PROJECT MEMORY: app · team memory in .claude/memory/MEMORY.md]";
    assert!(text.contains(header) && text.contains(BULLET), "no team block: {text}");
    report("18 project-local install, team memory", "saved / team block next session / commits", "+1 / yes / none");
}
