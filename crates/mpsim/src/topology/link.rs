//! One direction of a link: random loss at the entrance, a queue (drop-tail or RED) and a
//! serialiser at the link rate (htsim's queue; its pipe is the network's, see
//! [`super::Network`]).
//!
//! A FIFO served at a constant rate is deterministic once a packet is admitted: its
//! transmission ends at `max(now, previous end) + size/rate`. So admission computes that time at
//! once and the packet goes straight into the propagation pipe; the queue is kept only as the
//! list of end times of packets still being served or waiting, which gives the occupancy that
//! drop-tail and RED decide on. One pending event per link direction (the pipe's head) suffices,
//! and no event is spent on the end of each transmission.

use super::discipline::{QueueDiscipline, Verdict};
use crate::packet::Packet;
use crate::rng::RandomStream;
use crate::scenario::{HEADER_BYTES, MSS_BYTES};
use crate::time::{BitsPerSec, SimTime};
use std::collections::VecDeque;

/// Counters of one link direction.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinkCounters {
    /// Packets offered to the link (before loss and drops).
    pub offered: u64,
    /// Packets and bytes admitted for transmission.
    pub packets: u64,
    pub bytes: u64,
    pub queue_drops: u64,
    pub red_drops: u64,
    pub random_drops: u64,
    /// Nanoseconds spent serialising.
    pub busy_ns: u64,
    /// Integral of the number of packets queued or in transmission over time, packet·ns.
    pub queue_area: u128,
    pub max_queue_packets: u64,
}

impl LinkCounters {
    pub fn drops(&self) -> u64 {
        self.queue_drops + self.red_drops + self.random_drops
    }
}

pub struct LinkDir {
    pub name: String,
    pub rate: BitsPerSec,
    pub delay: SimTime,
    pub loss: f64,
    pub jitter: SimTime,
    pub discipline: QueueDiscipline,
    /// End of transmission and size of every packet still queued or being serialised.
    backlog: VecDeque<(SimTime, u32)>,
    backlog_bytes: u64,
    /// When the last admitted packet finishes serialisation.
    last_finish: SimTime,
    /// Serialisation time of a full 1500-byte packet and of a bare ACK, precomputed.
    full_packet_tx: SimTime,
    ack_tx: SimTime,
    /// Arrival time at the far end of the last packet admitted (arrival times never decrease).
    last_arrival: SimTime,
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
            backlog: VecDeque::new(),
            backlog_bytes: 0,
            last_finish: SimTime::ZERO,
            full_packet_tx: rate.serialization_time(MSS_BYTES + HEADER_BYTES),
            ack_tx: rate.serialization_time(HEADER_BYTES),
            last_arrival: SimTime::ZERO,
            loss_rng,
            jitter_rng,
            counters: LinkCounters::default(),
            counters_at_warmup: LinkCounters::default(),
        }
    }

    fn serialization_time(&self, wire_bytes: u32) -> SimTime {
        if wire_bytes == MSS_BYTES + HEADER_BYTES {
            self.full_packet_tx
        } else if wire_bytes == HEADER_BYTES {
            self.ack_tx
        } else {
            self.rate.serialization_time(wire_bytes)
        }
    }

    /// Forget packets whose transmission ended by `now`.
    fn drain_backlog(&mut self, now: SimTime) {
        while let Some(&(finish, bytes)) = self.backlog.front() {
            if finish > now {
                break;
            }
            self.backlog.pop_front();
            self.backlog_bytes -= bytes as u64;
        }
    }

    /// The counters as of time `t` (the current time): transmission time and queue time already
    /// booked for packets that will still be in the link after `t` are taken out.
    pub fn counters_at(&mut self, t: SimTime) -> LinkCounters {
        self.drain_backlog(t);
        let mut c = self.counters;
        c.busy_ns -= self.last_finish.saturating_sub(t).0.min(c.busy_ns);
        let pending: u128 = self
            .backlog
            .iter()
            .map(|(finish, _)| (*finish - t).0 as u128)
            .sum();
        c.queue_area -= pending.min(c.queue_area);
        c
    }

    /// Packets queued or being serialised at `now`.
    pub fn queue_len(&mut self, now: SimTime) -> usize {
        self.drain_backlog(now);
        self.backlog.len()
    }

    /// Offer a packet to the link at `now`: when it reaches the far end, or None if it was
    /// dropped.
    pub fn enqueue(&mut self, pkt: &Packet, now: SimTime) -> Option<SimTime> {
        self.counters.offered += 1;
        if self.loss > 0.0 && self.loss_rng.bernoulli(self.loss) {
            self.counters.random_drops += 1;
            return None;
        }
        self.drain_backlog(now);
        let n = self.backlog.len() as u64;
        if n == 0 {
            // The backlog is drained lazily: its emptying is told at the next arrival (again at
            // each one while it stays empty, which the discipline ignores).
            self.discipline.on_empty(self.last_finish.min(now));
        }
        match self
            .discipline
            .offer(n, self.backlog_bytes, pkt.wire_bytes, now)
        {
            Verdict::Admit => {}
            Verdict::Overflow => {
                self.counters.queue_drops += 1;
                return None;
            }
            Verdict::Early => {
                self.counters.red_drops += 1;
                return None;
            }
        }
        let tx = self.serialization_time(pkt.wire_bytes);
        let finish = self.last_finish.max(now) + tx;
        self.last_finish = finish;
        self.backlog.push_back((finish, pkt.wire_bytes));
        self.backlog_bytes += pkt.wire_bytes as u64;
        let len = self.backlog.len() as u64;
        if len > self.counters.max_queue_packets {
            self.counters.max_queue_packets = len;
        }
        self.counters.packets += 1;
        self.counters.bytes += pkt.wire_bytes as u64;
        self.counters.busy_ns += tx.0;
        // Little's law: the time this packet spends in the queue adds to the queue integral.
        self.counters.queue_area += (finish - now).0 as u128;
        let mut arrival = finish + self.delay;
        if self.jitter.0 > 0 {
            arrival += SimTime((self.jitter_rng.uniform() * self.jitter.0 as f64) as u64);
            // Jitter never reorders: a packet cannot overtake the one ahead of it.
            arrival = arrival.max(self.last_arrival);
        }
        self.last_arrival = arrival;
        Some(arrival)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamPurpose;
    use crate::topology::discipline::tests::half_weight_red;

    fn packet() -> Packet {
        Packet::full_segment(0, 0)
    }

    fn red_average(link: &LinkDir) -> f64 {
        let QueueDiscipline::Red(red) = &link.discipline else {
            unreachable!()
        };
        red.avg
    }

    /// RED's average decays by the time the queue sat empty (Floyd & Jacobson §11), counted
    /// once: from the last departure, or from a later arrival it refused, not from both.
    #[test]
    fn red_idle_time_is_counted_once() {
        let spec = half_weight_red();
        // 12 Mbit/s: a full packet takes 1 ms.
        let rate = BitsPerSec::from_mbps(12.0);
        let rng = |p| RandomStream::derive(1, 0, p);
        let discipline = QueueDiscipline::from_spec(
            Some(&spec),
            rate,
            SimTime::ZERO,
            rng(StreamPurpose::RedDrop),
        );
        let mut link = LinkDir::new(
            "l".into(),
            rate,
            SimTime::ZERO,
            0.0,
            SimTime::ZERO,
            discipline,
            rng(StreamPurpose::LinkLoss),
            rng(StreamPurpose::LinkJitter),
        );
        // Admitted at 0, gone at 1 ms.
        assert!(link.enqueue(&packet(), SimTime::ZERO).is_some());
        let QueueDiscipline::Red(red) = &mut link.discipline else {
            unreachable!()
        };
        red.avg = 1e9;
        // Idle since 1 ms: × 0.5^2, then × 0.5; far above 2·max, refused.
        assert!(link.enqueue(&packet(), SimTime::from_millis(3)).is_none());
        let after_refusal = 1e9 * 0.5f64.powi(3);
        assert!((red_average(&link) - after_refusal).abs() < 1e-3);
        // Idle since 3 ms, not since 1 ms again: × 0.5^10, then × 0.5.
        link.enqueue(&packet(), SimTime::from_millis(13));
        let expected = after_refusal * 0.5f64.powi(11);
        assert!(
            (red_average(&link) - expected).abs() < 1e-6,
            "avg {}",
            red_average(&link)
        );
    }
}
