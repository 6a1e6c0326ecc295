//! Where memory and state live. `MEMORY_SAVE_HOME` moves both roots (tests,
//! or a user who wants them elsewhere); otherwise `~/.cli-tweaks`, the folder
//! the original mod used, so a user can switch between the two.

use std::path::PathBuf;

use anyhow::Result;

#[derive(Debug, Clone)]
pub struct Roots {
    /// `<root>`: `~/.cli-tweaks` unless moved; holds the config file.
    pub base: PathBuf,
    /// `<root>/memory`: one folder per project, holding MEMORY.md.
    pub memory: PathBuf,
    /// `<root>/state/memory-save`: our private state (mode 0700).
    pub state: PathBuf,
}

impl Roots {
    pub fn from_env() -> Result<Roots> {
        let base = crate::env::base_dir()?;
        Ok(Roots { memory: base.join("memory"), state: base.join("state").join("memory-save"), base })
    }

    pub fn project_dir(&self, project: &str) -> PathBuf {
        self.memory.join(project)
    }

    pub fn sessions_dir(&self) -> PathBuf {
        self.state.join("sessions")
    }

    pub fn projects_state_dir(&self) -> PathBuf {
        self.state.join("projects")
    }

    pub fn config_file(&self) -> PathBuf {
        crate::config::path(&self.base)
    }

    pub fn config(&self) -> crate::config::Config {
        crate::config::Config::load_or_default(&self.config_file())
    }

    pub fn log_file(&self) -> PathBuf {
        self.state.join("memory-save.log")
    }

    pub fn saves_log(&self) -> PathBuf {
        self.state.join("saves.jsonl")
    }
}
