//! The scenario: what to simulate. The same JSON/TOML document drives the simulator and the
//! emulator (DESIGN.md "Scenario"), so every field carries its unit in its name and documents its
//! default. Parsing is done by serde; `Scenario::validate` checks what types cannot express.

use crate::number_text::Num;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

fn default_seed() -> u64 {
    1
}
fn default_count() -> u32 {
    1
}
fn default_trace_interval_ms() -> f64 {
    100.0
}

/// A whole run.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Simulated length of the run, seconds.
    pub duration_s: f64,
    /// Measurements (goodput, utilisation) start after this many seconds. Default 0.
    #[serde(default)]
    pub warmup_s: f64,
    /// Seed of the run; every random stream is derived from it. Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<FlowSpec>,
    /// Time series to record: any of "cwnd", "ssthresh", "srtt", "rwnd", "queue", "blocks".
    /// Default none.
    #[serde(default)]
    pub trace: Vec<TraceKind>,
    /// Sampling interval of the cwnd/ssthresh/srtt/rwnd/queue traces, milliseconds, rounded to
    /// the clock's nanosecond; at least 1e-6. Default 100.
    #[serde(default = "default_trace_interval_ms")]
    pub trace_interval_ms: f64,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum TraceKind {
    Cwnd,
    /// Each subflow's slow-start threshold.
    Ssthresh,
    /// Each subflow's smoothed RTT estimate (RFC 6298 SRTT).
    Srtt,
    Rwnd,
    Queue,
    Blocks,
}

/// One link: a forward direction with a queue, and a reverse direction that carries ACKs with the
/// same propagation delay and no queueing unless `reverse_capacity_mbps` is given.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub id: String,
    /// Forward rate, Mbit/s.
    pub capacity_mbps: f64,
    /// One-way propagation delay, milliseconds.
    pub delay_ms: f64,
    /// Forward queue. Default: drop-tail of one bandwidth-delay product of this link
    /// (capacity × 2 × delay), at least 10 packets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Bernoulli loss probability applied to each packet entering the link, in [0, 1).
    #[serde(default)]
    pub loss: f64,
    /// Maximum extra delay, milliseconds, drawn uniformly per packet. A packet never leaves
    /// before the one ahead of it (no reordering), so one drawn short behind one drawn long
    /// waits for it: the mean extra delay is above half the maximum (linkem does the same).
    #[serde(default)]
    pub jitter_ms: f64,
    /// Capacity of the reverse (ACK) direction, Mbit/s. Default: unlimited, no queueing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_capacity_mbps: Option<f64>,
    /// Queue of the reverse direction when it has a capacity. Default as for `queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse_queue: Option<QueueSpec>,
}

/// A queue discipline.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum QueueSpec {
    /// Tail drop; exactly one of the three sizes.
    Droptail {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        packets: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        bytes: Option<u64>,
        /// Milliseconds of the link rate.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ms: Option<f64>,
    },
    /// Floyd–Jacobson RED, gentle form by default (spec §5.4).
    Red {
        min_packets: f64,
        max_packets: f64,
        max_p: f64,
        #[serde(default = "default_red_weight")]
        weight: f64,
        limit_packets: u64,
        #[serde(default = "default_true")]
        gentle: bool,
        /// Use the instantaneous queue instead of the EWMA average.
        #[serde(default)]
        instantaneous: bool,
    },
}

fn default_red_weight() -> f64 {
    0.002
}
fn default_true() -> bool {
    true
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    Tcp,
    Mptcp,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CcKind {
    Reno,
    Cubic,
    Lia,
    Olia,
    Balia,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SchedulerKind {
    #[default]
    Minrtt,
    Roundrobin,
    Redundant,
    Linger,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Penalization {
    Off,
    Nsdi12,
    #[default]
    Conext13,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum BufferMode {
    #[default]
    Auto,
    Fixed,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RtoPolicy {
    /// RTO = SRTT + max(200 ms, 4·RTTVAR), as Linux does.
    #[default]
    Linux,
    /// RFC 6298 with its 1 s floor.
    Rfc6298,
}

/// How a SACK sender decides that a segment is lost.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LossDetection {
    /// Forward acknowledgement: DupThresh segments' worth SACKed above it (Linux 2.6–4.14).
    #[default]
    Fack,
    /// RACK (RFC 8985): something sent after it was delivered and a reordering window has
    /// passed (Linux 4.18 on, its only test since).
    Rack,
}

/// Which CUBIC grows the window in congestion avoidance (the curve, β and fast convergence are
/// the same in both; see `cc::cubic`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum CubicVariant {
    /// RFC 9438: the Reno-friendly estimate grows by α_cubic per RTT up to the window of the
    /// last reduction, then by one segment.
    #[default]
    Rfc9438,
    /// Linux `tcp_cubic.c`: the Reno-friendly estimate grows by 8/15 of a segment per RTT
    /// throughout, and an epoch that began with no W_max from a loss grows by at least 5 % per
    /// RTT.
    Linux,
}

/// How the receiver sizes an auto-tuned receive buffer (dynamic right-sizing, spec §3.7; see
/// `tcp::rcv_rtt` and `mptcp::receive_buffer`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum DrsVariant {
    /// Spec §3.7 (Linux 4.19 to 6.15): the receiver's RTT smoothed with gain 1/8 over its
    /// millisecond samples, and `rcvwin = 2·copied + 16·mss` plus the growth term.
    #[default]
    Classic,
    /// Linux 6.16 on (the emulator's 6.18): the receiver's RTT from millisecond timestamps,
    /// taking a smaller sample at once, and `rcvwin = 2·copied` plus the growth term.
    Linux,
}

/// When the cwnd-limited gate (spec §2.8 f) lets an ACK grow the window.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CwndLimitedCheck {
    /// The data in flight before the ACK fills the window, or half of it in slow start: a
    /// per-ACK test like Linux's before 3.16 (`tcp_is_cwnd_limited(sk, in_flight)`).
    #[default]
    PerAck,
    /// The window was full after a send in the current round of data, or, in slow start, is
    /// below twice the most that was in flight then (Linux 3.16 on: `tcp_cwnd_validate`,
    /// `tcp_is_cwnd_limited`).
    PerRound,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CountMode {
    /// One coupled increment per ACK, whatever it covers (Linux MPTCP modules).
    #[default]
    PerAck,
    /// Increments scaled by the bytes acknowledged (RFC 6356 text).
    PerSegment,
}

/// What the application does.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum AppSpec {
    /// Always has data to send.
    #[default]
    Bulk,
    /// Writes blocks of `block_bytes` back to back; records each block's latency from write to
    /// complete read at the receiver.
    Blocks {
        #[serde(default = "default_block_bytes")]
        block_bytes: u64,
    },
    /// A finite transfer of `bytes`; records the completion time.
    Size { bytes: u64 },
}

fn default_block_bytes() -> u64 {
    8192
}

/// One flow (or `count` identical flows).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub id: String,
    pub protocol: Protocol,
    /// Congestion control. Default `reno` for TCP, `lia` for MPTCP.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcKind>,
    /// MPTCP packet scheduler. Default `minrtt`.
    #[serde(default)]
    pub scheduler: SchedulerKind,
    /// One path per subflow; a path is the ordered list of link ids from sender to receiver.
    pub paths: Vec<Vec<String>>,
    /// Fixed receive buffer (window budget), bytes. Setting it selects `rcvbuf = "fixed"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf_bytes: Option<u64>,
    /// `auto` (Linux dynamic right-sizing) or `fixed`. Default `auto` unless `rcvbuf_bytes` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf: Option<BufferMode>,
    /// Cap of the auto-tuned receive buffer (the window it may advertise, as `rcvbuf_bytes`),
    /// bytes. Default 4 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf_max_bytes: Option<u64>,
    /// Fixed send buffer, bytes. Default: auto-tuned like Linux's `tcp_sndbuf_expand`
    /// (2 · max(cwnd, 10) segments of 2304 charged bytes per subflow, about 3.2 windows of
    /// payload, never shrinking), capped by `sndbuf_max_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndbuf_bytes: Option<u64>,
    /// Cap of the auto-tuned send buffer, bytes. Default 4 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndbuf_max_bytes: Option<u64>,
    /// Number of identical flows; they appear as `id#0` … `id#N-1`. Default 1.
    #[serde(default = "default_count")]
    pub count: u32,
    #[serde(default)]
    pub app: AppSpec,
    /// When the connection is opened, seconds. Default 0.
    #[serde(default)]
    pub start_s: f64,
    /// When the application stops writing, seconds (after `start_s`); what it has written is
    /// still delivered. Default: it writes until the end of the run. Goodput is still counted
    /// over the whole measured period.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// Delay from the connection's establishment to each additional subflow's MP_JOIN
    /// handshake, seconds. Default: the first subflow's round trip (Linux opens subflows once
    /// the connection is fully established, its first data acknowledged). The handshake then
    /// takes two round trips of the subflow's path before it carries data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_delay_s: Option<f64>,
    /// MPTCP: penalise slow subflows that block the receive window (spec §3.6). Default conext13.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub penalization: Option<Penalization>,
    /// MPTCP: opportunistic retransmission of the head-of-line segment. Default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opportunistic_retransmit: Option<bool>,
    #[serde(default)]
    pub tcp: TcpOptions,
}

fn default_initial_window() -> u32 {
    10
}
fn default_abc_limit() -> u32 {
    2
}
fn default_oretx_factor() -> f64 {
    4.0
}
fn default_oretx_small_cwnd() -> u32 {
    4
}

/// Transport details; defaults follow Linux.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpOptions {
    /// Initial window, segments (RFC 6928). Default 10.
    #[serde(default = "default_initial_window")]
    pub initial_window: u32,
    /// Delayed ACKs: ACK every second full segment or after 40 ms (Linux). Default false.
    #[serde(default)]
    pub delayed_ack: bool,
    #[serde(default)]
    pub rto_policy: RtoPolicy,
    /// Selective acknowledgements with SACK-based loss recovery (RFC 2018, RFC 6675), as Linux
    /// does. false = NewReno (RFC 6582). Default true.
    #[serde(default = "default_true")]
    pub sack: bool,
    /// With SACK: how losses are found. Default fack.
    #[serde(default)]
    pub loss_detection: LossDetection,
    /// Appropriate byte counting limit L in slow start (RFC 3465). Default 2.
    #[serde(default = "default_abc_limit")]
    pub abc_limit: u32,
    /// Coupled-CC increment counting (spec §2.8 a). Default per_ack.
    #[serde(default)]
    pub count_mode: CountMode,
    /// Use ssthresh instead of the inflated cwnd of subflows in fast recovery in coupled
    /// aggregates (spec §2.8 c). Default true.
    #[serde(default = "default_true")]
    pub recovery_uses_ssthresh: bool,
    /// Minimum ssthresh in segments after a loss (spec §2.8 e). Default: each congestion
    /// control's own, 2 (Linux's Reno floor) except BALIA's coupled decrease, 1 (draft-walid §2
    /// and Linux mptcp_balia.c).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_ssthresh_segments: Option<u32>,
    /// Grow cwnd only while the subflow is cwnd-limited (spec §2.8 f). Default true.
    #[serde(default = "default_true")]
    pub cwnd_limited_gate: bool,
    /// How the gate tells that the window is used. Default per ACK.
    #[serde(default)]
    pub cwnd_limited_check: CwndLimitedCheck,
    /// With RACK: Proportional Rate Reduction (RFC 6937) in fast recovery, as Linux, instead
    /// of RFC 6675's window set to ssthresh at once. Default false.
    #[serde(default)]
    pub prr: bool,
    /// Opportunistic retransmission fires when 4·srtt_S < srtt_T (factor) ... (spec §3.6).
    #[serde(default = "default_oretx_factor")]
    pub oretx_rtt_factor: f64,
    /// ... or when the head-of-line subflow's cwnd ≤ this many segments; 0 = unconditional.
    #[serde(default = "default_oretx_small_cwnd")]
    pub oretx_small_cwnd: u32,
    /// CUBIC only: Linux's HyStart slow-start exit (ACK train and delay increase,
    /// tcp_cubic.c). Default true, as Linux.
    #[serde(default = "default_true")]
    pub hystart: bool,
    /// CUBIC only: RFC 9438's congestion avoidance or Linux's. Default rfc9438.
    #[serde(default)]
    pub cubic_variant: CubicVariant,
    /// Receive-buffer auto-tuning as spec §3.7 has it or as Linux 6.16 on does. Default classic.
    #[serde(default)]
    pub drs_variant: DrsVariant,
    /// Restart the congestion window after a subflow was idle for longer than its RTO
    /// (RFC 5681 §4.1, RFC 2861), as Linux does by default (`tcp_slow_start_after_idle`).
    /// Default false.
    #[serde(default)]
    pub slow_start_after_idle: bool,
}

impl Default for TcpOptions {
    fn default() -> Self {
        TcpOptions {
            initial_window: default_initial_window(),
            delayed_ack: false,
            rto_policy: RtoPolicy::default(),
            sack: true,
            loss_detection: LossDetection::default(),
            abc_limit: default_abc_limit(),
            count_mode: CountMode::default(),
            recovery_uses_ssthresh: true,
            min_ssthresh_segments: None,
            cwnd_limited_gate: true,
            cwnd_limited_check: CwndLimitedCheck::default(),
            prr: false,
            oretx_rtt_factor: default_oretx_factor(),
            oretx_small_cwnd: default_oretx_small_cwnd(),
            hystart: true,
            cubic_variant: CubicVariant::default(),
            drs_variant: DrsVariant::default(),
            slow_start_after_idle: false,
        }
    }
}

/// Maximum segment size (payload) and the per-packet header overhead (IP 20 + TCP 20 + timestamp
/// option 12), so a full segment is a 1500-byte packet.
pub const MSS_BYTES: u32 = 1448;
pub const HEADER_BYTES: u32 = 52;
/// Default cap of auto-tuned buffers (Linux `tcp_rmem[2]`-like; CoNEXT 2013 used 4 MB).
pub const DEFAULT_BUFFER_CAP_BYTES: u64 = 4 * 1024 * 1024;

/// A field that failed validation: where it is (a dotted path such as `links[0].capacity_mbps`)
/// and what was expected.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn err(field: impl Into<String>, message: impl Into<String>) -> ScenarioError {
    ScenarioError {
        field: field.into(),
        message: message.into(),
    }
}

fn finite_at_least(v: f64, min: f64, field: String, what: &str) -> Result<(), ScenarioError> {
    if !v.is_finite() || v < min {
        return Err(err(field, format!("expected {what}, got {}", Num(v))));
    }
    Ok(())
}

/// Longest run, seconds: `SimTime` holds nanoseconds in a u64 (about 584 years); a longer
/// duration would silently end at the clock's limit instead.
pub const MAX_DURATION_S: f64 = 1e10;

/// Longest link delay or jitter, ms: the clock's limit, as for [`MAX_DURATION_S`]; a longer
/// one would silently become the clock's end and the run carry nothing.
pub const MAX_DELAY_MS: f64 = MAX_DURATION_S * 1e3;

fn within_clock_ms(v: f64, field: String, what: &str) -> Result<(), ScenarioError> {
    if v > MAX_DELAY_MS {
        return Err(err(
            field,
            format!(
                "expected {what} of at most {} ms (the clock counts nanoseconds in 64 bits), \
                 got {}",
                Num(MAX_DELAY_MS),
                Num(v)
            ),
        ));
    }
    Ok(())
}

/// Fastest link, Mbit/s: a full packet takes 60 ns at 200 Gbit/s, which the nanosecond clock
/// rounds by at most 0.8 %. Faster, the rounding grows (at 10 Tbit/s a packet's 1.2 ns became
/// 1 and the link carried 20 % more than its rate), and past 24 Tbit/s a packet takes no time:
/// over a link of no delay a window went round at one instant and the run never advanced.
pub const MAX_CAPACITY_MBPS: f64 = 2e5;
/// Slowest link, Mbit/s: one bit per second (a full packet takes 3 h 20 min). Slower rates only
/// mean no packet in the run, and the fair shares' linear program fails on them.
pub const MIN_CAPACITY_MBPS: f64 = 1e-6;

/// Largest socket buffer, bytes: Linux keeps its buffer sizes in 32-bit ints (`sk_sndbuf`,
/// `sk_rcvbuf`), and a writer filling a larger send buffer skb by skb would take hours.
pub const MAX_BUFFER_BYTES: u64 = i32::MAX as u64;

/// The largest window in segments a scenario may start with or set as its ssthresh floor: no
/// more than the largest socket buffer holds (a window of 2^32 − 1 segments, accepted before,
/// took gigabytes for ten flows).
pub const MAX_WINDOW_SEGMENTS: u32 = (MAX_BUFFER_BYTES / MSS_BYTES as u64) as u32;

fn window_expected(low: &str) -> String {
    format!(
        "expected {low} and at most {MAX_WINDOW_SEGMENTS} segments (the largest socket buffer, \
         {MAX_BUFFER_BYTES} bytes, in full segments)"
    )
}

/// Most blocks a run's `blocks` applications can complete, from their paths' capacities: each
/// block's latency is kept for exact percentiles (16 bytes each, more while in flight), and
/// blocks of a few bytes over a fast path would fill the memory.
pub const MAX_BLOCKS: f64 = 1e7;

/// Most subflows of a run, counting each path of each of a flow entry's `count`.
pub const MAX_SUBFLOWS: u64 = 200_000;

/// Shortest run, seconds: below a millisecond no packet crosses a link of the scenario's kind
/// and the rates of the report divide by a period that rounds to nothing.
pub const MIN_DURATION_S: f64 = 1e-3;

/// Most flows of a run, counting each of a flow entry's `count` (a million took 5 GB).
pub const MAX_FLOWS: u64 = 100_000;

/// Most trace samples of a run, over every series (8 bytes each: 400 MB).
pub const MAX_TRACE_VALUES: f64 = 5e7;
/// Shortest trace interval, ms: the clock's nanosecond. A shorter one rounds to no time at all
/// and the sampler would take sample after sample at one instant.
pub const MIN_TRACE_INTERVAL_MS: f64 = 1e-6;

fn positive(v: f64, field: String, what: &str) -> Result<(), ScenarioError> {
    if !v.is_finite() || v <= 0.0 {
        return Err(err(field, format!("expected {what} > 0, got {}", Num(v))));
    }
    Ok(())
}

fn capacity(v: f64, field: String) -> Result<(), ScenarioError> {
    positive(v, field.clone(), "a capacity in Mbit/s")?;
    if v > MAX_CAPACITY_MBPS {
        return Err(err(
            field,
            format!(
                "expected a capacity of at most {} Mbit/s (the nanosecond clock times a full \
                 packet to within 1 % up to there), got {}",
                Num(MAX_CAPACITY_MBPS),
                Num(v)
            ),
        ));
    }
    if v < MIN_CAPACITY_MBPS {
        return Err(err(
            field,
            format!(
                "expected a capacity of at least {} Mbit/s (1 bit/s), got {}",
                Num(MIN_CAPACITY_MBPS),
                Num(v)
            ),
        ));
    }
    Ok(())
}

fn plain_id(id: &str, field: String) -> Result<(), ScenarioError> {
    if id.chars().any(char::is_control) {
        return Err(err(field, "expected an id without control characters"));
    }
    Ok(())
}

impl Scenario {
    /// Parse a JSON document and validate it.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        let s: Scenario = serde_json::from_str(text).map_err(|e| err("", e.to_string()))?;
        s.validate()?;
        Ok(s)
    }

    /// Checks that serde's types cannot express. The first problem found is returned.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        positive(
            self.duration_s,
            "duration_s".into(),
            "a duration in seconds",
        )?;
        if self.duration_s > MAX_DURATION_S {
            return Err(err(
                "duration_s",
                format!(
                    "expected a duration of at most {} s (the clock counts nanoseconds in \
                     64 bits), got {}",
                    Num(MAX_DURATION_S),
                    Num(self.duration_s)
                ),
            ));
        }
        if self.duration_s < MIN_DURATION_S {
            return Err(err(
                "duration_s",
                format!(
                    "expected a duration of at least {} s, got {}",
                    Num(MIN_DURATION_S),
                    Num(self.duration_s)
                ),
            ));
        }
        finite_at_least(self.warmup_s, 0.0, "warmup_s".into(), "seconds ≥ 0")?;
        // What is measured lasts at least as long as the shortest run, or its rates divide by
        // a period that rounds to nothing.
        if self.duration_s - self.warmup_s < MIN_DURATION_S {
            return Err(err(
                "warmup_s",
                format!(
                    "expected a warm-up at least {} s shorter than duration_s = {} s, got {}",
                    Num(MIN_DURATION_S),
                    Num(self.duration_s),
                    Num(self.warmup_s)
                ),
            ));
        }
        positive(
            self.trace_interval_ms,
            "trace_interval_ms".into(),
            "milliseconds",
        )?;
        if self.trace_interval_ms < MIN_TRACE_INTERVAL_MS {
            return Err(err(
                "trace_interval_ms",
                format!(
                    "expected at least {} ms (the clock's nanosecond), got {}",
                    Num(MIN_TRACE_INTERVAL_MS),
                    Num(self.trace_interval_ms)
                ),
            ));
        }
        if self.links.is_empty() {
            return Err(err("links", "expected at least one link"));
        }
        if self.flows.is_empty() {
            return Err(err("flows", "expected at least one flow"));
        }
        // Each link's capacity by id: the ids are checked unique and known, the capacities give
        // the most blocks a flow's paths can carry.
        let mut capacities = BTreeMap::new();
        for (i, l) in self.links.iter().enumerate() {
            let f = |name: &str| format!("links[{i}].{name}");
            if l.id.is_empty() {
                return Err(err(f("id"), "expected a non-empty link id"));
            }
            plain_id(&l.id, f("id"))?;
            if capacities.insert(l.id.as_str(), l.capacity_mbps).is_some() {
                return Err(err(f("id"), format!("link id '{}' is used twice", l.id)));
            }
            l.validate(i)?;
        }
        let mut flow_ids = BTreeSet::new();
        let mut flows = 0u64;
        let mut subflows = 0u64;
        let mut blocks = 0.0;
        for (i, fl) in self.flows.iter().enumerate() {
            let f = |name: &str| format!("flows[{i}].{name}");
            if fl.id.is_empty() || fl.id.contains('#') {
                return Err(err(f("id"), "expected a non-empty flow id without '#'"));
            }
            plain_id(&fl.id, f("id"))?;
            if !flow_ids.insert(fl.id.as_str()) {
                return Err(err(f("id"), format!("flow id '{}' is used twice", fl.id)));
            }
            if fl.paths.is_empty() {
                return Err(err(
                    f("paths"),
                    "expected at least one path (a list of link ids)",
                ));
            }
            if fl.protocol == Protocol::Tcp && fl.paths.len() != 1 {
                return Err(err(
                    f("paths"),
                    format!(
                        "a tcp flow takes exactly one path, got {}; use protocol = \"mptcp\"",
                        fl.paths.len()
                    ),
                ));
            }
            if fl.paths.len() > 32 {
                return Err(err(f("paths"), "at most 32 subflows per connection"));
            }
            for (p, path) in fl.paths.iter().enumerate() {
                if path.is_empty() {
                    return Err(err(
                        format!("flows[{i}].paths[{p}]"),
                        "expected a non-empty list of link ids",
                    ));
                }
                let mut seen = BTreeSet::new();
                for (h, hop) in path.iter().enumerate() {
                    if !capacities.contains_key(hop.as_str()) {
                        let known: Vec<&str> = capacities.keys().copied().collect();
                        return Err(err(
                            format!("flows[{i}].paths[{p}][{h}]"),
                            format!("unknown link '{hop}'; links are: {}", known.join(", ")),
                        ));
                    }
                    if !seen.insert(hop.as_str()) {
                        return Err(err(
                            format!("flows[{i}].paths[{p}][{h}]"),
                            format!("link '{hop}' appears twice in one path"),
                        ));
                    }
                }
            }
            match (fl.rcvbuf, fl.rcvbuf_bytes) {
                (Some(BufferMode::Auto), Some(_)) => {
                    return Err(err(
                        f("rcvbuf_bytes"),
                        "rcvbuf = \"auto\" takes rcvbuf_max_bytes, not rcvbuf_bytes",
                    ))
                }
                (Some(BufferMode::Fixed), None) => {
                    return Err(err(f("rcvbuf"), "rcvbuf = \"fixed\" needs rcvbuf_bytes"))
                }
                _ => {}
            }
            // A cap applies to a buffer that grows; a fixed one would silently ignore it.
            if fl.rcvbuf_mode() == BufferMode::Fixed && fl.rcvbuf_max_bytes.is_some() {
                return Err(err(
                    f("rcvbuf_max_bytes"),
                    "a fixed receive buffer (rcvbuf_bytes) takes no cap; rcvbuf_max_bytes caps \
                     rcvbuf = \"auto\"",
                ));
            }
            if fl.sndbuf_bytes.is_some() && fl.sndbuf_max_bytes.is_some() {
                return Err(err(
                    f("sndbuf_max_bytes"),
                    "a fixed send buffer (sndbuf_bytes) takes no cap; sndbuf_max_bytes caps the \
                     auto-tuned one",
                ));
            }
            for (name, v) in [
                ("rcvbuf_bytes", fl.rcvbuf_bytes),
                ("rcvbuf_max_bytes", fl.rcvbuf_max_bytes),
                ("sndbuf_bytes", fl.sndbuf_bytes),
                ("sndbuf_max_bytes", fl.sndbuf_max_bytes),
            ] {
                if let Some(v) = v {
                    if v < MSS_BYTES as u64 {
                        return Err(err(
                            f(name),
                            format!("expected at least one segment ({MSS_BYTES} bytes), got {v}"),
                        ));
                    }
                    if v > MAX_BUFFER_BYTES {
                        return Err(err(
                            f(name),
                            format!(
                                "expected at most {MAX_BUFFER_BYTES} bytes (Linux's socket \
                                 buffer sizes are 32-bit ints), got {v}"
                            ),
                        ));
                    }
                }
            }
            if fl.count == 0 {
                return Err(err(f("count"), "expected a count ≥ 1"));
            }
            flows += u64::from(fl.count);
            if flows > MAX_FLOWS {
                return Err(err(
                    f("count"),
                    format!(
                        "expected at most {MAX_FLOWS} flows in all, got {flows} with this entry"
                    ),
                ));
            }
            subflows += u64::from(fl.count) * fl.paths.len() as u64;
            if subflows > MAX_SUBFLOWS {
                return Err(err(
                    f("count"),
                    format!(
                        "expected at most {MAX_SUBFLOWS} subflows in all (a path of each \
                         flow), got {subflows} with this entry"
                    ),
                ));
            }
            finite_at_least(fl.start_s, 0.0, f("start_s"), "seconds ≥ 0")?;
            if fl.start_s >= self.duration_s {
                return Err(err(
                    f("start_s"),
                    format!(
                        "expected a start before duration_s = {} s, got {}",
                        Num(self.duration_s),
                        Num(fl.start_s)
                    ),
                ));
            }
            if let Some(stop) = fl.stop_s {
                if !stop.is_finite() || stop <= fl.start_s {
                    return Err(err(
                        f("stop_s"),
                        format!(
                            "expected seconds after start_s ({}), got {}",
                            Num(fl.start_s),
                            Num(stop)
                        ),
                    ));
                }
            }
            if let Some(d) = fl.join_delay_s {
                finite_at_least(d, 0.0, f("join_delay_s"), "seconds ≥ 0")?;
            }
            match fl.app {
                AppSpec::Blocks { block_bytes: 0 } => {
                    return Err(err(f("app.block_bytes"), "expected a block size ≥ 1 byte"))
                }
                AppSpec::Blocks { block_bytes } => {
                    blocks += self.blocks_at_most(fl, block_bytes, &capacities);
                    if blocks > MAX_BLOCKS {
                        return Err(err(
                            f("app.block_bytes"),
                            format!(
                                "expected at most {} blocks in all (each one's latency is \
                                 kept), but the paths can carry {} with this entry in \
                                 duration_s; use larger blocks",
                                Num(MAX_BLOCKS),
                                Num(blocks.ceil())
                            ),
                        ));
                    }
                }
                AppSpec::Size { bytes: 0 } => {
                    return Err(err(f("app.bytes"), "expected a transfer size ≥ 1 byte"))
                }
                _ => {}
            }
            let t = &fl.tcp;
            if !(1..=MAX_WINDOW_SEGMENTS).contains(&t.initial_window) {
                return Err(err(f("tcp.initial_window"), window_expected("≥ 1 segment")));
            }
            if t.abc_limit == 0 {
                return Err(err(f("tcp.abc_limit"), "expected ≥ 1"));
            }
            if t.min_ssthresh_segments
                .is_some_and(|m| !(1..=MAX_WINDOW_SEGMENTS).contains(&m))
            {
                return Err(err(f("tcp.min_ssthresh_segments"), window_expected("≥ 1")));
            }
            positive(t.oretx_rtt_factor, f("tcp.oretx_rtt_factor"), "a factor")?;
            if t.prr && !(t.sack && t.loss_detection == LossDetection::Rack) {
                return Err(err(
                    f("tcp.prr"),
                    "expected true only with sack = true and loss_detection = \"rack\" \
                     (PRR is modelled with RACK)",
                ));
            }
        }
        self.validate_trace_size()
    }

    /// How many blocks of `block_bytes` a flow entry could complete in the run: its users'
    /// paths at their narrowest links' rates (`capacities`, Mbit/s by link id), packet headers
    /// aside, for the whole duration.
    fn blocks_at_most(
        &self,
        fl: &FlowSpec,
        block_bytes: u64,
        capacities: &BTreeMap<&str, f64>,
    ) -> f64 {
        let rate_mbps: f64 = fl
            .paths
            .iter()
            .map(|path| {
                path.iter()
                    .map(|hop| capacities[hop.as_str()])
                    .fold(f64::INFINITY, f64::min)
            })
            .sum();
        f64::from(fl.count) * rate_mbps * 1e6 / 8.0 * self.duration_s / block_bytes as f64
    }

    /// The sampled traces fit in memory: one value per series and sample, the series being each
    /// subflow's window and RTT, each connection's advertised window and each link's queue.
    fn validate_trace_size(&self) -> Result<(), ScenarioError> {
        let connections: f64 = self.flows.iter().map(|f| f64::from(f.count)).sum();
        let subflows: f64 = self
            .flows
            .iter()
            .map(|f| f64::from(f.count) * f.paths.len() as f64)
            .sum();
        let series: f64 = self
            .trace
            .iter()
            .map(|kind| match kind {
                TraceKind::Cwnd | TraceKind::Ssthresh | TraceKind::Srtt => subflows,
                TraceKind::Rwnd => connections,
                TraceKind::Queue => self.links.len() as f64,
                TraceKind::Blocks => 0.0,
            })
            .sum();
        let duration_ms = self.duration_s * 1e3;
        let samples = (duration_ms / self.trace_interval_ms).floor() + 1.0;
        if series * samples > MAX_TRACE_VALUES {
            let least = duration_ms * series / MAX_TRACE_VALUES;
            return Err(err(
                "trace_interval_ms",
                format!(
                    "expected at least {} ms for these traces ({} series over {} s; at most {} \
                     samples in all), got {}",
                    Num(least),
                    Num(series),
                    Num(self.duration_s),
                    Num(MAX_TRACE_VALUES),
                    Num(self.trace_interval_ms)
                ),
            ));
        }
        Ok(())
    }
}

impl LinkSpec {
    /// The checks of one link on its own, `i` being its index in `links` (for the error's
    /// field); the uniqueness of its id is the caller's. linkem's configuration, which lists the
    /// same links, runs them too.
    pub fn validate(&self, i: usize) -> Result<(), ScenarioError> {
        let f = |name: &str| format!("links[{i}].{name}");
        capacity(self.capacity_mbps, f("capacity_mbps"))?;
        finite_at_least(self.delay_ms, 0.0, f("delay_ms"), "a delay in ms ≥ 0")?;
        within_clock_ms(self.delay_ms, f("delay_ms"), "a delay")?;
        if !(0.0..1.0).contains(&self.loss) {
            return Err(err(
                f("loss"),
                format!("expected a probability in [0, 1), got {}", Num(self.loss)),
            ));
        }
        finite_at_least(self.jitter_ms, 0.0, f("jitter_ms"), "a jitter in ms ≥ 0")?;
        within_clock_ms(self.jitter_ms, f("jitter_ms"), "a jitter")?;
        if let Some(c) = self.reverse_capacity_mbps {
            capacity(c, f("reverse_capacity_mbps"))?;
        }
        if let Some(q) = &self.queue {
            q.validate(&f("queue"))?;
        }
        if let Some(q) = &self.reverse_queue {
            if self.reverse_capacity_mbps.is_none() {
                return Err(err(
                    f("reverse_queue"),
                    "a reverse queue needs reverse_capacity_mbps",
                ));
            }
            q.validate(&f("reverse_queue"))?;
        }
        Ok(())
    }
}

impl QueueSpec {
    fn validate(&self, field: &str) -> Result<(), ScenarioError> {
        match self {
            QueueSpec::Droptail { packets, bytes, ms } => {
                let given = packets.is_some() as u8 + bytes.is_some() as u8 + ms.is_some() as u8;
                if given != 1 {
                    return Err(err(
                        field,
                        "a droptail queue takes exactly one of packets, bytes or ms",
                    ));
                }
                if let Some(m) = ms {
                    finite_at_least(*m, 0.0, format!("{field}.ms"), "milliseconds ≥ 0")?;
                }
                Ok(())
            }
            QueueSpec::Red {
                min_packets,
                max_packets,
                max_p,
                weight,
                limit_packets,
                ..
            } => {
                finite_at_least(
                    *min_packets,
                    0.0,
                    format!("{field}.min_packets"),
                    "packets ≥ 0",
                )?;
                if !(max_packets.is_finite() && *max_packets > *min_packets) {
                    return Err(err(
                        format!("{field}.max_packets"),
                        format!(
                            "expected a threshold above min_packets ({}), got {}",
                            Num(*min_packets),
                            Num(*max_packets)
                        ),
                    ));
                }
                if !(*max_p > 0.0 && *max_p <= 1.0) {
                    return Err(err(
                        format!("{field}.max_p"),
                        format!("expected a probability in (0, 1], got {}", Num(*max_p)),
                    ));
                }
                if !(*weight > 0.0 && *weight <= 1.0) {
                    return Err(err(
                        format!("{field}.weight"),
                        format!("expected an EWMA weight in (0, 1], got {}", Num(*weight)),
                    ));
                }
                if *limit_packets == 0 {
                    return Err(err(format!("{field}.limit_packets"), "expected ≥ 1 packet"));
                }
                // The average never exceeds the buffer: at or above it, RED never drops early.
                if *min_packets >= *limit_packets as f64 {
                    return Err(err(
                        format!("{field}.min_packets"),
                        format!(
                            "expected a threshold below limit_packets ({limit_packets}), or RED \
                             never drops early, got {}",
                            Num(*min_packets)
                        ),
                    ));
                }
                Ok(())
            }
        }
    }
}

impl FlowSpec {
    pub fn cc_kind(&self) -> CcKind {
        self.cc.unwrap_or(match self.protocol {
            Protocol::Tcp => CcKind::Reno,
            Protocol::Mptcp => CcKind::Lia,
        })
    }
    pub fn rcvbuf_mode(&self) -> BufferMode {
        self.rcvbuf.unwrap_or(if self.rcvbuf_bytes.is_some() {
            BufferMode::Fixed
        } else {
            BufferMode::Auto
        })
    }
    pub fn penalization_mode(&self) -> Penalization {
        match self.protocol {
            Protocol::Tcp => Penalization::Off,
            Protocol::Mptcp => self.penalization.unwrap_or_default(),
        }
    }
    pub fn opportunistic_retransmit_enabled(&self) -> bool {
        self.protocol == Protocol::Mptcp && self.opportunistic_retransmit.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::Scenario;
    use rand::{Rng, SeedableRng};

    /// A number in a scenario file reaches the simulator exactly as written: the Python model
    /// checks the same value and the run uses it bit for bit.
    #[test]
    fn numbers_are_parsed_exactly() {
        let scenario_with = |delay: &str| {
            format!(
                r#"{{"duration_s": 1.0, "links": [{{"id": "l", "capacity_mbps": 1.0,
                "delay_ms": {delay}}}], "flows": [{{"id": "f", "protocol": "tcp",
                "paths": [["l"]]}}]}}"#
            )
        };
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut values = vec![1.5e-300, 8.123456789012345, 0.1, 5e-324, 1e13];
        // Any positive finite delay up to the clock's limit, from its bits.
        while values.len() < 20_000 {
            let v = f64::from_bits(rng.gen::<u64>() >> 1);
            if v.is_finite() && v <= super::MAX_DELAY_MS {
                values.push(v);
            }
        }
        for v in values {
            for text in [format!("{v:?}"), format!("{v:e}")] {
                let s = Scenario::from_json(&scenario_with(&text)).expect("valid scenario");
                assert_eq!(s.links[0].delay_ms.to_bits(), v.to_bits(), "{text}");
            }
        }
    }
}
