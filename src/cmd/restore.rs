//! `memory-save restore [on|off]`: context-restore's setting (docs/using.md).

use anyhow::Result;

/// Whether a skill or command changed on disk just before its call gets
/// its current text: `on` (the default) or `off`; with no word, the
/// setting and the last event.
#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    #[arg(value_parser = ["on", "off"])]
    setting: Option<String>,
}

impl super::Run for RestoreArgs {
    fn run(&self) -> Result<()> {
        let roots = crate::config::roots()?;
        let mut state = crate::restore::state::read(&roots);
        if let Some(setting) = &self.setting {
            state.off = setting == "off";
            crate::restore::state::write(&roots, &state)?;
        }
        super::println(&format!("context-restore: {}", line(&state)))
    }
}

/// `on · last: greet at 2026-12-01 14:32:05`, for this command and `status`.
pub fn line(state: &crate::restore::state::RestoreState) -> String {
    let setting = if state.off { "off (memory-save restore on turns it on)" } else { "on" };
    match &state.last {
        Some(event) => format!(
            "{setting} · last: changed on disk, the call got the current text: {} ({})",
            event.name,
            crate::env::timestamp(event.at)
        ),
        None => format!("{setting} · no call has needed it yet"),
    }
}
