//! Entering a network namespace by its bind-mounted file (`ip netns add NAME` creates
//! `/run/netns/NAME`). `setns(2)` moves only the calling thread; both programs of this crate are
//! single-threaded, so "the thread" is "the process".

use super::check;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Move the calling thread into the network namespace bound at `path`.
pub fn enter(path: &Path) -> io::Result<()> {
    let file = File::open(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    // SAFETY: the fd is open for the duration of the call; CLONE_NEWNET asks the kernel to check
    // that it really is a network namespace.
    check(unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

/// The network namespace the calling thread is in now, to come back to after `enter`.
pub fn current() -> io::Result<File> {
    File::open("/proc/thread-self/ns/net")
}

/// Return to a namespace obtained from [`current`].
pub fn restore(ns: &File) -> io::Result<()> {
    // SAFETY: as in `enter`.
    check(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}
