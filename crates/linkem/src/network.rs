//! The emulated network without any I/O (quinn-proto style): packets are injected with the time
//! they were read, walk their route hop by hop in time order, and come out of `pop_due` when their
//! last hop releases them. A link direction used by several routes is one shared queue.
//!
//! Each in-flight packet has exactly one pending event: its arrival at the next hop, or its
//! delivery. Events are ordered by (time, sequence) so that equal times keep injection order.

use crate::config::{Config, Direction};
use crate::link::{LinkDir, Outcome};
use crate::queue::Discipline;
use mpsim::rng::{RandomStream, StreamPurpose};
use mpsim::time::{BitsPerSec, SimTime};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::Ipv4Addr;

/// A route: the link directions crossed, in order, and the interface that receives the packet.
#[derive(Clone, Debug)]
pub struct Route {
    pub dirs: Vec<usize>,
    pub out_iface: usize,
}

struct InFlight<P> {
    payload: P,
    bytes: u32,
    route: u32,
    next_hop: u16,
    back_to_back: bool,
}

/// A packet whose last hop released it.
pub struct Delivery<P> {
    pub payload: P,
    pub bytes: u32,
    /// When it should have left the last hop.
    pub scheduled: SimTime,
    pub out_iface: usize,
    pub last_dir: usize,
    pub back_to_back: bool,
}

pub struct Network<P> {
    /// Direction 2·i is link i forward, 2·i+1 its reverse.
    pub dirs: Vec<LinkDir>,
    pub link_ids: Vec<String>,
    routes: Vec<Route>,
    route_by_pair: HashMap<(Ipv4Addr, Ipv4Addr), u32>,
    events: BinaryHeap<Reverse<(SimTime, u64, u32)>>,
    seq: u64,
    slab: Vec<Option<InFlight<P>>>,
    free: Vec<u32>,
}

impl<P> Network<P> {
    /// Build the link directions and routes of a configuration; `iface_of` maps a destination
    /// address to the interface index that owns it.
    pub fn build(cfg: &Config, iface_of: impl Fn(Ipv4Addr) -> Option<usize>) -> Network<P> {
        let mut dirs = Vec::with_capacity(2 * cfg.links.len());
        for (i, spec) in cfg.links.iter().enumerate() {
            let delay = SimTime::from_millis_f64(spec.delay_ms);
            // The same stream identities as the simulator: entity 2i forward, 2i+1 reverse.
            let fwd = 2 * i as u64;
            let rate = BitsPerSec::from_mbps(spec.capacity_mbps);
            dirs.push(LinkDir::new(
                Some(rate),
                delay,
                SimTime::from_millis_f64(spec.jitter_ms),
                spec.loss,
                Some(Discipline::from_spec(
                    spec.queue.as_ref(),
                    rate,
                    delay,
                    RandomStream::derive(cfg.seed, fwd, StreamPurpose::RedDrop),
                )),
                RandomStream::derive(cfg.seed, fwd, StreamPurpose::LinkLoss),
                RandomStream::derive(cfg.seed, fwd, StreamPurpose::LinkJitter),
            ));
            let rev_rate = spec.reverse_capacity_mbps.map(BitsPerSec::from_mbps);
            dirs.push(LinkDir::new(
                rev_rate,
                delay,
                SimTime::ZERO,
                0.0,
                rev_rate.map(|r| {
                    Discipline::from_spec(
                        spec.reverse_queue.as_ref(),
                        r,
                        delay,
                        RandomStream::derive(cfg.seed, fwd + 1, StreamPurpose::RedDrop),
                    )
                }),
                RandomStream::derive(cfg.seed, fwd + 1, StreamPurpose::LinkLoss),
                RandomStream::derive(cfg.seed, fwd + 1, StreamPurpose::LinkJitter),
            ));
        }
        let index: HashMap<&str, usize> = cfg
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| (l.id.as_str(), i))
            .collect();
        let mut routes = Vec::new();
        let mut route_by_pair = HashMap::new();
        for r in &cfg.routes {
            let Some(out_iface) = iface_of(r.dst) else {
                continue; // rejected by Config::validate
            };
            let dirs_of_route = r
                .hops
                .iter()
                .filter_map(|h| {
                    let i = *index.get(h.link.as_str())?;
                    Some(match h.direction {
                        Direction::Forward => 2 * i,
                        Direction::Reverse => 2 * i + 1,
                    })
                })
                .collect();
            route_by_pair.insert((r.src, r.dst), routes.len() as u32);
            routes.push(Route {
                dirs: dirs_of_route,
                out_iface,
            });
        }
        Network {
            dirs,
            link_ids: cfg.links.iter().map(|l| l.id.clone()).collect(),
            routes,
            route_by_pair,
            events: BinaryHeap::new(),
            seq: 0,
            slab: Vec::new(),
            free: Vec::new(),
        }
    }

    pub fn route_of(&self, src: Ipv4Addr, dst: Ipv4Addr) -> Option<u32> {
        self.route_by_pair.get(&(src, dst)).copied()
    }

    /// Offer a packet read at `now` to the first hop of `route`. Returns false if it was
    /// dropped there.
    pub fn inject(&mut self, route: u32, now: SimTime, bytes: u32, payload: P) -> bool {
        let pkt = InFlight {
            payload,
            bytes,
            route,
            next_hop: 0,
            back_to_back: false,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = Some(pkt);
                s
            }
            None => {
                self.slab.push(Some(pkt));
                (self.slab.len() - 1) as u32
            }
        };
        self.step(slot, now)
    }

    /// Offer the packet in `slot` to its next hop at `t`; schedule its next event or free it.
    fn step(&mut self, slot: u32, t: SimTime) -> bool {
        let pkt = self.slab[slot as usize].as_mut().expect("live slot");
        let dir = self.routes[pkt.route as usize].dirs[pkt.next_hop as usize];
        match self.dirs[dir].offer(t, pkt.bytes) {
            Outcome::Forward { exit, back_to_back } => {
                pkt.next_hop += 1;
                pkt.back_to_back = back_to_back;
                self.seq += 1;
                self.events.push(Reverse((exit, self.seq, slot)));
                true
            }
            _ => {
                self.slab[slot as usize] = None;
                self.free.push(slot);
                false
            }
        }
    }

    /// Time of the earliest pending event.
    pub fn next_event(&self) -> Option<SimTime> {
        self.events.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Advance every pending event due by `now`; return the next packet to deliver, if any.
    pub fn pop_due(&mut self, now: SimTime) -> Option<Delivery<P>> {
        while let Some(&Reverse((t, _, slot))) = self.events.peek() {
            if t > now {
                return None;
            }
            self.events.pop();
            let pkt = self.slab[slot as usize].as_ref().expect("live slot");
            let route = &self.routes[pkt.route as usize];
            if (pkt.next_hop as usize) < route.dirs.len() {
                self.step(slot, t);
                continue;
            }
            let last_dir = route.dirs[route.dirs.len() - 1];
            let out_iface = route.out_iface;
            let pkt = self.slab[slot as usize].take().expect("live slot");
            self.free.push(slot);
            return Some(Delivery {
                payload: pkt.payload,
                bytes: pkt.bytes,
                scheduled: t,
                out_iface,
                last_dir,
                back_to_back: pkt.back_to_back,
            });
        }
        None
    }

    /// Bring every direction's backlog and queue integral up to `now`.
    pub fn advance_all(&mut self, now: SimTime) {
        for d in &mut self.dirs {
            d.advance(now);
        }
    }

    /// Packets in flight (queued, on the wire or propagating).
    pub fn in_flight(&self) -> usize {
        self.slab.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Hop, Interface, Route as RouteCfg};
    use mpsim::scenario::LinkSpec;

    fn link(id: &str, mbps: f64, delay_ms: f64, packets: u64) -> LinkSpec {
        LinkSpec {
            id: id.into(),
            capacity_mbps: mbps,
            delay_ms,
            queue: Some(mpsim::scenario::QueueSpec::Droptail {
                packets: Some(packets),
                bytes: None,
                ms: None,
            }),
            loss: 0.0,
            jitter_ms: 0.0,
            reverse_capacity_mbps: None,
            reverse_queue: None,
        }
    }

    fn ip(last: u8) -> Ipv4Addr {
        Ipv4Addr::new(198, 18, 0, last)
    }

    fn hop(link: &str, direction: Direction) -> Hop {
        Hop {
            link: link.into(),
            direction,
        }
    }

    /// Hosts 1 and 2 send to host 9; host 1 crosses `a` then `shared`, host 2 only `shared`.
    fn two_routes() -> Network<u32> {
        let cfg = Config {
            links: vec![
                link("a", 12.0, 5.0, 100_000),
                link("shared", 12.0, 10.0, 100_000),
            ],
            seed: 1,
            interfaces: vec![Interface {
                netns: "/dev/null".into(),
                name: "x".into(),
                addresses: vec![ip(1), ip(2), ip(9)],
            }],
            routes: vec![
                RouteCfg {
                    src: ip(1),
                    dst: ip(9),
                    hops: vec![
                        hop("a", Direction::Forward),
                        hop("shared", Direction::Forward),
                    ],
                },
                RouteCfg {
                    src: ip(2),
                    dst: ip(9),
                    hops: vec![hop("shared", Direction::Forward)],
                },
                RouteCfg {
                    src: ip(9),
                    dst: ip(1),
                    hops: vec![
                        hop("shared", Direction::Reverse),
                        hop("a", Direction::Reverse),
                    ],
                },
            ],
            status_path: "/dev/null".into(),
            trace_interval_ms: 100.0,
            spin_us: 0,
            realtime_priority: None,
        };
        cfg.validate().unwrap();
        Network::build(&cfg, |_| Some(0))
    }

    fn drain(net: &mut Network<u32>) -> Vec<(u32, SimTime)> {
        let mut out = Vec::new();
        while let Some(t) = net.next_event() {
            while let Some(d) = net.pop_due(t) {
                out.push((d.payload, d.scheduled));
            }
        }
        out
    }

    #[test]
    fn a_two_hop_packet_pays_both_serialisations_and_delays() {
        // 1500 B at 12 Mbit/s = 1 ms per hop: 1 + 5 + 1 + 10 = 17 ms.
        let mut net = two_routes();
        let r = net.route_of(ip(1), ip(9)).unwrap();
        net.inject(r, SimTime::ZERO, 1500, 7);
        assert_eq!(drain(&mut net), vec![(7, SimTime::from_millis(17))]);
    }

    #[test]
    fn the_ack_direction_is_a_pure_delay_by_default() {
        let mut net = two_routes();
        let r = net.route_of(ip(9), ip(1)).unwrap();
        net.inject(r, SimTime::from_millis(2), 52, 1);
        assert_eq!(drain(&mut net), vec![(1, SimTime::from_millis(17))]);
    }

    #[test]
    fn a_shared_link_serves_both_routes_in_arrival_order() {
        // Host 1's packet reaches `shared` at 6 ms (1 ms + 5 ms); host 2's packets arrive at
        // 5.5 ms and 6.5 ms. FIFO at `shared`: host 2's first (5.5→6.5), host 1's (6.5→7.5),
        // host 2's second (7.5→8.5), each then 10 ms of propagation.
        let mut net = two_routes();
        let r1 = net.route_of(ip(1), ip(9)).unwrap();
        let r2 = net.route_of(ip(2), ip(9)).unwrap();
        net.inject(r1, SimTime::ZERO, 1500, 1);
        // Arrivals must be injected in time order, as the event loop does.
        let mut out = Vec::new();
        while let Some(d) = net.pop_due(SimTime::from_millis_f64(5.5)) {
            out.push((d.payload, d.scheduled));
        }
        net.inject(r2, SimTime::from_millis_f64(5.5), 1500, 2);
        let t = SimTime::from_millis_f64(6.5);
        while let Some(d) = net.pop_due(t) {
            out.push((d.payload, d.scheduled));
        }
        net.inject(r2, t, 1500, 3);
        out.extend(drain(&mut net));
        assert_eq!(
            out,
            vec![
                (2, SimTime::from_millis_f64(16.5)),
                (1, SimTime::from_millis_f64(17.5)),
                (3, SimTime::from_millis_f64(18.5)),
            ]
        );
    }

    #[test]
    fn two_saturating_routes_share_the_capacity() {
        // Both hosts offer 2000 packets as fast as possible at `shared` (host 1 through `a`,
        // which has the same rate). Over the busy period `shared` delivers exactly its capacity.
        let mut net = two_routes();
        let r1 = net.route_of(ip(1), ip(9)).unwrap();
        let r2 = net.route_of(ip(2), ip(9)).unwrap();
        let mut deliveries = Vec::new();
        for k in 0..2000u64 {
            let now = SimTime(k * 500_000); // 24 Mbit/s offered in total
            while let Some(d) = net.pop_due(now) {
                deliveries.push(d.scheduled);
            }
            net.inject(r1, now, 1500, 1);
            net.inject(r2, now, 1500, 2);
        }
        deliveries.extend(drain(&mut net).into_iter().map(|(_, t)| t));
        assert_eq!(deliveries.len(), 4000);
        let first = deliveries[0];
        let last = *deliveries.last().unwrap();
        let rate = 3999.0 * 1500.0 * 8.0 / (last - first).as_secs_f64();
        assert!((rate - 12e6).abs() / 12e6 < 1e-3, "rate {rate}");
        assert_eq!(net.in_flight(), 0);
    }
}
