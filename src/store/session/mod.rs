//! A session's state as types (docs/design.md §3; the transitions are
//! `save::machine`'s). On disk it is these types as JSON, under a version.

use serde::{Deserialize, Serialize};

/// The session file's format: another reads as a fresh session, and a
/// newer one is never overwritten (`SessionStore::update`).
pub use crate::store::record::VERSION;

/// A field added to a part reads as its default from a file that lacks it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionState {
    pub version: Version,
    #[serde(default)]
    pub input: SessionInput,
    #[serde(default)]
    pub protocol: Protocol,
    #[serde(default)]
    pub outcome: LastSave,
}

/// `VERSION`, the only one a session file is read at.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Version;

impl Serialize for Version {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u32(VERSION)
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Version, D::Error> {
        match u32::deserialize(deserializer)? {
            VERSION => Ok(Version),
            other => Err(serde::de::Error::custom(format!("session state version {other}, not {VERSION}"))),
        }
    }
}

/// What the session's hooks reported, kept for the worker and the commands.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionInput {
    pub cwd: String,
    /// `CLAUDE_PROJECT_DIR`, else the first working folder a hook reported.
    /// A `cd` inside the session does not move it, so a cloned dependency's
    /// folder can neither name the memory nor supply the fork's settings.
    pub project_dir: String,
    pub transcript_path: String,
    pub effort: Option<String>,
    /// The turn the next save follows, for the history.
    pub prompt_id: Option<String>,
    /// The project, worked out once per working folder: a git discovery is too dear for every hook.
    pub project_cwd: String,
    pub project: Option<String>,
    /// Why memory-save is off for this project (`off: …`), if it is.
    pub off: Option<String>,
    /// Who pays, recorded at SessionStart, which sees the session's environment.
    pub route: Option<crate::memory::route::Route>,
    /// What the session's last SessionStart loaded (`save::baseline`).
    pub baseline: Option<Baseline>,
    /// The guards that bind in this session (`store::guards`); left out of
    /// the file when none, which the hot hooks read and write at every turn.
    #[serde(skip_serializing_if = "BoundGuards::is_empty")]
    pub guards: BoundGuards,
    /// The project's top, which an edit guard's glob is relative to.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub guard_root: String,
    /// The tool call a guard last asked about, and the guard's id: its
    /// PostToolUse means the user let it run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub asked: Option<(String, String)>,
    /// No person attends the session (`claude -p`): it is saved only after
    /// enough tool calls (`unattended_min_tools`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unattended: bool,
    /// Guards (ids) that fired in this session, and how often, not yet
    /// counted in the project's record: PreToolUse writes only this file,
    /// and the session's next prompt, Stop or end folds them in.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub fired: std::collections::BTreeMap<String, u64>,
}

/// The guards a session binds, kept as their JSON text: PreToolUse alone
/// reads them, so the other hot hooks pass them through without building
/// them (20 guards add 43k instructions to PostToolUse, not 108k).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BoundGuards(Option<Box<serde_json::value::RawValue>>);

impl BoundGuards {
    pub fn of(guards: &[crate::memory::guard::Active]) -> BoundGuards {
        let text = (!guards.is_empty()).then(|| serde_json::value::to_raw_value(guards).ok()).flatten();
        BoundGuards(text)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The guards; `Err` when the text is not a list of them, which the
    /// caller asks about rather than lets through.
    pub fn read(&self) -> Result<Vec<crate::memory::guard::Active>, String> {
        let Some(text) = &self.0 else { return Ok(Vec::new()) };
        serde_json::from_str(text.get()).map_err(|e| format!("the session's guards cannot be read ({e})"))
    }
}

impl PartialEq for BoundGuards {
    fn eq(&self, other: &BoundGuards) -> bool {
        self.0.as_ref().map(|t| t.get()) == other.0.as_ref().map(|t| t.get())
    }
}

impl SessionInput {
    /// The folder the project is found from and the fork runs in.
    pub fn project_folder(&self) -> &str {
        if self.project_dir.is_empty() { &self.cwd } else { &self.project_dir }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Protocol {
    pub turn: Turn,
    pub job: Job,
    pub watch: CacheWatch,
    pub snapshot: Snapshot,
}

/// The turns since the last save was asked for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Turn {
    pub person_spoke: bool,
    /// A main-loop tool ran.
    pub tool_ran: bool,
    /// A prompt was submitted and its Stop has not come (yet).
    pub open: bool,
    /// Turns worth a save, held back (`save_every_turns`).
    pub unsaved: u64,
    /// SessionEnd has come (a later prompt resumes the session).
    pub ended: bool,
    /// A save asked for these turns did not run (the plan's usage window
    /// was full): they stay worth a save for a later Stop, the end, a flush.
    pub held_back: bool,
    /// Main-loop tool calls since the last request, counted only in an
    /// unattended session, and only up to what makes it worth a save.
    #[serde(skip_serializing_if = "crate::store::record::is_zero")]
    pub tools: u64,
}

/// The session's save job; a running worker holds the session's worker lock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Job {
    #[default]
    Idle,
    /// A save is asked for and no worker has taken it yet.
    Pending,
    /// Turns wait for the session to be quiet until then (the idle flush).
    Held { until: i64 },
    /// A worker took the job then; cleared only after the save's write, so
    /// a killed worker's job is taken over (`takeovers` times so far).
    Claimed { since: i64, takeovers: u32, queued: Queued },
}

/// What waits behind a claimed job.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Queued {
    #[default]
    Nothing,
    /// Exactly one more save, for turns that ended while it ran.
    Save,
    /// Turns held for the idle flush.
    Held { until: i64 },
}

/// What the session's saves left for the next one: when to ask, and what
/// the prompt cache and the last answered fork read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheWatch {
    /// The next Stop asks for a save at once: a save waited for a warm
    /// cache, or the user let a guarded call run (its rule may be lifted).
    pub save_at_next_stop: bool,
    /// Unix time of the last save that read the prompt cache, keeping it alive.
    pub cache_read_at: Option<i64>,
    /// When the last save whose fork answered was claimed: a save that
    /// cannot resume the session reads the turns since.
    pub saved_through: Option<i64>,
}

/// What the next save resumes, when PreCompact asked for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Snapshot {
    /// The message the save resumes at.
    pub resume_at: Option<String>,
    /// The transcript copy it resumes from; its worker removes it.
    pub copy: Option<String>,
}

/// What the last save gave, for the status line and the user.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LastSave {
    pub status: Option<Status>,
    /// The last save's report line, shown to the user once.
    pub report: Option<String>,
    pub saves: u64,
    /// This billing month's spend on this session's route, as of its last save.
    pub month_usd: Option<f64>,
    /// The session ended with its last save failed, and a later start of
    /// its project asked for that save once more (`queue::retry_failed_ended`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retried: bool,
}

/// What a session's last SessionStart loaded, part by part (`save::baseline`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub hash: u64,
    pub parts: usize,
    /// The loaded memory's lines, for the status line until the first save.
    #[serde(default)]
    pub lines: usize,
    /// Bit N-1: part N was emitted.
    pub seen: u64,
    pub at: i64,
}

impl Baseline {
    pub fn complete(&self) -> bool {
        self.parts > 0 && self.parts <= 64 && self.seen == (u64::MAX >> (64 - self.parts))
    }
}

/// The last save's result: its words, when, and its kind, which the
/// status line and the commands act on (never the words).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Status {
    pub text: String,
    /// Unix time.
    pub at: i64,
    pub kind: StatusKind,
}

impl Status {
    pub fn new(kind: StatusKind, text: impl Into<String>, at: i64) -> Status {
        Status { text: text.into(), at, kind }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusKind {
    /// Written, or nothing to change.
    #[default]
    Saved,
    /// Nothing written: something failed.
    Error,
    /// Saves wait for a person: a budget, an allowance, a broken setting.
    Paused,
    /// Saves of sessions on this model wait (the plan needs usage credits).
    PausedModel,
    /// The save waits for something that will come (a warm cache, a rate limit's end).
    Waiting,
    /// This save was not made (over a budget, near the window).
    Skipped,
    /// memory-save is off for the project.
    Off,
}

/// What one fork cost, as `claude --output-format json` reports it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub output_tokens: u64,
    pub total_cost_usd: f64,
    pub duration_ms: u64,
}
