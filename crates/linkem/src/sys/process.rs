//! Process settings that make timing precise and cleanup automatic.

use super::check;
use std::io;

/// Ask the kernel to send `signal` to this process when its parent dies, so that a killed
/// orchestrator does not leave emulators or traffic running. If the environment names the
/// expected parent (`LINKEM_PARENT_PID`) and the parent is already someone else, the parent died
/// before the request took effect: returns false and the caller should exit.
pub fn die_with_parent(signal: libc::c_int) -> io::Result<bool> {
    // SAFETY: prctl with integer arguments only.
    check(unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, signal as libc::c_ulong, 0, 0, 0) })?;
    // SAFETY: getppid cannot fail.
    let parent = unsafe { libc::getppid() };
    Ok(match std::env::var("LINKEM_PARENT_PID") {
        Ok(p) => p.trim().parse::<i32>().map_or(true, |p| p == parent),
        Err(_) => true,
    })
}

/// Raise this process's soft limit of open files to its hard limit: one traffic program holds
/// a socket per flow of its entry (up to ten thousand), and the usual soft limit is 1024.
pub fn raise_open_file_limit() -> io::Result<()> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is valid for the call to write.
    check(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) })?;
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max;
        // SAFETY: `limit` is valid for the call to read.
        check(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) })?;
    }
    Ok(())
}

/// Shrink the timer slack (50 µs by default) so that timerfd expiries are not deferred.
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) })?;
    Ok(())
}

/// Run this thread under SCHED_FIFO at `priority`, so that ordinary load cannot delay packet
/// releases. The kernel's real-time throttling (sched_rt_runtime_us) keeps a runaway loop from
/// taking the whole CPU.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is valid for the call; pid 0 is the calling thread.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// User and system CPU seconds consumed so far by this process.
pub fn cpu_seconds() -> (f64, f64) {
    // SAFETY: `usage` is a zeroed, writable rusage; RUSAGE_SELF always exists.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let secs = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}
