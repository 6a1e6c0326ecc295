//! `memory-save team init`: the arguments; the work is `crate::team`.

use anyhow::Result;

/// Keep this project's memory in its repository, shared with the team.
#[derive(Debug, clap::Args)]
pub struct TeamArgs {
    #[command(subcommand)]
    action: TeamAction,
}

#[derive(Debug, clap::Subcommand)]
enum TeamAction {
    /// Write .claude/memory/MEMORY.md and a .gitattributes line naming the
    /// merge driver, and use them from now on in every clone with memory-save.
    Init,
}

impl super::Run for TeamArgs {
    fn run(&self) -> Result<()> {
        let TeamAction::Init = self.action;
        let roots = crate::config::roots()?;
        let cwd = super::cwd()?;
        for line in crate::team::init(&roots, &cwd, &crate::config::of(&roots))? {
            super::println(&format!("memory-save: {line}"))?;
        }
        Ok(())
    }
}
