//! Queue disciplines of a link direction and how a scenario's queue spec becomes one, shared
//! by the simulator and the link emulator so both backends admit and drop alike: drop-tail
//! ([`super::queue`]) and RED ([`super::red`], Floyd & Jacobson 1993, gentle form, spec §5.4).
//! The buffer counts the packet being serialised; an empty buffer always admits; the default
//! buffer is one bandwidth-delay product of a round trip over the link alone (capacity × 2 ×
//! delay) in full-size packets, at least 10.

use super::queue::{BufferLimit, DropTailQueue};
use super::red::RedQueue;
use crate::rng::RandomStream;
use crate::scenario::{QueueSpec, HEADER_BYTES, MSS_BYTES};
use crate::time::{BitsPerSec, SimTime};

/// A full-size packet on the wire, bytes.
pub const FULL_PACKET: u32 = MSS_BYTES + HEADER_BYTES;

/// A buffer of `ms` milliseconds of the link rate, in bytes.
pub fn buffer_limit_from_ms(rate: BitsPerSec, ms: f64) -> BufferLimit {
    BufferLimit::Bytes((rate.0 * ms / 1000.0 / 8.0).round() as u64)
}

/// Why an arriving packet was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Admit,
    /// The buffer (or RED's hard limit) was full.
    Overflow,
    /// RED dropped it early.
    Early,
}

#[derive(Clone, Debug)]
pub enum QueueDiscipline {
    DropTail(DropTailQueue),
    Red(RedQueue),
}

impl QueueDiscipline {
    /// Build the discipline a scenario asks for on a direction of rate `rate` and one-way
    /// propagation delay `delay`.
    pub fn from_spec(
        spec: Option<&QueueSpec>,
        rate: BitsPerSec,
        delay: SimTime,
        rng: RandomStream,
    ) -> QueueDiscipline {
        let limit = match spec {
            None => {
                let bdp_bytes = rate.bytes_in(SimTime(delay.0.saturating_mul(2)));
                let packets = ((bdp_bytes / FULL_PACKET as f64).ceil() as u64).max(10);
                BufferLimit::Packets(packets)
            }
            Some(QueueSpec::Droptail { packets, bytes, ms }) => match (packets, bytes, ms) {
                (Some(p), _, _) => BufferLimit::Packets(*p),
                (_, Some(b), _) => BufferLimit::Bytes(*b),
                (_, _, Some(m)) => buffer_limit_from_ms(rate, *m),
                _ => unreachable!("validated: exactly one droptail size"),
            },
            Some(QueueSpec::Red {
                min_packets,
                max_packets,
                max_p,
                weight,
                limit_packets,
                gentle,
                instantaneous,
            }) => {
                return QueueDiscipline::Red(RedQueue::new(
                    *min_packets,
                    *max_packets,
                    *max_p,
                    *weight,
                    *limit_packets,
                    *gentle,
                    *instantaneous,
                    rate.serialization_time(FULL_PACKET),
                    rng,
                ))
            }
        };
        QueueDiscipline::DropTail(DropTailQueue { limit })
    }

    /// Decide on a packet of `wire_bytes` arriving at `now` behind `queued_packets` /
    /// `queued_bytes` (including the one being serialised).
    pub fn offer(
        &mut self,
        queued_packets: u64,
        queued_bytes: u64,
        wire_bytes: u32,
        now: SimTime,
    ) -> Verdict {
        match self {
            QueueDiscipline::DropTail(q) => {
                if q.admits(queued_packets, queued_bytes, wire_bytes) {
                    Verdict::Admit
                } else {
                    Verdict::Overflow
                }
            }
            QueueDiscipline::Red(red) => {
                red.on_arrival(queued_packets, now);
                let verdict = if queued_packets >= red.limit_packets {
                    Verdict::Overflow
                } else if red.early_drop() {
                    Verdict::Early
                } else {
                    Verdict::Admit
                };
                if queued_packets == 0 && verdict != Verdict::Admit {
                    // The arrival used up the idle period and left the queue empty: a new one
                    // starts now, as Linux's sch_red starts it when the next dequeue finds
                    // nothing. Otherwise the average would only shrink per arrival, not per
                    // idle time, and keep refusing sparse arrivals for seconds.
                    red.on_empty(now);
                }
                verdict
            }
        }
    }

    /// The buffer became empty at `now` (starts RED's idle period, unless one is already
    /// open); [`QueueDiscipline::offer`] starts the period itself after refusing an arrival at
    /// an empty buffer.
    pub fn on_empty(&mut self, now: SimTime) {
        if let QueueDiscipline::Red(red) = self {
            red.on_empty(now);
        }
    }

    /// The buffer size as a human-readable description for the status report.
    pub fn describe(&self) -> String {
        match self {
            QueueDiscipline::DropTail(DropTailQueue {
                limit: BufferLimit::Packets(p),
            }) => format!("droptail {p} packets"),
            QueueDiscipline::DropTail(DropTailQueue {
                limit: BufferLimit::Bytes(b),
            }) => format!("droptail {b} bytes"),
            QueueDiscipline::Red(r) => format!(
                "red min {} max {} max_p {} limit {} packets{}",
                r.min_th,
                r.max_th,
                r.max_p,
                r.limit_packets,
                if r.gentle { " gentle" } else { "" }
            ),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rng::StreamPurpose;

    fn rng() -> RandomStream {
        RandomStream::derive(1, 0, StreamPurpose::RedDrop)
    }

    /// RED of thresholds 5 and 15 packets whose average moves half-way to each sample, so that
    /// a test can follow it by hand.
    pub(crate) fn half_weight_red() -> QueueSpec {
        QueueSpec::Red {
            min_packets: 5.0,
            max_packets: 15.0,
            max_p: 0.1,
            weight: 0.5,
            limit_packets: 100,
            gentle: true,
            instantaneous: false,
        }
    }

    #[test]
    fn default_buffer_is_one_round_trip_bdp_at_least_ten_packets() {
        // 8 Mbit/s × 2 × 10 ms = 20 000 bytes = 13.3 full packets → 14.
        let d = QueueDiscipline::from_spec(
            None,
            BitsPerSec::from_mbps(8.0),
            SimTime::from_millis(10),
            rng(),
        );
        assert!(matches!(
            d,
            QueueDiscipline::DropTail(DropTailQueue {
                limit: BufferLimit::Packets(14)
            })
        ));
        // 1 Mbit/s × 2 × 1 ms = 250 bytes → the 10-packet floor.
        let d = QueueDiscipline::from_spec(
            None,
            BitsPerSec::from_mbps(1.0),
            SimTime::from_millis(1),
            rng(),
        );
        assert!(matches!(
            d,
            QueueDiscipline::DropTail(DropTailQueue {
                limit: BufferLimit::Packets(10)
            })
        ));
    }

    #[test]
    fn millisecond_buffer_holds_that_much_of_the_link_rate() {
        // 80 ms of 8 Mbit/s = 80 000 bytes (the NSDI 2012 WiFi buffer, spec §5.6).
        let spec = QueueSpec::Droptail {
            packets: None,
            bytes: None,
            ms: Some(80.0),
        };
        let d = QueueDiscipline::from_spec(
            Some(&spec),
            BitsPerSec::from_mbps(8.0),
            SimTime::ZERO,
            rng(),
        );
        assert!(matches!(
            d,
            QueueDiscipline::DropTail(DropTailQueue {
                limit: BufferLimit::Bytes(80_000)
            })
        ));
    }

    #[test]
    fn droptail_admits_into_an_empty_buffer_and_up_to_its_limit() {
        let mut d = QueueDiscipline::DropTail(DropTailQueue {
            limit: BufferLimit::Packets(3),
        });
        assert_eq!(d.offer(0, 0, 1500, SimTime::ZERO), Verdict::Admit);
        assert_eq!(d.offer(2, 3000, 1500, SimTime::ZERO), Verdict::Admit);
        assert_eq!(d.offer(3, 4500, 1500, SimTime::ZERO), Verdict::Overflow);
        let mut b = QueueDiscipline::DropTail(DropTailQueue {
            limit: BufferLimit::Bytes(3000),
        });
        assert_eq!(b.offer(1, 1500, 1500, SimTime::ZERO), Verdict::Admit);
        assert_eq!(b.offer(2, 3000, 52, SimTime::ZERO), Verdict::Overflow);
        // A packet larger than the whole buffer still enters an empty one.
        assert_eq!(b.offer(0, 0, 9000, SimTime::ZERO), Verdict::Admit);
    }

    #[test]
    fn gentle_red_profile_matches_the_khalili_draft() {
        // Spec §5.4, 10 Mbit/s: 0 below 25 MSS, 0→0.1 up to 50, 0.1→1 up to 100, 1 above.
        let spec = QueueSpec::Red {
            min_packets: 25.0,
            max_packets: 50.0,
            max_p: 0.1,
            weight: 0.002,
            limit_packets: 1000,
            gentle: true,
            instantaneous: false,
        };
        let QueueDiscipline::Red(red) = QueueDiscipline::from_spec(
            Some(&spec),
            BitsPerSec::from_mbps(10.0),
            SimTime::ZERO,
            rng(),
        ) else {
            panic!("expected RED");
        };
        assert_eq!(red.profile(20.0), 0.0);
        assert!((red.profile(37.5) - 0.05).abs() < 1e-12);
        assert!((red.profile(50.0) - 0.1).abs() < 1e-12);
        assert!((red.profile(75.0) - 0.55).abs() < 1e-12);
        assert_eq!(red.profile(100.0), 1.0);
        assert_eq!(red.profile(150.0), 1.0);
    }

    #[test]
    fn instantaneous_red_drops_at_the_profile_rate() {
        let mut d = QueueDiscipline::Red(RedQueue::new(
            10.0,
            20.0,
            0.2,
            0.002,
            1000,
            true,
            true,
            SimTime(1000),
            rng(),
        ));
        // At 15 packets the profile gives 0.1: the drop fraction over many draws must match
        // within four standard deviations of a binomial(40 000, 0.1).
        let n = 40_000;
        let drops = (0..n)
            .filter(|_| d.offer(15, 0, 1500, SimTime::ZERO) == Verdict::Early)
            .count() as f64;
        let sd = (n as f64 * 0.1 * 0.9).sqrt();
        assert!((drops - 0.1 * n as f64).abs() < 4.0 * sd, "drops {drops}");
        assert_eq!(d.offer(1000, 0, 1500, SimTime::ZERO), Verdict::Overflow);
    }

    /// Floyd & Jacobson's average takes in every arrival: one refused by a full buffer too.
    /// From 0 with w = 0.5, five arrivals at a full queue of 10 give 10·(1 − 0.5⁵).
    #[test]
    fn red_average_counts_arrivals_the_full_buffer_refuses() {
        let mut d = QueueDiscipline::Red(RedQueue::new(
            50.0,
            100.0,
            0.1,
            0.5,
            10,
            true,
            false,
            SimTime(1000),
            rng(),
        ));
        for _ in 0..5 {
            assert_eq!(d.offer(10, 0, 1500, SimTime::ZERO), Verdict::Overflow);
        }
        let QueueDiscipline::Red(red) = &d else {
            unreachable!()
        };
        assert!(
            (red.avg - 10.0 * (1.0 - 0.5f64.powi(5))).abs() < 1e-12,
            "avg {}",
            red.avg
        );
    }

    #[test]
    fn red_average_decays_over_idle_time() {
        let spec = half_weight_red();
        let mut d = QueueDiscipline::from_spec(
            Some(&spec),
            BitsPerSec::from_mbps(12.0),
            SimTime::ZERO,
            rng(),
        );
        for _ in 0..20 {
            d.offer(8, 0, 1500, SimTime::ZERO);
        }
        let QueueDiscipline::Red(red) = &d else {
            unreachable!()
        };
        assert!((red.avg - 8.0).abs() < 1e-3);
        // Idle for 10 full-packet times (1 ms each at 12 Mbit/s): avg × 0.5^10, then one sample
        // of an empty queue: × 0.5.
        d.on_empty(SimTime::from_millis(1));
        d.offer(0, 0, 1500, SimTime::from_millis(11));
        let QueueDiscipline::Red(red) = &d else {
            unreachable!()
        };
        let expected = 8.0 * 0.5f64.powi(10) * 0.5;
        assert!((red.avg - expected).abs() < 1e-6, "avg {}", red.avg);
    }

    #[test]
    fn a_refused_arrival_at_an_empty_queue_starts_a_new_idle_period() {
        // Floyd & Jacobson §11: the average decays by the time the queue sat empty. An arrival
        // the profile refuses leaves the queue empty from its own time on.
        let spec = half_weight_red();
        let mut d = QueueDiscipline::from_spec(
            Some(&spec),
            BitsPerSec::from_mbps(12.0),
            SimTime::ZERO,
            rng(),
        );
        let QueueDiscipline::Red(red) = &mut d else {
            unreachable!()
        };
        red.avg = 1e6;
        d.on_empty(SimTime::ZERO);
        // 2 packet times idle: 1e6 × 0.5^2 × 0.5 = 125 000, far above 2·max: refused.
        let first = d.offer(0, 0, 1500, SimTime::from_millis(2));
        assert_eq!(first, Verdict::Early);
        // 10 packet times more: × 0.5^10, then × 0.5 for the empty sample.
        d.offer(0, 0, 1500, SimTime::from_millis(12));
        let QueueDiscipline::Red(red) = &d else {
            unreachable!()
        };
        let expected = 1e6 * 0.5f64.powi(3) * 0.5f64.powi(11);
        assert!((red.avg - expected).abs() < 1e-6, "avg {}", red.avg);
    }
}
