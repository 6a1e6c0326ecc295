//! Everything memory-save runs goes through here, as one of three kinds of
//! child: **bounded** in its own process group (the fork, git, `claude
//! --version`; docs/design.md §4, Bounds), **in the foreground** with the
//! terminal and no bound (the editor, a person's `sync`), or **detached**
//! (the worker). The system calls are `sys`'s.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::sys;

#[derive(Debug)]
pub enum Ended {
    Exited(ExitStatus),
    /// The bound passed; its group was killed.
    TimedOut,
}

pub struct Bounded {
    child: Child,
    /// Kills the group and unlinks its scratch files if this process dies.
    _watcher: Option<sys::Watcher>,
}

/// After a SIGTERM at the bound, the group has this long before SIGKILL.
const TERM_GRACE: Duration = Duration::from_secs(2);
/// After the group ends, its pipes have this long to close.
const PIPE_GRACE: Duration = Duration::from_secs(1);
/// Past the bound, the caller's time to end the child before the watcher does.
const WATCH_GRACE: Duration = Duration::from_secs(5);

impl Bounded {
    /// Starts `command` in its own process group (on Linux, SIGKILLed when
    /// this process dies). With `watch`, a `sys::Watcher` guards it.
    pub fn spawn(command: &mut Command, watch: Option<(Duration, &[&Path])>) -> std::io::Result<Bounded> {
        command.process_group(0);
        sys::kill_child_with_parent(command);
        let child = command.spawn()?;
        let watcher = watch
            .and_then(|(bound, scratch)| sys::Watcher::start(child.id() as sys::Pid, bound + WATCH_GRACE, scratch));
        Ok(Bounded { child, _watcher: watcher })
    }

    /// Waits up to `limit` from `started`; the leader's group ends with it.
    pub fn wait(mut self, started: Instant, limit: Duration) -> std::io::Result<Ended> {
        let pid = self.child.id() as sys::Pid;
        loop {
            // Nothing to wait on: whatever the group holds ends.
            if sys::exited_unreaped(pid).inspect_err(|_| self.end_group())? {
                sys::signal_group(pid, true);
                return self.child.wait().map(Ended::Exited);
            }
            if started.elapsed() >= limit {
                self.end_group();
                return Ok(Ended::TimedOut);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM to the group, a grace, then SIGKILL, then the reap.
    fn end_group(&mut self) {
        let pid = self.child.id() as sys::Pid;
        sys::signal_group(pid, false);
        let grace = Instant::now();
        while grace.elapsed() < TERM_GRACE {
            if sys::exited_unreaped(pid).unwrap_or(true) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        sys::signal_group(pid, true);
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct Captured {
    pub ended: Ended,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `command` bounded, `input` on stdin, stdout and stderr captured (at
/// most `max` bytes each kept; the rest is read and dropped, so a full pipe
/// never blocks the child).
pub fn run_captured(command: &mut Command, input: &[u8], limit: Duration, max: usize) -> std::io::Result<Captured> {
    let stdin = if input.is_empty() { Stdio::null() } else { Stdio::piped() };
    command.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped());
    let started = Instant::now();
    let mut bounded = Bounded::spawn(command, None)?;
    let child = &mut bounded.child;
    // Both pipes drained at once: a child that fills one while we wait on
    // the other would hang until the bound.
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        let (send, receive) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut kept = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = (&mut pipe).take(max as u64).read_to_end(&mut kept);
                let _ = std::io::copy(&mut pipe, &mut std::io::sink());
            }
            let _ = send.send(kept);
        });
        receive
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    if let Some(mut stdin) = child.stdin.take() {
        // Written beside the wait, so a child that never reads its input
        // cannot hold this caller past the bound.
        let input = input.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let ended = bounded.wait(started, limit)?;
    // A process that left the group (its own session) may still hold a
    // pipe open: what came by now is what there is.
    let collect = |pipe: std::sync::mpsc::Receiver<Vec<u8>>| pipe.recv_timeout(PIPE_GRACE).unwrap_or_default();
    Ok(Captured { ended, stdout: collect(out), stderr: collect(err) })
}

/// Runs `command` in this process's group, which holds the terminal, so it
/// may ask the person; no bound, since a person is waiting on it.
pub fn run_in_foreground(command: &mut Command) -> std::io::Result<ExitStatus> {
    command.status()
}

/// Starts this binary again with `args`, detached (`sys::spawn_detached`).
pub fn spawn_self_detached(args: &[&str]) -> anyhow::Result<()> {
    use anyhow::Context;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let mut argv = vec![CString::new(exe.as_os_str().as_bytes()).context("this program's path holds a NUL byte")?];
    for arg in args {
        argv.push(CString::new(*arg).context("an argument holds a NUL byte")?);
    }
    sys::spawn_detached(&argv).context("cannot fork the worker")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A script whose leader starts a grandchild that marks it has started,
    /// then marks again `after` seconds later unless it is killed first;
    /// the leader waits for the first mark, then runs `then`.
    fn family(dir: &Path, after: &str, then: &str) -> (String, std::path::PathBuf, std::path::PathBuf) {
        let (started, late) = (dir.join("started"), dir.join("late"));
        let script = format!(
            "(touch '{s}'; sleep {after}; touch '{l}') & while [ ! -e '{s}' ]; do sleep 0.01; done; {then}",
            s = started.display(),
            l = late.display()
        );
        (script, started, late)
    }

    #[test]
    fn a_bounded_child_and_what_it_started_end_at_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let (script, started_mark, late) = family(dir.path(), "1", "sleep 30");
        let started = Instant::now();
        let run =
            run_captured(Command::new("sh").args(["-c", &script]), b"", Duration::from_millis(300), 1024).unwrap();
        assert!(matches!(run.ended, Ended::TimedOut), "{run:?}");
        assert!(started.elapsed() < Duration::from_millis(900), "{:?}", started.elapsed());
        assert!(started_mark.exists(), "the grandchild never started");
        std::thread::sleep(Duration::from_millis(1100));
        assert!(!late.exists(), "the grandchild outlived the group");
    }

    #[test]
    fn a_leaders_exit_ends_its_group_and_the_output_is_kept_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let (script, started_mark, late) = family(dir.path(), "0.5", "head -c 100000 /dev/zero; echo oops >&2");
        let run = run_captured(Command::new("sh").args(["-c", &script]), b"", Duration::from_secs(10), 4096).unwrap();
        assert!(matches!(run.ended, Ended::Exited(status) if status.success()), "{run:?}");
        assert_eq!(run.stdout.len(), 4096, "kept at most max");
        assert_eq!(run.stderr, b"oops\n");
        assert!(started_mark.exists(), "the grandchild never started");
        std::thread::sleep(Duration::from_millis(700));
        assert!(!late.exists(), "a child of the leader outlived it");
    }

    #[test]
    fn a_child_that_never_reads_its_input_still_ends_at_the_bound() {
        let started = Instant::now();
        let input = vec![b'x'; 1024 * 1024];
        let run = run_captured(Command::new("sleep").arg("30"), &input, Duration::from_millis(300), 1024).unwrap();
        assert!(matches!(run.ended, Ended::TimedOut), "{run:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    }

    #[test]
    fn input_reaches_the_child() {
        let run = run_captured(&mut Command::new("cat"), b"hello", Duration::from_secs(10), 1024).unwrap();
        assert_eq!(run.stdout, b"hello");
    }
}
