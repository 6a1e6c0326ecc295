//! Why a fork gave nothing to read, one variant per failure.

use std::path::PathBuf;

use crate::store::state::Usage;

/// `Display` gives the status-line words; the reported cost stays beside them.
#[derive(Debug, Clone, PartialEq)]
pub enum ForkError {
    /// No CLI where it was looked for (`None`: on `PATH`).
    NotFound(Option<PathBuf>),
    /// Our side could not start or follow the fork (`cannot …`).
    Io(String),
    TimedOut {
        secs: u64,
    },
    /// No JSON result; exit `code` (`None`: a signal), `said` its last stderr line.
    Exited {
        code: Option<i32>,
        said: String,
        usage: Usage,
    },
    /// The CLI printed no JSON result.
    NoResult {
        usage: Usage,
    },
    /// The fork asked for a tool: its one turn ended without a reply.
    CalledTool {
        usage: Usage,
    },
    /// The CLI reported an error; `refusal` when the API refused the fork.
    Failed {
        what: String,
        refusal: Option<crate::claude::refusal::ApiRefusal>,
        usage: Usage,
    },
    NoText {
        usage: Usage,
    },
}

impl std::fmt::Display for ForkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ForkError::NotFound(None) => write!(f, "claude not found on PATH (set MEMORY_SAVE_CLAUDE)"),
            ForkError::NotFound(Some(path)) => write!(f, "claude not found at {}", path.display()),
            ForkError::Io(what) => f.write_str(what),
            ForkError::TimedOut { secs } => write!(f, "fork timed out after {secs}s"),
            ForkError::Exited { code: Some(code), said, .. } => write!(f, "fork exited with code {code}: {said}"),
            ForkError::Exited { code: None, said, .. } => write!(f, "fork exited with a signal: {said}"),
            ForkError::NoResult { .. } => write!(f, "fork output is not claude's JSON result"),
            ForkError::CalledTool { .. } => write!(f, "fork called a tool instead of replying"),
            ForkError::Failed { what, .. } => write!(f, "fork failed: {what}"),
            ForkError::NoText { .. } => write!(f, "fork gave no text"),
        }
    }
}

impl ForkError {
    /// What the CLI reported the failed fork cost (nothing when it never ran).
    pub fn usage(&self) -> Usage {
        self.clone().usage_mut().cloned().unwrap_or_default()
    }

    pub(super) fn usage_mut(&mut self) -> Option<&mut Usage> {
        match self {
            ForkError::Exited { usage, .. }
            | ForkError::NoResult { usage }
            | ForkError::CalledTool { usage }
            | ForkError::Failed { usage, .. }
            | ForkError::NoText { usage } => Some(usage),
            ForkError::NotFound(_) | ForkError::Io(_) | ForkError::TimedOut { .. } => None,
        }
    }

    /// What to do about it, when there is something to say: the CLI said it
    /// has no login, as a login kept only in CLAUDE_CODE_OAUTH_TOKEN never
    /// reaches the fork (docs/design.md §4).
    pub fn advice(&self) -> Option<&'static str> {
        let said = match self {
            ForkError::Exited { said, .. } => said,
            ForkError::Failed { what, .. } => what,
            _ => return None,
        };
        said.contains("Not logged in").then_some(
            "the fork could not log in: Claude Code passes CLAUDE_CODE_OAUTH_TOKEN to no hook, so log in once with claude /login, whose stored login every claude run reads, a save's fork too",
        )
    }
}
