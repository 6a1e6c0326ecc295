//! A session as `memory-save sessions --json` shows it, read by the tests
//! through the command, never through the session's own file, so a change
//! of that file's layout is no test's business. Shared by the CLI and e2e
//! suites, each of which uses only some accessors.
#![allow(dead_code)]

use serde_json::Value;

/// One entry of `sessions --json`, or `{}` when there is no such session.
#[derive(Debug, Clone)]
pub struct Session(pub Value);

impl Session {
    /// The session `id` in the output of `sessions --json`, `{}` when it is
    /// not there.
    #[track_caller]
    pub fn find(listed: &str, id: &str) -> Session {
        let listed: Value = serde_json::from_str(listed).unwrap_or_else(|e| panic!("sessions --json: {e}: {listed}"));
        let found = listed.as_array().into_iter().flatten().find(|s| s["session_id"] == id);
        Session(found.cloned().unwrap_or_else(|| serde_json::json!({})))
    }

    /// The memory folder its saves write.
    pub fn project(&self) -> Option<&str> {
        self.0["project"].as_str()
    }

    /// A save is asked for and waits for a worker, or for the one running.
    pub fn pending(&self) -> bool {
        self.0["queued"] == true
    }

    /// When the running save began.
    pub fn claimed_since(&self) -> Option<i64> {
        self.0["saving_since"].as_i64()
    }

    /// When turns held for the idle flush are saved.
    pub fn held_until(&self) -> Option<i64> {
        self.0["held_until"].as_i64()
    }

    /// Nothing asked for and nothing running.
    pub fn idle(&self) -> bool {
        !self.pending() && self.claimed_since().is_none()
    }

    /// Saves tried, failed ones included.
    pub fn saves(&self) -> u64 {
        self.0["tried"].as_u64().unwrap_or(0)
    }

    /// The last save's status words, `""` before one.
    pub fn status(&self) -> &str {
        self.0["last_status"].as_str().unwrap_or_default()
    }

    pub fn has_status(&self) -> bool {
        self.0["last_status"].is_string()
    }

    /// The report line waiting to be shown.
    pub fn report(&self) -> Option<&str> {
        self.0["report"].as_str()
    }

    /// The turns held back by `save_every_turns`.
    pub fn unsaved(&self) -> u64 {
        self.0["unsaved_turns"].as_u64().unwrap_or(0)
    }

    /// A prompt was sent and its Stop has not come.
    pub fn answering(&self) -> bool {
        self.0["answering"] == true
    }

    /// SessionEnd has come.
    pub fn ended(&self) -> bool {
        self.0["ended"] == true
    }

    /// Who pays for the session's saves, as SessionStart recorded it.
    pub fn route(&self) -> &Value {
        &self.0["route"]
    }
}

impl std::fmt::Display for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() { write!(f, "{:#}", self.0) } else { write!(f, "{}", self.0) }
    }
}
