//! The sending side: open each flow at its start time, write its application's data, and
//! sample TCP_INFO (TCP) or MPTCP_INFO plus every subflow's TCP_INFO (MPTCP) every interval.

use super::info::{self, MptcpSample, SubflowSample, TcpSample};
use super::{block_bytes, hello, Transport};
use crate::sys::poll::{Epoll, Ready, TimerFd};
use crate::sys::{self, sock};
use mpsim::scenario::AppSpec;
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddrV4, TcpStream};
use std::os::fd::AsFd;
use std::path::PathBuf;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClientConfig {
    pub netns: Option<PathBuf>,
    pub server: SocketAddrV4,
    /// Source address of the first subflow (the first path's interface).
    pub bind: Ipv4Addr,
    pub transport: Transport,
    /// TCP_CONGESTION name, e.g. "cubic" or "mptcp_lia". None: the namespace default.
    #[serde(default)]
    pub congestion: Option<String>,
    /// Fixed send buffer, the value given to SO_SNDBUFFORCE (the kernel keeps twice it as
    /// the memory the socket may queue). None: auto-tuning.
    #[serde(default)]
    pub sndbuf_bytes: Option<u64>,
    pub flows: Vec<FlowStart>,
    pub app: AppSpec,
    pub duration_s: f64,
    /// The end of the warm-up: besides every interval, a sample is taken then and at the end,
    /// so that what the flows did in between is read, not interpolated.
    #[serde(default)]
    pub warmup_s: f64,
    pub sample_interval_ms: f64,
    pub out: PathBuf,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowStart {
    pub index: u32,
    pub start_s: f64,
    /// When the application stops writing and closes its side (what it wrote is still sent).
    #[serde(default)]
    pub stop_s: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowResult {
    pub index: u32,
    pub connect_start_ns: Option<u64>,
    pub connected_ns: Option<u64>,
    /// The kernel's RTT sample of the handshake (TCP_INFO right after connecting), µs.
    pub handshake_rtt_us: Option<u32>,
    /// The congestion control the connection ran (its first subflow's, for MPTCP), read once
    /// connected.
    pub congestion: Option<String>,
    /// The kernel's send buffer (SO_SNDBUF: the memory the socket may queue), read once
    /// connected.
    pub sndbuf_bytes: Option<i32>,
    pub error: Option<String>,
    /// Application bytes accepted by the socket (hello excluded).
    pub bytes_written: u64,
    /// Start of each block, for `blocks`: when the write that took the previous block's last
    /// byte began (block 0: the first write). See [`stamp_blocks`].
    pub block_write_ns: Vec<u64>,
    /// When the last byte of a `size` transfer was accepted by the socket.
    pub write_done_ns: Option<u64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowSample {
    pub index: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSample>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mptcp: Option<MptcpSample>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub subflows: Vec<SubflowSample>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Sample {
    pub t_ns: u64,
    pub flows: Vec<FlowSample>,
}

#[derive(Serialize)]
pub struct ClientResult {
    pub t0_ns: u64,
    pub end_ns: u64,
    pub flows: Vec<FlowResult>,
    pub samples: Vec<Sample>,
}

enum State {
    Waiting,
    Connecting(TcpStream),
    Sending(TcpStream),
    Done(Option<TcpStream>),
}

struct Flow {
    start_ns: u64,
    stop_ns: u64,
    state: State,
    res: FlowResult,
    /// Hello bytes still to write.
    hello_left: usize,
}

const TOKEN_TIMER: u64 = u64::MAX;
const WRITE_CHUNK: usize = 256 * 1024;

fn open(cfg: &ClientConfig) -> io::Result<TcpStream> {
    let fd = sock::stream_socket(cfg.transport == Transport::Mptcp)?;
    if let Some(cc) = &cfg.congestion {
        sock::set_congestion(fd.as_fd(), cc)?;
    }
    let sndbuf = super::check::buffer("sndbuf_bytes", cfg.sndbuf_bytes)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    if let Some(b) = sndbuf {
        sock::set_int(fd.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, b)?;
    }
    // Whenever the socket is closed, at the end of the run or because the process was killed,
    // it is reset: nothing of the connection (nor the congestion control it holds) outlives
    // the run in FIN or TIME-WAIT states.
    sock::abort_on_close(fd.as_fd())?;
    sock::bind(fd.as_fd(), SocketAddrV4::new(cfg.bind, 0))?;
    sock::connect_start(fd, cfg.server)
}

pub fn run(cfg: &ClientConfig) -> io::Result<()> {
    if let Some(ns) = &cfg.netns {
        sys::netns::enter(ns)?;
    }
    let t0 = super::ready_and_wait_for_go()?;
    let end_at = t0 + (cfg.duration_s * 1e9) as u64;
    let interval = ((cfg.sample_interval_ms * 1e6) as u64).max(1_000_000);
    let mut next_sample = t0;
    let warmup_at = t0 + (cfg.warmup_s * 1e9) as u64;
    let mut warmup_sampled = warmup_at == t0;
    let mut flows: Vec<Flow> = cfg
        .flows
        .iter()
        .map(|f| Flow {
            start_ns: t0 + (f.start_s * 1e9) as u64,
            stop_ns: f.stop_s.map_or(u64::MAX, |s| t0 + (s * 1e9) as u64),
            state: State::Waiting,
            res: FlowResult {
                index: f.index,
                ..FlowResult::default()
            },
            hello_left: super::HELLO_LEN,
        })
        .collect();
    let block = block_bytes(&cfg.app);
    let size = match cfg.app {
        AppSpec::Size { bytes } => Some(bytes),
        _ => None,
    };
    let data = vec![0u8; WRITE_CHUNK];
    let epoll = Epoll::new()?;
    let timer = TimerFd::new()?;
    epoll.add(timer.as_fd(), TOKEN_TIMER, false)?;
    let mut samples = Vec::new();
    let mut ready: Vec<Ready> = Vec::new();
    loop {
        let now = sys::monotonic_ns();
        for (i, f) in flows.iter_mut().enumerate() {
            if matches!(f.state, State::Waiting) && now >= f.start_ns {
                f.res.connect_start_ns = Some(sys::monotonic_ns());
                match open(cfg) {
                    Ok(s) => {
                        epoll.add(s.as_fd(), i as u64, true)?;
                        f.state = State::Connecting(s);
                    }
                    Err(e) => {
                        f.res.error = Some(e.to_string());
                        f.state = State::Done(None);
                    }
                }
            }
        }
        for f in flows.iter_mut() {
            if now >= f.stop_ns && matches!(f.state, State::Sending(_)) {
                stop_writing(f, &epoll);
            }
        }
        let at_mark = now >= end_at || (!warmup_sampled && now >= warmup_at);
        if now >= next_sample || at_mark {
            samples.push(sample(now, &flows, cfg.transport));
            if now >= next_sample {
                next_sample += interval * ((now - next_sample) / interval + 1);
            }
            warmup_sampled |= now >= warmup_at;
        }
        if now >= end_at {
            break;
        }
        let next_start = flows
            .iter()
            .filter(|f| matches!(f.state, State::Waiting))
            .map(|f| f.start_ns)
            .min()
            .unwrap_or(u64::MAX);
        // A flow still connecting when its stop comes is stopped once connected.
        let next_stop = flows
            .iter()
            .filter(|f| matches!(f.state, State::Sending(_)))
            .map(|f| f.stop_ns)
            .min()
            .unwrap_or(u64::MAX);
        let next_mark = if warmup_sampled { end_at } else { warmup_at };
        timer.arm_at(next_sample.min(next_mark).min(next_start).min(next_stop))?;
        ready.clear();
        epoll.wait(&mut ready, -1)?;
        // The server stops reading at the same instant and resets its sockets: a write after
        // the end would fail with a reset that says nothing about the run. (The loop's top
        // takes the last sample and stops.)
        if sys::monotonic_ns() >= end_at {
            continue;
        }
        for r in &ready {
            if r.token == TOKEN_TIMER {
                timer.drain();
                continue;
            }
            let f = &mut flows[r.token as usize];
            if let State::Connecting(s) = &f.state {
                match s.take_error() {
                    Ok(None) if r.writable => {
                        f.res.connected_ns = Some(sys::monotonic_ns());
                        f.res.handshake_rtt_us = handshake_rtt_us(s, cfg.transport);
                        f.res.congestion = sock::congestion(s.as_fd()).ok();
                        f.res.sndbuf_bytes =
                            sock::get_int(s.as_fd(), libc::SOL_SOCKET, libc::SO_SNDBUF).ok();
                        let State::Connecting(s) = std::mem::replace(&mut f.state, State::Waiting)
                        else {
                            unreachable!()
                        };
                        f.state = State::Sending(s);
                    }
                    Ok(None) => continue,
                    Ok(Some(e)) | Err(e) => {
                        f.res.error = Some(format!("connect: {e}"));
                        let State::Connecting(s) =
                            std::mem::replace(&mut f.state, State::Done(None))
                        else {
                            unreachable!()
                        };
                        let _ = epoll.remove(s.as_fd());
                        continue;
                    }
                }
            }
            if matches!(f.state, State::Sending(_)) && sys::monotonic_ns() >= f.stop_ns {
                stop_writing(f, &epoll);
            }
            if let State::Sending(_) = f.state {
                if r.writable {
                    write_flow(f, &data, block, size, end_at);
                }
                if let State::Done(Some(s)) = &f.state {
                    // Finished or failed: only sampled from now on, never polled (a peer's
                    // hang-up would otherwise keep it ready forever).
                    let _ = epoll.remove(s.as_fd());
                }
            }
        }
    }
    let result = ClientResult {
        t0_ns: t0,
        end_ns: sys::monotonic_ns(),
        flows: flows.into_iter().map(|f| f.res).collect(),
        samples,
    };
    crate::status::write_atomic(&cfg.out, &result)
}

/// Write until the socket's buffer is full, stamping blocks and the end of a finite transfer.
/// `end_at`: the end of the run, after which a failed write is the server's end-of-run reset
/// (the process can be descheduled between the clock check and the write), not an error.
fn write_flow(f: &mut Flow, data: &[u8], block: Option<u64>, size: Option<u64>, end_at: u64) {
    let State::Sending(s) = &mut f.state else {
        return;
    };
    loop {
        let chunk = if f.hello_left > 0 {
            let h = hello(f.res.index);
            let off = super::HELLO_LEN - f.hello_left;
            match s.write(&h[off..]) {
                Ok(n) => f.hello_left -= n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) => return fail(f, e, end_at),
            }
            continue;
        } else {
            let left = size.map_or(u64::MAX, |t| t - f.res.bytes_written);
            (left.min(data.len() as u64)) as usize
        };
        let t = sys::monotonic_ns();
        match s.write(&data[..chunk]) {
            Ok(n) => {
                f.res.bytes_written += n as u64;
                if let Some(b) = block {
                    stamp_blocks(&mut f.res.block_write_ns, f.res.bytes_written, b, t);
                }
                if size == Some(f.res.bytes_written) {
                    f.res.write_done_ns = Some(sys::monotonic_ns());
                    let _ = s.shutdown(Shutdown::Write);
                    let State::Sending(s) = std::mem::replace(&mut f.state, State::Waiting) else {
                        unreachable!()
                    };
                    f.state = State::Done(Some(s));
                    return;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return fail(f, e, end_at),
        }
    }
}

/// Stamp `t`, the start of the write that brought the total to `bytes_written`, on every block
/// that write started. Block 0 starts with the first write; block k ≥ 1 with the write that took
/// block k−1's last byte, as an application writing its blocks back to back hands block k over
/// the moment block k−1 is accepted (the simulator's stamp, crates/mpsim/src/app/mod.rs; NSDI
/// 2012 §5). A block that begins a later write waited for room in the send buffer since then,
/// and that wait is part of its latency. The block after the last write's may have no byte
/// written yet: its stamp pairs with no completion.
pub fn stamp_blocks(stamps: &mut Vec<u64>, bytes_written: u64, block_bytes: u64, t: u64) {
    let started = (bytes_written / block_bytes + 1) as usize;
    if stamps.len() < started {
        stamps.resize(started, t);
    }
}

/// The application stops writing (`stop_s`) and closes its side: the kernel still sends what
/// the socket holds, then a FIN. The flow is only sampled from now on.
fn stop_writing(f: &mut Flow, epoll: &Epoll) {
    let State::Sending(s) = std::mem::replace(&mut f.state, State::Waiting) else {
        return;
    };
    let _ = s.shutdown(Shutdown::Write);
    let _ = epoll.remove(s.as_fd());
    f.state = State::Done(Some(s));
}

fn handshake_rtt_us(s: &TcpStream, transport: Transport) -> Option<u32> {
    let rtt = match transport {
        Transport::Tcp => info::tcp_info(s.as_fd()).ok()?.rtt_us,
        Transport::Mptcp => info::subflows(s.as_fd()).ok()?.first()?.tcp.rtt_us,
    };
    (rtt > 0).then_some(rtt)
}

fn fail(f: &mut Flow, e: io::Error, end_at: u64) {
    if sys::monotonic_ns() < end_at {
        f.res.error = Some(format!("write: {e}"));
    }
    let old = std::mem::replace(&mut f.state, State::Done(None));
    if let State::Sending(s) = old {
        f.state = State::Done(Some(s));
    }
}

fn sample(now: u64, flows: &[Flow], transport: Transport) -> Sample {
    let mut out = Vec::new();
    for f in flows {
        let s = match &f.state {
            State::Sending(s) | State::Done(Some(s)) => s,
            _ => continue,
        };
        let fd = s.as_fd();
        let fs = match transport {
            Transport::Tcp => FlowSample {
                index: f.res.index,
                tcp: info::tcp_info(fd).ok(),
                mptcp: None,
                subflows: Vec::new(),
            },
            Transport::Mptcp => FlowSample {
                index: f.res.index,
                tcp: None,
                mptcp: info::mptcp_info(fd).ok(),
                subflows: info::subflows(fd).unwrap_or_default(),
            },
        };
        out.push(fs);
    }
    Sample {
        t_ns: now,
        flows: out,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stamps after each write of `sizes` (bytes) made at `times`.
    fn stamped(sizes: &[u64], times: &[u64], block_bytes: u64) -> Vec<u64> {
        let mut stamps = Vec::new();
        let mut written = 0;
        for (size, t) in sizes.iter().zip(times) {
            written += size;
            stamp_blocks(&mut stamps, written, block_bytes, *t);
        }
        stamps
    }

    #[test]
    fn a_block_that_begins_a_write_starts_with_the_write_of_the_previous_one() {
        // 16 KiB written at 0, 16 KiB more at 100 (after waiting for room), 8 KiB blocks:
        // block 2 begins the second write but was handed over when block 1 was accepted, at 0;
        // block 4 is handed over by the second write, which took block 3's last byte.
        assert_eq!(
            stamped(&[16384, 16384], &[0, 100], 8192),
            [0, 0, 0, 100, 100]
        );
        // Block 0 starts with the first write even when it ends inside the block.
        assert_eq!(stamped(&[100, 8092], &[5, 9], 8192), [5, 9]);
    }

    #[test]
    fn each_block_starts_with_the_write_that_took_the_previous_blocks_last_byte() {
        // Reference, block by block: the write whose byte range holds byte k·b − 1 (byte 0
        // for block 0), for every block up to the one after the last complete block.
        let b = 1500;
        let mut sizes = Vec::new();
        let mut x: u64 = 12345;
        for i in 0..500 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Every seventh write is one block exactly, so many writes end on a boundary.
            sizes.push(if i % 7 == 0 { b } else { 1 + (x >> 33) % 9000 });
        }
        let times: Vec<u64> = (0..sizes.len() as u64).map(|i| 1000 * i + 7).collect();
        let mut ends = Vec::new();
        let mut total = 0;
        for s in &sizes {
            total += s;
            ends.push(total);
        }
        let expected: Vec<u64> = (0..=total / b)
            .map(|k| {
                let byte = (k * b).saturating_sub(1);
                times[ends.iter().position(|&end| byte < end).unwrap()]
            })
            .collect();
        let got = stamped(&sizes, &times, b);
        let first_wrong = got.iter().zip(&expected).position(|(g, e)| g != e);
        assert_eq!((got.len(), first_wrong), (expected.len(), None));
    }
}
