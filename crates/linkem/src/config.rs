//! What the orchestrator tells one linkem process: the scenario's links (the simulator's own
//! types), one TUN device per host interface, and the route of every (source, destination)
//! address pair as a list of link directions.

use mpsim::scenario::LinkSpec;
use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;
use std::path::PathBuf;

fn default_spin_us() -> u64 {
    15
}
fn default_trace_interval_ms() -> f64 {
    100.0
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub links: Vec<LinkSpec>,
    /// Seed of the loss, jitter and RED random streams (the scenario's seed).
    #[serde(default)]
    pub seed: u64,
    pub interfaces: Vec<Interface>,
    pub routes: Vec<Route>,
    /// Where status snapshots are written (atomically: a temporary file, then rename).
    pub status_path: PathBuf,
    /// Queue-length sampling interval, milliseconds. Default 100.
    #[serde(default = "default_trace_interval_ms")]
    pub trace_interval_ms: f64,
    /// Busy-wait this long before a release instead of trusting the timer's wake-up, µs.
    /// Default 15.
    #[serde(default = "default_spin_us")]
    pub spin_us: u64,
    /// Run under SCHED_FIFO at this priority when possible. Default: ordinary scheduling.
    #[serde(default)]
    pub realtime_priority: Option<i32>,
}

/// A host interface: a TUN device created inside a network namespace.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Interface {
    /// Bind-mounted namespace file, e.g. /run/netns/NAME.
    pub netns: PathBuf,
    /// Device name inside that namespace.
    pub name: String,
    /// Addresses assigned to it: packets to them are written to this device.
    pub addresses: Vec<Ipv4Addr>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Forward,
    Reverse,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Hop {
    pub link: String,
    pub direction: Direction,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Route {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub hops: Vec<Hop>,
}

impl Config {
    /// Check what serde cannot: known link ids, known destination addresses, unique routes.
    pub fn validate(&self) -> Result<(), String> {
        if self.links.is_empty() {
            return Err("links: expected at least one link".into());
        }
        for (i, l) in self.links.iter().enumerate() {
            if !(l.capacity_mbps.is_finite() && l.capacity_mbps > 0.0) {
                return Err(format!("links[{i}].capacity_mbps: expected > 0"));
            }
            if !(l.delay_ms.is_finite() && l.delay_ms >= 0.0) {
                return Err(format!("links[{i}].delay_ms: expected ≥ 0"));
            }
        }
        let mut pairs = std::collections::BTreeSet::new();
        for (i, r) in self.routes.iter().enumerate() {
            if r.hops.is_empty() {
                return Err(format!("routes[{i}].hops: expected at least one hop"));
            }
            for (h, hop) in r.hops.iter().enumerate() {
                if !self.links.iter().any(|l| l.id == hop.link) {
                    return Err(format!(
                        "routes[{i}].hops[{h}]: unknown link '{}'",
                        hop.link
                    ));
                }
            }
            if !self.interfaces.iter().any(|f| f.addresses.contains(&r.dst)) {
                return Err(format!(
                    "routes[{i}].dst: no interface has address {}",
                    r.dst
                ));
            }
            if !pairs.insert((r.src, r.dst)) {
                return Err(format!(
                    "routes[{i}]: a second route for {} → {}",
                    r.src, r.dst
                ));
            }
        }
        if !(self.trace_interval_ms.is_finite() && self.trace_interval_ms > 0.0) {
            return Err("trace_interval_ms: expected > 0".into());
        }
        Ok(())
    }
}
