//! The traffic program of the emulator backend: `mptcp-traffic server|client --config FILE`.
//!
//! The client opens connections (TCP or MPTCP, chosen per socket with IPPROTO_MPTCP), sets their
//! congestion control (TCP_CONGESTION) and buffers, and sends one of the simulator's
//! applications: `bulk` (always data), `blocks` (blocks written back to back, block k stamped
//! with CLOCK_MONOTONIC at the write that took block k−1's last byte, block 0 at the first
//! write, as the simulator stamps them) or `size` (a finite transfer). The server
//! reads as fast as it can and stamps each block's complete arrival with the same clock (both
//! ends run on one host), so a block's latency is the difference of the two stamps.
//!
//! Both sides print `{"ready": true}` once set up, then wait for a line `go T0_NS` on standard
//! input: T0 is the run's time zero on CLOCK_MONOTONIC. Flows start at T0 + start_s; everything
//! stops at T0 + duration_s and each side writes one JSON result file.
//!
//! Each connection opens with a 16-byte hello (magic, version, flow index) so the server can tell
//! the flows of one client apart.

pub mod check;
pub mod client;
pub mod info;
pub mod server;

use mpsim::scenario::AppSpec;
use serde::{Deserialize, Serialize};
use std::io::{self, BufRead, Write};

pub const HELLO_LEN: usize = 16;
const HELLO_MAGIC: &[u8; 4] = b"MPTL";
const HELLO_VERSION: u32 = 1;

pub fn hello(flow: u32) -> [u8; HELLO_LEN] {
    let mut h = [0u8; HELLO_LEN];
    h[0..4].copy_from_slice(HELLO_MAGIC);
    h[4..8].copy_from_slice(&HELLO_VERSION.to_be_bytes());
    h[8..12].copy_from_slice(&flow.to_be_bytes());
    h
}

/// The flow index of a hello, or None if it is not one.
pub fn parse_hello(h: &[u8; HELLO_LEN]) -> Option<u32> {
    if &h[0..4] != HELLO_MAGIC || h[4..8] != HELLO_VERSION.to_be_bytes() {
        return None;
    }
    Some(u32::from_be_bytes([h[8], h[9], h[10], h[11]]))
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    Tcp,
    Mptcp,
}

/// Announce readiness and wait for `go T0_NS`; returns T0.
pub fn ready_and_wait_for_go() -> io::Result<u64> {
    {
        let mut out = io::stdout().lock();
        writeln!(out, "{{\"ready\": true, \"pid\": {}}}", std::process::id())?;
        out.flush()?;
    }
    let mut line = String::new();
    io::stdin().lock().read_line(&mut line)?;
    let mut words = line.split_whitespace();
    match (
        words.next(),
        words.next().and_then(|w| w.parse::<u64>().ok()),
    ) {
        (Some("go"), Some(t0)) => Ok(t0),
        _ => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("expected 'go T0_NS' on standard input, got {line:?}"),
        )),
    }
}

/// Bytes of application data per block, for `blocks`; None otherwise.
pub fn block_bytes(app: &AppSpec) -> Option<u64> {
    match app {
        AppSpec::Blocks { block_bytes } => Some(*block_bytes),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_round_trips_and_rejects_garbage() {
        assert_eq!(parse_hello(&hello(37)), Some(37));
        assert_eq!(parse_hello(&[0u8; HELLO_LEN]), None);
    }
}
