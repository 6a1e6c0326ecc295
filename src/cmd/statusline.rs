//! `memory-save statusline`: the session's save state on one line, after
//! the lines of the user's own status command (given after `--`).

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::env::clock;
use crate::memory::text::visible;
use crate::store::state::{SessionId, SessionState, SessionStore, StatusKind};

/// The wrapped command gets this long; a status line must not hang.
const WRAPPED_LIMIT: Duration = Duration::from_secs(5);
/// What the wrapped command prints past this is dropped.
const WRAPPED_MAX: usize = 64 * 1024;
/// The whole status line ends by then, whatever it waits on.
const DEADLINE: Duration = Duration::from_secs(6);

#[derive(Deserialize, Default)]
#[serde(default)]
struct StatusInput {
    session_id: String,
    /// A Claude plan's usage windows, after the session's first answer;
    /// read apart, so one of another shape costs only itself.
    rate_limits: serde_json::Value,
}

/// Print this session's save state on one line (Claude Code's status-line
/// JSON on stdin). Your own status command, after `--`, runs first with the
/// same input, and its lines are printed before ours.
#[derive(Debug, clap::Args)]
pub struct StatuslineArgs {
    /// Your own status-line command and its arguments.
    #[arg(last = true, value_name = "YOUR STATUS COMMAND")]
    wrapped: Vec<OsString>,
}

impl super::Run for StatuslineArgs {
    fn run(&self) -> Result<()> {
        crate::sys::arm_deadline(DEADLINE);
        let mut raw = Vec::new();
        std::io::stdin().take(4 * 1024 * 1024).read_to_end(&mut raw).context("cannot read the status-line input")?;
        let mut out = String::new();
        if let Some((program, args)) = self.wrapped.split_first() {
            out.push_str(run_wrapped(program, args, &raw).trim_end_matches('\n'));
        }
        let input: StatusInput = serde_json::from_slice(&raw).unwrap_or_default();
        // No roots (HOME unset): still print the user's own line.
        let windows = crate::save::money::plan::Windows::deserialize(&input.rate_limits);
        if let (Ok(windows), Ok(roots)) = (windows, crate::config::roots()) {
            crate::save::money::plan::record(&roots, &windows);
        }
        if let (Ok(id), Ok(roots)) = (SessionId::parse(&input.session_id), crate::config::roots()) {
            let sessions = SessionStore::new(roots.sessions_dir());
            let mut state = sessions.peek(&id);
            super::clear_dead_claim(&sessions, &id, &mut state);
            let waiting =
                state.input.project.as_deref().map_or(0, |key| {
                    crate::store::review::load(&crate::store::folder::Folder::of_key(&roots, key)).len()
                });
            let not_synced = crate::sync::state(&roots).filter(|s| s.error.is_some()).map(|s| s.synced_at);
            let machine = machine_pause(&roots, &state);
            if let Some(line) = state_line(&state, waiting, machine, not_synced) {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(&fit(&line, crate::env::columns()));
            }
        }
        if !out.is_empty() {
            writeln!(std::io::stdout().lock(), "{out}")?;
        }
        Ok(())
    }
}

/// What stops this session's saves beyond itself, in the order a save
/// checks them: a setting that fails closed, a used-up allowance, a plan's
/// full usage window, a budget, the plan's refusal of its model.
fn machine_pause(roots: &crate::store::paths::Roots, state: &SessionState) -> Option<String> {
    let config = crate::config::of(roots);
    let stops = crate::save::money::ledger::stops(roots, &config);
    let setting = stops.config.map(|_| "paused: memory-save.toml has a problem (memory-save doctor)".to_string());
    let on_plan = state.input.route.as_ref().is_some_and(crate::memory::route::Route::draws_on_plan_windows);
    let window = crate::save::money::plan::wait(roots, &config, on_plan, crate::env::now_unix());
    let model = state.outcome.status.as_ref().filter(|s| s.kind == StatusKind::PausedModel).map(|s| s.text.clone());
    setting
        .or(stops.allowance.map(|h| h.status()))
        .or(window.map(|w| w.status()))
        .or(stops.budget.map(|s| s.status()))
        .or(model)
}

/// The one state the status line shows, chosen by kind and order, never by
/// the words of a status, the most urgent first: the last save's error
/// (until a new save runs), saves paused, saves waiting (`waiting_for`: the
/// machine's allowance, a setting, a model), rules waiting for review, not
/// synced, a save running, then the last save with the month's spend
/// (`memory-save: +2 -1 · $3.10 this month · 14:32`), else what
/// SessionStart loaded. Every character of it is safe for a terminal.
/// `not_synced`: the last pull or push failed, and when memories last synced.
fn state_line(
    state: &SessionState,
    rules_waiting: usize,
    waiting_for: Option<String>,
    not_synced: Option<Option<i64>>,
) -> Option<String> {
    let timed = |text: &str, at: i64| format!("memory-save: {text} · {}", clock(at));
    let last = state.outcome.status.as_ref();
    let saving = state.protocol.job.claimed_since();
    let line = if let (None, Some(error)) = (saving, last.filter(|s| s.kind == StatusKind::Error)) {
        timed(&error.text, error.at)
    } else if let Some(text) = waiting_for {
        format!("memory-save: {text}")
    } else if rules_waiting == 1 {
        "memory-save: 1 rule waits for review: memory-save review".to_string()
    } else if rules_waiting > 1 {
        format!("memory-save: rules wait for review ({rules_waiting}): memory-save review")
    } else if let Some(Some(at)) = not_synced {
        format!("memory-save: not synced since {} (memory-save doctor)", clock(at))
    } else if let Some(None) = not_synced {
        "memory-save: not synced yet (memory-save doctor)".to_string()
    } else if let Some(since) = saving {
        timed("saving…", since)
    } else if let Some(status) = last.filter(|s| s.kind != StatusKind::Paused) {
        // A save the machine's stops paused is shown by them, while they
        // hold (`waiting_for`), never from the last save's words.
        // A plan's saves cost no money: their dollars are API prices.
        let plan = state.input.route.as_ref().is_some_and(crate::memory::route::Route::is_subscription);
        let priced = if plan { " at API prices" } else { "" };
        let month = state.outcome.month_usd.map(|m| format!(" · {}{priced} this month", crate::memory::cost::usd(m)));
        timed(&format!("{}{}", status.text, month.unwrap_or_default()), status.at)
    } else {
        let loaded = state.input.baseline.as_ref().filter(|b| b.lines > 0)?;
        timed(&format!("loaded {}", crate::memory::report::plural(loaded.lines as u64, "line")), loaded.at)
    };
    Some(visible(&line))
}

/// Our line, cut to one row of 80 columns or a narrower `COLUMNS` (a longer
/// line wraps and pushes the prompt up); a CJK character takes two.
fn fit(line: &str, columns: Option<usize>) -> String {
    use unicode_width::UnicodeWidthChar;
    let limit = columns.map_or(MAX_COLUMNS, |c| c.min(MAX_COLUMNS));
    if unicode_width::UnicodeWidthStr::width(line) <= limit {
        return line.to_string();
    }
    let mut out = String::new();
    let mut used = 1; // the `…`
    for c in line.chars() {
        used += c.width().unwrap_or(0);
        if used > limit {
            break;
        }
        out.push(c);
    }
    out.push('…');
    out
}

const MAX_COLUMNS: usize = 80;

fn run_wrapped(program: &OsString, args: &[OsString], input: &[u8]) -> String {
    let run = crate::process::run_captured(Command::new(program).args(args), input, WRAPPED_LIMIT, WRAPPED_MAX);
    let run = run.ok().filter(|run| matches!(run.ended, crate::process::Ended::Exited(_)));
    run.map(|run| String::from_utf8_lossy(&run.stdout).into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::state::{Job, Queued, Status};

    fn with_status(status: Option<Status>) -> SessionState {
        let mut state = SessionState::default();
        state.outcome.status = status;
        state
    }

    fn claimed(mut state: SessionState, since: i64) -> SessionState {
        state.protocol.job = Job::Claimed { since, takeovers: 0, queued: Queued::Nothing };
        state
    }

    #[test]
    fn a_line_fits_one_row_of_80_columns_or_fewer() {
        use unicode_width::UnicodeWidthStr;
        let long = format!("memory-save: error: {} · 14:32", "x".repeat(200));
        let wide = format!("memory-save: +1 · {} · 14:32", "日本語".repeat(30));
        for (columns, limit) in [(None, 80), (Some(40), 40), (Some(200), 80)] {
            for line in [&long, &wide] {
                let fitted = fit(line, columns);
                assert!(fitted.width() <= limit, "{columns:?}: {} > {limit}: {fitted}", fitted.width());
                assert!(fitted.ends_with('…') && fitted.starts_with("memory-save: "), "{fitted}");
            }
        }
        assert_eq!(fit("memory-save: +1 · 14:32", Some(40)), "memory-save: +1 · 14:32");
    }

    #[test]
    fn one_state_at_a_time_the_most_urgent_first() {
        let at = 0;
        let status = |kind, text: &str| Some(Status::new(kind, text, at));
        let error = with_status(status(StatusKind::Error, "error: fork timed out after 300s"));
        let saved = with_status(status(StatusKind::Saved, "+2 -1"));
        // The kind decides, not the words.
        let worded_like_one = with_status(status(StatusKind::Saved, "error: in the words only"));
        let saving = claimed(saved.clone(), at);
        let error_then_saving = claimed(error.clone(), at);
        let line = |s: &SessionState, waiting| state_line(s, waiting, None, None).unwrap();
        assert!(line(&error, 2).starts_with("memory-save: error: fork timed out"), "an error first");
        assert_eq!(line(&saved, 2), "memory-save: rules wait for review (2): memory-save review");
        assert_eq!(line(&saved, 1), "memory-save: 1 rule waits for review: memory-save review");
        assert!(line(&error_then_saving, 0).starts_with("memory-save: saving…"), "a new save replaces the error");
        assert!(line(&saving, 0).starts_with("memory-save: saving…"));
        assert!(line(&saved, 0).starts_with("memory-save: +2 -1 · "));
        assert_eq!(state_line(&SessionState::default(), 0, None, None), None);
        let not = Some(Some(at));
        assert!(state_line(&saving, 0, None, not).unwrap().starts_with("memory-save: not synced since "));
        assert!(state_line(&error, 0, None, not).unwrap().starts_with("memory-save: error"), "an error first");
        let never = Some(None);
        assert_eq!(state_line(&saved, 0, None, never).unwrap(), "memory-save: not synced yet (memory-save doctor)");
        assert!(line(&worded_like_one, 2).contains("review"), "words are not a kind");
        let hostile = with_status(status(StatusKind::Error, "error: fork failed: \u{1b}]0;x\u{7}"));
        assert!(!line(&hostile, 0).contains('\u{1b}'));
    }
}
