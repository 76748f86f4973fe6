//! LIA, the Linked Increases Algorithm of RFC 6356 §3–4 (spec §2.3, options of §2.8).
//!
//! Only the congestion-avoidance increase is coupled; slow start, fast retransmit/recovery and
//! the multiplicative decrease (ssthresh = max(cwnd/2, floor)) stay Reno's.
//!
//! Per ACK on subflow i (RFC 6356 §3, byte form):
//!   cwnd_i += min(α·MSS·bytes/cwnd_total, MSS·bytes/cwnd_i),
//!   α = cwnd_total · max_j(cwnd_j/rtt_j²) / (Σ_j cwnd_j/rtt_j)².
//! Units: α is dimensionless and unchanged by measuring windows in bytes instead of segments
//! (numerator and denominator both scale by MSS²), so the formula is applied to byte windows as
//! written. `bytes` is what [`CcParams::counted_bytes`] counts: one MSS per ACK (Linux module)
//! or all the bytes the ACK covers (RFC text). α is recomputed on every call from the current
//! windows, which RFC 6356 §4 allows ("whenever any cwnd changes") and spec §2.8 d defaults to.
//! Aggregates cover only subflows that [`SubflowView::participates`]; a subflow in fast recovery
//! counts with its ssthresh when the option asks for it. With a single participating subflow α
//! is 1 by construction and the rule is Reno's; that case short-circuits to Reno's expression so
//! the result is bit-identical rather than equal up to rounding.

use super::{CcParams, CongestionControl, SubflowView};
use crate::time::{u64_to_f64, SimTime};

#[derive(Clone, Debug)]
pub struct Lia {
    params: CcParams,
}

impl Lia {
    pub fn new(params: CcParams, _subflows: usize) -> Lia {
        Lia { params }
    }

    /// RFC 6356 α and cwnd_total over the participating subflows, seen from subflow `i`;
    /// `None` when `i` does not participate or is the only participant (plain Reno then).
    fn alpha_and_total(&self, i: usize, subflows: &[SubflowView]) -> Option<(f64, f64)> {
        if !subflows.get(i)?.participates() {
            return None;
        }
        let mut count = 0usize;
        let mut total = 0.0;
        let mut best = 0.0f64;
        let mut rate_sum = 0.0;
        for (j, v) in subflows.iter().enumerate() {
            if !v.participates() {
                continue;
            }
            let w = self.params.window_seen_from(i, j, v);
            count += 1;
            total += w;
            // f64::max's answer (a NaN ratio is skipped either way, and `best` is never NaN)
            // without its NaN handling, five instructions per subflow on every ACK.
            let x = w / (v.srtt_s * v.srtt_s);
            if x > best {
                best = x;
            }
            rate_sum += w / v.srtt_s;
        }
        if count < 2 || rate_sum <= 0.0 {
            return None;
        }
        Some((total * best / (rate_sum * rate_sum), total))
    }
}

impl CongestionControl for Lia {
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
        match self.alpha_and_total(i, subflows) {
            // Alone, the subflow runs Reno exactly (RFC 6356 §3), counting acknowledged bytes as
            // Reno does; the out-of-tree Linux modules count per ACK here, our BPF programs not.
            None => v.cwnd + mss * u64_to_f64(bytes_acked) / v.cwnd,
            Some((alpha, total)) => {
                let coupled = alpha * mss * counted / total;
                let uncoupled = mss * counted / v.cwnd;
                v.cwnd + coupled.min(uncoupled)
            }
        }
    }

    fn ssthresh_after_loss(&mut self, i: usize, subflows: &[SubflowView], _now: SimTime) -> f64 {
        self.params.halved_window(&subflows[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Reno;
    use crate::scenario::CountMode;

    use crate::cc::testing::{params, view, MSS};

    /// RFC 6356 §3 α computed directly from windows in segments.
    fn rfc_alpha(w: &[f64], rtt: &[f64]) -> f64 {
        let total: f64 = w.iter().sum();
        let best = w
            .iter()
            .zip(rtt)
            .map(|(w, r)| w / (r * r))
            .fold(0.0, f64::max);
        let rates: f64 = w.iter().zip(rtt).map(|(w, r)| w / r).sum();
        total * best / (rates * rates)
    }

    fn views(w: &[f64], rtt: &[f64]) -> Vec<SubflowView> {
        w.iter().zip(rtt).map(|(&w, &r)| view(w, r)).collect()
    }

    #[test]
    fn alpha_matches_rfc6356_worked_values_of_spec_6_2() {
        // (windows in segments, RTTs, α from spec §6.2)
        let cases: [([f64; 2], [f64; 2], f64); 4] = [
            ([9.428, 4.714], [0.1, 0.1], 0.667),
            ([12.856, 12.856], [0.01, 0.1], 1.653),
            ([44.721, 5.198], [0.1, 0.02], 1.297),
            ([18.824, 4.706], [0.05, 0.2], 1.107),
        ];
        let lia = Lia::new(params(CountMode::PerSegment, 2.0), 2);
        for (w, rtt, expected) in cases {
            let vs = views(&w, &rtt);
            let (alpha, total) = lia.alpha_and_total(0, &vs).unwrap();
            assert!(
                (alpha - expected).abs() < 1e-3,
                "α = {alpha}, expected {expected} for w = {w:?}"
            );
            assert!((alpha - rfc_alpha(&w, &rtt)).abs() < 1e-12);
            assert!((total - (w[0] + w[1]) * MSS).abs() < 1e-9);
            // Seen from the other subflow the aggregate is the same.
            let (alpha1, _) = lia.alpha_and_total(1, &vs).unwrap();
            assert!((alpha1 - alpha).abs() < 1e-12);
        }
    }

    #[test]
    fn per_ack_increase_is_min_of_coupled_and_tcp_terms() {
        let w = [30.0, 7.0, 12.0];
        let rtt = [0.05, 0.02, 0.2];
        let vs = views(&w, &rtt);
        let alpha = rfc_alpha(&w, &rtt);
        let total_bytes: f64 = w.iter().sum::<f64>() * MSS;
        let mut lia = Lia::new(params(CountMode::PerSegment, 2.0), 3);
        for i in 0..3 {
            for bytes in [MSS as u64, 2 * MSS as u64, 100] {
                let b = bytes as f64;
                let expected = (alpha * MSS * b / total_bytes).min(MSS * b / vs[i].cwnd);
                let got = lia.on_ack_ca(i, &vs, bytes, SimTime::ZERO) - vs[i].cwnd;
                assert!(
                    (got - expected).abs() < 1e-9 * expected,
                    "subflow {i}: {got} vs {expected}"
                );
            }
        }
        // The TCP cap binds where cwnd_i > cwnd_total/α: the low-loss path of spec §6.2 case 3.
        let w = [44.721, 5.198];
        let rtt = [0.1, 0.02];
        assert!(w[0] > (w[0] + w[1]) / rfc_alpha(&w, &rtt));
        let vs = views(&w, &rtt);
        let inc = lia.on_ack_ca(0, &vs, MSS as u64, SimTime::ZERO) - vs[0].cwnd;
        assert!((inc - MSS * MSS / vs[0].cwnd).abs() < 1e-9);
    }

    #[test]
    fn count_mode_counts_one_segment_per_ack_or_all_bytes() {
        let vs = views(&[10.0, 20.0], &[0.1, 0.1]);
        let mut per_ack = Lia::new(params(CountMode::PerAck, 2.0), 2);
        let mut per_seg = Lia::new(params(CountMode::PerSegment, 2.0), 2);
        let one = per_seg.on_ack_ca(0, &vs, MSS as u64, SimTime::ZERO) - vs[0].cwnd;
        let two_seg = per_seg.on_ack_ca(0, &vs, 2 * MSS as u64, SimTime::ZERO) - vs[0].cwnd;
        let two_ack = per_ack.on_ack_ca(0, &vs, 2 * MSS as u64, SimTime::ZERO) - vs[0].cwnd;
        assert!((two_seg - 2.0 * one).abs() < 1e-9);
        assert!((two_ack - one).abs() < 1e-9);
    }

    #[test]
    fn single_participating_subflow_is_reno() {
        let p = params(CountMode::PerSegment, 2.0);
        let mut lia = Lia::new(p, 2);
        let mut reno = Reno::new(p);
        let alone = [view(17.3, 0.07)];
        let mut not_established = view(40.0, 0.01);
        not_established.established = false;
        let mut no_rtt = view(40.0, 0.0);
        no_rtt.srtt_s = 0.0;
        for vs in [
            alone.to_vec(),
            vec![alone[0], not_established],
            vec![no_rtt, alone[0]],
        ] {
            let i = vs
                .iter()
                .position(|v| v.cwnd == alone[0].cwnd && v.participates())
                .unwrap();
            for bytes in [1, 700, MSS as u64, 3 * MSS as u64] {
                let got = lia.on_ack_ca(i, &vs, bytes, SimTime::ZERO);
                let want = reno.on_ack_ca(i, &vs, bytes, SimTime::ZERO);
                assert_eq!(got, want);
            }
            assert_eq!(
                lia.ssthresh_after_loss(i, &vs, SimTime::ZERO),
                reno.ssthresh_after_loss(i, &vs, SimTime::ZERO)
            );
        }
    }

    #[test]
    fn subflow_in_recovery_counts_with_its_ssthresh() {
        let mut vs = views(&[10.0, 20.0], &[0.05, 0.1]);
        vs[1].in_recovery = true;
        vs[1].ssthresh = 8.0 * MSS;
        vs[1].cwnd = 11.0 * MSS; // ssthresh + 3 MSS inflation
        let lia = Lia::new(params(CountMode::PerSegment, 2.0), 2);
        let (alpha, total) = lia.alpha_and_total(0, &vs).unwrap();
        assert!((alpha - rfc_alpha(&[10.0, 8.0], &[0.05, 0.1])).abs() < 1e-12);
        assert!((total - 18.0 * MSS).abs() < 1e-9);
        let mut p = params(CountMode::PerSegment, 2.0);
        p.recovery_uses_ssthresh = false;
        let (alpha, _) = Lia::new(p, 2).alpha_and_total(0, &vs).unwrap();
        assert!((alpha - rfc_alpha(&[10.0, 11.0], &[0.05, 0.1])).abs() < 1e-12);
    }

    #[test]
    fn loss_halves_the_window_with_floor() {
        let mut lia = Lia::new(params(CountMode::PerAck, 2.0), 2);
        let mut vs = views(&[10.0, 20.0], &[0.05, 0.1]);
        vs[1].cwnd = 16.0 * MSS;
        assert_eq!(lia.ssthresh_after_loss(1, &vs, SimTime::ZERO), 8.0 * MSS);
        vs[0].cwnd = 3.0 * MSS;
        assert_eq!(lia.ssthresh_after_loss(0, &vs, SimTime::ZERO), 2.0 * MSS);
    }

    /// Fluid model with exogenous loss: path i receives w_i/rtt_i ACKs per second, each one
    /// adds LIA's per-ACK increase and with probability p_i is a loss that cuts the window to
    /// ssthresh. Integrated until steady; returns windows in segments.
    fn fluid_fixed_point(p: &[f64], rtt: &[f64]) -> Vec<f64> {
        let par = params(CountMode::PerSegment, 0.0);
        let mut lia = Lia::new(par, p.len());
        let mut vs: Vec<SubflowView> = rtt.iter().map(|&r| view(10.0, r)).collect();
        let dt = 1e-3;
        for _ in 0..200_000 {
            let snapshot = vs.clone();
            for i in 0..vs.len() {
                let w = snapshot[i].cwnd;
                let inc = lia.on_ack_ca(i, &snapshot, MSS as u64, SimTime::ZERO) - w;
                let dec = w - lia.ssthresh_after_loss(i, &snapshot, SimTime::ZERO);
                let acks_per_s = w / MSS / rtt[i];
                let next = w + dt * acks_per_s * (inc - p[i] * dec);
                vs[i].cwnd = next.max(MSS);
                vs[i].ssthresh = vs[i].cwnd;
            }
        }
        vs.iter().map(|v| v.cwnd / MSS).collect()
    }

    #[test]
    fn fluid_iteration_reaches_spec_6_2_fixed_points() {
        // (p, rtt, w from spec §6.2)
        let cases: [([f64; 2], [f64; 2], [f64; 2]); 4] = [
            ([0.01, 0.02], [0.1, 0.1], [9.428, 4.714]),
            ([0.01, 0.01], [0.01, 0.1], [12.856, 12.856]),
            ([0.001, 0.01], [0.1, 0.02], [44.721, 5.198]),
            ([0.005, 0.02], [0.05, 0.2], [18.824, 4.706]),
        ];
        for (p, rtt, expected) in cases {
            let w = fluid_fixed_point(&p, &rtt);
            for k in 0..2 {
                let rel = (w[k] - expected[k]).abs() / expected[k];
                assert!(
                    rel < 0.01,
                    "p = {p:?}, rtt = {rtt:?}: w = {w:?}, expected {expected:?}"
                );
            }
            // RFC 6356 goal: the total rate equals the best single-path TCP rate sqrt(2/p)/rtt.
            let total_rate: f64 = w.iter().zip(&rtt).map(|(w, r)| w / r).sum();
            let best_tcp = p
                .iter()
                .zip(&rtt)
                .map(|(p, r)| (2.0 / p).sqrt() / r)
                .fold(0.0, f64::max);
            assert!(
                (total_rate - best_tcp).abs() / best_tcp < 0.01,
                "Σx = {total_rate}, TCP {best_tcp}"
            );
        }
    }
}
