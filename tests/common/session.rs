//! A session's state file as the tests read it: one accessor per fact, in
//! the words of the product's types (`store::session`), so no test names a
//! key of the file and a change of format is one edit here. Shared by the
//! CLI and e2e suites, each of which uses only some accessors.
#![allow(dead_code)]

use serde_json::Value;

#[derive(Debug, Clone)]
pub struct Session(pub Value);

impl Session {
    /// The first JSON value of a state file's bytes (hooks rewrite it in
    /// place; see `store::state::parse_state`).
    pub fn parse(bytes: &[u8]) -> Option<Session> {
        serde_json::Deserializer::from_slice(bytes).into_iter::<Value>().next()?.ok().map(Session)
    }

    fn job(&self) -> &Value {
        &self.0["protocol"]["job"]
    }

    /// A save is asked for and waits for a worker, or for the one running.
    pub fn pending(&self) -> bool {
        self.job() == "pending" || self.job()["claimed"]["queued"] == "save"
    }

    /// When the running save was claimed.
    pub fn claimed_since(&self) -> Option<i64> {
        self.job()["claimed"]["since"].as_i64()
    }

    /// When turns held for the idle flush are saved.
    pub fn held_until(&self) -> Option<i64> {
        self.job()["held"]["until"].as_i64().or_else(|| self.job()["claimed"]["queued"]["held"]["until"].as_i64())
    }

    /// Nothing asked for and nothing running.
    pub fn idle(&self) -> bool {
        !self.pending() && self.claimed_since().is_none()
    }

    pub fn saves(&self) -> u64 {
        self.0["outcome"]["saves"].as_u64().unwrap_or(0)
    }

    /// The last save's status words, `""` before one.
    pub fn status(&self) -> &str {
        self.0["outcome"]["status"]["text"].as_str().unwrap_or_default()
    }

    pub fn has_status(&self) -> bool {
        self.0["outcome"]["status"].is_object()
    }

    /// The report line waiting to be shown.
    pub fn report(&self) -> Option<&str> {
        self.0["outcome"]["report"].as_str()
    }

    pub fn last_usage(&self) -> &Value {
        &self.0["outcome"]["last_usage"]
    }

    /// Why the session's saves stopped (`text`, `kind`), or null.
    pub fn paused(&self) -> &Value {
        &self.0["protocol"]["watch"]["paused"]
    }

    pub fn cache_misses(&self) -> u64 {
        self.0["protocol"]["watch"]["cache_misses"].as_u64().unwrap_or(0)
    }

    pub fn save_at_next_stop(&self) -> bool {
        self.0["protocol"]["watch"]["save_at_next_stop"] == true
    }

    /// The turns held back by `save_every_turns`.
    pub fn unsaved(&self) -> u64 {
        self.0["protocol"]["turn"]["unsaved"].as_u64().unwrap_or(0)
    }

    pub fn person_spoke(&self) -> bool {
        self.0["protocol"]["turn"]["person_spoke"] == true
    }

    pub fn tool_ran(&self) -> bool {
        self.0["protocol"]["turn"]["tool_ran"] == true
    }

    pub fn turn_open(&self) -> bool {
        self.0["protocol"]["turn"]["open"] == true
    }

    pub fn ended(&self) -> bool {
        self.0["protocol"]["turn"]["ended"] == true
    }

    /// The transcript copy the next save resumes from.
    pub fn snapshot(&self) -> Option<&str> {
        self.0["protocol"]["snapshot"]["copy"].as_str()
    }

    /// Who pays for the session's saves, as SessionStart recorded it.
    pub fn route(&self) -> &Value {
        &self.0["input"]["route"]
    }

    /// The guards the session binds, as its file keeps them.
    pub fn guards(&self) -> &Value {
        &self.0["input"]["guards"]
    }

    /// The same state binding `guards` instead.
    pub fn with_guards(mut self, guards: Value) -> Session {
        self.0["input"]["guards"] = guards;
        self
    }
}

impl std::fmt::Display for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() { write!(f, "{:#}", self.0) } else { write!(f, "{}", self.0) }
    }
}
