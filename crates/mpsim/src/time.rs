//! Simulated time and the unit newtypes used on the simulation path.
//!
//! Time is an integer count of nanoseconds so that event ordering is exact and runs are
//! bit-reproducible; conversions to seconds happen only at the edges (scenario in, report out).

use std::ops::{Add, AddAssign, Sub};

/// A point in simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime(round_to_u64(s * 1e9))
    }
    pub fn from_millis_f64(ms: f64) -> SimTime {
        SimTime(round_to_u64(ms * 1e6))
    }
    pub fn from_millis(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }
    pub fn as_secs_f64(self) -> f64 {
        u64_to_f64(self.0) / 1e9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
}

/// `x.round().max(0.0) as u64` (half away from zero; negatives and NaN give 0, saturating),
/// without `f64::round`, which is a libm call on baseline x86-64 and sits on the per-ACK path
/// (every RTT sample recomputes the RTO). The fractional part `x - trunc(x)` of a finite double
/// is exact, so the comparison with 0.5 decides exactly as `round` does.
#[inline]
pub fn round_to_u64(x: f64) -> u64 {
    // Below 2^53 the truncated value and the fraction are exact; above it every double is an
    // integer, and the saturating cast is the answer.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if x.is_nan() || x >= EXACT {
        return x.max(0.0) as u64;
    }
    if x <= 0.0 {
        return 0;
    }
    // Signed conversions: one instruction each way, where the unsigned ones take several.
    let whole = x as i64;
    if x - whole as f64 >= 0.5 {
        whole as u64 + 1
    } else {
        whole as u64
    }
}

/// `x as f64`, computed through the signed conversion (one instruction on x86-64; the unsigned
/// one takes six) for the byte and nanosecond counts of the per-packet path, which never reach
/// 2^63. The result is the same for every `x`.
#[inline]
pub fn u64_to_f64(x: u64) -> f64 {
    if x <= i64::MAX as u64 {
        x as i64 as f64
    } else {
        u64_to_f64_above_i64_max(x)
    }
}

/// The other half of [`u64_to_f64`], out of line: inlined, the optimizer sees that both halves
/// compute `x as f64` and merges them back into the six-instruction unsigned conversion.
#[cold]
#[inline(never)]
fn u64_to_f64_above_i64_max(x: u64) -> f64 {
    x as f64
}

impl Add for SimTime {
    type Output = SimTime;
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_add(rhs.0))
    }
}

impl AddAssign for SimTime {
    fn add_assign(&mut self, rhs: SimTime) {
        self.0 = self.0.saturating_add(rhs.0);
    }
}

impl Sub for SimTime {
    type Output = SimTime;
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0 - rhs.0)
    }
}

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct BitsPerSec(pub f64);

impl BitsPerSec {
    pub fn from_mbps(mbps: f64) -> BitsPerSec {
        BitsPerSec(mbps * 1e6)
    }
    /// Time needed to put `bytes` on the wire at this rate, rounded to the nanosecond.
    pub fn serialization_time(self, bytes: u32) -> SimTime {
        SimTime(((bytes as f64 * 8.0) * 1e9 / self.0).round() as u64)
    }
    /// Bytes that fit in `t` at this rate.
    pub fn bytes_in(self, t: SimTime) -> f64 {
        self.0 * t.as_secs_f64() / 8.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-for-bit the same as the `f64::round` formula it replaces, ties and edges included.
    #[test]
    fn round_to_u64_agrees_with_f64_round() {
        let reference = |x: f64| x.round().max(0.0) as u64;
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.499_999_999_999_999_94,
            -0.4,
            -0.5,
            -3.7,
            4_503_599_627_370_495.5,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            1.8e19,
            1.9e19,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let bits = state >> 11;
            let scale = 10f64.powi((state % 19) as i32);
            cases.push(bits as f64 / (1u64 << 53) as f64 * scale);
            cases.push((state % 1_000_000) as f64 + 0.5);
        }
        for x in cases {
            assert_eq!(round_to_u64(x), reference(x), "x = {x:e}");
        }
        let mut state = 7u64;
        for k in 0..64 {
            for _ in 0..1000 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                let x = state >> k;
                assert_eq!(u64_to_f64(x).to_bits(), (x as f64).to_bits(), "x = {x}");
            }
        }
        assert_eq!(u64_to_f64(u64::MAX), u64::MAX as f64);
    }
}
