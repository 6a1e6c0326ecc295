//! A month-like run: ten sessions of twenty turns on average
//! with human gaps, every third ending after a break that outlives the
//! prompt cache, at the defaults against saving every turn, on a virtual clock
//! (`MEMORY_SAVE_DEBUG_CLOCK`, debug builds only), since 200 real turns with
//! idle waits do not fit in CI. The fake `claude` reports what the real API
//! would: a 100k-token prefix read from the cache while it is warm (the
//! parent's or a fork's last request under five minutes ago), written again
//! when it is cold. Spend is priced with the project's own table.
//! docs/cost.md shows the table this prints.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use memory_save::memory::cost::{PriceList, priced};

use crate::support::*;

const MODEL: &str = "claude-opus-4-5-20251101";
const PREFIX_TOKENS: u64 = 100_000;
const SESSIONS: usize = 10;
/// Twenty turns a session on average; a session's end seldom falls on a
/// batch's, so most end with turns to save.
const TURNS: [usize; SESSIONS] = [18, 22, 19, 21, 20, 17, 23, 20, 21, 19];
const TOOL_CALLS: usize = 10;

/// Warm while the last request that read or wrote the prefix is under five
/// minutes old, as the API's cache is.
const FAKE_CLAUDE: &str = r#"#!/usr/bin/env python3
import datetime, json, os, sys
MESSAGE = sys.stdin.read()
now = int(open(os.environ["MEMORY_SAVE_DEBUG_CLOCK"]).read())
args = sys.argv[1:]
if "--resume" not in args:
    # A fresh save: its own request only, about a token per three bytes.
    message = len(MESSAGE.encode())
    with open(os.path.join(os.environ["FAKE_STATE"], "forks"), "a") as log:
        log.write("fresh %d\n" % message)
    print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "{\"ops\":[],\"topics\":[]}",
        "usage": {"input_tokens": 3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 341 + message // 3, "output_tokens": 400},
        "total_cost_usd": 0}))
    sys.exit(0)
sid = args[args.index("--resume") + 1]
last = None
for line in open(os.environ["FAKE_TRANSCRIPT"]):
    entry = json.loads(line)
    if entry.get("type") == "assistant":
        last = entry
at = int(datetime.datetime.fromisoformat(last["timestamp"].replace("Z", "+00:00")).timestamp())
usage = last["message"]["usage"]
prefix = usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"]
mark = os.path.join(os.environ["FAKE_STATE"], "read-" + sid)
if os.path.exists(mark):
    at = max(at, int(open(mark).read()))
tail = usage["output_tokens"] + 600
read, write = (prefix, tail) if 0 <= now - at < 300 else (0, prefix + tail)
open(mark, "w").write(str(now))
with open(os.path.join(os.environ["FAKE_STATE"], "forks"), "a") as log:
    log.write("%s %d %d %d\n" % (sid, now, read, write))
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": "{\"ops\":[],\"topics\":[]}",
    "usage": {"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 400},
    "total_cost_usd": 0}))
"#;

/// Seconds between one turn's end and the next prompt: mostly a minute or
/// so, a fifth of them past the idle flush (two to five minutes), one in
/// ten a break (six to thirty minutes). The same every run.
fn gaps(seed: u64, turns: usize) -> Vec<i64> {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % 1000
    };
    (0..turns)
        .map(|_| match next() {
            0..=699 => 20 + (next() % 80) as i64,
            700..=899 => 130 + (next() % 150) as i64,
            _ => 360 + (next() % 1440) as i64,
        })
        .collect()
}

struct Run {
    forks: usize,
    /// Resumed saves that wrote the whole prefix again.
    cold: usize,
    /// Saves that resumed nothing: their cache had expired at the end.
    fresh: usize,
    usd: f64,
    read: u64,
    write: u64,
    unsaved_at_end: usize,
}

fn month(config: &str) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let clock = tmp.path().join("clock");
    let state = tmp.path().join("fake");
    fs::create_dir_all(&state).unwrap();
    let claude = tmp.path().join("claude");
    fs::write(&claude, FAKE_CLAUDE).unwrap();
    fs::set_permissions(&claude, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let base = Env::new();
    let transcript = base.transcript_path();
    let env = base
        .with_claude(&claude)
        .with_var("MEMORY_SAVE_DEBUG_CLOCK", clock.to_str().unwrap())
        .with_var("FAKE_TRANSCRIPT", transcript.to_str().unwrap())
        .with_var("FAKE_STATE", state.to_str().unwrap());
    env.config_exact(config);
    let mut now: i64 = 1_796_140_800; // 2026-12-01 16:00 UTC
    let set = |at: i64| set_clock(&clock, at);
    let mut unsaved_at_end = 0;
    for (session, &turns) in TURNS.iter().enumerate() {
        let sid = format!("month-session-{session:02}");
        set(now);
        for (turn, gap) in gaps(session as u64 + 1, turns).into_iter().enumerate() {
            env.hook("user-prompt-submit").fixture("UserPromptSubmit.json").session(&sid).run().ok();
            for _ in 0..TOOL_CALLS {
                now += 4;
                set(now);
                // Claude Code writes each tool's result as it comes.
                tool_result(&env, now);
                env.hook("post-tool-use").fixture("PostToolUse-main.json").session(&sid).run().ok();
            }
            now += 20;
            set(now);
            last_request(&env, now);
            env.hook("stop").fixture("Stop.json").session(&sid).run().ok();
            let settled = settle(&env, &sid);
            // Most sessions end half a minute after their last turn; every
            // third after a twenty-minute break, its cache long expired.
            let last_gap = if session % 3 == 2 { 20 * 60 } else { 30 };
            let until = if turn + 1 < turns { gap } else { last_gap };
            now = quiet(&env, &sid, &clock, &settled, now + until);
        }
        env.hook("session-end").fixture("SessionEnd-other.json").session(&sid).run().ok();
        let state = settle(&env, &sid);
        if state.unsaved() > 0 {
            unsaved_at_end += 1;
        }
        // The next session starts some hours later.
        now += 3 * 3600;
    }
    let price = PriceList { overrides: &[] }.price(MODEL).price;
    let records: Vec<Value> = fs::read_to_string(env.mem.join("state/memory-save/saves.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut run = Run { forks: 0, cold: 0, fresh: 0, usd: 0.0, read: 0, write: 0, unsaved_at_end };
    for record in records.iter().filter(|r| !r["usage"].is_null()) {
        let usage = &record["usage"];
        let n = |k: &str| usage[k].as_u64().unwrap();
        run.forks += 1;
        run.read += n("cache_read_input_tokens");
        run.write += n("cache_creation_input_tokens");
        if record["fresh"] == true {
            run.fresh += 1;
        } else if n("cache_read_input_tokens") == 0 {
            run.cold += 1;
        }
        let tokens =
            (n("input_tokens"), n("cache_read_input_tokens"), n("cache_creation_input_tokens"), n("output_tokens"));
        run.usd += priced(tokens, false, &price);
    }
    for record in &records {
        let status = record["status"].as_str().unwrap_or_default();
        assert!(!status.starts_with("error"), "{record}");
    }
    run
}

/// The session's last request, as its transcript records it.
fn last_request(env: &Env, at: i64) {
    let stamp = time::OffsetDateTime::from_unix_timestamp(at)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let line = json!({"type": "assistant", "timestamp": stamp, "message": {"role": "assistant", "model": MODEL, "content": [],
        "usage": {"input_tokens": 5, "cache_read_input_tokens": PREFIX_TOKENS - 1_005, "cache_creation_input_tokens": 1_000, "output_tokens": 1_000}}});
    fs::write(env.transcript_path(), format!("{line}\n")).unwrap();
}

/// A tool's result, appended as Claude Code appends it mid-turn.
fn tool_result(env: &Env, at: i64) {
    let stamp = time::OffsetDateTime::from_unix_timestamp(at)
        .unwrap()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap();
    let line = json!({"type": "user", "timestamp": stamp, "message": {"role": "user", "content": [{"type": "tool_result", "content": "ok"}]}});
    let mut file = fs::OpenOptions::new().create(true).append(true).open(env.transcript_path()).unwrap();
    std::io::Write::write_all(&mut file, format!("{line}\n").as_bytes()).unwrap();
}

/// Lets the session be quiet until `end`: the worker flushes it on its
/// own when its idle flush comes first, and the clock stops there until it
/// has.
fn quiet(env: &Env, sid: &str, clock: &Path, settled: &Session, end: i64) -> i64 {
    if let Some(flush) = settled.held_until().filter(|&at| at <= end) {
        set_clock(clock, flush + 1);
        wait_flushed(env, sid);
    }
    set_clock(clock, end);
    end
}

/// Until no save is asked for or running; the session then.
fn settle(env: &Env, sid: &str) -> Session {
    let mut settled = None;
    wait_until("the session's save to finish", || {
        let s = env.state(sid);
        let done = !s.pending() && s.claimed_since().is_none();
        settled = Some(s);
        done
    });
    settled.unwrap()
}

fn wait_flushed(env: &Env, sid: &str) {
    wait_until("the idle flush", || {
        let s = env.state(sid);
        s.held_until().is_none() && !s.pending() && s.claimed_since().is_none()
    });
}

#[test]
fn a_month_at_the_defaults_costs_under_a_quarter_of_saving_every_turn() {
    // The subscription's default $10 a month would stop every-turn saving
    // mid-run: no budget here, only the cadence is compared.
    // Four months, each on its own bench and clock: at once.
    let [every, at_120, at_240, default] = std::thread::scope(|scope| {
        [
            "save_every_turns = 1\nmax_cost_per_month_usd = \"none\"\n",
            "idle_flush_seconds = 120\nmax_cost_per_month_usd = \"none\"\n",
            "idle_flush_seconds = 240\nmax_cost_per_month_usd = \"none\"\n",
            "max_cost_per_month_usd = \"none\"\n",
        ]
        .map(|config| scope.spawn(move || month(config)))
        .map(|run| run.join().expect("a month's run panicked"))
    });
    let line = |label: &str, r: &Run| {
        format!(
            "| {label} | {} | {} | {} | {} | {} | ${:.2} | {:.1}% | {} |",
            r.forks,
            r.fresh,
            r.cold,
            r.read,
            r.write,
            r.usd,
            r.usd / every.usd * 100.0,
            r.unsaved_at_end
        )
    };
    let table = [
        "| cadence | forks | fresh | cold | cache read | cache write | spend | of every turn | sessions ending unsaved |"
            .to_string(),
        "|---|---|---|---|---|---|---|---|---|".to_string(),
        line("every turn (`save_every_turns = 1`)", &every),
        line("every 5 turns, 120 s idle flush", &at_120),
        line("every 5 turns, 240 s idle flush", &at_240),
        line("the defaults: every 5 turns, 1 h idle flush", &default),
    ];
    let turns: usize = TURNS.iter().sum();
    eprintln!("month-like run, {SESSIONS} sessions, {turns} turns:\n{}", table.join("\n"));
    write_report(&table.join("\n"));
    assert_eq!(every.forks, turns, "every turn saved");
    for run in [&every, &at_120, &at_240, &default] {
        assert_eq!(run.unsaved_at_end, 0, "a session ended with turns unsaved");
        assert_eq!(run.cold, 0, "a save re-wrote the cache");
    }
    // The sessions that end after a break with turns to save are saved
    // from their turns.
    let cold_ends = (0..SESSIONS).filter(|&s| s % 3 == 2 && !TURNS[s].is_multiple_of(5)).count();
    assert_eq!(default.fresh, cold_ends, "{} fresh saves", default.fresh);
    assert!(cold_ends >= 2);
    assert!(default.usd <= 0.25 * every.usd, "the defaults spent {:.2} of every turn's {:.2}", default.usd, every.usd);
    assert!(default.usd < at_240.usd && at_240.usd < at_120.usd, "a later flush flushes less");
}

/// The table, for docs/cost.md: `target/month-run.md`.
fn write_report(table: &str) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    let _ = fs::create_dir_all(&dir);
    let _ = fs::write(Path::new(&dir).join("month-run.md"), format!("{table}\n"));
}
