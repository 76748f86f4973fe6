//! Receive-buffer optimisations against head-of-line blocking (spec §3.6): opportunistic
//! retransmission (M1) and penalising slow subflows (M2), Raiciu et al., "How Hard Can It Be?
//! Designing and Implementing a Deployable Multipath TCP", NSDI 2012 §4.2, in the form of the
//! out-of-tree Linux `mptcp_rcv_buf_optimization()`; the `conext13` variant is the fix of
//! Paasch, Khalili, Bonaventure, "On the Benefits of Applying Experimental Design to Improve
//! Multipath TCP", CoNEXT 2013 §5: leave ssthresh alone while the penalised subflow is in slow
//! start.
//!
//! The two variants differ only in the slow subflow's ssthresh:
//! - `nsdi12`: the 2012 out-of-tree code (`net/mptcp/mptcp_output.c` of that time) sets
//!   `snd_ssthresh = max(snd_cwnd, 2)` after halving `snd_cwnd`: ssthresh becomes the halved
//!   window, so a subflow penalised during slow start leaves it at once — the behaviour the
//!   CoNEXT 2013 study found harmful on high-BDP paths. (An intermediate version halved only a
//!   finite ssthresh; in a run that starts with an infinite ssthresh it differs from the fix only
//!   after a timeout, which is why it is not the reference here.)
//! - `conext13`: halve ssthresh only if the subflow was not in slow start
//!   (`prior_cwnd >= snd_ssthresh`), otherwise leave it.

use crate::scenario::Penalization;
use crate::tcp::Subflow;
use crate::time::SimTime;

/// Options of the optimisation, from the flow's settings.
#[derive(Clone, Copy, Debug)]
pub struct RbufOptions {
    pub penalization: Penalization,
    pub opportunistic: bool,
    pub oretx_rtt_factor: f64,
    pub oretx_small_cwnd: u32,
}

/// The head-of-line segment: its data range, the subflows it was sent on, and the first of them.
#[derive(Clone, Copy, Debug)]
pub struct HeadOfLine {
    pub dsn: u64,
    pub len: u32,
    pub sent_mask: u32,
    pub holder: usize,
}

/// Penalise the holder of the head of line if `s` is faster; at most once per srtt of `s`.
/// Returns true when a penalty was applied.
pub fn maybe_penalize(
    opts: &RbufOptions,
    subflows: &mut [Subflow],
    s: usize,
    head: &HeadOfLine,
    last_penalty: &mut Option<SimTime>,
    now: SimTime,
) -> bool {
    if opts.penalization == Penalization::Off || head.holder == s {
        return false;
    }
    let srtt_s = subflows[s].rtt.srtt;
    if let Some(last) = *last_penalty {
        if (now - last).as_secs_f64() < srtt_s {
            return false;
        }
    }
    let t = &mut subflows[head.holder];
    if srtt_s >= t.rtt.srtt || t.in_recovery || t.in_loss_state() {
        return false;
    }
    let mss = t.mss() as f64;
    let in_slow_start = t.cwnd < t.ssthresh;
    t.cwnd = (t.cwnd / 2.0).max(mss);
    match opts.penalization {
        Penalization::Nsdi12 => t.ssthresh = t.cwnd.max(2.0 * mss),
        Penalization::Conext13 if !in_slow_start => {
            t.ssthresh = (t.ssthresh / 2.0).max(2.0 * mss);
        }
        Penalization::Conext13 | Penalization::Off => {}
    }
    *last_penalty = Some(now);
    true
}

/// Whether the head of line should be re-sent on subflow `s` (opportunistic retransmission).
pub fn should_retransmit_opportunistically(
    opts: &RbufOptions,
    subflows: &[Subflow],
    s: usize,
    head: &HeadOfLine,
) -> bool {
    if !opts.opportunistic || head.sent_mask & (1 << s) != 0 {
        return false;
    }
    let t = &subflows[head.holder];
    let sf = &subflows[s];
    let small_cwnd = t.cwnd <= opts.oretx_small_cwnd as f64 * t.mss() as f64;
    opts.oretx_small_cwnd == 0 || small_cwnd || opts.oretx_rtt_factor * sf.rtt.srtt < t.rtt.srtt
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpOptions;

    fn pair() -> Vec<Subflow> {
        let opts = TcpOptions::default();
        let mut fast = Subflow::new(0, 0, 1, SimTime::from_millis(20), &opts);
        let mut slow = Subflow::new(1, 2, 3, SimTime::from_millis(200), &opts);
        for (sf, rtt) in [(&mut fast, 0.02), (&mut slow, 0.2)] {
            sf.established = true;
            sf.rtt.sample(rtt);
        }
        vec![fast, slow]
    }

    fn opts(p: Penalization) -> RbufOptions {
        RbufOptions {
            penalization: p,
            opportunistic: true,
            oretx_rtt_factor: 4.0,
            oretx_small_cwnd: 4,
        }
    }

    const HEAD_ON_SLOW: HeadOfLine = HeadOfLine {
        dsn: 0,
        len: 1448,
        sent_mask: 0b10,
        holder: 1,
    };

    /// In slow start NSDI 2012 sets ssthresh to the halved window (ending slow start, even from
    /// an infinite ssthresh); the CoNEXT 2013 fix leaves ssthresh alone (spec §3.6).
    #[test]
    fn the_variants_differ_on_ssthresh_in_slow_start() {
        for (variant, ssthresh, expected_ssthresh) in [
            (Penalization::Nsdi12, f64::INFINITY, 15.0 * 1448.0),
            (Penalization::Nsdi12, 40.0 * 1448.0, 15.0 * 1448.0),
            (Penalization::Conext13, f64::INFINITY, f64::INFINITY),
            (Penalization::Conext13, 40.0 * 1448.0, 40.0 * 1448.0),
        ] {
            let mut sfs = pair();
            sfs[1].cwnd = 30.0 * 1448.0;
            sfs[1].ssthresh = ssthresh;
            let mut last = None;
            assert!(maybe_penalize(
                &opts(variant),
                &mut sfs,
                0,
                &HEAD_ON_SLOW,
                &mut last,
                SimTime::from_millis(500)
            ));
            assert_eq!(sfs[1].cwnd, 15.0 * 1448.0);
            assert_eq!(
                sfs[1].ssthresh, expected_ssthresh,
                "{variant:?} from {ssthresh}"
            );
        }
    }

    /// In congestion avoidance the fix halves cwnd and ssthresh; penalties are spaced by the
    /// fast subflow's RTT; a slower subflow never penalises a faster one; `off` never does.
    #[test]
    fn penalties_follow_the_rules() {
        let mut sfs = pair();
        sfs[1].cwnd = 40.0 * 1448.0;
        sfs[1].ssthresh = 30.0 * 1448.0;
        let mut last = None;
        let t0 = SimTime::from_millis(500);
        assert!(maybe_penalize(
            &opts(Penalization::Conext13),
            &mut sfs,
            0,
            &HEAD_ON_SLOW,
            &mut last,
            t0
        ));
        assert_eq!(
            (sfs[1].cwnd, sfs[1].ssthresh),
            (20.0 * 1448.0, 15.0 * 1448.0)
        );
        assert!(!maybe_penalize(
            &opts(Penalization::Conext13),
            &mut sfs,
            0,
            &HEAD_ON_SLOW,
            &mut last,
            t0 + SimTime::from_millis(10)
        ));
        assert!(maybe_penalize(
            &opts(Penalization::Conext13),
            &mut sfs,
            0,
            &HEAD_ON_SLOW,
            &mut last,
            t0 + SimTime::from_millis(30)
        ));
        let head_on_fast = HeadOfLine {
            holder: 0,
            sent_mask: 0b01,
            ..HEAD_ON_SLOW
        };
        assert!(!maybe_penalize(
            &opts(Penalization::Conext13),
            &mut sfs,
            1,
            &head_on_fast,
            &mut None,
            t0
        ));
        assert!(!maybe_penalize(
            &opts(Penalization::Off),
            &mut sfs,
            0,
            &HEAD_ON_SLOW,
            &mut None,
            t0
        ));
    }

    /// Opportunistic retransmission: only on a subflow that has not carried the segment, and
    /// only when the holder is much slower or has a tiny window (unless the factor is 0).
    #[test]
    fn opportunistic_retransmission_conditions() {
        let mut sfs = pair();
        sfs[1].cwnd = 40.0 * 1448.0;
        assert!(
            should_retransmit_opportunistically(&opts(Penalization::Off), &sfs, 0, &HEAD_ON_SLOW),
            "200 ms > 4 × 20 ms"
        );
        let carried = HeadOfLine {
            sent_mask: 0b11,
            ..HEAD_ON_SLOW
        };
        assert!(!should_retransmit_opportunistically(
            &opts(Penalization::Off),
            &sfs,
            0,
            &carried
        ));
        sfs[0].rtt = crate::tcp::rtt::RttEstimator::new(crate::scenario::RtoPolicy::Linux);
        sfs[0].rtt.sample(0.1);
        assert!(
            !should_retransmit_opportunistically(&opts(Penalization::Off), &sfs, 0, &HEAD_ON_SLOW),
            "100 ms × 4 > 200 ms, cwnd 40"
        );
        sfs[1].cwnd = 3.0 * 1448.0;
        assert!(
            should_retransmit_opportunistically(&opts(Penalization::Off), &sfs, 0, &HEAD_ON_SLOW),
            "holder cwnd ≤ 4"
        );
    }
}
