//! git, the program (gitoxide cannot push): the one runner every git
//! command of memory-save goes through, and the edits of a repository's
//! `info/exclude`. Hooks never run git.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

/// One git command of a background sync takes at most this long.
pub const LIMIT: Duration = Duration::from_secs(30);
/// Reading one setting is quick, or git is stuck.
const CONFIG_LIMIT: Duration = Duration::from_secs(5);
/// What of git's output is kept: the memory files it shows are at most
/// 50,000 characters each; far more is not git answering us.
const OUTPUT_MAX: usize = 64 * 1024 * 1024;

/// ssh never asks (batch mode) and gives up on a dead host, but runs as
/// the user has it: their `GIT_SSH_COMMAND`, else the repository's or
/// global `core.sshCommand`, else `ssh`, with our two options added.
/// `None` with `GIT_SSH` set: that program may take no ssh options.
fn ssh_command(root: &Path) -> Option<String> {
    const OPTIONS: &str = "-o BatchMode=yes -o ConnectTimeout=10";
    if let Some(theirs) = crate::env::passed_to_fork("GIT_SSH_COMMAND").filter(|c| !c.trim().is_empty()) {
        return Some(format!("{theirs} {OPTIONS}"));
    }
    if crate::env::passed_to_fork("GIT_SSH").is_some() {
        return None;
    }
    let configured = crate::process::run_captured(
        Command::new("git").arg("-C").arg(root).args(["config", "--get", "core.sshCommand"]),
        b"",
        CONFIG_LIMIT,
        64 * 1024,
    )
    .ok()
    .filter(|run| matches!(run.ended, crate::process::Ended::Exited(status) if status.success()))
    .map(|run| String::from_utf8_lossy(&run.stdout).trim().to_string())
    .filter(|c| !c.is_empty());
    Some(format!("{} {OPTIONS}", configured.as_deref().unwrap_or("ssh")))
}

/// Who a sync runs for: the worker after a save, in the background, where
/// nothing may ask and everything is bounded; or a person who ran
/// `memory-save sync` at a terminal, whose fetch and push run in the
/// foreground with no bound, so ssh can ask for a passphrase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    Background,
    Person,
}

impl Caller {
    /// A person, when the command's input and error output are a terminal.
    pub fn of_terminal() -> Caller {
        use std::io::IsTerminal;
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Caller::Person
        } else {
            Caller::Background
        }
    }
}

/// `git fetch` and `git push`, the steps that reach the remote: for a
/// person, in the foreground, where git and ssh may ask and print to the
/// terminal; else bounded and asking nothing (`run`).
pub fn remote(root: &Path, args: &[&str], caller: Caller) -> Result<()> {
    if caller == Caller::Background {
        return run(root, args, LIMIT).map(drop);
    }
    let status = crate::process::run_in_foreground(
        Command::new("git").arg("-C").arg(root).args(args).env("GIT_MERGE_AUTOEDIT", "no"),
    )
    .context("cannot run git; install git to sync memory")?;
    if !status.success() {
        bail!("git {} failed (what git said is above)", args.first().unwrap_or(&""));
    }
    Ok(())
}

/// Runs `git -C root …` bounded in time, in its own process group (a
/// hung ssh dies with it), never asking for anything.
pub fn run(root: &Path, args: &[&str], limit: Duration) -> Result<String> {
    let mut command = Command::new("git");
    command
        .arg("-C")
        .arg(root)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .envs(ssh_command(root).map(|c| ("GIT_SSH_COMMAND", c)))
        .env("GIT_MERGE_AUTOEDIT", "no");
    let run = crate::process::run_captured(&mut command, b"", limit, OUTPUT_MAX)
        .context("cannot run git; install git to sync memory")?;
    let (status, stdout, stderr) = match run.ended {
        crate::process::Ended::Exited(status) => (status, run.stdout, run.stderr),
        crate::process::Ended::TimedOut => {
            bail!("git {} took over {} s and was stopped", args.first().unwrap_or(&""), limit.as_secs())
        }
    };
    if !status.success() {
        // git's message spans lines ("fatal: …", then advice): all of it,
        // on one line, bounded.
        let stderr = String::from_utf8_lossy(&stderr);
        let said: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let said = crate::memory::text::shorten(&said.join(" "), 400);
        bail!("git {} failed: {said}", args.first().unwrap_or(&""));
    }
    Ok(String::from_utf8_lossy(&stdout).into_owned())
}

/// The line a project-scoped install keeps out of git.
const EXCLUDE_LINE: &str = "/.claude/settings.local.json";

/// Keeps a project-local settings file out of git, as its name promises:
/// when git does not ignore it already, a line in the repository's own
/// `info/exclude` (never a file that is committed). Returns that file.
pub fn exclude_local_settings(settings: &Path) -> Option<String> {
    let top = settings.parent()?.parent()?;
    let limit = CONFIG_LIMIT;
    let rel = ".claude/settings.local.json";
    if run(top, &["check-ignore", "-q", rel], limit).is_ok() {
        return None; // ignored already
    }
    let common = run(top, &["rev-parse", "--path-format=absolute", "--git-common-dir"], limit).ok()?;
    let exclude = Path::new(common.trim()).join("info").join("exclude");
    let mut text = std::fs::read_to_string(&exclude).unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&format!("# added by memory-save install --project\n{EXCLUDE_LINE}\n"));
    if let Some(dir) = exclude.parent() {
        let _ = fs_err::create_dir_all(dir);
    }
    crate::store::fsutil::write_atomic_keeping_mode(&exclude, text.as_bytes(), 0o644).ok()?;
    Some(exclude.display().to_string())
}

/// Takes out the line `exclude_local_settings` added, and its comment.
pub fn unexclude_local_settings(exclude: &Path) {
    let Ok(text) = std::fs::read_to_string(exclude) else { return };
    let kept: String = text
        .split_inclusive('\n')
        .filter(|l| l.trim_end() != EXCLUDE_LINE && l.trim_end() != "# added by memory-save install --project")
        .collect();
    if kept != text {
        let _ = crate::store::fsutil::write_atomic_keeping_mode(exclude, kept.as_bytes(), 0o644);
    }
}
