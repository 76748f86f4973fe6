//! Helpers shared by the unit tests that read subflows (schedulers, penalisation).

use super::Subflow;
use crate::scenario::TcpOptions;
use crate::time::SimTime;

pub const MSS: f64 = 1448.0;

/// An established subflow with one RTT sample of `rtt_s` and the given window and ssthresh
/// (segments).
pub fn established(index: u16, rtt_s: f64, cwnd_segments: f64, ssthresh_segments: f64) -> Subflow {
    let base_rtt = SimTime((rtt_s * 1e9) as u64);
    let mut sf = Subflow::new(index, 0, 1, base_rtt, &TcpOptions::default());
    sf.established = true;
    sf.rtt.sample(rtt_s, SimTime::ZERO);
    sf.cwnd = cwnd_segments * MSS;
    sf.ssthresh = ssthresh_segments * MSS;
    sf
}
