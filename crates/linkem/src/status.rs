//! The status document linkem writes on SIGUSR1 and on exit: cumulative counters per link
//! direction, release lateness, CPU use and, at exit, the queue-length trace. Counters are
//! cumulative so that the reader can difference two snapshots over any window.

use crate::histogram::Summary;
use crate::link::Counters;
use serde::Serialize;
use std::io::{self, Write};
use std::path::Path;

pub const STATUS_FORMAT_VERSION: u32 = 1;

#[derive(Serialize)]
pub struct Status {
    pub format_version: u32,
    /// Increases by one per snapshot; the final one has `final_snapshot` set.
    pub seq: u64,
    pub final_snapshot: bool,
    /// CLOCK_MONOTONIC of this snapshot and of the emulator's start, ns.
    pub time_ns: u64,
    pub started_ns: u64,
    pub cpu_user_s: f64,
    pub cpu_system_s: f64,
    pub realtime: bool,
    pub spin_us: u64,
    pub links: Vec<LinkStatus>,
    pub interfaces: Vec<InterfaceStatus>,
    /// Packets read from a TUN with no route for their address pair, or not IPv4.
    pub unroutable: u64,
    pub not_ipv4: u64,
    /// Packets in flight inside the emulator at the snapshot.
    pub in_flight: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_trace: Option<QueueTrace>,
}

#[derive(Serialize)]
pub struct LinkStatus {
    pub id: String,
    pub forward: DirStatus,
    pub reverse: DirStatus,
}

#[derive(Serialize)]
pub struct DirStatus {
    /// None for an unlimited (pure-delay) direction.
    pub rate_mbps: Option<f64>,
    pub queue: String,
    pub queued_packets: u64,
    pub counters: Counters,
    pub lateness: Summary,
}

#[derive(Serialize, Default, Clone)]
pub struct InterfaceStatus {
    pub netns: String,
    pub name: String,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub write_errors: u64,
}

/// Forward-direction queue lengths (packets) sampled every trace interval.
#[derive(Serialize, Default)]
pub struct QueueTrace {
    pub time_ns: Vec<u64>,
    /// One series per link, aligned with `time_ns`.
    pub packets: Vec<Vec<u32>>,
}

/// Write `value` as JSON to `path` atomically (temporary file in the same directory, then
/// rename), so a reader never sees half a document. Buffered: serde writes token by token, a
/// system call each unbuffered (a 124 MB result of a thousand flows took 13 s to write, past
/// the time the emulator waits for it).
pub fn write_atomic(path: &Path, value: &impl Serialize) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    {
        let mut f = io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer(&mut f, value)?;
        f.write_all(b"\n")?;
        f.flush()?;
    }
    std::fs::rename(&tmp, path)
}
