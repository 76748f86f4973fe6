//! The event loop's kernel objects: epoll for readiness, a timerfd armed at absolute
//! CLOCK_MONOTONIC times for the next packet release, and a signalfd so that SIGTERM/SIGUSR1
//! arrive as ordinary events instead of interrupting the loop.

use super::check;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

pub struct Epoll {
    fd: OwnedFd,
}

/// Readiness of one registered fd, identified by the token given to [`Epoll::add`].
#[derive(Clone, Copy, Debug)]
pub struct Ready {
    pub token: u64,
    pub writable: bool,
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall; the returned fd is owned below.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn ctl(&self, op: libc::c_int, fd: BorrowedFd<'_>, token: u64, events: u32) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: both fds are open and `ev` is valid for the call.
        check(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd.as_raw_fd(), &mut ev) })?;
        Ok(())
    }

    /// Watch `fd` for input (and for output when `write` is set).
    pub fn add(&self, fd: BorrowedFd<'_>, token: u64, write: bool) -> io::Result<()> {
        let mut events = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
        if write {
            events |= libc::EPOLLOUT as u32;
        }
        self.ctl(libc::EPOLL_CTL_ADD, fd, token, events)
    }

    pub fn remove(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// Wait up to `timeout_ms` (-1: forever, 0: poll) and append what is ready to `out`.
    pub fn wait(&self, out: &mut Vec<Ready>, timeout_ms: i32) -> io::Result<()> {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: `events` is valid for 64 entries during the call.
        let n =
            unsafe { libc::epoll_wait(self.fd.as_raw_fd(), events.as_mut_ptr(), 64, timeout_ms) };
        if n < 0 {
            let err = io::Error::last_os_error();
            return if err.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(err)
            };
        }
        for ev in &events[..n as usize] {
            let bits = ev.events;
            out.push(Ready {
                token: ev.u64,
                writable: bits & (libc::EPOLLOUT as u32) != 0,
            });
        }
        Ok(())
    }
}

/// A CLOCK_MONOTONIC timerfd armed at absolute times.
pub struct TimerFd {
    fd: OwnedFd,
}

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: plain syscall; the returned fd is owned below.
        let fd = check(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })?;
        // SAFETY: fresh fd owned by nobody else.
        Ok(TimerFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Fire once at the absolute monotonic time `at_ns` (0 disarms).
    pub fn arm_at(&self, at_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: `spec` is valid for the call; the old value is not requested.
        check(unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })?;
        Ok(())
    }

    /// Consume an expiry so that the fd stops being readable.
    pub fn drain(&self) {
        let mut buf = [0u8; 8];
        let _ = super::read_nonblocking(self.fd.as_fd(), &mut buf);
    }
}

impl AsFd for TimerFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Signals delivered through a file descriptor. Creating it blocks the signals for the thread,
/// so they no longer interrupt system calls or run default actions.
pub struct SignalFd {
    fd: OwnedFd,
}

impl SignalFd {
    pub fn new(signals: &[libc::c_int]) -> io::Result<SignalFd> {
        // SAFETY: `set` is a local sigset initialised by sigemptyset before use; the calls only
        // read or write it and the thread's signal mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &s in signals {
                libc::sigaddset(&mut set, s);
            }
            check(libc::pthread_sigmask(
                libc::SIG_BLOCK,
                &set,
                std::ptr::null_mut(),
            ))?;
            let fd = check(libc::signalfd(
                -1,
                &set,
                libc::SFD_NONBLOCK | libc::SFD_CLOEXEC,
            ))?;
            Ok(SignalFd {
                fd: OwnedFd::from_raw_fd(fd),
            })
        }
    }

    /// The next pending signal, if any.
    pub fn next(&self) -> Option<libc::c_int> {
        let mut buf = [0u8; std::mem::size_of::<libc::signalfd_siginfo>()];
        match super::read_nonblocking(self.fd.as_fd(), &mut buf) {
            Ok(Some(n)) if n == buf.len() => {
                Some(u32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]) as libc::c_int)
            }
            _ => None,
        }
    }
}

impl AsFd for SignalFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
