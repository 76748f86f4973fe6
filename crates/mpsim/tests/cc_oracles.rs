//! Coupled congestion control in the packet-level engine against RFC 6356 §2 goal 2 ("do no
//! harm"): at a bottleneck shared with a Reno flow, LIA, OLIA and BALIA take about one TCP share
//! and uncoupled Reno about two (spec §6.3). The oracle assumes every flow sees the same loss
//! probability (the fluid model behind RFC 6356 and spec §6.2), so the shared link drops packets
//! at random with an exogenous probability and never queues. A deterministic drop-tail queue
//! does not satisfy that assumption: it drops mostly the packets of the flow whose window is
//! growing fastest when the queue overflows, i.e. the Reno flow, which then sees a higher loss
//! rate than the coupled subflows.
//! Unit tests of each algorithm are in src/cc/*.rs.

mod common;
use common::*;
use serde_json::json;

/// Goodput of the two-subflow MPTCP connection over that of the competing Reno flow, averaged
/// over three seeds. Both subflows and the TCP flow cross the lossy link `bn` (0.5 % random
/// loss, 20 ms base RTT for everyone).
fn share_at_shared_lossy_link(cc: &str) -> f64 {
    let seeds = [1u64, 2, 3];
    let mut sum = 0.0;
    for seed in seeds {
        let r = run(json!({
            "duration_s": 120.0, "warmup_s": 10.0, "seed": seed,
            "links": [link("a", 100.0, 2.0, json!({"kind": "droptail", "packets": 1000})),
                      link("b", 100.0, 2.0, json!({"kind": "droptail", "packets": 1000})),
                      link("c", 100.0, 2.0, json!({"kind": "droptail", "packets": 1000})),
                      {"id": "bn", "capacity_mbps": 1000.0, "delay_ms": 8.0, "loss": 0.005,
                       "queue": {"kind": "droptail", "packets": 100000}}],
            "flows": [{"id": "m", "protocol": "mptcp", "cc": cc, "paths": [["a", "bn"], ["b", "bn"]],
                       "rcvbuf_bytes": 4_194_304},
                      {"id": "t", "protocol": "tcp", "cc": "reno", "paths": [["c", "bn"]],
                       "rcvbuf_bytes": 4_194_304}]
        }));
        sum += flow(&r, "m").goodput_mbps / flow(&r, "t").goodput_mbps;
    }
    sum / seeds.len() as f64
}

#[test]
fn coupled_algorithms_take_one_tcp_share_under_equal_random_loss() {
    let mut rows = Vec::new();
    for cc in ["lia", "olia", "balia", "reno"] {
        rows.push((cc, share_at_shared_lossy_link(cc)));
    }
    for (cc, ratio) in &rows {
        println!("{cc:6} MPTCP/TCP = {ratio:.3}");
    }
    for (cc, ratio) in rows {
        if cc == "reno" {
            assert!(
                (1.7..=2.3).contains(&ratio),
                "uncoupled should take two shares: {ratio}"
            );
        } else {
            assert!((0.85..=1.2).contains(&ratio), "{cc}: MPTCP/TCP = {ratio}");
        }
    }
}
