//! Round-trip time estimation and the retransmission timeout, RFC 6298 §2–§5, with the Linux
//! variant (spec §1.5): Linux adds a 200 ms minimum to SRTT instead of flooring the RTO at 1 s.

use crate::scenario::RtoPolicy;
use crate::time::{u64_to_f64, SimTime};

/// RFC 6298 §2: α = 1/8, β = 1/4, K = 4.
const ALPHA: f64 = 1.0 / 8.0;
const BETA: f64 = 1.0 / 4.0;
const K: f64 = 4.0;
/// RFC 6298 (2.1): RTO before any sample.
pub const INITIAL_RTO: SimTime = SimTime(1_000_000_000);
/// RFC 6298 (2.4): "rounded up to 1 second".
const RFC_MIN_RTO_S: f64 = 1.0;
/// Linux TCP_RTO_MIN.
const LINUX_MIN_RTO_S: f64 = 0.2;
/// RFC 6298 (2.5) allows a ceiling of at least 60 s; Linux TCP_RTO_MAX is 120 s.
pub const MAX_RTO: SimTime = SimTime(120_000_000_000);
/// Clock granularity G; the simulator's clock is exact, Linux's is 1 ms-ish (jiffies).
const GRANULARITY_S: f64 = 0.001;

#[derive(Clone, Debug)]
pub struct RttEstimator {
    policy: RtoPolicy,
    /// Seconds; 0 before the first sample.
    pub srtt: f64,
    pub rttvar: f64,
    rto: SimTime,
    pub samples: u64,
    /// The first sample's time, the last one's, and the integral of SRTT over the time
    /// between them (s·ns, scaled once when read): the mean SRTT is over time, as the
    /// emulator's periodic TCP_INFO readings give it, not over samples, which would weight the
    /// periods with more ACKs.
    first_sample_at: SimTime,
    last_sample_at: SimTime,
    srtt_integral_ns: f64,
}

impl RttEstimator {
    pub fn new(policy: RtoPolicy) -> RttEstimator {
        RttEstimator {
            policy,
            srtt: 0.0,
            rttvar: 0.0,
            rto: INITIAL_RTO,
            samples: 0,
            first_sample_at: SimTime::ZERO,
            last_sample_at: SimTime::ZERO,
            srtt_integral_ns: 0.0,
        }
    }

    /// Feed one RTT measurement, seconds, taken at `now`. Inlined: it runs on nearly every ACK,
    /// and as a call it cost the per-ACK path more than its arithmetic.
    #[inline(always)]
    pub fn sample(&mut self, r: f64, now: SimTime) {
        if self.samples == 0 {
            self.srtt = r;
            self.rttvar = r / 2.0;
            self.first_sample_at = now;
        } else {
            self.srtt_integral_ns +=
                self.srtt * u64_to_f64(now.0.saturating_sub(self.last_sample_at.0));
            // RFC 6298 (2.3): RTTVAR first, with the old SRTT.
            self.rttvar = (1.0 - BETA) * self.rttvar + BETA * (self.srtt - r).abs();
            self.srtt = (1.0 - ALPHA) * self.srtt + ALPHA * r;
        }
        self.samples += 1;
        self.last_sample_at = now;
        let rto_s = match self.policy {
            RtoPolicy::Rfc6298 => {
                (self.srtt + (K * self.rttvar).max(GRANULARITY_S)).max(RFC_MIN_RTO_S)
            }
            RtoPolicy::Linux => self.srtt + (K * self.rttvar).max(LINUX_MIN_RTO_S),
        };
        self.rto = SimTime::from_secs_f64(rto_s).min(MAX_RTO);
    }

    /// The current RTO before backoff.
    pub fn rto(&self) -> SimTime {
        self.rto
    }

    /// The time average of SRTT from the first sample until `end`, seconds; 0 without samples.
    pub fn mean_srtt(&self, end: SimTime) -> f64 {
        if self.samples == 0 {
            return 0.0;
        }
        let span_ns = u64_to_f64(end.0.saturating_sub(self.first_sample_at.0));
        if span_ns <= 0.0 {
            return self.srtt;
        }
        let last = self.srtt * u64_to_f64(end.0.saturating_sub(self.last_sample_at.0));
        (self.srtt_integral_ns + last) / span_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The worked example of spec §1.5: samples of 100 ms then 120 ms.
    #[test]
    fn rfc6298_worked_example() {
        let mut e = RttEstimator::new(RtoPolicy::Rfc6298);
        e.sample(0.100, SimTime::ZERO);
        assert!((e.srtt - 0.100).abs() < 1e-12);
        assert!((e.rttvar - 0.050).abs() < 1e-12);
        assert_eq!(
            e.rto(),
            SimTime::from_secs_f64(1.0),
            "0.3 s rounds up to the 1 s floor"
        );
        e.sample(0.120, SimTime::ZERO);
        assert!((e.rttvar - 0.0425).abs() < 1e-12);
        assert!((e.srtt - 0.1025).abs() < 1e-12);
        assert_eq!(e.rto(), SimTime::from_secs_f64(1.0));
    }

    /// Samples of 100 ms at 1 s and 500 ms at 2 s: SRTT is 100 ms for one second, then
    /// 0.875·0.1 + 0.125·0.5 = 150 ms for three, so its mean until 5 s is
    /// (0.1·1 + 0.15·3)/4 = 137.5 ms; the mean of the two SRTT values would say 125 ms.
    #[test]
    fn mean_srtt_is_over_time() {
        let mut e = RttEstimator::new(RtoPolicy::Linux);
        e.sample(0.100, SimTime::from_millis(1_000));
        e.sample(0.500, SimTime::from_millis(2_000));
        assert!((e.mean_srtt(SimTime::from_millis(5_000)) - 0.1375).abs() < 1e-12);
        assert!((e.mean_srtt(SimTime::from_millis(1_000)) - 0.15).abs() < 1e-12);
        assert_eq!(
            RttEstimator::new(RtoPolicy::Linux).mean_srtt(SimTime::MAX),
            0.0
        );
    }

    #[test]
    fn linux_policy_adds_200ms_to_srtt() {
        let mut e = RttEstimator::new(RtoPolicy::Linux);
        e.sample(0.100, SimTime::ZERO);
        // srtt + max(200 ms, 4·50 ms) = 300 ms
        assert_eq!(e.rto(), SimTime::from_millis(300));
        let mut steady = RttEstimator::new(RtoPolicy::Linux);
        for _ in 0..200 {
            steady.sample(0.050, SimTime::ZERO);
        }
        assert_eq!(steady.rto(), SimTime::from_millis(250));
    }
}
