//! The engine: builds the network and the connections from a scenario, runs the event loop
//! until the end of the run, and writes the report.

use crate::event::{Event, EventQueue};
use crate::mptcp::connection::Ctx;
use crate::mptcp::Connection;
use crate::report::{
    BlockSeries, FlowReport, LatencySummary, LinkReport, NamedSeries, Report, SubflowReport,
    Traces, FORMAT_VERSION,
};
use crate::rng::{RandomStream, StreamPurpose};
use crate::scenario::{Protocol, Scenario, TraceKind};
use crate::tcp::Subflow;
use crate::time::SimTime;
use crate::topology::{Network, PipeId};

/// Copies of a flow with `count > 1` start at random offsets within this window, so that
/// identical users do not move in lock-step; within half the time left when the run ends
/// sooner, so that none starts after the end and silently carries nothing.
const COPY_START_SPREAD: SimTime = SimTime(100_000_000);

/// When each copy of each flow entry starts, by entry and copy: the entry's `start_s`, and for
/// the copies of an entry with `count > 1` a random offset within `COPY_START_SPREAD` drawn from
/// the entry's own stream. The emulator starts its copies at these times too, so that both
/// backends run the same scenario.
pub fn copy_starts(scenario: &Scenario) -> Vec<Vec<SimTime>> {
    let end = SimTime::from_secs_f64(scenario.duration_s);
    scenario
        .flows
        .iter()
        .enumerate()
        .map(|(f, spec)| {
            let mut rng = RandomStream::derive(scenario.seed, f as u64, StreamPurpose::FlowStart);
            let first = SimTime::from_secs_f64(spec.start_s);
            let spread = COPY_START_SPREAD.min(SimTime(end.saturating_sub(first).0 / 2));
            (0..spec.count)
                .map(|_| {
                    if spec.count > 1 {
                        first + SimTime((rng.uniform() * spread.0 as f64) as u64)
                    } else {
                        first
                    }
                })
                .collect()
        })
        .collect()
}

/// Below this many connections their state stays in the processor's caches and loading the
/// next arrival's connection early (`Connection::warm`) is pure overhead.
const WARM_MIN_CONNECTIONS: usize = 64;

pub struct Simulator<'s> {
    scenario: &'s Scenario,
    net: Network,
    conns: Vec<Connection>,
    events: EventQueue,
    end: SimTime,
    warmup: SimTime,
    packets_delivered: u64,
    data_packets_delivered: u64,
    traces: Option<Traces>,
}

impl<'s> Simulator<'s> {
    /// Build a simulator for a validated scenario.
    pub fn new(scenario: &'s Scenario) -> Simulator<'s> {
        let mut net = Network::build(&scenario.links, scenario.seed);
        let mut events = EventQueue::new();
        let warmup = SimTime::from_secs_f64(scenario.warmup_s);
        let mut conns = Vec::new();
        // (time, connection, subflow) of every subflow's first moment to send.
        let mut starts: Vec<(SimTime, u32, u16)> = Vec::new();
        let copy_starts = copy_starts(scenario);
        for (f, spec) in scenario.flows.iter().enumerate() {
            for (k, &start) in copy_starts[f].iter().enumerate() {
                let id = if spec.count == 1 {
                    spec.id.clone()
                } else {
                    format!("{}#{}", spec.id, k)
                };
                let routes: Vec<_> = spec.paths.iter().map(|p| net.add_path(p)).collect();
                let index = conns.len() as u32;
                // Copies keep the entry's lifetime: each stops as long after its start as the
                // entry says.
                let stop = spec.stop_s.map_or(SimTime::MAX, |stop_s| {
                    start + SimTime::from_secs_f64(stop_s - spec.start_s)
                });
                let mut conn = Connection::new(id, index, spec, &routes, start, stop, warmup);
                // The first subflow can send after the three-way handshake. Both Linux MPTCP
                // implementations open the others only once the connection is fully
                // established, its first data acknowledged one round trip of the first path
                // later (out-of-tree `mptcp_create_subflows`, the upstream path manager), or
                // after `join_delay_s` when given; an MP_JOIN handshake then takes two round
                // trips of the subflow's own path before it carries data: SYN, SYN/ACK, ACK and
                // the ACK of that ACK (out-of-tree `pre_established`, upstream
                // `fully_established`).
                let established = start + routes[0].2;
                starts.push((established, index, 0));
                let join_start = established
                    + spec
                        .join_delay_s
                        .map(SimTime::from_secs_f64)
                        .unwrap_or(routes[0].2);
                for (i, route) in routes.iter().enumerate().skip(1) {
                    // The MP_JOIN's third ACK reaches the peer half a round trip before the
                    // ACK of it lets the subflow send.
                    conn.peer_learns_join(i, join_start + route.2 + SimTime(route.2 .0 / 2));
                    starts.push((join_start + route.2 + route.2, index, i as u16));
                }
                conns.push(conn);
            }
        }
        // Events at one instant run in the order they were scheduled. Subflows that start
        // together must not go in the order their flows are listed, which would hand the
        // first-listed the head of every shared queue at every seed: a seeded order of the
        // connections breaks the tie.
        let mut rank: Vec<u32> = (0..conns.len() as u32).collect();
        RandomStream::derive(scenario.seed, 0, StreamPurpose::StartOrder).shuffle(&mut rank);
        starts.sort_by_key(|&(t, conn, subflow)| (t, rank[conn as usize], subflow));
        for (t, conn, subflow) in starts {
            events.schedule(t, Event::SubflowStart { conn, subflow });
        }
        if warmup > SimTime::ZERO {
            events.schedule(warmup, Event::WarmupEnd);
        }
        let traces = if scenario.trace.iter().any(|t| *t != TraceKind::Blocks) {
            events.schedule(SimTime::ZERO, Event::TraceSample);
            Some(Traces::default())
        } else if scenario.trace.contains(&TraceKind::Blocks) {
            Some(Traces::default())
        } else {
            None
        };
        Simulator {
            scenario,
            net,
            conns,
            events,
            end: SimTime::from_secs_f64(scenario.duration_s),
            warmup,
            packets_delivered: 0,
            data_packets_delivered: 0,
            traces,
        }
    }

    fn conn_event(&mut self, conn: u32, event: Event, now: SimTime) {
        let mut ctx = Ctx {
            now,
            events: &mut self.events,
            net: &mut self.net,
        };
        self.conns[conn as usize].on_timer(event, &mut ctx);
    }

    fn sample_traces(&mut self, now: SimTime) {
        let Some(tr) = self.traces.as_mut() else {
            return;
        };
        let kinds = &self.scenario.trace;
        tr.time_s.push(now.as_secs_f64());
        if kinds.contains(&TraceKind::Cwnd) {
            sample_subflows(&mut tr.cwnd, &self.conns, |sf| sf.cwnd);
        }
        if kinds.contains(&TraceKind::Ssthresh) {
            sample_subflows(&mut tr.ssthresh, &self.conns, |sf| {
                if sf.ssthresh.is_finite() {
                    sf.ssthresh
                } else {
                    0.0
                }
            });
        }
        if kinds.contains(&TraceKind::Srtt) {
            sample_subflows(&mut tr.srtt, &self.conns, |sf| sf.rtt.srtt * 1e3);
        }
        if kinds.contains(&TraceKind::Rwnd) {
            for (k, c) in self.conns.iter().enumerate() {
                if tr.rwnd.len() <= k {
                    tr.rwnd.push(NamedSeries {
                        name: c.id.clone(),
                        values: Vec::new(),
                    });
                }
                // No window is advertised before the handshake (the emulator reads 0 there too).
                let rwnd = if c.subflows[0].established {
                    c.advertised_window() as f64
                } else {
                    0.0
                };
                tr.rwnd[k].values.push(rwnd);
            }
        }
        if kinds.contains(&TraceKind::Queue) {
            for (k, l) in self.net.links.iter_mut().enumerate() {
                if tr.queue.len() <= k {
                    tr.queue.push(NamedSeries {
                        name: l.name.clone(),
                        values: Vec::new(),
                    });
                }
                tr.queue[k].values.push(l.queue_len(now) as f64);
            }
        }
        let next = now + SimTime::from_millis_f64(self.scenario.trace_interval_ms);
        if next <= self.end {
            self.events.schedule(next, Event::TraceSample);
        }
    }

    /// The head of pipe `pipe_id` has arrived (the event for the packet behind it is already
    /// queued): put it on its next hop, or hand it to its endpoint when it has crossed them all.
    fn arrive(&mut self, pipe_id: PipeId, now: SimTime) {
        let pipe = &mut self.net.pipes[pipe_id as usize];
        if self.conns.len() >= WARM_MIN_CONNECTIONS {
            // With thousands of connections their state is rarely in cache. Loading it early
            // lets the memory fetches overlap this packet's work, in stages so that no fetch
            // waits for another: the connection two arrivals ahead (it holds where its
            // subflows are), the subflow of the next arrival (whose connection the previous
            // arrival loaded).
            if let Some((_, p)) = pipe.get(2) {
                std::hint::black_box(self.conns[p.conn as usize].warm_connection());
            }
            if let Some((_, p)) = pipe.get(1) {
                std::hint::black_box(self.conns[p.conn as usize].warm(p.subflow));
            }
        }
        let (_, mut pkt) = pipe.pop_front().expect("scheduled arrival has a packet");
        let next = pkt.hop + 1;
        match self.net.routes[pkt.route as usize].hops.get(next as usize) {
            Some(&next_hop) => {
                pkt.hop = next;
                self.net.enter_hop(next_hop, &pkt, now, &mut self.events);
            }
            None => {
                self.packets_delivered += 1;
                if pkt.kind == crate::packet::PacketKind::Data {
                    self.data_packets_delivered += 1;
                }
                let mut ctx = Ctx {
                    now,
                    events: &mut self.events,
                    net: &mut self.net,
                };
                self.conns[pkt.conn as usize].on_packet(&pkt, &mut ctx);
            }
        }
    }

    /// Run what is left up to the end (all of it, unless `run_until` ran a part), then report.
    pub fn run(mut self) -> Report {
        self.run_until(self.end);
        self.report()
    }

    /// When the run ends.
    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events.processed()
    }

    /// Process every event due at or before `limit` (the run's end at most), so that a caller
    /// can show progress between slices of a long run. Events are taken in the same order
    /// whatever the slices: a run in slices reports exactly what one `run` does.
    pub fn run_until(&mut self, limit: SimTime) {
        let limit = limit.min(self.end);
        loop {
            let net = &self.net;
            let next_arrival = |event| match event {
                Event::Arrival(pipe) => net.pipes[pipe as usize].get(1).map(|(t, _)| *t),
                _ => unreachable!("only arrivals come from a pipe"),
            };
            let Some((now, event)) = self.events.pop_until(limit, next_arrival) else {
                break;
            };
            match event {
                Event::Arrival(pipe) => self.arrive(pipe, now),
                Event::Rto { conn, .. }
                | Event::RackReorder { conn, .. }
                | Event::DelayedAck { conn, .. }
                | Event::SubflowStart { conn, .. }
                | Event::MptcpRetransmit { conn } => {
                    self.conn_event(conn, event, now);
                }
                Event::WarmupEnd => {
                    for c in &mut self.conns {
                        c.snapshot_warmup();
                    }
                    for l in &mut self.net.links {
                        l.counters_at_warmup = l.counters_at(now);
                    }
                }
                Event::TraceSample => self.sample_traces(now),
            }
        }
    }

    fn report(mut self) -> Report {
        let end = self.end;
        let measured = (end - self.warmup).as_secs_f64();
        for c in &mut self.conns {
            c.close(end);
        }
        let mbps = |bytes: u64| bytes as f64 * 8.0 / measured / 1e6;
        let mut flows = Vec::with_capacity(self.conns.len());
        let mut block_series = Vec::new();
        for c in &self.conns {
            let subflows: Vec<SubflowReport> = c
                .subflows
                .iter()
                .map(|sf| {
                    let path = self.scenario_path(c, sf.index as usize);
                    SubflowReport {
                        index: sf.index as usize,
                        path,
                        goodput_mbps: mbps(
                            sf.counters.bytes_delivered - sf.counters.bytes_delivered_at_warmup,
                        ),
                        bytes_delivered: sf.counters.bytes_delivered,
                        packets_sent: sf.counters.packets_sent,
                        retransmits: sf.counters.retransmits,
                        fast_retransmits: sf.counters.fast_retransmits,
                        timeouts: sf.counters.timeouts,
                        mean_srtt_ms: sf.rtt.mean_srtt(self.end) * 1e3,
                        max_cwnd_bytes: sf.counters.max_cwnd,
                        time_to_max_cwnd_s: if sf.established {
                            (sf.counters.max_cwnd_at.max(sf.start_time) - sf.start_time)
                                .as_secs_f64()
                        } else {
                            0.0
                        },
                    }
                })
                .collect();
            let (completion_s, block_latency) = match &c.app {
                crate::app::Application::Size { completed_at, .. } => {
                    (completed_at.map(|t| (t - c.start).as_secs_f64()), None)
                }
                crate::app::Application::Blocks(b) => {
                    if self.scenario.trace.contains(&TraceKind::Blocks) {
                        block_series.push(BlockSeries {
                            flow: c.id.clone(),
                            done_s: b.completed.iter().map(|(t, _)| t.as_secs_f64()).collect(),
                            latency_ms: b
                                .completed
                                .iter()
                                .map(|(_, l)| l.as_millis_f64())
                                .collect(),
                        });
                    }
                    let lat: Vec<f64> = b
                        .completed
                        .iter()
                        .filter(|(t, _)| *t >= self.warmup)
                        .map(|(_, l)| l.as_millis_f64())
                        .collect();
                    (None, summarize(lat))
                }
                crate::app::Application::Bulk => (None, None),
            };
            flows.push(FlowReport {
                id: c.id.clone(),
                protocol: match c.protocol {
                    Protocol::Tcp => "tcp".into(),
                    Protocol::Mptcp => "mptcp".into(),
                },
                cc: format!("{:?}", c.cc_kind).to_lowercase(),
                goodput_mbps: mbps(c.rb.rcv_nxt - c.counters.delivered_at_warmup),
                bytes_delivered: c.rb.rcv_nxt,
                retransmits: subflows.iter().map(|s| s.retransmits).sum(),
                reinjections: c.counters.reinjections,
                penalizations: c.counters.penalizations,
                rwnd_limited_s: c.counters.rwnd_limited_ns as f64 * 1e-9,
                peak_rcvbuf_bytes: c.rb.peak_occupancy,
                final_rcvbuf_bytes: c.rb.size,
                completion_s,
                block_latency,
                subflows,
            });
        }
        let final_counters: Vec<_> = self
            .net
            .links
            .iter_mut()
            .map(|l| l.counters_at(end))
            .collect();
        let links = self
            .scenario
            .links
            .iter()
            .zip(&self.net.pairs)
            .map(|(spec, pair)| {
                let c = final_counters[pair.forward as usize];
                let w = self.net.links[pair.forward as usize].counters_at_warmup;
                let offered = c.offered - w.offered;
                let drops = c.drops() - w.drops();
                LinkReport {
                    id: spec.id.clone(),
                    utilization: (c.busy_ns - w.busy_ns) as f64 * 1e-9 / measured,
                    packets: c.packets - w.packets,
                    bytes: c.bytes - w.bytes,
                    drops,
                    queue_drops: c.queue_drops - w.queue_drops,
                    red_drops: c.red_drops - w.red_drops,
                    random_drops: c.random_drops - w.random_drops,
                    loss_rate: if offered > 0 {
                        drops as f64 / offered as f64
                    } else {
                        0.0
                    },
                    mean_queue_packets: ((c.queue_area - w.queue_area) as f64
                        / (end - self.warmup).0 as f64),
                    max_queue_packets: c.max_queue_packets,
                }
            })
            .collect();
        let mut traces = self.traces.take();
        if let Some(t) = traces.as_mut() {
            t.blocks = block_series;
        }
        Report {
            format_version: FORMAT_VERSION,
            mpsim_version: crate::VERSION.to_string(),
            scenario: self.scenario.clone(),
            seed: self.scenario.seed,
            measured_s: measured,
            events: self.events.processed(),
            packets_delivered: self.packets_delivered,
            data_packets_delivered: self.data_packets_delivered,
            flows,
            links,
            traces,
        }
    }

    fn scenario_path(&self, c: &Connection, subflow: usize) -> Vec<String> {
        let base_id = c.id.split('#').next().unwrap_or(&c.id);
        self.scenario
            .flows
            .iter()
            .find(|f| f.id == base_id)
            .map(|f| f.paths[subflow].clone())
            .unwrap_or_default()
    }
}

/// One sample of `value` for every subflow, in series named `flow/subflow` (created at the first
/// sample; the set of subflows never changes during a run). 0 until the subflow is established,
/// as the emulator reports a subflow whose socket does not exist yet (a flow starting late
/// would otherwise show its initial window from time 0).
fn sample_subflows(
    series: &mut Vec<NamedSeries>,
    conns: &[Connection],
    value: impl Fn(&Subflow) -> f64,
) {
    let mut k = 0;
    for c in conns {
        for sf in &c.subflows {
            if series.len() <= k {
                series.push(NamedSeries {
                    name: format!("{}/{}", c.id, sf.index),
                    values: Vec::new(),
                });
            }
            series[k]
                .values
                .push(if sf.established { value(sf) } else { 0.0 });
            k += 1;
        }
    }
}

fn summarize(mut lat: Vec<f64>) -> Option<LatencySummary> {
    if lat.is_empty() {
        return None;
    }
    lat.sort_by(f64::total_cmp);
    let q = |p: f64| lat[(((lat.len() - 1) as f64) * p).round() as usize];
    Some(LatencySummary {
        count: lat.len() as u64,
        mean_ms: lat.iter().sum::<f64>() / lat.len() as f64,
        p50_ms: q(0.5),
        p95_ms: q(0.95),
        p99_ms: q(0.99),
        max_ms: *lat.last().expect("non-empty"),
    })
}

/// Run a validated scenario to completion.
pub fn run(scenario: &Scenario) -> Report {
    Simulator::new(scenario).run()
}
