//! What the orchestrator tells one linkem process: the scenario's links (the simulator's own
//! types), one TUN device per host interface, and the route of every (source, destination)
//! address pair as a list of link directions.

use mpsim::scenario::{LinkSpec, MAX_DELAY_MS};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::net::Ipv4Addr;
use std::path::PathBuf;

fn default_spin_us() -> u64 {
    15
}
fn default_trace_interval_ms() -> f64 {
    100.0
}

/// The shortest queue-sampling interval, ms: the shortest the traffic programs sample at and
/// the emulator backend asks for. The loop samples on its own clock: below the spin time its
/// timer never arms, and it would busy-poll and record a sample at every turn, holding a core
/// the emulated hosts' stacks need.
pub const MIN_SAMPLE_INTERVAL_MS: f64 = 1.0;

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
    /// Check what serde cannot: each link by the simulator's own rules (the network is built
    /// with the simulator's queue disciplines, which trust them), unique link ids, known
    /// destination addresses, unique routes.
    pub fn validate(&self) -> Result<(), String> {
        if self.links.is_empty() {
            return Err("links: expected at least one link".into());
        }
        let mut ids = BTreeSet::new();
        for (i, l) in self.links.iter().enumerate() {
            if l.id.is_empty() {
                return Err(format!("links[{i}].id: expected a non-empty link id"));
            }
            // Routes name links by id: a second link of the same id would silently take the
            // routes of the first.
            if !ids.insert(l.id.as_str()) {
                return Err(format!("links[{i}].id: link id '{}' is used twice", l.id));
            }
            l.validate(i)
                .map_err(|e| format!("{e} (link '{}')", l.id))?;
        }
        let mut pairs = BTreeSet::new();
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
        // A longer interval would fall past the end of the clock.
        if !(MIN_SAMPLE_INTERVAL_MS..=MAX_DELAY_MS).contains(&self.trace_interval_ms) {
            return Err(format!(
                "trace_interval_ms: expected milliseconds from {MIN_SAMPLE_INTERVAL_MS} to \
                 {MAX_DELAY_MS:e}, got {:?}",
                self.trace_interval_ms
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpsim::scenario::QueueSpec;

    fn config() -> Config {
        let addr = Ipv4Addr::new(198, 18, 0, 1);
        serde_json::from_value(serde_json::json!({
            "links": [
                {"id": "wifi", "capacity_mbps": 8.0, "delay_ms": 10.0},
                {"id": "3g", "capacity_mbps": 2.0, "delay_ms": 75.0},
            ],
            "interfaces": [{"netns": "/dev/null", "name": "t0", "addresses": [addr]}],
            "routes": [{
                "src": addr,
                "dst": addr,
                "hops": [
                    {"link": "wifi", "direction": "forward"},
                    {"link": "3g", "direction": "reverse"},
                ],
            }],
            "status_path": "/dev/null",
        }))
        .unwrap()
    }

    fn red(min: f64, max: f64, max_p: f64, weight: f64, limit: u64) -> Option<QueueSpec> {
        Some(QueueSpec::Red {
            min_packets: min,
            max_packets: max,
            max_p,
            weight,
            limit_packets: limit,
            gentle: true,
            instantaneous: false,
        })
    }

    fn droptail(packets: Option<u64>, ms: Option<f64>) -> Option<QueueSpec> {
        Some(QueueSpec::Droptail {
            packets,
            bytes: None,
            ms,
        })
    }

    #[test]
    fn a_well_formed_configuration_passes() {
        let mut cfg = config();
        cfg.links[1].queue = red(5.0, 15.0, 0.1, 0.002, 100);
        cfg.links[1].reverse_capacity_mbps = Some(1.0);
        cfg.links[1].reverse_queue = droptail(None, Some(20.0));
        assert_eq!(cfg.validate(), Ok(()));
    }

    /// Every link field the simulator refuses is refused here too, before the network is built
    /// from it, with the field's path and the link's id in the message.
    #[test]
    fn each_invalid_link_field_is_named_with_its_link() {
        type Edit = fn(&mut LinkSpec);
        let cases: [(Edit, &str); 17] = [
            (|l| l.loss = 1.5, "links[1].loss"),
            (|l| l.loss = f64::NAN, "links[1].loss"),
            (|l| l.loss = -0.2, "links[1].loss"),
            (|l| l.jitter_ms = -5.0, "links[1].jitter_ms"),
            (|l| l.jitter_ms = f64::NAN, "links[1].jitter_ms"),
            (|l| l.capacity_mbps = 0.0, "links[1].capacity_mbps"),
            // Beyond the nanosecond clock's range (MAX_DELAY_MS).
            (|l| l.delay_ms = 2e13, "links[1].delay_ms"),
            (
                |l| l.reverse_capacity_mbps = Some(0.0),
                "links[1].reverse_capacity_mbps",
            ),
            (
                |l| l.reverse_capacity_mbps = Some(-3.0),
                "links[1].reverse_capacity_mbps",
            ),
            (|l| l.queue = droptail(None, None), "links[1].queue"),
            (
                |l| l.queue = droptail(Some(10), Some(5.0)),
                "links[1].queue",
            ),
            (
                |l| l.queue = droptail(None, Some(f64::NAN)),
                "links[1].queue.ms",
            ),
            (
                |l| l.queue = red(15.0, 5.0, 0.1, 0.002, 100),
                "links[1].queue.max_packets",
            ),
            (
                |l| l.queue = red(5.0, 15.0, 7.0, 0.002, 100),
                "links[1].queue.max_p",
            ),
            (
                |l| l.queue = red(5.0, 15.0, 0.1, -1.0, 100),
                "links[1].queue.weight",
            ),
            (
                |l| l.queue = red(5.0, 15.0, 0.1, 0.002, 0),
                "links[1].queue.limit_packets",
            ),
            // Without a reverse capacity there is no reverse queue to give it to.
            (
                |l| l.reverse_queue = droptail(Some(10), None),
                "links[1].reverse_queue",
            ),
        ];
        for (edit, field) in cases {
            let mut cfg = config();
            edit(&mut cfg.links[1]);
            let e = cfg.validate().expect_err(field);
            assert!(
                e.starts_with(&format!("{field}: ")) && e.ends_with("(link '3g')"),
                "{field}: {e}"
            );
        }
    }

    #[test]
    fn a_link_id_used_twice_is_refused() {
        let mut cfg = config();
        cfg.links[1].id = "wifi".into();
        assert_eq!(
            cfg.validate(),
            Err("links[1].id: link id 'wifi' is used twice".into())
        );
    }

    #[test]
    fn a_trace_interval_the_loop_cannot_keep_is_refused() {
        for ms in [0.0, 1e-9, 0.001, 0.999, 1e300, f64::NAN] {
            let mut cfg = config();
            cfg.trace_interval_ms = ms;
            let e = cfg.validate().expect_err("refused");
            assert!(e.starts_with("trace_interval_ms: "), "{e}");
        }
        let mut cfg = config();
        cfg.trace_interval_ms = MIN_SAMPLE_INTERVAL_MS;
        assert_eq!(cfg.validate(), Ok(()));
    }
}
