//! `~/.cli-tweaks/memory-save.toml`: the few things a user will want to
//! change. Every key is optional; a missing file is the defaults. A file
//! that does not parse is reported (log, status, doctor) and the defaults
//! apply, so a typo never stops the memory from loading.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, Result};

use crate::store::paths::Roots;
use serde::Deserialize;

pub const FILE_NAME: &str = "memory-save.toml";
const DEFAULT_FORK_TIMEOUT_SECONDS: u64 = 300;
const DEFAULT_QUOTA_PERCENT: f64 = 90.0;
const DEFAULT_IDLE_FLUSH_SECONDS: u64 = 120;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// 0 saves after every turn; N saves at most every N minutes (a turn in
    /// between is still seen by the next save, which reads the whole
    /// session, and an unsaved turn is saved at session end).
    pub save_every_minutes: u64,
    /// Seconds the fork may run before it is killed.
    pub fork_timeout_seconds: Option<u64>,
    /// The fork's model; empty or absent: the session's own (which the
    /// prompt cache needs).
    pub model: Option<String>,
    /// The fork's effort; absent: the session's own.
    pub effort: Option<String>,
    /// Projects (by memory-save's project name) where memory-save does
    /// nothing.
    pub disabled_projects: Vec<String>,
    /// `"rules"`: CRITICAL RULES changes wait for `memory-save review`.
    pub review: Review,
    /// Save when this many turns have gathered (0 or 1: every turn), when
    /// the session has been quiet for `idle_flush_seconds`, and at its end.
    pub save_every_turns: u64,
    /// Seconds of quiet after which gathered turns are saved (default 120,
    /// inside the prompt cache's five minutes).
    pub idle_flush_seconds: Option<u64>,
    /// A save that cost more pauses its session's saves (a hard stop).
    pub max_cost_per_save_usd: Option<f64>,
    /// All saves of the local calendar day, every project together, stop at
    /// this (a hard stop).
    pub max_cost_per_day_usd: Option<f64>,
    /// Saves pause while the subscription's 5-hour or 7-day quota, as the
    /// status line reports it, is at or above this percentage (default 90).
    pub pause_at_quota_percent: Option<f64>,
    /// Memory folder names chosen by hand, by identity (as `memory-save
    /// status` shows it): `"github.com/me/app" = "app-work"`.
    pub names: std::collections::BTreeMap<String, String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Review {
    #[default]
    Off,
    Rules,
}

impl Config {
    /// The config at `path`; defaults when it is missing.
    pub fn load(path: &Path) -> Result<Config> {
        let Some(bytes) = crate::store::fsutil::read_regular(path, 1024 * 1024)? else {
            return Ok(Config::default());
        };
        let text = String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))?;
        toml::from_str(&text).with_context(|| {
            format!(
                "{} is not valid memory-save configuration; fix it or remove it (see the README's Settings)",
                path.display()
            )
        })
    }

    /// Like `load`, but a broken file is logged and the defaults used.
    pub fn load_or_default(path: &Path) -> Config {
        Config::load(path).unwrap_or_else(|e| {
            crate::store::log::error(&format!("{e:#}"));
            Config::default()
        })
    }

    /// `MEMORY_SAVE_FORK_TIMEOUT` wins over the file, for a one-off run.
    pub fn fork_timeout(&self) -> Duration {
        let from_env = crate::env::fork_timeout_override();
        let seconds = from_env.or(self.fork_timeout_seconds).filter(|&s| s > 0).unwrap_or(DEFAULT_FORK_TIMEOUT_SECONDS);
        Duration::from_secs(seconds)
    }

    /// What decides whether a turn's save is due.
    pub fn limits(&self) -> crate::store::state::SaveLimits {
        crate::store::state::SaveLimits {
            interval: self.save_interval(),
            pause_at_quota_percent: Some(self.pause_at_quota_percent.unwrap_or(DEFAULT_QUOTA_PERCENT)),
            every_turns: self.save_every_turns,
            idle_flush: Duration::from_secs(self.idle_flush_seconds.unwrap_or(DEFAULT_IDLE_FLUSH_SECONDS)),
        }
    }

    pub fn save_interval(&self) -> Option<Duration> {
        (self.save_every_minutes > 0).then(|| Duration::from_secs(self.save_every_minutes * 60))
    }

    pub fn model(&self) -> Option<&str> {
        self.model.as_deref().filter(|m| !m.trim().is_empty())
    }

    pub fn review_rules(&self) -> bool {
        self.review == Review::Rules
    }

    pub fn effort(&self) -> Option<&str> {
        self.effort.as_deref().filter(|m| !m.trim().is_empty())
    }
}

pub fn path(base: &Path) -> PathBuf {
    base.join(FILE_NAME)
}

/// The roots from the environment (`MEMORY_SAVE_HOME`, else
/// `~/.cli-tweaks`), with the log pointed into their state folder.
pub fn roots() -> Result<Roots> {
    let roots = Roots::at(crate::env::base_dir()?);
    crate::store::log::init(&roots.state);
    Ok(roots)
}

pub fn file(roots: &Roots) -> PathBuf {
    path(&roots.base)
}

/// The config of these roots; a broken file is logged and the defaults
/// used.
pub fn of(roots: &Roots) -> Config {
    Config::load_or_default(&file(roots))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(FILE_NAME);
        assert_eq!(Config::load(&file).unwrap(), Config::default());
        std::fs::write(
            &file,
            "save_every_minutes = 10\nfork_timeout_seconds = 60\nmodel = \"claude-haiku\"\neffort = \"low\"\ndisabled_projects = [\"secret\"]\n",
        )
        .unwrap();
        let config = Config::load(&file).unwrap();
        assert_eq!(config.save_interval(), Some(Duration::from_secs(600)));
        assert_eq!(config.model(), Some("claude-haiku"));
        assert_eq!(config.effort(), Some("low"));
        assert_eq!(config.disabled_projects, vec!["secret".to_string()]);
        std::fs::write(&file, "save_every_minute = 10\n").unwrap();
        let err = format!("{:#}", Config::load(&file).unwrap_err());
        assert!(err.contains("is not valid memory-save configuration") && err.contains("save_every_minute"), "{err}");
    }
}
