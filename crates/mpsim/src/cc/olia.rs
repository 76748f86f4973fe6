//! OLIA, the Opportunistic Linked Increases Algorithm: draft-khalili-mptcp-congestion-control-05
//! §3–4; theory in Khalili, Gast, Popovic, Le Boudec, "MPTCP is not Pareto-optimal: performance
//! issues and a possible solution", CoNEXT 2012 (spec §2.4, options of §2.8).
//!
//! Only the congestion-avoidance increase changes; fast retransmit/recovery and the decrease
//! (ssthresh = max(cwnd/2, floor)) are Reno's. The floor is [`CcParams::min_ssthresh`]: the
//! draft asks for 1 MSS with several paths, Linux keeps 2 (spec §8 item 3), so it is an option.
//!
//! Per ACK on path r in congestion avoidance, with windows in segments and per segment acked,
//! the draft's increase is
//!   Δw_r = (w_r/rtt_r²) / (Σ_p w_p/rtt_p)² + α_r/w_r.
//! Conversion to bytes: with W = MSS·w the first term is MSS·(W_r/rtt_r²)/(Σ_p W_p/rtt_p)² (it
//! scales as 1/w) and the second MSS·α_r/W_r, and an ACK counts for `counted/MSS` segments, so
//!   ΔW_r = MSS · counted · [ (W_r/rtt_r²)/(Σ_p W_p/rtt_p)² + α_r/W_r ]
//! where `counted` is [`CcParams::counted_bytes`] (one MSS per ACK, or the bytes it covers).
//! The increase is negative on max-window paths when others are collected; the window never
//! goes below 1 MSS.
//!
//! α_r (draft §3): over the n participating paths, best_paths maximise l_r/rtt_r² (the TCP rate
//! estimate √(2 l_r)/rtt_r; spec §8 item 4 explains why not the draft's literal l_r²/rtt_r),
//! max_w_paths maximise the window (ties included), collected = best \ max_w;
//! α_r = 1/(n·|collected|) on collected paths, −1/(n·|max_w|) on max-window paths when
//! collected is non-empty, 0 otherwise, so that Σ_r α_r = 0. Sets are recomputed on every ACK.
//!
//! Inter-loss distances (draft §3): l2_r counts bytes acknowledged since the last loss, l1_r
//! holds the count between the two previous losses, l_r = max(l1_r, l2_r). A congestion event
//! that finds no ACK outside fast recovery since the previous one (repeated timeouts of one
//! episode, a timeout that interrupts a recovery) does not shift the counts, as the Linux
//! module does (spec §8 item 5: its marks move only in `cong_avoid`, which Linux does not call
//! in recovery), so it cannot replace the last measured interval with the few bytes a
//! recovery acknowledged.

use super::{CcParams, CongestionControl, SubflowView};
use crate::time::SimTime;

#[derive(Clone, Debug)]
pub struct Olia {
    params: CcParams,
    /// Bytes acknowledged between the two most recent losses, per subflow.
    l1: Vec<f64>,
    /// Bytes acknowledged since the most recent loss, per subflow.
    l2: Vec<f64>,
    /// Whether an ACK outside fast recovery came since the most recent loss.
    acked_outside_recovery: Vec<bool>,
}

impl Olia {
    pub fn new(params: CcParams, subflows: usize) -> Olia {
        Olia {
            params,
            l1: vec![0.0; subflows],
            l2: vec![0.0; subflows],
            acked_outside_recovery: vec![false; subflows],
        }
    }

    fn ensure(&mut self, i: usize) {
        if i >= self.l1.len() {
            self.l1.resize(i + 1, 0.0);
            self.l2.resize(i + 1, 0.0);
            self.acked_outside_recovery.resize(i + 1, false);
        }
    }

    /// Smoothed inter-loss distance l_j = max(l1_j, l2_j), bytes.
    fn inter_loss(&self, j: usize) -> f64 {
        let l1 = self.l1.get(j).copied().unwrap_or(0.0);
        let l2 = self.l2.get(j).copied().unwrap_or(0.0);
        l1.max(l2)
    }

    /// α_r of subflow `r` (draft §3) over the participating subflows; 0 if `r` does not
    /// participate.
    fn alpha(&self, r: usize, subflows: &[SubflowView]) -> f64 {
        if !subflows.get(r).is_some_and(SubflowView::participates) {
            return 0.0;
        }
        let quality = |j: usize, v: &SubflowView| self.inter_loss(j) / (v.srtt_s * v.srtt_s);
        let mut n = 0usize;
        let mut best_quality = f64::NEG_INFINITY;
        let mut max_w = f64::NEG_INFINITY;
        for (j, v) in subflows
            .iter()
            .enumerate()
            .filter(|(_, v)| v.participates())
        {
            n += 1;
            best_quality = best_quality.max(quality(j, v));
            max_w = max_w.max(self.params.window_seen_from(r, j, v));
        }
        let mut collected = 0usize;
        let mut max_w_paths = 0usize;
        let (mut r_collected, mut r_max_w) = (false, false);
        for (j, v) in subflows
            .iter()
            .enumerate()
            .filter(|(_, v)| v.participates())
        {
            let is_max_w = self.params.window_seen_from(r, j, v) == max_w;
            let is_collected = quality(j, v) == best_quality && !is_max_w;
            max_w_paths += usize::from(is_max_w);
            collected += usize::from(is_collected);
            if j == r {
                r_collected = is_collected;
                r_max_w = is_max_w;
            }
        }
        if r_collected {
            1.0 / (n * collected) as f64
        } else if r_max_w && collected > 0 {
            -1.0 / (n * max_w_paths) as f64
        } else {
            0.0
        }
    }
}

impl CongestionControl for Olia {
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
        let participants = subflows.iter().filter(|v| v.participates()).count();
        if !v.participates() || participants < 2 {
            // One path: the Kelly–Voice term is 1/w and α = 0, i.e. Reno's increase.
            // Alone, the subflow runs Reno exactly, counting acknowledged bytes as Reno does;
            // the out-of-tree Linux module counts per ACK here, our BPF program not.
            return v.cwnd + mss * bytes_acked as f64 / v.cwnd;
        }
        let rate_sum: f64 = subflows
            .iter()
            .enumerate()
            .filter(|(_, v)| v.participates())
            .map(|(j, w)| self.params.window_seen_from(i, j, w) / w.srtt_s)
            .sum();
        let kelly_voice = v.cwnd / (v.srtt_s * v.srtt_s) / (rate_sum * rate_sum);
        let opportunistic = self.alpha(i, subflows) / v.cwnd;
        (v.cwnd + mss * counted * (kelly_voice + opportunistic)).max(mss)
    }

    fn ssthresh_after_loss(&mut self, i: usize, subflows: &[SubflowView], _now: SimTime) -> f64 {
        self.params.halved_window(&subflows[i])
    }

    fn on_congestion_event(
        &mut self,
        i: usize,
        _subflows: &[SubflowView],
        _now: SimTime,
        _timeout: bool,
    ) {
        self.ensure(i);
        if self.acked_outside_recovery[i] {
            self.l1[i] = self.l2[i];
            self.l2[i] = 0.0;
            self.acked_outside_recovery[i] = false;
        }
    }

    fn on_ack_any(&mut self, i: usize, subflows: &[SubflowView], bytes_acked: u64) {
        self.ensure(i);
        self.l2[i] += bytes_acked as f64;
        if !subflows[i].in_recovery {
            self.acked_outside_recovery[i] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::Reno;
    use crate::scenario::CountMode;

    use crate::cc::testing::{params, view, MSS};

    /// An OLIA instance whose paths have seen the given inter-loss distances (segments), built
    /// through the hooks: l_r bytes acknowledged, one loss, then `since_loss` more bytes.
    fn olia_with_history(l: &[f64], since_loss: &[f64], vs: &[SubflowView]) -> Olia {
        let mut olia = Olia::new(params(CountMode::PerSegment, 2.0), l.len());
        for (r, (&l, &s)) in l.iter().zip(since_loss).enumerate() {
            olia.on_ack_any(r, vs, (l * MSS) as u64);
            olia.on_congestion_event(r, vs, SimTime::ZERO, false);
            olia.on_ack_any(r, vs, (s * MSS) as u64);
        }
        olia
    }

    fn alphas(olia: &Olia, vs: &[SubflowView]) -> Vec<f64> {
        (0..vs.len()).map(|r| olia.alpha(r, vs)).collect()
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "α = {got:?}, expected {want:?}");
        }
        assert!(
            got.iter().sum::<f64>().abs() < 1e-12,
            "Σ α = {}",
            got.iter().sum::<f64>()
        );
    }

    #[test]
    fn inter_loss_distance_is_max_of_last_two_intervals() {
        let vs = [view(10.0, 0.1)];
        let mut olia = Olia::new(params(CountMode::PerAck, 2.0), 1);
        olia.on_ack_any(0, &vs, 5000);
        assert_eq!(olia.inter_loss(0), 5000.0);
        olia.on_congestion_event(0, &vs, SimTime::ZERO, false);
        olia.on_ack_any(0, &vs, 1000);
        assert_eq!(olia.inter_loss(0), 5000.0);
        olia.on_ack_any(0, &vs, 6000);
        assert_eq!(olia.inter_loss(0), 7000.0);
        olia.on_congestion_event(0, &vs, SimTime::ZERO, false);
        // A second timeout with nothing acknowledged keeps the measured interval.
        olia.on_congestion_event(0, &vs, SimTime::ZERO, true);
        assert_eq!(olia.inter_loss(0), 7000.0);
        olia.on_ack_any(0, &vs, 10);
        olia.on_congestion_event(0, &vs, SimTime::ZERO, false);
        assert_eq!(olia.inter_loss(0), 10.0);
    }

    /// Linux moves OLIA's marks only in `cong_avoid`, not called during fast recovery: a
    /// timeout that interrupts a recovery, after partial ACKs only, keeps the interval the
    /// recovery ended rather than taking the few bytes the partial ACKs covered.
    #[test]
    fn a_timeout_during_recovery_keeps_the_measured_interval() {
        let open = [view(10.0, 0.1)];
        let mut recovering = open;
        recovering[0].in_recovery = true;
        let mut olia = Olia::new(params(CountMode::PerAck, 2.0), 1);
        olia.on_ack_any(0, &open, 50_000);
        olia.on_congestion_event(0, &open, SimTime::ZERO, false);
        olia.on_ack_any(0, &recovering, 3_000);
        olia.on_congestion_event(0, &recovering, SimTime::ZERO, true);
        assert_eq!(olia.inter_loss(0), 50_000.0);
        // The next interval counts from the first loss: the recovery's bytes and what follows.
        olia.on_ack_any(0, &open, 60_000);
        olia.on_congestion_event(0, &open, SimTime::ZERO, false);
        assert_eq!(olia.inter_loss(0), 63_000.0);
    }

    #[test]
    fn alpha_signs_and_sums_on_crafted_sets() {
        let rtt = 0.1;
        // Best paths 1 and 2 (longest inter-loss), largest window on 0: collected = {1, 2}.
        let vs = [view(20.0, rtt), view(10.0, rtt), view(5.0, rtt)];
        let olia = olia_with_history(&[100.0, 300.0, 300.0], &[0.0; 3], &vs);
        assert_close(&alphas(&olia, &vs), &[-1.0 / 3.0, 1.0 / 6.0, 1.0 / 6.0]);

        // Two max-window paths share the negative part.
        let vs = [view(20.0, rtt), view(20.0, rtt), view(5.0, rtt)];
        let olia = olia_with_history(&[100.0, 100.0, 300.0], &[0.0; 3], &vs);
        assert_close(&alphas(&olia, &vs), &[-1.0 / 6.0, -1.0 / 6.0, 1.0 / 3.0]);

        // The best path also has the largest window: collected is empty, every α is 0.
        let vs = [view(20.0, rtt), view(10.0, rtt), view(5.0, rtt)];
        let olia = olia_with_history(&[300.0, 100.0, 100.0], &[0.0; 3], &vs);
        assert_close(&alphas(&olia, &vs), &[0.0, 0.0, 0.0]);

        // Quality is l/rtt², not l: path 0 has the longest interval but a 3× longer RTT.
        let vs = [view(5.0, 0.3), view(20.0, 0.1)];
        let olia = olia_with_history(&[500.0, 100.0], &[0.0; 2], &vs);
        assert_close(&alphas(&olia, &vs), &[0.0, 0.0]);
        let vs = [view(20.0, 0.3), view(5.0, 0.1)];
        assert_close(&alphas(&olia, &vs), &[-0.5, 0.5]);

        // l = max(l1, l2): path 1's current interval already exceeds path 0's.
        let vs = [view(20.0, rtt), view(10.0, rtt)];
        let olia = olia_with_history(&[200.0, 100.0], &[50.0, 250.0], &vs);
        assert_close(&alphas(&olia, &vs), &[-0.5, 0.5]);

        // A path without an RTT sample is neither counted in n nor in any set.
        let mut vs = vec![
            view(20.0, rtt),
            view(10.0, rtt),
            view(5.0, rtt),
            view(1.0, rtt),
        ];
        vs[3].srtt_s = 0.0;
        let olia = olia_with_history(&[100.0, 300.0, 100.0, 1000.0], &[0.0; 4], &vs);
        assert_close(&alphas(&olia, &vs), &[-1.0 / 3.0, 1.0 / 3.0, 0.0, 0.0]);
    }

    #[test]
    fn single_participating_path_is_reno() {
        let p = params(CountMode::PerSegment, 2.0);
        let mut reno = Reno::new(p);
        let alone = view(23.7, 0.04);
        let mut idle = view(3.0, 0.2);
        idle.established = false;
        for vs in [vec![alone], vec![alone, idle]] {
            let mut olia = olia_with_history(&vec![50.0; vs.len()], &vec![5.0; vs.len()], &vs);
            for bytes in [1, 500, MSS as u64, 2 * MSS as u64] {
                assert_eq!(
                    olia.on_ack_ca(0, &vs, bytes, SimTime::ZERO),
                    reno.on_ack_ca(0, &vs, bytes, SimTime::ZERO)
                );
            }
            assert_eq!(
                olia.ssthresh_after_loss(0, &vs, SimTime::ZERO),
                reno.ssthresh_after_loss(0, &vs, SimTime::ZERO)
            );
        }
    }

    #[test]
    fn increase_is_kelly_voice_plus_alpha_over_w() {
        let w = [20.0, 6.0, 9.0];
        let rtt = [0.05, 0.1, 0.1];
        let vs: Vec<SubflowView> = w.iter().zip(&rtt).map(|(&w, &r)| view(w, r)).collect();
        let mut olia = olia_with_history(&[80.0, 400.0, 100.0], &[0.0; 3], &vs);
        // Path 1 is best (400/0.01 > 80/0.0025 and 100/0.01), path 0 has the largest window.
        let alpha = [-1.0 / 3.0, 1.0 / 3.0, 0.0];
        assert_close(&alphas(&olia, &vs), &alpha);
        let rate_sum: f64 = w.iter().zip(&rtt).map(|(w, r)| w / r).sum();
        for r in 0..3 {
            // Draft §3 formula in segments per segment acked, times MSS for bytes.
            let segs = w[r] / (rtt[r] * rtt[r]) / (rate_sum * rate_sum) + alpha[r] / w[r];
            let got = olia.on_ack_ca(r, &vs, MSS as u64, SimTime::ZERO) - vs[r].cwnd;
            assert!(
                (got - MSS * segs).abs() < 1e-9,
                "path {r}: {got} vs {}",
                MSS * segs
            );
        }
    }

    #[test]
    fn alpha_moves_window_to_the_path_with_longer_inter_loss_distance() {
        // Equal RTTs; path 1 loses 10× less often but has the smaller window.
        let rtt = 0.1;
        let kelly_voice = |w: &[f64], r: usize| {
            let rate_sum: f64 = w.iter().map(|w| w / rtt).sum();
            MSS * w[r] / (rtt * rtt) / (rate_sum * rate_sum)
        };
        for w in [[20.0, 4.0], [10.0, 8.0]] {
            let vs = [view(w[0], rtt), view(w[1], rtt)];
            let mut olia = olia_with_history(&[100.0, 1000.0], &[0.0; 2], &vs);
            assert!(olia.alpha(0, &vs) < 0.0 && olia.alpha(1, &vs) > 0.0);
            let inc0 = olia.on_ack_ca(0, &vs, MSS as u64, SimTime::ZERO) - vs[0].cwnd;
            let inc1 = olia.on_ack_ca(1, &vs, MSS as u64, SimTime::ZERO) - vs[1].cwnd;
            // Kelly–Voice alone grows the larger window faster (its term is ∝ w); α reverses
            // that: the better path gains more per ACK than the larger one, which loses share.
            assert!(kelly_voice(&w, 0) > kelly_voice(&w, 1));
            assert!(inc1 > kelly_voice(&w, 1) && inc0 < kelly_voice(&w, 0));
            assert!(inc1 > inc0, "w = {w:?}: inc0 = {inc0}, inc1 = {inc1}");
        }
        // With windows close enough the larger window on the worse path even shrinks.
        let vs = [view(10.0, rtt), view(8.0, rtt)];
        let mut olia = olia_with_history(&[100.0, 1000.0], &[0.0; 2], &vs);
        assert!(olia.on_ack_ca(0, &vs, MSS as u64, SimTime::ZERO) < vs[0].cwnd);
        // Once the better path holds the larger window, collected is empty: pure Kelly–Voice.
        let vs = [view(4.0, rtt), view(20.0, rtt)];
        assert_eq!(olia.alpha(0, &vs), 0.0);
        assert_eq!(olia.alpha(1, &vs), 0.0);
    }

    #[test]
    fn window_never_drops_below_one_mss() {
        let vs = [view(1.0, 0.1), view(1.0 - 1e-9, 0.1)];
        let mut olia = olia_with_history(&[10.0, 1000.0], &[0.0; 2], &vs);
        assert!(olia.alpha(0, &vs) < 0.0);
        assert_eq!(olia.on_ack_ca(0, &vs, MSS as u64, SimTime::ZERO), MSS);
    }

    #[test]
    fn fluid_iteration_reaches_pareto_optimal_fixed_point() {
        // Spec §6.2 OLIA example: p = (0.01, 0.02), equal RTT 0.1 s; in the fluid model the
        // mean inter-loss distance is 1/p segments. Only the best path carries traffic beyond
        // the 1 MSS floor and the total rate is the TCP rate of the best path:
        // w1 + w2 = √(2/0.01) = 14.142 with w2 = 1.
        let p = [0.01, 0.02];
        let rtt = [0.1, 0.1];
        let par = params(CountMode::PerSegment, 0.0);
        let mut vs = vec![view(5.0, rtt[0]), view(10.0, rtt[1])];
        let mut olia = Olia::new(par, 2);
        for (r, p) in p.iter().enumerate() {
            olia.on_ack_any(r, &vs, (MSS / p) as u64);
        }
        let dt = 1e-3;
        for _ in 0..300_000 {
            let snapshot = vs.clone();
            for r in 0..2 {
                let w = snapshot[r].cwnd;
                let inc = olia.on_ack_ca(r, &snapshot, MSS as u64, SimTime::ZERO) - w;
                let dec = w - olia.ssthresh_after_loss(r, &snapshot, SimTime::ZERO);
                let next = w + dt * (w / MSS / rtt[r]) * (inc - p[r] * dec);
                vs[r].cwnd = next.max(MSS);
                vs[r].ssthresh = vs[r].cwnd;
            }
        }
        let w: Vec<f64> = vs.iter().map(|v| v.cwnd / MSS).collect();
        assert!((w[0] - 13.142).abs() / 13.142 < 0.02, "w = {w:?}");
        assert!((w[1] - 1.0).abs() < 0.02, "w = {w:?}");
    }
}
