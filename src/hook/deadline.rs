//! A hard deadline for a process that must never hang: a hook, the status
//! line. When it passes, the process exits 0 at once (a non-zero exit would
//! show as a hook error, 2 would block the prompt). A kill midway leaves
//! nothing half-written: every write of ours is atomic or re-read whole.

use std::time::Duration;

/// Written to stderr when the deadline passes; only Claude Code's debug
/// view shows a hook's stderr when it exits 0.
const MESSAGE: &[u8] = b"memory-save: deadline passed; exiting without finishing (see memory-save doctor)\n";

extern "C" fn on_deadline(_signal: libc::c_int) {
    // SAFETY: write and _exit are async-signal-safe; MESSAGE is static.
    unsafe {
        libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
        libc::_exit(0);
    }
}

/// Arms a one-shot real-time timer. Neither the timer nor the handler
/// reaches the worker this process may start: fork(2) drops timers, and
/// exec resets handlers.
pub fn arm(limit: Duration) {
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
