//! `memory-save completions bash|zsh|fish`: shell completions on stdout.

use anyhow::Result;

/// Print shell completions: `memory-save completions bash > …`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    shell: clap_complete::Shell,
}

impl super::Run for CompletionsArgs {
    fn run(&self) -> Result<()> {
        let mut out = Vec::new();
        clap_complete::generate(self.shell, &mut super::visible_command(), "memory-save", &mut out);
        super::print(&String::from_utf8_lossy(&out))
    }
}
