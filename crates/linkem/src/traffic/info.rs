//! Kernel socket statistics: TCP_INFO (include/uapi/linux/tcp.h, `struct tcp_info`) and, for
//! MPTCP sockets, MPTCP_INFO plus the per-subflow MPTCP_TCPINFO / MPTCP_SUBFLOW_ADDRS arrays
//! (include/uapi/linux/mptcp.h; Linux ≥ 5.16 for the arrays, 6.5+ for the byte counters, 6.8+
//! for `mptcpi_subflows_total`).
//!
//! The structures grow at their end with each kernel release, so they are decoded from byte
//! buffers at fixed offsets and a field beyond the length the kernel returned reads as 0.

use crate::sys::sock::{self, MPTCP_INFO, MPTCP_SUBFLOW_ADDRS, MPTCP_TCPINFO, SOL_MPTCP};
use serde::Serialize;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::BorrowedFd;

/// Room for `struct tcp_info` up to the 7.x AccECN trailer (280 bytes) and more.
const TCP_INFO_BUF: usize = 320;
const MPTCP_INFO_BUF: usize = 128;
/// `struct mptcp_subflow_data`: size_subflow_data, num_subflows, size_kernel, size_user.
const SUBFLOW_DATA_HEADER: usize = 16;
/// `struct mptcp_subflow_addrs`: two `__kernel_sockaddr_storage`.
const SUBFLOW_ADDRS_SIZE: usize = 256;
/// MPTCP_PM_ADDR_MAX subflows plus the initial one.
const MAX_SUBFLOWS: usize = 9;

struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&self, off: usize) -> u8 {
        self.0.get(off).copied().unwrap_or(0)
    }
    fn u16(&self, off: usize) -> u16 {
        self.0
            .get(off..off + 2)
            .map_or(0, |b| u16::from_ne_bytes([b[0], b[1]]))
    }
    fn u32(&self, off: usize) -> u32 {
        self.0
            .get(off..off + 4)
            .map_or(0, |b| u32::from_ne_bytes(b.try_into().expect("4 bytes")))
    }
    fn u64(&self, off: usize) -> u64 {
        self.0
            .get(off..off + 8)
            .map_or(0, |b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
    }
}

/// The TCP_INFO fields the reports use.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TcpSample {
    pub state: u8,
    pub ca_state: u8,
    pub snd_mss: u32,
    /// Congestion window, segments.
    pub snd_cwnd: u32,
    pub snd_ssthresh: u32,
    pub unacked: u32,
    pub lost: u32,
    /// Smoothed RTT and its variation, µs.
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub min_rtt_us: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_us: u64,
    pub rwnd_limited_us: u64,
    pub sndbuf_limited_us: u64,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    /// Peer's advertised receive window after scaling, bytes.
    pub snd_wnd: u32,
    pub rcv_space: u32,
    pub total_rto: u16,
}

impl TcpSample {
    /// Decode `struct tcp_info` (offsets from include/uapi/linux/tcp.h, x86-64 and arm64 alike).
    pub fn decode(buf: &[u8]) -> TcpSample {
        let b = Bytes(buf);
        TcpSample {
            state: b.u8(0),
            ca_state: b.u8(1),
            snd_mss: b.u32(16),
            unacked: b.u32(24),
            lost: b.u32(32),
            rtt_us: b.u32(68),
            rttvar_us: b.u32(72),
            snd_ssthresh: b.u32(76),
            snd_cwnd: b.u32(80),
            rcv_space: b.u32(96),
            total_retrans: b.u32(100),
            pacing_rate: b.u64(104),
            bytes_acked: b.u64(120),
            bytes_received: b.u64(128),
            min_rtt_us: b.u32(148),
            data_segs_out: b.u32(156),
            delivery_rate: b.u64(160),
            busy_us: b.u64(168),
            rwnd_limited_us: b.u64(176),
            sndbuf_limited_us: b.u64(184),
            bytes_sent: b.u64(200),
            bytes_retrans: b.u64(208),
            snd_wnd: b.u32(228),
            total_rto: b.u16(240),
        }
    }
}

/// The MPTCP_INFO fields the reports use.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MptcpSample {
    /// Additional subflows (not counting the initial one).
    pub subflows: u8,
    /// All subflows, initial included (6.8+; 0 on older kernels).
    pub subflows_total: u8,
    pub flags: u32,
    pub fallback: bool,
    pub write_seq: u64,
    pub snd_una: u64,
    /// `mptcpi_retransmits`: the MPTCP socket's `icsk_retransmits`, which upstream counts only
    /// for DATA_FIN retransmissions.
    pub retransmits: u32,
    /// Bytes re-sent at the MPTCP level (`__mptcp_retrans`, reinjections), 6.5+.
    pub bytes_retrans: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub bytes_acked: u64,
}

const MPTCP_INFO_FLAG_FALLBACK: u32 = 1;

impl MptcpSample {
    pub fn decode(buf: &[u8]) -> MptcpSample {
        let b = Bytes(buf);
        let flags = b.u32(8);
        MptcpSample {
            subflows: b.u8(0),
            flags,
            fallback: flags & MPTCP_INFO_FLAG_FALLBACK != 0,
            write_seq: b.u64(16),
            snd_una: b.u64(24),
            retransmits: b.u32(44),
            bytes_retrans: b.u64(48),
            bytes_sent: b.u64(56),
            bytes_received: b.u64(64),
            bytes_acked: b.u64(72),
            subflows_total: b.u8(80),
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SubflowSample {
    pub local: String,
    pub remote: String,
    pub tcp: TcpSample,
}

pub fn tcp_info(fd: BorrowedFd<'_>) -> io::Result<TcpSample> {
    let mut buf = [0u8; TCP_INFO_BUF];
    let n = sock::get_raw(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut buf)?;
    Ok(TcpSample::decode(&buf[..n]))
}

pub fn mptcp_info(fd: BorrowedFd<'_>) -> io::Result<MptcpSample> {
    let mut buf = [0u8; MPTCP_INFO_BUF];
    let n = sock::get_raw(fd, SOL_MPTCP, MPTCP_INFO, &mut buf)?;
    Ok(MptcpSample::decode(&buf[..n]))
}

/// Fetch one `mptcp_subflow_data`-headed array: returns (number of elements, element stride,
/// the raw buffer). The kernel lowers `size_user` to its own element size and uses that as the
/// stride, so the stride is read back from the header.
fn subflow_array(
    fd: BorrowedFd<'_>,
    name: libc::c_int,
    elem: usize,
) -> io::Result<(usize, usize, Vec<u8>)> {
    let mut buf = vec![0u8; SUBFLOW_DATA_HEADER + MAX_SUBFLOWS * elem];
    buf[0..4].copy_from_slice(&(SUBFLOW_DATA_HEADER as u32).to_ne_bytes());
    buf[12..16].copy_from_slice(&(elem as u32).to_ne_bytes());
    let n = sock::get_raw(fd, SOL_MPTCP, name, &mut buf)?;
    buf.truncate(n);
    let b = Bytes(&buf);
    let count = (b.u32(4) as usize).min(MAX_SUBFLOWS);
    let stride = (b.u32(12) as usize).clamp(1, elem);
    Ok((count, stride, buf))
}

fn sockaddr_v4(buf: &[u8]) -> String {
    let b = Bytes(buf);
    if b.u16(0) != libc::AF_INET as u16 {
        return String::new();
    }
    let port = u16::from_be_bytes([b.u8(2), b.u8(3)]);
    let ip = Ipv4Addr::new(b.u8(4), b.u8(5), b.u8(6), b.u8(7));
    SocketAddrV4::new(ip, port).to_string()
}

/// Every subflow's addresses and TCP_INFO. The two arrays are read one after the other; if a
/// subflow appeared or closed in between, their lengths differ and the read is retried.
pub fn subflows(fd: BorrowedFd<'_>) -> io::Result<Vec<SubflowSample>> {
    for _ in 0..3 {
        let (n_info, info_stride, infos) = subflow_array(fd, MPTCP_TCPINFO, TCP_INFO_BUF)?;
        let (n_addr, addr_stride, addrs) =
            subflow_array(fd, MPTCP_SUBFLOW_ADDRS, SUBFLOW_ADDRS_SIZE)?;
        if n_info != n_addr {
            continue;
        }
        let mut out = Vec::with_capacity(n_info);
        for i in 0..n_info {
            let info_at = SUBFLOW_DATA_HEADER + i * info_stride;
            let addr_at = SUBFLOW_DATA_HEADER + i * addr_stride;
            let info = infos
                .get(info_at..(info_at + info_stride).min(infos.len()))
                .unwrap_or(&[]);
            let addr = addrs
                .get(addr_at..(addr_at + addr_stride).min(addrs.len()))
                .unwrap_or(&[]);
            out.push(SubflowSample {
                local: sockaddr_v4(addr),
                remote: sockaddr_v4(addr.get(128..).unwrap_or(&[])),
                tcp: TcpSample::decode(info),
            });
        }
        return Ok(out);
    }
    Err(io::Error::other("subflow list kept changing"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_fields_decode_at_their_uapi_offsets() {
        let mut buf = vec![0u8; 248];
        buf[80..84].copy_from_slice(&42u32.to_ne_bytes()); // tcpi_snd_cwnd
        buf[68..72].copy_from_slice(&20_500u32.to_ne_bytes()); // tcpi_rtt
        buf[120..128].copy_from_slice(&1_000_000u64.to_ne_bytes()); // tcpi_bytes_acked
        buf[228..232].copy_from_slice(&65_535u32.to_ne_bytes()); // tcpi_snd_wnd
        buf[240..242].copy_from_slice(&3u16.to_ne_bytes()); // tcpi_total_rto
        let s = TcpSample::decode(&buf);
        assert_eq!(
            (s.snd_cwnd, s.rtt_us, s.bytes_acked),
            (42, 20_500, 1_000_000)
        );
        assert_eq!((s.snd_wnd, s.total_rto), (65_535, 3));
        // An older kernel's shorter struct leaves the newer fields at 0.
        let old = TcpSample::decode(&buf[..104]);
        assert_eq!((old.snd_cwnd, old.bytes_acked, old.snd_wnd), (42, 0, 0));
    }

    #[test]
    fn mptcp_info_fields_decode_at_their_uapi_offsets() {
        let mut buf = vec![0u8; 96];
        buf[0] = 1; // mptcpi_subflows
        buf[8..12].copy_from_slice(&1u32.to_ne_bytes()); // fallback flag
        buf[44..48].copy_from_slice(&5u32.to_ne_bytes()); // mptcpi_retransmits
        buf[72..80].copy_from_slice(&777u64.to_ne_bytes()); // mptcpi_bytes_acked
        buf[80] = 2; // mptcpi_subflows_total
        let m = MptcpSample::decode(&buf);
        assert_eq!((m.subflows, m.subflows_total, m.retransmits), (1, 2, 5));
        assert!(m.fallback);
        assert_eq!(m.bytes_acked, 777);
    }

    #[test]
    fn sockaddr_in_decodes_address_and_port() {
        let mut sa = [0u8; 16];
        sa[0..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        sa[2..4].copy_from_slice(&5201u16.to_be_bytes());
        sa[4..8].copy_from_slice(&[198, 18, 0, 1]);
        assert_eq!(sockaddr_v4(&sa), "198.18.0.1:5201");
    }
}
