//! The connection-level receive buffer shared by all subflows (spec §3.3, §3.4, §3.7).
//!
//! Data arrives from the subflows in subflow order, is reordered by data sequence number (DSN),
//! and is read by the application as soon as it is in order. The window advertised on every
//! subflow's ACKs is relative to DATA_ACK, and its right edge never moves left (Linux).
//! Occupancy counts connection-level out-of-order bytes and subflow-level out-of-order bytes.
//!
//! Auto-tuning is Linux dynamic right-sizing (`tcp_rcv_space_adjust`, and its MPTCP form
//! `mptcp_rcv_space_adjust`, spec §3.7): once per receiver RTT — the largest over subflows for
//! MPTCP — if the application read more than last time, the buffer grows to
//! `rcvwin = 2·copied + 16·mss`, plus twice the growth ratio, capped at the maximum, never
//! shrinking. Linux 6.16 on (`DrsVariant::Linux`) dropped the 16-segment cushion
//! (`tcp_rcvbuf_grow` and `mptcp_rcvbuf_grow` since commit 65c5287892e9 "tcp: fix sk_rcvbuf
//! overshoot", kept out by the later "tcp: fix too slow tcp_rcvbuf_grow() action"), and
//! measures the receiver RTT differently (`tcp::rcv_rtt`). The configured size is the window
//! budget: we model payload bytes, not skb truesize (spec §3.3).

use crate::scenario::DrsVariant;
use crate::tcp::reorder::ReorderQueue;
use crate::time::SimTime;

/// Initial auto-tuned window: Linux `tcp_rmem[1]` = 128 KiB with half of it advertised.
pub const AUTO_INITIAL_BYTES: u64 = 64 * 1024;

/// Linux (6.7 on) advertises its free receive memory times a payload-to-memory ratio measured
/// from the segments received (`tcp_measure_rcv_mss`, `scaling_ratio` in 256ths). A socket
/// that has received nothing has the default, `TCP_DEFAULT_SCALING_RATIO` = 128; a full MPTCP
/// segment on the emulator's devices measures 158 (1424 bytes of payload in an skb of 2304).
/// The window budget here is in payload bytes at the measured ratio.
const DEFAULT_SCALING_RATIO: u64 = 128;
const MPTCP_SCALING_RATIO: u64 = 158;

/// The fields every data packet reads come first (see [`super::Connection`]'s layout).
#[repr(C)]
pub struct ReceiveBuffer {
    /// DATA_ACK: the next DSN expected.
    pub rcv_nxt: u64,
    pub ooo_bytes: u64,
    /// Current size (window budget), bytes.
    pub size: u64,
    right_edge: u64,
    pub peak_occupancy: u64,
    ooo: ReorderQueue<u32>,
    auto: bool,
    cap: u64,
    /// Slack added to twice the bytes read: 16 segments (classic) or none (Linux 6.16 on).
    cushion_bytes: u64,
    /// Dynamic right-sizing: bytes read in the last measurement, and when it started.
    space: u64,
    space_started: SimTime,
    read_at_space_start: u64,
    /// Whether a subflow that has received no data yet sets the connection's scaling ratio
    /// (see [`ReceiveBuffer::window_edge`]).
    pub unmeasured_subflow: bool,
}

impl ReceiveBuffer {
    pub fn new(
        fixed: Option<u64>,
        cap: u64,
        mss: u32,
        initial_window_segments: u32,
        drs: DrsVariant,
    ) -> ReceiveBuffer {
        let (size, auto) = match fixed {
            Some(bytes) => (bytes, false),
            None => (AUTO_INITIAL_BYTES.min(cap), true),
        };
        ReceiveBuffer {
            rcv_nxt: 0,
            ooo: ReorderQueue::default(),
            ooo_bytes: 0,
            size,
            cap,
            auto,
            right_edge: 0,
            cushion_bytes: match drs {
                DrsVariant::Classic => 16 * mss as u64,
                DrsVariant::Linux => 0,
            },
            space: initial_window_segments as u64 * mss as u64,
            space_started: SimTime::ZERO,
            read_at_space_start: 0,
            peak_occupancy: 0,
            unmeasured_subflow: false,
        }
    }

    /// A subflow delivered (dsn, len) in subflow order. Returns the new DATA_ACK if it advanced.
    /// `subflow_ooo` is the subflows' own out-of-order bytes, for the occupancy peak.
    pub fn receive(&mut self, dsn: u64, len: u32, subflow_ooo: u64) -> Option<u64> {
        let end = dsn + len as u64;
        if end <= self.rcv_nxt {
            return None; // a copy of data already delivered (reinjection or redundant)
        }
        if dsn > self.rcv_nxt {
            if self.ooo.insert_if_vacant(dsn, len) {
                self.ooo_bytes += len as u64;
            }
            self.peak_occupancy = self.peak_occupancy.max(self.ooo_bytes + subflow_ooo);
            return None;
        }
        self.rcv_nxt = end;
        while let Some((d, l)) = self.ooo.first() {
            if d > self.rcv_nxt {
                break;
            }
            self.ooo.pop_first();
            self.ooo_bytes -= l as u64;
            self.rcv_nxt = self.rcv_nxt.max(d + l as u64);
        }
        Some(self.rcv_nxt)
    }

    /// Bytes held: out of order here and in the subflows (the application reads instantly).
    pub fn occupancy(&self, subflow_ooo: u64) -> u64 {
        self.ooo_bytes + subflow_ooo
    }

    /// Right edge of the window to advertise: DATA_ACK + free space, never moving left.
    /// While a joined subflow has received no data, upstream MPTCP (Linux 6.16 to 6.19) takes
    /// the connection's scaling ratio from it too, the smallest of the subflows'
    /// (`mptcp_rcv_space_adjust`), and every subflow advertises the connection's free memory
    /// at that ratio (`__tcp_select_window` → `mptcp_space`): 128/158 of the window. Linux 7.0
    /// averages the ratio over the subflows that carry data instead (commit d2000361e4dd,
    /// "mptcp: better mptcp-level RTT estimator").
    pub fn window_edge(&mut self, subflow_ooo: u64) -> u64 {
        let free = self.free_window(subflow_ooo);
        self.right_edge = self.right_edge.max(self.rcv_nxt + free);
        self.right_edge
    }

    /// The free window now, as advertised ([`ReceiveBuffer::window_edge`]).
    pub fn free_window(&self, subflow_ooo: u64) -> u64 {
        let free = self.size.saturating_sub(self.occupancy(subflow_ooo));
        if self.unmeasured_subflow {
            free * DEFAULT_SCALING_RATIO / MPTCP_SCALING_RATIO
        } else {
            free
        }
    }

    /// Whether the size follows dynamic right-sizing (else it is fixed).
    pub fn auto_tuned(&self) -> bool {
        self.auto
    }

    /// Dynamic right-sizing step; `rtt_s` is the receiver's RTT estimate (the largest over the
    /// subflows), 0 when unknown.
    pub fn autotune(&mut self, now: SimTime, rtt_s: f64) {
        if !self.auto || rtt_s <= 0.0 {
            return;
        }
        if (now - self.space_started).as_secs_f64() < rtt_s {
            return;
        }
        let copied = self.rcv_nxt - self.read_at_space_start;
        if copied > self.space {
            let mut rcvwin = 2 * copied + self.cushion_bytes;
            let grow =
                (rcvwin as u128 * (copied - self.space) as u128 / self.space.max(1) as u128) as u64;
            rcvwin = rcvwin.saturating_add(2 * grow);
            let target = rcvwin.min(self.cap);
            if target > self.size {
                self.size = target;
            }
            self.space = copied;
        }
        self.space_started = now;
        self.read_at_space_start = self.rcv_nxt;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reorders_and_discards_copies() {
        let mut rb = ReceiveBuffer::new(Some(100_000), 100_000, 1000, 10, DrsVariant::Classic);
        assert_eq!(rb.receive(1000, 1000, 0), None);
        assert_eq!(rb.ooo_bytes, 1000);
        assert_eq!(rb.receive(0, 1000, 0), Some(2000));
        assert_eq!(rb.ooo_bytes, 0);
        assert_eq!(
            rb.receive(0, 1000, 0),
            None,
            "a reinjected copy is discarded"
        );
        assert_eq!(rb.rcv_nxt, 2000);
    }

    #[test]
    fn right_edge_never_moves_left() {
        let mut rb = ReceiveBuffer::new(Some(10_000), 10_000, 1000, 10, DrsVariant::Classic);
        assert_eq!(rb.window_edge(0), 10_000);
        rb.receive(5000, 1000, 0);
        // Occupancy 1000 would give 9000, but the edge stays.
        assert_eq!(rb.window_edge(0), 10_000);
        rb.receive(0, 5000, 0);
        assert_eq!(rb.window_edge(0), 16_000);
    }

    /// Linux `tcp_rcv_space_adjust` arithmetic: copied 100 kB after space 50 kB with mss 1000
    /// gives rcvwin = 2·100k + 16k = 216k, grow = 216k·50k/50k = 216k, rcvwin = 648k.
    #[test]
    fn dynamic_right_sizing_matches_linux_formula() {
        let mut rb = ReceiveBuffer::new(None, 4 << 20, 1000, 50, DrsVariant::Classic);
        rb.receive(0, 100_000, 0);
        rb.autotune(SimTime::from_millis(100), 0.05);
        assert_eq!(rb.size, 648_000);
        // Capped.
        let mut capped = ReceiveBuffer::new(None, 200_000, 1000, 50, DrsVariant::Classic);
        capped.receive(0, 100_000, 0);
        capped.autotune(SimTime::from_millis(100), 0.05);
        assert_eq!(capped.size, 200_000);
    }

    /// Linux 6.16 on (`mptcp_rcvbuf_grow`, `tcp_rcvbuf_grow`): `rcvwin = copied << 1;
    /// grow = rcvwin·(copied − space)/space; rcvwin += grow << 1`, no cushion: the same read
    /// gives rcvwin = 200k, grow = 200k, rcvwin = 600k.
    #[test]
    fn linux_right_sizing_has_no_cushion() {
        let mut rb = ReceiveBuffer::new(None, 4 << 20, 1000, 50, DrsVariant::Linux);
        rb.receive(0, 100_000, 0);
        rb.autotune(SimTime::from_millis(100), 0.05);
        assert_eq!(rb.size, 600_000);
    }

    /// `__mptcp_space` = `__tcp_win_from_space(msk->scaling_ratio, rcvbuf − rmem)`, the ratio
    /// the smallest of the subflows': a subflow with no data yet has the default 128/256
    /// against 158/256 measured for full MPTCP segments, so the same free memory advertises
    /// 128/158 of the window; the edge holds until DATA_ACK catches up.
    #[test]
    fn a_subflow_without_data_advertises_the_default_scaling_ratio() {
        let mut rb = ReceiveBuffer::new(Some(158_000), 158_000, 1000, 10, DrsVariant::Linux);
        assert_eq!(rb.window_edge(0), 158_000);
        rb.unmeasured_subflow = true;
        rb.receive(0, 10_000, 0);
        assert_eq!(
            rb.window_edge(0),
            158_000,
            "10 000 + 128 000 is behind the edge"
        );
        rb.receive(10_000, 40_000, 0);
        assert_eq!(rb.window_edge(0), 50_000 + 128_000);
        rb.unmeasured_subflow = false;
        assert_eq!(rb.window_edge(0), 50_000 + 158_000);
    }
}
