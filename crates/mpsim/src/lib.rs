//! mpsim — a deterministic, sans-IO packet-level simulator of TCP and Multipath TCP.
//!
//! Layers, bottom up:
//! - [`time`], [`rng`]: integer-nanosecond simulated time and seeded random streams.
//! - [`event`]: the event list, ordered by (time, sequence).
//! - [`topology`]: links (queue → serialiser → propagation pipe), drop-tail and RED queues, random
//!   loss; a path is an ordered list of links.
//! - [`tcp`]: one subflow's sender and receiver (NewReno recovery, RFC 6298 RTO, delayed ACKs).
//! - [`cc`]: congestion controls behind one trait (Reno, CUBIC, LIA, OLIA, BALIA).
//! - [`mptcp`]: the connection level: data sequence space, shared send and receive buffers,
//!   schedulers, reinjection, opportunistic retransmission and penalisation, auto-tuning.
//! - [`app`]: bulk, blocks and finite-size applications.
//! - [`scenario`] in, [`report`] out; [`sim::run`] ties them together.
//!
//! The crate never reads a clock, a file or the network: the same scenario and seed give the
//! same report, bit for bit.

pub mod app;
pub mod cc;
pub mod event;
pub mod mptcp;
mod number_text;
pub mod packet;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod time;
pub mod topology;

pub use report::Report;
pub use scenario::{Scenario, ScenarioError};

/// The crate version plus a fingerprint of the source it was built from (see `build.rs`): two
/// builds that may give different results never share a version string.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("MPSIM_SOURCE_HASH"));
