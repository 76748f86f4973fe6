//! The receiving side: accept connections, read everything as fast as possible, count bytes,
//! stamp block completions, and sample the receive buffer.

use super::{block_bytes, parse_hello, Transport, HELLO_LEN};
use crate::sys::poll::{Epoll, Ready, TimerFd};
use crate::sys::{self, sock};
use mpsim::scenario::AppSpec;
use serde::{Deserialize, Serialize};
use std::io::{self, Read};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::path::PathBuf;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    pub netns: Option<PathBuf>,
    pub listen: SocketAddrV4,
    pub transport: Transport,
    /// Fixed receive buffer (SO_RCVBUFFORCE, set on the listener so that the window scale of
    /// the handshake matches). None: the namespace's auto-tuning.
    #[serde(default)]
    pub rcvbuf_bytes: Option<u64>,
    pub app: AppSpec,
    pub warmup_s: f64,
    pub duration_s: f64,
    pub sample_interval_ms: f64,
    pub out: PathBuf,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct RecvSample {
    pub t_ns: u64,
    pub bytes: u64,
    /// Receive memory in use (SO_MEMINFO rmem_alloc, bytes including overhead).
    pub rmem_alloc: u32,
    /// Current receive buffer size (SO_RCVBUF).
    pub rcvbuf: u32,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ConnResult {
    /// Flow index from the hello; None if the hello never completed.
    pub flow: Option<u32>,
    pub accepted_ns: u64,
    /// Application bytes read (hello excluded).
    pub bytes: u64,
    pub bytes_at_warmup: u64,
    pub bytes_at_end: u64,
    /// When each complete block had been read, for `blocks`.
    pub block_done_ns: Vec<u64>,
    /// When the last byte of a `size` transfer was read.
    pub completion_ns: Option<u64>,
    pub eof_ns: Option<u64>,
    pub samples: Vec<RecvSample>,
}

#[derive(Serialize)]
pub struct ServerResult {
    pub t0_ns: u64,
    pub end_ns: u64,
    pub conns: Vec<ConnResult>,
}

struct Conn {
    stream: TcpStream,
    hello: Vec<u8>,
    open: bool,
    res: ConnResult,
}

const TOKEN_LISTENER: u64 = u64::MAX;
const TOKEN_TIMER: u64 = u64::MAX - 1;
const READ_BUF: usize = 256 * 1024;

fn listener(cfg: &ServerConfig) -> io::Result<TcpListener> {
    let fd = sock::stream_socket(cfg.transport == Transport::Mptcp)?;
    let rcvbuf = super::check::buffer("rcvbuf_bytes", cfg.rcvbuf_bytes)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if let Some(b) = rcvbuf {
        sock::set_int(fd.as_fd(), libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, b)?;
    }
    sock::listen(fd, cfg.listen, 1024)
}

pub fn run(cfg: &ServerConfig) -> io::Result<()> {
    if let Some(ns) = &cfg.netns {
        sys::netns::enter(ns)?;
    }
    let listener = listener(cfg)?;
    listener.set_nonblocking(true)?;
    let t0 = super::ready_and_wait_for_go()?;
    let ns = |s: f64| t0 + (s * 1e9) as u64;
    let warmup_at = ns(cfg.warmup_s);
    let end_at = ns(cfg.duration_s);
    let interval = ((cfg.sample_interval_ms * 1e6) as u64).max(1_000_000);
    let mut next_sample = t0;
    let mut warmup_marked = false;
    let block = block_bytes(&cfg.app);
    let size = match cfg.app {
        AppSpec::Size { bytes } => Some(bytes),
        _ => None,
    };

    let epoll = Epoll::new()?;
    let timer = TimerFd::new()?;
    epoll.add(listener.as_fd(), TOKEN_LISTENER, false)?;
    epoll.add(timer.as_fd(), TOKEN_TIMER, false)?;
    let mut conns: Vec<Conn> = Vec::new();
    let mut buf = vec![0u8; READ_BUF];
    let mut ready: Vec<Ready> = Vec::new();
    loop {
        let now = sys::monotonic_ns();
        if !warmup_marked && now >= warmup_at {
            warmup_marked = true;
            for c in &mut conns {
                c.res.bytes_at_warmup = c.res.bytes;
            }
        }
        if now >= next_sample {
            for c in conns.iter_mut().filter(|c| c.open) {
                let fd = c.stream.as_fd();
                let mut mem = [0u8; 36];
                let rmem = sock::get_raw(fd, libc::SOL_SOCKET, libc::SO_MEMINFO, &mut mem)
                    .map(|_| u32::from_ne_bytes([mem[0], mem[1], mem[2], mem[3]]))
                    .unwrap_or(0);
                let rcvbuf = sock::get_int(fd, libc::SOL_SOCKET, libc::SO_RCVBUF).unwrap_or(0);
                c.res.samples.push(RecvSample {
                    t_ns: now,
                    bytes: c.res.bytes,
                    rmem_alloc: rmem,
                    rcvbuf: rcvbuf.max(0) as u32,
                });
            }
            next_sample += interval * ((now - next_sample) / interval + 1);
        }
        if now >= end_at {
            break;
        }
        let wake = if warmup_marked {
            next_sample.min(end_at)
        } else {
            next_sample.min(warmup_at)
        };
        timer.arm_at(wake)?;
        ready.clear();
        epoll.wait(&mut ready, -1)?;
        // Marks first: bytes read after this point belong after the warm-up or past the end.
        let now = sys::monotonic_ns();
        if !warmup_marked && now >= warmup_at {
            warmup_marked = true;
            for c in &mut conns {
                c.res.bytes_at_warmup = c.res.bytes;
            }
        }
        if now >= end_at {
            break;
        }
        for r in &ready {
            match r.token {
                TOKEN_TIMER => timer.drain(),
                TOKEN_LISTENER => loop {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            stream.set_nonblocking(true)?;
                            // Reset on close, as the client's (see `client::open`).
                            sock::abort_on_close(stream.as_fd())?;
                            epoll.add(stream.as_fd(), conns.len() as u64, false)?;
                            conns.push(Conn {
                                stream,
                                hello: Vec::with_capacity(HELLO_LEN),
                                open: true,
                                res: ConnResult {
                                    accepted_ns: sys::monotonic_ns(),
                                    ..ConnResult::default()
                                },
                            });
                        }
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if accept_error_is_transient(&e) => continue,
                        Err(e) => {
                            return Err(io::Error::new(
                                e.kind(),
                                format!("accepting connection {} failed: {e}", conns.len() + 1),
                            ))
                        }
                    }
                },
                i => {
                    let c = &mut conns[i as usize];
                    if c.open {
                        read_conn(c, &mut buf, block, size);
                        if !c.open {
                            let _ = epoll.remove(c.stream.as_fd());
                        }
                    }
                }
            }
        }
    }
    let end = sys::monotonic_ns();
    let conns: Vec<ConnResult> = conns
        .into_iter()
        .map(|mut c| {
            c.res.bytes_at_end = c.res.bytes;
            c.res
        })
        .collect();
    let result = ServerResult {
        t0_ns: t0,
        end_ns: end,
        conns,
    };
    crate::status::write_atomic(&cfg.out, &result)
}

/// Whether a failed accept concerns only the one pending connection, so that the server should
/// take the next one. accept(2), RETURN VALUE: Linux passes a pending connection's network
/// errors to accept(), and "in the case of TCP/IP, these are ENETDOWN, EPROTO, ENOPROTOOPT,
/// EHOSTDOWN, ENONET, EHOSTUNREACH, EOPNOTSUPP, and ENETUNREACH"; ECONNABORTED (the peer reset it
/// while it waited) and EINTR are transient too. Anything else (EMFILE, ENFILE, ENOBUFS,
/// ENOMEM) means the server cannot take connections at all, and the run has failed.
fn accept_error_is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(
            libc::ECONNABORTED
                | libc::EINTR
                | libc::ENETDOWN
                | libc::EPROTO
                | libc::ENOPROTOOPT
                | libc::EHOSTDOWN
                | libc::ENONET
                | libc::EHOSTUNREACH
                | libc::EOPNOTSUPP
                | libc::ENETUNREACH
        )
    )
}

/// Read until the socket would block, stamping block and transfer completions.
fn read_conn(c: &mut Conn, buf: &mut [u8], block: Option<u64>, size: Option<u64>) {
    loop {
        let n = match c.stream.read(buf) {
            Ok(0) => {
                c.open = false;
                c.res.eof_ns = Some(sys::monotonic_ns());
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => {
                c.open = false;
                c.res.eof_ns = Some(sys::monotonic_ns());
                return;
            }
        };
        let now = sys::monotonic_ns();
        let mut data = &buf[..n];
        if c.hello.len() < HELLO_LEN {
            let take = (HELLO_LEN - c.hello.len()).min(data.len());
            c.hello.extend_from_slice(&data[..take]);
            data = &data[take..];
            if c.hello.len() == HELLO_LEN {
                let h: [u8; HELLO_LEN] = c.hello[..].try_into().expect("hello length");
                c.res.flow = parse_hello(&h);
            }
        }
        c.res.bytes += data.len() as u64;
        if let Some(b) = block {
            let done = c.res.bytes / b;
            while (c.res.block_done_ns.len() as u64) < done {
                c.res.block_done_ns.push(now);
            }
        }
        if let Some(s) = size {
            if c.res.completion_ns.is_none() && c.res.bytes >= s {
                c.res.completion_ns = Some(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::accept_error_is_transient;
    use std::io;

    #[test]
    fn a_pending_connections_own_error_is_skipped_and_a_lack_of_resources_is_not() {
        for errno in [
            libc::ECONNABORTED,
            libc::EINTR,
            libc::EPROTO,
            libc::ENETUNREACH,
            libc::EHOSTUNREACH,
        ] {
            assert!(
                accept_error_is_transient(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
        for errno in [
            libc::EMFILE,
            libc::ENFILE,
            libc::ENOBUFS,
            libc::ENOMEM,
            libc::EBADF,
        ] {
            assert!(
                !accept_error_is_transient(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
    }
}
