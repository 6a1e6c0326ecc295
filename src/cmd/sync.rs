//! `memory-save sync`: the arguments; the work is `crate::sync`.

use anyhow::{Result, bail};

/// Keep the memory of every project the same on each of your machines,
/// through a git remote of yours; without flags, sync now.
#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// Make the memory folder a git repository with this remote (a private
    /// repository, a bare one on a shared disk, ssh), merging with what is
    /// already there.
    #[arg(long, value_name = "GIT-URL", conflicts_with = "off")]
    init: Option<String>,
    /// Stop syncing (the local repository stays).
    #[arg(long)]
    off: bool,
}

impl super::Run for SyncArgs {
    fn run(&self) -> Result<()> {
        let roots = crate::config::roots()?;
        if self.off {
            crate::sync::off(&roots)?;
            return super::println(&format!("memory-save: sync is off for {}", roots.memory.display()));
        }
        let report = match &self.init {
            Some(url) => {
                super::println(&format!("memory-save: setting up {} to sync with {url} …", roots.memory.display()))?;
                crate::sync::init(&roots, url, crate::sync::Caller::of_terminal())?
            }
            None => {
                if crate::sync::state(&roots).is_none() {
                    bail!("sync is off; turn it on with memory-save sync --init <git-url>");
                }
                super::println("memory-save: pulling and pushing …")?;
                crate::sync::sync_now(&roots, crate::sync::Caller::of_terminal())?
            }
        };
        for line in report {
            super::println(&format!("memory-save: {line}"))?;
        }
        Ok(())
    }
}
