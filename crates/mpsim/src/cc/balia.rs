//! BALIA, Balanced Linked Adaptation: draft-walid-mptcp-congestion-control-04 §2; theory in
//! Peng, Walid, Hwang, Low, "Multipath TCP: Analysis, Design, and Implementation", IEEE/ACM
//! Transactions on Networking 24(1), 2016 (spec §2.5, options of §2.8).
//!
//! BALIA changes the congestion-avoidance increase and the size of the multiplicative decrease.
//! With x_r = w_r/rtt_r and α_r = max_k x_k / x_r (≥ 1), per segment acked on path r (windows in
//! segments):
//!   Δw_r = x_r / (rtt_r·(Σ_k x_k)²) · (1+α_r)/2 · (4+α_r)/5,
//! and on a congestion event w_r drops by (w_r/2)·min(α_r, 1.5), between one and one and a half
//! Reno decreases.
//! Conversion to bytes: with W = MSS·w and X = W/rtt = MSS·x the first factor becomes
//! MSS·X_r/(rtt_r·(ΣX)²) (it scales as 1/w) while α_r is unchanged, and an ACK counts for
//! `counted/MSS` segments, so
//!   ΔW_r = MSS · counted · X_r/(rtt_r·(ΣX)²) · (1+α_r)/2 · (4+α_r)/5
//! where `counted` is [`CcParams::counted_bytes`] (one MSS per ACK, or the bytes it covers).
//! The decrease is taken from the congestion window W, as Reno's in this crate (Linux; RFC 5681
//! halves FlightSize, the same for a window-limited sender):
//! ssthresh = max(W − (W/2)·min(α_r, 1.5), floor), which is exactly Reno's max(W/2, floor) for
//! the fastest path (α = 1). The floor is one segment, as the draft (§2: 1 MSS with several
//! paths) and Linux's mptcp_balia.c (`max(snd_cwnd − md, 1)`) both have it, unless the scenario
//! sets [`CcParams::min_ssthresh`]; with one path it is Reno's. α_r is computed from the windows at the time
//! of the call. This is the draft's decrease, with α_r continuous, as the emulator's BPF program
//! has it too. The out-of-tree mptcp_balia.c divides the rates as integers
//! (`alpha = div64_u64(max_rate, rate)`), so its decrease is a step: Reno's halving while
//! α_r < 2 and 1.5 halvings from 2 on; where α_r lies between 1 and 2 (paths of similar rates)
//! it takes back less than this crate does. Aggregates cover only subflows that [`SubflowView::participates`]; a subflow in
//! fast recovery counts with its ssthresh when the option asks for it. With one participating
//! subflow α = 1, the increase is MSS·counted/W (Reno's) and the result is computed with
//! Reno's expression so it is bit-identical.

use super::{CcParams, CongestionControl, SubflowView};
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct Balia {
    params: CcParams,
}

/// Rates seen from subflow `r`, bytes/s.
#[derive(Clone, Copy, Debug)]
struct Rates {
    /// x_r.
    own: f64,
    /// max_k x_k.
    max: f64,
    /// Σ_k x_k.
    sum: f64,
}

impl Rates {
    /// α_r = max_k x_k / x_r.
    fn alpha(&self) -> f64 {
        self.max / self.own
    }
}

impl Balia {
    pub fn new(params: CcParams, _subflows: usize) -> Balia {
        Balia { params }
    }

    /// Rates over the participating subflows seen from subflow `r`; `None` when `r` does not
    /// participate or is the only participant (plain Reno then).
    fn rates(&self, r: usize, subflows: &[SubflowView]) -> Option<Rates> {
        if !subflows.get(r)?.participates() {
            return None;
        }
        let mut count = 0usize;
        let mut max = 0.0f64;
        let mut sum = 0.0;
        for (j, v) in subflows
            .iter()
            .enumerate()
            .filter(|(_, v)| v.participates())
        {
            let x = self.params.window_seen_from(r, j, v) / v.srtt_s;
            count += 1;
            max = max.max(x);
            sum += x;
        }
        let own = subflows[r].cwnd / subflows[r].srtt_s;
        (count >= 2 && own > 0.0).then_some(Rates { own, max, sum })
    }
}

impl CongestionControl for Balia {
    fn on_ack_ca(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        bytes_acked: u64,
        _now: SimTime,
    ) -> f64 {
        let v = &subflows[i];
        let mss = self.params.mss;
        let counted = self.params.counted_bytes(bytes_acked);
        match self.rates(i, subflows) {
            // Alone, the subflow runs Reno exactly (RFC 6356 §3), counting acknowledged bytes as
            // Reno does; the out-of-tree Linux modules count per ACK here, our BPF programs not.
            None => v.cwnd + mss * bytes_acked as f64 / v.cwnd,
            Some(x) => {
                let a = x.alpha();
                let base = x.own / (v.srtt_s * x.sum * x.sum);
                v.cwnd + mss * counted * base * (1.0 + a) / 2.0 * (4.0 + a) / 5.0
            }
        }
    }

    fn ssthresh_after_loss(&mut self, i: usize, subflows: &[SubflowView], _now: SimTime) -> f64 {
        let v = &subflows[i];
        match self.rates(i, subflows) {
            None => self.params.halved_window(v),
            Some(x) => {
                let decrease = v.cwnd / 2.0 * x.alpha().min(1.5);
                let floor = if self.params.min_ssthresh_given {
                    self.params.min_ssthresh
                } else {
                    self.params.mss
                };
                (v.cwnd - decrease).max(floor)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Reno;
    use crate::scenario::CountMode;

    use crate::cc::testing::{params, view, MSS};

    fn views(w: &[f64], rtt: &[f64]) -> Vec<SubflowView> {
        w.iter().zip(rtt).map(|(&w, &r)| view(w, r)).collect()
    }

    /// Increase per segment acked, in segments, in the draft's two written forms.
    fn draft_increase_forms(w: &[f64], rtt: &[f64], r: usize) -> (f64, f64) {
        let x: Vec<f64> = w.iter().zip(rtt).map(|(w, t)| w / t).collect();
        let sum: f64 = x.iter().sum();
        let max = x.iter().copied().fold(0.0, f64::max);
        let a = max / x[r];
        let alpha_form = x[r] / (rtt[r] * sum * sum) * ((1.0 + a) / 2.0) * ((4.0 + a) / 5.0);
        let rate_form = (x[r] + max) * (4.0 * x[r] + max) / (10.0 * w[r] * sum * sum);
        (alpha_form, rate_form)
    }

    #[test]
    fn increase_equals_both_written_forms_of_the_draft() {
        let cases: [(&[f64], &[f64]); 3] = [
            (&[10.0, 3.0], &[0.1, 0.1]),
            (&[25.0, 40.0, 7.0], &[0.02, 0.15, 0.05]),
            (&[1.0, 100.0], &[0.3, 0.01]),
        ];
        for (w, rtt) in cases {
            let vs = views(w, rtt);
            let mut balia = Balia::new(params(CountMode::PerSegment, 2.0), w.len());
            for r in 0..w.len() {
                let (alpha_form, rate_form) = draft_increase_forms(w, rtt, r);
                assert!((alpha_form - rate_form).abs() < 1e-12 * alpha_form);
                for segments in [1.0, 2.0] {
                    let got = balia.on_ack_ca(r, &vs, (segments * MSS) as u64, SimTime::ZERO)
                        - vs[r].cwnd;
                    let want = MSS * segments * rate_form;
                    assert!(
                        (got - want).abs() < 1e-9 * want,
                        "w = {w:?}, path {r}: {got} vs {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn per_ack_counting_ignores_ack_size() {
        let vs = views(&[10.0, 3.0], &[0.1, 0.05]);
        let mut balia = Balia::new(params(CountMode::PerAck, 2.0), 2);
        let one = balia.on_ack_ca(1, &vs, MSS as u64, SimTime::ZERO);
        assert_eq!(balia.on_ack_ca(1, &vs, 3 * MSS as u64, SimTime::ZERO), one);
    }

    #[test]
    fn decrease_is_between_one_and_one_and_a_half_reno() {
        let mut balia = Balia::new(params(CountMode::PerAck, 0.0), 3);
        let w = [30.0, 12.0, 2.0];
        let rtt = [0.1, 0.1, 0.02];
        let vs = views(&w, &rtt);
        let x: Vec<f64> = w.iter().zip(&rtt).map(|(w, t)| w / t).collect();
        let max = x.iter().copied().fold(0.0, f64::max);
        for r in 0..3 {
            let reno_decrease = vs[r].cwnd / 2.0;
            let decrease = vs[r].cwnd - balia.ssthresh_after_loss(r, &vs, SimTime::ZERO);
            let factor = decrease / reno_decrease;
            assert!((1.0..=1.5).contains(&factor), "path {r}: factor {factor}");
            assert!((factor - (max / x[r]).min(1.5)).abs() < 1e-12);
        }
        // The fastest path halves exactly; a path at a third of the top rate takes the 1.5 cap;
        // one at 0.8 of it takes 1.25.
        let vs = views(&[30.0, 10.0, 24.0], &[0.1, 0.1, 0.1]);
        let factors: Vec<f64> = (0..3)
            .map(|r| {
                (vs[r].cwnd - balia.ssthresh_after_loss(r, &vs, SimTime::ZERO)) / (vs[r].cwnd / 2.0)
            })
            .collect();
        for (got, want) in factors.iter().zip([1.0, 1.5, 1.25]) {
            assert!((got - want).abs() < 1e-12, "factors {factors:?}");
        }
    }

    #[test]
    fn ssthresh_respects_the_floor() {
        let mut balia = Balia::new(params(CountMode::PerAck, 1.0), 2);
        let vs = views(&[30.0, 3.0], &[0.1, 0.1]);
        assert_eq!(balia.ssthresh_after_loss(1, &vs, SimTime::ZERO), MSS);
        let mut balia = Balia::new(params(CountMode::PerAck, 2.0), 2);
        assert_eq!(balia.ssthresh_after_loss(1, &vs, SimTime::ZERO), 2.0 * MSS);
    }

    #[test]
    fn unless_the_scenario_sets_one_the_floor_is_one_segment_as_linux_balia() {
        // 3 − 1.5·1.5 = 0.75 segments: below both floors.
        let vs = views(&[30.0, 3.0], &[0.1, 0.1]);
        let unset = CcParams {
            min_ssthresh_given: false,
            ..params(CountMode::PerAck, 2.0)
        };
        let mut balia = Balia::new(unset, 2);
        assert_eq!(balia.ssthresh_after_loss(1, &vs, SimTime::ZERO), MSS);
        // With one path BALIA is Reno, whose floor stays Linux's two segments.
        let one = views(&[3.0], &[0.1]);
        assert_eq!(balia.ssthresh_after_loss(0, &one, SimTime::ZERO), 2.0 * MSS);
    }

    #[test]
    fn single_participating_path_is_reno() {
        let p = params(CountMode::PerSegment, 2.0);
        let mut balia = Balia::new(p, 2);
        let mut reno = Reno::new(p);
        let alone = view(31.4, 0.08);
        let mut no_rtt = view(5.0, 0.0);
        no_rtt.srtt_s = 0.0;
        for vs in [vec![alone], vec![alone, no_rtt]] {
            for bytes in [1, 999, MSS as u64, 4 * MSS as u64] {
                assert_eq!(
                    balia.on_ack_ca(0, &vs, bytes, SimTime::ZERO),
                    reno.on_ack_ca(0, &vs, bytes, SimTime::ZERO)
                );
            }
            for cwnd in [1.0, 7.0, 31.4] {
                let mut vs = vs.clone();
                vs[0].cwnd = cwnd * MSS;
                assert_eq!(
                    balia.ssthresh_after_loss(0, &vs, SimTime::ZERO),
                    reno.ssthresh_after_loss(0, &vs, SimTime::ZERO)
                );
            }
        }
    }

    /// Expected increase per ACK minus p × decrease per loss, in segments, with the
    /// implementation's own hooks; zero at a fluid equilibrium.
    fn balance(balia: &mut Balia, vs: &[SubflowView], r: usize, p: f64) -> (f64, f64) {
        let inc = (balia.on_ack_ca(r, vs, MSS as u64, SimTime::ZERO) - vs[r].cwnd) / MSS;
        let dec = (vs[r].cwnd - balia.ssthresh_after_loss(r, vs, SimTime::ZERO)) / MSS;
        (inc, p * dec)
    }

    #[test]
    fn worked_fixed_points_of_spec_6_2_balance() {
        // Spec §6.2: f(α_r)/(Σx)² = p_r·rtt_r²·m(α_r)/2 at the fixed point; per ACK this is
        // increase = p_r × decrease. Rates x in segments/s. The fluid model has no ssthresh floor.
        let cases: [([f64; 2], [f64; 2], [f64; 2]); 2] = [
            ([0.01, 0.02], [0.1, 0.1], [107.6, 33.8]),
            ([0.01, 0.01], [0.01, 0.1], [1376.3, 38.0]),
        ];
        let mut balia = Balia::new(params(CountMode::PerSegment, 0.0), 2);
        for (p, rtt, x) in cases {
            let w = [x[0] * rtt[0], x[1] * rtt[1]];
            let vs = views(&w, &rtt);
            for r in 0..2 {
                let (inc, dec) = balance(&mut balia, &vs, r, p[r]);
                assert!(
                    (inc - dec).abs() / dec < 0.02,
                    "p = {p:?}, path {r}: increase {inc}, p × decrease {dec}"
                );
            }
        }
    }

    #[test]
    fn fluid_iteration_converges_to_the_worked_fixed_point() {
        let p = [0.01, 0.02];
        let rtt = [0.1, 0.1];
        let mut balia = Balia::new(params(CountMode::PerSegment, 0.0), 2);
        let mut vs = views(&[5.0, 10.0], &rtt);
        let dt = 1e-3;
        for _ in 0..200_000 {
            let snapshot = vs.clone();
            for r in 0..2 {
                let (inc, dec) = balance(&mut balia, &snapshot, r, p[r]);
                let w = snapshot[r].cwnd;
                let next = w + dt * (w / MSS / rtt[r]) * (inc - dec) * MSS;
                vs[r].cwnd = next.max(MSS);
                vs[r].ssthresh = vs[r].cwnd;
            }
        }
        let x: Vec<f64> = vs.iter().zip(&rtt).map(|(v, t)| v.cwnd / MSS / t).collect();
        for (got, want) in x.iter().zip([107.6, 33.8]) {
            assert!((got - want).abs() / want < 0.02, "x = {x:?}");
        }
        // The fastest path sees α = 1, so the total is the TCP rate of that path.
        assert!((x[0] + x[1] - (2.0f64 / 0.01).sqrt() / 0.1).abs() < 0.01 * 141.42);
    }
}
