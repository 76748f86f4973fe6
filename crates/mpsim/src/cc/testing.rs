//! Helpers shared by the congestion-control unit tests.

use super::{CcParams, SubflowView};
use crate::scenario::{CountMode, CubicVariant};

pub const MSS: f64 = 1448.0;

pub fn params(count_mode: CountMode, min_ssthresh_segments: f64) -> CcParams {
    CcParams {
        mss: MSS,
        count_mode,
        recovery_uses_ssthresh: true,
        min_ssthresh: min_ssthresh_segments * MSS,
        min_ssthresh_given: true,
        hystart: false,
        cubic_variant: CubicVariant::Rfc9438,
    }
}

/// A participating subflow in congestion avoidance; window in segments.
pub fn view(w_segments: f64, rtt_s: f64) -> SubflowView {
    SubflowView {
        cwnd: w_segments * MSS,
        ssthresh: w_segments * MSS,
        srtt_s: rtt_s,
        mss: MSS,
        in_recovery: false,
        established: true,
    }
}
