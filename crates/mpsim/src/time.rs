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
        SimTime((s * 1e9).round().max(0.0) as u64)
    }
    pub fn from_millis_f64(ms: f64) -> SimTime {
        SimTime((ms * 1e6).round().max(0.0) as u64)
    }
    pub fn from_millis(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_millis_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn saturating_sub(self, other: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(other.0))
    }
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
