//! One subflow: a TCP sender and its receiver.
//!
//! Sender: SACK-based loss recovery (RFC 6675 with FACK's loss test, see [`super::sack`], and
//! RACK's test for retransmissions lost again, see [`super::lost_retransmit`]; the default, as
//! in Linux 2.6–4.14; or with RACK's time-based test for every segment, see [`super::rack`], as
//! in Linux since; the window set to ssthresh at once or, with RACK, reduced by PRR, see
//! [`super::prr`]) or NewReno (RFC 5681 §3.2, RFC 6582 §3.2, "impatient" timer reset on
//! the first partial ACK) when SACK is off, slow start with appropriate byte counting (RFC 3465), RFC 6298 timer
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

use super::prr::{Prr, PrrAck};
use crate::cc::{Cc, CongestionControl, SubflowView};
use crate::event::Timer;
use crate::packet::{Packet, PacketKind};
use crate::scenario::{CwndLimitedCheck, LossDetection, TcpOptions, HEADER_BYTES, MSS_BYTES};
use crate::tcp::lost_retransmit::RetransmitLog;
use crate::tcp::rack::Rack;
use crate::tcp::rcv_rtt::RcvRttEstimator;
use crate::tcp::reorder::ReorderQueue;
use crate::tcp::rtt::{RttEstimator, MAX_RTO};
use crate::tcp::sack::{RangeSet, ReportedBlocks, SackBlocks, NO_SACK};
use crate::time::{u64_to_f64, SimTime};
use std::collections::VecDeque;

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
    /// Selectively acknowledged by the receiver.
    pub sacked: bool,
    /// Retransmitted during the current SACK recovery.
    pub retransmitted: bool,
    /// Deemed lost by RACK; cleared when SACKed and by a timeout.
    pub lost: bool,
}

impl SentSegment {
    /// RACK deemed it lost and it has not been re-sent since: owed a retransmission.
    fn owed(&self) -> bool {
        self.lost && !self.retransmitted
    }
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

/// The fields come in the order the per-packet work reads them: first what every ACK and the
/// congestion control's view read (the view's fields leading, since the coupled controls read
/// the siblings' too), then what every data segment reads at the receiver, then what only
/// losses and the report read. With thousands of connections a subflow is rarely in cache, and
/// the cache lines an ACK touches set its cost (`repr(C)` keeps the order).
#[repr(C)]
pub struct Subflow {
    // --- sender, on every ACK ---
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub cwnd: f64,
    pub ssthresh: f64,
    pub rtt: RttEstimator,
    mss: u32,
    pub index: u16,
    pub established: bool,
    pub in_recovery: bool,
    partial_ack_seen: bool,
    /// A SACK recovery began and its first retransmission has not gone out: RFC 6675 §5 step
    /// (4.3) sends it whatever the window says (Linux: PRR's `prr_out ? 0 : 1`, rate-halving's
    /// `in_flight + 1`). Recovery entered on the third duplicate ACK sends it at once instead.
    first_retransmission_owed: bool,
    /// The head segment was already retransmitted by the timer (keep ssthresh on a repeat).
    timeout_episode: bool,
    /// Marked stale: skipped by the scheduler until an ACK arrives.
    pub stale: bool,
    cwnd_limited_gate: bool,
    /// The gate measures use over a round of data ([`CwndLimitedCheck::PerRound`]).
    cwnd_limited_per_round: bool,
    /// Linux `tcp_cwnd_validate`: whether the window was full after a send in the current
    /// round of data, the most in flight after a send in it, and where that round ends.
    was_cwnd_limited: bool,
    max_flight: u64,
    cwnd_usage_seq: u64,
    sack: bool,
    delayed_ack: bool,
    /// RACK instead of FACK (with SACK only).
    rack_enabled: bool,
    /// Proportional Rate Reduction in SACK recovery (with RACK only).
    prr_enabled: bool,
    /// Highest sequence sent + 1.
    pub high_data: u64,
    pub segs: VecDeque<SentSegment>,
    pub rto_timer: Timer,
    /// Data the scheduler assigned to this subflow and not yet sent: (dsn, len).
    pub assigned: VecDeque<(u64, u32)>,
    pub assigned_bytes: u64,
    /// The peer's latest timestamp, echoed in data segments.
    peer_ts: u64,
    /// When the last ACK arrived (Linux `rcv_tstamp`).
    pub rcv_tstamp: SimTime,
    /// When a data segment, new or retransmitted, was last sent (Linux `lsndtime`).
    last_send: SimTime,
    /// Restart the window after an idle period ([`Subflow::restart_after_idle`]).
    slow_start_after_idle: bool,
    recover: u64,
    /// Forward-most SACKed byte + 1 (FACK's snd_fack), at least snd_una (raised with it).
    high_sacked: u64,
    /// Retransmitted bytes of this recovery not yet (S)ACKed (FACK's retran_data).
    retx_outstanding: u64,
    /// Where the search for the next lost segment resumes.
    retx_scan: u64,
    pub fwd_route: u32,
    abc_limit: u32,
    /// Initial window, segments: the floor of a restart after idle.
    initial_window: u32,
    dupacks: u32,
    backoff: u32,
    /// Read or written on every ACK, segment sent and segment received.
    pub counters: SubflowCounters,

    // --- receiver, on every data segment ---
    pub rcv_nxt: u64,
    pub ooo_bytes: u64,
    /// The timestamp echoed in ACKs: that of the first segment received after the last ACK
    /// sent (RFC 7323 §4.3, Linux `tcp_replace_ts_recent`), so that with delayed ACKs the
    /// sender's RTT sample includes the time a segment waited for its ACK.
    ts_recent: u64,
    /// `rcv_nxt` when the last ACK was sent (RFC 7323's Last.ACK.sent).
    last_ack_sent: u64,
    /// Receiver-side RTT estimate from echoed timestamps; kept only for receive-buffer
    /// auto-tuning, its one reader.
    pub rcv_rtt: RcvRttEstimator,
    pub delack_timer: Timer,
    pub rev_route: u32,
    unacked_segments: u32,
    /// The last out-of-order segments, whose ranges the SACK blocks report first.
    sack_reported: ReportedBlocks,
    ooo: ReorderQueue<(u32, u64)>,
    ooo_ranges: RangeSet,

    // --- losses, stale detection and the report ---
    /// The last ACK number that came with SACK blocks, and the blocks: every segment wholly
    /// inside one was marked SACKed then, and SACKed segments never lose the mark.
    last_sack_ack: u64,
    last_sack_blocks: SackBlocks,
    /// This SACK recovery's retransmissions, to find those dropped again.
    retx_log: RetransmitLog,
    rack: Rack,
    /// With RACK only: when each segment of `segs` (same index) was last sent. Kept apart so
    /// that the scoreboard every ACK walks stays as small without RACK.
    sent_times: VecDeque<SimTime>,
    /// RACK's reordering timer (RFC 8985 §6.3).
    pub reo_timer: Timer,
    /// SACKed bytes above snd_una, and bytes RACK deemed lost (not SACKed since), of which
    /// `lost_unsent` are not retransmitted yet: RFC 6675's pipe in RACK mode.
    sacked_bytes: u64,
    lost_bytes: u64,
    lost_unsent: u64,
    /// With RACK: bytes the ACK being processed delivered, cumulatively acknowledged (not
    /// SACKed before) or newly SACKed: PRR's DeliveredData.
    delivered_now: u64,
    /// PRR's state during a recovery.
    prr: Prr,
    /// Upstream MPTCP's stale detection: retransmission periods without ACK progress, and the
    /// `rcv_tstamp` they were counted against (`mptcp_pm_subflow_chk_stale`).
    pub stale_count: u8,
    pub stale_rcv_tstamp: SimTime,
    /// When a penalty last involved this subflow (`last_rbuf_opti`, spec §3.6): the penalised
    /// subflow's under `nsdi12`, the penalising one's under `conext13`.
    pub last_rbuf_opti: Option<SimTime>,
    /// Upstream MPTCP's `avg_pacing_rate` (bytes/s, 0 until the linger scheduler first looks
    /// at this subflow): the pacing rate averaged over the bursts it was given.
    pub avg_pacing_rate: f64,
    /// Linux `sk_pacing_rate` (bytes/s) as last set, at establishment and on each ACK
    /// (`tcp_update_pacing_rate`, [`crate::mptcp::scheduler::update_pacing_rate`]): a window
    /// cut by a timeout or a restart after idle shows in it only at the next ACK. Read by the
    /// linger scheduler.
    pub sk_pacing_rate: f64,
    pub base_rtt: SimTime,
    pub start_time: SimTime,
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
        let rack_enabled = opts.sack && opts.loss_detection == LossDetection::Rack;
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
            cwnd_limited_per_round: opts.cwnd_limited_check == CwndLimitedCheck::PerRound,
            was_cwnd_limited: false,
            max_flight: 0,
            cwnd_usage_seq: 0,
            delayed_ack: opts.delayed_ack,
            sack: opts.sack,
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
            first_retransmission_owed: false,
            high_sacked: 0,
            last_sack_ack: 0,
            last_sack_blocks: NO_SACK,
            retx_log: RetransmitLog::default(),
            rack_enabled,
            prr_enabled: rack_enabled && opts.prr,
            prr: Prr::default(),
            delivered_now: 0,
            rack: Rack::default(),
            sent_times: VecDeque::new(),
            reo_timer: Timer::default(),
            sacked_bytes: 0,
            lost_bytes: 0,
            lost_unsent: 0,
            retx_outstanding: 0,
            retx_scan: 0,
            rtt: RttEstimator::new(opts.rto_policy),
            backoff: 0,
            rto_timer: Timer::default(),
            timeout_episode: false,
            peer_ts: NO_TIMESTAMP,
            assigned: VecDeque::new(),
            assigned_bytes: 0,
            rcv_tstamp: SimTime::ZERO,
            last_send: SimTime::ZERO,
            slow_start_after_idle: opts.slow_start_after_idle,
            initial_window: opts.initial_window,
            stale_count: 0,
            stale_rcv_tstamp: SimTime::ZERO,
            last_rbuf_opti: None,
            avg_pacing_rate: 0.0,
            sk_pacing_rate: 0.0,
            stale: false,
            rcv_nxt: 0,
            ooo: ReorderQueue::default(),
            ooo_ranges: RangeSet::default(),
            sack_reported: ReportedBlocks::default(),
            ooo_bytes: 0,
            ts_recent: NO_TIMESTAMP,
            last_ack_sent: 0,
            unacked_segments: 0,
            delack_timer: Timer::default(),
            rcv_rtt: RcvRttEstimator::new(opts.drs_variant),
            counters: SubflowCounters::default(),
        }
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }

    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }

    /// The payload Linux counts in `sk_wmem_queued` (at truesize: [`super::truesize`]): every
    /// byte sent and not cumulatively acknowledged (a timeout's go-back-N sweep, which moves
    /// `snd_nxt` back, frees none of it) plus data handed over and not sent yet.
    pub fn queued_bytes(&self) -> u64 {
        self.high_data - self.snd_una + self.assigned_bytes
    }

    /// Data believed to be in the network: FACK's `awnd` with SACK, the flight otherwise (and
    /// during go-back-N after a timeout).
    pub fn pipe(&self) -> u64 {
        if self.sack && !self.go_back_n() {
            if self.rack_enabled {
                // RFC 6675 §4 / Linux `tcp_packets_in_flight`: what is out, less what is SACKed
                // or lost, plus the retransmissions (a lost segment re-sent counts once).
                return self.flight() - self.sacked_bytes - self.lost_bytes + self.retx_outstanding;
            }
            // `high_sacked` is never below `snd_una`: both move together on every ACK.
            debug_assert!(self.high_sacked >= self.snd_una);
            let fack = self.high_sacked.min(self.snd_nxt);
            self.snd_nxt - fack + self.retx_outstanding
        } else {
            self.flight()
        }
    }

    /// A full segment fits in the congestion window.
    pub fn has_cwnd_space(&self) -> bool {
        self.established && self.window_admits(self.pipe())
    }

    /// The first retransmission of a SACK recovery is owed and a segment is presumed lost,
    /// so one may go out beyond the window.
    pub fn first_retransmission_owed(&self) -> bool {
        self.first_retransmission_owed && self.next_lost().is_some()
    }

    /// Whether the window has room for one more segment with `pipe` bytes in the network
    /// (the caller may know `pipe` without [`Subflow::pipe`]'s scan).
    #[inline]
    pub fn window_admits(&self, pipe: u64) -> bool {
        u64_to_f64(pipe + self.mss as u64) <= self.cwnd
    }

    /// Nothing to send but new data: no go-back-N sweep, no SACK recovery and nothing assigned.
    /// A cheap test that spares the window and loss computations on most ACKs.
    pub fn owes_nothing(&self) -> bool {
        self.assigned.is_empty() && !self.go_back_n() && !self.in_sack_recovery()
    }

    /// Retransmissions are waiting: go-back-N after a timeout, or segments SACK recovery
    /// considers lost.
    pub fn has_retransmissions_pending(&self) -> bool {
        self.go_back_n() || self.next_lost().is_some()
    }

    /// In loss recovery driven by SACK (RFC 6675), where lost segments are looked for.
    fn in_sack_recovery(&self) -> bool {
        self.sack && self.in_recovery
    }

    /// The go-back-N sweep that follows a timeout has not reached the highest data sent.
    fn go_back_n(&self) -> bool {
        self.snd_nxt < self.high_data
    }

    /// Index of the next segment to retransmit in SACK recovery: unSACKed, not yet
    /// retransmitted, with more than 2 MSS between its end and fack (FACK). The test for
    /// recovery is inlined into the per-ACK callers; the scan is not.
    #[inline]
    fn next_lost(&self) -> Option<usize> {
        if !self.in_sack_recovery() {
            return None;
        }
        self.scan_for_lost()
    }

    fn scan_for_lost(&self) -> Option<usize> {
        if self.rack_enabled {
            if self.lost_unsent == 0 {
                return None;
            }
            let start = self.seg_index(self.retx_scan);
            return self
                .segs
                .iter()
                .enumerate()
                .skip(start)
                .find(|(_, s)| s.owed())
                .map(|(i, _)| i);
        }
        // RFC 6675 §4 IsLost: more than (DupThresh − 1)·SMSS bytes SACKed above the segment's
        // end, all of it taken as SACKed up to fack (for full segments Linux's FACK rule, lost
        // while fackets_out − reordering ≥ its position + 1).
        let above = (DUP_THRESH as u64 - 1) * self.mss as u64;
        let start = self.seg_index(self.retx_scan);
        self.segs
            .iter()
            .enumerate()
            .skip(start)
            .take_while(|(_, s)| s.seq + s.len as u64 + above < self.high_sacked)
            .find(|(_, s)| !s.sacked && !s.retransmitted)
            .map(|(i, _)| i)
    }

    /// Stale in the upstream MPTCP sense and still without a new ACK (`mptcp_subflow_active`).
    pub fn is_stale(&self) -> bool {
        self.stale && self.rcv_tstamp == self.stale_rcv_tstamp
    }

    /// Nothing unacknowledged or queued at TCP level (`tcp_rtx_and_write_queues_empty`).
    pub fn is_idle(&self) -> bool {
        self.segs.is_empty() && self.assigned.is_empty()
    }

    /// In the RTO "Loss" state: recovering by go-back-N until everything sent before the
    /// timeout is acknowledged (Linux `tcp_process_loss`: recovered once snd_una reaches
    /// high_seq; F-RTO's earlier undo is not modelled). A timeout sets `recover` to that mark
    /// and leaves fast recovery; fast recovery itself ends only once snd_una reaches `recover`
    /// and no new one starts below it, so outside it `snd_una < recover` means Loss.
    pub fn in_loss_state(&self) -> bool {
        !self.in_recovery && self.snd_una < self.recover
    }

    pub fn view(&self) -> SubflowView {
        SubflowView {
            cwnd: self.cwnd,
            ssthresh: self.ssthresh,
            srtt_s: self.rtt.srtt,
            mss: self.mss as f64,
            in_recovery: self.in_recovery,
            established: self.established,
        }
    }

    fn current_rto(&self) -> SimTime {
        let base = self.rtt.rto();
        if self.backoff == 0 {
            // Every RTT sample clears the backoff, and the estimator never exceeds MAX_RTO.
            return base;
        }
        SimTime(base.0.saturating_mul(1u64 << self.backoff.min(20))).min(MAX_RTO)
    }

    fn arm_rto(&mut self, now: SimTime, queue: &mut crate::event::EventQueue, conn: u32) {
        let ev = crate::event::Event::Rto {
            conn,
            subflow: self.index,
        };
        self.rto_timer.set(now + self.current_rto(), queue, ev);
    }

    /// The timer after a retransmission: RFC 6298 §5.1 starts it only when it is not running;
    /// Linux also restarts it whenever SACK recovery re-sends the head of the queue
    /// (`tcp_xmit_retransmit_queue`, the same in 2.6, 3.x and 6.x kernels), so a recovery whose
    /// first retransmission needs longer than what was left of the RTO since the last new ACK
    /// does not end in a timeout. NewReno recovery keeps RFC 6582's timer rules
    /// ([`Subflow::on_ack`]).
    fn arm_rto_for_retransmission(
        &mut self,
        resends_head: bool,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
        conn: u32,
    ) {
        if self.rto_timer.deadline().is_none() || (resends_head && self.in_sack_recovery()) {
            self.arm_rto(now, queue, conn);
        }
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
            sack: NO_SACK,
        }
    }

    /// Send new data (dsn, len) as the next segment: the packet to put on the wire.
    pub fn send_new(
        &mut self,
        conn: u32,
        dsn: u64,
        len: u32,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
    ) -> Packet {
        assert_eq!(
            self.snd_nxt, self.high_data,
            "new data only after the go-back-N sweep"
        );
        let seg = SentSegment {
            seq: self.snd_nxt,
            len,
            dsn,
            sacked: false,
            retransmitted: false,
            lost: false,
        };
        self.segs.push_back(seg);
        if self.rack_enabled {
            self.sent_times.push_back(now);
        }
        self.snd_nxt += len as u64;
        self.high_data = self.snd_nxt;
        self.last_send = now;
        self.counters.packets_sent += 1;
        if self.rto_timer.deadline().is_none() {
            self.arm_rto(now, queue, conn);
        }
        self.cwnd_validate();
        self.data_packet(conn, seg, now)
    }

    /// Linux `tcp_cwnd_validate` after a send (net/ipv4/tcp_output.c, 3.16 on): remember, for
    /// the current round of data, whether the congestion window was full and the most data in
    /// flight, which decide whether ACKs may grow the window ([`Subflow::on_ack`]). Only the
    /// per-round test reads them; per ACK this is one branch per send.
    #[inline(always)]
    fn cwnd_validate(&mut self) {
        if !self.cwnd_limited_per_round {
            return;
        }
        let limited = !self.window_admits(self.pipe());
        let flight = self.flight();
        if self.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.was_cwnd_limited && flight > self.max_flight)
        {
            self.was_cwnd_limited = limited;
            self.max_flight = flight;
            self.cwnd_usage_seq = self.snd_nxt;
        }
    }

    /// Nothing is in flight, so the next data sent ends an idle period: how long since data
    /// was last sent (Linux `lsndtime`), when it is longer than nothing.
    #[inline]
    pub fn idle_before_send(&self, now: SimTime) -> Option<SimTime> {
        if !self.segs.is_empty() {
            return None;
        }
        let idle = now.saturating_sub(self.last_send);
        (idle > SimTime::ZERO).then_some(idle)
    }

    /// The subflow became usable for data now: Linux sets `lsndtime` when a connection is
    /// established (`tcp_init_transfer`), so the first data is not sent "after idle".
    pub fn mark_established(&mut self, now: SimTime) {
        self.established = true;
        self.start_time = now;
        self.last_send = now;
        // The handshake's last segment from the peer (the SYN/ACK, or for an MP_JOIN the ACK
        // of the third ACK) carried a timestamp (RFC 7323 §3.2) that arrived now, half a base
        // round trip after the peer sent it: the first data echoes it, so the peer's receiver
        // has an RTT sample from the first full-sized segment on (`tcp_rcv_rtt_measure_ts`).
        self.peer_ts = now.0.saturating_sub(self.base_rtt.0 / 2);
    }

    /// Restart the congestion window after an idle period, `times` times over (RFC 5681 §4.1,
    /// RFC 2861; Linux `tcp_slow_start_after_idle_check` and `tcp_cwnd_restart`, on by default
    /// through `net.ipv4.tcp_slow_start_after_idle`). With nothing in flight and no data sent
    /// for longer than the RTO, ssthresh keeps at least three quarters of the window
    /// (`tcp_current_ssthresh`, or stays as recovery set it), and the window is halved once
    /// for every RTO of the idle time after the first, down to the initial window (or the
    /// window, if smaller). Linux runs the check for each buffer of new data it queues while
    /// nothing is in flight, with the idle time unchanged until one is sent, so a sender that
    /// queues several before sending restarts several times: the caller says how many.
    /// Returns whether the window or ssthresh changed.
    #[inline]
    pub fn restart_after_idle(&mut self, now: SimTime, times: u32) -> bool {
        if !self.slow_start_after_idle || !self.segs.is_empty() {
            return false;
        }
        self.restart_idle_window(now, times)
    }

    /// [`Subflow::restart_after_idle`] once the option is on and nothing is in flight.
    #[inline(never)]
    fn restart_idle_window(&mut self, now: SimTime, times: u32) -> bool {
        if !self.established {
            return false;
        }
        let rto = self.current_rto();
        let idle = now.0.saturating_sub(self.last_send.0);
        if idle <= rto.0 {
            return false;
        }
        let mss = f64::from(self.mss);
        let mut changed = false;
        for _ in 0..times {
            // Linux keeps whole segments; a coupled control's fraction of one goes with a
            // halving.
            let mut window = (self.cwnd / mss).floor() as u64;
            if !self.in_recovery {
                let kept = ((window >> 1) + (window >> 2)) as f64 * mss;
                changed |= kept > self.ssthresh;
                self.ssthresh = self.ssthresh.max(kept);
            }
            let restart = window.min(u64::from(self.initial_window));
            let mut left = idle;
            let mut halved = false;
            while left > rto.0 && window > restart {
                left -= rto.0;
                window >>= 1;
                halved = true;
            }
            if halved {
                self.cwnd = window.max(restart) as f64 * mss;
                changed = true;
            }
        }
        changed
    }

    /// Index of the first segment sent that starts at or after `seq`.
    fn seg_index(&self, seq: u64) -> usize {
        self.segs.partition_point(|s| s.seq < seq)
    }

    /// Re-send the segment at snd_una (fast retransmit, partial ACK).
    pub fn retransmit_head(
        &mut self,
        conn: u32,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
    ) -> Option<Packet> {
        let seg = *self.segs.front()?;
        if self.in_sack_recovery() && !seg.retransmitted && !seg.sacked {
            self.segs[0].retransmitted = true;
            self.retx_outstanding += seg.len as u64;
            if seg.lost {
                self.lost_unsent -= seg.len as u64;
            }
            if !self.rack_enabled {
                self.retx_log.record(seg.seq, self.high_data);
            }
        }
        if self.rack_enabled {
            self.sent_times[0] = now;
        }
        self.last_send = now;
        self.counters.packets_sent += 1;
        self.counters.retransmits += 1;
        self.first_retransmission_owed = false;
        self.arm_rto_for_retransmission(true, now, queue, conn);
        self.cwnd_validate();
        Some(self.data_packet(conn, seg, now))
    }

    /// Re-send the next segment owed: the go-back-N sweep after a timeout (skipping SACKed
    /// data), or the next lost segment in SACK recovery.
    pub fn retransmit_next(
        &mut self,
        conn: u32,
        now: SimTime,
        queue: &mut crate::event::EventQueue,
    ) -> Option<Packet> {
        let mut resends_head = false;
        let seg = if self.go_back_n() {
            loop {
                let i = self.seg_index(self.snd_nxt);
                let seg = *self.segs.get(i).filter(|s| s.seq == self.snd_nxt)?;
                self.snd_nxt += seg.len as u64;
                if !seg.sacked {
                    if self.rack_enabled {
                        self.sent_times[i] = now;
                    }
                    break seg;
                }
            }
        } else {
            let i = self.next_lost()?;
            resends_head = i == 0;
            if self.rack_enabled {
                self.sent_times[i] = now;
            }
            let seg = &mut self.segs[i];
            seg.retransmitted = true;
            if seg.lost {
                self.lost_unsent -= seg.len as u64;
            }
            self.retx_outstanding += seg.len as u64;
            self.retx_scan = seg.seq + seg.len as u64;
            let seg = *seg;
            if !self.rack_enabled {
                self.retx_log.record(seg.seq, self.high_data);
            }
            self.skip_settled_segments();
            seg
        };
        self.last_send = now;
        self.counters.packets_sent += 1;
        self.counters.retransmits += 1;
        self.first_retransmission_owed = false;
        self.arm_rto_for_retransmission(resends_head, now, queue, conn);
        self.cwnd_validate();
        Some(self.data_packet(conn, seg, now))
    }

    /// Process an ACK at the sender. `views` must hold the current view of every subflow of the
    /// connection, and still does on return: this subflow's entry follows its changes.
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
        self.rcv_tstamp = now;
        if pkt.ts_val != NO_TIMESTAMP {
            self.peer_ts = pkt.ts_val;
        }
        let ack = pkt.seq;
        let i = self.index as usize;
        let mss = self.mss as f64;
        if self.sack && ack >= self.snd_una && pkt.sack != NO_SACK {
            self.apply_sack(ack, &pkt.sack, now);
        }
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            out.newly_acked = acked;
            let flight_before = self.flight();
            if self.rack_enabled {
                self.rack_cumulative_ack(ack, now);
            }
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            while let Some(front) = self.segs.front() {
                if front.seq + front.len as u64 <= ack {
                    if front.retransmitted && !front.sacked {
                        self.retx_outstanding -= front.len as u64;
                        self.retx_log.delivered(front.seq);
                    }
                    self.segs.pop_front();
                } else {
                    break;
                }
            }
            self.high_sacked = self.high_sacked.max(ack);
            let rtt_sample = (pkt.ts_ecr != NO_TIMESTAMP && now.0 >= pkt.ts_ecr).then(|| {
                let rtt_s = u64_to_f64(now.0 - pkt.ts_ecr) * 1e-9;
                self.rtt.sample(rtt_s, now);
                if self.rack_enabled {
                    self.rack.rtt_sample(rtt_s);
                }
                // The only field of the view an ACK changes before the congestion control runs.
                views[i].srtt_s = self.rtt.srtt;
                self.backoff = 0;
                rtt_s
            });
            self.timeout_episode = false;
            self.dupacks = 0;
            debug_assert_eq!(views[i], self.view());
            if let Some(rtt_s) = rtt_sample {
                let (una, nxt) = (self.snd_una, self.snd_nxt);
                if let Some(ssthresh) = cc.on_rtt_sample(i, views, rtt_s, una, nxt, now) {
                    self.ssthresh = ssthresh;
                    views[i].ssthresh = ssthresh;
                }
            }
            cc.on_ack_any(i, views, acked);
            if self.in_recovery && self.sack {
                if ack >= self.recover {
                    // RFC 6675 §5: recovery ends when everything sent before it is acknowledged.
                    self.in_recovery = false;
                    self.first_retransmission_owed = false;
                    self.cwnd = self.ssthresh;
                    // What is still out was sent during the recovery; a retransmission among
                    // it is still in flight and keeps its mark, as Linux keeps
                    // TCPCB_SACKED_RETRANS and retrans_out into the Open state. (FACK cleared
                    // them, took the segment for lost again and re-sent it as the next
                    // recovery began, often on this very ACK.) Its log entry stays too, so
                    // that a later recovery still finds it dropped again; RACK judges it by
                    // when it was sent instead.
                    self.retx_log.forget_below(ack);
                }
            } else if self.in_recovery {
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
                    || if self.cwnd_limited_per_round {
                        // Linux 3.16 on: used in this round, or, in slow start, growing to
                        // twice the most that was in flight.
                        self.was_cwnd_limited
                            || (slow_start && self.cwnd < 2.0 * u64_to_f64(self.max_flight))
                    } else if slow_start {
                        2.0 * u64_to_f64(flight_before) >= self.cwnd
                    } else {
                        u64_to_f64(flight_before + self.mss as u64) > self.cwnd
                    };
                if cwnd_limited {
                    if slow_start {
                        let inc = acked.min(self.abc_limit as u64 * self.mss as u64) as f64;
                        self.cwnd += inc;
                    } else {
                        // `views[i]` is still this subflow's state: nothing above changed it
                        // outside recovery but ssthresh, which was copied there.
                        // f64::max(cwnd, mss) (a NaN window gives mss either way) without
                        // its NaN handling.
                        let cwnd = cc.on_ack_ca(i, views, acked, now);
                        self.cwnd = if cwnd > mss { cwnd } else { mss };
                    }
                }
            }
            self.note_cwnd(now);
            if self.snd_una >= self.high_data {
                self.rto_timer.cancel();
            } else if !self.in_recovery || self.sack {
                // In a NewReno recovery only its first partial ACK restarts the timer (above):
                // a window with many losses ends in one timeout rather than one round trip
                // per lost segment (RFC 6582 §3.2 step 3, §4 "Impatient").
                self.arm_rto(now, queue, conn);
            }
        } else if ack == self.snd_una && self.snd_una < self.high_data && !self.timeout_episode {
            self.dupacks += 1;
            if self.in_recovery {
                if !self.sack {
                    self.cwnd += mss;
                }
            } else if self.dupacks == DUP_THRESH && ack >= self.recover && !self.rack_enabled {
                // RFC 6582 §3.2 step 1: only dupACKs beyond `recover` start a new recovery.
                debug_assert_eq!(views[i], self.view());
                cc.on_congestion_event(i, views, now, false);
                self.ssthresh = cc.ssthresh_after_loss(i, views, now);
                self.recover = self.high_data;
                self.in_recovery = true;
                self.partial_ack_seen = false;
                self.cwnd = if self.sack {
                    self.ssthresh
                } else {
                    self.ssthresh + 3.0 * mss
                };
                self.retx_scan = self.snd_una;
                self.counters.fast_retransmits += 1;
                out.retransmit_head = true;
            }
        }
        // FACK's trigger: more than DupThresh segments' worth SACKed above snd_una, even when
        // fewer than three duplicate ACKs arrived (losses with new data acknowledged). The
        // SACKed amount comes first: nearly every ACK fails that test alone.
        if self.high_sacked > self.snd_una + DUP_THRESH as u64 * self.mss as u64
            && self.sack
            && !self.rack_enabled
            && !self.in_recovery
            && !self.timeout_episode
            && self.snd_una >= self.recover
        {
            self.enter_sack_recovery(cc, views, now);
        }
        // RACK (RFC 8985 §6.2): judge what was sent before the newest delivered segment; any
        // loss starts a recovery (Linux `tcp_time_to_recover`: lost_out > 0).
        let mut newly_lost = false;
        if self.rack_enabled && self.rack.take_advanced() && self.rack_may_judge() {
            // Only a segment marked lost raises `lost_unsent` (as on_reorder_timeout tells).
            let unsent = self.lost_unsent;
            self.rack_detect_loss(now, queue, conn);
            newly_lost = self.lost_unsent != unsent;
            if self.lost_bytes > 0 && !self.in_recovery && self.snd_una >= self.recover {
                self.enter_sack_recovery(cc, views, now);
            }
        }
        if self.prr_enabled {
            let delivered = std::mem::take(&mut self.delivered_now);
            if self.in_recovery {
                self.prr_reduce(delivered, out.newly_acked > 0, newly_lost);
            }
        }
        // The log sits with the fields only losses touch: outside recovery it holds at most
        // the last recovery's retransmissions still in flight, and is not read.
        if self.in_recovery && !self.retx_log.is_empty() {
            self.mark_lost_retransmissions();
        }
        self.skip_settled_segments();
        debug_assert_eq!(
            self.retx_outstanding,
            self.segs
                .iter()
                .filter(|s| s.retransmitted && !s.sacked)
                .map(|s| s.len as u64)
                .sum::<u64>(),
            "retran_data is the retransmitted bytes neither SACKed nor found lost"
        );
        debug_assert!(self.rack_counts_hold());
        // The fields of the view an ACK can have changed since.
        let v = &mut views[i];
        (v.cwnd, v.ssthresh, v.in_recovery) = (self.cwnd, self.ssthresh, self.in_recovery);
        debug_assert_eq!(views[i], self.view());
        out
    }

    /// Enter SACK recovery (RFC 6675 §5): the congestion control's reduction, straight to
    /// ssthresh, retransmissions from snd_una on.
    fn enter_sack_recovery(&mut self, cc: &mut Cc, views: &mut [SubflowView], now: SimTime) {
        let i = self.index as usize;
        views[i] = self.view();
        cc.on_congestion_event(i, views, now, false);
        self.ssthresh = cc.ssthresh_after_loss(i, views, now);
        self.recover = self.high_data;
        self.in_recovery = true;
        if self.prr_enabled {
            // PRR sets the window at this ACK's end, from the window recovery starts with.
            self.prr
                .start(self.cwnd, self.mss, self.counters.packets_sent);
        } else {
            self.cwnd = self.ssthresh;
        }
        self.retx_scan = self.snd_una;
        self.counters.fast_retransmits += 1;
        self.first_retransmission_owed = true;
    }

    /// PRR's window after an ACK (or a reordering timeout) in SACK recovery.
    fn prr_reduce(&mut self, delivered: u64, una_advanced: bool, newly_lost: bool) {
        let ack = PrrAck {
            delivered,
            pipe: self.pipe(),
            ssthresh: self.ssthresh,
            una_advanced,
            newly_lost,
            segments_sent: self.counters.packets_sent,
        };
        if let Some(cwnd) = self.prr.on_ack(ack, self.mss) {
            self.cwnd = cwnd;
        }
    }

    /// RACK judges segments outside the timeout's go-back-N recovery, which re-sends
    /// everything outstanding anyway (and leaves send times out of sequence order).
    fn rack_may_judge(&self) -> bool {
        !self.timeout_episode && !self.in_loss_state() && !self.go_back_n()
    }

    /// RFC 8985 §6.2 (Linux `tcp_rack_detect_loss`): mark lost every segment not (S)ACKed that
    /// was sent before the newest delivered one, once RACK.rtt + reo_wnd has passed since it
    /// was sent; arm the reordering timer for those still within that time.
    fn rack_detect_loss(&mut self, now: SimTime, queue: &mut crate::event::EventQueue, conn: u32) {
        let sacked_segments = self.sacked_bytes / self.mss as u64;
        let reo_wnd = self
            .rack
            .reo_wnd_ns(self.in_recovery, sacked_segments, self.rtt.srtt);
        let mut wait = 0u64;
        for k in 0..self.segs.len() {
            let seg = self.segs[k];
            if seg.sacked || seg.owed() {
                continue;
            }
            let end = seg.seq + seg.len as u64;
            match self
                .rack
                .time_to_lost(self.sent_times[k], end, reo_wnd, now)
            {
                // First transmissions go out in sequence order: none further on was sent
                // before the delivered segment either. A retransmission says nothing about
                // what follows it.
                None if seg.retransmitted => continue,
                None => break,
                Some(0) => self.mark_lost(k),
                Some(remaining) => wait = wait.max(remaining),
            }
        }
        if wait > 0 {
            let ev = crate::event::Event::RackReorder {
                conn,
                subflow: self.index,
            };
            self.reo_timer.set(now + SimTime(wait), queue, ev);
        }
    }

    /// Segments about to leave the scoreboard, cumulatively acknowledged up to `ack`: RACK's
    /// counts and record (one SACKed before was recorded then; Linux `tcp_clean_rtx_queue`).
    /// Kept out of the loop that removes them, which runs on every ACK with RACK off.
    fn rack_cumulative_ack(&mut self, ack: u64, now: SimTime) {
        for seg in self.segs.iter() {
            if seg.seq + seg.len as u64 > ack {
                break;
            }
            let len = seg.len as u64;
            let sent_at = self
                .sent_times
                .pop_front()
                .expect("a send time per segment");
            if seg.sacked {
                self.sacked_bytes -= len;
                continue;
            }
            self.delivered_now += len;
            self.rack
                .delivered(sent_at, seg.seq + len, seg.retransmitted, now);
            if seg.lost {
                self.lost_bytes -= len;
                if !seg.retransmitted {
                    self.lost_unsent -= len;
                }
            }
        }
    }

    /// RACK deems segment `k` lost; a retransmission of it lost again is owed once more.
    fn mark_lost(&mut self, k: usize) {
        let seg = &mut self.segs[k];
        let len = seg.len as u64;
        if seg.retransmitted {
            seg.retransmitted = false;
            self.retx_outstanding -= len;
        }
        if !seg.lost {
            seg.lost = true;
            self.lost_bytes += len;
        }
        self.lost_unsent += len;
        self.retx_scan = self.retx_scan.min(seg.seq);
    }

    /// RACK's reordering timer expired (RFC 8985 §6.3, Linux `tcp_rack_reo_timeout`): judge
    /// again; a loss found starts a recovery. Returns true when something became lost (the
    /// caller sends). `views` as for [`Subflow::on_ack`].
    pub fn on_reorder_timeout(
        &mut self,
        conn: u32,
        now: SimTime,
        cc: &mut Cc,
        views: &mut [SubflowView],
        queue: &mut crate::event::EventQueue,
    ) -> bool {
        if !self.rack_enabled || !self.rack_may_judge() {
            return false;
        }
        let before = self.lost_unsent;
        self.rack_detect_loss(now, queue, conn);
        if self.lost_unsent == before {
            return false;
        }
        if !self.in_recovery && self.snd_una >= self.recover {
            self.enter_sack_recovery(cc, views, now);
            if self.prr_enabled {
                // Linux `tcp_rack_reo_timeout`: the reduction as for one segment delivered.
                self.prr_reduce(self.mss as u64, false, false);
            }
        }
        self.skip_settled_segments();
        views[self.index as usize] = self.view();
        debug_assert!(self.rack_counts_hold());
        true
    }

    /// The RACK byte counts agree with the scoreboard (for debug assertions; kept only with
    /// RACK on).
    fn rack_counts_hold(&self) -> bool {
        if !self.rack_enabled {
            return self.sent_times.is_empty();
        }
        if self.sent_times.len() != self.segs.len() {
            return false;
        }
        let sum = |f: &dyn Fn(&SentSegment) -> bool| -> u64 {
            self.segs
                .iter()
                .filter(|s| f(s))
                .map(|s| s.len as u64)
                .sum()
        };
        self.segs.iter().all(|s| !(s.lost && s.sacked))
            && self.sacked_bytes == sum(&|s| s.sacked)
            && self.lost_bytes == sum(&|s| s.lost)
            && self.lost_unsent == sum(&|s| s.owed())
    }

    /// Retransmissions dropped again (see [`super::lost_retransmit`]) become lost segments
    /// like any other: no longer counted in the pipe, and [`Subflow::next_lost`]'s answers
    /// once the scan point is moved back to them.
    fn mark_lost_retransmissions(&mut self) {
        while let Some(seq) = self.retx_log.pop_lost(self.high_sacked) {
            let i = self.seg_index(seq);
            match self.segs.get_mut(i) {
                Some(seg) if seg.seq == seq && seg.retransmitted && !seg.sacked => {
                    seg.retransmitted = false;
                    self.retx_outstanding -= seg.len as u64;
                    self.retx_scan = self.retx_scan.min(seq);
                }
                _ => {} // (S)ACKed since
            }
        }
    }

    /// Move the SACK-recovery scan point past segments that are SACKed or already
    /// retransmitted: they can no longer be [`Subflow::next_lost`]'s answer in this recovery,
    /// and without this every call would walk over them again (twice per ACK). Skipping them
    /// never changes the answer: the FACK threshold only gets harder to meet further on.
    #[inline]
    fn skip_settled_segments(&mut self) {
        if self.in_sack_recovery() {
            self.advance_retx_scan();
        }
    }

    fn advance_retx_scan(&mut self) {
        if self.rack_enabled {
            // To the first segment lost and not re-sent; newly lost ones move it back.
            if self.lost_unsent == 0 {
                self.retx_scan = self.high_data;
                return;
            }
            let start = self.seg_index(self.retx_scan);
            for seg in self.segs.range(start..) {
                if seg.owed() {
                    break;
                }
                self.retx_scan = seg.seq + seg.len as u64;
            }
            return;
        }
        let start = self.seg_index(self.retx_scan);
        for seg in self.segs.range(start..) {
            if !(seg.sacked || seg.retransmitted) {
                break;
            }
            self.retx_scan = seg.seq + seg.len as u64;
        }
    }

    /// Mark the segments covered by SACK blocks (offsets from `ack`).
    ///
    /// A receiver repeats its blocks on every ACK, each grown by what arrived since, so walking
    /// every block in full costs the square of the blocks' length over a recovery. Segments
    /// wholly inside a block of the previous SACK are already marked and are skipped: only the
    /// parts of a block below and above such an earlier block are walked.
    fn apply_sack(&mut self, ack: u64, blocks: &SackBlocks, now: SimTime) {
        let (known_ack, known) = (self.last_sack_ack, self.last_sack_blocks);
        self.last_sack_ack = ack;
        self.last_sack_blocks = *blocks;
        for &(lo, hi) in blocks {
            if hi <= lo {
                continue;
            }
            let (start, end) = (ack + lo as u64, ack + hi as u64);
            let earlier = known.iter().find_map(|&(lo, hi)| {
                let (s, e) = (known_ack + lo as u64, known_ack + hi as u64);
                (s < e && start <= s && e <= end).then_some((s, e))
            });
            // Walk from `start` up to the earlier block, then on from its end.
            let (below, resume_after) = match earlier {
                Some((s, e)) => (s, (e < end).then_some(e)),
                None => (u64::MAX, None),
            };
            if start < below {
                self.mark_sacked(self.seg_index(start), below, end, now);
            }
            if let Some(e) = resume_after {
                // From the first segment not wholly inside the earlier block.
                let first = self
                    .segs
                    .partition_point(|seg| seg.seq + seg.len as u64 <= e);
                self.mark_sacked(first, u64::MAX, end, now);
            }
            self.high_sacked = self.high_sacked.max(end);
        }
    }

    /// Mark SACKed the segments from index `first` on that start below `below` and end by `end`.
    fn mark_sacked(&mut self, first: usize, below: u64, end: u64, now: SimTime) {
        for (k, seg) in self.segs.range_mut(first..).enumerate() {
            if seg.seq >= below || seg.seq + seg.len as u64 > end {
                break;
            }
            if !seg.sacked {
                seg.sacked = true;
                if seg.retransmitted {
                    self.retx_outstanding -= seg.len as u64;
                    self.retx_log.delivered(seg.seq);
                }
                if self.rack_enabled {
                    let len = seg.len as u64;
                    self.sacked_bytes += len;
                    self.delivered_now += len;
                    if seg.lost {
                        self.lost_bytes -= len;
                        if !seg.retransmitted {
                            self.lost_unsent -= len;
                        }
                        seg.lost = false;
                    }
                    let sent_at = self.sent_times[first + k];
                    self.rack
                        .delivered(sent_at, seg.seq + len, seg.retransmitted, now);
                }
            }
        }
    }

    /// The retransmission timer expired (RFC 6298 §5.4–5.6, RFC 5681 §3.1). Returns false when
    /// there was nothing outstanding. `views` as for [`Subflow::on_ack`].
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
        debug_assert_eq!(views[i], self.view());
        cc.on_congestion_event(i, views, now, true);
        // Linux `tcp_enter_loss`: ssthresh is recomputed only when the timeout starts a new
        // episode from the Open state; a timeout during fast recovery keeps the ssthresh that
        // recovery set.
        if !self.timeout_episode && !self.in_recovery {
            self.ssthresh = cc.ssthresh_after_loss(i, views, now);
        }
        self.timeout_episode = true;
        self.cwnd = self.mss as f64;
        self.in_recovery = false;
        self.first_retransmission_owed = false;
        self.dupacks = 0;
        self.recover = self.high_data;
        self.backoff += 1;
        self.snd_nxt = self.snd_una;
        self.retx_outstanding = 0;
        for s in self.segs.iter_mut() {
            s.retransmitted = false;
            s.lost = false;
        }
        self.lost_bytes = 0;
        self.lost_unsent = 0;
        self.rack.take_advanced(); // the go-back-N sweep re-sends all that was out
        self.reo_timer.cancel();
        self.retx_log.clear();
        self.counters.timeouts += 1;
        self.arm_rto(now, queue, conn);
        views[i] = self.view();
        true
    }

    /// Data arrives at the receiver. In-order payload is appended to `delivered` as (dsn, len);
    /// `track_rcv_rtt`: update the receiver RTT estimate. Returns true when an ACK must go out
    /// now.
    pub fn on_data(
        &mut self,
        pkt: &Packet,
        now: SimTime,
        track_rcv_rtt: bool,
        delivered: &mut Vec<(u64, u32)>,
    ) -> bool {
        if track_rcv_rtt && pkt.ts_ecr != NO_TIMESTAMP {
            self.rcv_rtt.on_segment(now, pkt.ts_ecr, pkt.len, self.mss);
        }
        let end = pkt.seq + pkt.len as u64;
        if end <= self.rcv_nxt {
            return true; // duplicate: ACK at once
        }
        if pkt.seq > self.rcv_nxt {
            if self.ooo.insert_if_vacant(pkt.seq, (pkt.len, pkt.dsn)) {
                self.ooo_bytes += pkt.len as u64;
                if self.sack {
                    self.ooo_ranges.insert(pkt.seq, end);
                }
            }
            self.sack_reported.note(pkt.seq);
            return true; // out of order: duplicate ACK at once
        }
        let skip = self.rcv_nxt - pkt.seq;
        delivered.push((pkt.dsn + skip, pkt.len - skip as u32));
        self.counters.bytes_delivered += end - self.rcv_nxt;
        self.rcv_nxt = end;
        if pkt.seq <= self.last_ack_sent {
            self.ts_recent = pkt.ts_val;
        }
        let filled_hole = !self.ooo.is_empty();
        while let Some((seq, (len, dsn))) = self.ooo.first() {
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
        if filled_hole && self.sack {
            self.ooo_ranges.trim_below(self.rcv_nxt);
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

    /// The ACK that completes this subflow's three-way handshake, on the forward route.
    /// `option_bytes`: what the handshake adds to the header (MP_CAPABLE with both keys).
    pub fn handshake_ack(&self, conn: u32, option_bytes: u32, now: SimTime) -> Packet {
        Packet {
            kind: PacketKind::HandshakeAck,
            hop: 0,
            subflow: self.index,
            conn,
            route: self.fwd_route,
            wire_bytes: HEADER_BYTES + option_bytes,
            len: 0,
            seq: 0,
            dsn: 0,
            window_edge: 0,
            ts_val: now.0,
            ts_ecr: 0,
            sack: NO_SACK,
        }
    }

    /// The ACK for everything received so far, to put on the wire.
    pub fn send_ack(&mut self, conn: u32, data_ack: u64, window_edge: u64, now: SimTime) -> Packet {
        self.unacked_segments = 0;
        self.last_ack_sent = self.rcv_nxt;
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
            sack: if self.sack && !self.ooo_ranges.is_empty() {
                self.ooo_ranges.blocks(self.rcv_nxt, &self.sack_reported)
            } else {
                NO_SACK
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CcParams;
    use crate::event::EventQueue;
    use crate::scenario::{CcKind, DrsVariant};

    const SEG: u64 = MSS_BYTES as u64;

    struct Sender {
        sf: Subflow,
        cc: Cc,
        views: Vec<SubflowView>,
        queue: EventQueue,
    }

    /// A Reno sender with `segments` full segments in flight.
    fn sender(segments: u64) -> Sender {
        sender_with(segments, TcpOptions::default())
    }

    fn sender_with(segments: u64, opts: TcpOptions) -> Sender {
        let mut sf = Subflow::new(0, 0, 1, SimTime::from_millis(100), &opts);
        sf.established = true;
        sf.cwnd = 200.0 * SEG as f64;
        let mut queue = EventQueue::new();
        for k in 0..segments {
            sf.send_new(0, k * SEG, MSS_BYTES, SimTime::ZERO, &mut queue);
        }
        let cc = Cc::new(CcKind::Reno, CcParams::from_options(&opts), 1);
        Sender {
            views: vec![sf.view()],
            sf,
            cc,
            queue,
        }
    }

    impl Sender {
        /// A duplicate ACK for byte 0 that SACKs segments 1..`upto`.
        fn dup_ack_sacking(&mut self, upto: u64) {
            let mut sack = NO_SACK;
            sack[0] = (SEG as u32, (upto * SEG) as u32);
            self.dup_ack_with(sack);
        }

        /// A duplicate ACK for byte 0 carrying `sack`.
        fn dup_ack_with(&mut self, sack: SackBlocks) {
            self.ack(0, sack, SimTime::from_millis(100));
        }

        /// A cumulative ACK of the first `segments` segments (after [`Sender::timeout`]).
        fn ack_upto(&mut self, segments: u64) {
            self.ack(segments * SEG, NO_SACK, SimTime::from_millis(500));
        }

        fn ack(&mut self, seq: u64, sack: SackBlocks, now: SimTime) {
            let ack = Packet {
                kind: PacketKind::Ack,
                hop: 0,
                subflow: 0,
                conn: 0,
                route: 1,
                wire_bytes: HEADER_BYTES,
                len: 0,
                seq,
                dsn: 0,
                window_edge: 0,
                ts_val: NO_TIMESTAMP,
                ts_ecr: NO_TIMESTAMP,
                sack,
            };
            let (sf, cc, views, queue) =
                (&mut self.sf, &mut self.cc, &mut self.views, &mut self.queue);
            sf.on_ack(0, &ack, now, cc, views, queue);
        }

        fn timeout(&mut self) {
            let now = SimTime::from_millis(400);
            let (sf, cc, views, queue) =
                (&mut self.sf, &mut self.cc, &mut self.views, &mut self.queue);
            assert!(sf.on_rto(0, now, cc, views, queue));
        }
    }

    /// Skipping what earlier SACKs already marked leaves the scoreboard as marking every block
    /// in full would: a segment is SACKed when it lies wholly inside any block received so far,
    /// whether blocks grow, shrink, merge or jump around.
    #[test]
    fn sack_scoreboard_marks_every_segment_inside_any_block_received() {
        let n = 40u64;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        let half = SEG as u32 / 2;
        for _ in 0..300 {
            let mut s = sender(n);
            let mut ever = vec![false; n as usize];
            let mut sack = NO_SACK;
            for _ in 0..12 {
                for block in sack.iter_mut() {
                    // Grow at either end by half or whole segments, or jump elsewhere.
                    match next(6) {
                        0 => block.1 = (block.1 + SEG as u32).min((n * SEG) as u32),
                        1 => block.1 = (block.1 + half).min((n * SEG) as u32),
                        2 => block.0 = block.0.saturating_sub(SEG as u32),
                        3 => block.0 = block.0.saturating_sub(half),
                        4 => {
                            let lo = next(n) * SEG + next(2) * SEG / 2;
                            let hi = (lo + next(4) * SEG / 2).min(n * SEG);
                            *block = (lo as u32, hi as u32);
                        }
                        _ => {}
                    }
                }
                for &(lo, hi) in &sack {
                    for (k, marked) in ever.iter_mut().enumerate() {
                        let (seq, end) = (k as u64 * SEG, (k as u64 + 1) * SEG);
                        if lo < hi && seq >= lo as u64 && end <= hi as u64 {
                            *marked = true;
                        }
                    }
                }
                s.dup_ack_with(sack);
                let got: Vec<bool> = s.sf.segs.iter().map(|seg| seg.sacked).collect();
                assert_eq!(got, ever);
            }
        }
    }

    /// Linux re-arms the retransmission timer whenever loss recovery re-sends the head of its
    /// queue (`tcp_xmit_retransmit_queue`: `if (skb == tcp_write_queue_head(sk))
    /// inet_csk_reset_xmit_timer(...)`), where RFC 6298 §5.1 only starts a stopped timer. A fast
    /// retransmit 300 ms after the timer was armed gets a whole RTO of its own; re-sending a
    /// later hole leaves the timer where it is. NewReno keeps RFC 6582's rules.
    #[test]
    fn resending_the_head_in_sack_recovery_restarts_the_timer() {
        let at = SimTime::from_millis;
        let mut s = sender(20);
        let rto = s.sf.current_rto();
        assert_eq!(
            s.sf.rto_timer.deadline(),
            Some(rto),
            "armed by the first send"
        );
        // Segments 0 and 5 lost: SACKs for 1-4 arrive at 300 ms and start recovery.
        for k in 2..=5 {
            s.ack(0, [(SEG as u32, (k * SEG) as u32), (0, 0), (0, 0)], at(300));
        }
        assert!(s.sf.in_recovery);
        assert_eq!(
            s.sf.rto_timer.deadline(),
            Some(rto),
            "duplicate ACKs leave it"
        );
        let head = s.sf.retransmit_head(0, at(300), &mut s.queue).unwrap();
        assert_eq!(head.seq, 0);
        assert_eq!(s.sf.rto_timer.deadline(), Some(at(300) + rto));
        // Segments 6-9 SACKed at 350 ms make segment 5 lost; re-sending it is not the head.
        let sack = [
            ((6 * SEG) as u32, (10 * SEG) as u32),
            (SEG as u32, (5 * SEG) as u32),
            (0, 0),
        ];
        s.ack(0, sack, at(350));
        let hole = s.sf.retransmit_next(0, at(350), &mut s.queue).unwrap();
        assert_eq!(hole.seq, 5 * SEG);
        assert_eq!(s.sf.rto_timer.deadline(), Some(at(300) + rto));

        let newreno = TcpOptions {
            sack: false,
            ..TcpOptions::default()
        };
        let mut s = sender_with(20, newreno);
        for _ in 0..DUP_THRESH {
            s.ack(0, NO_SACK, at(300));
        }
        assert!(s.sf.in_recovery);
        s.sf.retransmit_head(0, at(300), &mut s.queue).unwrap();
        assert_eq!(
            s.sf.rto_timer.deadline(),
            Some(rto),
            "RFC 6582: a running timer runs on"
        );
    }

    /// A retransmission dropped again is found without the timer (RACK, RFC 8985 §6.2, as
    /// Linux does; see [`super::lost_retransmit`]): once data sent after it is SACKed, or a
    /// retransmission sent after it is, it leaves the pipe and is re-sent.
    /// RFC 6675 §4 IsLost: more than (DupThresh − 1)·SMSS bytes SACKed above a segment; Linux
    /// FACK (`tcp_update_scoreboard`: lost = fackets_out − reordering from the head). Segments 0
    /// and 5 lost, 1–4 and 6–7 SACKed: fackets_out = 8, so 0 is lost and 5, with two segments
    /// above it, is not yet; the SACK of segment 8 makes it lost.
    #[test]
    fn fack_takes_a_segment_as_lost_with_three_segments_sacked_above_it() {
        let at = SimTime::from_millis;
        let mut s = sender(20);
        s.ack(0, sacking(&[(1, 5), (6, 8)]), at(300));
        let resend = |s: &mut Sender, t| {
            s.sf.retransmit_next(0, at(t), &mut s.queue)
                .map(|p| p.seq / SEG)
        };
        assert_eq!(resend(&mut s, 300), Some(0));
        assert_eq!(
            resend(&mut s, 300),
            None,
            "two segments SACKed above segment 5"
        );
        s.ack(0, sacking(&[(1, 5), (6, 9)]), at(310));
        assert_eq!(resend(&mut s, 310), Some(5));
    }

    #[test]
    fn a_retransmission_lost_again_is_re_sent_before_the_timer() {
        let at = SimTime::from_millis;
        // Segment 0 lost, then its retransmission (sent when 20 segments were out).
        let mut s = sender(20);
        for k in 2..=5 {
            s.ack(0, sacking(&[(1, k)]), at(300));
        }
        assert_eq!(
            s.sf.retransmit_head(0, at(300), &mut s.queue).unwrap().seq,
            0
        );
        assert_eq!(s.sf.retx_outstanding, SEG);
        for k in 20..23 {
            s.sf.send_new(0, k * SEG, MSS_BYTES, at(310), &mut s.queue);
        }
        s.ack(0, sacking(&[(1, 20)]), at(340));
        assert!(
            !s.sf.has_retransmissions_pending(),
            "nothing sent after it delivered yet"
        );
        s.ack(0, sacking(&[(21, 22), (1, 20)]), at(360));
        assert_eq!(s.sf.retx_outstanding, 0, "out of the pipe");
        assert!(s.sf.has_retransmissions_pending());
        let again = s.sf.retransmit_next(0, at(360), &mut s.queue).unwrap();
        assert_eq!(again.seq, 0);

        // Segments 0 and 5 lost and re-sent in that order; only 5's retransmission arrives.
        let mut s = sender(20);
        s.ack(0, sacking(&[(1, 5), (6, 10)]), at(300));
        assert_eq!(
            s.sf.retransmit_head(0, at(300), &mut s.queue).unwrap().seq,
            0
        );
        assert_eq!(
            s.sf.retransmit_next(0, at(300), &mut s.queue).unwrap().seq,
            5 * SEG
        );
        assert!(!s.sf.has_retransmissions_pending());
        s.ack(0, sacking(&[(1, 10)]), at(400));
        assert!(s.sf.has_retransmissions_pending());
        assert_eq!(
            s.sf.retransmit_next(0, at(400), &mut s.queue).unwrap().seq,
            0
        );
        // Its arrival ends the recovery; the timer never fired.
        s.ack(20 * SEG, NO_SACK, at(500));
        assert!(!s.sf.in_recovery);
        assert_eq!(s.sf.counters.timeouts, 0);
    }

    fn rack_sender(segments: u64) -> Sender {
        let opts = TcpOptions {
            loss_detection: LossDetection::Rack,
            ..TcpOptions::default()
        };
        sender_with(segments, opts)
    }

    fn sacking(blocks: &[(u64, u64)]) -> SackBlocks {
        let mut sack = NO_SACK;
        for (b, &(lo, hi)) in sack.iter_mut().zip(blocks) {
            *b = ((lo * SEG) as u32, (hi * SEG) as u32);
        }
        sack
    }

    impl Sender {
        /// An ACK echoing the timestamp of a segment sent at `sent` (an RTT sample).
        fn ack_echoing(
            &mut self,
            seq: u64,
            sack: SackBlocks,
            now: SimTime,
            sent: SimTime,
        ) -> AckOutcome {
            let mut ack = self.sf.send_ack(0, 0, 0, now);
            (ack.seq, ack.sack, ack.ts_ecr) = (seq, sack, sent.0);
            let (sf, cc, views, queue) =
                (&mut self.sf, &mut self.cc, &mut self.views, &mut self.queue);
            sf.on_ack(0, &ack, now, cc, views, queue)
        }

        fn reorder_timeout(&mut self, now: SimTime) -> bool {
            let (sf, cc, views, queue) =
                (&mut self.sf, &mut self.cc, &mut self.views, &mut self.queue);
            sf.on_reorder_timeout(0, now, cc, views, queue)
        }
    }

    /// RFC 8985 §3.4's case: a loss followed by only two segments (a small or
    /// receive-window-limited window) gives two duplicate ACKs, fewer than DupThresh, and two
    /// segments SACKed, fewer than FACK needs: FACK waits for the timer. RACK deems the first
    /// segment lost once its RTT plus min_rtt/4 has passed since it was sent (0 + 100 + 25 ms)
    /// and starts a recovery from its reordering timer.
    #[test]
    fn rack_finds_a_loss_followed_by_two_segments_without_the_timer() {
        let at = SimTime::from_millis;
        let mut fack = sender(3);
        fack.ack_echoing(0, sacking(&[(1, 2)]), at(100), at(0));
        fack.ack_echoing(0, sacking(&[(1, 3)]), at(100), at(0));
        assert!(!fack.sf.in_recovery && !fack.sf.has_retransmissions_pending());

        let mut rack = rack_sender(3);
        rack.sf.rtt.sample(0.1, SimTime::ZERO); // the handshake's
        rack.views[0] = rack.sf.view();
        rack.ack_echoing(0, sacking(&[(1, 2)]), at(100), at(0));
        rack.ack_echoing(0, sacking(&[(1, 3)]), at(100), at(0));
        assert!(!rack.sf.in_recovery, "within the reordering window");
        assert_eq!(rack.sf.reo_timer.deadline(), Some(at(125)));
        assert!(rack.reorder_timeout(at(125)));
        assert!(rack.sf.in_recovery);
        assert_eq!(rack.sf.counters.fast_retransmits, 1);
        assert_eq!(rack.sf.pipe(), 0, "3 out, 2 SACKed, 1 lost");
        let resent = rack
            .sf
            .retransmit_next(0, at(125), &mut rack.queue)
            .unwrap();
        assert_eq!(resent.seq, 0);
        assert_eq!(rack.sf.pipe(), SEG, "the retransmission is in flight");
        assert!(!rack.sf.has_retransmissions_pending());
    }

    /// With DupThresh segments SACKed the reordering window closes (Linux `tcp_rack_reo_wnd`):
    /// every unSACKed segment sent before them is lost at once, not only the first, and not
    /// those sent after the newest SACKed one.
    #[test]
    fn rack_marks_every_hole_below_three_sacked_segments_at_once() {
        let at = SimTime::from_millis;
        let mut s = rack_sender(10);
        // Segments 0 and 2 lost; 1, 3, 4, 5 SACKed; 6.. not yet delivered.
        s.ack_echoing(0, sacking(&[(3, 6), (1, 2)]), at(100), at(0));
        assert!(s.sf.in_recovery);
        let first = s.sf.retransmit_next(0, at(100), &mut s.queue).unwrap();
        let second = s.sf.retransmit_next(0, at(100), &mut s.queue).unwrap();
        assert_eq!((first.seq, second.seq), (0, 2 * SEG));
        assert!(s.sf.retransmit_next(0, at(100), &mut s.queue).is_none());
    }

    /// A window of 20 segments (RACK, Reno) loses its first segment; ACKs then SACK segments 1,
    /// 2, ... one at a time, and after each the sender sends what its window allows (the lost
    /// segment first, then new data). Returns the segments sent after each of the 19 ACKs.
    fn sends_while_sacking_a_window_of_twenty(prr: bool) -> Vec<u64> {
        let at = SimTime::from_millis;
        let opts = TcpOptions {
            loss_detection: LossDetection::Rack,
            prr,
            ..TcpOptions::default()
        };
        let mut s = sender_with(20, opts);
        s.sf.rtt.sample(0.1, SimTime::ZERO); // the handshake's: RACK's reordering window is 25 ms
        s.sf.cwnd = 20.0 * SEG as f64;
        s.views[0] = s.sf.view();
        let mut next_new = 20;
        (1..=19)
            .map(|k| {
                s.ack_echoing(0, sacking(&[(1, k + 1)]), at(100 + k), at(0));
                let mut sent = 0;
                // As the connection's `send_owed`: the first retransmission whatever the window.
                while s.sf.has_cwnd_space() || s.sf.first_retransmission_owed() {
                    if s.sf.has_retransmissions_pending() {
                        s.sf.retransmit_next(0, at(100 + k), &mut s.queue);
                    } else {
                        let dsn = next_new * SEG;
                        s.sf.send_new(0, dsn, MSS_BYTES, at(100 + k), &mut s.queue);
                        next_new += 1;
                    }
                    sent += 1;
                }
                sent
            })
            .collect()
    }

    /// RFC 6937 §3 with one loss in a window of 20 and ssthresh 10 (Reno), worked out by hand
    /// from the RFC's rules. The first two SACKs each let a new segment out (SACKed data leaves
    /// the flight); RACK finds the loss at the third (DupThresh), with 22 segments out and a
    /// flight of 22 − 3 SACKed − 1 lost = 18. With PRR that ACK sends the fast retransmit
    /// (⌈10 · 1/20⌉ − 0), later ones one segment for every two delivered while the flight
    /// exceeds ssthresh: 8 segments over the 17 ACKs of the recovery, never two at once.
    /// Without it (RFC 6675) the window drops to 10 at once; the fast retransmit still goes out
    /// (§5 step 4.3), then nothing until the flight is below 10, at the thirteenth SACK; from
    /// then on one segment per ACK.
    #[test]
    fn prr_spreads_the_window_reduction_over_the_recovery() {
        let prr = sends_while_sacking_a_window_of_twenty(true);
        assert_eq!(
            prr,
            [1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0]
        );
        let rfc6675 = sends_while_sacking_a_window_of_twenty(false);
        let mut expected = vec![1, 1, 1];
        expected.extend([0; 9]);
        expected.extend([1; 7]);
        assert_eq!(rfc6675, expected);
    }

    /// A window of 20 (cwnd 20, Reno) loses `lost`; ACKs SACK the segments above them one at a
    /// time until recovery starts. Returns whether the ACK that started it asked for the head's
    /// fast retransmit, and the subflow.
    fn recovery_after_losing(opts: TcpOptions, lost: &[u64]) -> (bool, Sender) {
        let at = SimTime::from_millis;
        let mut s = sender_with(20, opts);
        s.sf.rtt.sample(0.1, SimTime::ZERO);
        s.sf.cwnd = 20.0 * SEG as f64;
        s.views[0] = s.sf.view();
        let first = lost.iter().max().unwrap() + 1;
        for k in first..20 {
            let out = s.ack_echoing(0, sacking(&[(first, k + 1)]), at(100 + k), at(0));
            if s.sf.in_recovery {
                return (out.retransmit_head, s);
            }
        }
        panic!("no recovery after losing {lost:?}");
    }

    /// RFC 6675 §5: recovery starts on DupThresh duplicate ACKs or when IsLost(HighACK + 1),
    /// and step (4.3) retransmits the first segment presumed lost whatever the window; only
    /// later sends wait for cwnd − pipe ≥ 1 SMSS. Two lost segments start FACK's recovery on
    /// the second duplicate ACK, and RACK starts every one itself; each leaves a flight of 16
    /// over a window of 10, which admitted nothing until the flight fell below 10.
    #[test]
    fn a_recovery_not_started_by_three_duplicate_acks_still_sends_its_first_retransmission() {
        let rack = TcpOptions {
            loss_detection: LossDetection::Rack,
            ..TcpOptions::default()
        };
        for (opts, lost) in [
            (TcpOptions::default(), &[0, 1][..]),
            (TcpOptions::default(), &[0, 1, 2][..]),
            (rack.clone(), &[0][..]),
            (rack, &[0, 1][..]),
        ] {
            let (head_asked, mut s) = recovery_after_losing(opts.clone(), lost);
            let case = format!("{:?} losing {lost:?}", opts.loss_detection);
            assert!(!head_asked, "{case}");
            assert!(!s.sf.has_cwnd_space(), "{case}: the window is full");
            assert!(s.sf.first_retransmission_owed(), "{case}");
            let p =
                s.sf.retransmit_next(0, SimTime::from_millis(130), &mut s.queue);
            assert_eq!(p.map(|p| p.seq), Some(0), "{case}");
            assert!(!s.sf.first_retransmission_owed(), "{case}: owed once");
        }
        // Three duplicate ACKs send the head at once (`retransmit_head`): nothing more is owed.
        let (head_asked, s) = recovery_after_losing(TcpOptions::default(), &[0]);
        assert!(head_asked && !s.sf.first_retransmission_owed());
    }

    /// A window of 20 loses segments 0 and 15, and segment 21, new data sent during the
    /// recovery, is lost too and re-sent in it. The ACK that ends the recovery (15's
    /// retransmission arrives) starts the next one at once, with 21's retransmission still in
    /// flight: Linux keeps its TCPCB_SACKED_RETRANS mark and does not send it again; FACK here
    /// cleared the mark at the end of the recovery and re-sent 21 at once. RACK judged it
    /// by when it was sent, and agreed.
    #[test]
    fn a_retransmission_in_flight_when_a_recovery_ends_is_not_sent_again() {
        let at = SimTime::from_millis;
        // SACK blocks are offsets from the ACK number; these are given in segments.
        let blocks_from = |una: u64, blocks: &[(u64, u64)]| -> SackBlocks {
            let mut out = NO_SACK;
            for (b, &(lo, hi)) in out.iter_mut().zip(blocks) {
                *b = (((lo - una) * SEG) as u32, ((hi - una) * SEG) as u32);
            }
            out
        };
        let rack = TcpOptions {
            loss_detection: LossDetection::Rack,
            ..TcpOptions::default()
        };
        for opts in [TcpOptions::default(), rack] {
            let mut s = sender_with(20, opts.clone());
            s.sf.rtt.sample(0.1, SimTime::ZERO);
            s.sf.cwnd = 20.0 * SEG as f64;
            s.views[0] = s.sf.view();
            let mut resent = vec![];
            let send_owed = |s: &mut Sender, t: u64, resent: &mut Vec<u64>| {
                while let Some(p) = s.sf.retransmit_next(0, at(t), &mut s.queue) {
                    resent.push(p.seq / SEG);
                }
            };
            for k in 2..=4 {
                let out = s.ack_echoing(0, blocks_from(0, &[(1, k)]), at(100 + k), at(0));
                if out.retransmit_head {
                    s.sf.retransmit_head(0, at(100 + k), &mut s.queue);
                    resent.push(0);
                }
            }
            send_owed(&mut s, 104, &mut resent);
            for k in 20..30 {
                s.sf.send_new(0, k * SEG, MSS_BYTES, at(106), &mut s.queue);
            }
            for k in (5..=19).filter(|&k| k != 15) {
                let blocks = if k < 15 {
                    vec![(1, k + 1)]
                } else {
                    vec![(16, k + 1), (1, 15)]
                };
                s.ack_echoing(0, blocks_from(0, &blocks), at(100 + k), at(0));
                send_owed(&mut s, 100 + k, &mut resent);
            }
            s.ack_echoing(15 * SEG, blocks_from(15, &[(16, 20)]), at(204), at(104));
            send_owed(&mut s, 204, &mut resent);
            s.ack_echoing(
                15 * SEG,
                blocks_from(15, &[(20, 21), (16, 20)]),
                at(206),
                at(106),
            );
            for k in 22..=29 {
                let t = 206 + k - 21;
                s.ack_echoing(
                    15 * SEG,
                    blocks_from(15, &[(22, k + 1), (16, 21)]),
                    at(t),
                    at(106),
                );
                send_owed(&mut s, t, &mut resent);
            }
            assert_eq!(
                resent.iter().filter(|&&seg| seg == 21).count(),
                1,
                "{resent:?}"
            );
            // 15's retransmission arrives: ACK to 21, past the recovery point (20).
            s.ack_echoing(21 * SEG, blocks_from(21, &[(22, 30)]), at(220), at(118));
            send_owed(&mut s, 220, &mut resent);
            let case = format!("{:?}: {resent:?}", opts.loss_detection);
            assert_eq!(resent.iter().filter(|&&seg| seg == 21).count(), 1, "{case}");
            assert!(s.sf.in_recovery, "{case}: a second recovery began");
        }
    }

    /// A retransmission is judged by when it was re-sent: lost again once something sent after
    /// it is delivered and its RTT has passed (in recovery the window is zero).
    #[test]
    fn rack_re_sends_a_retransmission_lost_again() {
        let at = SimTime::from_millis;
        let mut s = rack_sender(6);
        s.ack_echoing(0, sacking(&[(1, 6)]), at(100), at(0));
        assert_eq!(
            s.sf.retransmit_next(0, at(100), &mut s.queue).unwrap().seq,
            0
        );
        s.sf.send_new(0, 6 * SEG, MSS_BYTES, at(110), &mut s.queue);
        // Segment 6 SACKed 100 ms after it was sent: the retransmission, sent 10 ms earlier, is
        // lost again.
        s.ack_echoing(0, sacking(&[(1, 7)]), at(210), at(110));
        assert!(s.sf.has_retransmissions_pending());
        assert_eq!(
            s.sf.retransmit_next(0, at(210), &mut s.queue).unwrap().seq,
            0
        );
        s.ack_echoing(7 * SEG, NO_SACK, at(310), at(210));
        assert!(!s.sf.in_recovery);
        assert_eq!(s.sf.counters.timeouts, 0);
        assert_eq!(s.sf.counters.fast_retransmits, 1, "one recovery");
    }

    /// Linux keeps a subflow in the Loss state after a timeout until everything it had sent
    /// then is acknowledged (`tcp_process_loss`: recovered once snd_una reaches high_seq), and
    /// the out-of-tree schedulers send it no new data until then (`mptcp_is_available`).
    #[test]
    fn a_timeout_lasts_until_what_was_sent_before_it_is_acknowledged() {
        let mut s = sender(10);
        s.timeout();
        assert!(s.sf.in_loss_state());
        s.ack_upto(4);
        assert!(
            s.sf.in_loss_state(),
            "6 of the 10 segments still unacknowledged"
        );
        s.ack_upto(10);
        assert!(!s.sf.in_loss_state());
    }

    /// An established subflow with nothing in flight, a window of `cwnd` and an ssthresh of
    /// `ssthresh` segments, that last sent at time zero; and its RTO.
    fn idle_subflow(cwnd: f64, ssthresh: f64, restart: bool) -> (Subflow, SimTime) {
        let opts = TcpOptions {
            slow_start_after_idle: restart,
            ..TcpOptions::default()
        };
        let mut sf = Subflow::new(0, 0, 1, SimTime::from_millis(40), &opts);
        sf.mark_established(SimTime::ZERO);
        sf.rtt.sample(0.04, SimTime::ZERO);
        sf.cwnd = cwnd * SEG as f64;
        sf.ssthresh = ssthresh * SEG as f64;
        let rto = sf.current_rto();
        (sf, rto)
    }

    fn segments(bytes: f64) -> f64 {
        bytes / SEG as f64
    }

    /// RFC 5681 §4.1 and Linux `tcp_cwnd_restart`, worked by hand: after an idle period of
    /// 1.5 RTO a window of 47 segments halves once (the first RTO of idleness costs nothing),
    /// to 23, and ssthresh keeps three quarters of the old window, 23 + 11 = 34 segments. A
    /// second buffer queued before anything is sent restarts again from 23 with the same idle
    /// time: 11, ssthresh stays 34; a third reaches the initial window, 10. The kernel trace
    /// this reproduces: a subflow at 46 and 48 segments came back at 11 and 12 after a
    /// two-fragment burst (`crossval.toml` point 25, `ss -tmi`).
    #[test]
    fn an_idle_window_halves_once_per_rto_of_idleness_after_the_first() {
        let (mut sf, rto) = idle_subflow(47.0, 31.0, true);
        let now = SimTime(rto.0 * 3 / 2);
        assert!(sf.restart_after_idle(now, 1));
        assert_eq!((segments(sf.cwnd), segments(sf.ssthresh)), (23.0, 34.0));
        assert!(sf.restart_after_idle(now, 1));
        assert_eq!((segments(sf.cwnd), segments(sf.ssthresh)), (11.0, 34.0));
        assert!(sf.restart_after_idle(now, 1));
        assert_eq!(segments(sf.cwnd), 10.0);
        assert!(
            !sf.restart_after_idle(now, 1),
            "at the initial window, ssthresh above ¾ of it"
        );

        // The same two restarts in one call, as for a burst of two data fragments.
        let (mut sf, _) = idle_subflow(47.0, 31.0, true);
        sf.restart_after_idle(now, 2);
        assert_eq!((segments(sf.cwnd), segments(sf.ssthresh)), (11.0, 34.0));

        // 3.5 RTOs: three halvings, 47 → 23 → 11 → 5, and the initial window as the floor.
        let (mut sf, _) = idle_subflow(47.0, 31.0, true);
        sf.restart_after_idle(SimTime(rto.0 * 7 / 2), 1);
        assert_eq!(segments(sf.cwnd), 10.0);
    }

    #[test]
    fn a_window_restarts_only_after_more_than_an_rto_with_nothing_in_flight() {
        let (mut sf, rto) = idle_subflow(47.0, 31.0, true);
        assert!(!sf.restart_after_idle(rto, 1), "idle for exactly the RTO");
        assert_eq!(segments(sf.cwnd), 47.0);

        let (mut off, _) = idle_subflow(47.0, 31.0, false);
        assert!(!off.restart_after_idle(SimTime(rto.0 * 3), 1), "option off");
        assert_eq!(segments(off.cwnd), 47.0);

        let (mut busy, _) = idle_subflow(47.0, 31.0, true);
        let mut queue = EventQueue::new();
        busy.send_new(0, 0, MSS_BYTES, SimTime::ZERO, &mut queue);
        assert!(
            !busy.restart_after_idle(SimTime(rto.0 * 3), 1),
            "a segment in flight"
        );

        // Below the initial window the window stays; ssthresh still keeps ¾ of it (4 + 2).
        let (mut small, _) = idle_subflow(8.0, 3.0, true);
        assert!(small.restart_after_idle(SimTime(rto.0 * 3), 1));
        assert_eq!((segments(small.cwnd), segments(small.ssthresh)), (8.0, 6.0));
    }

    /// RFC 7323 §3.2: the handshake's last segment from the peer (the SYN/ACK, or an MP_JOIN's
    /// ACK of the third ACK) carries its timestamp, and the first data segment echoes it, so
    /// the peer's receiver measures the path's round trip on that segment already (Linux
    /// `tcp_rcv_rtt_measure_ts`), not a round trip later. Oracle: the path's base RTT, with
    /// either form of the receiver's estimate.
    #[test]
    fn the_first_data_segment_echoes_the_handshake_timestamp() {
        for variant in [DrsVariant::Classic, DrsVariant::Linux] {
            let rtt = SimTime::from_millis(40);
            let mut sf = Subflow::new(0, 0, 1, rtt, &TcpOptions::default());
            let established = SimTime::from_millis(100);
            sf.mark_established(established);
            let mut queue = EventQueue::new();
            let p = sf.send_new(0, 0, MSS_BYTES, established, &mut queue);
            let mut receiver = RcvRttEstimator::new(variant);
            let arrival = established + SimTime::from_millis(20);
            receiver.on_segment(arrival, p.ts_ecr, p.len, MSS_BYTES);
            assert!(
                (receiver.seconds() - 0.040).abs() < 1e-12,
                "{variant:?}: {}",
                receiver.seconds()
            );
        }
    }

    /// The idle time counts from the last segment sent, a retransmission included (Linux
    /// `lsndtime`), not from the last ACK.
    #[test]
    fn idleness_counts_from_the_last_segment_sent() {
        let (mut sf, rto) = idle_subflow(47.0, 31.0, true);
        let mut queue = EventQueue::new();
        let sent = SimTime::from_millis(500);
        sf.send_new(0, 0, MSS_BYTES, sent, &mut queue);
        sf.segs.clear(); // acknowledged
        sf.snd_una = sf.snd_nxt;
        assert!(!sf.restart_after_idle(sent + rto, 1));
        assert!(sf.restart_after_idle(sent + rto + SimTime::from_millis(1), 1));
    }

    /// Linux `tcp_enter_loss` (`tcp_reno_ssthresh`): a timeout in the Open state sets ssthresh
    /// to half the congestion window, here all in flight (RFC 5681 §3.1 eq. (4) halves the
    /// same data).
    #[test]
    fn a_timeout_halves_the_window() {
        let mut s = sender(10);
        s.sf.cwnd = 10.0 * SEG as f64;
        s.views[0] = s.sf.view();
        s.timeout();
        assert_eq!(s.sf.ssthresh, 5.0 * SEG as f64);
        assert_eq!(s.sf.cwnd, SEG as f64);
    }

    /// Linux `tcp_enter_loss`: a timeout during SACK recovery keeps the ssthresh recovery set,
    /// even though by then nearly everything above the hole has been SACKed.
    #[test]
    fn a_timeout_during_recovery_keeps_its_ssthresh() {
        let mut s = sender(100);
        s.sf.cwnd = 100.0 * SEG as f64;
        s.views[0] = s.sf.view();
        let mut k = 2;
        while !s.sf.in_recovery {
            s.dup_ack_sacking(k);
            k += 1;
        }
        let ssthresh = s.sf.ssthresh;
        // Linux `tcp_reno_ssthresh`: half the 100-segment window, however much of it the
        // SACKs have already shown to have left the network.
        assert_eq!(ssthresh, 50.0 * SEG as f64);
        s.dup_ack_sacking(100);
        s.timeout();
        assert_eq!(s.sf.ssthresh, ssthresh);
        assert_eq!(s.sf.cwnd, SEG as f64);
    }

    /// A full data segment at sequence `k * SEG`, sent (stamped) at `sent_ms`.
    fn data_segment(k: u64, sent_ms: u64) -> Packet {
        Packet::full_segment(k * SEG, SimTime::from_millis(sent_ms).0)
    }

    /// RFC 7323 §4.3 (Linux `tcp_replace_ts_recent`): an ACK echoes the timestamp of the first
    /// segment received after the previous ACK, so that a delayed ACK's wait is in the sender's
    /// RTT sample. A segment held by the delayed-ACK rule and acknowledged together with the next
    /// one lends its (older) timestamp to that ACK.
    #[test]
    fn an_ack_echoes_the_first_segment_since_the_previous_ack() {
        let opts = TcpOptions {
            delayed_ack: true,
            ..TcpOptions::default()
        };
        let mut rx = Subflow::new(0, 0, 1, SimTime::from_millis(20), &opts);
        let mut delivered = Vec::new();
        let at = SimTime::from_millis;
        // Segments 0 and 1 arrive together: the second triggers the ACK, which echoes 0's.
        assert!(!rx.on_data(&data_segment(0, 1), at(11), false, &mut delivered));
        assert!(rx.on_data(&data_segment(1, 2), at(12), false, &mut delivered));
        assert_eq!(rx.send_ack(0, 0, 0, at(12)).ts_ecr, at(1).0);
        // Segment 2 waits for a partner; segment 3 comes 30 ms later. Their ACK echoes 2's
        // stamp: the sender sees the 30 ms segment 2 waited.
        assert!(!rx.on_data(&data_segment(2, 3), at(13), false, &mut delivered));
        assert!(rx.on_data(&data_segment(3, 33), at(43), false, &mut delivered));
        assert_eq!(rx.send_ack(0, 0, 0, at(43)).ts_ecr, at(3).0);
        // Without delayed ACKs every segment is acknowledged alone and echoes its own stamp.
        let mut quick = Subflow::new(0, 0, 1, SimTime::from_millis(20), &TcpOptions::default());
        for k in 0..3 {
            assert!(quick.on_data(
                &data_segment(k, 5 * k),
                at(10 + 5 * k),
                false,
                &mut delivered
            ));
            assert_eq!(quick.send_ack(0, 0, 0, at(10 + 5 * k)).ts_ecr, at(5 * k).0);
        }
    }

    /// A sender with a window of `cwnd` segments (`ssthresh` likewise), testing use `check`,
    /// that sends `sent` segments and then, with nothing more to send, gets them acknowledged
    /// one at a time: its window afterwards, in segments.
    fn window_after_acking(check: CwndLimitedCheck, cwnd: f64, ssthresh: f64, sent: u64) -> f64 {
        let opts = TcpOptions {
            cwnd_limited_check: check,
            ..TcpOptions::default()
        };
        let mut s = sender_with(0, opts);
        s.sf.cwnd = cwnd * SEG as f64;
        s.sf.ssthresh = ssthresh * SEG as f64;
        s.views[0] = s.sf.view();
        for k in 0..sent {
            s.sf.send_new(0, k * SEG, MSS_BYTES, SimTime::ZERO, &mut s.queue);
        }
        for k in 1..=sent {
            s.ack(k * SEG, NO_SACK, SimTime::from_millis(100));
        }
        s.sf.cwnd / SEG as f64
    }

    /// A window grows only while it is used. Per ACK: the data in flight before the ACK fills
    /// it, or half of it in slow start (Linux before 3.16). Per round, as Linux 3.16 on
    /// measures it (`tcp_cwnd_validate`, `tcp_is_cwnd_limited`): a window filled at some send
    /// of the round grows on every ACK of that round, though the sender has stopped, and in
    /// slow start a window also grows up to twice the most that was in flight. The kernel's
    /// own trace shows the latter: a subflow with 11 segments out and under a segment to send
    /// went from a window of 14 to 25 while they were acknowledged (`ss` every 10 ms, point 6
    /// of `campaigns/crossval.toml`).
    #[test]
    fn a_window_grows_while_it_is_used_per_ack_or_per_round() {
        let ss = f64::INFINITY;
        // Window, ssthresh, segments sent; the window after their ACKs per ACK and per round.
        let cases = [
            // Slow start, the initial window filled: per round it doubles; per ACK, ACK k finds
            // 11 - k out and grows while 2·(11 - k) ≥ 9 + k, for k ≤ 4.
            (10.0, ss, 10, 14.0, 20.0),
            // Slow start, never filled: per round up to twice the most in flight.
            (14.0, ss, 11, 17.0, 22.0),
            (30.0, ss, 11, 30.0, 30.0),
            // Congestion avoidance, filled: per round Reno adds about a segment over the
            // round; per ACK only the first ACK finds the window full, a tenth of a segment.
            (10.0, 5.0, 10, 10.1, 11.0),
            // Congestion avoidance, never filled: unchanged.
            (10.0, 5.0, 6, 10.0, 10.0),
        ];
        for (cwnd, ssthresh, sent, per_ack, per_round) in cases {
            for (check, want) in [
                (CwndLimitedCheck::PerAck, per_ack),
                (CwndLimitedCheck::PerRound, per_round),
            ] {
                let got = window_after_acking(check, cwnd, ssthresh, sent);
                assert!(
                    (got - want).abs() < 0.05,
                    "{check:?}, window {cwnd}, {sent} sent: {got}, expected {want}"
                );
            }
        }
    }
}
