//! `memory-save worker --session ID` (hidden): the detached save loop
//! (`save::queue::run_worker`) the hooks start.

use anyhow::Result;

#[derive(Debug, clap::Args)]
pub struct WorkerArgs {
    #[arg(long, value_parser = session_id)]
    session: crate::store::state::SessionId,
}

fn session_id(text: &str) -> std::result::Result<crate::store::state::SessionId, String> {
    crate::store::state::SessionId::parse(text).map_err(|e| e.to_string())
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
