//! The exit codes, for scripts: named here, listed in `--help`
//! (`HELP`) and in docs/using.md, and checked against both by the tests.

/// Done. A hook always exits with this, whatever happened: 2 would block
/// the user's prompt or stop, anything else shows as an error.
pub const DONE: u8 = 0;
/// The command failed; the message says why.
pub const FAILED: u8 = 1;
/// A usage error: an unknown command, flag or value (clap's own code).
pub const USAGE: u8 = 2;
/// `doctor` ran and found a problem; each is printed with what to do.
pub const PROBLEMS_FOUND: u8 = 3;

/// The `--help` text that lists them (a test checks it against `ALL`).
pub const HELP: &str = "\
Exit codes:
  0  done (a hook always exits 0, whatever happened; see the log)
  1  the command failed
  2  usage error: an unknown command, flag or value
  3  doctor found a problem";

/// `doctor` found this many problems: not a failure of the command, so it
/// has a code of its own.
#[derive(Debug)]
pub struct ProblemsFound(pub usize);

impl std::fmt::Display for ProblemsFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} found", crate::memory::report::plural(self.0 as u64, "problem"))
    }
}

impl std::error::Error for ProblemsFound {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every code with its meaning, in order.
    const ALL: [(u8, &str); 4] = [
        (DONE, "done (a hook always exits 0, whatever happened; see the log)"),
        (FAILED, "the command failed"),
        (USAGE, "usage error: an unknown command, flag or value"),
        (PROBLEMS_FOUND, "doctor found a problem"),
    ];

    #[test]
    fn help_and_readme_list_every_code() {
        let lines: Vec<&str> = HELP.lines().skip(1).collect();
        assert_eq!(lines.len(), ALL.len());
        for ((code, meaning), line) in ALL.iter().zip(lines) {
            assert_eq!(line, format!("  {code}  {meaning}"));
        }
        let read =
            |page: &str| std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(page)).unwrap();
        // The READMEs name the codes in one line and point to the table.
        for (page, table) in [("README.md", "docs/using.md"), ("README.tr.md", "docs/using.tr.md")] {
            let text = read(page);
            assert!(text.contains(&format!("]({table}#")) && text.contains("3 `doctor`"), "{page}");
        }
        for page in ["docs/using.md", "docs/using.tr.md"] {
            let text = read(page);
            for (code, _) in ALL {
                assert!(text.contains(&format!("\n| {code} | ")), "{page} does not list exit code {code}");
            }
            let failed = text.lines().find(|l| l.starts_with("| 1 | ")).unwrap_or_default();
            assert!(!failed.contains("doctor"), "{page} gives doctor's findings exit 1: {failed}");
        }
    }
}
