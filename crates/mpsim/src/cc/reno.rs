//! Reno / NewReno congestion avoidance (RFC 5681 §3.1, byte counting as in RFC 3465 and Linux
//! `tcp_cong_avoid_ai`): about one MSS per RTT; ssthresh = max(cwnd/2, floor) on loss
//! (Linux `tcp_reno_ssthresh`; RFC 5681's FlightSize/2 is the same for a window-limited sender).
//! Used per subflow, it is MPTCP's "uncoupled" mode (spec §2.2).

use super::{CcParams, CongestionControl, SubflowView};
use crate::time::{u64_to_f64, SimTime};

#[derive(Clone, Debug)]
pub struct Reno {
    params: CcParams,
}

impl Reno {
    pub fn new(params: CcParams) -> Reno {
        Reno { params }
    }
}

impl CongestionControl for Reno {
    fn on_ack_ca(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        bytes_acked: u64,
        _now: SimTime,
    ) -> f64 {
        let v = &subflows[i];
        v.cwnd + self.params.mss * u64_to_f64(bytes_acked) / v.cwnd
    }

    fn ssthresh_after_loss(&mut self, i: usize, subflows: &[SubflowView], _now: SimTime) -> f64 {
        self.params.halved_window(&subflows[i])
    }
}
