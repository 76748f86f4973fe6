//! One direction of an emulated link: random loss at the entrance, a queue, a serialiser at the
//! link rate and a propagation delay with optional jitter that never reorders (htsim's queue +
//! pipe, the same model as the simulator's `topology::link`).
//!
//! The emulator runs in real time, so instead of scheduling a "serialisation done" event per
//! packet it computes each packet's departure when the packet arrives: a FIFO server of known
//! rate finishes packet k at `max(arrival_k, finish_{k-1}) + size_k / rate`. The backlog seen by an
//! arrival is then the packets whose finish time is still ahead; they are retired lazily. This is
//! exact as long as arrivals are offered in time order, which the event loop guarantees.

use crate::histogram::Histogram;
use crate::queue::{Discipline, Verdict};
use mpsim::rng::RandomStream;
use mpsim::time::{BitsPerSec, SimTime};
use serde::Serialize;
use std::collections::VecDeque;

/// What happens to a packet offered to a link direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It leaves the far end at `exit`. `back_to_back` is set when its serialisation started the
    /// instant the previous packet's ended (the link was busy: a rate measurement point).
    Forward {
        exit: SimTime,
        back_to_back: bool,
    },
    RandomDrop,
    QueueDrop,
    RedDrop,
}

/// Counters of one link direction, cumulative since the emulator started.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Counters {
    /// Packets offered to the link (before loss and drops).
    pub offered: u64,
    /// Packets and bytes admitted for transmission (neither lost nor dropped by the queue),
    /// counted on admission as the simulator counts them: over a window, the two backends'
    /// figures then differ by no change in the queue.
    pub packets: u64,
    pub bytes: u64,
    pub random_drops: u64,
    pub queue_drops: u64,
    pub red_drops: u64,
    /// Nanoseconds the serialiser was busy, up to the last `advance`.
    pub busy_ns: u64,
    /// Integral of the queue length (packets, including the one on the wire) over time,
    /// packet·ns; divide a difference by the elapsed time for the mean queue.
    pub queue_area_packet_ns: u128,
    pub max_queue_packets: u64,
    pub max_queue_bytes: u64,
    /// Highest queue since the previous status snapshot (reset by each snapshot).
    pub window_max_queue_packets: u64,
    /// Packets written to their destination with this direction as the last hop.
    pub delivered: u64,
    /// Release fidelity, measured on the last hop: bytes of back-to-back packets and the time
    /// between their actual releases, less what the configured jitter put between their
    /// scheduled exits (jitter is wanted, not a shortfall). Their ratio is the rate the emulator
    /// really achieved while the link was busy.
    pub busy_release_bytes: u64,
    pub busy_release_span_ns: u64,
}

pub struct LinkDir {
    /// None: infinitely fast (the default ACK direction): no queue, no serialisation.
    rate: Option<BitsPerSec>,
    delay: SimTime,
    jitter: SimTime,
    loss: f64,
    discipline: Option<Discipline>,
    /// Finish time, size and serialisation time of packets queued or on the wire, oldest
    /// first.
    in_system: VecDeque<(SimTime, u32, SimTime)>,
    /// Serialisation time of the packets already retired.
    busy_retired_ns: u64,
    queued_bytes: u64,
    busy_until: SimTime,
    last_arrival: SimTime,
    last_exit: SimTime,
    last_queue_change: SimTime,
    loss_rng: RandomStream,
    jitter_rng: RandomStream,
    pub counters: Counters,
    /// Release lateness of the packets this direction delivered (last hop), nanoseconds.
    pub lateness: Histogram,
    /// Monotonic and scheduled times of the previous release on the last hop, for the
    /// busy-rate measurement.
    last_release: Option<(u64, u64)>,
}

impl LinkDir {
    pub fn new(
        rate: Option<BitsPerSec>,
        delay: SimTime,
        jitter: SimTime,
        loss: f64,
        discipline: Option<Discipline>,
        loss_rng: RandomStream,
        jitter_rng: RandomStream,
    ) -> LinkDir {
        LinkDir {
            rate,
            delay,
            jitter,
            loss,
            discipline,
            in_system: VecDeque::new(),
            busy_retired_ns: 0,
            queued_bytes: 0,
            busy_until: SimTime::ZERO,
            last_arrival: SimTime::ZERO,
            last_exit: SimTime::ZERO,
            last_queue_change: SimTime::ZERO,
            loss_rng,
            jitter_rng,
            counters: Counters::default(),
            lateness: Histogram::default(),
            last_release: None,
        }
    }

    pub fn rate(&self) -> Option<BitsPerSec> {
        self.rate
    }

    pub fn describe_queue(&self) -> String {
        self.discipline
            .as_ref()
            .map_or_else(|| "none (unlimited rate)".to_string(), Discipline::describe)
    }

    /// Packets queued or on the wire at the last `advance`.
    pub fn queued_packets(&self) -> u64 {
        self.in_system.len() as u64
    }

    /// Retire every packet whose serialisation ended by `now`, integrating the queue length
    /// and the busy time (including the part of the current transmission already done).
    pub fn advance(&mut self, now: SimTime) {
        while let Some(&(finish, bytes, tx)) = self.in_system.front() {
            if finish > now {
                break;
            }
            self.integrate_to(finish);
            self.in_system.pop_front();
            self.queued_bytes -= bytes as u64;
            self.busy_retired_ns += tx.0;
            if self.in_system.is_empty() {
                if let Some(d) = self.discipline.as_mut() {
                    d.on_empty(finish);
                }
            }
        }
        self.integrate_to(now);
        let in_progress = match self.in_system.front() {
            Some(&(finish, _, tx)) => now.0.saturating_sub(finish.0 - tx.0),
            None => 0,
        };
        self.counters.busy_ns = self.busy_retired_ns + in_progress;
    }

    fn integrate_to(&mut self, t: SimTime) {
        if t > self.last_queue_change {
            let dt = (t - self.last_queue_change).0 as u128;
            self.counters.queue_area_packet_ns += self.in_system.len() as u128 * dt;
            self.last_queue_change = t;
        }
    }

    /// Offer a packet of `wire_bytes` arriving at `now`.
    pub fn offer(&mut self, now: SimTime, wire_bytes: u32) -> Outcome {
        // Arrivals must be offered in time order; clamp rather than corrupt the backlog if a
        // caller ever slips.
        let now = now.max(self.last_arrival);
        self.last_arrival = now;
        self.counters.offered += 1;
        let Some(rate) = self.rate else {
            let exit = (now + self.delay).max(self.last_exit);
            self.last_exit = exit;
            self.counters.packets += 1;
            self.counters.bytes += wire_bytes as u64;
            return Outcome::Forward {
                exit,
                back_to_back: false,
            };
        };
        if self.loss > 0.0 && self.loss_rng.bernoulli(self.loss) {
            self.counters.random_drops += 1;
            return Outcome::RandomDrop;
        }
        self.advance(now);
        let queued = self.in_system.len() as u64;
        if let Some(d) = self.discipline.as_mut() {
            match d.offer(queued, self.queued_bytes, wire_bytes, now) {
                Verdict::Admit => {}
                Verdict::Overflow => {
                    self.counters.queue_drops += 1;
                    return Outcome::QueueDrop;
                }
                Verdict::Early => {
                    self.counters.red_drops += 1;
                    return Outcome::RedDrop;
                }
            }
        }
        let back_to_back = queued > 0;
        let start = now.max(self.busy_until);
        let tx = rate.serialization_time(wire_bytes);
        let finish = start + tx;
        self.busy_until = finish;
        self.in_system.push_back((finish, wire_bytes, tx));
        self.queued_bytes += wire_bytes as u64;
        self.counters.packets += 1;
        self.counters.bytes += wire_bytes as u64;
        let len = self.in_system.len() as u64;
        self.counters.max_queue_packets = self.counters.max_queue_packets.max(len);
        self.counters.window_max_queue_packets = self.counters.window_max_queue_packets.max(len);
        self.counters.max_queue_bytes = self.counters.max_queue_bytes.max(self.queued_bytes);
        let mut exit = finish + self.delay;
        if self.jitter.0 > 0 {
            exit += SimTime((self.jitter_rng.uniform() * self.jitter.0 as f64) as u64);
        }
        // Jitter never reorders: a packet cannot overtake the one ahead of it.
        let exit = exit.max(self.last_exit);
        self.last_exit = exit;
        Outcome::Forward { exit, back_to_back }
    }

    /// A packet that left this direction as its last hop was written at monotonic `wall_ns`;
    /// it was due at `scheduled_ns` (same clock).
    pub fn record_release(
        &mut self,
        wall_ns: u64,
        scheduled_ns: u64,
        wire_bytes: u32,
        back_to_back: bool,
    ) {
        self.counters.delivered += 1;
        self.lateness.record(wall_ns.saturating_sub(scheduled_ns));
        if let (true, Some((prev_wall, prev_scheduled)), Some(rate)) =
            (back_to_back, self.last_release, self.rate)
        {
            // Behind the packet ahead, the serialiser spaced the exits by this packet's
            // transmission time and the jitter by whatever it drew: keep the first and what
            // the emulator added (the change in lateness), not the second.
            let tx = rate.serialization_time(wire_bytes).0 as i128;
            let actual = wall_ns as i128 - prev_wall as i128;
            let scheduled = scheduled_ns as i128 - prev_scheduled as i128;
            self.counters.busy_release_bytes += wire_bytes as u64;
            self.counters.busy_release_span_ns += (actual - scheduled + tx).max(0) as u64;
        }
        self.last_release = Some((wall_ns, scheduled_ns));
    }

    /// Reset the per-snapshot maxima.
    pub fn start_window(&mut self) {
        self.counters.window_max_queue_packets = self.in_system.len() as u64;
    }
}

/// A direction without rate, queue, loss or jitter: `delay` and nothing else. For tests here and
/// in the emulator's.
#[cfg(test)]
pub(crate) fn pure_delay(delay: SimTime) -> LinkDir {
    use mpsim::rng::StreamPurpose;
    LinkDir::new(
        None,
        delay,
        SimTime::ZERO,
        0.0,
        None,
        RandomStream::derive(1, 0, StreamPurpose::LinkLoss),
        RandomStream::derive(1, 0, StreamPurpose::LinkJitter),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpsim::packet::Packet;
    use mpsim::rng::StreamPurpose;
    use mpsim::topology::link::LinkDir as SimLinkDir;
    use mpsim::topology::queue::{BufferLimit as Limit, DropTailQueue};

    /// The simulator's link direction at `rate` with no delay, loss or jitter, its random
    /// streams derived from `seed`.
    fn simulated_link(rate: BitsPerSec, discipline: Discipline, seed: u64) -> SimLinkDir {
        let stream = |p| RandomStream::derive(seed, 0, p);
        SimLinkDir::new(
            "l".into(),
            rate,
            SimTime::ZERO,
            0.0,
            SimTime::ZERO,
            discipline,
            stream(StreamPurpose::LinkLoss),
            stream(StreamPurpose::LinkJitter),
        )
    }

    fn link(mbps: f64, delay_ms: f64, limit: Limit) -> LinkDir {
        LinkDir::new(
            Some(BitsPerSec::from_mbps(mbps)),
            SimTime::from_millis_f64(delay_ms),
            SimTime::ZERO,
            0.0,
            Some(Discipline::DropTail(DropTailQueue { limit })),
            RandomStream::derive(1, 0, StreamPurpose::LinkLoss),
            RandomStream::derive(1, 0, StreamPurpose::LinkJitter),
        )
    }

    /// A drop-tail link with jitter, its random streams derived from `seed`.
    fn jittered_link(mbps: f64, delay_ms: u64, jitter_ms: u64, packets: u64, seed: u64) -> LinkDir {
        LinkDir::new(
            Some(BitsPerSec::from_mbps(mbps)),
            SimTime::from_millis(delay_ms),
            SimTime::from_millis(jitter_ms),
            0.0,
            Some(Discipline::DropTail(DropTailQueue {
                limit: Limit::Packets(packets),
            })),
            RandomStream::derive(seed, 0, StreamPurpose::LinkLoss),
            RandomStream::derive(seed, 0, StreamPurpose::LinkJitter),
        )
    }

    fn exit(o: Outcome) -> SimTime {
        match o {
            Outcome::Forward { exit, .. } => exit,
            other => panic!("expected forward, got {other:?}"),
        }
    }

    #[test]
    fn a_lone_packet_takes_serialisation_plus_propagation() {
        // 1500 bytes at 8 Mbit/s = 1.5 ms, plus 10 ms.
        let mut l = link(8.0, 10.0, Limit::Packets(100));
        let t = exit(l.offer(SimTime::from_millis(5), 1500));
        assert_eq!(t, SimTime::from_millis_f64(16.5));
    }

    #[test]
    fn a_saturated_link_delivers_exactly_its_capacity() {
        // Offer 1000 packets at once: the last leaves after 1000 serialisation times, so the
        // delivered rate equals the capacity (the oracle), independent of the delay.
        let mut l = link(100.0, 3.0, Limit::Packets(10_000));
        let mut last = SimTime::ZERO;
        for _ in 0..1000 {
            last = exit(l.offer(SimTime::ZERO, 1500));
        }
        let busy = (last - SimTime::from_millis(3)).as_secs_f64();
        let rate_bps = 1000.0 * 1500.0 * 8.0 / busy;
        assert!((rate_bps - 100e6).abs() / 100e6 < 1e-9, "rate {rate_bps}");
    }

    #[test]
    fn queueing_delay_follows_the_backlog_and_droptail_caps_it() {
        // 12 Mbit/s: 1 ms per 1500-byte packet. Buffer 5 packets (including the one on the
        // wire). Six packets at t=0: five admitted (exits 1..5 ms + 2 ms), the sixth dropped.
        let mut l = link(12.0, 2.0, Limit::Packets(5));
        for k in 1..=5u64 {
            assert_eq!(
                exit(l.offer(SimTime::ZERO, 1500)),
                SimTime::from_millis(k + 2)
            );
        }
        assert_eq!(l.offer(SimTime::ZERO, 1500), Outcome::QueueDrop);
        // At 2.5 ms two packets have left: the next is admitted and waits for the other three.
        let t = exit(l.offer(SimTime::from_millis_f64(2.5), 1500));
        assert_eq!(t, SimTime::from_millis(6 + 2));
        assert_eq!(l.counters.queue_drops, 1);
        assert_eq!(l.counters.max_queue_packets, 5);
    }

    #[test]
    fn an_idle_gap_restarts_the_serialiser_at_the_arrival() {
        let mut l = link(12.0, 0.0, Limit::Packets(5));
        assert_eq!(exit(l.offer(SimTime::ZERO, 1500)), SimTime::from_millis(1));
        assert!(matches!(
            l.offer(SimTime::from_millis(10), 1500),
            Outcome::Forward { exit, back_to_back: false } if exit == SimTime::from_millis(11)
        ));
        assert!(matches!(
            l.offer(SimTime::from_millis(10), 1500),
            Outcome::Forward {
                back_to_back: true,
                ..
            }
        ));
    }

    #[test]
    fn mean_queue_is_the_time_average_of_the_backlog() {
        // Three packets at t=0 on a 1 ms/packet link: backlog 3 for 1 ms, 2 for 1 ms, 1 for 1 ms:
        // area 6 packet·ms over 3 ms → mean 2; over 6 ms → mean 1.
        let mut l = link(12.0, 0.0, Limit::Packets(10));
        for _ in 0..3 {
            l.offer(SimTime::ZERO, 1500);
        }
        l.advance(SimTime::from_millis_f64(1.5));
        // Half of the second packet's serialisation is done at 1.5 ms.
        assert_eq!(l.counters.busy_ns, 1_500_000);
        l.advance(SimTime::from_millis(6));
        assert_eq!(l.counters.queue_area_packet_ns, 6 * 1_000_000);
        assert_eq!(l.counters.packets, 3);
        assert_eq!(l.counters.busy_ns, 3_000_000);
        assert_eq!(l.queued_packets(), 0);
    }

    #[test]
    fn random_loss_follows_its_probability() {
        let mut l = LinkDir::new(
            Some(BitsPerSec::from_mbps(1000.0)),
            SimTime::ZERO,
            SimTime::ZERO,
            0.05,
            Some(Discipline::DropTail(DropTailQueue {
                limit: Limit::Packets(1_000_000),
            })),
            RandomStream::derive(7, 0, StreamPurpose::LinkLoss),
            RandomStream::derive(7, 0, StreamPurpose::LinkJitter),
        );
        let n = 100_000u64;
        for k in 0..n {
            l.offer(SimTime(k * 1_000_000), 100);
        }
        let p = l.counters.random_drops as f64 / n as f64;
        let sd = (0.05 * 0.95 / n as f64).sqrt();
        assert!((p - 0.05).abs() < 4.0 * sd, "loss {p}");
    }

    #[test]
    fn jitter_stays_within_bounds_and_never_reorders() {
        let mut l = jittered_link(100.0, 10, 5, 1_000_000, 3);
        let tx = BitsPerSec::from_mbps(100.0).serialization_time(1500);
        let mut prev = SimTime::ZERO;
        let mut max_extra = SimTime::ZERO;
        for k in 0..5000u64 {
            // One packet per millisecond: the serialiser is idle at each arrival.
            let at = SimTime(k * 1_000_000);
            let t = exit(l.offer(at, 1500));
            assert!(t >= prev, "reordered at {k}");
            let extra = t - (at + tx + SimTime::from_millis(10));
            // Bounded by the jitter plus what the previous packet's jitter imposed.
            assert!(extra <= SimTime::from_millis(5), "extra {extra:?}");
            max_extra = max_extra.max(extra);
            prev = t;
        }
        // Uniform over [0, 5 ms): over 5000 draws the largest is within 0.1 ms of the bound.
        assert!(max_extra > SimTime::from_millis_f64(4.9));
    }

    #[test]
    fn an_unlimited_direction_is_a_pure_delay() {
        let mut l = pure_delay(SimTime::from_millis(75));
        for _ in 0..100 {
            assert_eq!(
                exit(l.offer(SimTime::from_millis(1), 1500)),
                SimTime::from_millis(76)
            );
        }
    }

    fn busy_rate(l: &LinkDir) -> f64 {
        l.counters.busy_release_bytes as f64 * 8.0 / (l.counters.busy_release_span_ns as f64 * 1e-9)
    }

    #[test]
    fn busy_release_rate_measures_back_to_back_releases() {
        // 1500 bytes at 12 Mbit/s: 1 ms each. Released when due, the first not counted (no
        // previous release).
        let mut l = link(12.0, 0.0, Limit::Packets(10));
        for k in 0..5u64 {
            l.record_release(k * 1_000_000, k * 1_000_000, 1500, true);
        }
        assert!((busy_rate(&l) - 12e6).abs() < 1.0);
        assert_eq!(l.counters.delivered, 5);
        // Released 1.1 ms apart while due 1 ms apart: the emulator falls behind.
        let mut l = link(12.0, 0.0, Limit::Packets(10));
        for k in 0..5u64 {
            l.record_release(k * 1_100_000, k * 1_000_000, 1500, true);
        }
        assert!((busy_rate(&l) - 12e6 / 1.1).abs() < 1.0);
    }

    #[test]
    fn jitter_does_not_read_as_a_shortfall_of_the_busy_rate() {
        // Bursts of three packets every 10 ms through a 20 Mbit/s link (0.6 ms per packet) with
        // 2 ms of jitter, each released exactly when due: the emulator kept up, so the busy
        // rate is the link rate. Spacing the releases as they came would read less: within a
        // burst, a packet cannot leave before the one ahead, so jitter only ever adds spacing.
        let mut l = jittered_link(20.0, 5, 2, 100, 5);
        let (mut wall_bytes, mut wall_span, mut prev) = (0u64, 0u64, None::<u64>);
        for burst in 0..300u64 {
            for _ in 0..3 {
                let Outcome::Forward { exit, back_to_back } =
                    l.offer(SimTime(burst * 10_000_000), 1500)
                else {
                    panic!("dropped");
                };
                l.record_release(exit.0, exit.0, 1500, back_to_back);
                if let (true, Some(p)) = (back_to_back, prev) {
                    wall_bytes += 1500;
                    wall_span += exit.0 - p;
                }
                prev = Some(exit.0);
            }
        }
        assert!((busy_rate(&l) - 20e6).abs() < 1.0, "{}", busy_rate(&l));
        let as_released = wall_bytes as f64 * 8.0 / (wall_span as f64 * 1e-9);
        assert!(as_released < 0.99 * 20e6, "{as_released}");
    }

    /// The emulator and the simulator make the same RED decisions on the same arrivals: a
    /// burst that drives the average up, then arrivals spaced like retransmission timeouts
    /// while the queue sits empty, which RED refuses until its average has decayed over the
    /// idle time (Floyd & Jacobson §11).
    #[test]
    fn red_decides_as_the_simulator_does_across_idle_periods() {
        use mpsim::scenario::QueueSpec;

        let spec = QueueSpec::Red {
            min_packets: 25.0,
            max_packets: 50.0,
            max_p: 0.1,
            weight: 0.002,
            limit_packets: 1000,
            gentle: true,
            instantaneous: false,
        };
        let rate = BitsPerSec::from_mbps(10.0);
        let stream = |p| RandomStream::derive(3, 0, p);
        let discipline = || {
            Discipline::from_spec(
                Some(&spec),
                rate,
                SimTime::ZERO,
                stream(StreamPurpose::RedDrop),
            )
        };
        let mut emulated = LinkDir::new(
            Some(rate),
            SimTime::ZERO,
            SimTime::ZERO,
            0.0,
            Some(discipline()),
            stream(StreamPurpose::LinkLoss),
            stream(StreamPurpose::LinkJitter),
        );
        let mut simulated = simulated_link(rate, discipline(), 3);
        let packet = Packet::full_segment(0, 0);
        // 3 s of arrivals at twice the link rate (0.6 ms apart; 1.2 ms to send one): RED
        // holds the average where it drops half. Then one arrival every 10 ms for 3 s, each
        // finding the queue empty, and one at each timeout of a doubling series.
        let mut arrivals: Vec<SimTime> = (0..5000).map(|k| SimTime(k * 600_000)).collect();
        let mut t = SimTime::from_secs_f64(3.0);
        for _ in 0..300 {
            t += SimTime::from_millis(10);
            arrivals.push(t);
        }
        for k in 0..6 {
            t += SimTime::from_millis(200 << k);
            arrivals.push(t);
        }
        let mut refused_when_sparse = 0;
        for (i, &at) in arrivals.iter().enumerate() {
            let by_emulator = matches!(emulated.offer(at, 1500), Outcome::Forward { .. });
            let by_simulator = simulated.enqueue(&packet, at).is_some();
            assert_eq!(by_emulator, by_simulator, "arrival {i} at {at:?}");
            if i >= 5000 && !by_emulator {
                refused_when_sparse += 1;
            }
        }
        // 10 ms apart is 8.3 packet times: the average falls by (1 − w)^9 per arrival, below
        // min_th (25) within some 60 arrivals of the drop-half level (about 72).
        assert!(refused_when_sparse <= 60, "{refused_when_sparse} refused");
    }

    /// Both backends count a packet the link admits when it admits it, so that over a window
    /// that starts or ends with a queue their `packets` agree: a burst of 30 into a 20-packet
    /// drop-tail queue at 10 Mbit/s (1.2 ms a packet) has 20 admitted, 4 of them sent, 5 ms on.
    #[test]
    fn admitted_packets_are_counted_as_the_simulator_counts_them() {
        let rate = BitsPerSec::from_mbps(10.0);
        let drop_tail = Discipline::DropTail(DropTailQueue {
            limit: Limit::Packets(20),
        });
        let mut emulated = link(10.0, 0.0, Limit::Packets(20));
        let mut simulated = simulated_link(rate, drop_tail, 1);
        for _ in 0..30 {
            emulated.offer(SimTime::ZERO, 1500);
            simulated.enqueue(&Packet::full_segment(0, 0), SimTime::ZERO);
        }
        let at = SimTime::from_millis(5);
        emulated.advance(at);
        let sim = simulated.counters_at(at);
        assert_eq!(emulated.queued_packets(), 16);
        assert_eq!(
            (emulated.counters.packets, emulated.counters.bytes),
            (20, 30_000)
        );
        assert_eq!((sim.packets, sim.bytes), (20, 30_000));
        assert_eq!(emulated.counters.queue_drops, sim.queue_drops);
    }
}
