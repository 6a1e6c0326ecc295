//! `memory-save worker --session ID` (hidden): the detached save loop
//! (`save::queue::run_worker`) the hooks start.

use anyhow::Result;

use crate::store::state::SessionId;

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    #[arg(long, value_parser = |text: &str| SessionId::parse(text).map_err(|e| e.to_string()))]
    session: SessionId,
}

impl super::Run for WorkerArgs {
    /// Errors go to the log: nobody reads a detached worker's output.
    fn run(&self) -> Result<()> {
        let result = crate::config::roots().and_then(|roots| crate::save::queue::run_worker(&roots, &self.session));
        if let Err(e) = result {
            crate::store::log::error(&format!("worker for session {}: {e:#}", self.session));
        }
        Ok(())
    }
}
