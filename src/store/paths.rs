//! Where memory and state live, below one base folder (`config::roots`
//! says which).

use std::path::PathBuf;

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
    pub fn at(base: PathBuf) -> Roots {
        Roots { memory: base.join("memory"), state: base.join("state").join("memory-save"), base }
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

    pub fn saves_log(&self) -> PathBuf {
        self.state.join("saves.jsonl")
    }
}
