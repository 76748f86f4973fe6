//! What a run produces. Serialised as JSON by the binding; `format_version` changes whenever a
//! field changes meaning, so stored results can be upgraded or refused (STYLE.md, Flent).

use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

pub const FORMAT_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Report {
    pub format_version: u32,
    pub mpsim_version: String,
    pub scenario: Scenario,
    pub seed: u64,
    /// Seconds over which rates were measured (duration − warm-up): the measured window. Each
    /// field below says whether it covers that window or the whole run; a warm-up changes only
    /// the former.
    pub measured_s: f64,
    /// Events processed by the engine.
    pub events: u64,
    /// Packets delivered to their final hop (data and ACKs).
    pub packets_delivered: u64,
    /// Data packets delivered to their receiver.
    pub data_packets_delivered: u64,
    pub flows: Vec<FlowReport>,
    pub links: Vec<LinkReport>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub traces: Option<Traces>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowReport {
    /// `id`, or `id#k` for the k-th of `count` identical flows.
    pub id: String,
    pub protocol: String,
    pub cc: String,
    /// Application goodput (bytes read by the receiving application in order) over the
    /// measurement window, Mbit/s.
    pub goodput_mbps: f64,
    /// Bytes read by the receiving application over the whole run.
    pub bytes_delivered: u64,
    /// Segments retransmitted on their own subflow (fast retransmit and timeout), whole run.
    pub retransmits: u64,
    /// Segments re-sent on another subflow (reinjection on timeout, opportunistic retransmission,
    /// redundant copies), whole run.
    pub reinjections: u64,
    /// Times a slow subflow was penalised, whole run.
    pub penalizations: u64,
    /// Seconds of the measurement window during which the sender had data and congestion window
    /// but the receive window was closed.
    pub rwnd_limited_s: f64,
    /// Highest receive-buffer occupancy (in-order unread + out-of-order) over the whole run,
    /// bytes.
    pub peak_rcvbuf_bytes: u64,
    /// Receive buffer size at the end of the run (grows under auto-tuning), bytes.
    pub final_rcvbuf_bytes: u64,
    /// For `size` applications: seconds from start to the last byte read, whatever the warm-up;
    /// None if unfinished.
    pub completion_s: Option<f64>,
    /// For `blocks` applications: latency distribution of the blocks completed in the
    /// measurement window.
    pub block_latency: Option<LatencySummary>,
    pub subflows: Vec<SubflowReport>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SubflowReport {
    pub index: usize,
    pub path: Vec<String>,
    /// Payload delivered in order at subflow level over the measurement window, Mbit/s
    /// (includes copies that the connection level later discarded).
    pub goodput_mbps: f64,
    /// Payload delivered in order at subflow level over the whole run, bytes.
    pub bytes_delivered: u64,
    /// Data segments sent, retransmissions included, whole run.
    pub packets_sent: u64,
    /// Segments retransmitted, whole run.
    pub retransmits: u64,
    /// Loss recoveries started without a timeout, whole run.
    pub fast_retransmits: u64,
    /// Retransmission timer expiries, whole run.
    pub timeouts: u64,
    /// Mean smoothed RTT over the whole run, ms (0 if never sampled).
    pub mean_srtt_ms: f64,
    /// Largest congestion window of the whole run, bytes.
    pub max_cwnd_bytes: f64,
    /// Seconds from the subflow's start until its cwnd first reached `max_cwnd_bytes`
    /// (the CoNEXT 2013 slow-start metric).
    pub time_to_max_cwnd_s: f64,
}

/// Percentiles are nearest-rank: the value at index round((n − 1)·p) of the sorted latencies,
/// a half rounded up (the p50 of two blocks is the later one), the emulator's too. The pooled
/// tables of `mptcplab.analysis.latency` interpolate between order statistics instead.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub mean_ms: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// Every counter covers the forward direction over the measurement window, except
/// `max_queue_packets`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LinkReport {
    pub id: String,
    /// Fraction of the measurement window the forward direction was transmitting.
    pub utilization: f64,
    /// Packets admitted for transmission (neither dropped by the queue nor lost).
    pub packets: u64,
    pub bytes: u64,
    /// All drops: queue overflow, RED and random loss.
    pub drops: u64,
    pub queue_drops: u64,
    pub red_drops: u64,
    pub random_drops: u64,
    /// drops / packets offered to the link.
    pub loss_rate: f64,
    /// Time-averaged queue length, packets.
    pub mean_queue_packets: f64,
    /// Longest queue of the whole run, packets.
    pub max_queue_packets: u64,
}

/// Time series sampled every `trace_interval_ms`, except block latencies (one per block).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Traces {
    pub time_s: Vec<f64>,
    /// `cwnd["flow/subflow"]` in bytes, aligned with `time_s`.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub cwnd: Vec<NamedSeries>,
    /// `ssthresh["flow/subflow"]` in bytes, 0 while none is set (before the first reduction;
    /// Linux's "infinite" threshold).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub ssthresh: Vec<NamedSeries>,
    /// `srtt["flow/subflow"]`: the sender's smoothed RTT, milliseconds (0 before a sample).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub srtt: Vec<NamedSeries>,
    /// Advertised receive window per flow, bytes.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub rwnd: Vec<NamedSeries>,
    /// Queue length per link, packets.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub queue: Vec<NamedSeries>,
    /// Per-block (completion time s, latency ms) per flow.
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub blocks: Vec<BlockSeries>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct NamedSeries {
    pub name: String,
    pub values: Vec<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct BlockSeries {
    pub flow: String,
    pub done_s: Vec<f64>,
    pub latency_ms: Vec<f64>,
}
