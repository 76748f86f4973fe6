//! Placeholder until the Balia implementation lands: behaves as Reno.
use super::{CcParams, CongestionControl, SubflowView};
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct Balia {
    reno: super::Reno,
}

impl Balia {
    pub fn new(params: CcParams, _subflows: usize) -> Balia {
        Balia { reno: super::Reno::new(params) }
    }
}

impl CongestionControl for Balia {
    fn on_ack_ca(&mut self, i: usize, s: &[SubflowView], b: u64, now: SimTime) -> f64 {
        self.reno.on_ack_ca(i, s, b, now)
    }
    fn ssthresh_after_loss(&mut self, i: usize, s: &[SubflowView], now: SimTime) -> f64 {
        self.reno.ssthresh_after_loss(i, s, now)
    }
}
