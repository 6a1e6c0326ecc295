//! The cache watch: a save is cheap only while its fork reads the session's
//! prompt cache, and a set-up that loses it makes every save pay the whole
//! conversation again, silently; two misses in a row pause (docs/design.md §4).

use crate::claude::transcript::TranscriptFacts;
use crate::config::Config;
use crate::env::now_unix;
use crate::store::state::{CacheWatch, Pause, PauseKind, Usage};

/// The prompt cache's lifetime: a parent whose last request is older has
/// no cache left to read, so a miss then is expected and does not count.
pub const CACHE_LIFETIME_SECONDS: i64 = 5 * 60;
pub const MISSES_TO_PAUSE: u32 = 2;

/// Whether a save's input was mostly not read from the cache: `None` when
/// it does not count (no usage, or the cache had expired anyway).
pub fn missed_cache(usage: &Usage, parent_last_request_at: Option<i64>, at: i64) -> Option<bool> {
    let input = usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    let missed = usage.cache_read_input_tokens * 2 < input;
    let expired = parent_last_request_at.is_some_and(|last| at - last > CACHE_LIFETIME_SECONDS);
    (input > 0 && !(missed && expired)).then_some(missed)
}

/// Counts a finished save's cache hit or miss into the session, and pauses
/// it after two misses in a row. Returns the report line of a new pause.
pub fn count(state: &mut CacheWatch, usage: Option<&Usage>, parent_last_request_at: Option<i64>) -> Option<String> {
    let usage = usage?;
    if !missed_cache(usage, parent_last_request_at, now_unix())? {
        state.cache_misses = 0;
        state.missed_cost_usd = 0.0;
        return None;
    }
    state.cache_misses += 1;
    state.missed_cost_usd += usage.total_cost_usd;
    if state.cache_misses < MISSES_TO_PAUSE || state.paused.is_some() {
        return None;
    }
    let text = format!(
        "paused: {} missed the prompt cache ({})",
        crate::memory::report::plural(u64::from(state.cache_misses), "save"),
        crate::memory::cost::usd(state.missed_cost_usd)
    );
    let line =
        format!("memory-save: {text}; this session is saved once more when it ends. Resume with: memory-save resume");
    state.paused = Some(Pause { kind: PauseKind::CacheMiss, text, at: now_unix(), end_save_used: false });
    Some(line)
}

/// Tokens a fork's reply may need, on top of the request.
const REPLY_ROOM_TOKENS: u64 = 8_000;

/// Why this save is skipped when the fork would not fit the window: with
/// compaction off (DISABLE_COMPACT) it would only fail at the API's price.
/// A message's tokens are taken as its bytes over three, on the high side.
pub fn near_window(facts: &TranscriptFacts, model: Option<&str>, message_bytes: usize) -> Option<String> {
    let needed = facts.last_request_tokens + message_bytes as u64 / 3 + REPLY_ROOM_TOKENS;
    // The context window: a model name ending `[1m]` has 1M tokens, others 200K.
    let window = if model.is_some_and(|m| m.ends_with("[1m]")) { 1_000_000 } else { 200_000 };
    (facts.last_request_tokens > 0 && needed > window).then(|| {
        format!(
            "skipped: the session is near its context window ({} of {window} tokens); the next save after it compacts goes on",
            facts.last_request_tokens
        )
    })
}

/// A save that cost more than `max_cost_per_save_usd` pauses its session:
/// the estimate `budget::verdict` judged was wrong.
pub fn over_save_budget(usage: &Usage, config: &Config) -> Option<Pause> {
    let max = config.max_cost_per_save_usd.or(None)?;
    (usage.total_cost_usd > max).then(|| Pause {
        kind: PauseKind::Budget,
        text: format!(
            "paused: a save cost {}, over max_cost_per_save_usd ({})",
            crate::memory::cost::usd(usage.total_cost_usd),
            crate::memory::cost::usd(max)
        ),
        at: now_unix(),
        end_save_used: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(fresh: u64, read: u64, write: u64) -> Usage {
        Usage {
            input_tokens: fresh,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write,
            total_cost_usd: 0.2,
            ..Usage::default()
        }
    }

    #[test]
    fn a_miss_is_input_mostly_not_read_from_the_cache() {
        let now = 10_000;
        let recent = Some(now - 60);
        assert_eq!(missed_cache(&usage(3, 12_000, 600), recent, now), Some(false));
        assert_eq!(missed_cache(&usage(3, 100, 12_000), recent, now), Some(true));
        assert_eq!(missed_cache(&usage(6_000, 6_000, 0), recent, now), Some(false), "half is a hit");
        assert_eq!(missed_cache(&usage(3, 100, 12_000), Some(now - 301), now), None, "the cache had expired");
        assert_eq!(missed_cache(&usage(0, 0, 0), recent, now), None, "no usage reported");
    }

    #[test]
    fn a_save_is_skipped_only_when_the_fork_would_not_fit_the_window() {
        let facts = |tokens| TranscriptFacts { last_request_tokens: tokens, ..TranscriptFacts::default() };
        assert_eq!(near_window(&facts(150_000), Some("claude-opus-5-5"), 6_000), None);
        let skipped = near_window(&facts(195_000), Some("claude-opus-5-5"), 6_000).expect("skipped");
        assert!(
            skipped.starts_with("skipped: the session is near its context window (195000 of 200000 tokens)"),
            "{skipped}"
        );
        assert_eq!(near_window(&facts(195_000), Some("claude-sonnet-4-5[1m]"), 6_000), None, "a 1M window");
        assert!(near_window(&facts(995_000), Some("claude-sonnet-4-5[1m]"), 6_000).is_some());
        assert_eq!(near_window(&facts(0), None, 6_000), None, "no usage known: try");
    }

    #[test]
    fn two_misses_in_a_row_pause_and_a_hit_between_them_does_not() {
        let recent = Some(now_unix());
        let mut state = CacheWatch::default();
        let miss = usage(3, 100, 12_000);
        let hit = usage(3, 12_000, 600);
        assert_eq!(count(&mut state, Some(&miss), recent), None);
        assert_eq!(count(&mut state, Some(&hit), recent), None);
        assert_eq!(count(&mut state, Some(&miss), recent), None, "one miss does not pause");
        assert!(state.paused.is_none());
        let line = count(&mut state, Some(&miss), recent).expect("a pause");
        assert_eq!(
            line,
            "memory-save: paused: 2 saves missed the prompt cache ($0.40); this session is saved once more when it ends. Resume with: memory-save resume"
        );
        assert_eq!(state.paused.as_ref().unwrap().kind, PauseKind::CacheMiss);
        assert_eq!(count(&mut state, Some(&miss), recent), None, "told once");
    }
}
