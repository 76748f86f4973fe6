//! One direction of a link: random loss at the entrance, a queue (drop-tail or RED), a
//! serialiser at the link rate and a propagation pipe (htsim's queue + pipe). The serialiser and
//! the pipe each keep at most one pending event.

use super::queue::{BufferLimit, DropTailQueue};
use super::red::RedQueue;
use crate::packet::Packet;
use crate::rng::RandomStream;
use crate::time::{BitsPerSec, SimTime};
use std::collections::VecDeque;

pub enum QueueDiscipline {
    DropTail(DropTailQueue),
    Red(RedQueue),
}

/// Counters of one link direction.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    /// Packets offered to the link (before loss and drops).
    pub offered: u64,
    /// Packets and bytes that finished serialisation.
    pub packets: u64,
    pub bytes: u64,
    pub queue_drops: u64,
    pub red_drops: u64,
    pub random_drops: u64,
    /// Nanoseconds spent serialising.
    pub busy_ns: u64,
    /// Integral of the queue length (packets) over time, packet·ns.
    pub queue_area: u128,
    pub max_queue_packets: u64,
}

impl LinkCounters {
    pub fn drops(&self) -> u64 {
        self.queue_drops + self.red_drops + self.random_drops
    }
}

/// What happened to a packet offered to a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Queued; the transmitter was idle, so schedule its completion at this time.
    StartTx(SimTime),
    Queued,
    Dropped,
}

pub struct LinkDir {
    pub name: String,
    pub rate: BitsPerSec,
    pub delay: SimTime,
    pub loss: f64,
    pub jitter: SimTime,
    pub discipline: QueueDiscipline,
    /// Packets waiting or being serialised (the head is on the wire when `busy`).
    pub queue: VecDeque<Packet>,
    pub queued_bytes: u64,
    pub busy: bool,
    /// Packets propagating, with their arrival times (non-decreasing).
    pub pipe: VecDeque<(SimTime, Packet)>,
    last_arrival: SimTime,
    last_queue_change: SimTime,
    loss_rng: RandomStream,
    jitter_rng: RandomStream,
    pub counters: LinkCounters,
    /// Counters at the end of the warm-up, subtracted in the report.
    pub counters_at_warmup: LinkCounters,
}

impl LinkDir {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: String,
        rate: BitsPerSec,
        delay: SimTime,
        loss: f64,
        jitter: SimTime,
        discipline: QueueDiscipline,
        loss_rng: RandomStream,
        jitter_rng: RandomStream,
    ) -> LinkDir {
        LinkDir {
            name,
            rate,
            delay,
            loss,
            jitter,
            discipline,
            queue: VecDeque::new(),
            queued_bytes: 0,
            busy: false,
            pipe: VecDeque::new(),
            last_arrival: SimTime::ZERO,
            last_queue_change: SimTime::ZERO,
            loss_rng,
            jitter_rng,
            counters: LinkCounters::default(),
            counters_at_warmup: LinkCounters::default(),
        }
    }

    fn account_queue(&mut self, now: SimTime) {
        let dt = now.0 - self.last_queue_change.0;
        self.counters.queue_area += self.queue.len() as u128 * dt as u128;
        self.last_queue_change = now;
    }

    /// Offer a packet to the link at `now`.
    pub fn enqueue(&mut self, pkt: Packet, now: SimTime) -> Admission {
        self.counters.offered += 1;
        if self.loss > 0.0 && self.loss_rng.bernoulli(self.loss) {
            self.counters.random_drops += 1;
            return Admission::Dropped;
        }
        let n = self.queue.len() as u64;
        let admitted = match &mut self.discipline {
            QueueDiscipline::DropTail(q) => {
                if q.admits(n, self.queued_bytes, pkt.wire_bytes) {
                    true
                } else {
                    self.counters.queue_drops += 1;
                    false
                }
            }
            QueueDiscipline::Red(red) => {
                if n >= red.limit_packets {
                    self.counters.queue_drops += 1;
                    false
                } else if red.early_drop(n, now) {
                    self.counters.red_drops += 1;
                    false
                } else {
                    true
                }
            }
        };
        if !admitted {
            return Admission::Dropped;
        }
        self.account_queue(now);
        self.queue.push_back(pkt);
        self.queued_bytes += pkt.wire_bytes as u64;
        let len = self.queue.len() as u64;
        if len > self.counters.max_queue_packets {
            self.counters.max_queue_packets = len;
        }
        if self.busy {
            Admission::Queued
        } else {
            self.busy = true;
            Admission::StartTx(now + self.rate.serialization_time(pkt.wire_bytes))
        }
    }

    /// The head packet finished serialisation at `now`. Returns (the arrival time to schedule if
    /// the pipe was empty, the completion time of the next transmission if any).
    pub fn tx_done(&mut self, now: SimTime) -> (Option<SimTime>, Option<SimTime>) {
        self.account_queue(now);
        let pkt = self
            .queue
            .pop_front()
            .expect("transmitting link has a head packet");
        self.queued_bytes -= pkt.wire_bytes as u64;
        let ser = self.rate.serialization_time(pkt.wire_bytes);
        self.counters.packets += 1;
        self.counters.bytes += pkt.wire_bytes as u64;
        self.counters.busy_ns += ser.0;
        let mut arrival = now + self.delay;
        if self.jitter.0 > 0 {
            arrival += SimTime((self.jitter_rng.uniform() * self.jitter.0 as f64) as u64);
            // Jitter never reorders: a packet cannot overtake the one ahead of it.
            arrival = arrival.max(self.last_arrival);
        }
        self.last_arrival = arrival;
        self.pipe.push_back((arrival, pkt));
        let arrival_event = (self.pipe.len() == 1).then_some(arrival);
        let next_tx = match self.queue.front() {
            Some(next) => Some(now + self.rate.serialization_time(next.wire_bytes)),
            None => {
                self.busy = false;
                if let QueueDiscipline::Red(red) = &mut self.discipline {
                    red.on_empty(now);
                }
                None
            }
        };
        (arrival_event, next_tx)
    }

    /// Finish the queue-length integral at the end of the run.
    pub fn close(&mut self, now: SimTime) {
        self.account_queue(now);
    }
}

/// Turn a queue spec into a discipline. `rate` sizes `ms` buffers; `default_bytes` is used when
/// the scenario gives no queue.
pub fn buffer_limit_from_ms(rate: BitsPerSec, ms: f64) -> BufferLimit {
    BufferLimit::Bytes((rate.0 * ms / 1000.0 / 8.0).round() as u64)
}
