//! The subcommands, one file each, behind one `Run` trait (as zoxide's
//! `src/cmd/`).

pub mod completions;
pub mod doctor;
pub mod history;
pub mod install;
pub mod review;
pub mod status;
pub mod statusline;
pub mod worker;

use std::io::Write;

use anyhow::{Context, Result};

pub trait Run {
    fn run(&self) -> Result<()>;
}

/// Writes `text` to stdout. A closed pipe (`… | head`) comes back as an
/// error whose chain holds `BrokenPipe`, which `main` ends on quietly, as
/// ripgrep does, instead of the panic `print!` would give.
pub fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).context("cannot write to stdout")
}

/// `print` with a newline.
pub fn println(text: &str) -> Result<()> {
    print(&format!("{text}\n"))
}
