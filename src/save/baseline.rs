//! The memory the session already holds: the text of the last complete load
//! its SessionStart parts emitted, so a save's message points to that block
//! or gives only the lines changed since (docs/design.md §4, "The message").

use crate::memory::stable_hash;
use crate::store::state::{Baseline, SessionId, SessionStore};

/// The parts of one load start within milliseconds of each other; marks
/// older than this belong to an earlier load.
const ONE_LOAD_SECONDS: i64 = 30;

/// Marks `part` of `total` of a load of `text` as emitted.
pub fn record(sessions: &SessionStore, id: &SessionId, text: &str, part: usize, total: usize) {
    if part == 0 || part > 64 || total > 64 {
        return;
    }
    let hash = stable_hash(text);
    let now = crate::env::now_unix();
    let marked = sessions.update(id, |s| {
        let bit = 1u64 << (part - 1);
        match &mut s.input.baseline {
            Some(b) if b.hash == hash && b.parts == total && now - b.at < ONE_LOAD_SECONDS => {
                b.seen |= bit;
                false
            }
            _ => {
                s.input.baseline =
                    Some(Baseline { hash, parts: total, seen: bit, at: now, lines: text.lines().count() });
                true
            }
        }
    });
    match marked {
        // The first part of a load keeps the text; a file whose hash is not
        // the marked one is never used.
        Ok(true) => {
            if let Err(e) = crate::store::fsutil::write_atomic(&sessions.baseline_path(id), text.as_bytes(), false) {
                crate::store::log::error(&format!("cannot keep the loaded memory of session {id}: {e:#}"));
            }
        }
        Ok(false) => {}
        Err(e) => crate::store::log::error(&format!("cannot mark part {part} loaded in session {id}: {e:#}")),
    }
}

/// The text the session holds, when a whole load of it was emitted.
pub fn read(sessions: &SessionStore, id: &SessionId, baseline: Option<&Baseline>) -> Option<String> {
    let baseline = baseline.filter(|b| b.complete())?;
    let bytes = crate::store::fsutil::read_regular(&sessions.baseline_path(id), 1024 * 1024).ok().flatten()?;
    let text = String::from_utf8(bytes).ok()?;
    (stable_hash(&text) == baseline.hash).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_baseline_counts_only_when_every_part_of_one_load_was_emitted() {
        let dir = tempfile::tempdir().unwrap();
        let sessions = SessionStore::new(dir.path().join("sessions"));
        let id = &SessionId::parse("s1").unwrap();
        let text = "# app\n\n## CRITICAL RULES\n- r\n";
        record(&sessions, id, text, 1, 2);
        assert_eq!(read(&sessions, id, sessions.peek(id).input.baseline.as_ref()), None, "part 2 of 2 missing");
        record(&sessions, id, text, 2, 2);
        assert_eq!(read(&sessions, id, sessions.peek(id).input.baseline.as_ref()).as_deref(), Some(text));
        // A new load of other text starts over.
        record(&sessions, id, "# app\n", 2, 2);
        assert_eq!(read(&sessions, id, sessions.peek(id).input.baseline.as_ref()), None);
        // A file that is not the text marked is not used.
        record(&sessions, id, text, 1, 1);
        std::fs::write(sessions.baseline_path(id), "# forged\n").unwrap();
        assert_eq!(read(&sessions, id, sessions.peek(id).input.baseline.as_ref()), None);
    }
}
