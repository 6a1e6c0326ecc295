//! The one seam for the operating system: every libc call memory-save makes
//! is here, for Unix (Linux and macOS; docs/design.md §1). A Windows port
//! has this file and `process` to fill.

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

pub type Pid = libc::pid_t;

/// Flags for every file of ours we open by name: never through a symlink
/// (ELOOP), never blocking on a planted FIFO or device (`fstat` then says
/// what it is), never leaked into a child.
pub const SAFE_OPEN: i32 = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
/// Never through a symlink, for a file we create.
pub const NO_FOLLOW: i32 = libc::O_NOFOLLOW;

/// The open failed because the path is a symlink (`SAFE_OPEN`).
pub fn is_link_refused(error: &io::Error) -> bool {
    error.raw_os_error() == Some(libc::ELOOP)
}

pub fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

pub fn check_writable(path: &Path) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes()).map_err(|_| io::Error::other("the path has a NUL byte"))?;
    // SAFETY: a valid C string; access has no other preconditions.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The errors a full disk and a read-only mount give (test faults).
#[cfg(debug_assertions)]
pub fn disk_full() -> io::Error {
    io::Error::from_raw_os_error(libc::ENOSPC)
}

#[cfg(debug_assertions)]
pub fn read_only() -> io::Error {
    io::Error::from_raw_os_error(libc::EROFS)
}

/// Ends this process with SIGKILL, as a crash would (test faults).
#[cfg(debug_assertions)]
pub fn kill_self() {
    // SAFETY: the process signals itself.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
}

/// Written to stderr when the deadline passes; only Claude Code's debug
/// view shows a hook's stderr when it exits 0.
const DEADLINE_MESSAGE: &[u8] = b"memory-save: deadline passed; exiting without finishing (see memory-save doctor)\n";

extern "C" fn on_deadline(_signal: libc::c_int) {
    // SAFETY: write and _exit are async-signal-safe; the message is static.
    unsafe {
        libc::write(2, DEADLINE_MESSAGE.as_ptr().cast(), DEADLINE_MESSAGE.len());
        libc::_exit(0);
    }
}

/// What of Rust's own start this program needs, run first by its entry
/// point (`main.rs`): a closed standard descriptor is opened on /dev/null,
/// so no file opened later becomes stdout and takes what is printed, and
/// SIGPIPE is ignored, so a reader that went away is `BrokenPipe`, never a
/// silent death.
pub fn start_process() {
    for fd in 0..3 {
        // SAFETY: fcntl and open take plain values; the open fills the
        // lowest closed descriptor, the one just found closed.
        unsafe {
            let closed =
                libc::fcntl(fd, libc::F_GETFD) == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
            if closed && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) == -1 {
                libc::abort();
            }
        }
    }
    // SAFETY: sets a signal's disposition to a constant.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// The arguments `main` was given, less the program's name.
///
/// # Safety
/// `argv` holds `argc` pointers to NUL-terminated strings, as the C runtime
/// passes them to `main`.
pub unsafe fn arguments(argc: libc::c_int, argv: *const *const libc::c_char) -> Vec<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    (1..usize::try_from(argc).unwrap_or(0))
        // SAFETY: the caller's promise: each of the `argc` pointers is a C string.
        .map(|n| unsafe { std::ffi::CStr::from_ptr(*argv.add(n)) })
        .map(|arg| std::ffi::OsStr::from_bytes(arg.to_bytes()).to_os_string())
        .collect()
}

/// Arms a one-shot timer that says so on stderr and exits 0. Neither the
/// timer nor the handler reaches a child: fork(2) drops timers, exec
/// resets handlers.
pub fn arm_deadline(limit: Duration) {
    let value =
        libc::timeval { tv_sec: limit.as_secs() as libc::time_t, tv_usec: limit.subsec_micros() as libc::suseconds_t };
    let timer = libc::itimerval { it_interval: libc::timeval { tv_sec: 0, tv_usec: 0 }, it_value: value };
    // SAFETY: installs a handler that only calls async-signal-safe
    // functions, then arms ITIMER_REAL; both calls take plain values.
    unsafe {
        libc::signal(libc::SIGALRM, on_deadline as extern "C" fn(libc::c_int) as libc::sighandler_t);
        libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut());
    }
}

/// Starts `argv[0]` detached: its own session, stdio on /dev/null, no
/// descriptor of ours. A plain fork and exec, since `std::process::Command`
/// waits for the exec, a millisecond on every hook; exec failure exits 127.
pub fn spawn_detached(argv: &[CString]) -> io::Result<()> {
    let Some(program) = argv.first() else { return Err(io::Error::other("no program to start")) };
    let mut pointers: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    pointers.push(std::ptr::null());
    let null: &CStr = c"/dev/null";
    // SAFETY: the callers are single-threaded, and the child only calls
    // setsid, open, dup2, close, close_range or getrlimit, execv and _exit
    // before it is replaced.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => unsafe {
            libc::setsid();
            let fd = libc::open(null.as_ptr(), libc::O_RDWR);
            if fd >= 0 {
                for target in 0..3 {
                    libc::dup2(fd, target);
                }
            }
            // Claude Code may have passed descriptors beyond stdio; a child
            // holding one of its pipes would keep a hook looking unfinished.
            close_descriptors_from(3);
            libc::execv(program.as_ptr(), pointers.as_ptr());
            libc::_exit(127)
        },
        _ => Ok(()),
    }
}

/// Makes the child `command` starts get SIGKILL when this process dies
/// (Linux; elsewhere the guard covers it).
pub fn kill_child_with_parent(command: &mut std::process::Command) {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: getpid and prctl are async-signal-safe; the closure
        // allocates nothing.
        let parent = unsafe { libc::getpid() };
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                // The parent may have died between fork and prctl.
                if libc::getppid() != parent {
                    libc::_exit(0);
                }
                Ok(())
            })
        };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Sends SIGTERM (`hard`: SIGKILL) to every process of group `pgid`.
pub fn signal_group(pgid: Pid, hard: bool) {
    let signal = if hard { libc::SIGKILL } else { libc::SIGTERM };
    // SAFETY: kill(2) with a negative pid signals the process group; it
    // touches no memory of ours.
    unsafe { libc::kill(-pgid, signal) };
}

/// Whether child `pid` has exited, without reaping it: until reaped, its
/// pid and group id cannot be reused, so a group kill cannot hit a stranger.
pub fn exited_unreaped(pid: Pid) -> io::Result<bool> {
    // SAFETY: siginfo_t is plain data; waitid fills it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waits on our own child by pid, writing only into `info`.
    let rc = unsafe {
        libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOHANG | libc::WNOWAIT)
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    // With WNOHANG and no change, the pid field stays 0.
    // SAFETY: reading the pid of a filled siginfo_t.
    Ok(unsafe { info.si_pid() } != 0)
}

/// A forked watcher: when this process is gone (a SIGKILL leaves no chance
/// to clean up) or the bound has passed, it kills the child's group and
/// unlinks the scratch files. Killed when dropped.
pub struct Watcher {
    pid: Pid,
}

/// How often the watcher looks at its parent.
const WATCH_TICK: Duration = Duration::from_millis(100);

impl Watcher {
    /// `None` when fork(2) failed: the child runs with the caller's bound only.
    pub fn start(pgid: Pid, after: Duration, scratch: &[&Path]) -> Option<Watcher> {
        let paths: Vec<CString> = scratch.iter().filter_map(|p| CString::new(p.as_os_str().as_bytes()).ok()).collect();
        let deadline_ns = after.as_nanos().min(i64::MAX as u128) as i64;
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        let started = monotonic_ns();
        // SAFETY: the caller is single-threaded, and between fork and _exit
        // the child only calls async-signal-safe functions (getppid, kill,
        // unlink, nanosleep, clock_gettime, _exit) on memory prepared above.
        match unsafe { libc::fork() } {
            -1 => None,
            0 => unsafe {
                // Hold none of the parent's files: its locks must end with it.
                close_descriptors_from(3);
                loop {
                    let orphaned = libc::getppid() != parent;
                    let late = monotonic_ns().saturating_sub(started) > deadline_ns;
                    if orphaned || late {
                        libc::kill(-pgid, libc::SIGKILL);
                        for path in &paths {
                            libc::unlink(path.as_ptr());
                        }
                        libc::_exit(0);
                    }
                    let tick = libc::timespec { tv_sec: 0, tv_nsec: WATCH_TICK.as_nanos() as _ };
                    libc::nanosleep(&tick, std::ptr::null_mut());
                }
            },
            pid => Some(Watcher { pid }),
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        // SAFETY: signals and reaps the watcher child we forked, by its pid.
        unsafe {
            libc::kill(self.pid, libc::SIGKILL);
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// Closes every descriptor from `lowest` up: close_range(2) on Linux 5.9+,
/// else each up to the soft RLIMIT_NOFILE, capped at 65,536. Only system
/// calls, so it is async-signal-safe.
///
/// # Safety
/// Call only in a single-threaded child about to exec or exit: it closes
/// descriptors that the rest of the process may still use.
unsafe fn close_descriptors_from(lowest: libc::c_int) {
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

#[cfg(test)]
mod tests {
    /// A process started with stdin and stdout closed opens its next file
    /// past them once `start_process` ran: that file is never fd 1, where
    /// what is printed would go. And SIGPIPE is ignored. Checked in a
    /// forked child, whose descriptors and signals are its own.
    #[test]
    fn a_closed_standard_descriptor_is_never_given_to_a_file() {
        // SAFETY: the child calls only close, fcntl, open, signal and _exit
        // before it exits, none of which allocates or takes a lock.
        let child = unsafe { libc::fork() };
        if child == 0 {
            unsafe {
                libc::close(0);
                libc::close(1);
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                super::start_process();
                let fd = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
                let ignored = libc::signal(libc::SIGPIPE, libc::SIG_IGN) == libc::SIG_IGN;
                libc::_exit(if fd > 2 && ignored { 0 } else { 1 });
            }
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status}");
    }

    /// `main`'s own arguments, bytes as given (a path need not be UTF-8),
    /// the program's name left out.
    #[test]
    fn the_arguments_are_argv_after_the_programs_name() {
        use std::os::unix::ffi::OsStrExt;
        let given = [c"memory-save", c"hook", c"stop", c"caf\xe9"];
        let argv: Vec<*const libc::c_char> = given.iter().map(|arg| arg.as_ptr()).collect();
        // SAFETY: four pointers to NUL-terminated strings that outlive the call.
        let args = unsafe { super::arguments(4, argv.as_ptr()) };
        let bytes: Vec<&[u8]> = args.iter().map(|arg| arg.as_bytes()).collect();
        assert_eq!(bytes, [&b"hook"[..], b"stop", b"caf\xe9"]);
        assert!(unsafe { super::arguments(0, argv.as_ptr()) }.is_empty());
    }
}
