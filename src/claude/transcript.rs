//! What the save needs from a session's transcript, read from its tail.

use std::path::Path;

use serde_json::Value;

/// What the fork needs from the session's transcript: the last model it
/// used (the prompt cache is per model, so the fork must use the same one)
/// and its cost so far.
#[derive(Debug, Default, PartialEq)]
pub struct TranscriptFacts {
    pub model: Option<String>,
    pub cost_usd: f64,
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
                let model = entry.pointer("/message/model").and_then(Value::as_str).unwrap_or("");
                if !model.is_empty() && !model.starts_with('<') {
                    facts.model = Some(model.to_string());
                }
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
        assert_eq!(transcript_facts(Path::new("/nonexistent")), TranscriptFacts::default());
    }
}
