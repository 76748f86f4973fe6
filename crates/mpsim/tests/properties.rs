//! Property tests: random valid scenarios never make the engine panic, and the connection level
//! keeps its invariants (every byte delivered once, in order, never more than was written).

mod common;
use proptest::prelude::*;
use serde_json::{json, Value};

fn queue() -> impl Strategy<Value = Value> {
    prop_oneof![
        (1u64..300).prop_map(|p| json!({"kind": "droptail", "packets": p})),
        (1500u64..400_000).prop_map(|b| json!({"kind": "droptail", "bytes": b})),
        (0.0f64..500.0).prop_map(|ms| json!({"kind": "droptail", "ms": ms})),
        // The buffer above min_packets, or RED never drops early (refused as invalid).
        (1.0f64..30.0, 1.5f64..3.0, 0.01f64..1.0, 1u64..300).prop_map(|(min, k, p, above)| json!({
            "kind": "red", "min_packets": min, "max_packets": min * k, "max_p": p,
            "limit_packets": min.ceil() as u64 + above
        })),
    ]
}

fn link(i: usize) -> impl Strategy<Value = Value> {
    (0.2f64..100.0, 0.0f64..150.0, prop_oneof![Just(0.0), 0.0f64..0.05], prop_oneof![Just(0.0), 0.0f64..20.0],
     proptest::option::of(queue()), proptest::option::of(1.0f64..50.0))
        .prop_map(move |(c, d, loss, jitter, q, rev)| {
            let mut v = json!({"id": format!("l{i}"), "capacity_mbps": c, "delay_ms": d, "loss": loss, "jitter_ms": jitter});
            if let Some(q) = q { v["queue"] = q; }
            if let Some(r) = rev { v["reverse_capacity_mbps"] = json!(r); }
            v
        })
}

fn flow(i: usize, nlinks: usize) -> impl Strategy<Value = Value> {
    let path = proptest::collection::btree_set(0..nlinks, 1..=nlinks)
        .prop_map(|s| s.into_iter().map(|k| format!("l{k}")).collect::<Vec<_>>());
    (
        any::<bool>(),
        proptest::collection::vec(path, 1..4),
        prop_oneof![Just("reno"), Just("cubic"), Just("lia"), Just("olia"), Just("balia")],
        prop_oneof![Just("minrtt"), Just("roundrobin"), Just("redundant"), Just("linger")],
        prop_oneof![Just("off"), Just("nsdi12"), Just("conext13")],
        proptest::option::of(2000u64..2_000_000),
        prop_oneof![
            Just(json!({"kind": "bulk"})),
            // Blocks small enough to be many, within the run's limit of their number.
            (200u64..100_000).prop_map(|b| json!({"kind": "blocks", "block_bytes": b})),
            (1u64..3_000_000).prop_map(|b| json!({"kind": "size", "bytes": b})),
        ],
        1u32..3,
        0.0f64..1.0,
        any::<bool>(),
        // How long the application writes, when it stops before the end.
        proptest::option::of(0.01f64..3.0),
        (
            prop_oneof![Just("fack"), Just("rack")],
            prop_oneof![Just("per_ack"), Just("per_round")],
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just("rfc9438"), Just("linux")],
            prop_oneof![Just("classic"), Just("linux")],
        ),
    )
        .prop_map(move |(mptcp, paths, cc, sched, pen, rcvbuf, app, count, start, delack, writes_for, (detection, check, prr, restart, cubic, drs))| {
            let paths = if mptcp { paths } else { paths[..1].to_vec() };
            let mut v = json!({
                "id": format!("f{i}"), "protocol": if mptcp {"mptcp"} else {"tcp"}, "cc": cc,
                "scheduler": sched, "penalization": pen, "paths": paths, "app": app, "count": count,
                "start_s": start, "tcp": {"delayed_ack": delack, "loss_detection": detection,
                        "cwnd_limited_check": check, "slow_start_after_idle": restart,
                        "cubic_variant": cubic, "drs_variant": drs}
            });
            // PRR is modelled with RACK only.
            if detection == "rack" { v["tcp"]["prr"] = json!(prr); }
            if let Some(b) = rcvbuf { v["rcvbuf_bytes"] = json!(b); }
            if let Some(w) = writes_for { v["stop_s"] = json!(start + w); }
            v
        })
}

fn scenario() -> impl Strategy<Value = Value> {
    (1usize..4).prop_flat_map(|nl| {
        let links: Vec<_> = (0..nl).map(link).collect();
        (
            links,
            (1usize..4).prop_flat_map(move |nf| (0..nf).map(|i| flow(i, nl)).collect::<Vec<_>>()),
            1.0f64..4.0,
            any::<u64>(),
        )
            .prop_map(|(links, flows, dur, seed)| {
                json!({"duration_s": dur, "seed": seed, "links": links, "flows": flows,
                                                     "trace": ["cwnd", "ssthresh", "srtt", "rwnd", "queue", "blocks"]})
            })
    })
}

proptest! {
    // 96 cases in `make test`; PROPTEST_CASES=N runs a deeper search.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96)
    ))]

    #[test]
    fn random_scenarios_run_and_keep_invariants(v in scenario()) {
        let s = common::scenario(v);
        let r = mpsim::sim::run(&s);
        for (spec_flow, reports) in s.flows.iter().map(|f| (f, r.flows.iter().filter(move |x| x.id.split('#').next() == Some(f.id.as_str())))) {
            for f in reports {
                if let mpsim::scenario::AppSpec::Size { bytes } = spec_flow.app {
                    prop_assert!(f.bytes_delivered <= bytes, "{} delivered {} of {}", f.id, f.bytes_delivered, bytes);
                    if f.completion_s.is_some() {
                        prop_assert_eq!(f.bytes_delivered, bytes);
                    }
                }
                let cap: f64 = spec_flow.paths.iter().map(|p| {
                    p.iter().map(|l| s.links.iter().find(|x| &x.id == l).unwrap().capacity_mbps).fold(f64::INFINITY, f64::min)
                }).sum();
                prop_assert!(f.goodput_mbps <= cap * 1.0001 + 1e-9, "{} goodput {} above path capacity {}", f.id, f.goodput_mbps, cap);
                let sub_bytes: u64 = f.subflows.iter().map(|x| x.bytes_delivered).sum();
                prop_assert!(sub_bytes >= f.bytes_delivered, "connection delivered more than its subflows");
            }
        }
        for l in &r.links {
            prop_assert!(l.utilization <= 1.0 + 1e-9, "link {} utilization {}", l.id, l.utilization);
        }
    }
}

proptest! {
    // Each case runs its scenario twice; 24 cases in `make test`.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(24)
    ))]

    /// Progress display runs a scenario in slices; the slices must not change what it reports.
    #[test]
    fn a_run_in_slices_reports_what_one_run_does(
        v in scenario(),
        mut cuts in proptest::collection::vec(0.0f64..1.2, 0..12),
    ) {
        let s = common::scenario(v);
        let whole = serde_json::to_string(&mpsim::sim::run(&s)).unwrap();
        let mut sim = mpsim::sim::Simulator::new(&s);
        cuts.sort_by(f64::total_cmp);
        let end = sim.end();
        for cut in cuts {
            sim.run_until(mpsim::time::SimTime((end.0 as f64 * cut) as u64));
        }
        let sliced = serde_json::to_string(&sim.run()).unwrap();
        prop_assert!(whole == sliced, "a run in slices differs from one run");
    }
}
