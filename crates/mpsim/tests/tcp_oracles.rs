//! Single-path TCP against independent oracles: link capacity, the Mathis et al. formula,
//! the RTT unfairness of Reno, the receive-window bound, determinism.

mod common;
use common::*;
use mpsim::report::{FlowReport, Report, SubflowReport};
use serde_json::json;

/// One Reno flow over 10 Mbit/s, 20 ms one-way, drop-tail of one BDP: a buffer of one BDP keeps
/// the link busy through Reno's halving (Villamizar & Song 1994), so goodput ≥ 93 % of capacity.
#[test]
fn reno_fills_a_link_with_one_bdp_of_buffer() {
    let r = run(json!({
        "duration_s": 60.0, "warmup_s": 5.0, "seed": 1,
        "links": [link("l", 10.0, 20.0, json!({"kind": "droptail", "packets": bdp_packets(10.0, 40.0)}))],
        "flows": [{"id": "f", "protocol": "tcp", "cc": "reno", "paths": [["l"]], "rcvbuf_bytes": 8_000_000}]
    }));
    let g = flow(&r, "f").goodput_mbps;
    assert!(g >= 0.93 * 10.0, "goodput {g} Mbit/s < 93 % of 10 Mbit/s");
    assert!(
        g <= payload_mbps(10.0) * 1.001,
        "goodput {g} above the payload rate"
    );
}

/// Mathis, Semke, Mahdavi, Ott (1997): B = MSS/RTT · C/√p with C = √(3/2) for an ACK per
/// segment (spec §6.1). Random loss on an otherwise uncongested 200 Mbit/s path.
#[test]
fn reno_goodput_follows_mathis_under_random_loss() {
    reno_follows_mathis(json!({}));
}

/// The same with RACK and Proportional Rate Reduction (RFC 6937): PRR changes how the window
/// comes down during a recovery, not the halving per loss the formula rests on.
#[test]
fn reno_with_prr_follows_mathis_under_random_loss() {
    reno_follows_mathis(json!({"loss_detection": "rack", "prr": true}));
}

fn reno_follows_mathis(tcp: serde_json::Value) {
    let mut rows = Vec::new();
    for &rtt_ms in &[50.0f64, 200.0] {
        for &p in &[0.005f64, 0.01, 0.02] {
            let r = run(json!({
                "duration_s": 200.0, "warmup_s": 10.0, "seed": 3,
                "links": [{"id": "l", "capacity_mbps": 200.0, "delay_ms": rtt_ms / 2.0, "loss": p,
                           "queue": {"kind": "droptail", "packets": 100000}}],
                "flows": [{"id": "f", "protocol": "tcp", "cc": "reno", "paths": [["l"]],
                           "rcvbuf_bytes": 64_000_000, "sndbuf_bytes": 64_000_000, "tcp": tcp}]
            }));
            let f = flow(&r, "f");
            let rtt_s = f.subflows[0].mean_srtt_ms / 1e3;
            let mathis_mbps = MSS * 8.0 / rtt_s * (1.5f64).sqrt() / p.sqrt() / 1e6;
            let ratio = f.goodput_mbps / mathis_mbps;
            rows.push((rtt_ms, p, f.goodput_mbps, mathis_mbps, ratio));
        }
    }
    println!("rtt_ms  p      goodput  mathis  ratio");
    for (rtt, p, g, m, ratio) in &rows {
        println!("{rtt:6.0} {p:.3}  {g:7.3}  {m:6.3}  {ratio:.3}");
    }
    for (rtt, p, _, _, ratio) in rows {
        assert!(
            (0.7..=1.3).contains(&ratio),
            "rtt {rtt} ms, p {p}: goodput/Mathis = {ratio}"
        );
    }
}

/// Two Reno flows with base RTTs 20 and 80 ms through one drop-tail bottleneck. Reno's share is
/// inversely proportional to RTT^a with a between 1 and 2 (Lakshman & Madhow, "The performance
/// of TCP/IP for networks with high bandwidth-delay products and random loss", IEEE/ACM ToN 5(3),
/// 1997; Floyd & Jacobson 1991 for the drop-tail bias). RTTs are the measured ones (with queueing).
#[test]
fn reno_rtt_unfairness_is_between_one_and_two_powers_of_the_rtt_ratio() {
    let r = run(json!({
        "duration_s": 120.0, "warmup_s": 10.0, "seed": 5,
        "links": [
            link("short", 1000.0, 5.0, json!({"kind": "droptail", "packets": 100000})),
            link("long", 1000.0, 35.0, json!({"kind": "droptail", "packets": 100000})),
            link("bottleneck", 10.0, 5.0, json!({"kind": "droptail", "packets": bdp_packets(10.0, 50.0)}))
        ],
        "flows": [
            {"id": "near", "protocol": "tcp", "cc": "reno", "paths": [["short", "bottleneck"]], "rcvbuf_bytes": 8_000_000},
            {"id": "far", "protocol": "tcp", "cc": "reno", "paths": [["long", "bottleneck"]], "rcvbuf_bytes": 8_000_000}
        ]
    }));
    let near = flow(&r, "near");
    let far = flow(&r, "far");
    let share = near.goodput_mbps / far.goodput_mbps;
    let rho = far.subflows[0].mean_srtt_ms / near.subflows[0].mean_srtt_ms;
    println!(
        "share {share:.2}, measured RTT ratio {rho:.2} (bounds {:.2}..{:.2})",
        rho,
        rho * rho
    );
    assert!(share > 1.0, "the short-RTT flow must get more");
    assert!(
        share >= 0.8 * rho && share <= 1.25 * rho * rho,
        "share {share} outside [ρ, ρ²] with ρ = {rho}"
    );
    let total = near.goodput_mbps + far.goodput_mbps;
    assert!(
        total >= 0.9 * payload_mbps(10.0),
        "bottleneck underused: {total}"
    );
}

/// A fixed receive buffer smaller than the BDP caps goodput at rcvbuf/RTT.
#[test]
fn small_receive_buffer_caps_goodput_at_window_over_rtt() {
    for &rcvbuf in &[64_000u64, 256_000] {
        let r = run(json!({
            "duration_s": 30.0, "warmup_s": 5.0,
            "links": [link("l", 100.0, 50.0, json!({"kind": "droptail", "packets": 10000}))],
            "flows": [{"id": "f", "protocol": "tcp", "paths": [["l"]], "rcvbuf_bytes": rcvbuf}]
        }));
        let f = flow(&r, "f");
        // The window is payload bytes; the RTT adds one packet's serialisation to propagation.
        let rtt_s = 0.100 + PACKET * 8.0 / 100e6;
        let bound = rcvbuf as f64 * 8.0 / rtt_s / 1e6;
        let g = f.goodput_mbps;
        assert!(
            (g / bound - 1.0).abs() <= 0.10,
            "rcvbuf {rcvbuf}: goodput {g} vs rcvbuf/RTT {bound}"
        );
        assert!(
            f.rwnd_limited_s > 20.0,
            "the flow should be window-limited most of the time"
        );
    }
}

/// Slow start from IW 10 doubles the window every RTT (spec §6.1 deterministic checks): with an
/// unlimited path, the bytes delivered in the first k RTTs are 10·(2^k − 1) segments.
#[test]
fn slow_start_doubles_per_rtt() {
    let r = run(json!({
        "duration_s": 0.0301 + 5.0 * 0.1, "seed": 1,
        "links": [link("l", 10000.0, 50.0, json!({"kind": "droptail", "packets": 100000}))],
        "flows": [{"id": "f", "protocol": "tcp", "paths": [["l"]], "rcvbuf_bytes": 100_000_000,
                   "sndbuf_bytes": 100_000_000, "tcp": {"abc_limit": 1}}]
    }));
    // Handshake 100 ms, then 4 full RTTs of data delivered plus the 5th window in flight.
    let delivered_segments = flow(&r, "f").bytes_delivered as f64 / MSS;
    let expected: f64 = (0..4).map(|k| 10.0 * 2f64.powi(k)).sum();
    assert!(
        delivered_segments >= expected && delivered_segments <= expected + 10.0 * 16.0 + 1.0,
        "delivered {delivered_segments} segments, expected about {expected}"
    );
}

/// Same scenario and seed give the same report, bit for bit; another seed changes it.
#[test]
fn runs_are_deterministic() {
    let v = json!({
        "duration_s": 10.0, "seed": 11,
        "links": [{"id": "a", "capacity_mbps": 20.0, "delay_ms": 10.0, "loss": 0.01, "jitter_ms": 2.0},
                  {"id": "b", "capacity_mbps": 5.0, "delay_ms": 40.0,
                   "queue": {"kind": "red", "min_packets": 5, "max_packets": 15, "max_p": 0.1, "limit_packets": 60}}],
        "flows": [{"id": "m", "protocol": "mptcp", "paths": [["a"], ["b"]], "count": 3},
                  {"id": "t", "protocol": "tcp", "paths": [["b"]], "cc": "cubic"}]
    });
    let a = serde_json::to_string(&run(v.clone())).unwrap();
    let b = serde_json::to_string(&run(v.clone())).unwrap();
    assert_eq!(a, b);
    let mut other = v;
    other["seed"] = json!(12);
    assert_ne!(a, serde_json::to_string(&run(other)).unwrap());
}

/// A warm-up moves the start of the measured window and nothing else: the fields the report
/// documents as whole-run are the same with and without one, and those of the measured window
/// count less.
#[test]
fn a_warm_up_changes_only_the_measured_window_fields() {
    let run_with = |warmup_s: f64| {
        run(json!({
            "duration_s": 12.0, "warmup_s": warmup_s, "seed": 4,
            "links": [{"id": "wifi", "capacity_mbps": 8.0, "delay_ms": 10.0, "loss": 0.005,
                       "queue": {"kind": "droptail", "ms": 80}},
                      {"id": "3g", "capacity_mbps": 2.0, "delay_ms": 75.0,
                       "queue": {"kind": "red", "min_packets": 5, "max_packets": 15,
                                 "max_p": 0.1, "limit_packets": 60}}],
            "flows": [{"id": "m", "protocol": "mptcp", "paths": [["wifi"], ["3g"]],
                       "rcvbuf_bytes": 65536, "penalization": "nsdi12",
                       "app": {"kind": "blocks", "block_bytes": 8192}},
                      {"id": "t", "protocol": "tcp", "paths": [["3g"]], "cc": "cubic",
                       "app": {"kind": "size", "bytes": 500000}}]
        }))
    };
    let (cold, warm) = (run_with(0.0), run_with(4.0));
    for (c, w) in cold.flows.iter().zip(&warm.flows) {
        let whole_run = |f: &FlowReport| {
            (
                f.bytes_delivered,
                f.retransmits,
                f.reinjections,
                f.penalizations,
            )
        };
        assert_eq!(whole_run(c), whole_run(w), "{}", c.id);
        assert_eq!(
            (c.peak_rcvbuf_bytes, c.final_rcvbuf_bytes, c.completion_s),
            (w.peak_rcvbuf_bytes, w.final_rcvbuf_bytes, w.completion_s),
            "{}",
            c.id
        );
        for (cs, ws) in c.subflows.iter().zip(&w.subflows) {
            let whole_run = |s: &SubflowReport| {
                (
                    s.bytes_delivered,
                    s.packets_sent,
                    s.retransmits,
                    s.fast_retransmits,
                    s.timeouts,
                )
            };
            assert_eq!(whole_run(cs), whole_run(ws), "{}/{}", c.id, cs.index);
            assert_eq!(
                (cs.mean_srtt_ms, cs.max_cwnd_bytes, cs.time_to_max_cwnd_s),
                (ws.mean_srtt_ms, ws.max_cwnd_bytes, ws.time_to_max_cwnd_s)
            );
            let window_bytes = |s: &SubflowReport, r: &Report| s.goodput_mbps * r.measured_s;
            assert!(window_bytes(ws, &warm) < window_bytes(cs, &cold));
        }
        assert!(w.goodput_mbps * warm.measured_s < c.goodput_mbps * cold.measured_s);
        assert!(w.rwnd_limited_s <= c.rwnd_limited_s);
    }
    let (m_cold, m_warm) = (flow(&cold, "m"), flow(&warm, "m"));
    assert!(m_cold.rwnd_limited_s > 0.0 && m_cold.penalizations > 0);
    let blocks = |f: &FlowReport| f.block_latency.as_ref().map_or(0, |b| b.count);
    assert!(0 < blocks(m_warm) && blocks(m_warm) < blocks(m_cold));
    for (c, w) in cold.links.iter().zip(&warm.links) {
        assert_eq!(c.max_queue_packets, w.max_queue_packets, "{}", c.id);
        assert!(w.packets < c.packets && w.bytes < c.bytes, "{}", c.id);
        assert!(w.drops <= c.drops, "{}", c.id);
    }
    // With no warm-up the window is the run: every data segment the subflows sent over a link
    // was offered to it at once, and carried or dropped; so was each connection's handshake
    // ACK, on its first subflow (the handshakes are otherwise modelled as delays).
    let offered_to = |link: &str| -> u64 {
        let over_link = cold
            .flows
            .iter()
            .flat_map(|f| &f.subflows)
            .filter(|s| s.path == [link]);
        over_link
            .map(|s| s.packets_sent + u64::from(s.index == 0))
            .sum()
    };
    for l in &cold.links {
        assert_eq!(l.packets + l.drops, offered_to(&l.id), "{}", l.id);
    }
}

/// A flow with count = 3 appears as id#0..id#2.
#[test]
fn counted_flows_are_numbered() {
    let r = run(json!({
        "duration_s": 2.0,
        "links": [link("l", 10.0, 10.0, json!({"kind": "droptail", "ms": 50}))],
        "flows": [{"id": "u", "protocol": "tcp", "paths": [["l"]], "count": 3}]
    }));
    let ids: Vec<&str> = r.flows.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["u#0", "u#1", "u#2"]);
}

/// Slow start into a deep drop-tail buffer loses hundreds of packets of one window. SACK
/// recovery (RFC 6675) repairs them in a few round trips, so the flow keeps the link busy;
/// NewReno without SACK repairs one hole per round trip (RFC 6582 §1) and stalls for seconds.
#[test]
fn sack_repairs_a_slow_start_overshoot_quickly() {
    let run_with = |sack: bool| {
        let r = run(json!({
            "duration_s": 60.0, "seed": 2,
            "links": [link("l", 20.0, 25.0, json!({"kind": "droptail", "ms": 1000}))],
            "flows": [{"id": "f", "protocol": "tcp", "paths": [["l"]], "rcvbuf_bytes": 16_000_000,
                       "sndbuf_bytes": 16_000_000, "tcp": {"sack": sack}}]
        }));
        flow(&r, "f").goodput_mbps
    };
    let with_sack = run_with(true);
    let without = run_with(false);
    println!("goodput with SACK {with_sack:.2}, NewReno {without:.2} Mbit/s");
    assert!(with_sack >= 0.9 * payload_mbps(20.0), "SACK: {with_sack}");
    assert!(
        without < with_sack,
        "NewReno {without} should not beat SACK {with_sack}"
    );
}

/// NewReno resets the retransmission timer on the first partial ACK of a recovery only
/// (RFC 6582 §3.2 step 3, the "Impatient" variant of §4): a window that lost many segments ends
/// in a timeout about an RTO after that ACK, not after one round trip per lost segment. Slow
/// start into 100 Mbit/s at 100 ms with a 100-packet buffer loses about 160 segments of one
/// window near 0.7 s; one round trip each would keep the recovery going for about 16 s.
#[test]
fn newreno_ends_a_recovery_of_many_losses_with_a_timeout() {
    let r = run(json!({
        "duration_s": 20.0, "seed": 1,
        "links": [link("l", 100.0, 50.0, json!({"kind": "droptail", "packets": 100}))],
        "flows": [{"id": "f", "protocol": "tcp", "cc": "reno", "paths": [["l"]],
                   "rcvbuf_bytes": 268_435_456u64, "sndbuf_bytes": 268_435_456u64,
                   "tcp": {"sack": false}}],
        "trace": ["cwnd"], "trace_interval_ms": 10.0
    }));
    let traces = r.traces.as_ref().expect("traces");
    // A timeout leaves one segment of window; nothing else takes it below two once slow start
    // has grown it (the trace starts at zero, before the handshake).
    let first_timeout_s = traces
        .time_s
        .iter()
        .zip(&traces.cwnd[0].values)
        .skip_while(|(_, &w)| w < 10.0 * MSS)
        .find(|(_, &w)| w < 2.0 * MSS)
        .map(|(&t, _)| t);
    println!(
        "first timeout near {first_timeout_s:?} s; timeouts {}",
        flow(&r, "f").subflows[0].timeouts
    );
    // The first partial ACK comes a round trip after the losses (about 0.85 s); the Linux RTO
    // is then srtt (up to 0.1 s of propagation and 0.12 s of queue) plus 0.2 s.
    assert!(
        first_timeout_s.is_some_and(|t| t <= 1.5),
        "first timeout at {first_timeout_s:?} s"
    );
}

/// A flow whose application stops writing gives its share back: two Reno flows share a
/// 10 Mbit/s link until one stops at 10 s; the other then fills the link (one BDP of buffer, as
/// in the first test), and the stopped flow delivers no more than the link could carry while it
/// wrote plus what its send buffer held.
#[test]
fn a_flow_that_stops_writing_leaves_the_link_to_the_others() {
    let sndbuf = 1_000_000u64;
    let r = run(json!({
        "duration_s": 30.0, "seed": 3,
        "links": [link("l", 10.0, 10.0, json!({"kind": "droptail", "packets": bdp_packets(10.0, 20.0)}))],
        "flows": [
            {"id": "stays", "protocol": "tcp", "cc": "reno", "paths": [["l"]]},
            {"id": "leaves", "protocol": "tcp", "cc": "reno", "paths": [["l"]], "stop_s": 10.0,
             "sndbuf_bytes": sndbuf}
        ],
        "trace": ["cwnd"], "trace_interval_ms": 100.0
    }));
    let stays = flow(&r, "stays");
    let leaves = flow(&r, "leaves");
    let link_bytes_per_s = payload_mbps(10.0) * 1e6 / 8.0;
    assert!(
        (leaves.bytes_delivered as f64) <= link_bytes_per_s * 10.0 + sndbuf as f64,
        "the stopped flow delivered {} bytes",
        leaves.bytes_delivered
    );
    assert!(leaves.bytes_delivered > 0);
    // After the other stops (and its last bytes drain), the remaining flow has the link.
    assert!(
        stays.bytes_delivered as f64 >= 0.9 * link_bytes_per_s * 19.0,
        "the remaining flow delivered {} bytes, the link carries {link_bytes_per_s:.0} a second",
        stays.bytes_delivered
    );
    // The stopped flow's window stops moving once it has nothing left to send.
    let traces = r.traces.as_ref().expect("traces");
    let cwnd = &traces.cwnd[1].values;
    let at = |t: f64| (t / 0.1).round() as usize;
    assert!(
        cwnd[at(20.0)..].windows(2).all(|w| w[0] == w[1]),
        "the stopped flow's window changed after 20 s"
    );
}

#[test]
fn a_stop_at_or_before_the_start_is_refused() {
    let s: mpsim::Scenario = serde_json::from_value(json!({
        "duration_s": 10.0,
        "links": [link("l", 10.0, 10.0, json!({"kind": "droptail", "packets": 20}))],
        "flows": [{"id": "f", "protocol": "tcp", "paths": [["l"]], "start_s": 2.0, "stop_s": 2.0}]
    }))
    .expect("parses");
    let e = s.validate().expect_err("a stop at the start is refused");
    assert_eq!(e.field, "flows[0].stop_s");
    assert!(e.message.contains("after start_s (2)"), "{}", e.message);
}

/// The `srtt` trace lies between the path's bounds: at least the propagation round trip plus
/// one packet's serialisation, at most that plus a full queue's wait (50 packets at 1.2 ms).
#[test]
fn the_srtt_trace_lies_between_the_empty_and_the_full_queue() {
    let r = run(json!({
        "duration_s": 20.0,
        "links": [link("l", 10.0, 10.0, json!({"kind": "droptail", "packets": 50}))],
        "flows": [{"id": "f", "protocol": "tcp", "cc": "reno", "paths": [["l"]]}],
        "trace": ["srtt"], "trace_interval_ms": 100.0
    }));
    let traces = r.traces.as_ref().expect("traces");
    let srtt = &traces.srtt[0];
    assert_eq!(srtt.name, "f/0");
    assert_eq!(srtt.values.len(), traces.time_s.len());
    assert_eq!(srtt.values[0], 0.0, "no sample before the first ACK");
    let serialisation_ms = PACKET * 8.0 / 10e6 * 1e3;
    let (low, high) = (20.0 + serialisation_ms, 20.0 + 51.0 * serialisation_ms);
    let measured: Vec<f64> = srtt.values[10..].to_vec();
    assert!(
        measured
            .iter()
            .all(|&v| v >= low - 1e-9 && v <= high + 1e-9),
        "srtt outside [{low}, {high}] ms: {:?}",
        measured
            .iter()
            .filter(|&&v| v < low || v > high)
            .take(5)
            .collect::<Vec<_>>()
    );
    // A Reno flow keeps the drop-tail queue partly full: the estimate is well above the floor.
    let mean = measured.iter().sum::<f64>() / measured.len() as f64;
    assert!(mean > low + 10.0, "mean srtt {mean} ms");
}

/// A flow that starts late has no window, RTT or advertised window before its handshake ends
/// (traced as 0, as the emulator reports a socket that does not exist yet), and has them after.
#[test]
fn a_late_flow_traces_nothing_before_its_start() {
    let r = run(json!({
        "duration_s": 4.0,
        "links": [link("l", 10.0, 10.0, json!({"kind": "droptail", "packets": 50}))],
        "flows": [
            {"id": "early", "protocol": "tcp", "cc": "reno", "paths": [["l"]]},
            {"id": "late", "protocol": "tcp", "cc": "reno", "paths": [["l"]], "start_s": 2.0}
        ],
        "trace": ["cwnd", "srtt", "rwnd"], "trace_interval_ms": 100.0
    }));
    let traces = r.traces.as_ref().expect("traces");
    let times = &traces.time_s;
    // The handshake takes one round trip of 20 ms: samples from 2.1 s on see the subflow.
    for series in [&traces.cwnd[1], &traces.srtt[1], &traces.rwnd[1]] {
        assert!(series.name.starts_with("late"), "{}", series.name);
        for (t, v) in times.iter().zip(&series.values) {
            if *t < 2.0 {
                assert_eq!(*v, 0.0, "{} at {t} s", series.name);
            } else if *t >= 2.1 {
                assert!(*v > 0.0, "{} at {t} s", series.name);
            }
        }
    }
    assert!(traces.cwnd[0].values[1..].iter().all(|v| *v > 0.0));
}

/// The `ssthresh` trace: none (0) before the first loss; each reduction sets it to half the
/// window the previous sample saw, with Linux's floor of two segments (Reno, RFC 5681 §3.1 with
/// Linux's cwnd in place of FlightSize) when the loss ends congestion avoidance (in slow start
/// the window moves too fast for samples 10 ms apart to tell); and in congestion avoidance the
/// window, restarting from it, grows by at most one segment per round trip, so by well under one
/// between samples 10 ms apart on a 100 ms path.
#[test]
fn the_ssthresh_trace_halves_the_window_at_each_reduction() {
    let r = run(json!({
        "duration_s": 60.0, "seed": 4,
        "links": [{"id": "l", "capacity_mbps": 20.0, "delay_ms": 50.0, "loss": 0.005,
                   "queue": {"kind": "droptail", "packets": 10000}}],
        "flows": [{"id": "f", "protocol": "tcp", "cc": "reno", "paths": [["l"]],
                   "rcvbuf_bytes": 16_000_000}],
        "trace": ["cwnd", "ssthresh"], "trace_interval_ms": 10.0
    }));
    let traces = r.traces.as_ref().expect("traces");
    let (cwnd, ssthresh) = (&traces.cwnd[0].values, &traces.ssthresh[0].values);
    assert_eq!(traces.ssthresh[0].name, "f/0");
    assert_eq!(ssthresh.len(), traces.time_s.len());
    let first = ssthresh
        .iter()
        .position(|&s| s > 0.0)
        .expect("a loss within 60 s");
    assert!(first > 0, "a threshold before any loss");
    let mut reductions = 0;
    for k in first..ssthresh.len() {
        let (c0, s0, c1, s1) = (cwnd[k - 1], ssthresh[k - 1], cwnd[k], ssthresh[k]);
        assert!(s1 > 0.0, "the threshold vanished at sample {k}");
        let avoiding = s0 > 0.0 && c0 >= s0;
        if s1 != s0 && avoiding {
            reductions += 1;
            let want = (c0 / 2.0).max(2.0 * MSS);
            assert!(
                (s1 - want).abs() <= 0.5 * MSS,
                "sample {k}: ssthresh {s1} after a window of {c0}, expected {want}"
            );
        } else if s1 == s0 && avoiding {
            assert!(
                c1 - c0 <= MSS,
                "sample {k}: window {c0} -> {c1} in one 10 ms step"
            );
        }
    }
    assert!(
        reductions >= 10,
        "{reductions} reductions in 60 s at 0.5 % loss"
    );
}

/// RACK (RFC 8985 §3.4) against FACK where a window is too small for duplicate ACKs: a fixed
/// receive buffer of three segments leaves at most two segments behind each random loss, so two
/// duplicate ACKs come back, below DupThresh (RFC 5681 §3.2), and two segments are SACKed, below
/// FACK's three. FACK therefore waits for the retransmission timer at nearly every loss; RACK
/// deems the segment lost a round trip plus min_rtt/4 after it was sent and repairs it by fast
/// retransmit, so the flow stays near rcvbuf/RTT. Only a retransmission lost again (1 % of
/// them) could still end in a timeout.
#[test]
fn rack_repairs_losses_that_leave_too_few_segments_for_duplicate_acks() {
    let rcvbuf = 3 * 1448u64;
    let run_with = |detection: &str| {
        let r = run(json!({
            "duration_s": 120.0, "seed": 3,
            "links": [{"id": "l", "capacity_mbps": 10.0, "delay_ms": 25.0, "loss": 0.01,
                       "queue": {"kind": "droptail", "packets": 100}}],
            "flows": [{"id": "f", "protocol": "tcp", "cc": "reno", "paths": [["l"]],
                       "rcvbuf_bytes": rcvbuf, "tcp": {"loss_detection": detection}}]
        }));
        let s = &flow(&r, "f").subflows[0];
        let drops = r.links[0].random_drops as f64;
        println!(
            "{detection}: goodput {:.3} Mbit/s, {} random drops, {} timeouts, {} fast retransmits",
            flow(&r, "f").goodput_mbps,
            drops,
            s.timeouts,
            s.fast_retransmits
        );
        assert!(drops >= 30.0, "too few losses to judge: {drops}");
        (
            flow(&r, "f").goodput_mbps,
            s.timeouts as f64 / drops,
            s.fast_retransmits as f64 / drops,
        )
    };
    let (fack_goodput, fack_timeouts, fack_fast) = run_with("fack");
    let (rack_goodput, rack_timeouts, rack_fast) = run_with("rack");
    assert!(
        fack_timeouts >= 0.9 && fack_fast <= 0.1,
        "FACK: timeouts per loss {fack_timeouts}, fast retransmits per loss {fack_fast}"
    );
    assert!(
        rack_timeouts <= 0.1 && rack_fast >= 0.9,
        "RACK: timeouts per loss {rack_timeouts}, fast retransmits per loss {rack_fast}"
    );
    // The window over the RTT (propagation plus one packet's serialisation each way is
    // negligible at 3 segments).
    let bound = rcvbuf as f64 * 8.0 / (0.050 + PACKET * 8.0 / 10e6) / 1e6;
    assert!(
        rack_goodput >= 0.9 * bound && rack_goodput > fack_goodput,
        "RACK {rack_goodput}, FACK {fack_goodput}, rcvbuf/RTT {bound}"
    );
}

/// The connecting side's last handshake ACK crosses the forward path just ahead of the initial
/// window of 10 segments, so a queue of N packets (the one being sent included) loses
/// max(0, 11 − N) of them in the first round. Measured on the kernel the emulator runs, TCP and
/// MPTCP alike (1.3 Mbit/s, 100 ms RTT): 2, 1 and 0 drops with queues of 9, 10 and 11 packets.
/// The link is slow enough that the ACK is still being sent when the window arrives, and the
/// run ends before the second round can reach the queue.
#[test]
fn the_handshake_ack_takes_a_queue_place_ahead_of_the_initial_window() {
    for protocol in ["tcp", "mptcp"] {
        for queue in [8u64, 9, 10, 11, 12] {
            let r = run(json!({
                "duration_s": 0.3, "seed": 1,
                "links": [link("slow", 1.2, 100.0, json!({"kind": "droptail", "packets": queue}))],
                "flows": [{"id": "f", "protocol": protocol, "cc": "reno", "paths": [["slow"]]}]
            }));
            let drops = r.links[0].drops;
            assert_eq!(
                drops,
                11u64.saturating_sub(queue),
                "{protocol}, queue of {queue} packets"
            );
        }
    }
}

/// Symmetry: two identical bulk flows in separate entries, starting together behind one
/// drop-tail queue, are interchangeable, so which one is listed first must not decide which
/// gets more. Events at one instant ran in scheduling order, and the first-listed flow won at
/// every seed; the seed now orders the tie, and over 24 configurations × 16 seeds each flow
/// wins between a quarter and three quarters of the runs that differ.
#[test]
fn the_flow_listed_first_does_not_win_by_being_first() {
    let mut state = 12_345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut first_wins, mut differ) = (0u32, 0u32);
    for _ in 0..24 {
        let capacity = 2.0 + 48.0 * next();
        let delay = 2.0 + 38.0 * next();
        let packets = 10 + (190.0 * next()) as u64;
        let cc = if next() < 0.5 { "reno" } else { "cubic" };
        for seed in 1..=16 {
            let f = |id: &str| {
                json!({"id": id, "protocol": "tcp", "cc": cc, "paths": [["l"]],
                       "rcvbuf_bytes": 4_194_304})
            };
            let r = run(json!({
                "duration_s": 20.0, "warmup_s": 2.0, "seed": seed,
                "links": [link("l", capacity, delay, json!({"kind": "droptail", "packets": packets}))],
                "flows": [f("a"), f("b")]
            }));
            let (a, b) = (flow(&r, "a").goodput_mbps, flow(&r, "b").goodput_mbps);
            if a != b {
                differ += 1;
                first_wins += u32::from(a > b);
            }
        }
    }
    let share = f64::from(first_wins) / f64::from(differ);
    assert!(
        (0.25..=0.75).contains(&share),
        "the first-listed flow won {first_wins} of {differ}"
    );
}

/// A link of 0.66 Mbit/s, 1.6 ms one way, with a one-packet buffer (a reference run of the
/// quickstart campaign's design): its BDP is a fifth of a segment, so any window of two or
/// more segments keeps it busy but for recoveries and timeouts, and every overflow loses a
/// burst. Whatever starts a recovery, its first retransmission goes out at once (RFC 6675 §5
/// step 4.3); begun by FACK's trigger it once waited for the flight to fall below ssthresh,
/// which it did not: 76 timeouts in 20 s and 0.15 Mbit/s, under a quarter of the link.
#[test]
fn reno_keeps_a_link_with_a_one_packet_buffer_busy() {
    let r = run(json!({
        "duration_s": 20.0, "seed": 2,
        "links": [link("l", 0.6640385462335698, 1.624914538115263,
                       json!({"kind": "droptail", "packets": 1}))],
        "flows": [{"id": "f", "protocol": "tcp", "cc": "reno", "paths": [["l"]]}]
    }));
    let f = flow(&r, "f");
    let g = f.goodput_mbps;
    let timeouts = f.subflows[0].timeouts;
    assert!(
        g >= 0.5 * payload_mbps(0.6640385462335698),
        "goodput {g} Mbit/s, {timeouts} timeouts"
    );
    assert!(timeouts < 20, "{timeouts} timeouts in 20 s");
}
