//! A fixed-memory histogram of nanosecond durations for release lateness: one-microsecond
//! buckets up to 2 ms (where a healthy emulator lives), then power-of-two buckets up to ~18 min.
//! Quantiles are reported as the upper edge of their bucket, so they never understate lateness.

use serde::Serialize;

const LINEAR_BUCKETS: usize = 2000;
const LINEAR_WIDTH_NS: u64 = 1000;
const LOG_BUCKETS: usize = 30;

#[derive(Clone, Debug)]
pub struct Histogram {
    linear: Vec<u64>,
    /// Bucket i holds values in [2 ms · 2^i, 2 ms · 2^(i+1)).
    log: [u64; LOG_BUCKETS],
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            linear: vec![0; LINEAR_BUCKETS],
            log: [0; LOG_BUCKETS],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

/// What the status report shows of a histogram.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// Non-empty buckets as (upper edge µs, count), for merging or re-plotting.
    pub buckets: Vec<(f64, u64)>,
}

const LINEAR_LIMIT_NS: u64 = LINEAR_BUCKETS as u64 * LINEAR_WIDTH_NS;

impl Histogram {
    pub fn record(&mut self, ns: u64) {
        self.count += 1;
        self.sum_ns += ns as u128;
        self.max_ns = self.max_ns.max(ns);
        if ns < LINEAR_LIMIT_NS {
            self.linear[(ns / LINEAR_WIDTH_NS) as usize] += 1;
        } else {
            let i = (63 - (ns / LINEAR_LIMIT_NS).leading_zeros()) as usize;
            self.log[i.min(LOG_BUCKETS - 1)] += 1;
        }
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let linear = self
            .linear
            .iter()
            .enumerate()
            .map(|(i, &c)| ((i as u64 + 1) * LINEAR_WIDTH_NS, c));
        let log = self
            .log
            .iter()
            .enumerate()
            .map(|(i, &c)| (LINEAR_LIMIT_NS << (i + 1), c));
        linear.chain(log).filter(|&(_, c)| c > 0)
    }

    /// The smallest bucket edge below which at least fraction `q` of the values lie, capped by
    /// the maximum seen.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = (q * self.count as f64).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (edge, c) in self.buckets() {
            seen += c;
            if seen >= rank {
                return edge.min(self.max_ns);
            }
        }
        self.max_ns
    }

    pub fn summary(&self) -> Summary {
        let us = |ns: u64| ns as f64 / 1000.0;
        Summary {
            count: self.count,
            mean_us: if self.count > 0 {
                self.sum_ns as f64 / self.count as f64 / 1000.0
            } else {
                0.0
            },
            p50_us: us(self.quantile_ns(0.5)),
            p90_us: us(self.quantile_ns(0.9)),
            p99_us: us(self.quantile_ns(0.99)),
            p999_us: us(self.quantile_ns(0.999)),
            max_us: us(self.max_ns),
            buckets: self.buckets().map(|(e, c)| (us(e), c)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_of_a_uniform_sample_are_within_one_bucket() {
        let mut h = Histogram::default();
        for us in 0..1000u64 {
            h.record(us * 1000 + 500);
        }
        // Exact p50 of 0.5..999.5 µs is 499.5 µs; the bucket edge is 500 µs.
        assert_eq!(h.quantile_ns(0.5), 500_000);
        assert_eq!(h.quantile_ns(0.99), 990_000);
        assert_eq!(h.summary().max_us, 999.5);
        assert!((h.summary().mean_us - 500.0).abs() < 1e-9);
    }

    #[test]
    fn large_values_land_in_power_of_two_buckets() {
        let mut h = Histogram::default();
        h.record(5_000_000); // 5 ms: in [4 ms, 8 ms)
        assert_eq!(h.quantile_ns(1.0), 5_000_000); // capped by the max
        h.record(3_000_000);
        assert_eq!(h.quantile_ns(0.5), 4_000_000);
        assert_eq!(h.summary().buckets, vec![(4000.0, 1), (8000.0, 1)]);
    }

    #[test]
    fn empty_histogram_reports_zero() {
        let h = Histogram::default();
        assert_eq!(h.quantile_ns(0.99), 0);
        assert_eq!(h.summary().count, 0);
    }
}
