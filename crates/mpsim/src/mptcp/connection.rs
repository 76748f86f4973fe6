//! One connection: its subflows, congestion control, connection-level send state (DSN space,
//! DATA_ACK, shared send buffer, reinjection queue) and receive buffer, and the push loop that
//! schedules data onto subflows (spec §3.1–§3.6; the loop follows the out-of-tree
//! `mptcp_next_segment` structure quoted in spec §3.5).
//!
//! Data-level recovery follows the implementation whose scheduler the connection runs: with the
//! out-of-tree schedulers (minrtt, roundrobin, redundant) a subflow timeout queues its
//! unacknowledged data for reinjection on the other subflows; with `linger`, the upstream Linux
//! scheduler, there is no such reinjection but an MPTCP-level retransmission timer
//! (`mptcp_retransmit_timer` / `__mptcp_retrans` in net/mptcp/protocol.c, spec §3.8) that re-sends
//! the head of the unacknowledged data on an idle subflow when DATA_ACKs stop advancing.

mod tcp_writer;

use super::penalization::{
    maybe_penalize, should_retransmit_opportunistically, HeadOfLine, RbufOptions,
};
use super::receive_buffer::ReceiveBuffer;
use super::scheduler::{self, LINGER_BURST_BYTES};
use crate::app::Application;
use crate::cc::{Cc, CcParams, CongestionControl, SubflowView};
use crate::event::{Event, EventQueue, Timer};
use crate::packet::{Packet, PacketKind};
use crate::scenario::{
    BufferMode, CcKind, DrsVariant, FlowSpec, Protocol, SchedulerKind, DEFAULT_BUFFER_CAP_BYTES,
    MSS_BYTES,
};
use crate::tcp::Subflow;
use crate::time::SimTime;
use crate::topology::Network;
use std::collections::VecDeque;

/// Linux `tcp_sndbuf_expand`: sk_sndbuf = 2 · max(cwnd, TCP_INIT_CWND) · per_mss, where per_mss
/// is the memory charged per MSS-sized skb: roundup_pow_of_two(MSS + MAX_TCP_HEADER +
/// skb_shared_info) + sk_buff = 2048 + 256 bytes for a 1448-byte MSS. Measured on this kernel
/// (6.18, `ss -tm`): cwnd 145 → tb 668 160 = 2 · 145 · 2304. The MPTCP socket's data
/// fragments, and a fast sender's large skbs, are charged about their payload, so the buffer
/// holds about 3.2 cwnds of payload; an upstream subflow's queue is charged at truesize
/// ([`scheduler::wmem_queued`]), 1.44 times the payload sent on a slow path.
const SNDBUF_BYTES_PER_SEGMENT: f64 = 2.0 * 2304.0;
/// tcp_wmem[0], which upstream MPTCP adds to the sum of the subflows' send buffers (measured:
/// msk tb 368 128 = 4096 + 276 480 + 87 552 with two subflows).
const MPTCP_SNDBUF_BASE_BYTES: f64 = 4096.0;
/// The MP_CAPABLE option of the handshake's third ACK, carrying both keys (RFC 8684 §3.1).
const MP_CAPABLE_ACK_BYTES: u32 = 20;
/// TCP_INIT_CWND: the floor of the segment count in `tcp_sndbuf_expand`.
const SNDBUF_MIN_SEGMENTS: f64 = 10.0;
/// Upstream MPTCP's unit of sending data, an `mptcp_data_frag`: `mptcp_sendmsg` copies a bulk
/// writer's data into 32 KiB page fragments, each headed by the 40-byte `mptcp_data_frag`, and
/// extends a fragment while its page has room, so the payload of each is 32 768 − 40 bytes.
const DATA_FRAG_BYTES: u64 = 32 * 1024 - 40;

/// Where the data fragment holding byte `dsn` ends (fragments start at DSN 0).
fn fragment_end(dsn: u64) -> u64 {
    (dsn / DATA_FRAG_BYTES + 1) * DATA_FRAG_BYTES
}
/// TCP_RTO_MIN: the MPTCP-level timeout when no subflow timer is pending (`__mptcp_set_timeout`).
const UPSTREAM_MIN_TIMEOUT: SimTime = SimTime(200_000_000);
/// `net.mptcp.stale_loss_cnt` default: retransmission periods without progress before a busy
/// subflow is marked stale.
const STALE_LOSS_CNT: u8 = 4;
/// Upstream `active_max_loss_cnt = max(stale_loss_cnt - 1, 1)`: another subflow counts as an
/// alternative only with fewer periods without progress than this.
const ACTIVE_MAX_LOSS_CNT: u8 = if STALE_LOSS_CNT > 2 {
    STALE_LOSS_CNT - 1
} else {
    1
};

/// The segment count `tcp_sndbuf_expand` sizes a subflow's send buffer for: its largest
/// congestion window so far (sk_sndbuf never shrinks), at least TCP_INIT_CWND.
fn sndbuf_segments(sf: &Subflow) -> f64 {
    (sf.cwnd.max(sf.counters.max_cwnd) / sf.mss() as f64).max(SNDBUF_MIN_SEGMENTS)
}

/// What the engine hands a connection when it runs: the clock, the event list and the network
/// its packets enter.
pub struct Ctx<'a> {
    pub now: SimTime,
    pub events: &'a mut EventQueue,
    pub net: &'a mut Network,
}

impl Ctx<'_> {
    /// Put a packet on the first hop of its route, now.
    #[inline(always)]
    pub fn send(&mut self, pkt: &Packet) {
        self.net.send(pkt, self.now, self.events);
    }
}

/// A data-level segment sent and not yet DATA_ACKed.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    dsn: u64,
    len: u32,
    /// Subflows it has been sent on (or assigned to).
    sent_mask: u32,
    /// Subflows whose copy a timeout there has queued for reinjection: each copy is reinjected
    /// once (the out-of-tree kernel marks the subflow's skb MPTCP_REINJECT), but a copy on
    /// another subflow can be again.
    reinjected_from: u32,
}

/// Connection-level counters for the report.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnectionCounters {
    pub reinjections: u64,
    pub penalizations: u64,
    pub rwnd_limited_ns: u64,
    pub delivered_at_warmup: u64,
}

/// The fields come in the order the per-packet work reads them, those of every ACK and data
/// packet first and the report's and rare paths' last: with thousands of connections their
/// state is rarely in cache, and kept together a packet's fields span a few cache lines instead
/// of all of them (`repr(C)` keeps the order, the alignment starts it on a line).
#[repr(C, align(64))]
pub struct Connection {
    // Both directions.
    pub subflows: Vec<Subflow>,
    pub index: u32,
    mss: u32,
    pub protocol: Protocol,
    pub cc_kind: CcKind,
    scheduler: SchedulerKind,
    /// The application found the send buffer full and waits for write space.
    writer_asleep: bool,
    /// An MPTCP connection under the upstream scheduler, which takes its data-fragment
    /// handling and its data-level retransmission from upstream Linux too: the MPTCP-level
    /// timer (spec §3.8) replaces the out-of-tree reinjection on subflow timeouts.
    upstream: bool,
    /// `tcp.slow_start_after_idle`, as the subflows have it: tested here, pushes leave the
    /// subflows alone when it is off (about 0.8 % of the instructions of the throughput
    /// bench's MPTCP cases).
    restart_after_idle: bool,
    /// When the application stops writing (`stop_s`); what it wrote before is still sent.
    app_stop: SimTime,
    // Sender, connection level.
    data_una: u64,
    peer_edge: u64,
    rr_last: usize,
    /// The congestion control's view of each subflow ([`Subflow::view`]), kept current where the
    /// subflows change (ACKs, timeouts, the handshake, penalties) rather than re-copied before
    /// every call: a coupled algorithm reads all of them on every ACK.
    views: Vec<SubflowView>,
    snd_nxt_dsn: u64,
    write_end: u64,
    /// Plain TCP: where the writer's last skb starts ([`tcp_writer`]).
    tail_start: u64,
    /// Plain TCP: the largest window the peer has advertised (`tp->max_window`), which bounds
    /// the writer's skbs.
    max_peer_window: u64,
    sndbuf_fixed: Option<u64>,
    rwnd_blocked_since: Option<SimTime>,
    /// Data sent and not yet DATA_ACKed, for re-sending it on another subflow (MPTCP only).
    chunks: VecDeque<Chunk>,
    reinject: VecDeque<(u64, u32, u32)>,
    // Receiver, connection level.
    delivered_scratch: Vec<(u64, u32)>,
    /// The sum of the subflows' `ooo_bytes` (see `subflow_ooo`).
    subflow_ooo_bytes: u64,
    pub rb: ReceiveBuffer,
    pub app: Application,
    cc: Cc,
    /// Some subflow's entry in `unmeasured_joins` is set (tested on every ACK sent).
    watch_joins: bool,
    // Rarely read.
    /// An upstream MPTCP receiver of Linux 6.16 on: per subflow, when the peer learned of its
    /// join (the MP_JOIN's third ACK arrived) while it has received no data, else
    /// `SimTime::MAX` ([`ReceiveBuffer::window_edge`]). Empty for any other receiver.
    unmeasured_joins: Vec<SimTime>,
    sndbuf_cap: u64,
    rbuf_opts: RbufOptions,
    /// MPTCP-level retransmission timer (upstream semantics, linger scheduler only).
    rtx_timer: Timer,
    /// Upstream `msk->timer_ival`: the interval every (re)start of `rtx_timer` uses, taken
    /// from the subflows' pending timeouts when the scheduler last handed out data.
    timer_ival: SimTime,
    pub id: String,
    pub start: SimTime,
    warmup: SimTime,
    pub counters: ConnectionCounters,
}

impl Connection {
    /// `routes[i]` = (forward route, reverse route, base RTT) of path i.
    pub fn new(
        id: String,
        index: u32,
        spec: &FlowSpec,
        routes: &[(u32, u32, SimTime)],
        start: SimTime,
        app_stop: SimTime,
        warmup: SimTime,
    ) -> Connection {
        let subflows: Vec<Subflow> = routes
            .iter()
            .enumerate()
            .map(|(i, &(f, r, rtt))| Subflow::new(i as u16, f, r, rtt, &spec.tcp))
            .collect();
        let n = subflows.len();
        let upstream = spec.protocol == Protocol::Mptcp && spec.scheduler == SchedulerKind::Linger;
        let cc_kind = spec.cc_kind();
        let rcv_fixed = match spec.rcvbuf_mode() {
            BufferMode::Fixed => spec.rcvbuf_bytes,
            BufferMode::Auto => None,
        };
        let rcv_cap = spec.rcvbuf_max_bytes.unwrap_or(DEFAULT_BUFFER_CAP_BYTES);
        Connection {
            id,
            index,
            protocol: spec.protocol,
            cc_kind,
            cc: Cc::new(cc_kind, CcParams::from_options(&spec.tcp), n),
            views: subflows.iter().map(Subflow::view).collect(),
            subflows,
            // Plain TCP has no MPTCP scheduler: its one subflow takes the data as it comes.
            scheduler: if spec.protocol == Protocol::Tcp {
                SchedulerKind::Minrtt
            } else {
                spec.scheduler
            },
            rr_last: n - 1,
            rbuf_opts: RbufOptions {
                penalization: spec.penalization_mode(),
                opportunistic: spec.opportunistic_retransmit_enabled(),
                oretx_rtt_factor: spec.tcp.oretx_rtt_factor,
                oretx_small_cwnd: spec.tcp.oretx_small_cwnd,
            },
            mss: MSS_BYTES,
            data_una: 0,
            snd_nxt_dsn: 0,
            write_end: 0,
            tail_start: 0,
            max_peer_window: 0,
            peer_edge: 0,
            sndbuf_fixed: spec.sndbuf_bytes,
            sndbuf_cap: spec.sndbuf_max_bytes.unwrap_or(DEFAULT_BUFFER_CAP_BYTES),
            chunks: VecDeque::new(),
            reinject: VecDeque::new(),
            rtx_timer: Timer::default(),
            timer_ival: UPSTREAM_MIN_TIMEOUT,
            rwnd_blocked_since: None,
            writer_asleep: false,
            upstream,
            restart_after_idle: spec.tcp.slow_start_after_idle,
            app_stop,
            app: Application::new(&spec.app, start),
            rb: ReceiveBuffer::new(
                rcv_fixed,
                rcv_cap,
                MSS_BYTES,
                spec.tcp.initial_window,
                spec.tcp.drs_variant,
            ),
            delivered_scratch: Vec::new(),
            subflow_ooo_bytes: 0,
            watch_joins: false,
            unmeasured_joins: if upstream && spec.tcp.drs_variant == DrsVariant::Linux {
                vec![SimTime::MAX; n]
            } else {
                Vec::new()
            },
            start,
            warmup,
            counters: ConnectionCounters::default(),
        }
    }

    /// Every view is its subflow's current one (checked in debug builds before each
    /// congestion-control call).
    fn views_are_current(&self) -> bool {
        self.views
            .iter()
            .zip(&self.subflows)
            .all(|(v, sf)| *v == sf.view())
    }

    /// The send buffer: fixed, or grown like Linux's (`tcp_sndbuf_expand`, see
    /// [`SNDBUF_BYTES_PER_SEGMENT`]: about 3.2 congestion windows of payload, at least 10
    /// segments' worth, never shrinking; an MPTCP connection's is the sum of its subflows',
    /// spec §3.2), up to the cap (tcp_wmem[2], 4 MiB by default).
    fn sndbuf_limit(&self) -> u64 {
        match self.sndbuf_fixed {
            Some(b) => b,
            None => {
                let segments: f64 = self
                    .subflows
                    .iter()
                    .filter(|s| s.established)
                    .map(sndbuf_segments)
                    .sum();
                let mut bytes = SNDBUF_BYTES_PER_SEGMENT * segments.max(SNDBUF_MIN_SEGMENTS);
                if self.protocol == Protocol::Mptcp {
                    // `__mptcp_sync_sndbuf`: tcp_wmem[0] plus the subflows' buffers.
                    bytes += MPTCP_SNDBUF_BASE_BYTES;
                }
                (bytes as u64).min(self.sndbuf_cap)
            }
        }
    }

    /// `sk_stream_memory_free` of subflow `s`: its queued data, at truesize
    /// ([`scheduler::wmem_queued`]), below its own send buffer, which a fixed buffer sets to
    /// the connection's (`mptcp_sockopt_sync`) and auto-tuning grows like a TCP socket's, up
    /// to the cap.
    fn send_memory_free(&self, s: usize) -> bool {
        let sf = &self.subflows[s];
        let sndbuf = match self.sndbuf_fixed {
            Some(b) => b,
            None => ((SNDBUF_BYTES_PER_SEGMENT * sndbuf_segments(sf)) as u64).min(self.sndbuf_cap),
        };
        scheduler::wmem_queued(sf) < sndbuf
    }

    fn sndbuf_full(&self) -> bool {
        self.write_end - self.data_una >= self.sndbuf_limit()
    }

    /// The application writes what the send buffer admits. A writer that filled it sleeps
    /// until the free space is at least half the queued data (`sk_stream_write_space`, and
    /// `mptcp_write_space` for MPTCP: `__sk_stream_is_writeable(sk, 1)`), so it refills from
    /// two thirds of the buffer, not from the first freed byte. Upstream MPTCP copies the data
    /// a page fragment at a time and tests the buffer only between fragments (`mptcp_sendmsg`,
    /// `mptcp_send_limit`), so the writer fills to the end of the fragment that reaches the
    /// limit. A plain TCP connection's writer is Linux's TCP one ([`tcp_writer`]); for it,
    /// returns the send buffer while the writer is writing. Inlined into both push loops.
    #[inline(always)]
    fn app_write(&mut self, now: SimTime) -> Option<u64> {
        if self.protocol == Protocol::Tcp {
            return self.tcp_app_write(now);
        }
        let limit = self.sndbuf_limit();
        let used = self.write_end - self.data_una;
        if self.writer_asleep {
            if limit.saturating_sub(used) < used / 2 {
                return None;
            }
            self.writer_asleep = false;
        }
        if now >= self.app_stop {
            return None;
        }
        if used < limit {
            let room = if self.upstream {
                fragment_end(self.data_una + limit - 1) - self.write_end
            } else {
                limit - used
            };
            let written = self.app.write(self.write_end, room, now);
            self.write_end += written;
        }
        self.writer_asleep =
            self.write_end - self.data_una >= limit && self.app.wants_to_write(self.write_end);
        None
    }

    /// Whether the application would write more if the send buffer had room.
    fn app_wants_to_write(&self, now: SimTime) -> bool {
        now < self.app_stop && self.app.wants_to_write(self.write_end)
    }

    /// The receive-buffer optimisations apply to MPTCP with the schedulers that call them in
    /// the out-of-tree kernel (default and redundant).
    fn rbuf_optimizations_apply(&self) -> bool {
        self.protocol == Protocol::Mptcp
            && self.subflows.len() > 1
            && matches!(
                self.scheduler,
                SchedulerKind::Minrtt | SchedulerKind::Redundant
            )
    }

    fn chunk_index(&self, dsn: u64) -> Option<usize> {
        let i = self.chunks.partition_point(|c| c.dsn < dsn);
        (i < self.chunks.len() && self.chunks[i].dsn == dsn).then_some(i)
    }

    /// Send a copy of already-sent data on subflow `s` (reinjection, opportunistic
    /// retransmission). The copy joins the subflow's queue of assigned data rather than going
    /// straight onto the wire: the subflow may be out of window or in the middle of a go-back-N
    /// sweep (the linger scheduler picks subflows without either check), and a new segment sent
    /// then would break the window and the subflow's sequence order.
    fn send_copy(&mut self, s: usize, dsn: u64, len: u32, ctx: &mut Ctx) {
        if let Some(i) = self.chunk_index(dsn) {
            self.chunks[i].sent_mask |= 1 << s;
        }
        let sf = &mut self.subflows[s];
        // Ahead of the new data queued there (which has higher DSNs): the copy is what the
        // receiver is waiting for.
        let at = sf.assigned.partition_point(|&(d, _)| d < dsn);
        sf.assigned.insert(at, (dsn, len));
        sf.assigned_bytes += len as u64;
        self.counters.reinjections += 1;
        self.drain_subflow(s, ctx);
    }

    /// Take the next segment of new data, recording it as a chunk held by `s`.
    fn take_new(&mut self, s: usize) -> (u64, u32) {
        let len = (self.write_end - self.snd_nxt_dsn).min(self.mss as u64) as u32;
        let dsn = self.snd_nxt_dsn;
        self.snd_nxt_dsn += len as u64;
        if self.protocol == Protocol::Tcp {
            // Plain TCP never re-sends data on another path: nothing reads the chunks.
            return (dsn, len);
        }
        self.chunks.push_back(Chunk {
            dsn,
            len,
            sent_mask: 1 << s,
            reinjected_from: 0,
        });
        (dsn, len)
    }

    /// Let subflow `s` send what it owes: go-back-N retransmissions, then data assigned to it.
    /// The test is inlined: on most calls the subflow owes nothing.
    #[inline(always)]
    fn drain_subflow(&mut self, s: usize, ctx: &mut Ctx) {
        if !self.subflows[s].owes_nothing() {
            self.send_owed(s, ctx);
        }
    }

    /// [`Connection::drain_subflow`], then whether subflow `s` is [`scheduler::available`]
    /// (the short test when it owed nothing, since draining changes nothing then).
    #[inline(always)]
    fn drain_then_available(&mut self, s: usize, ctx: &mut Ctx) -> bool {
        if self.subflows[s].owes_nothing() {
            scheduler::available_owing_nothing(&self.subflows[s])
        } else {
            self.send_owed(s, ctx);
            scheduler::available(&self.subflows[s])
        }
    }

    fn send_owed(&mut self, s: usize, ctx: &mut Ctx) {
        loop {
            let sf = &mut self.subflows[s];
            if !sf.has_cwnd_space() && !sf.first_retransmission_owed() {
                return;
            }
            if sf.has_retransmissions_pending() {
                match sf.retransmit_next(self.index, ctx.now, ctx.events) {
                    Some(p) => ctx.send(&p),
                    None => return,
                }
                continue;
            }
            let Some((dsn, len)) = sf.assigned.pop_front() else {
                return;
            };
            sf.assigned_bytes -= len as u64;
            // Out of tree, copies wait in the connection's reinjection queue, from which a
            // DATA_ACK removes them (`mptcp_clean_rtx_queue`), so one acknowledged meanwhile is
            // dropped. Upstream, the scheduler's burst is already TCP data of the subflow
            // (`mptcp_sendmsg_frag` appends it to its write queue with subflow sequence
            // numbers) and goes out whatever the DATA_ACK says: a slow path keeps draining
            // copies the fast one made redundant, and its queue keeps its linger time long.
            if dsn + len as u64 <= self.data_una && !self.upstream {
                continue;
            }
            if self.scheduler != SchedulerKind::Linger {
                self.restart_if_idle(s, 1, ctx.now);
            }
            self.note_send_after_idle(s, ctx.now);
            let sf = &mut self.subflows[s];
            let p = sf.send_new(self.index, dsn, len, ctx.now, ctx.events);
            ctx.send(&p);
        }
    }

    fn note_rwnd_blocked(&mut self, now: SimTime) {
        if self.rwnd_blocked_since.is_none() {
            self.rwnd_blocked_since = Some(now);
        }
    }

    fn clear_rwnd_blocked(&mut self, now: SimTime) {
        if let Some(since) = self.rwnd_blocked_since.take() {
            let from = since.max(self.warmup);
            if now > from {
                self.counters.rwnd_limited_ns += (now - from).0;
            }
        }
    }

    /// Opportunistic retransmission and penalisation for subflow `s` (spec §3.6), called when
    /// the receive window stops new data (`penal`) or when the writer waits on the send buffer
    /// with everything written sent. Returns true when it sent something.
    fn rbuf_optimization(&mut self, s: usize, penal: bool, ctx: &mut Ctx) -> bool {
        if !self.rbuf_optimizations_apply() {
            return false;
        }
        let Some(front) = self.chunks.front().copied() else {
            return false;
        };
        let head = HeadOfLine {
            dsn: front.dsn,
            len: front.len,
            sent_mask: front.sent_mask,
        };
        // `if (!penal && sk_stream_memory_free(meta_sk)) goto retrans;`: a writer waiting for
        // the buffer to drain to two thirds is not held up by the head of line until the
        // buffer is full.
        if penal || self.sndbuf_full() {
            if let Some(t) = maybe_penalize(&self.rbuf_opts, &mut self.subflows, s, &head, ctx.now)
            {
                self.counters.penalizations += 1;
                self.views[t] = self.subflows[t].view();
            }
        }
        if should_retransmit_opportunistically(&self.rbuf_opts, &self.subflows, s, &head) {
            self.send_copy(s, head.dsn, head.len, ctx);
            return true;
        }
        false
    }

    /// The subflow the scheduler picks for the next segment, those in `excluded` aside.
    /// `available` is the push loop's cache of [`scheduler::available_mask`]: None until the
    /// first pick and again after anything that may have changed other subflows than the one
    /// sent on. Inlined into the push loop, which calls it at least twice per ACK.
    #[inline(always)]
    fn pick(&mut self, excluded: u32, available: &mut Option<u32>) -> Option<usize> {
        if self.scheduler == SchedulerKind::Linger {
            return scheduler::linger(&mut self.subflows, excluded);
        }
        let mask = *available.get_or_insert_with(|| scheduler::available_mask(&self.subflows));
        scheduler::pick(
            self.scheduler,
            &self.subflows,
            self.rr_last,
            mask & !excluded,
        )
    }

    /// Schedule as much as the windows allow. Inlined into its callers so that a one-subflow
    /// connection goes straight to its own loop.
    #[inline(always)]
    pub fn push(&mut self, ctx: &mut Ctx) {
        if self.subflows.len() == 1
            && self.scheduler != SchedulerKind::Linger
            && self.reinject.is_empty()
        {
            self.push_one_subflow(ctx);
        } else {
            self.push_any(ctx);
        }
    }

    /// [`Connection::push`] for any number of subflows and every scheduler.
    #[inline(never)]
    fn push_any(&mut self, ctx: &mut Ctx) {
        self.app_write(ctx.now);
        // The availability the out-of-tree schedulers pick from, worked out with the drains: a
        // drain changes only its own subflow, and one that owes nothing needs the short test.
        let out_of_tree = self.scheduler != SchedulerKind::Linger;
        let mut mask = 0;
        for s in 0..self.subflows.len() {
            if out_of_tree {
                mask |= (self.drain_then_available(s, ctx) as u32) << s;
            } else {
                self.drain_subflow(s, ctx);
            }
        }
        debug_assert!(!out_of_tree || mask == scheduler::available_mask(&self.subflows));
        let mut available = out_of_tree.then_some(mask);
        // Upstream MPTCP queues consecutive bursts for one subflow and pushes them out only
        // when the scheduler moves to another subflow or stops (`__mptcp_push_pending`,
        // `mptcp_push_release`): the subflow given bursts since the last push.
        let mut unpushed: Option<usize> = None;
        loop {
            if let Some(&(dsn, len, mask)) = self.reinject.front() {
                self.push_out(&mut unpushed, ctx);
                if dsn + len as u64 <= self.data_una {
                    self.reinject.pop_front();
                    continue;
                }
                match self.pick(mask, &mut available) {
                    Some(s) => {
                        self.reinject.pop_front();
                        self.send_copy(s, dsn, len, ctx);
                        available = None;
                        continue;
                    }
                    None => {
                        if self.pick(0, &mut available).is_none() {
                            break; // every subflow is busy: wait
                        }
                        // Only subflows that already carry it have room: they retransmit it
                        // themselves.
                        self.reinject.pop_front();
                        continue;
                    }
                }
            }
            if self.snd_nxt_dsn < self.write_end {
                let Some(s) = self.pick(0, &mut available) else {
                    break;
                };
                if unpushed.is_some_and(|u| u != s) {
                    self.push_out(&mut unpushed, ctx);
                }
                if self.scheduler == SchedulerKind::Linger && !self.send_memory_free(s) {
                    break;
                }
                let len = (self.write_end - self.snd_nxt_dsn).min(self.mss as u64);
                if self.snd_nxt_dsn + len > self.peer_edge {
                    self.note_rwnd_blocked(ctx.now);
                    self.push_out(&mut unpushed, ctx);
                    let sent = self.rbuf_optimization(s, true, ctx);
                    available = None; // a penalty may have shrunk another subflow's window
                    if sent {
                        continue;
                    }
                    break;
                }
                self.clear_rwnd_blocked(ctx.now);
                self.rr_last = s;
                if self.scheduler == SchedulerKind::Linger {
                    // `mptcp_subflow_get_send` and `__subflow_push_pending` recompute the
                    // interval only here, when data goes out; a DATA_ACK restarts the timer
                    // with the interval as it was then.
                    self.timer_ival = self.upstream_timeout(ctx.now);
                    self.assign_burst(s, ctx.now);
                    if self.upstream {
                        unpushed = Some(s);
                    } else {
                        self.drain_subflow(s, ctx);
                    }
                    continue;
                }
                self.restart_if_idle(s, 1, ctx.now);
                let (dsn, len) = self.take_new(s);
                self.note_send_after_idle(s, ctx.now);
                let p = self.subflows[s].send_new(self.index, dsn, len, ctx.now, ctx.events);
                ctx.send(&p);
                if self.scheduler == SchedulerKind::Redundant {
                    self.queue_redundant_copies(s, dsn, len, ctx);
                    available = None;
                } else if let Some(mask) = available.as_mut() {
                    // New data on `s` changed only its window: it was available, so it had no
                    // assigned data, loss state or retransmission owed, and a segment sent past
                    // everything SACKed creates none.
                    if !self.subflows[s].has_cwnd_space() {
                        *mask &= !(1 << s);
                    }
                }
                continue;
            }
            self.push_out(&mut unpushed, ctx);
            // `__mptcp_next_segment`: everything written is sent and the writer sleeps on the
            // send buffer (SOCK_NOSPACE, free space under half the queued data), which lasts
            // until a third of the buffer is free, not only while it is full.
            if self.snd_nxt_dsn == self.write_end
                && self.writer_asleep
                && self.app_wants_to_write(ctx.now)
            {
                if let Some(s) = self.pick(0, &mut available) {
                    if self.rbuf_optimization(s, false, ctx) {
                        available = None;
                        continue;
                    }
                }
            }
            break;
        }
        self.push_out(&mut unpushed, ctx);
        self.arm_upstream_rtx(ctx, false);
    }

    /// Send what the linger scheduler queued on the subflow in `unpushed`, if any.
    #[inline(always)]
    fn push_out(&mut self, unpushed: &mut Option<usize>, ctx: &mut Ctx) {
        if let Some(u) = unpushed.take() {
            self.push_out_subflow(u, ctx);
        }
    }

    /// Out of line: inlined at each of `push_any`'s exits, the drain (with the pick compared
    /// to an empty `unpushed` first) cost case C of the throughput bench about 0.6 % more
    /// instructions.
    #[inline(never)]
    fn push_out_subflow(&mut self, s: usize, ctx: &mut Ctx) {
        self.drain_subflow(s, ctx);
    }

    /// [`Connection::push`] for one subflow (plain TCP) under the out-of-tree schedulers, with
    /// no reinjection queued, taking the same decisions with less work: the scheduler's only
    /// choice is whether the subflow is available, the receive-buffer optimisations need a
    /// second subflow, there are no redundant copies to make, and the data-level timer belongs
    /// to linger. After a segment of new data only the window can have closed (see `push_any`).
    #[inline(never)]
    fn push_one_subflow(&mut self, ctx: &mut Ctx) {
        let writing = self.app_write(ctx.now);
        self.send_one_subflow(writing, ctx);
        if let Some(limit) = writing {
            // What the window left of the tail skb is filled again (see `tcp_writer`).
            self.tcp_write(ctx.now, limit);
        }
    }

    /// The sending half of [`Connection::push_one_subflow`]. A TCP writer that is writing
    /// (`writing` holds its send buffer, which sending leaves as it is) fills again the tail
    /// skb the sender cuts.
    #[inline(always)]
    fn send_one_subflow(&mut self, writing: Option<u64>, ctx: &mut Ctx) {
        let free = self.drain_then_available(0, ctx);
        if self.snd_nxt_dsn >= self.write_end || !free {
            return;
        }
        // `has_cwnd_space` after each segment, without recomputing the data in the network: it
        // grows by the segment (it is counted from the highest byte SACKed, which lies below new
        // data) and the window stays.
        self.restart_if_idle(0, 1, ctx.now);
        let mut pipe = self.subflows[0].pipe();
        loop {
            let len = (self.write_end - self.snd_nxt_dsn).min(self.mss as u64);
            if self.snd_nxt_dsn + len > self.peer_edge {
                self.note_rwnd_blocked(ctx.now);
                return;
            }
            self.clear_rwnd_blocked(ctx.now);
            self.rr_last = 0;
            let (dsn, len) = self.take_new(0);
            self.note_send_after_idle(0, ctx.now);
            let p = self.subflows[0].send_new(self.index, dsn, len, ctx.now, ctx.events);
            ctx.send(&p);
            pipe += len as u64;
            debug_assert_eq!(pipe, self.subflows[0].pipe());
            if !self.subflows[0].window_admits(pipe) {
                return;
            }
            if let Some(limit) = writing.filter(|_| self.snd_nxt_dsn > self.tail_start) {
                // The kernel's writer pushes its tail skb out in TSO packets as it fills it
                // and fills the cut rest again, so while it writes, the sender never runs
                // out of data before the window is full (see `tcp_writer`).
                self.tcp_write(ctx.now, limit);
            }
            if self.snd_nxt_dsn >= self.write_end {
                return;
            }
        }
    }

    /// Upstream scheduler: give subflow `s` a burst of new data, up to the window edge, and
    /// fold the burst into its average pacing rate. Upstream folds one in at every pick with
    /// room in the window; this runs only for a pick with room for a segment (one with less
    /// would weigh too little to move the average). `__subflow_push_pending` hands over whole
    /// data fragments ([`DATA_FRAG_BYTES`]) and tests the burst and the subflow's send buffer
    /// only between them, so a burst can run past both by most of a fragment. Segments here
    /// are a full MSS and one can straddle a fragment's end; where the burst stops, that
    /// segment is cut at the fragment's end, as the kernel's burst ends with its last
    /// fragment, so the next burst starts on a fragment boundary (two fragments from there,
    /// not the rest of one and two more).
    ///
    /// Each fragment becomes a buffer of its own on the subflow's queue, and a subflow with
    /// nothing in flight restarts its window after idle once per buffer
    /// ([`Subflow::restart_after_idle`]): `__subflow_push_pending` queues the whole burst
    /// before it sends.
    #[inline(never)]
    fn assign_burst(&mut self, s: usize, now: SimTime) {
        let burst = LINGER_BURST_BYTES.min(self.peer_edge - self.snd_nxt_dsn);
        scheduler::note_linger_burst(&mut self.subflows[s], burst);
        let start = self.snd_nxt_dsn;
        let mut assigned = 0;
        let mut frag_end = fragment_end(self.snd_nxt_dsn);
        while self.snd_nxt_dsn < self.write_end {
            if self.snd_nxt_dsn >= frag_end {
                let past_end = self.snd_nxt_dsn - frag_end;
                if assigned - past_end >= burst || !self.send_memory_free(s) {
                    self.give_back_new(s, past_end);
                    break;
                }
                frag_end = fragment_end(self.snd_nxt_dsn);
            }
            let len = (self.write_end - self.snd_nxt_dsn).min(self.mss as u64);
            if self.snd_nxt_dsn + len > self.peer_edge {
                break;
            }
            let (dsn, len) = self.take_new(s);
            let sf = &mut self.subflows[s];
            sf.assigned.push_back((dsn, len));
            sf.assigned_bytes += len as u64;
            assigned += len as u64;
        }
        if self.snd_nxt_dsn > start {
            // Plain TCP sends its first buffer as soon as it is queued (`tcp_push_one`).
            let buffers = if self.upstream {
                (self.snd_nxt_dsn - 1) / DATA_FRAG_BYTES - start / DATA_FRAG_BYTES + 1
            } else {
                1
            };
            self.restart_if_idle(s, buffers as u32, now);
        }
    }

    /// Tell the congestion control that subflow `s` sends after an idle period (nothing in
    /// flight), before it sends. The test is inlined; the call stays out of the per-packet paths.
    #[inline(always)]
    fn note_send_after_idle(&mut self, s: usize, now: SimTime) {
        if let Some(idle) = self.subflows[s].idle_before_send(now) {
            self.cc_send_after_idle(s, idle, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn cc_send_after_idle(&mut self, s: usize, idle: SimTime, now: SimTime) {
        self.cc.on_send_after_idle(s, idle, now);
    }

    /// [`Subflow::restart_after_idle`] on subflow `s`, keeping its view current. The test of
    /// the option is inlined; the rest stays out of the per-packet paths.
    #[inline(always)]
    fn restart_if_idle(&mut self, s: usize, times: u32, now: SimTime) {
        if self.restart_after_idle {
            self.restart_subflow_if_idle(s, times, now);
        }
    }

    #[cold]
    #[inline(never)]
    fn restart_subflow_if_idle(&mut self, s: usize, times: u32, now: SimTime) {
        if self.subflows[s].restart_after_idle(now, times) {
            self.views[s] = self.subflows[s].view();
        }
    }

    /// Shorten the segment of new data last assigned to subflow `s` by its final `bytes`,
    /// which become unassigned again.
    fn give_back_new(&mut self, s: usize, bytes: u64) {
        if bytes == 0 {
            return;
        }
        let sf = &mut self.subflows[s];
        let last = sf.assigned.back_mut().expect("the segment just assigned");
        debug_assert_eq!(last.0 + last.1 as u64, self.snd_nxt_dsn);
        last.1 -= bytes as u32;
        sf.assigned_bytes -= bytes;
        self.snd_nxt_dsn -= bytes;
        if self.protocol == Protocol::Mptcp {
            let chunk = self.chunks.back_mut().expect("the chunk just taken");
            debug_assert_eq!(chunk.dsn + chunk.len as u64, self.snd_nxt_dsn + bytes);
            chunk.len -= bytes as u32;
        }
    }

    fn queue_redundant_copies(&mut self, primary: usize, dsn: u64, len: u32, ctx: &mut Ctx) {
        for k in 0..self.subflows.len() {
            if k == primary || !self.subflows[k].established {
                continue;
            }
            let sf = &mut self.subflows[k];
            sf.assigned.push_back((dsn, len));
            sf.assigned_bytes += len as u64;
            if let Some(i) = self.chunk_index(dsn) {
                self.chunks[i].sent_mask |= 1 << k;
            }
            self.counters.reinjections += 1;
            self.drain_subflow(k, ctx);
        }
    }

    /// Reads the connection's first cache line, which holds where its subflows are. The value
    /// means nothing.
    pub fn warm_connection(&self) -> usize {
        self.subflows.len()
    }

    /// Reads the state a packet for `subflow` will need, so that with thousands of connections
    /// the memory loads start while the events before it run. The value means nothing.
    pub fn warm(&self, subflow: u16) -> u64 {
        let sf = self.subflows.get(subflow as usize);
        self.data_una
            ^ self.rb.rcv_nxt
            ^ self.peer_edge
            ^ sf.map_or(0, |sf| sf.snd_una ^ sf.rcv_nxt ^ sf.cwnd.to_bits())
    }

    /// A packet reached this connection's endpoint.
    pub fn on_packet(&mut self, pkt: &Packet, ctx: &mut Ctx) {
        match pkt.kind {
            PacketKind::Data => self.on_data(pkt, ctx),
            PacketKind::Ack => self.on_ack(pkt, ctx),
            PacketKind::HandshakeAck => {}
        }
    }

    /// Bytes the subflows hold out of order: a running total, since only a subflow's
    /// `on_data` changes its share and summing them would read every sibling per packet.
    fn subflow_ooo(&self) -> u64 {
        debug_assert_eq!(
            self.subflow_ooo_bytes,
            self.subflows.iter().map(|s| s.ooo_bytes).sum::<u64>()
        );
        self.subflow_ooo_bytes
    }

    fn on_data(&mut self, pkt: &Packet, ctx: &mut Ctx) {
        let s = pkt.subflow as usize;
        if self.watch_joins {
            // Its first segment gives the subflow a measured scaling ratio.
            self.unmeasured_joins[s] = SimTime::MAX;
        }
        self.delivered_scratch.clear();
        let auto_tuned = self.rb.auto_tuned();
        let ooo_before = self.subflows[s].ooo_bytes;
        let ack_now =
            self.subflows[s].on_data(pkt, ctx.now, auto_tuned, &mut self.delivered_scratch);
        self.subflow_ooo_bytes = self.subflow_ooo_bytes - ooo_before + self.subflows[s].ooo_bytes;
        let sub_ooo = self.subflow_ooo();
        let mut advanced = false;
        for &(dsn, len) in &self.delivered_scratch {
            advanced |= self.rb.receive(dsn, len, sub_ooo).is_some();
        }
        self.rb.peak_occupancy = self.rb.peak_occupancy.max(self.rb.occupancy(sub_ooo));
        if advanced {
            self.app.on_read(self.rb.rcv_nxt, ctx.now);
            if auto_tuned {
                let rtt = self
                    .subflows
                    .iter()
                    .map(|s| s.rcv_rtt.seconds())
                    .fold(0.0, f64::max);
                self.rb.autotune(ctx.now, rtt);
            }
        }
        if ack_now {
            // Nothing since `sub_ooo` was summed changed the subflows.
            self.send_ack_with(s, sub_ooo, ctx);
        } else {
            self.subflows[s].arm_delayed_ack(self.index, ctx.now, ctx.events);
        }
    }

    fn send_ack(&mut self, s: usize, ctx: &mut Ctx) {
        self.send_ack_with(s, self.subflow_ooo(), ctx);
    }

    /// Send the ACK of subflow `s`, the subflows holding `sub_ooo` bytes out of order. Inlined
    /// into the receive path, which calls it for nearly every data packet.
    #[inline(always)]
    fn send_ack_with(&mut self, s: usize, sub_ooo: u64, ctx: &mut Ctx) {
        if self.watch_joins {
            self.note_unmeasured_joins(ctx.now);
        }
        let edge = self.rb.window_edge(sub_ooo);
        let p = self.subflows[s].send_ack(self.index, self.rb.rcv_nxt, edge, ctx.now);
        ctx.send(&p);
    }

    fn on_ack(&mut self, pkt: &Packet, ctx: &mut Ctx) {
        let s = pkt.subflow as usize;
        let progress = pkt.dsn > self.data_una;
        if progress {
            self.data_una = pkt.dsn;
            while let Some(c) = self.chunks.front() {
                if c.dsn + c.len as u64 <= self.data_una {
                    self.chunks.pop_front();
                } else {
                    break;
                }
            }
        }
        self.peer_edge = self.peer_edge.max(pkt.window_edge);
        debug_assert!(self.views_are_current());
        let outcome = self.subflows[s].on_ack(
            self.index,
            pkt,
            ctx.now,
            &mut self.cc,
            &mut self.views,
            ctx.events,
        );
        // Only the linger scheduler reads it (plain TCP under linger too).
        if self.scheduler == SchedulerKind::Linger {
            scheduler::update_pacing_rate(&mut self.subflows[s]);
        }
        if outcome.retransmit_head {
            if let Some(p) = self.subflows[s].retransmit_head(self.index, ctx.now, ctx.events) {
                ctx.send(&p);
            }
        }
        if progress {
            // `__mptcp_clean_una`: DATA_ACK progress restarts the MPTCP-level timer.
            self.arm_upstream_rtx(ctx, true);
        }
        self.push(ctx);
    }

    /// `mptcp_set_timeout`: the longest remaining retransmission timeout of the subflows that
    /// are not suspected stale, or TCP_RTO_MIN when none has a timer pending.
    fn upstream_timeout(&self, now: SimTime) -> SimTime {
        self.subflows
            .iter()
            .filter(|sf| sf.stale_count == 0)
            .filter_map(|sf| sf.rto_timer.deadline())
            .filter(|&d| d > now)
            .map(|d| d - now)
            .max()
            .unwrap_or(UPSTREAM_MIN_TIMEOUT)
    }

    /// Start the MPTCP-level timer for `timer_ival` while data is unacknowledged at the data
    /// level (`reset`: restart it even if it is running, `mptcp_reset_rtx_timer`), stop it when
    /// everything is acknowledged.
    fn arm_upstream_rtx(&mut self, ctx: &mut Ctx, reset: bool) {
        if !self.upstream {
            return;
        }
        if self.data_una >= self.snd_nxt_dsn {
            self.rtx_timer.cancel();
        } else if reset || self.rtx_timer.deadline().is_none() {
            let deadline = ctx.now + self.timer_ival;
            let event = Event::MptcpRetransmit { conn: self.index };
            self.rtx_timer.set(deadline, ctx.events, event);
        }
    }

    /// `__mptcp_retrans`: re-send the head of the data not yet DATA_ACKed on an idle subflow
    /// (`mptcp_subflow_get_retrans`: established, nothing unacknowledged or queued at TCP
    /// level). Data handed to a subflow counts as sent at the MPTCP level, so this also
    /// rescues a burst stuck behind a slow subflow's window.
    fn upstream_retransmit(&mut self, ctx: &mut Ctx) {
        let mut idle = None;
        for k in 0..self.subflows.len() {
            let sf = &self.subflows[k];
            if !sf.established || sf.is_stale() {
                continue;
            }
            if !sf.is_idle() {
                self.check_stale(k);
            } else if idle.is_none() {
                idle = Some(k);
            }
        }
        let Some(s) = idle else {
            return;
        };
        // `__mptcp_retrans` re-sends the head data fragment, from the DATA_ACK to its end.
        let frag_end = fragment_end(self.data_una);
        let mut k = 0;
        while k < self.chunks.len() && self.chunks[k].dsn < frag_end {
            let c = self.chunks[k];
            self.send_copy(s, c.dsn, c.len, ctx);
            k += 1;
        }
    }

    /// A timer event for subflow `s` fired.
    pub fn on_timer(&mut self, event: Event, ctx: &mut Ctx) {
        match event {
            Event::Rto { subflow, .. } => {
                let s = subflow as usize;
                if !self.subflows[s].rto_timer.fire(ctx.now, ctx.events, event) {
                    return;
                }
                debug_assert!(self.views_are_current());
                if self.subflows[s].on_rto(
                    self.index,
                    ctx.now,
                    &mut self.cc,
                    &mut self.views,
                    ctx.events,
                ) {
                    self.queue_reinjections(s);
                    self.push(ctx);
                }
            }
            Event::RackReorder { subflow, .. } => {
                let s = subflow as usize;
                if !self.subflows[s].reo_timer.fire(ctx.now, ctx.events, event) {
                    return;
                }
                debug_assert!(self.views_are_current());
                if self.subflows[s].on_reorder_timeout(
                    self.index,
                    ctx.now,
                    &mut self.cc,
                    &mut self.views,
                    ctx.events,
                ) {
                    self.push(ctx);
                }
            }
            Event::DelayedAck { subflow, .. } => {
                let s = subflow as usize;
                if self.subflows[s]
                    .delack_timer
                    .fire(ctx.now, ctx.events, event)
                {
                    self.send_ack(s, ctx);
                }
            }
            Event::MptcpRetransmit { .. } if self.rtx_timer.fire(ctx.now, ctx.events, event) => {
                self.upstream_retransmit(ctx);
                self.arm_upstream_rtx(ctx, true);
            }
            Event::SubflowStart { subflow, .. } => {
                let sf = &mut self.subflows[subflow as usize];
                sf.mark_established(ctx.now);
                // The handshake gives the first RTT sample, as in Linux.
                sf.rtt.sample(sf.base_rtt.as_secs_f64(), ctx.now);
                scheduler::update_pacing_rate(sf);
                self.views[subflow as usize] = sf.view();
                if subflow == 0 {
                    // The SYN/ACK carried the peer's initial window.
                    self.peer_edge = self.rb.window_edge(0);
                    // The handshake's last ACK leaves just ahead of the first data (measured on
                    // this kernel, TCP and MPTCP alike: an initial window of 10 into a 10-packet
                    // queue loses one segment, into an 11-packet queue none, whenever the link
                    // is still sending the ACK when the writer's data comes: at 1.2-1.3 Mbit/s
                    // in 34 of 37 runs, at 0.3 and 0.5 Mbit/s in all 32). A join's ACK leaves a
                    // round trip before its data (`fully_established`), so only the first
                    // subflow's meets the window.
                    let option_bytes = if self.protocol == Protocol::Mptcp {
                        MP_CAPABLE_ACK_BYTES
                    } else {
                        0
                    };
                    let ack = self.subflows[0].handshake_ack(self.index, option_bytes, ctx.now);
                    ctx.send(&ack);
                }
                self.push(ctx);
            }
            _ => {}
        }
    }

    /// The peer learns at `at` that subflow `subflow` joined: from then until the subflow's
    /// first data arrives, an upstream MPTCP receiver of Linux 6.16 on advertises the
    /// connection's window at the default scaling ratio ([`ReceiveBuffer::window_edge`]).
    pub fn peer_learns_join(&mut self, subflow: usize, at: SimTime) {
        if let Some(t) = self
            .unmeasured_joins
            .get_mut(subflow)
            .filter(|_| subflow > 0)
        {
            *t = at;
            self.watch_joins = true;
        }
    }

    #[cold]
    #[inline(never)]
    fn note_unmeasured_joins(&mut self, now: SimTime) {
        self.rb.unmeasured_subflow = self.unmeasured_joins.iter().any(|&t| t <= now);
        self.watch_joins = self.unmeasured_joins.iter().any(|&t| t != SimTime::MAX);
    }

    /// `mptcp_pm_subflow_chk_stale`: count retransmission periods in which busy subflow `k` got
    /// no ACK; past `stale_loss_cnt` of them, if another subflow is usable, mark it stale and
    /// re-push everything not yet DATA_ACKed through the scheduler
    /// (`__mptcp_retransmit_pending_data`), which now skips it.
    fn check_stale(&mut self, k: usize) {
        let sf = &mut self.subflows[k];
        if sf.stale_count == 0 {
            sf.stale_rcv_tstamp = sf.rcv_tstamp;
            sf.stale_count = 1;
            return;
        }
        if sf.stale_rcv_tstamp != sf.rcv_tstamp {
            sf.stale_count = 0;
            sf.stale = false;
            return;
        }
        sf.stale_count = sf.stale_count.saturating_add(1);
        if sf.stale || sf.stale_count <= STALE_LOSS_CNT {
            return;
        }
        let alternative = self.subflows.iter().enumerate().any(|(j, o)| {
            j != k && o.established && !o.is_stale() && o.stale_count < ACTIVE_MAX_LOSS_CNT
        });
        if alternative {
            self.subflows[k].stale = true;
            for c in &self.chunks {
                self.reinject.push_back((c.dsn, c.len, 1 << k));
            }
        }
    }

    /// After a subflow timeout, its outstanding data is also queued for the other subflows
    /// (out-of-tree reinjection, spec §3.6): `mptcp_reinject_data` walks the subflow's queue,
    /// and `mptcp_find_and_set_pathmask` steers each segment away from every subflow that has
    /// carried it, not only the one that timed out.
    fn queue_reinjections(&mut self, s: usize) {
        if self.upstream
            || self.protocol != Protocol::Mptcp
            || self.subflows.iter().filter(|x| x.established).count() < 2
        {
            return;
        }
        for k in 0..self.subflows[s].segs.len() {
            let seg = self.subflows[s].segs[k];
            if seg.dsn + seg.len as u64 <= self.data_una {
                continue;
            }
            if let Some(i) = self.chunk_index(seg.dsn) {
                let chunk = &mut self.chunks[i];
                if chunk.reinjected_from & (1 << s) == 0 {
                    chunk.reinjected_from |= 1 << s;
                    // `__mptcp_reinject_data` drops a segment the reinject queue already holds.
                    if !self.reinject.iter().any(|&(dsn, _, _)| dsn == seg.dsn) {
                        self.reinject.push_back((seg.dsn, seg.len, chunk.sent_mask));
                    }
                }
            }
        }
    }

    /// Called at the end of the warm-up.
    pub fn snapshot_warmup(&mut self) {
        self.counters.delivered_at_warmup = self.rb.rcv_nxt;
        for sf in &mut self.subflows {
            sf.counters.bytes_delivered_at_warmup = sf.counters.bytes_delivered;
        }
    }

    /// Called at the end of the run.
    pub fn close(&mut self, now: SimTime) {
        self.clear_rwnd_blocked(now);
    }

    /// The window the receiver would advertise now, bytes (for traces).
    pub fn advertised_window(&self) -> u64 {
        self.rb.free_window(self.subflow_ooo())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn connection(protocol: &str, paths: usize) -> Connection {
        connection_with(protocol, paths, "minrtt")
    }

    fn connection_with(protocol: &str, paths: usize, scheduler: &str) -> Connection {
        let routes: Vec<_> = (0..paths)
            .map(|i| (2 * i as u32, 2 * i as u32 + 1, SimTime::from_millis(50)))
            .collect();
        connection_on(protocol, &routes, scheduler)
    }

    /// A connection over `routes`, every subflow established.
    fn connection_on(
        protocol: &str,
        routes: &[(u32, u32, SimTime)],
        scheduler: &str,
    ) -> Connection {
        connection_from(
            serde_json::json!({"protocol": protocol, "scheduler": scheduler}),
            routes,
        )
    }

    /// A connection over `routes` from the flow fields in `fields` (id, cc and paths given).
    pub(super) fn connection_from(
        fields: serde_json::Value,
        routes: &[(u32, u32, SimTime)],
    ) -> Connection {
        let mut flow = serde_json::json!({
            "id": "f", "cc": "cubic",
            "paths": (0..routes.len()).map(|i| vec![format!("l{i}")]).collect::<Vec<_>>()
        });
        for (k, v) in fields.as_object().expect("an object") {
            flow[k] = v.clone();
        }
        let spec: FlowSpec = serde_json::from_value(flow).expect("valid flow");
        let mut c = Connection::new(
            "f".into(),
            0,
            &spec,
            routes,
            SimTime::ZERO,
            SimTime::MAX,
            SimTime::ZERO,
        );
        for sf in &mut c.subflows {
            sf.established = true;
        }
        c
    }

    /// A network of `paths` disjoint 10 Mbit/s links with 25 ms one-way delay, and the routes
    /// of one path over each.
    fn network(paths: usize) -> (Network, Vec<(u32, u32, SimTime)>) {
        let links: Vec<crate::scenario::LinkSpec> = (0..paths)
            .map(|i| {
                serde_json::from_value(serde_json::json!({
                    "id": format!("l{i}"), "capacity_mbps": 10.0, "delay_ms": 25.0
                }))
                .expect("valid link")
            })
            .collect();
        let mut net = Network::build(&links, 1);
        let routes = (0..paths)
            .map(|i| net.add_path(&[format!("l{i}")]))
            .collect();
        (net, routes)
    }

    /// The auto-tuned send buffer against Linux 6.18 as measured with `ss -tm` in the emulator:
    /// two subflows whose windows peaked at 60 and 19 segments had tb 276 480 and 87 552, and
    /// the MPTCP socket tb 368 128; a single TCP connection starts at 10 segments' worth.
    #[test]
    fn send_buffer_grows_like_linux() {
        let mss = MSS_BYTES as f64;
        let mut m = connection("mptcp", 2);
        m.subflows[0].counters.max_cwnd = 60.0 * mss;
        m.subflows[1].counters.max_cwnd = 19.0 * mss;
        m.subflows[1].cwnd = 7.0 * mss;
        assert_eq!(m.sndbuf_limit(), 368_128);
        let t = connection("tcp", 1);
        assert_eq!(t.sndbuf_limit(), 2 * 10 * 2304);
    }

    /// Upstream `mptcp_reset_rtx_timer` restarts the data-level timer with `timer_ival`, which
    /// only the scheduler (`mptcp_subflow_get_send`) and `__subflow_push_pending` set, from the
    /// subflows' pending timeouts at that moment. A DATA_ACK later restarts it with that same
    /// interval even though the subflows' timers have moved since.
    #[test]
    fn data_level_timer_restarts_with_the_interval_of_the_last_push() {
        let (mut net, routes) = network(2);
        let mut c = connection_on("mptcp", &routes, "linger");
        c.peer_edge = c.rb.window_edge(0); // the SYN/ACK's window
        let mut events = EventQueue::new();
        let rto = |subflow| Event::Rto { conn: 0, subflow };
        c.subflows[0]
            .rto_timer
            .set(SimTime::from_millis(300), &mut events, rto(0));
        let mut ctx = Ctx {
            now: SimTime::ZERO,
            events: &mut events,
            net: &mut net,
        };
        c.push(&mut ctx);
        let sent: u64 = net.links.iter().map(|l| l.counters.offered).sum();
        assert!(sent > 0, "the push sent data");
        assert_eq!(c.rtx_timer.deadline(), Some(SimTime::from_millis(300)));

        let now = SimTime::from_millis(100);
        for (i, sf) in c.subflows.iter_mut().enumerate() {
            sf.rto_timer
                .set(SimTime::from_millis(1100), &mut events, rto(i as u16));
        }
        let mut ctx = Ctx {
            now,
            events: &mut events,
            net: &mut net,
        };
        c.arm_upstream_rtx(&mut ctx, true);
        assert_eq!(c.rtx_timer.deadline(), Some(SimTime::from_millis(400)));
    }

    /// An upstream receiver of Linux 6.16 on takes the connection's scaling ratio as the
    /// smallest of its subflows' (`mptcp_rcv_space_adjust`): from the moment it learns of a
    /// join until that subflow's first data, the default 128/256 against 158/256 measured.
    #[test]
    fn a_join_lowers_the_advertised_window_until_its_first_data() {
        for (drs, lowered) in [("linux", 128_000), ("classic", 158_000)] {
            let (mut net, routes) = network(2);
            let mut c = connection_from(
                serde_json::json!({
                    "protocol": "mptcp", "scheduler": "linger", "rcvbuf_bytes": 158_000,
                    "tcp": {"drs_variant": drs}
                }),
                &routes,
            );
            c.peer_learns_join(1, SimTime::from_millis(10));
            let mut events = EventQueue::new();
            let mss = MSS_BYTES as u64;
            let mut deliver = |c: &mut Connection, s: usize, dsn: u64, ms: u64| {
                let now = SimTime::from_millis(ms);
                let p = c.subflows[s].send_new(0, dsn, MSS_BYTES, now, &mut events);
                let mut ctx = Ctx {
                    now,
                    events: &mut events,
                    net: &mut net,
                };
                c.on_packet(&p, &mut ctx);
                c.advertised_window()
            };
            assert_eq!(deliver(&mut c, 0, 0, 5), 158_000, "{drs}: before the join");
            assert_eq!(
                deliver(&mut c, 0, mss, 15),
                lowered,
                "{drs}: joined, no data"
            );
            assert_eq!(
                deliver(&mut c, 1, 2 * mss, 20),
                158_000,
                "{drs}: its first data"
            );
        }
    }

    /// Upstream, a burst the scheduler hands a subflow is TCP data of that subflow
    /// (`mptcp_sendmsg_frag` appends it to the subflow's write queue): it stays in the
    /// subflow's queue, and goes out, even after a DATA_ACK covered it (here, as when the
    /// MPTCP-level retransmission re-sent it on the other subflow). Out of tree, a copy waiting
    /// for a subflow's window is dropped once a DATA_ACK covers it (`mptcp_clean_rtx_queue`).
    #[test]
    fn upstream_sends_what_it_handed_a_subflow_even_once_acknowledged() {
        for (scheduler, goes_out) in [("linger", true), ("minrtt", false)] {
            let (mut net, routes) = network(2);
            let mut c = connection_on("mptcp", &routes, scheduler);
            let mss = MSS_BYTES;
            let sf = &mut c.subflows[1];
            for k in 0..4u64 {
                sf.assigned.push_back((k * mss as u64, mss));
            }
            sf.assigned_bytes = 4 * mss as u64;
            c.data_una = 4 * mss as u64;
            let queued_before = c.subflows[1].queued_bytes();
            let mut events = EventQueue::new();
            let mut ctx = Ctx {
                now: SimTime::ZERO,
                events: &mut events,
                net: &mut net,
            };
            c.drain_subflow(1, &mut ctx);
            let sf = &c.subflows[1];
            assert!(sf.assigned.is_empty(), "{scheduler}: the queue is drained");
            let sent = sf.counters.packets_sent;
            if goes_out {
                assert_eq!(sent, 4, "{scheduler}: the acknowledged data still goes out");
                assert_eq!(
                    sf.queued_bytes(),
                    queued_before,
                    "{scheduler}: now in flight"
                );
            } else {
                assert_eq!(sent, 0, "{scheduler}: acknowledged copies are dropped");
                assert_eq!(sf.queued_bytes(), 0, "{scheduler}");
            }
        }
    }

    /// Upstream `mptcp_subflow_get_send` takes the subflow whose queue drains soonest and, if
    /// its send buffer is full, sends nothing: a fast subflow with a long queue is still the
    /// choice over a slow one with a short queue, and a full one stops the push.
    #[test]
    fn linger_keeps_the_fastest_draining_subflow_even_with_a_long_queue() {
        let mss = MSS_BYTES as f64;
        let mut c = connection_with("mptcp", 2, "linger");
        let (fast, slow) = c.subflows.split_at_mut(1);
        fast[0].cwnd = 100.0 * mss;
        fast[0].rtt.srtt = 0.010;
        fast[0].assigned_bytes = 100_000;
        slow[0].cwnd = 10.0 * mss;
        slow[0].rtt.srtt = 0.500;
        slow[0].assigned_bytes = 10_000;
        // Drain times: 100 kB at 1.2 * 144.8 kB / 10 ms is 5.8 ms; 10 kB at 1.2 * 14.5 kB /
        // 500 ms is 288 ms.
        assert_eq!(scheduler::linger(&mut c.subflows, 0), Some(0));
        assert!(
            c.send_memory_free(0),
            "100 kB is below 2 * 2304 B * 100 segments"
        );
        c.subflows[0].assigned_bytes = 500_000;
        assert!(!c.send_memory_free(0), "500 kB is above 460.8 kB");
        assert_eq!(scheduler::linger(&mut c.subflows, 0), Some(0));
    }

    /// `sk_stream_write_space`: a writer that filled the send buffer is woken when the free
    /// space is at least half of what is queued, i.e. once the queue is down to two thirds of
    /// the buffer (TCP and MPTCP sockets alike; the TCP writer's own tests are in
    /// `tcp_writer`).
    #[test]
    fn a_writer_that_filled_the_send_buffer_waits_for_a_third_of_it() {
        let mut c = connection("mptcp", 1);
        let limit = c.sndbuf_limit(); // 50 176: ten segments' worth and tcp_wmem[0]
        c.app_write(SimTime::ZERO);
        assert_eq!(c.write_end - c.data_una, limit);
        // Acknowledging one byte short of a third frees space the writer does not see.
        c.data_una = limit / 3 - 1;
        c.app_write(SimTime::ZERO);
        assert_eq!(c.write_end, limit);
        c.data_una = limit / 3;
        c.app_write(SimTime::ZERO);
        assert_eq!(c.write_end - c.data_una, limit);
    }

    /// The out-of-tree `__mptcp_next_segment` calls the receive-buffer optimisation with
    /// `penal = 0` whenever everything written is sent and the writer sleeps on the send buffer
    /// (SOCK_NOSPACE and `sk_stream_wspace < sk_stream_min_wspace`), which it does until a
    /// third of the buffer is free: an idle fast subflow re-sends the head of line held by a
    /// slow one then too, not only while the buffer is full. It penalises the slow one only
    /// while the buffer is full (`if (!penal && sk_stream_memory_free(meta_sk)) goto retrans`).
    #[test]
    fn a_writer_waiting_on_the_send_buffer_lets_an_idle_subflow_resend_the_head() {
        let mss = MSS_BYTES as u64;
        for (acked_segments, penalised) in [(0, true), (1, false)] {
            let (mut net, routes) = network(2);
            let mut c = connection_from(
                serde_json::json!({"protocol": "mptcp", "sndbuf_bytes": 8 * mss,
                                   "rcvbuf_bytes": 4_194_304, "penalization": "nsdi12"}),
                &routes,
            );
            c.peer_edge = c.rb.window_edge(0);
            c.subflows[0].rtt.srtt = 0.010;
            c.subflows[1].rtt.srtt = 0.200;
            // The fast subflow is not yet there: the slow one takes the whole buffer.
            c.subflows[0].established = false;
            for i in 0..2 {
                c.views[i] = c.subflows[i].view();
            }
            let mut events = EventQueue::new();
            let mut ctx = Ctx {
                now: SimTime::ZERO,
                events: &mut events,
                net: &mut net,
            };
            c.push(&mut ctx);
            assert_eq!((c.snd_nxt_dsn, c.write_end), (8 * mss, 8 * mss));
            assert!(c.writer_asleep);
            assert_eq!(c.chunks.front().map(|h| h.sent_mask), Some(0b10));
            // A DATA_ACK of the first segments, less than a third of the buffer: the writer
            // sleeps on.
            c.data_una = acked_segments * mss;
            c.chunks.drain(..acked_segments as usize);
            c.subflows[0].established = true;
            c.views[0] = c.subflows[0].view();
            c.push(&mut ctx);
            assert_eq!(c.write_end, 8 * mss, "the writer still sleeps");
            assert_eq!(c.counters.reinjections, 1, "acked {acked_segments}");
            assert_eq!(c.chunks.front().map(|h| h.sent_mask), Some(0b11));
            assert_eq!(c.counters.penalizations, u64::from(penalised));
        }
    }

    /// Out-of-tree reinjection after a subflow timeout (`mptcp_reinject_data`): each subflow's
    /// copy of a segment is reinjected once (its skb is marked MPTCP_REINJECT), so a copy that
    /// a timeout moved to another subflow is moved again when that one times out; and the
    /// reinjected segment takes the path mask of the connection-level one
    /// (`mptcp_find_and_set_pathmask`), which steers it away from every subflow that carried
    /// it, not only from the one that timed out.
    #[test]
    fn a_timeout_reinjects_away_from_every_subflow_that_carried_the_data() {
        let mss = MSS_BYTES as u64;
        // Four segments on subflow 0 alone; subflows 1 and 2 join with srtt 20 and 30 ms.
        let setup = || {
            let (net, routes) = network(3);
            let mut c = connection_from(
                serde_json::json!({"protocol": "mptcp", "sndbuf_bytes": 4 * mss,
                                   "rcvbuf_bytes": 4_194_304}),
                &routes,
            );
            c.peer_edge = c.rb.window_edge(0);
            for (i, srtt) in [0.010, 0.020, 0.030].into_iter().enumerate() {
                c.subflows[i].rtt.srtt = srtt;
                c.subflows[i].established = i == 0;
                c.views[i] = c.subflows[i].view();
            }
            (net, c)
        };
        let masks = |c: &Connection| c.chunks.iter().map(|h| h.sent_mask).collect::<Vec<_>>();
        let join = |c: &mut Connection| {
            for i in 1..3 {
                c.subflows[i].established = true;
                c.views[i] = c.subflows[i].view();
            }
        };

        // The second time, the head also went out on subflow 1 (an opportunistic
        // retransmission): subflow 0's timeout sends it to subflow 2, and the rest to 1.
        for head_also_on_1 in [false, true] {
            let (mut net, mut c) = setup();
            let mut events = EventQueue::new();
            let mut ctx = Ctx {
                now: SimTime::ZERO,
                events: &mut events,
                net: &mut net,
            };
            c.push(&mut ctx);
            assert_eq!(masks(&c), [0b001; 4]);
            join(&mut c);
            if head_also_on_1 {
                c.chunks[0].sent_mask |= 0b010;
                c.queue_reinjections(0);
                c.push(&mut ctx);
                assert_eq!(masks(&c), [0b111, 0b011, 0b011, 0b011]);
                continue;
            }
            c.queue_reinjections(0);
            c.push(&mut ctx);
            assert_eq!(masks(&c), [0b011; 4], "to the fastest other subflow");
            c.queue_reinjections(1);
            c.push(&mut ctx);
            let moved_on = "subflow 1's copies move on to subflow 2";
            assert_eq!(masks(&c), [0b111; 4], "{moved_on}");
            assert_eq!(c.counters.reinjections, 8);
        }
    }

    /// Upstream MPTCP moves data in page fragments and tests its buffers only between them: the
    /// writer copies whole fragments while the connection's buffer (tcp_wmem[0] + the first
    /// subflow's 46 080 bytes = 50 176) is not full, and the scheduler hands the subflow whole
    /// fragments while its own 46 080-byte buffer is not. A bulk writer's first push therefore
    /// leaves two fragments, 65 456 bytes, on the first subflow. The kernel's (6.18, `ss -tmi`
    /// at the start of point 7 of `crossval-coupled.toml`) held 66 808: 10 segments sent and
    /// 52 328 bytes unsent, with tb 46 080.
    #[test]
    fn upstream_mptcp_fills_its_buffers_a_data_fragment_at_a_time() {
        let (mut net, routes) = network(1);
        let mut c = connection_on("mptcp", &routes, "linger");
        c.peer_edge = 1 << 20;
        let mut events = EventQueue::new();
        let mut ctx = Ctx {
            now: SimTime::ZERO,
            events: &mut events,
            net: &mut net,
        };
        assert_eq!(c.sndbuf_limit(), 50_176);
        c.push(&mut ctx);
        assert_eq!(c.write_end, 2 * DATA_FRAG_BYTES);
        let queued = c.subflows[0].queued_bytes();
        assert_eq!(queued, 2 * DATA_FRAG_BYTES);
        assert!((queued as f64 / 66_808.0 - 1.0).abs() < 0.03);
        assert!(!c.send_memory_free(0));
    }

    /// `__subflow_push_pending` hands a subflow whole data fragments until its burst
    /// (`MPTCP_SEND_BURST_SIZE`, 65 428 bytes) is spent, so from a fragment's start a burst is
    /// two fragments, 65 456 bytes, and the next burst starts on the following boundary. The
    /// simulator's segments are a full MSS and straddle fragment ends; cutting the last one of
    /// a burst keeps the bursts on the kernel's boundaries (uncut, each burst after the first
    /// would start just past a boundary and take the rest of that fragment and two more).
    #[test]
    fn linger_bursts_are_two_whole_data_fragments() {
        let (mut net, routes) = network(2);
        let mut c = connection_on("mptcp", &routes, "linger");
        c.peer_edge = 1 << 20;
        c.sndbuf_fixed = Some(400_000);
        let mut events = EventQueue::new();
        let mut ctx = Ctx {
            now: SimTime::ZERO,
            events: &mut events,
            net: &mut net,
        };
        c.push(&mut ctx);
        assert_eq!(
            c.snd_nxt_dsn, c.write_end,
            "everything written is handed out"
        );
        // Each maximal run of data given to one subflow, as (start, end, subflow mask).
        let mut runs: Vec<(u64, u64, u32)> = Vec::new();
        for chunk in &c.chunks {
            match runs.last_mut() {
                Some(run) if run.2 == chunk.sent_mask => run.1 = chunk.dsn + chunk.len as u64,
                _ => runs.push((chunk.dsn, chunk.dsn + chunk.len as u64, chunk.sent_mask)),
            }
        }
        assert!(runs.len() >= 4, "both subflows get bursts: {runs:?}");
        // A subflow may get several bursts in a row (its data is queued, not sent, until the
        // scheduler moves on), each of two fragments.
        for &(start, end, _) in &runs[..runs.len() - 1] {
            assert_eq!(start % DATA_FRAG_BYTES, 0, "{runs:?}");
            assert_eq!((end - start) % (2 * DATA_FRAG_BYTES), 0, "{runs:?}");
        }
    }

    /// A linger connection whose one subflow, at a window of 47 segments, has sent nothing for
    /// 1.5 RTO when the application writes `bytes`, with restart after idle on: the window
    /// and the segments sent at once.
    fn restart_on_write(bytes: u64) -> (f64, u64) {
        let (mut net, routes) = network(1);
        let mut c = connection_from(
            serde_json::json!({
                "protocol": "mptcp", "scheduler": "linger",
                "app": {"kind": "size", "bytes": bytes},
                "tcp": {"slow_start_after_idle": true}
            }),
            &routes,
        );
        c.peer_edge = 1 << 22;
        let sf = &mut c.subflows[0];
        sf.rtt.sample(0.05, SimTime::ZERO);
        sf.cwnd = 47.0 * MSS_BYTES as f64;
        sf.counters.max_cwnd = sf.cwnd; // the send buffer grew with it and stays
        sf.ssthresh = 31.0 * MSS_BYTES as f64;
        c.views[0] = c.subflows[0].view();
        let idle = SimTime(c.subflows[0].rtt.rto().0 * 3 / 2);
        let mut events = EventQueue::new();
        let mut ctx = Ctx {
            now: idle,
            events: &mut events,
            net: &mut net,
        };
        c.push(&mut ctx);
        let sf = &c.subflows[0];
        (sf.cwnd / MSS_BYTES as f64, sf.flight() / MSS_BYTES as u64)
    }

    /// Upstream MPTCP queues each 32 KiB data fragment as a buffer of its own
    /// (`mptcp_sendmsg_frag`), and each queued while nothing is in flight restarts an idle
    /// window (`tcp_skb_entail`); a burst is two fragments, so 47 segments come back as 11
    /// (RFC 5681 §4.1 twice over: see the subflow's test), as the kernel's subflows did at
    /// point 25 of `crossval.toml`. One fragment restarts once, to 23.
    #[test]
    fn an_idle_linger_subflow_restarts_once_per_data_fragment_it_is_given() {
        assert_eq!(restart_on_write(2 * DATA_FRAG_BYTES), (11.0, 11));
        assert_eq!(restart_on_write(DATA_FRAG_BYTES).0, 23.0);
    }

    /// `__mptcp_push_pending` pushes a subflow's queued data out only when the scheduler moves
    /// to another subflow or stops, so consecutive bursts to one subflow are all queued
    /// before any of it is sent: eight fragments restart the window eight times, down to the
    /// initial window, which is all that goes out.
    #[test]
    fn consecutive_linger_bursts_are_queued_before_the_subflow_sends() {
        assert_eq!(restart_on_write(8 * DATA_FRAG_BYTES), (10.0, 10));
    }
}
