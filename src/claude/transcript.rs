//! What the save needs from a session's transcript, read from its tail.

use std::path::Path;

use serde_json::Value;

/// What the fork needs from the session's transcript: the model the session
/// requested (the prompt cache is per model, and a `[1m]` name carries the
/// 1M-token window that `message.model` drops **[measured]**), its cost so
/// far, and its last request: when (a cache older than its lifetime is
/// expected to miss) and how large (the fork must fit the window too).
#[derive(Debug, Default, PartialEq)]
pub struct TranscriptFacts {
    pub model: Option<String>,
    pub cost_usd: f64,
    /// Unix time of the last assistant message.
    pub last_request_at: Option<i64>,
    /// Input tokens of the last assistant message's request (fresh, cache
    /// read and cache write together).
    pub last_request_tokens: u64,
    /// Output tokens of that message: the fork's request carries them
    /// uncached.
    pub last_output_tokens: u64,
    /// The session writes one-hour cache entries (its usage shows
    /// `cache_creation.ephemeral_1h_input_tokens`), which live an hour.
    pub one_hour_cache: bool,
}

pub fn transcript_facts(transcript: &Path) -> TranscriptFacts {
    use std::io::{Read, Seek, SeekFrom};
    const TAIL: u64 = 1024 * 1024;
    let mut tail = Vec::new();
    if let Ok(Some(mut file)) = crate::store::fsutil::open_regular(transcript) {
        let len = file.metadata().map(|m| m.len()).unwrap_or(0);
        if file.seek(SeekFrom::Start(len.saturating_sub(TAIL))).is_ok() {
            let _ = file.take(TAIL).read_to_end(&mut tail);
        }
    }
    let tail = String::from_utf8_lossy(&tail);
    let mut facts = TranscriptFacts::default();
    let mut cost_seen = false;
    for line in tail.lines().rev() {
        if facts.model.is_some() && cost_seen {
            break;
        }
        let is_assistant = facts.model.is_none() && line.contains("\"assistant\"");
        let is_cost = !cost_seen && line.contains("\"cost-state\"");
        if !is_assistant && !is_cost {
            continue;
        }
        let Ok(entry) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match entry.get("type").and_then(Value::as_str) {
            Some("assistant") if is_assistant => {
                let requested = entry.get("requestedModel").and_then(Value::as_str).unwrap_or("");
                let answered = entry.pointer("/message/model").and_then(Value::as_str).unwrap_or("");
                let model = if requested.is_empty() { answered } else { requested };
                if !model.is_empty() && !model.starts_with('<') {
                    facts.model = Some(model.to_string());
                }
                facts.last_request_at = entry.get("timestamp").and_then(Value::as_str).and_then(unix_time);
                let usage = |key: &str| entry.pointer(&format!("/message/usage/{key}")).and_then(Value::as_u64);
                facts.last_request_tokens = ["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"]
                    .into_iter()
                    .filter_map(usage)
                    .sum();
                facts.last_output_tokens = usage("output_tokens").unwrap_or(0);
                facts.one_hour_cache = usage("cache_creation/ephemeral_1h_input_tokens").is_some_and(|t| t > 0);
            }
            Some("cost-state") if is_cost => {
                facts.cost_usd = entry.get("totalCostUSD").and_then(Value::as_f64).unwrap_or(0.0);
                cost_seen = true;
            }
            _ => {}
        }
    }
    facts
}

/// The `uuid` of the transcript's last user or assistant message, read from
/// its tail.
pub fn last_message_uuid(transcript: &Path) -> Option<String> {
    tail(transcript, 1024 * 1024)?.lines().rev().find_map(|line| {
        let entry: Value = serde_json::from_str(line).ok()?;
        let kind = entry.get("type")?.as_str()?;
        if kind != "user" && kind != "assistant" {
            return None;
        }
        let uuid = entry.get("uuid")?.as_str()?;
        // A uuid names a message; anything else is not one to pass on.
        uuid.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-').then(|| uuid.to_string())
    })
}

/// The time of the transcript's last entry that carries one: Claude Code
/// writes every message and tool result as it comes, so this is when the
/// session last did anything. Read from the last 64 KiB.
pub fn last_activity_at(transcript: &Path) -> Option<i64> {
    tail(transcript, 64 * 1024)?.lines().rev().find_map(|line| {
        let entry: Value = serde_json::from_str(line).ok()?;
        unix_time(entry.get("timestamp")?.as_str()?)
    })
}

/// The last `bytes` of the transcript (a regular file only), as text.
fn tail(transcript: &Path, bytes: u64) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = crate::store::fsutil::open_regular(transcript).ok()??;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    file.seek(SeekFrom::Start(len.saturating_sub(bytes))).ok()?;
    let mut tail = Vec::new();
    file.take(bytes).read_to_end(&mut tail).ok()?;
    Some(String::from_utf8_lossy(&tail).into_owned())
}

/// A transcript larger than this is not copied at PreCompact: the hook
/// must stay quick, and the save falls back to `--resume-session-at`.
pub const MAX_SNAPSHOT_BYTES: u64 = 256 * 1024 * 1024;

/// Copies the transcript to `to` (a new private file) as it is now, before
/// compaction writes its boundary: Claude Code resumes a session from its
/// last boundary on, so only a copy taken now still holds the turns that
/// the summary replaces **[measured: 2.1.328, 2.1.332]**. `false` when
/// there is nothing to copy or it is over `max` bytes.
pub fn snapshot(transcript: &Path, to: &Path, max: u64) -> anyhow::Result<bool> {
    use anyhow::Context;
    let Some(file) = crate::store::fsutil::open_regular(transcript)? else {
        return Ok(false);
    };
    let len = file.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
    if len > max {
        return Ok(false);
    }
    let mut out =
        crate::store::fsutil::create_new_private(to).with_context(|| format!("cannot create {}", to.display()))?;
    // The transcript may grow while it is copied: the copy stops at the
    // length it had, so it ends on a whole line.
    let copied = std::io::copy(&mut std::io::Read::take(file, len), &mut out);
    if let Err(e) = copied {
        let _ = std::fs::remove_file(to);
        return Err(e).with_context(|| format!("cannot copy {} to {}", transcript.display(), to.display()));
    }
    Ok(true)
}

/// `2026-11-30T02:30:25.407Z` as Unix time.
fn unix_time(text: &str) -> Option<i64> {
    let parsed = time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    Some(parsed.unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/claude-code-2.1.328/transcript-sample.jsonl");

    #[test]
    fn facts_from_a_real_transcript() {
        let facts = transcript_facts(Path::new(SAMPLE));
        assert_eq!(facts.model.as_deref(), Some("claude-opus-5-5"));
        assert!(facts.cost_usd > 0.0, "{facts:?}");
        assert!(facts.last_request_at.is_some_and(|at| at > 1_700_000_000), "{facts:?}");
        assert!(facts.last_request_tokens > 0, "{facts:?}");
        assert_eq!(transcript_facts(Path::new("/nonexistent")), TranscriptFacts::default());
    }

    #[test]
    fn a_snapshot_is_a_private_whole_copy_or_nothing() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().join("s.transcript.jsonl");
        assert!(snapshot(Path::new(SAMPLE), &to, MAX_SNAPSHOT_BYTES).unwrap());
        assert_eq!(std::fs::read(&to).unwrap(), std::fs::read(SAMPLE).unwrap());
        assert_eq!(std::fs::metadata(&to).unwrap().permissions().mode() & 0o777, 0o600);
        // Taken again, the copy is replaced, never appended to.
        assert!(snapshot(Path::new(SAMPLE), &to, MAX_SNAPSHOT_BYTES).unwrap());
        assert_eq!(std::fs::read(&to).unwrap(), std::fs::read(SAMPLE).unwrap());

        let small = dir.path().join("small.transcript.jsonl");
        assert!(!snapshot(Path::new(SAMPLE), &small, 10).unwrap(), "over the bound");
        assert!(!small.exists());
        assert!(!snapshot(Path::new("/nonexistent"), &small, MAX_SNAPSHOT_BYTES).unwrap());

        let link = dir.path().join("link.jsonl");
        std::os::unix::fs::symlink(SAMPLE, &link).unwrap();
        assert!(snapshot(&link, &small, MAX_SNAPSHOT_BYTES).is_err(), "a transcript that is a link is not followed");
    }
}
