//! Simulator throughput on fixed cases: wall time, events/s and delivered data packets/s.
//! `make bench` runs it; the table it prints goes into BENCHMARKS.md.
//!
//! Every bottleneck buffer is one bandwidth-delay product, packets are 1500 bytes and ACKs
//! travel uncongested, as in the htsim comparison cases.

use serde_json::{json, Value};
use std::time::Instant;

fn bdp_packets(mbps: f64, rtt_ms: f64) -> u64 {
    ((mbps * 1e6 * rtt_ms / 1e3 / 8.0 / 1500.0).ceil() as u64).max(1)
}

fn bottleneck(id: &str, mbps: f64, rtt_ms: f64) -> Value {
    json!({"id": id, "capacity_mbps": mbps, "delay_ms": rtt_ms / 2.0,
           "queue": {"kind": "droptail", "packets": bdp_packets(mbps, rtt_ms)}})
}

fn flows(id: &str, protocol: &str, cc: &str, paths: Value, count: u32) -> Value {
    json!({"id": id, "protocol": protocol, "cc": cc, "paths": paths, "count": count,
           "rcvbuf_bytes": 16_000_000, "sndbuf_bytes": 16_000_000})
}

/// Each case runs at least this many times and for at least this long; its best run counts.
const MIN_RUNS: usize = 5;
const MIN_SECONDS: f64 = 2.0;

fn cases() -> Vec<(&'static str, Value)> {
    vec![
        (
            "A: 1 Reno, 100 Mbit/s, 20 ms RTT, 60 s",
            json!({"duration_s": 60.0,
            "links": [bottleneck("l", 100.0, 20.0)],
            "flows": [flows("t", "tcp", "reno", json!([["l"]]), 1)]}),
        ),
        (
            "40 Reno over two 100 Mbit/s bottlenecks, 60 s",
            json!({"duration_s": 60.0,
            "links": [bottleneck("x", 100.0, 20.0), bottleneck("y", 100.0, 40.0)],
            "flows": [flows("a", "tcp", "reno", json!([["x"]]), 20), flows("b", "tcp", "reno", json!([["y"]]), 20)]}),
        ),
        (
            "B: 1 MPTCP LIA, 10 Mbit/s·20 ms + 2 Mbit/s·150 ms, 60 s",
            json!({"duration_s": 60.0,
            "links": [bottleneck("w", 10.0, 20.0), bottleneck("g", 2.0, 150.0)],
            "flows": [flows("m", "mptcp", "lia", json!([["w"], ["g"]]), 1)]}),
        ),
        (
            "C: 1 MPTCP LIA, 2 × 100 Mbit/s·20 ms, 60 s",
            json!({"duration_s": 60.0,
            "links": [bottleneck("x", 100.0, 20.0), bottleneck("y", 100.0, 20.0)],
            "flows": [flows("m", "mptcp", "lia", json!([["x"], ["y"]]), 1)]}),
        ),
        (
            "D: 30 MPTCP LIA + 10 Reno, 100 Mbit/s·20 ms + 100 Mbit/s·40 ms, 60 s",
            json!({"duration_s": 60.0,
            "links": [bottleneck("x", 100.0, 20.0), bottleneck("y", 100.0, 40.0)],
            "flows": [flows("m", "mptcp", "lia", json!([["x"], ["y"]]), 30), flows("t", "tcp", "reno", json!([["x"]]), 10)]}),
        ),
        (
            "E: 3000 MPTCP LIA + 1000 Reno, 2 × 1 Gbit/s (20, 40 ms), 10 s",
            json!({"duration_s": 10.0,
            "links": [bottleneck("x", 1000.0, 20.0), bottleneck("y", 1000.0, 40.0)],
            "flows": [flows("m", "mptcp", "lia", json!([["x"], ["y"]]), 3000), flows("t", "tcp", "reno", json!([["x"]]), 1000)]}),
        ),
    ]
}

fn main() {
    // `cargo bench` passes `--bench`; a case filter is the first argument that is not an option.
    // `--once` runs each case a single time, for counting its instructions under valgrind.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let filter = args.iter().find(|a| !a.starts_with('-')).cloned();
    let once = args.iter().any(|a| a == "--once");
    let (min_runs, min_seconds) = if once {
        (1, 0.0)
    } else {
        (MIN_RUNS, MIN_SECONDS)
    };
    println!(
        "| case | runs | wall s | slowest s | events | events/s | data pkts | data pkts/s | ns/data pkt |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    let mut ns_per_packet = std::collections::BTreeMap::new();
    for (name, v) in cases() {
        if let Some(f) = &filter {
            if !name.starts_with(f.as_str()) {
                continue;
            }
        }
        let s: mpsim::Scenario = serde_json::from_value(v).expect("bench scenario");
        s.validate().expect("valid bench scenario");
        // The best of at least five runs and of at least two seconds of running, to damp the
        // noise of a shared machine (a short case's five runs fit inside one slow spell of the
        // host); the slowest shows how much noise there was.
        let (mut best, mut slowest) = (f64::INFINITY, 0.0f64);
        let (mut runs, mut spent) = (0, 0.0);
        let mut report = None;
        while runs < min_runs || spent < min_seconds {
            let t = Instant::now();
            let r = mpsim::sim::run(&s);
            let wall = t.elapsed().as_secs_f64();
            best = best.min(wall);
            slowest = slowest.max(wall);
            runs += 1;
            spent += wall;
            report = Some(r);
        }
        let r = report.expect("ran");
        let per_packet = best * 1e9 / r.data_packets_delivered as f64;
        ns_per_packet.insert(name.chars().next().unwrap_or(' '), per_packet);
        println!(
            "| {name} | {runs} | {best:.3} | {slowest:.3} | {} | {:.2} M | {} | {:.2} M | {per_packet:.0} |",
            r.events,
            r.events as f64 / best / 1e6,
            r.data_packets_delivered,
            r.data_packets_delivered as f64 / best / 1e6,
        );
    }
    if let (Some(d), Some(e)) = (ns_per_packet.get(&'D'), ns_per_packet.get(&'E')) {
        println!();
        println!(
            "Per-packet cost at 4,000 flows over 40 flows (E / D, best runs): {:.2}",
            e / d
        );
    }
}
