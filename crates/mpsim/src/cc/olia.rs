//! Placeholder until the Olia implementation lands: behaves as Reno.
use super::{CcParams, CongestionControl, SubflowView};
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct Olia {
    reno: super::Reno,
}

impl Olia {
    pub fn new(params: CcParams, _subflows: usize) -> Olia {
        Olia { reno: super::Reno::new(params) }
    }
}

impl CongestionControl for Olia {
    fn on_ack_ca(&mut self, i: usize, s: &[SubflowView], b: u64, now: SimTime) -> f64 {
        self.reno.on_ack_ca(i, s, b, now)
    }
    fn ssthresh_after_loss(&mut self, i: usize, s: &[SubflowView], now: SimTime) -> f64 {
        self.reno.ssthresh_after_loss(i, s, now)
    }
}
