//! The fork as a child process that cannot outlive its bound: its own
//! process group (so a kill reaches what it started), a parent-death signal
//! on Linux, and on every system a small guard process that ends the fork's
//! group and removes the save's scratch files when the worker dies (a
//! SIGKILL leaves the worker no chance to) or the bound passes.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

/// Starts `command` in its own process group. On Linux the child also gets
/// SIGKILL when the worker dies; the guard covers macOS and a worker that
/// is stopped rather than killed.
pub fn spawn_in_group(command: &mut Command) -> std::io::Result<Child> {
    command.process_group(0);
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpid and prctl are async-signal-safe; the closure
        // allocates nothing.
        let parent = unsafe { libc::getpid() };
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The worker may have died between fork and prctl.
                if libc::getppid() != parent {
                    libc::_exit(0);
                }
                Ok(())
            })
        };
    }
    command.spawn()
}

/// A forked watcher of the worker and the fork's group; killed when the
/// fork ends normally.
pub struct Guard {
    pid: libc::pid_t,
}

/// How often the guard looks at its parent.
const GUARD_TICK: Duration = Duration::from_millis(100);
/// Past the bound, the worker has this long to end the fork itself before
/// the guard does.
const GUARD_GRACE: Duration = Duration::from_secs(5);

impl Guard {
    /// Watches the calling process (the worker): when it is gone, or when
    /// `bound` and a grace have passed, the guard kills process group
    /// `pgid` and unlinks `scratch`, then exits. `None` when fork(2) failed:
    /// the save still runs, with only the worker's own bound.
    pub fn start(pgid: libc::pid_t, bound: Duration, scratch: &[&Path]) -> Option<Guard> {
        let paths: Vec<CString> = scratch.iter().filter_map(|p| CString::new(p.as_os_str().as_bytes()).ok()).collect();
        let deadline_ns = (bound + GUARD_GRACE).as_nanos().min(i64::MAX as u128) as i64;
        // SAFETY: getpid has no preconditions.
        let worker = unsafe { libc::getpid() };
        let started = monotonic_ns();
        // SAFETY: the worker is single-threaded, and between fork and _exit
        // the child only calls async-signal-safe functions (getppid, kill,
        // unlink, nanosleep, clock_gettime, _exit) on memory prepared above.
        match unsafe { libc::fork() } {
            -1 => None,
            0 => unsafe {
                // Hold none of the worker's files: its locks must end with it.
                close_descriptors_from(3);
                loop {
                    let orphaned = libc::getppid() != worker;
                    let late = monotonic_ns().saturating_sub(started) > deadline_ns;
                    if orphaned || late {
                        libc::kill(-pgid, libc::SIGKILL);
                        for path in &paths {
                            libc::unlink(path.as_ptr());
                        }
                        libc::_exit(0);
                    }
                    let tick = libc::timespec { tv_sec: 0, tv_nsec: GUARD_TICK.as_nanos() as _ };
                    libc::nanosleep(&tick, std::ptr::null_mut());
                }
            },
            pid => Some(Guard { pid }),
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // SAFETY: signals and reaps the guard child we forked, by its pid.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// Closes every descriptor from `lowest` up, in a child between fork and
/// exec, where time is not on a hook's path: close_range(2) where the
/// kernel has it (Linux 5.9), else each one up to the soft RLIMIT_NOFILE,
/// capped at 65,536 (macOS, older kernels). Only system calls, so it is
/// async-signal-safe.
///
/// # Safety
/// Call only in a single-threaded child about to exec or exit: it closes
/// descriptors that the rest of the process may still use.
pub unsafe fn close_descriptors_from(lowest: libc::c_int) {
    #[cfg(target_os = "linux")]
    // SAFETY: close_range takes two descriptor numbers and flags.
    if unsafe { libc::syscall(libc::SYS_close_range, lowest as libc::c_uint, libc::c_uint::MAX, 0 as libc::c_uint) }
        == 0
    {
        return;
    }
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit writes into the rlimit we own.
    let known =
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 && limit.rlim_cur != libc::RLIM_INFINITY;
    let top = if known { limit.rlim_cur.min(65_536) as libc::c_int } else { 65_536 };
    for fd in lowest..top {
        // SAFETY: closing a number that is not open only fails with EBADF.
        unsafe { libc::close(fd) };
    }
}

fn monotonic_ns() -> i64 {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec.saturating_mul(1_000_000_000).saturating_add(now.tv_nsec)
}

/// Ends the fork and anything it started: it runs in its own process group.
pub fn kill_group(pgid: i32, child: &mut Child) {
    // SAFETY: kill(2) with a negative pid signals the process group we
    // created for this child; it touches no memory of ours.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let grace = Instant::now();
    while grace.elapsed() < Duration::from_secs(2) {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = child.wait();
}
