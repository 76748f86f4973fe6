//! Random Early Detection, Floyd & Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM ToN 1(4), 1993, §4 and §11, in the "gentle" form (Floyd, 2000) used by
//! draft-khalili-mptcp-performance-issues-06 (spec §5.4).
//!
//! The average queue is the EWMA `avg ← (1−w)·avg + w·q` taken at each arrival (Fig. 2: "for
//! each packet arrival calculate the new average queue size"), those the physical buffer then
//! refuses included, as ns-2's `REDQueue::enque` and Linux's `red_enqueue` take it before their
//! limit; it is decayed over idle periods as if `m` small packets had arrived (§11). The drop
//! probability is the profile itself: 0 below min_th, linear to max_p at max_th, linear to 1 at
//! 2·max_th (gentle), 1 above. We draw each drop independently with that probability rather than with the count-based spacing of §4
//! (spec §5.4 leaves the choice open), so the measured drop rate follows the configured profile.

use crate::rng::RandomStream;
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct RedQueue {
    pub min_th: f64,
    pub max_th: f64,
    pub max_p: f64,
    pub weight: f64,
    pub limit_packets: u64,
    pub gentle: bool,
    pub instantaneous: bool,
    /// Average queue, packets.
    pub avg: f64,
    /// When the queue last became empty, for the idle-time decay.
    idle_since: Option<SimTime>,
    /// Transmission time of a typical packet, for the idle-time decay.
    typical_tx: SimTime,
    rng: RandomStream,
}

impl RedQueue {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        min_th: f64,
        max_th: f64,
        max_p: f64,
        weight: f64,
        limit_packets: u64,
        gentle: bool,
        instantaneous: bool,
        typical_tx: SimTime,
        rng: RandomStream,
    ) -> RedQueue {
        RedQueue {
            min_th,
            max_th,
            max_p,
            weight,
            limit_packets,
            gentle,
            instantaneous,
            avg: 0.0,
            idle_since: Some(SimTime::ZERO),
            typical_tx,
            rng,
        }
    }

    /// The configured drop probability at average queue `avg` (packets).
    pub fn profile(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else if self.gentle && avg < 2.0 * self.max_th {
            self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th
        } else {
            1.0
        }
    }

    /// An arrival at a queue of `queued_packets`: the average taken in, every arrival's (the
    /// caller then checks the hard limit and, under it, [`RedQueue::early_drop`]).
    pub fn on_arrival(&mut self, queued_packets: u64, now: SimTime) {
        let q = queued_packets as f64;
        if self.instantaneous {
            self.avg = q;
        } else if let Some(since) = self.idle_since.take() {
            let m = now
                .saturating_sub(since)
                .0
                .checked_div(self.typical_tx.0)
                .unwrap_or(0) as f64;
            self.avg *= (1.0 - self.weight).powf(m);
            self.avg = (1.0 - self.weight) * self.avg + self.weight * q;
        } else {
            self.avg = (1.0 - self.weight) * self.avg + self.weight * q;
        }
    }

    /// Whether to drop the arrival just taken in by [`RedQueue::on_arrival`] (early drop).
    pub fn early_drop(&mut self) -> bool {
        let p = self.profile(self.avg);
        p >= 1.0 || (p > 0.0 && self.rng.bernoulli(p))
    }

    /// The queue has been empty since `now`, unless an idle period has already begun: an
    /// averaged arrival ends one ([`RedQueue::on_arrival`]), so one still open began at this
    /// emptying or at a refused arrival after it, and is kept (a later telling of the same
    /// emptying would count its idle time twice).
    pub fn on_empty(&mut self, now: SimTime) {
        self.idle_since.get_or_insert(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::StreamPurpose;

    /// One arrival: the average taken in, then the early-drop decision.
    fn arrive(q: &mut RedQueue, queued_packets: u64, now: SimTime) -> bool {
        q.on_arrival(queued_packets, now);
        q.early_drop()
    }

    fn red(gentle: bool) -> RedQueue {
        RedQueue::new(
            25.0,
            50.0,
            0.1,
            0.002,
            1000,
            gentle,
            false,
            SimTime(1_200_000),
            RandomStream::derive(1, 1, StreamPurpose::RedDrop),
        )
    }

    /// The spec §5.4 profile for a 10 Mbit/s link: 0 below 25, 0.1 at 50, 1 at 100 packets.
    #[test]
    fn profile_is_the_gentle_floyd_jacobson_curve() {
        let q = red(true);
        assert_eq!(q.profile(10.0), 0.0);
        assert!((q.profile(37.5) - 0.05).abs() < 1e-12);
        assert!((q.profile(75.0) - 0.55).abs() < 1e-12);
        assert_eq!(q.profile(100.0), 1.0);
        assert_eq!(red(false).profile(60.0), 1.0);
    }

    /// With the queue held at a constant length, the EWMA converges to it and the measured
    /// early-drop fraction matches the configured probability within 4 standard deviations.
    #[test]
    fn measured_drop_rate_follows_the_profile() {
        for &qlen in &[20u64, 30, 40, 49, 60, 80] {
            let mut q = red(true);
            let mut now = SimTime::ZERO;
            for _ in 0..10_000 {
                now += SimTime(1000);
                arrive(&mut q, qlen, now);
            }
            let n = 200_000;
            let mut drops = 0;
            for _ in 0..n {
                now += SimTime(1000);
                drops += arrive(&mut q, qlen, now) as u32;
            }
            let p = q.profile(qlen as f64);
            let measured = drops as f64 / n as f64;
            let sigma = (p * (1.0 - p) / n as f64).sqrt();
            assert!(
                (measured - p).abs() <= 4.0 * sigma + 1e-9,
                "queue {qlen}: measured {measured}, profile {p}"
            );
        }
    }

    /// Idle periods decay the average (Floyd & Jacobson §11).
    #[test]
    fn average_decays_over_idle_time() {
        let mut q = red(true);
        for k in 0..5000 {
            arrive(&mut q, 40, SimTime(k * 1000));
        }
        let before = q.avg;
        q.on_empty(SimTime(5_000_000));
        arrive(&mut q, 0, SimTime(5_000_000 + 1_200_000 * 500));
        assert!(
            q.avg < before * 0.4,
            "avg {} after idle, was {before}",
            q.avg
        );
    }
}
