//! TUN devices (Documentation/networking/tuntap.rst): layer-3 devices whose packets are read
//! and written as raw IP datagrams (IFF_TUN | IFF_NO_PI). A device made without TUNSETPERSIST
//! disappears when its last fd closes, so an emulator that dies leaves no device behind.

use super::check;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Create (in the calling thread's network namespace) a non-blocking TUN device named `name`.
pub fn create(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('/') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("'{name}' is not a valid interface name (1-15 characters, no '/')"),
        ));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open("/dev/net/tun")?;
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: `req` is a properly sized `struct ifreq` that outlives the call; the fd is open.
    check(unsafe { libc::ioctl(file.as_raw_fd(), TUNSETIFF as _, &mut req as *mut IfReq) })
        .map_err(|e| io::Error::new(e.kind(), format!("TUNSETIFF {name}: {e}")))?;
    Ok(OwnedFd::from(file))
}
