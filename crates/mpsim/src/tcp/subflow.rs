//! One subflow: a TCP sender and its receiver.
//!
//! Sender: NewReno loss recovery (RFC 5681 §3.2, RFC 6582 §3.2, "impatient" timer reset on the
//! first partial ACK), slow start with appropriate byte counting (RFC 3465), RFC 6298 timer
//! management with exponential backoff, go-back-N after a timeout (snd_nxt ← snd_una), and the
//! congestion-avoidance increase and post-loss ssthresh delegated to a [`CongestionControl`].
//! RTT samples come from timestamps (RFC 7323), so retransmitted segments give valid samples.
//!
//! Receiver: cumulative ACKs, out-of-order segments held until the hole fills, immediate ACKs
//! for out-of-order data and hole fills, optional delayed ACKs (RFC 5681 §4.2: every second
//! segment or 40 ms, the Linux minimum delayed-ACK timer).
//!
//! Sequence numbers are 64-bit byte offsets that never wrap. Each segment carries its data
//! sequence mapping (`dsn`), which the connection level uses (RFC 8684 §3.3).

use crate::cc::{Cc, CongestionControl, SubflowView};
use crate::event::Timer;
use crate::packet::{Packet, PacketKind};
use crate::scenario::{TcpOptions, HEADER_BYTES, MSS_BYTES};
use crate::tcp::rtt::{RttEstimator, MAX_RTO};
use crate::time::SimTime;
use std::collections::{BTreeMap, VecDeque};

/// Timestamp value meaning "nothing to echo".
pub const NO_TIMESTAMP: u64 = u64::MAX;
/// Duplicate ACKs that trigger fast retransmit (RFC 5681 DupThresh).
const DUP_THRESH: u32 = 3;
/// Linux's minimum delayed-ACK timeout (TCP_DELACK_MIN).
const DELAYED_ACK_TIMEOUT: SimTime = SimTime(40_000_000);

/// A segment sent and not yet cumulatively acknowledged.
#[derive(Clone, Copy, Debug)]
pub struct SentSegment {
    pub seq: u64,
    pub len: u32,
    pub dsn: u64,
}

/// Per-subflow counters for the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubflowCounters {
    pub packets_sent: u64,
    pub retransmits: u64,
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Payload delivered in order at subflow level.
    pub bytes_delivered: u64,
    pub bytes_delivered_at_warmup: u64,
    pub max_cwnd: f64,
    pub max_cwnd_at: SimTime,
}

/// What an ACK did to the sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckOutcome {
    pub newly_acked: u64,
    /// Retransmit the segment at snd_una now (fast retransmit or NewReno partial ACK).
    pub retransmit_head: bool,
}

pub struct Subflow {
    pub index: u16,
    pub fwd_route: u32,
    pub rev_route: u32,
    pub base_rtt: SimTime,
    pub established: bool,
    pub start_time: SimTime,
    mss: u32,
    abc_limit: u32,
    cwnd_limited_gate: bool,
    delayed_ack: bool,

    // --- sender ---
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Highest sequence sent + 1.
    pub high_data: u64,
    pub segs: VecDeque<SentSegment>,
    pub cwnd: f64,
    pub ssthresh: f64,
    dupacks: u32,
    recover: u64,
    pub in_recovery: bool,
    partial_ack_seen: bool,
    pub rtt: RttEstimator,
    backoff: u32,
    pub rto_timer: Timer,
    /// The head segment was already retransmitted by the timer (keep ssthresh on a repeat).
    timeout_episode: bool,
    /// The peer's latest timestamp, echoed in data segments.
    peer_ts: u64,
    /// Data the scheduler assigned to this subflow and not yet sent: (dsn, len).
    pub assigned: VecDeque<(u64, u32)>,
    pub assigned_bytes: u64,

    // --- receiver ---
    pub rcv_nxt: u64,
    ooo: BTreeMap<u64, (u32, u64)>,
    pub ooo_bytes: u64,
    ts_recent: u64,
    unacked_segments: u32,
    pub delack_timer: Timer,
    /// Receiver-side RTT estimate, seconds (0 = none), from echoed timestamps.
    pub rcv_rtt: f64,

    pub counters: SubflowCounters,
}

impl Subflow {
    pub fn new(
        index: u16,
        fwd_route: u32,
        rev_route: u32,
        base_rtt: SimTime,
        opts: &TcpOptions,
    ) -> Subflow {
        let mss = MSS_BYTES;
        Subflow {
            index,
            fwd_route,
            rev_route,
            base_rtt,
            established: false,
            start_time: SimTime::ZERO,
            mss,
            abc_limit: opts.abc_limit,
            cwnd_limited_gate: opts.cwnd_limited_gate,
            delayed_ack: opts.delayed_ack,
            snd_una: 0,
            snd_nxt: 0,
            high_data: 0,
            segs: VecDeque::new(),
            cwnd: opts.initial_window as f64 * mss as f64,
            ssthresh: f64::INFINITY,
            dupacks: 0,
            recover: 0,
            in_recovery: false,
            partial_ack_seen: false,
            rtt: RttEstimator::new(opts.rto_policy),
            backoff: 0,
            rto_timer: Timer::default(),
            timeout_episode: false,
            peer_ts: NO_TIMESTAMP,
            assigned: VecDeque::new(),
            assigned_bytes: 0,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            ooo_bytes: 0,
            ts_recent: NO_TIMESTAMP,
            unacked_segments: 0,
            delack_timer: Timer::default(),
            rcv_rtt: 0.0,
            counters: SubflowCounters::default(),
        }
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }

    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// A full segment fits in the congestion window.
    pub fn has_cwnd_space(&self) -> bool {
        self.established && (self.flight() + self.mss as u64) as f64 <= self.cwnd
    }

    /// Go-back-N retransmissions are pending after a timeout.
    pub fn has_retransmissions_pending(&self) -> bool {
        self.snd_nxt < self.high_data
    }

    /// In the RTO "Loss" state: recovering by go-back-N.
    pub fn in_loss_state(&self) -> bool {
        self.timeout_episode
    }

    pub fn view(&self) -> SubflowView {
        SubflowView {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt_s: self.rtt.srtt,
            mss: self.mss as f64,
            in_recovery: self.in_recovery,
            established: self.established,
            flight_bytes: self.flight() as f64,
            snd_una: self.snd_una,
        }
    }

    fn current_rto(&self) -> SimTime {
        let base = self.rtt.rto().0;
        SimTime(base.saturating_mul(1u64 << self.backoff.min(20))).min(MAX_RTO)
    }

    fn arm_rto(&mut self, now: SimTime, queue: &mut crate::event::EventQueue, conn: u32) {
        let ev = crate::event::Event::Rto {
            conn,
            subflow: self.index,
        };
        self.rto_timer.set(now + self.current_rto(), queue, ev);
    }

    /// Track the run maximum of cwnd, ignoring the temporary inflation of fast recovery.
    fn note_cwnd(&mut self, now: SimTime) {
        if !self.in_recovery && self.cwnd > self.counters.max_cwnd {
            self.counters.max_cwnd = self.cwnd;
            self.counters.max_cwnd_at = now;
        }
    }

    fn data_packet(&self, conn: u32, seg: SentSegment, now: SimTime) -> Packet {
        Packet {
            kind: PacketKind::Data,
            hop: 0,
            subflow: self.index,
            conn,
            route: self.fwd_route,
            wire_bytes: seg.len + HEADER_BYTES,
            len: seg.len,
            seq: seg.seq,
            dsn: seg.dsn,
            window_edge: 0,
            ts_val: now.0,
            ts_ecr: self.peer_ts,
        }
    }

    /// Send new data (dsn, len) as the next segment.
    pub fn send_new(
        &mut self,
        conn: u32,
        dsn: u64,
        len: u32,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
    ) -> Packet {
        debug_assert_eq!(self.snd_nxt, self.high_data);
        let seg = SentSegment {
            seq: self.snd_nxt,
            len,
            dsn,
        };
        self.segs.push_back(seg);
        self.snd_nxt += len as u64;
        self.high_data = self.snd_nxt;
        self.counters.packets_sent += 1;
        if self.rto_timer.deadline().is_none() {
            self.arm_rto(now, queue, conn);
        }
        self.data_packet(conn, seg, now)
    }

    fn segment_at(&self, seq: u64) -> Option<SentSegment> {
        let i = self.segs.partition_point(|s| s.seq < seq);
        self.segs.get(i).copied().filter(|s| s.seq == seq)
    }

    /// Re-send the segment at snd_una (fast retransmit, partial ACK).
    pub fn retransmit_head(
        &mut self,
        conn: u32,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
    ) -> Option<Packet> {
        let seg = *self.segs.front()?;
        self.counters.packets_sent += 1;
        self.counters.retransmits += 1;
        if self.rto_timer.deadline().is_none() {
            self.arm_rto(now, queue, conn);
        }
        Some(self.data_packet(conn, seg, now))
    }

    /// After a timeout: re-send the next segment of the go-back-N sweep.
    pub fn retransmit_next(
        &mut self,
        conn: u32,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
    ) -> Option<Packet> {
        let seg = self.segment_at(self.snd_nxt)?;
        self.snd_nxt += seg.len as u64;
        self.counters.packets_sent += 1;
        self.counters.retransmits += 1;
        if self.rto_timer.deadline().is_none() {
            self.arm_rto(now, queue, conn);
        }
        Some(self.data_packet(conn, seg, now))
    }

    /// Process an ACK at the sender. `views` must hold the current view of every subflow of the
    /// connection; this subflow's entry is refreshed before each congestion-control call.
    #[allow(clippy::too_many_arguments)]
    pub fn on_ack(
        &mut self,
        conn: u32,
        pkt: &Packet,
        now: SimTime,
        cc: &mut Cc,
        views: &mut [SubflowView],
        queue: &mut crate::event::EventQueue,
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        if pkt.ts_val != NO_TIMESTAMP {
            self.peer_ts = pkt.ts_val;
        }
        let ack = pkt.seq;
        let i = self.index as usize;
        let mss = self.mss as f64;
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            out.newly_acked = acked;
            let flight_before = self.flight();
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            while let Some(front) = self.segs.front() {
                if front.seq + front.len as u64 <= ack {
                    self.segs.pop_front();
                } else {
                    break;
                }
            }
            if pkt.ts_ecr != NO_TIMESTAMP && now.0 >= pkt.ts_ecr {
                self.rtt.sample((now.0 - pkt.ts_ecr) as f64 * 1e-9);
                self.backoff = 0;
            }
            self.timeout_episode = false;
            self.dupacks = 0;
            views[i] = self.view();
            cc.on_ack_any(i, views, acked);
            if self.in_recovery {
                if ack >= self.recover {
                    // Full ACK (RFC 6582 §3.2 step 3): deflate.
                    self.in_recovery = false;
                    self.cwnd = self
                        .ssthresh
                        .min(self.flight().max(self.mss as u64) as f64 + mss);
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked.
                    out.retransmit_head = true;
                    self.cwnd = (self.cwnd - acked as f64).max(mss);
                    if acked >= self.mss as u64 {
                        self.cwnd += mss;
                    }
                    if !self.partial_ack_seen {
                        self.partial_ack_seen = true;
                        self.arm_rto(now, queue, conn);
                    }
                }
            } else {
                let slow_start = self.cwnd < self.ssthresh;
                let cwnd_limited = !self.cwnd_limited_gate
                    || if slow_start {
                        2.0 * flight_before as f64 >= self.cwnd
                    } else {
                        (flight_before + self.mss as u64) as f64 > self.cwnd
                    };
                if cwnd_limited {
                    if slow_start {
                        let inc = acked.min(self.abc_limit as u64 * self.mss as u64) as f64;
                        self.cwnd += inc;
                    } else {
                        views[i] = self.view();
                        self.cwnd = cc.on_ack_ca(i, views, acked, now).max(mss);
                    }
                }
            }
            self.note_cwnd(now);
            if self.snd_una < self.high_data {
                self.arm_rto(now, queue, conn);
            } else {
                self.rto_timer.cancel();
            }
        } else if ack == self.snd_una && self.snd_una < self.high_data && !self.timeout_episode {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += mss;
            } else if self.dupacks == DUP_THRESH && ack >= self.recover {
                // RFC 6582 §3.2 step 1: only dupACKs beyond `recover` start a new recovery.
                views[i] = self.view();
                cc.on_congestion_event(i, views, now, false);
                self.ssthresh = cc.ssthresh_after_loss(i, views, now);
                self.recover = self.high_data;
                self.in_recovery = true;
                self.partial_ack_seen = false;
                self.cwnd = self.ssthresh + 3.0 * mss;
                self.counters.fast_retransmits += 1;
                out.retransmit_head = true;
            }
        }
        out
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1). Returns false when
    /// there was nothing outstanding.
    pub fn on_rto(
        &mut self,
        conn: u32,
        now: SimTime,
        cc: &mut Cc,
        views: &mut [SubflowView],
        queue: &mut crate::event::EventQueue,
    ) -> bool {
        if self.snd_una >= self.high_data {
            return false;
        }
        let i = self.index as usize;
        views[i] = self.view();
        cc.on_congestion_event(i, views, now, true);
        if !self.timeout_episode {
            self.ssthresh = cc.ssthresh_after_loss(i, views, now);
        }
        self.timeout_episode = true;
        self.cwnd = self.mss as f64;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = self.high_data;
        self.backoff += 1;
        self.snd_nxt = self.snd_una;
        self.counters.timeouts += 1;
        self.arm_rto(now, queue, conn);
        true
    }

    /// Data arrives at the receiver. In-order payload is appended to `delivered` as (dsn, len).
    /// Returns true when an ACK must go out now.
    pub fn on_data(&mut self, pkt: &Packet, now: SimTime, delivered: &mut Vec<(u64, u32)>) -> bool {
        if pkt.ts_ecr != NO_TIMESTAMP && now.0 >= pkt.ts_ecr {
            let sample = (now.0 - pkt.ts_ecr) as f64 * 1e-9;
            self.rcv_rtt = if self.rcv_rtt == 0.0 {
                sample
            } else {
                0.875 * self.rcv_rtt + 0.125 * sample
            };
        }
        let end = pkt.seq + pkt.len as u64;
        if end <= self.rcv_nxt {
            return true; // duplicate: ACK at once
        }
        if pkt.seq > self.rcv_nxt {
            if let std::collections::btree_map::Entry::Vacant(e) = self.ooo.entry(pkt.seq) {
                e.insert((pkt.len, pkt.dsn));
                self.ooo_bytes += pkt.len as u64;
            }
            return true; // out of order: duplicate ACK at once
        }
        let skip = self.rcv_nxt - pkt.seq;
        delivered.push((pkt.dsn + skip, pkt.len - skip as u32));
        self.counters.bytes_delivered += end - self.rcv_nxt;
        self.rcv_nxt = end;
        self.ts_recent = pkt.ts_val;
        let filled_hole = !self.ooo.is_empty();
        while let Some((&seq, &(len, dsn))) = self.ooo.first_key_value() {
            if seq > self.rcv_nxt {
                break;
            }
            self.ooo.pop_first();
            self.ooo_bytes -= len as u64;
            let seg_end = seq + len as u64;
            if seg_end > self.rcv_nxt {
                let skip = self.rcv_nxt - seq;
                delivered.push((dsn + skip, len - skip as u32));
                self.counters.bytes_delivered += seg_end - self.rcv_nxt;
                self.rcv_nxt = seg_end;
            }
        }
        if filled_hole || !self.delayed_ack {
            return true;
        }
        self.unacked_segments += 1;
        self.unacked_segments >= 2
    }

    /// Whether a delayed ACK must be scheduled (data was received but not yet acknowledged).
    pub fn arm_delayed_ack(
        &mut self,
        conn: u32,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
    ) {
        if self.unacked_segments > 0 && self.delack_timer.deadline().is_none() {
            let ev = crate::event::Event::DelayedAck {
                conn,
                subflow: self.index,
            };
            self.delack_timer.set(now + DELAYED_ACK_TIMEOUT, queue, ev);
        }
    }

    /// Build the ACK for everything received so far.
    pub fn make_ack(&mut self, conn: u32, data_ack: u64, window_edge: u64, now: SimTime) -> Packet {
        self.unacked_segments = 0;
        self.delack_timer.cancel();
        Packet {
            kind: PacketKind::Ack,
            hop: 0,
            subflow: self.index,
            conn,
            route: self.rev_route,
            wire_bytes: HEADER_BYTES,
            len: 0,
            seq: self.rcv_nxt,
            dsn: data_ack,
            window_edge,
            ts_val: now.0,
            ts_ecr: self.ts_recent,
        }
    }
}
