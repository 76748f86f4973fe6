//! The network: link directions, pure delay lines and routes. A route is the list of hops a
//! packet crosses (htsim: "a packet carries its route"); a link used by several routes is a
//! shared bottleneck because they share its queue.
//!
//! Every hop ends in a pipe, the FIFO of packets propagating to its far end with their arrival
//! times. The pipes are kept together, one list indexed by [`PipeId`] (the link directions'
//! first, then the delay lines'), so that the event loop reaches the pipe of an arrival in one
//! step whatever kind of hop it ends.

pub mod delay;
pub mod discipline;
pub mod link;
pub mod queue;
pub mod red;

use crate::event::{Event, EventQueue};
use crate::packet::Packet;
use crate::rng::{RandomStream, StreamPurpose};
use crate::scenario::LinkSpec;
use crate::time::{BitsPerSec, SimTime};
use delay::DelayLine;
use discipline::QueueDiscipline;
use link::LinkDir;
use std::collections::{BTreeMap, VecDeque};

/// One step of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hop {
    /// Through a link direction (queue, serialiser, pipe).
    Link(u32),
    /// Through a pure delay line.
    Delay(u32),
}

/// Index of a pipe in [`Network::pipes`].
pub type PipeId = u32;

/// Packets propagating on a hop, with their arrival times (non-decreasing).
pub type Pipe = VecDeque<(SimTime, Packet)>;

#[derive(Clone, Debug)]
pub struct Route {
    pub hops: Vec<Hop>,
}

/// The two directions of one scenario link.
pub struct LinkPair {
    pub forward: u32,
    /// A queued reverse direction, when the scenario gives it a capacity.
    pub reverse: Option<u32>,
    pub delay: SimTime,
}

#[derive(Default)]
pub struct Network {
    pub links: Vec<LinkDir>,
    pub delay_lines: Vec<DelayLine>,
    /// The pipe of link direction `l` is `pipes[l]`, that of delay line `d` `pipes[links + d]`
    /// (every link direction exists before the first delay line).
    pub pipes: Vec<Pipe>,
    pub routes: Vec<Route>,
    pub pairs: Vec<LinkPair>,
    pub pair_by_id: BTreeMap<String, usize>,
    delay_line_by_ns: BTreeMap<u64, u32>,
    /// Routes are shared by every path that crosses the same hops: with thousands of flows on a
    /// few paths, the route a packet reads stays in cache.
    route_by_hops: BTreeMap<Vec<Hop>, u32>,
}

impl Network {
    pub fn build(links: &[LinkSpec], seed: u64) -> Network {
        let mut net = Network::default();
        for (i, spec) in links.iter().enumerate() {
            let rate = BitsPerSec::from_mbps(spec.capacity_mbps);
            let delay = SimTime::from_millis_f64(spec.delay_ms);
            let entity = 2 * i as u64;
            let forward = net.links.len() as u32;
            net.links.push(LinkDir::new(
                spec.id.clone(),
                rate,
                delay,
                spec.loss,
                SimTime::from_millis_f64(spec.jitter_ms),
                QueueDiscipline::from_spec(
                    spec.queue.as_ref(),
                    rate,
                    delay,
                    RandomStream::derive(seed, entity, StreamPurpose::RedDrop),
                ),
                RandomStream::derive(seed, entity, StreamPurpose::LinkLoss),
                RandomStream::derive(seed, entity, StreamPurpose::LinkJitter),
            ));
            let reverse = spec.reverse_capacity_mbps.map(|mbps| {
                let rate = BitsPerSec::from_mbps(mbps);
                let id = net.links.len() as u32;
                net.links.push(LinkDir::new(
                    format!("{}/reverse", spec.id),
                    rate,
                    delay,
                    0.0,
                    SimTime::ZERO,
                    QueueDiscipline::from_spec(
                        spec.reverse_queue.as_ref(),
                        rate,
                        delay,
                        RandomStream::derive(seed, entity + 1, StreamPurpose::RedDrop),
                    ),
                    RandomStream::derive(seed, entity + 1, StreamPurpose::LinkLoss),
                    RandomStream::derive(seed, entity + 1, StreamPurpose::LinkJitter),
                ));
                id
            });
            net.pair_by_id.insert(spec.id.clone(), net.pairs.len());
            net.pairs.push(LinkPair {
                forward,
                reverse,
                delay,
            });
        }
        net.pipes = net.links.iter().map(|_| Pipe::new()).collect();
        net
    }

    /// Put a packet on `hop` (its next one); a pipe that was empty gets its arrival event.
    pub fn enter_hop(&mut self, hop: Hop, pkt: &Packet, now: SimTime, events: &mut EventQueue) {
        let (id, arrival) = match hop {
            Hop::Link(l) => match self.links[l as usize].enqueue(pkt, now) {
                Some(t) => (l, t),
                None => return,
            },
            Hop::Delay(d) => (
                self.links.len() as u32 + d,
                self.delay_lines[d as usize].arrival(now),
            ),
        };
        let pipe = &mut self.pipes[id as usize];
        pipe.push_back((arrival, *pkt));
        if pipe.len() == 1 {
            events.schedule(arrival, Event::Arrival(id));
        }
    }

    /// Put a packet on the first hop of its route (every route has at least one).
    #[inline(always)]
    pub fn send(&mut self, pkt: &Packet, now: SimTime, events: &mut EventQueue) {
        let first = self.routes[pkt.route as usize].hops[0];
        self.enter_hop(first, pkt, now, events);
    }

    fn delay_line(&mut self, delay: SimTime) -> u32 {
        if let Some(&id) = self.delay_line_by_ns.get(&delay.0) {
            return id;
        }
        let id = self.delay_lines.len() as u32;
        self.delay_lines.push(DelayLine::new(delay));
        self.pipes.push(Pipe::new());
        debug_assert_eq!(self.pipes.len(), self.links.len() + self.delay_lines.len());
        self.delay_line_by_ns.insert(delay.0, id);
        id
    }

    /// Add the forward (data) and reverse (ACK) routes of a path; returns their ids and the
    /// path's base round-trip time (propagation only).
    pub fn add_path(&mut self, path: &[String]) -> (u32, u32, SimTime) {
        let pairs: Vec<usize> = path.iter().map(|id| self.pair_by_id[id]).collect();
        let forward: Vec<Hop> = pairs
            .iter()
            .map(|&p| Hop::Link(self.pairs[p].forward))
            .collect();
        // The ACK path: the reverse of the data path; consecutive hops without a queued reverse
        // direction collapse into one delay line.
        let mut hops = Vec::new();
        let mut pending = SimTime::ZERO;
        for &p in pairs.iter().rev() {
            match self.pairs[p].reverse {
                Some(link) => {
                    if pending.0 > 0 {
                        hops.push(Hop::Delay(self.delay_line(pending)));
                        pending = SimTime::ZERO;
                    }
                    hops.push(Hop::Link(link));
                }
                None => pending += self.pairs[p].delay,
            }
        }
        if pending.0 > 0 || hops.is_empty() {
            hops.push(Hop::Delay(self.delay_line(pending)));
        }
        let rtt = pairs.iter().fold(SimTime::ZERO, |acc, &p| {
            acc + SimTime(self.pairs[p].delay.0.saturating_mul(2))
        });
        let fwd_id = self.route(forward);
        let rev_id = self.route(hops);
        (fwd_id, rev_id, rtt)
    }

    fn route(&mut self, hops: Vec<Hop>) -> u32 {
        if let Some(&id) = self.route_by_hops.get(&hops) {
            return id;
        }
        let id = self.routes.len() as u32;
        self.route_by_hops.insert(hops.clone(), id);
        self.routes.push(Route { hops });
        id
    }
}
