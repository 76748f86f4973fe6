//! CUBIC as specified by RFC 9438 §4 (spec §1.7; RFC 8312 differences in spec §8 item 1).
//!
//! On an MPTCP connection CUBIC is uncoupled: every subflow keeps its own epoch state and
//! nothing is shared (spec §2.2).
//!
//! Units: RFC 9438 states the window curve in segments and seconds with C = 0.4 segments/s³;
//! the state below is kept in segments (byte windows divided by MSS) and converted back on
//! return. RTT is the subflow's smoothed RTT (the Linux variant's look-ahead below differs).
//!
//! - Window curve (§4.2): W_cubic(t) = C·(t − K)³ + W_max, t = now − t_epoch, with
//!   K = ∛((W_max − cwnd_epoch)/C) (eq. 2). An epoch starts at the first congestion-avoidance
//!   ACK after a congestion event: t_epoch = now, cwnd_epoch = cwnd, W_est = cwnd_epoch.
//! - Per ACK (§4.3–4.5): W_est += α_cubic·segments_acked/cwnd with α_cubic = 3(1−β)/(1+β),
//!   switched to 1 once W_est ≥ cwnd_prior. If W_cubic(t) < W_est the flow is in the
//!   Reno-friendly region and cwnd follows W_est; otherwise cwnd += (target − cwnd)/cwnd per
//!   segment acked with target = W_cubic(t + RTT) clamped to [cwnd, 1.5·cwnd].
//!   segments_acked is bytes_acked/MSS, as Reno in this crate counts bytes (RFC 3465);
//!   [`CcParams::count_mode`] is about the coupled MPTCP modules and does not apply here.
//!   In the Reno-friendly region cwnd never decreases (max(cwnd, W_est)): cwnd can be ahead of
//!   W_est because the cubic target looks one RTT ahead; the RFC's "set cwnd to W_est" would
//!   shrink it, while Linux takes the faster of the two growth rates.
//! - Congestion event (§4.6–4.7): the epoch ends; when ssthresh is set, fast convergence
//!   W_max = cwnd·(1+β)/2 if cwnd < W_max, else W_max = cwnd; cwnd_prior = cwnd;
//!   ssthresh = max(cwnd·β, floor) with β = 0.7 (Linux; RFC 9438 takes flight size). The
//!   floor is [`CcParams::min_ssthresh`], 2 MSS by default as RFC 9438 asks ("cwnd is at
//!   least 2").
//! - Timeout (§4.8): cwnd goes to 1 MSS (engine), ssthresh via β as above; the first CA epoch
//!   after it uses K = 0 and W_max = cwnd at the start of the epoch. The same rule applies
//!   when CA is reached before any congestion event (no W_max known yet).
//! - [`CubicVariant::Linux`] (`tcp.cubic_variant = "linux"`) grows the window as Linux's
//!   `tcp_cubic.c` does (`bictcp_update`, unchanged from 3.x to 6.x), where it departs from
//!   RFC 9438: the Reno-friendly estimate gains 8/15 of a segment per RTT and never switches to
//!   one; and an epoch that began with no W_max from a loss (none yet, or a timeout cleared
//!   it: `last_max_cwnd == 0`) grows by at least 1/20 segment per segment acked, 5 % per RTT.
//!   Without that floor a window HyStart stopped early stays near its exit value for seconds
//!   (the curve adds 0.4·t³ segments) where Linux goes on probing. Its target looks ahead by
//!   delay_min, the smallest RTT sample since the last timeout (`t += delay_min`), not by the
//!   smoothed RTT: behind a standing queue the two differ by the queueing delay, and looking
//!   that much further up the curve would climb back to W_max sooner than Linux does. An epoch
//!   whose W_max is at or below its starting window starts the curve there with K = 0
//!   (`last_max_cwnd <= cwnd`), where RFC 9438's K = ∛((W_max − cwnd_epoch)/C) is negative.
//! - Slow start is the engine's (Reno's), ended early by Linux's HyStart ([`super::hystart`])
//!   unless [`CcParams::hystart`] is off.
//! - Application-limited time (§5.8: t excludes it, lest W_cubic(t) be far too high after an
//!   idle period): as Linux's `cubictcp_cwnd_event(CA_EVENT_TX_START)` does since 4.3, when a
//!   subflow sends with nothing in flight its epoch start moves later by the time since it
//!   last sent, no later than now. Both variants.

use super::hystart::{HyStart, SlowStartState};
use super::{CcParams, CongestionControl, SubflowView};
use crate::scenario::CubicVariant;
use crate::time::SimTime;

/// C, segments/s³ (RFC 9438 §5).
const C: f64 = 0.4;
/// β_cubic, multiplicative decrease factor (RFC 9438 §4.6).
const BETA: f64 = 0.7;
/// α_cubic = 3(1−β)/(1+β), the AIMD increase that matches Reno's average rate (RFC 9438 §4.3).
const ALPHA_AIMD: f64 = 3.0 * (1.0 - BETA) / (1.0 + BETA);
/// Linux's Reno-friendly growth, segments per RTT: `tcp_cwnd` gains one segment per
/// cwnd·beta_scale/8 segments acked, beta_scale = 8·(1024 + 717)/3/(1024 − 717) = 15 in
/// integer arithmetic (`cubictcp_register`, `bictcp_update`); never switched to 1.
const LINUX_RENO_ALPHA: f64 = 8.0 / 15.0;
/// Linux's least growth per segment acked in an epoch without a W_max: `bictcp_update` caps
/// `cnt` at 20 while `last_max_cwnd == 0`, "increase cwnd 5% per RTT".
const LINUX_PROBING_GROWTH: f64 = 1.0 / 20.0;

/// Per-subflow CUBIC state; windows in segments.
#[derive(Clone, Debug)]
struct Epoch {
    /// Window before the last reduction, after fast convergence; `None` before any event.
    w_max: Option<f64>,
    /// cwnd when the last congestion event happened.
    cwnd_prior: f64,
    /// Time from the epoch start to the plateau, seconds.
    k: f64,
    /// Start of the current epoch; `None` until the next congestion-avoidance ACK.
    t_epoch: Option<SimTime>,
    /// Reno-friendly window estimate.
    w_est: f64,
    /// Current α_cubic (ALPHA_AIMD or 1).
    alpha: f64,
    /// The last congestion event was a timeout (RFC 9438 §4.8 applies to the next epoch).
    after_timeout: bool,
    /// W_max of the current epoch (equal to `w_max`, or cwnd_epoch under §4.8).
    epoch_w_max: f64,
    /// The current epoch began with no W_max from a loss (none yet, or a timeout cleared it):
    /// Linux's `last_max_cwnd == 0`, under which its cwnd grows by at least 5 % per RTT.
    probing: bool,
}

impl Default for Epoch {
    fn default() -> Epoch {
        Epoch {
            w_max: None,
            cwnd_prior: 0.0,
            k: 0.0,
            t_epoch: None,
            w_est: 0.0,
            alpha: ALPHA_AIMD,
            after_timeout: false,
            epoch_w_max: 0.0,
            probing: false,
        }
    }
}

impl Epoch {
    /// W_cubic(t), segments (RFC 9438 eq. 1).
    fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.epoch_w_max
    }

    fn start(&mut self, now: SimTime, cwnd: f64, linux: bool) {
        self.t_epoch = Some(now);
        self.w_est = cwnd;
        match self.w_max {
            Some(w_max) if linux && !self.after_timeout && w_max <= cwnd => {
                self.epoch_w_max = cwnd;
                self.k = 0.0;
                self.probing = false;
            }
            Some(w_max) if !self.after_timeout => {
                self.epoch_w_max = w_max;
                self.k = ((w_max - cwnd) / C).cbrt();
                self.probing = false;
            }
            _ => {
                // RFC 9438 §4.8; also the reference for fast convergence at the next loss.
                self.w_max = Some(cwnd);
                self.epoch_w_max = cwnd;
                self.k = 0.0;
                self.probing = true;
            }
        }
        self.after_timeout = false;
        if self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cubic {
    params: CcParams,
    epochs: Vec<Epoch>,
    hystart: Vec<HyStart>,
}

impl Cubic {
    pub fn new(params: CcParams, subflows: usize) -> Cubic {
        Cubic {
            params,
            epochs: vec![Epoch::default(); subflows],
            hystart: vec![HyStart::default(); subflows],
        }
    }

    fn epoch(&mut self, i: usize) -> &mut Epoch {
        if i >= self.epochs.len() {
            self.epochs.resize(i + 1, Epoch::default());
            self.hystart.resize(i + 1, HyStart::default());
        }
        &mut self.epochs[i]
    }
}

impl CongestionControl for Cubic {
    fn on_ack_ca(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        bytes_acked: u64,
        now: SimTime,
    ) -> f64 {
        let v = subflows[i];
        let mss = self.params.mss;
        let linux = self.params.cubic_variant == CubicVariant::Linux;
        let cwnd = v.cwnd / mss;
        let segments_acked = bytes_acked as f64 / mss;
        let look_ahead_s = if linux {
            self.hystart.get(i).map_or(0.0, HyStart::delay_min)
        } else {
            v.srtt_s
        };
        let e = self.epoch(i);
        let t_epoch = match e.t_epoch {
            Some(t) => t,
            None => {
                e.start(now, cwnd, linux);
                now
            }
        };
        let t = now.saturating_sub(t_epoch).as_secs_f64();
        let alpha = if linux { LINUX_RENO_ALPHA } else { e.alpha };
        e.w_est += alpha * segments_acked / cwnd;
        if e.w_est >= e.cwnd_prior {
            e.alpha = 1.0;
        }
        let next = if e.w_cubic(t) < e.w_est {
            cwnd.max(e.w_est)
        } else {
            let target = e.w_cubic(t + look_ahead_s).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * segments_acked
        };
        if linux && e.probing {
            next.max(cwnd + LINUX_PROBING_GROWTH * segments_acked) * mss
        } else {
            next * mss
        }
    }

    /// Fast convergence and cwnd_prior are updated here, when ssthresh is set (RFC 9438 §4.6–4.7),
    /// rather than in `on_congestion_event`: the engine reports every backed-off timeout of one
    /// episode as an event but sets ssthresh only on the first, when cwnd is still the window
    /// that met congestion rather than the 1 MSS loss window.
    fn ssthresh_after_loss(&mut self, i: usize, subflows: &[SubflowView], _now: SimTime) -> f64 {
        let v = &subflows[i];
        let cwnd = v.cwnd / self.params.mss;
        let e = self.epoch(i);
        e.w_max = Some(match e.w_max {
            Some(w_max) if cwnd < w_max => cwnd * (1.0 + BETA) / 2.0,
            _ => cwnd,
        });
        e.cwnd_prior = cwnd;
        e.alpha = ALPHA_AIMD;
        (v.cwnd * BETA).max(self.params.min_ssthresh)
    }

    fn on_send_after_idle(&mut self, i: usize, idle: SimTime, now: SimTime) {
        let e = self.epoch(i);
        if let Some(t) = e.t_epoch {
            e.t_epoch = Some((t + idle).min(now));
        }
    }

    fn on_congestion_event(
        &mut self,
        i: usize,
        _subflows: &[SubflowView],
        _now: SimTime,
        timeout: bool,
    ) {
        let e = self.epoch(i);
        e.t_epoch = None;
        e.after_timeout = timeout;
        if timeout {
            self.hystart[i].reset();
        }
    }

    fn on_rtt_sample(
        &mut self,
        i: usize,
        subflows: &[SubflowView],
        rtt_s: f64,
        snd_una: u64,
        snd_nxt: u64,
        now: SimTime,
    ) -> Option<f64> {
        let linux = self.params.cubic_variant == CubicVariant::Linux;
        if !self.params.hystart && !linux {
            // Only HyStart and the Linux variant's look-ahead read delay_min.
            return None;
        }
        // Linux ignores delay samples during the first second of a congestion-avoidance epoch.
        let watch = self
            .epoch(i)
            .t_epoch
            .is_none_or(|t| now.saturating_sub(t) >= SimTime::from_millis(1000));
        if !self.params.hystart {
            if watch {
                self.hystart[i].note_delay(rtt_s);
            }
            return None;
        }
        let v = subflows[i];
        let mss = self.params.mss;
        let state = SlowStartState {
            cwnd: v.cwnd,
            ssthresh: v.ssthresh,
            mss,
            srtt_s: v.srtt_s,
            snd_una,
            snd_nxt,
        };
        self.hystart[i]
            .on_rtt_sample(&state, rtt_s, now, watch)
            .then_some(v.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::CountMode;

    const MSS: f64 = 1448.0;

    fn params() -> CcParams {
        CcParams {
            mss: MSS,
            count_mode: CountMode::PerAck,
            recovery_uses_ssthresh: true,
            min_ssthresh: 2.0 * MSS,
            min_ssthresh_given: false,
            hystart: false,
            cubic_variant: CubicVariant::Rfc9438,
        }
    }

    /// One CUBIC subflow fed one ACK per segment, ACKs evenly spread over each RTT (the
    /// smoothed RTT); every ACK carries an RTT sample of `sample_rtt_s`, the RTT itself unless a
    /// test sets a smaller one (a path whose smoothed RTT includes a standing queue).
    struct Flow {
        cc: Cubic,
        view: SubflowView,
        now_s: f64,
        rtt_s: f64,
        sample_rtt_s: f64,
    }

    impl Flow {
        fn new(w_segments: f64, rtt_s: f64) -> Flow {
            let view = crate::cc::testing::view(w_segments, rtt_s);
            Flow {
                cc: Cubic::new(params(), 1),
                view,
                now_s: 0.0,
                rtt_s,
                sample_rtt_s: rtt_s,
            }
        }

        /// The same with Linux's congestion avoidance.
        fn linux(w_segments: f64, rtt_s: f64) -> Flow {
            let mut flow = Flow::new(w_segments, rtt_s);
            flow.cc.params.cubic_variant = CubicVariant::Linux;
            flow
        }

        fn cwnd(&self) -> f64 {
            self.view.cwnd / MSS
        }

        /// One RTT's worth of ACKs (one per segment of the window); returns the growth scaled
        /// to segments per RTT.
        fn one_round(&mut self) -> f64 {
            let before = self.cwnd();
            let n = before.floor() as usize;
            (0..n).for_each(|_| self.ack());
            (self.cwnd() - before) * before / n as f64
        }

        fn ack(&mut self) {
            self.now_s += self.rtt_s / self.cwnd();
            let now = SimTime::from_secs_f64(self.now_s);
            let views = [self.view];
            self.cc
                .on_rtt_sample(0, &views, self.sample_rtt_s, 0, 0, now);
            self.view.cwnd = self.cc.on_ack_ca(0, &views, MSS as u64, now).max(MSS);
        }

        /// A congestion event with the whole window in flight; cwnd drops to the new ssthresh
        /// (fast recovery collapsed to an instant) or to 1 MSS on a timeout.
        fn loss(&mut self, timeout: bool) {
            let now = SimTime::from_secs_f64(self.now_s);
            self.cc.on_congestion_event(0, &[self.view], now, timeout);
            let ssthresh = self.cc.ssthresh_after_loss(0, &[self.view], now);
            self.view.ssthresh = ssthresh;
            self.view.cwnd = if timeout { MSS } else { ssthresh };
        }

        /// Time-average window, segments, under a loss every 1/p segments (deterministic loss).
        fn average_window_with_deterministic_loss(
            &mut self,
            p: f64,
            warmup: usize,
            cycles: usize,
        ) -> f64 {
            let per_cycle = (1.0 / p).round() as usize;
            for _ in 0..warmup {
                (0..per_cycle).for_each(|_| self.ack());
                self.loss(false);
            }
            let start = self.now_s;
            for _ in 0..cycles {
                (0..per_cycle).for_each(|_| self.ack());
                self.loss(false);
            }
            (per_cycle * cycles) as f64 / ((self.now_s - start) / self.rtt_s)
        }
    }

    /// RFC 9438 §5.8: t must not count the time a flow had nothing to send, or W_cubic(t) is
    /// far too high when it sends again (Linux 4.3 on shifts the epoch start by the idle
    /// time). After 10 s idle the window grows per RTT as it did before the pause; counting
    /// the pause, the curve is 10 s further on and each RTT would add half a window.
    #[test]
    fn idle_time_does_not_advance_the_curve() {
        for linux in [false, true] {
            let mut flow = if linux {
                Flow::linux(100.0, 0.1)
            } else {
                Flow::new(100.0, 0.1)
            };
            flow.loss(false);
            for _ in 0..60 {
                flow.one_round();
            }
            let before = flow.one_round();
            flow.now_s += 10.0;
            let now = SimTime::from_secs_f64(flow.now_s);
            flow.cc
                .on_send_after_idle(0, SimTime::from_secs_f64(10.0), now);
            let after = flow.one_round();
            assert!(
                (after - before).abs() < 0.25 * before.max(1.0),
                "linux {linux}: {before:.2} segments per RTT before the pause, {after:.2} after"
            );
        }
    }

    #[test]
    fn curve_passes_through_w_max_at_k() {
        let mut flow = Flow::new(1000.0, 0.1);
        flow.loss(false);
        assert!((flow.cwnd() - 700.0).abs() < 1e-9);
        flow.ack();
        let e = &flow.cc.epochs[0];
        // RFC 8312's K = ∛(W_max(1−β)/C) equals RFC 9438's when cwnd_epoch = β·W_max.
        let k = (1000.0f64 * (1.0 - 0.7) / 0.4).cbrt();
        assert!((e.k - k).abs() < 1e-9, "K = {}, expected {k}", e.k);
        assert!((e.w_cubic(k) - 1000.0).abs() < 1e-9);
        assert!((e.w_cubic(0.0) - 700.0).abs() < 1e-9);
    }

    #[test]
    fn window_follows_concave_then_convex_cubic() {
        let rtt = 0.1;
        let mut flow = Flow::new(1000.0, rtt);
        flow.loss(false);
        let k = (1000.0f64 * 0.3 / 0.4).cbrt();
        let start = flow.now_s;
        let mut samples = Vec::new(); // (t, cwnd) once per RTT
        while flow.now_s - start < 2.0 * k {
            let round_end = flow.now_s + rtt;
            while flow.now_s < round_end {
                flow.ack();
            }
            samples.push((flow.now_s - start, flow.cwnd()));
        }
        for &(t, w) in &samples {
            let curve = 0.4 * (t - k).powi(3) + 1000.0;
            assert!(
                (w - curve).abs() / curve < 0.02,
                "t = {t}: cwnd {w}, W_cubic {curve}"
            );
        }
        let near_k = samples
            .iter()
            .min_by(|a, b| (a.0 - k).abs().total_cmp(&(b.0 - k).abs()))
            .unwrap();
        assert!((near_k.1 - 1000.0).abs() < 5.0, "cwnd at K: {}", near_k.1);
        // Growth per RTT shrinks before the plateau and grows after it.
        let growth: Vec<(f64, f64)> = samples
            .windows(2)
            .map(|s| (s[1].0, s[1].1 - s[0].1))
            .collect();
        for g in growth.windows(2) {
            if g[1].0 < k - 3.0 * rtt {
                assert!(g[1].1 < g[0].1, "not concave at t = {}", g[1].0);
            } else if g[0].0 > k + 3.0 * rtt {
                assert!(g[1].1 > g[0].1, "not convex at t = {}", g[1].0);
            }
        }
    }

    #[test]
    fn loss_sets_ssthresh_to_beta_cwnd_with_two_mss_floor() {
        let mut cubic = Cubic::new(params(), 1);
        let mut v = Flow::new(80.0, 0.1).view;
        cubic.on_congestion_event(0, &[v], SimTime::ZERO, false);
        assert!((cubic.ssthresh_after_loss(0, &[v], SimTime::ZERO) - 56.0 * MSS).abs() < 1e-9);
        v.cwnd = 2.0 * MSS;
        assert_eq!(cubic.ssthresh_after_loss(0, &[v], SimTime::ZERO), 2.0 * MSS);
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_the_window_shrinks() {
        let mut flow = Flow::new(1000.0, 0.1);
        flow.loss(false);
        flow.ack();
        // A second loss below the previous W_max releases bandwidth: W_max = 900·(1+β)/2.
        flow.view.cwnd = 900.0 * MSS;
        flow.loss(false);
        flow.ack();
        let e = &flow.cc.epochs[0];
        let w_max = 900.0 * 1.7 / 2.0;
        assert!((e.epoch_w_max - w_max).abs() < 1e-9);
        assert!((e.k - ((w_max - 630.0) / 0.4).cbrt()).abs() < 1e-9);
    }

    #[test]
    fn first_epoch_after_timeout_starts_at_the_plateau() {
        let mut flow = Flow::new(1000.0, 0.1);
        flow.loss(true);
        assert_eq!(flow.cwnd(), 1.0);
        assert!((flow.view.ssthresh - 700.0 * MSS).abs() < 1e-9);
        // Slow start (engine) brings cwnd to 20 segments; CA starts there with K = 0.
        flow.view.cwnd = 20.0 * MSS;
        flow.ack();
        let e = &flow.cc.epochs[0];
        assert_eq!(e.k, 0.0);
        assert_eq!(e.epoch_w_max, 20.0);
        // The following loss is an ordinary one: its epoch has K > 0 again.
        flow.view.cwnd = 100.0 * MSS;
        flow.loss(false);
        flow.ack();
        assert!(flow.cc.epochs[0].k > 0.0);
    }

    /// Runs the flow for `rtts` round-trip times of ACKs.
    fn run_for(flow: &mut Flow, rtts: f64) {
        let end = flow.now_s + rtts * flow.rtt_s;
        while flow.now_s < end {
            flow.ack();
        }
    }

    /// Slow start ended without a loss (HyStart): Linux's `bictcp_update` keeps `cnt` at most
    /// 20 while `last_max_cwnd == 0`, one segment per 20 acked, 5 % per RTT. At a 6 ms RTT the
    /// cubic curve alone (K = 0) adds 0.4·t³, under a segment in the first second; with one
    /// ACK per segment the 5 % compounds per ACK: 70·e^(0.05·20) = 190 after 20 RTTs. RFC 9438
    /// has no such floor: its Reno-friendly estimate adds one segment per RTT (α_cubic is 1
    /// with no cwnd_prior), 90 after 20 RTTs.
    #[test]
    fn linux_grows_an_epoch_without_a_known_w_max_five_percent_per_rtt() {
        let mut flow = Flow::linux(70.0, 0.006);
        run_for(&mut flow, 20.0);
        let expected = 70.0 * (0.05_f64 * 20.0).exp();
        assert!(flow.cc.epochs[0].probing);
        assert!(
            (flow.cwnd() / expected - 1.0).abs() < 0.02,
            "{} vs {expected}",
            flow.cwnd()
        );

        let mut rfc = Flow::new(70.0, 0.006);
        run_for(&mut rfc, 20.0);
        assert!((rfc.cwnd() - 90.0).abs() < 1.0, "{}", rfc.cwnd());
    }

    /// Once a loss has given W_max the floor is gone; a timeout clears W_max (Linux resets
    /// `last_max_cwnd` on entering the Loss state) and brings it back.
    #[test]
    fn linuxs_five_percent_floor_lasts_until_a_loss_and_returns_after_a_timeout() {
        let mut flow = Flow::linux(70.0, 0.006);
        run_for(&mut flow, 1.0);
        flow.loss(false);
        let after_loss = flow.cwnd();
        run_for(&mut flow, 20.0);
        assert!(!flow.cc.epochs[0].probing);
        // Below W_max the concave curve and 8/15 per RTT: far below 5 % per RTT.
        assert!(flow.cwnd() < after_loss + 0.6 * 20.0, "{}", flow.cwnd());

        flow.loss(true);
        flow.view.cwnd = 30.0 * MSS;
        run_for(&mut flow, 20.0);
        assert!(flow.cc.epochs[0].probing);
        assert!(flow.cwnd() > 30.0 * 1.05_f64.powi(20), "{}", flow.cwnd());
    }

    /// Linux's `bictcp_update` aims at the curve delay_min ahead (`t += delay_min`, the smallest
    /// RTT sample) and moves cwnd by (target − cwnd)/cwnd per segment acked, the target clamped
    /// to [cwnd, 1.5·cwnd] (`cnt` at least 2). Here the smoothed RTT is 1 s (a standing queue)
    /// over a 0.1 s path, with the RFC's curve from 70 back to W_max = 100. The oracle is that
    /// rule stepped ACK by ACK (ACKs 1/cwnd of the smoothed RTT apart; the Reno-friendly
    /// estimate, 8/15 segment per RTT, stays below the curve): 99 segments after about 4.7 s.
    /// Aiming one smoothed RTT ahead instead, as RFC 9438 does, gets there about 0.7 s sooner.
    #[test]
    fn linux_aims_at_the_curve_one_smallest_rtt_ahead() {
        let (srtt, delay_min, k) = (1.0, 0.1, (30.0_f64 / 0.4).cbrt());
        let time_to_99 = |look_ahead: f64| {
            let (mut w, mut t) = (70.0_f64, 0.0);
            while w < 99.0 {
                let target = (0.4 * (t + look_ahead - k).powi(3) + 100.0).clamp(w, 1.5 * w);
                w += (target - w) / w;
                t += srtt / w;
            }
            t
        };
        let (expected, sooner) = (time_to_99(delay_min), time_to_99(srtt));
        assert!(expected - sooner > 0.5, "{expected} vs {sooner}");

        let mut flow = Flow::linux(100.0, srtt);
        flow.sample_rtt_s = delay_min;
        run_for(&mut flow, 1.0);
        flow.view.cwnd = 100.0 * MSS;
        flow.loss(false);
        flow.ack();
        let start = flow.now_s;
        while flow.cwnd() < 99.0 {
            flow.ack();
        }
        let took = flow.now_s - start;
        assert!(
            (took - expected).abs() < 0.1,
            "99 segments after {took} s, Linux's rule {expected} s (one smoothed RTT ahead: {sooner} s)"
        );
    }

    /// An epoch that starts at a window above W_max (`last_max_cwnd <= cwnd` in Linux's
    /// `bictcp_update`) takes K = 0 and the curve from cwnd itself, which adds 0.4·t³ segments:
    /// 0.5 in the first second. With the Reno-friendly 8/15 per RTT (10 RTTs of 0.1 s) cwnd
    /// gains at most about 6 segments in that second. RFC 9438's K = ∛((W_max − cwnd)/C) is
    /// negative there and the curve rises at 3·C·K² = 16 segments/s from the start.
    #[test]
    fn linux_starts_the_curve_at_cwnd_above_w_max() {
        let mut flow = Flow::linux(100.0, 0.1);
        flow.loss(false);
        flow.view.cwnd = 120.0 * MSS;
        run_for(&mut flow, 10.0);
        let e = &flow.cc.epochs[0];
        assert_eq!((e.k, e.epoch_w_max), (0.0, 120.0));
        let bound = 120.0 + 0.4 * 1.1_f64.powi(3) + 10.0 * 8.0 / 15.0;
        assert!(flow.cwnd() < bound, "{} > {bound}", flow.cwnd());
        assert!(
            flow.cwnd() > 120.0 + 10.0 * 8.0 / 15.0 * 0.9,
            "{}",
            flow.cwnd()
        );
    }

    /// Linux's Reno-friendly estimate gains one segment per cwnd·15/8 acked, 8/15 per RTT, and
    /// keeps that rate above cwnd_prior, where RFC 9438 switches to one (the test below). At
    /// 1 ms RTT the curve barely moves, so cwnd follows the estimate: from 70 after a loss at
    /// 100, 30/(8/15) = 56 RTTs to regain 100, then 8/15 per RTT still.
    #[test]
    fn linuxs_reno_friendly_estimate_keeps_eight_fifteenths_per_rtt() {
        let mut flow = Flow::linux(100.0, 0.001);
        flow.loss(false);
        let mut rounds = 0;
        while flow.cwnd() < 105.0 {
            let per_rtt = flow.one_round();
            rounds += 1;
            assert!(
                (per_rtt - 8.0 / 15.0).abs() < 0.02,
                "round {rounds}: {per_rtt} per RTT"
            );
        }
        assert!(
            (rounds as f64 - 35.0 * 15.0 / 8.0).abs() < 3.0,
            "{rounds} rounds to 105"
        );
    }

    #[test]
    fn backed_off_timeouts_keep_the_window_that_met_congestion() {
        // The engine reports each backed-off RTO of one episode but sets ssthresh only once.
        let mut flow = Flow::new(1000.0, 0.1);
        flow.loss(true);
        let now = SimTime::from_secs_f64(flow.now_s);
        flow.cc.on_congestion_event(0, &[flow.view], now, true);
        flow.view.cwnd = 20.0 * MSS;
        flow.ack();
        let e = &flow.cc.epochs[0];
        assert_eq!(e.cwnd_prior, 1000.0);
        assert_eq!(e.alpha, ALPHA_AIMD);
        assert_eq!((e.k, e.epoch_w_max), (0.0, 20.0));
        // A loss below that epoch's W_max triggers fast convergence against it.
        flow.view.cwnd = 15.0 * MSS;
        flow.loss(false);
        flow.ack();
        assert!((flow.cc.epochs[0].epoch_w_max - 15.0 * 1.7 / 2.0).abs() < 1e-9);
    }

    #[test]
    fn reno_friendly_estimate_switches_alpha_at_cwnd_prior() {
        // At 1 ms RTT the cubic curve barely moves within a few hundred RTTs, so cwnd follows
        // W_est: α_cubic = 3(1−β)/(1+β) segments per RTT up to cwnd_prior, then 1.
        let rtt = 0.001;
        let mut flow = Flow::new(100.0, rtt);
        flow.loss(false);
        let mut rounds = 0;
        while flow.cwnd() < 100.0 {
            let per_rtt = flow.one_round();
            rounds += 1;
            if flow.cwnd() < 99.0 {
                assert!(
                    (per_rtt - ALPHA_AIMD).abs() < 0.02,
                    "round {rounds}: {per_rtt} per RTT"
                );
            }
        }
        assert!(
            (rounds as f64 - 30.0 / ALPHA_AIMD).abs() < 3.0,
            "{rounds} rounds to regain cwnd_prior"
        );
        for _ in 0..5 {
            let per_rtt = flow.one_round();
            assert!(
                (per_rtt - 1.0).abs() < 0.02,
                "{per_rtt} per RTT after the switch"
            );
        }
    }

    /// RFC 9438 §5.1 / spec §1.7: average window under deterministic loss in the cubic region.
    fn cubic_average_window(rtt: f64, p: f64) -> f64 {
        (0.4f64 * (3.0 + 0.7) / (4.0 * (1.0 - 0.7))).powf(0.25) * rtt.powf(0.75) / p.powf(0.75)
    }

    /// RFC 9438 eq. 3 (AIMD(α, β) average window) with α_cubic: the Reno-friendly region.
    fn aimd_average_window(p: f64) -> f64 {
        (ALPHA_AIMD * (1.0 + 0.7) / (2.0 * (1.0 - 0.7) * p)).sqrt()
    }

    #[test]
    fn average_window_matches_cubic_response_function() {
        // RFC 9438 table for RTT 0.1 s: 187 segments at p = 1e-4, 1054 at p = 1e-5.
        for (p, table) in [(1e-4, 187.0), (1e-5, 1054.0)] {
            let expected = cubic_average_window(0.1, p);
            assert!((expected - table).abs() / table < 0.01);
            assert!(expected > aimd_average_window(p), "cubic region expected");
            let got = Flow::new(expected, 0.1).average_window_with_deterministic_loss(p, 5, 20);
            assert!(
                (got - expected).abs() / expected < 0.10,
                "p = {p}: average {got}, expected {expected}"
            );
        }
    }

    #[test]
    fn small_rtt_and_high_loss_is_reno_friendly() {
        // RFC 9438 table for RTT 0.01 s: 38 segments at p = 1e-3, 120 at p = 1e-4, where the
        // cubic response alone would give 5.9 and 33.
        for (p, table) in [(1e-3, 38.0), (1e-4, 120.0)] {
            let expected = aimd_average_window(p);
            assert!((expected - table).abs() / table < 0.03);
            assert!(expected > 1.5 * cubic_average_window(0.01, p));
            let got = Flow::new(expected, 0.01).average_window_with_deterministic_loss(p, 10, 40);
            assert!(
                (got - expected).abs() / expected < 0.10,
                "p = {p}: average {got}, expected {expected}"
            );
        }
    }

    #[test]
    fn subflows_keep_independent_state() {
        let mut cubic = Cubic::new(params(), 2);
        let a = Flow::new(500.0, 0.05).view;
        let b = Flow::new(40.0, 0.2).view;
        cubic.on_congestion_event(0, &[a, b], SimTime::ZERO, false);
        cubic.ssthresh_after_loss(0, &[a, b], SimTime::ZERO);
        let mut a2 = a;
        a2.cwnd = 350.0 * MSS;
        let b_alone =
            Cubic::new(params(), 1).on_ack_ca(0, &[b], MSS as u64, SimTime::from_millis(5));
        cubic.on_ack_ca(0, &[a2, b], MSS as u64, SimTime::from_millis(5));
        assert_eq!(
            cubic.on_ack_ca(1, &[a2, b], MSS as u64, SimTime::from_millis(5)),
            b_alone
        );
        assert!(cubic.epochs[0].k > 0.0 && cubic.epochs[1].k == 0.0);
    }
}
