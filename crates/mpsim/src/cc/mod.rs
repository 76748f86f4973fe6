//! Congestion control behind one small trait.
//!
//! The subflow runs the whole single-path machinery of spec §1 (slow start, fast
//! retransmit/recovery, RTO); a congestion control replaces only the congestion-avoidance
//! increase, the window after a congestion event and, for CUBIC, its own epoch state (spec §2.1).
//! Coupled algorithms (LIA, OLIA, BALIA) see read-only views of every subflow of their
//! connection; each algorithm lives in its own file and is chosen through [`Cc`].
//!
//! Windows are in bytes (f64, so coupled increments smaller than a byte accumulate), times in
//! seconds.

mod balia;
mod cubic;
mod hystart;
mod lia;
mod olia;
mod reno;
#[cfg(test)]
pub(crate) mod testing;

pub use balia::Balia;
pub use cubic::Cubic;
pub use lia::Lia;
pub use olia::Olia;
pub use reno::Reno;

use crate::scenario::{CcKind, CountMode, CubicVariant, TcpOptions, MSS_BYTES};
use crate::time::{u64_to_f64, SimTime};

/// What a congestion control may know about one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SubflowView {
    /// Congestion window, bytes.
    pub cwnd: f64,
    /// Slow-start threshold, bytes (f64::INFINITY before the first loss).
    pub ssthresh: f64,
    /// Smoothed RTT, seconds; 0 before the first sample.
    pub srtt_s: f64,
    /// Sender MSS, bytes.
    pub mss: f64,
    /// In fast recovery (cwnd is inflated).
    pub in_recovery: bool,
    /// Established and allowed to carry data.
    pub established: bool,
}

impl SubflowView {
    /// Whether the subflow enters coupled aggregates: established with an RTT sample
    /// (spec §2.1, §2.8 b; the Linux modules skip the others).
    pub fn participates(&self) -> bool {
        self.established && self.srtt_s > 0.0
    }
}

/// Linux's ssthresh floor for Reno, CUBIC, LIA and OLIA (`tcp_reno_ssthresh`: at least 2).
pub const LINUX_MIN_SSTHRESH_SEGMENTS: u32 = 2;

/// Options every congestion control reads; derived from the flow's [`TcpOptions`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcParams {
    pub mss: f64,
    pub count_mode: CountMode,
    /// Use ssthresh for subflows in recovery in aggregates (spec §2.8 c).
    pub recovery_uses_ssthresh: bool,
    /// Floor of ssthresh after a loss, bytes (spec §2.8 e): the scenario's, else Linux's Reno
    /// floor of two segments.
    pub min_ssthresh: f64,
    /// Whether the scenario gave that floor; if not, a control whose source sets another one
    /// (BALIA: one segment) uses its own.
    pub min_ssthresh_given: bool,
    /// CUBIC's HyStart slow-start exit (Linux default).
    pub hystart: bool,
    /// RFC 9438's or Linux's CUBIC congestion avoidance.
    pub cubic_variant: CubicVariant,
}

impl CcParams {
    pub fn from_options(o: &TcpOptions) -> CcParams {
        CcParams {
            mss: MSS_BYTES as f64,
            count_mode: o.count_mode,
            recovery_uses_ssthresh: o.recovery_uses_ssthresh,
            min_ssthresh: f64::from(
                o.min_ssthresh_segments
                    .unwrap_or(LINUX_MIN_SSTHRESH_SEGMENTS),
            ) * MSS_BYTES as f64,
            min_ssthresh_given: o.min_ssthresh_segments.is_some(),
            hystart: o.hystart,
            cubic_variant: o.cubic_variant,
        }
    }

    /// The window of `v` as coupled aggregates count it.
    pub fn aggregate_window(&self, v: &SubflowView) -> f64 {
        if v.in_recovery && self.recovery_uses_ssthresh && v.ssthresh.is_finite() {
            v.ssthresh
        } else {
            v.cwnd
        }
    }

    /// The window subflow `j` contributes to aggregates seen from subflow `r`: `r` itself counts
    /// with its real cwnd (it is never in recovery during a CA increase, and at a congestion
    /// event its window has not changed yet), the others as [`Self::aggregate_window`].
    pub fn window_seen_from(&self, r: usize, j: usize, v: &SubflowView) -> f64 {
        if r == j {
            v.cwnd
        } else {
            self.aggregate_window(v)
        }
    }

    /// Bytes an ACK counts for in an increase: all it covers, or one segment (spec §2.8 a).
    pub fn counted_bytes(&self, bytes_acked: u64) -> f64 {
        match self.count_mode {
            CountMode::PerAck => self.mss,
            CountMode::PerSegment => u64_to_f64(bytes_acked),
        }
    }

    /// Reno's ssthresh after a congestion event: half the congestion window, at least the
    /// floor. Linux `tcp_reno_ssthresh` halves `snd_cwnd`; RFC 5681 halves FlightSize, the same
    /// data for a window-limited sender.
    pub fn halved_window(&self, v: &SubflowView) -> f64 {
        (v.cwnd / 2.0).max(self.min_ssthresh)
    }
}

/// The hooks a congestion control implements. `i` is the subflow's index in `subflows`.
pub trait CongestionControl {
    /// Congestion-avoidance increase on an ACK of `bytes_acked` new bytes; returns the new cwnd.
    fn on_ack_ca(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        bytes_acked: u64,
        now: SimTime,
    ) -> f64;

    /// ssthresh after a congestion event (fast retransmit or timeout) on subflow `i`.
    fn ssthresh_after_loss(&mut self, i: usize, subflows: &[SubflowView], now: SimTime) -> f64;

    /// One call per congestion episode, before `ssthresh_after_loss`.
    fn on_congestion_event(
        &mut self,
        _i: usize,
        _subflows: &[SubflowView],
        _now: SimTime,
        _timeout: bool,
    ) {
    }

    /// Every ACK that advances `snd_una`, in any state (OLIA's inter-loss byte counts).
    fn on_ack_any(&mut self, _i: usize, _subflows: &[SubflowView], _bytes_acked: u64) {}

    /// Subflow `i` sends data with nothing in flight, `idle` after it last sent (Linux
    /// `CA_EVENT_TX_START`, raised by `tcp_event_data_sent`; CUBIC's §5.8 application limit).
    fn on_send_after_idle(&mut self, _i: usize, _idle: SimTime, _now: SimTime) {}

    /// An ACK that advances `snd_una` and carries an RTT sample of `rtt_s` seconds, before the
    /// window grows; `snd_una` and `snd_nxt` are subflow `i`'s, after the ACK (relative to the
    /// ISN). Returns a new ssthresh to end slow start (CUBIC's HyStart).
    #[allow(clippy::too_many_arguments)]
    fn on_rtt_sample(
        &mut self,
        _i: usize,
        _subflows: &[SubflowView],
        _rtt_s: f64,
        _snd_una: u64,
        _snd_nxt: u64,
        _now: SimTime,
    ) -> Option<f64> {
        None
    }
}

/// The congestion control of one connection, chosen by name.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(Reno),
    Cubic(Cubic),
    Lia(Lia),
    Olia(Olia),
    Balia(Balia),
}

impl Cc {
    pub fn new(kind: CcKind, params: CcParams, subflows: usize) -> Cc {
        match kind {
            CcKind::Reno => Cc::Reno(Reno::new(params)),
            CcKind::Cubic => Cc::Cubic(Cubic::new(params, subflows)),
            CcKind::Lia => Cc::Lia(Lia::new(params, subflows)),
            CcKind::Olia => Cc::Olia(Olia::new(params, subflows)),
            CcKind::Balia => Cc::Balia(Balia::new(params, subflows)),
        }
    }

    fn inner(&mut self) -> &mut dyn CongestionControl {
        match self {
            Cc::Reno(c) => c,
            Cc::Cubic(c) => c,
            Cc::Lia(c) => c,
            Cc::Olia(c) => c,
            Cc::Balia(c) => c,
        }
    }
}

impl CongestionControl for Cc {
    fn on_ack_ca(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        bytes_acked: u64,
        now: SimTime,
    ) -> f64 {
        self.inner().on_ack_ca(i, subflows, bytes_acked, now)
    }
    fn ssthresh_after_loss(&mut self, i: usize, subflows: &[SubflowView], now: SimTime) -> f64 {
        self.inner().ssthresh_after_loss(i, subflows, now)
    }
    fn on_congestion_event(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        now: SimTime,
        timeout: bool,
    ) {
        self.inner().on_congestion_event(i, subflows, now, timeout)
    }
    // The hooks below are empty for every algorithm but one; calling only that one spares every
    // ACK (or send) an indirect call. An algorithm that gains one of these hooks must be added
    // to its match.
    fn on_ack_any(&mut self, i: usize, subflows: &[SubflowView], bytes_acked: u64) {
        match self {
            Cc::Olia(c) => c.on_ack_any(i, subflows, bytes_acked),
            Cc::Reno(_) | Cc::Cubic(_) | Cc::Lia(_) | Cc::Balia(_) => {}
        }
    }
    fn on_rtt_sample(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        rtt_s: f64,
        snd_una: u64,
        snd_nxt: u64,
        now: SimTime,
    ) -> Option<f64> {
        match self {
            Cc::Cubic(c) => c.on_rtt_sample(i, subflows, rtt_s, snd_una, snd_nxt, now),
            Cc::Reno(_) | Cc::Olia(_) | Cc::Lia(_) | Cc::Balia(_) => None,
        }
    }
    fn on_send_after_idle(&mut self, i: usize, idle: SimTime, now: SimTime) {
        match self {
            Cc::Cubic(c) => c.on_send_after_idle(i, idle, now),
            Cc::Reno(_) | Cc::Olia(_) | Cc::Lia(_) | Cc::Balia(_) => {}
        }
    }
}
