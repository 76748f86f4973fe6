//! The only place with `unsafe` in this crate: thin, owned-fd wrappers over the Linux system
//! calls the emulator needs — TUN devices and network namespaces (`tun`, `netns`), the event loop
//! (`poll`: epoll, timerfd, signalfd), process settings (`process`) and socket options that the
//! standard library does not expose (`sock`: IPPROTO_MPTCP, TCP_CONGESTION, MPTCP_INFO …).
//!
//! Every wrapper returns `io::Result` and owns what it opens, so callers never see raw pointers.

pub mod netns;
pub mod poll;
pub mod process;
pub mod sock;
pub mod tun;

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// Turn a `-1` return into the thread's `errno`.
fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Nanoseconds of CLOCK_MONOTONIC. Every process on the host shares this clock (this crate never
/// creates time namespaces), so the sender's and the receiver's stamps compare directly.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One `read(2)` into `buf`; `Ok(None)` when a non-blocking fd has nothing to read.
pub fn read_nonblocking(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is valid for `buf.len()` writable bytes and `fd` is open for the call.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n >= 0 {
        return Ok(Some(n as usize));
    }
    let err = io::Error::last_os_error();
    match err.kind() {
        io::ErrorKind::WouldBlock => Ok(None),
        io::ErrorKind::Interrupted => Ok(None),
        _ => Err(err),
    }
}

/// One `write(2)` of a whole packet.
pub fn write_once(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for `buf.len()` readable bytes and `fd` is open for the call.
    let n = unsafe { libc::write(fd.as_raw_fd(), buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}
