//! Helpers shared by the integration tests: build scenarios from JSON and read reports.
#![allow(dead_code)]

use mpsim::report::{FlowReport, Report};
use mpsim::Scenario;
use serde_json::{json, Value};

/// MSS and full packet size (spec §7).
pub const MSS: f64 = 1448.0;
pub const PACKET: f64 = 1500.0;

pub fn scenario(v: Value) -> Scenario {
    let s: Scenario = serde_json::from_value(v).expect("test scenario parses");
    s.validate().expect("test scenario is valid");
    s
}

pub fn run(v: Value) -> Report {
    mpsim::sim::run(&scenario(v))
}

pub fn flow<'a>(r: &'a Report, id: &str) -> &'a FlowReport {
    r.flows
        .iter()
        .find(|f| f.id == id)
        .unwrap_or_else(|| panic!("flow {id} in report"))
}

/// A link JSON object.
pub fn link(id: &str, mbps: f64, delay_ms: f64, queue: Value) -> Value {
    json!({"id": id, "capacity_mbps": mbps, "delay_ms": delay_ms, "queue": queue})
}

/// Payload rate of a saturated link, Mbit/s: 1448 of every 1500 bytes are payload.
pub fn payload_mbps(capacity_mbps: f64) -> f64 {
    capacity_mbps * MSS / PACKET
}

/// Bytes in one bandwidth-delay product.
pub fn bdp_packets(mbps: f64, rtt_ms: f64) -> u64 {
    (mbps * 1e6 * rtt_ms / 1e3 / 8.0 / PACKET).ceil() as u64
}
