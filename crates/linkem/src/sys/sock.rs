//! Stream sockets with the options the standard library lacks: IPPROTO_MPTCP (RFC 8684 as
//! implemented by Linux ≥ 5.6), TCP_CONGESTION, the FORCE buffer sizes, and getsockopt into a
//! raw buffer for TCP_INFO / MPTCP_INFO / MPTCP_TCPINFO / MPTCP_SUBFLOW_ADDRS.

use super::check;
use std::io;
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

pub const IPPROTO_MPTCP: libc::c_int = 262;
pub const SOL_MPTCP: libc::c_int = 284;
pub const MPTCP_INFO: libc::c_int = 1;
pub const MPTCP_TCPINFO: libc::c_int = 2;
pub const MPTCP_SUBFLOW_ADDRS: libc::c_int = 3;

/// A new non-blocking IPv4 stream socket; MPTCP when `mptcp` is set.
pub fn stream_socket(mptcp: bool) -> io::Result<OwnedFd> {
    let proto = if mptcp {
        IPPROTO_MPTCP
    } else {
        libc::IPPROTO_TCP
    };
    // SAFETY: plain syscall; the returned fd is owned below.
    let fd = check(unsafe {
        libc::socket(
            libc::AF_INET,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            proto,
        )
    })
    .map_err(|e| {
        if mptcp && e.raw_os_error() == Some(libc::EPROTONOSUPPORT) {
            io::Error::new(
                e.kind(),
                "MPTCP sockets are not supported (net.mptcp.enabled = 0?)",
            )
        } else {
            e
        }
    })?;
    // SAFETY: fresh fd owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn sockaddr(addr: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: addr.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*addr.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

pub fn bind(fd: BorrowedFd<'_>, addr: SocketAddrV4) -> io::Result<()> {
    let sa = sockaddr(addr);
    // SAFETY: `sa` is a valid sockaddr_in for the call.
    check(unsafe {
        libc::bind(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Start a non-blocking connect; completion shows as writability (then check `take_error`).
pub fn connect_start(fd: OwnedFd, addr: SocketAddrV4) -> io::Result<TcpStream> {
    let sa = sockaddr(addr);
    // SAFETY: `sa` is a valid sockaddr_in for the call.
    let ret = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if ret < 0 {
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(err);
        }
    }
    Ok(TcpStream::from(fd))
}

pub fn listen(fd: OwnedFd, addr: SocketAddrV4, backlog: i32) -> io::Result<TcpListener> {
    set_int(fd_ref(&fd), libc::SOL_SOCKET, libc::SO_REUSEADDR, 1)?;
    bind(fd_ref(&fd), addr)?;
    // SAFETY: plain syscall on an open fd.
    check(unsafe { libc::listen(fd.as_raw_fd(), backlog) })?;
    Ok(TcpListener::from(fd))
}

fn fd_ref(fd: &OwnedFd) -> BorrowedFd<'_> {
    use std::os::fd::AsFd;
    fd.as_fd()
}

pub fn set_int(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `value` is a valid int for the call.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Make closing the socket abortive (SO_LINGER with a zero timeout): the kernel resets the
/// connection and frees it at once, an MPTCP socket with MP_FASTCLOSE, instead of keeping it,
/// its subflows and their congestion control alive through FIN and TIME-WAIT states.
pub fn abort_on_close(fd: BorrowedFd<'_>) -> io::Result<()> {
    let linger = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: `linger` is a valid `struct linger` for the call.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

pub fn get_int(fd: BorrowedFd<'_>, level: libc::c_int, name: libc::c_int) -> io::Result<i32> {
    let mut buf = [0u8; 4];
    let n = get_raw(fd, level, name, &mut buf)?;
    if n < 4 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "short getsockopt",
        ));
    }
    Ok(i32::from_ne_bytes(buf))
}

/// Select the congestion control of one socket by name (TCP_CONGESTION). With CAP_NET_ADMIN any
/// loaded algorithm may be chosen, not only those in net.ipv4.tcp_allowed_congestion_control.
pub fn set_congestion(fd: BorrowedFd<'_>, name: &str) -> io::Result<()> {
    // SAFETY: `name` is valid for `name.len()` bytes during the call.
    check(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            name.as_ptr().cast(),
            name.len() as libc::socklen_t,
        )
    })
    .map_err(|e| io::Error::new(e.kind(), format!("TCP_CONGESTION {name}: {e}")))?;
    Ok(())
}

/// The congestion control the socket runs (TCP_CONGESTION). On an MPTCP socket this is its
/// first subflow's: the kernel accepts any name set on an MPTCP socket and leaves a subflow on
/// the default algorithm when the name is not registered, so this is how a run learns what its
/// subflows really ran.
pub fn congestion(fd: BorrowedFd<'_>) -> io::Result<String> {
    // TCP_CA_NAME_MAX is 16, NUL included.
    let mut buf = [0u8; 16];
    let n = get_raw(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, &mut buf)?;
    let name = &buf[..n];
    let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    Ok(String::from_utf8_lossy(&name[..end]).into_owned())
}

/// getsockopt into `buf` (which may carry an input header, as MPTCP_TCPINFO's does); returns the
/// length the kernel wrote.
pub fn get_raw(
    fd: BorrowedFd<'_>,
    level: libc::c_int,
    name: libc::c_int,
    buf: &mut [u8],
) -> io::Result<usize> {
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: `buf` is valid for `len` writable bytes, `len` is a valid socklen_t.
    check(unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    Ok(len as usize)
}
