//! Who pays, and what a refusal looks like, on the real CLI: how
//! `claude -p --output-format json` renders the API's billing and
//! rate-limit refusals for a subscription login, which credential it sends
//! for each mix of auth settings, and whether `CLAUDE_CODE_DISABLE_AUTO_MEMORY`
//! changes a fork's request. Each test prints what it saw (`--nocapture`)
//! and asserts the parts that held on every listed release.

use crate::app::serial;
use crate::harness::{self, Bench, Run};
use crate::standin::{self, RecordedRequest, Reply, StandIn};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Bound of one CLI run here; a refusal ends a run in well under a second.
const LIMIT: Duration = Duration::from_secs(60);
const OAUTH_TOKEN: &str = "e2e-oauth-token";
const AUTH_TOKEN: &str = "e2e-auth-token";
const HELPER_KEY: &str = "sk-ant-e2e-helper";
/// The `anthropic-beta` flag the CLI adds for a subscription (OAuth) login.
const OAUTH_BETA: &str = "oauth-2025-04-20";
const RATE_LIMITED: &str = "This request would exceed your account's rate limit. Please try again later.";

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// The JSON object a run printed, or `null`.
fn output(run: &Run) -> Value {
    run.stdout.lines().rev().find_map(|l| serde_json::from_str(l).ok()).unwrap_or(Value::Null)
}

/// `anthropic-ratelimit-unified-*` headers of a rejected request: the
/// representative claim, the reset epoch, and the overage (usage credits)
/// status with its disabled reason.
fn unified(claim: Option<&str>, reset: Option<u64>, overage: Option<(&str, Option<&str>)>) -> Vec<(String, String)> {
    let mut h = vec![("anthropic-ratelimit-unified-status".to_string(), "rejected".to_string())];
    if let Some(c) = claim {
        h.push(("anthropic-ratelimit-unified-representative-claim".into(), c.into()));
    }
    if let Some(r) = reset {
        h.push(("anthropic-ratelimit-unified-reset".into(), r.to_string()));
    }
    if let Some((status, reason)) = overage {
        h.push(("anthropic-ratelimit-unified-overage-status".into(), status.into()));
        if let Some(reason) = reason {
            h.push(("anthropic-ratelimit-unified-overage-disabled-reason".into(), reason.into()));
        }
    }
    h
}

/// `status` with `headers` and the API's error body.
fn refused(status: u16, headers: Vec<(String, String)>, error_type: &str, message: &str) -> Reply {
    Reply::Refused {
        status,
        headers,
        body: json!({ "type": "error", "error": { "type": error_type, "message": message } }),
    }
}

/// A 429 `rate_limit_error` with `headers`.
fn rate_limited(headers: Vec<(String, String)>) -> Reply {
    refused(429, headers, "rate_limit_error", RATE_LIMITED)
}

/// What a refused run must print as `result`.
enum Expect {
    Exact(&'static str),
    Prefix(&'static str),
}

/// One refusal: the stand-in's answer to every model turn, the run's extra
/// arguments and variables, and what the CLI must make of it.
struct Case {
    name: &'static str,
    reply: Reply,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    status: u16,
    result: Expect,
    requests: usize,
}

/// `claude -p --output-format json "hi"` as a subscription login
/// (`CLAUDE_CODE_OAUTH_TOKEN`, any text works offline, and no
/// `ANTHROPIC_API_KEY`) against a stand-in that answers with `case.reply`;
/// prints the whole outcome and asserts the stable parts.
fn check_refusal(claude: &Path, case: Case) {
    let reply = case.reply.clone();
    let standin = StandIn::start(move |_| reply.clone());
    let mut bench = Bench::new(claude.to_path_buf(), standin.base_url());
    bench.removed_env.push("ANTHROPIC_API_KEY".into());
    bench.extra_env.push(("CLAUDE_CODE_OAUTH_TOKEN".into(), OAUTH_TOKEN.into()));
    bench.extra_env.extend(case.env.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let start = Instant::now();
    let run = bench.print("hi", case.args, LIMIT);
    let out = output(&run);
    let reqs = standin.message_requests();
    // Each request: when it came, its model, and whether it asked for the 1M context.
    let at: Vec<String> = reqs
        .iter()
        .map(|r| {
            let long = r.header("anthropic-beta").is_some_and(|b| b.contains("context-1m"));
            format!(
                "{:.1}s {}{} {} msgs, {} tools, {} bytes",
                r.at.duration_since(start).as_secs_f64(),
                r.model(),
                if long { " +context-1m" } else { "" },
                r.messages().len(),
                r.tool_names().len(),
                r.body.to_string().len(),
            )
        })
        .collect();
    eprintln!(
        "[{}] {}\n  exit {:?} after {:.1}s; {} request(s): {at:?}\n  result: {}\n  is_error={} subtype={} api_error_status={} api_error_type={} terminal_reason={} total_cost_usd={}",
        harness::version(),
        case.name,
        run.status.and_then(|s| s.code()),
        run.elapsed.as_secs_f64(),
        reqs.len(),
        out["result"],
        out["is_error"],
        out["subtype"],
        out["api_error_status"],
        out["api_error_type"],
        out["terminal_reason"],
        out["total_cost_usd"],
    );
    let what = format!("{}: {out} {run:?}", case.name);
    assert_eq!(run.status.and_then(|s| s.code()), Some(1), "{what}");
    assert_eq!(out["is_error"], true, "{what}");
    // Not an error subtype: only `is_error` tells a refusal from an answer.
    assert_eq!(out["subtype"], "success", "{what}");
    assert_eq!(out["api_error_status"], case.status, "{what}");
    assert_eq!(out["terminal_reason"], "api_error", "{what}");
    assert_eq!(out["total_cost_usd"], 0, "{what}");
    let result = out["result"].as_str().unwrap_or("");
    match case.result {
        Expect::Exact(text) => assert_eq!(result, text, "{what}"),
        Expect::Prefix(text) => assert!(result.starts_with(text), "{what}"),
    }
    assert_eq!(reqs.len(), case.requests, "{what}");
    assert!(reqs.iter().all(|r| r.header("authorization") == Some(&format!("Bearer {OAUTH_TOKEN}"))), "{what}");
}

/// The refusals a subscription login can meet, and the `result` each
/// prints. A plan limit, a used-up usage credit and a refused long context
/// all end the run after one request, with exit 1, `is_error: true`,
/// `subtype: "success"`, `terminal_reason: "api_error"` and no cost; only
/// a 429 without `anthropic-ratelimit-unified-*` headers is retried
/// (10 retries over about 3 minutes by default, measured; bounded here with
/// `CLAUDE_CODE_MAX_RETRIES`).
#[test]
fn refusals_render() {
    let Some(claude) = harness::claude() else {
        return;
    };
    let _serial = serial();
    let (hour, days) = (now() + 3600, now() + 3 * 86400);
    let out_of_credits = Some(("rejected", Some("out_of_credits")));
    let credits_required = json!({ "type": "error", "error": {
        "type": "rate_limit_error",
        "message": "Usage credits required",
        "details": { "error_code": "credits_required", "disabled_reason": "out_of_credits" } } });
    let long_context = "Usage credits are required for long context requests.";
    let low_balance = "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.";
    let temporary = "API Error: Server is temporarily limiting requests (not your usage limit) · ";
    let cases = [
        Case {
            name: "429 five_hour rejected, reset in 1 h",
            reply: rate_limited(unified(Some("five_hour"), Some(hour), None)),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You've hit your 5-hour limit · resets "),
            requests: 1,
        },
        Case {
            name: "429 seven_day rejected, reset in 3 days",
            reply: rate_limited(unified(Some("seven_day"), Some(days), None)),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You've hit your weekly limit · resets "),
            requests: 1,
        },
        Case {
            name: "429 five_hour rejected + overage rejected out_of_credits",
            reply: rate_limited(unified(Some("five_hour"), Some(hour), out_of_credits)),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You've hit your 5-hour limit · resets "),
            requests: 1,
        },
        Case {
            name: "429 overage rejected out_of_credits, no claim, reset",
            reply: rate_limited(unified(None, Some(hour), out_of_credits)),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You're out of usage credits · resets "),
            requests: 1,
        },
        Case {
            name: "429 overage rejected out_of_credits, no claim, no reset",
            reply: rate_limited(unified(None, None, out_of_credits)),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Exact("You're out of usage credits"),
            requests: 1,
        },
        Case {
            name: "429 overage rejected, no reason, no claim",
            reply: rate_limited(unified(None, Some(hour), Some(("rejected", None)))),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You've hit your limit · resets "),
            requests: 1,
        },
        Case {
            name: "429 overage rejected org_level_disabled",
            reply: rate_limited(unified(None, Some(hour), Some(("rejected", Some("org_level_disabled"))))),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You've hit your limit · resets "),
            requests: 1,
        },
        Case {
            name: "429 overage rejected org_spend_cap_reached",
            reply: rate_limited(unified(None, Some(hour), Some(("rejected", Some("org_spend_cap_reached"))))),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You've hit your individual spend limit · "),
            requests: 1,
        },
        Case {
            name: "429 overage rejected member_zero_credit_limit",
            reply: rate_limited(unified(None, Some(hour), Some(("rejected", Some("member_zero_credit_limit"))))),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("Your usage allocation has been disabled by your admin"),
            requests: 1,
        },
        Case {
            name: "429 overage rejected seat_tier_zero_credit_limit",
            reply: rate_limited(unified(None, Some(hour), Some(("rejected", Some("seat_tier_zero_credit_limit"))))),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Exact("Your seat type doesn't include usage credits"),
            requests: 1,
        },
        Case {
            name: "429 overage rejected org_service_level_disabled",
            reply: rate_limited(unified(None, Some(hour), Some(("rejected", Some("org_service_level_disabled"))))),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Exact("This service is disabled for your org"),
            requests: 1,
        },
        Case {
            name: "429 body error_code credits_required, no headers",
            reply: Reply::Refused { status: 429, headers: vec![], body: credits_required.clone() },
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Exact(
                "API Error: Server is temporarily limiting requests (not your usage limit) · Usage credits required",
            ),
            requests: 1,
        },
        Case {
            name: "429 body error_code credits_required + overage rejected out_of_credits",
            reply: Reply::Refused {
                status: 429,
                headers: unified(None, Some(hour), out_of_credits),
                body: credits_required,
            },
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("You're out of usage credits · resets "),
            requests: 1,
        },
        Case {
            name: "400 credit balance too low",
            reply: refused(400, vec![], "invalid_request_error", low_balance),
            args: &[],
            env: &[],
            status: 400,
            result: Expect::Exact("Credit balance is too low"),
            requests: 1,
        },
        Case {
            name: "429 rate_limit_error, no unified headers, CLAUDE_CODE_MAX_RETRIES=2",
            reply: rate_limited(vec![]),
            args: &[],
            env: &[("CLAUDE_CODE_MAX_RETRIES", "2")],
            status: 429,
            result: Expect::Exact(
                "API Error: Server is temporarily limiting requests (not your usage limit) · This request would exceed your account's rate limit. Please try again later.",
            ),
            requests: 3,
        },
        Case {
            name: "429 rate_limit_error, retry-after: 3, CLAUDE_CODE_MAX_RETRIES=1",
            reply: rate_limited(vec![("retry-after".into(), "3".into())]),
            args: &[],
            env: &[("CLAUDE_CODE_MAX_RETRIES", "1")],
            status: 429,
            result: Expect::Prefix(temporary),
            requests: 2,
        },
        Case {
            // Not retried: the header is honoured.
            name: "429 rate_limit_error, x-should-retry: false, CLAUDE_CODE_MAX_RETRIES=2",
            reply: rate_limited(vec![("x-should-retry".into(), "false".into())]),
            args: &[],
            env: &[("CLAUDE_CODE_MAX_RETRIES", "2")],
            status: 429,
            result: Expect::Prefix(temporary),
            requests: 1,
        },
        Case {
            name: "429 long context credits, --model claude-sonnet-4-5[1m]",
            reply: refused(429, vec![], "rate_limit_error", long_context),
            args: &["--model", "claude-sonnet-4-5[1m]"],
            env: &[],
            status: 429,
            result: Expect::Prefix("API Error: Usage credits required for 1M context · "),
            requests: 1,
        },
        Case {
            name: "429 'Extra usage is required for long context', --model claude-sonnet-4-5[1m]",
            reply: refused(429, vec![], "rate_limit_error", "Extra usage is required for long context requests."),
            args: &["--model", "claude-sonnet-4-5[1m]"],
            env: &[],
            status: 429,
            result: Expect::Prefix("API Error: Usage credits required for 1M context · "),
            requests: 1,
        },
        Case {
            name: "429 long context credits, default model",
            reply: refused(429, vec![], "rate_limit_error", long_context),
            args: &[],
            env: &[],
            status: 429,
            result: Expect::Prefix("API Error: Usage credits required for 1M context · "),
            requests: 1,
        },
        Case {
            name: "400 long context credits, --model claude-sonnet-4-5[1m]",
            reply: refused(400, vec![], "invalid_request_error", long_context),
            args: &["--model", "claude-sonnet-4-5[1m]"],
            env: &[],
            status: 400,
            result: Expect::Exact("API Error: 400 Usage credits are required for long context requests."),
            requests: 6,
        },
    ];
    for case in cases {
        check_refusal(&claude, case);
    }
}

/// Which credential reaches the API for each mix of ANTHROPIC_API_KEY,
/// ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN and an `apiKeyHelper` in a
/// `--settings` file (the fork's way of passing it).
#[test]
fn auth_headers() {
    let Some(claude) = harness::claude() else {
        return;
    };
    let _serial = serial();
    // (api key, auth token, oauth token, helper) -> what the stand-in saw.
    let api = format!("x-api-key {}", harness::API_KEY);
    let helper_key = format!("x-api-key {HELPER_KEY}");
    let expected = |api_key: bool, auth_token: bool, oauth: bool, helper: bool| -> Option<String> {
        let x_api_key = if api_key {
            Some(api.clone())
        } else if helper {
            Some(helper_key.clone())
        } else {
            None
        };
        let bearer = if auth_token {
            Some(format!("Bearer {AUTH_TOKEN}"))
        } else if helper {
            Some(format!("Bearer {HELPER_KEY}"))
        } else if oauth && !api_key {
            Some(format!("Bearer {OAUTH_TOKEN} ({OAUTH_BETA})"))
        } else {
            None
        };
        let parts: Vec<String> = x_api_key.into_iter().chain(bearer.map(|b| format!("authorization {b}"))).collect();
        if parts.is_empty() { None } else { Some(parts.join(" + ")) }
    };
    eprintln!(
        "[{}] | ANTHROPIC_API_KEY | ANTHROPIC_AUTH_TOKEN | CLAUDE_CODE_OAUTH_TOKEN | apiKeyHelper | sent | outcome |",
        harness::version()
    );
    let mut failures = Vec::new();
    for mask in 0..16u8 {
        let (api_key, auth_token, oauth, helper) = (mask & 8 != 0, mask & 4 != 0, mask & 2 != 0, mask & 1 != 0);
        let standin = StandIn::start(|_| Reply::text("ok"));
        let mut bench = Bench::new(claude.clone(), standin.base_url());
        if !api_key {
            bench.removed_env.push("ANTHROPIC_API_KEY".into());
        }
        if auth_token {
            bench.extra_env.push(("ANTHROPIC_AUTH_TOKEN".into(), AUTH_TOKEN.into()));
        }
        if oauth {
            bench.extra_env.push(("CLAUDE_CODE_OAUTH_TOKEN".into(), OAUTH_TOKEN.into()));
        }
        let mut args: Vec<String> = Vec::new();
        if helper {
            let script = bench.home().join("key-helper.sh");
            std::fs::write(&script, format!("#!/bin/sh\necho {HELPER_KEY}\n")).unwrap();
            let mut perm = std::fs::metadata(&script).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
            std::fs::set_permissions(&script, perm).unwrap();
            let settings = bench.home().join("helper-settings.json");
            std::fs::write(&settings, json!({ "apiKeyHelper": script }).to_string()).unwrap();
            args.extend(["--settings".into(), settings.display().to_string()]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = bench.print("hi", &args, LIMIT);
        let reqs = standin.message_requests();
        let seen = reqs.first().map(credential);
        let out = output(&run);
        let row = format!(
            "| {} | {} | {} | {} | {} | exit {:?}, {} request(s), result {} |",
            yn(api_key),
            yn(auth_token),
            yn(oauth),
            yn(helper),
            seen.as_deref().unwrap_or("no request"),
            run.status.and_then(|s| s.code()),
            reqs.len(),
            out["result"],
        );
        eprintln!("[{}] {row}", harness::version());
        // memory-save's own reading of the same environment, as its
        // SessionStart records it, must name the headers the CLI sent.
        let route = recorded_route(&bench, helper.then(|| bench.home().join("key-helper.sh")));
        let agrees = match (route["header"].as_str(), &seen) {
            (Some("x_api_key"), Some(seen)) => seen.starts_with("x-api-key") && !seen.contains("authorization"),
            (Some("bearer"), Some(seen)) => seen.starts_with("authorization"),
            (Some("both"), Some(seen)) => seen.starts_with("x-api-key") && seen.contains("authorization"),
            // Not logged in: the CLI sent nothing; a real machine's stored
            // login would be a subscription's Bearer.
            (Some("bearer"), None) => route["payer"] == "gateway",
            _ => false,
        };
        if !agrees {
            failures.push(format!("{row} but memory-save recorded {route}"));
        }
        let want = expected(api_key, auth_token, oauth, helper);
        let ok = match &want {
            Some(_) => run.success() && out["result"] == "ok" && reqs.len() == 1 && seen == want,
            // Nothing to authenticate with: refused before any request.
            None => {
                run.status.and_then(|s| s.code()) == Some(1)
                    && reqs.is_empty()
                    && out["is_error"] == true
                    && out["result"].as_str().is_some_and(|r| r.starts_with("Not logged in"))
            }
        };
        if !ok {
            failures.push(format!("{row} expected {want:?}"));
        }
    }
    assert!(failures.is_empty(), "unexpected credentials:\n{}", failures.join("\n"));
}

/// The flags src/claude/fork.rs gives every fork after what it resumes
/// (the model aside).
fn fork_flags(settings: &str) -> Vec<&str> {
    vec![
        "--no-session-persistence",
        "--setting-sources",
        "",
        "--settings",
        settings,
        "--permission-mode",
        "dontAsk",
        "--max-turns",
        "1",
        "--output-format",
        "json",
    ]
}

/// The route memory-save's SessionStart records for a session with the
/// bench's environment (the helper, if any, in the user's settings, where
/// the fork's settings come from).
fn recorded_route(bench: &Bench, helper: Option<std::path::PathBuf>) -> Value {
    if let Some(helper) = helper {
        let dir = bench.home().join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("settings.json"), json!({ "apiKeyHelper": helper }).to_string()).unwrap();
    }
    let sid = "0b4f1c2e-0000-4000-8000-00000000e2e1";
    let input = json!({"session_id": sid, "transcript_path": bench.home().join("t.jsonl"), "cwd": bench.home(),
        "hook_event_name": "SessionStart", "source": "startup"});
    let mut cmd = std::process::Command::new(crate::app::BIN);
    cmd.args(["hook", "session-start", "--part", "1"]).env_clear().envs(bench.env_pairs());
    cmd.env("MEMORY_SAVE_HOME", bench.home().join(".cli-tweaks"));
    let mut child = cmd.stdin(std::process::Stdio::piped()).stdout(std::process::Stdio::null()).spawn().unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    assert!(child.wait().unwrap().success());
    let listed = std::process::Command::new(crate::app::BIN)
        .args(["sessions", "--json"])
        .env_clear()
        .envs(bench.env_pairs())
        .env("MEMORY_SAVE_HOME", bench.home().join(".cli-tweaks"))
        .output()
        .unwrap();
    assert!(listed.status.success(), "sessions: {}", String::from_utf8_lossy(&listed.stderr));
    crate::session::Session::find(&String::from_utf8_lossy(&listed.stdout), sid).route().clone()
}

fn yn(b: bool) -> &'static str {
    if b { "set" } else { "-" }
}

/// The credential a request carried: `x-api-key <v>`, `authorization
/// <v>`, or both; a bearer with the OAuth beta flag is marked as such.
fn credential(req: &RecordedRequest) -> String {
    let mut parts = Vec::new();
    if let Some(k) = req.header("x-api-key") {
        parts.push(format!("x-api-key {k}"));
    }
    if let Some(a) = req.header("authorization") {
        let oauth = req.header("anthropic-beta").is_some_and(|b| b.split(',').any(|f| f.trim() == OAUTH_BETA));
        parts.push(if oauth { format!("authorization {a} ({OAUTH_BETA})") } else { format!("authorization {a}") });
    }
    if parts.is_empty() { "none".into() } else { parts.join(" + ") }
}

/// Does `CLAUDE_CODE_DISABLE_AUTO_MEMORY=1` on the fork change its request?
/// Two `-p` parents in one project, auto memory on and off (it adds a
/// MEMORY.md section to the parent's system prompt), then the fork of
/// src/claude/fork.rs `arguments` with and without the variable. In all
/// four the fork's system prompt (past the billing header), tools and
/// earlier messages equal the parent's last request, in one request: a
/// resumed session keeps the system prompt it was started with.
#[test]
fn fork_auto_memory() {
    const MARKER: &str = "E2E-AUTOMEM-FORK";
    const OFF: (&str, &str) = ("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1");
    let Some(claude) = harness::claude() else {
        return;
    };
    let _serial = serial();
    let standin = StandIn::start(|req| {
        if req.last_user_text().contains(MARKER) {
            Reply::text(r#"{"ops":[],"topics":[]}"#)
        } else {
            Reply::text("parent done")
        }
    });
    let mut bench = Bench::new(claude, standin.base_url());
    let settings = bench.home().join("fork-settings.json");
    std::fs::write(&settings, json!({ "disableAllHooks": true }).to_string()).unwrap();
    let settings = settings.display().to_string();

    let mut parents: Vec<(String, RecordedRequest)> = Vec::new();
    for parent_off in [false, true] {
        bench.extra_env = if parent_off { vec![(OFF.0.into(), OFF.1.into())] } else { vec![] };
        let before = standin.message_requests().len();
        let parent = bench.print("parent turn", &[], LIMIT);
        assert!(parent.success(), "{parent:?}");
        let reqs = standin.message_requests();
        assert_eq!(reqs.len() - before, 1, "a plain -p turn is one request");
        let last = reqs.last().unwrap().clone();
        eprintln!(
            "[{}] parent with auto memory {}: system {} bytes, mentions MEMORY.md: {}",
            harness::version(),
            on_off(!parent_off),
            last.body["system"].to_string().len(),
            last.body["system"].to_string().contains("MEMORY.md"),
        );
        parents.push((parent.json()["session_id"].as_str().unwrap().to_string(), last));
    }
    let (on, off) = (&parents[0].1, &parents[1].1);
    assert!(on.body["system"].to_string().contains("MEMORY.md"), "auto memory on: the system prompt names MEMORY.md");
    assert!(!off.body["system"].to_string().contains("MEMORY.md"), "auto memory off: no MEMORY.md section");
    assert_eq!(on.body["tools"], off.body["tools"], "auto memory changes no tool");
    let (a, b) = (on.body["system"].to_string(), off.body["system"].to_string());
    let n = standin::common_prefix_len(&a, &b);
    eprintln!("  the parents' system prompts part at byte {n}: on …{:?}…\n  off …{:?}…", around(&a, n), around(&b, n));

    // Why: the transcript keeps the system prompt it was started with (an
    // `attachment` of type `prompt_snapshot`), and a resumed run sends that.
    for (parent_off, (sid, _)) in [false, true].into_iter().zip(&parents) {
        let transcript = find_transcript(bench.home(), sid).expect("the parent's transcript");
        let text = std::fs::read_to_string(&transcript).unwrap();
        let memory = text.contains("You have a persistent file-based memory");
        eprintln!(
            "  transcript of the parent with auto memory {}: prompt_snapshot {}, Memory section {memory}",
            on_off(!parent_off),
            text.contains(r#""type":"prompt_snapshot""#),
        );
        assert!(text.contains(r#""type":"prompt_snapshot""#));
        assert_eq!(memory, !parent_off);
    }
    // A fresh run with the fork's flags (no --resume) and the variable unset
    // has the Memory section: `--setting-sources ""` leaves auto memory on.
    bench.extra_env = vec![("DISABLE_COMPACT".into(), "1".into())];
    let before = standin.message_requests().len();
    let fresh = bench.run(&[&["-p"][..], &fork_flags(&settings)].concat(), Some(&format!("{MARKER} fresh")), LIMIT);
    assert!(fresh.success(), "{fresh:?}");
    let reqs = standin.message_requests();
    let fresh_memory = reqs.last().unwrap().body["system"].to_string().contains("MEMORY.md");
    eprintln!(
        "[{}] a fresh run with the fork's flags: {} request(s), system mentions MEMORY.md: {fresh_memory}",
        harness::version(),
        reqs.len() - before,
    );
    assert!(fresh_memory);

    for (parent_off, (sid, parent_last)) in [false, true].into_iter().zip(&parents) {
        // fork.rs resumes the session id, or a copy of the transcript taken
        // at PreCompact (a path ending in .jsonl): both ways here.
        let copy = bench.home().join(format!("{sid}.1.transcript.jsonl"));
        std::fs::copy(find_transcript(bench.home(), sid).unwrap(), &copy).unwrap();
        let copy = copy.display().to_string();
        for (fork_off, resume) in [(false, sid), (true, sid), (false, &copy), (true, &copy)] {
            bench.extra_env = vec![("DISABLE_COMPACT".into(), "1".into())];
            if fork_off {
                bench.extra_env.push((OFF.0.into(), OFF.1.into()));
            }
            let before = standin.message_requests().len();
            let model = format!("--model={}", parent_last.model());
            let fork = bench.run(
                &[&["-p", "--resume", resume, "--fork-session"][..], &fork_flags(&settings), &[&model]].concat(),
                Some(&format!("{MARKER} what should the project remember?")),
                LIMIT,
            );
            assert!(fork.success(), "{fork:?}");
            let reqs = standin.message_requests();
            let forks = &reqs[before..];
            let f = forks.last().unwrap();
            let system = |r: &RecordedRequest| r.body["system"].as_array().map(|a| a[1..].to_vec());
            let system_eq = system(parent_last) == system(f);
            let tools_eq = parent_last.body["tools"] == f.body["tools"];
            let (pm, fm) = (parent_last.messages(), f.messages());
            let messages_eq = fm.len() > pm.len() && fm[..pm.len() - 1] == pm[..pm.len() - 1];
            let (pt, ft) = (standin::prompt_text(&parent_last.body), standin::prompt_text(&f.body));
            let share = standin::common_prefix_len(&pt, &ft) as f64 / ft.len() as f64;
            eprintln!(
                "[{}] parent auto memory {}, fork of the {} {} {}=1: {} request(s); system[1..] equal {system_eq}, tools equal {tools_eq}, earlier messages equal {messages_eq}; common prefix with the parent's last request {share:.3} of {} bytes",
                harness::version(),
                on_off(!parent_off),
                if resume == sid { "session id" } else { "transcript copy" },
                if fork_off { "with" } else { "without" },
                OFF.0,
                forks.len(),
                ft.len(),
            );
            let what = format!("parent auto memory {}, fork_off {fork_off}, resume {resume}", on_off(!parent_off));
            assert_eq!(forks.len(), 1, "{what}");
            assert!(system_eq && tools_eq && messages_eq, "{what}");
            assert!(share > 0.95, "{what}: {share}");
        }
    }
}

/// `~/.claude/projects/*/<sid>.jsonl`.
fn find_transcript(home: &Path, sid: &str) -> Option<std::path::PathBuf> {
    std::fs::read_dir(home.join(".claude/projects"))
        .ok()?
        .filter_map(Result::ok)
        .map(|d| d.path().join(format!("{sid}.jsonl")))
        .find(|p| p.is_file())
}

fn on_off(b: bool) -> &'static str {
    if b { "on" } else { "off" }
}

/// The text of `s` around byte `n`, cut at char boundaries.
fn around(s: &str, n: usize) -> &str {
    let mut start = n.saturating_sub(60).min(s.len());
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (n + 200).min(s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    &s[start..end]
}
