//! Receive-buffer optimisations against head-of-line blocking (spec §3.6): opportunistic
//! retransmission (M1) and penalising slow subflows (M2), Raiciu et al., "How Hard Can It Be?
//! Designing and Implementing a Deployable Multipath TCP", NSDI 2012 §4.2, in the form of the
//! out-of-tree Linux `mptcp_rcv_buf_optimization()`; the `conext13` variant is the fix of
//! Paasch, Khalili, Bonaventure, "On the Benefits of Applying Experimental Design to Improve
//! Multipath TCP", CoNEXT 2013 §5: leave ssthresh alone while the penalised subflow is in slow
//! start.
//!
//! The two variants are the code before and after that fix; they differ in which subflow is
//! penalised, how often, and its ssthresh:
//! - `nsdi12`: the out-of-tree code of 2011–2013 (`mptcp_output.c`, the code the CoNEXT 2013
//!   study measured): the holder T of the head of line is penalised when its rate is below that
//!   of the subflow S that found the window full (`cwnd_T/srtt_T < cwnd_S/srtt_S`), whatever
//!   its congestion state, at most once per srtt of T (T's own `last_rbuf_opti`); it sets
//!   `snd_ssthresh = max(snd_cwnd, 2)` after halving `snd_cwnd`: ssthresh becomes the halved
//!   window, so a subflow penalised during slow start leaves it at once — the behaviour the
//!   CoNEXT 2013 study found harmful on high-BDP paths.
//! - `conext13`: the later `mptcp_sched.c`: T is penalised when S has the shorter srtt and T is
//!   in CA state Open (not recovering, no timeout under way), at most once per srtt of S (S's
//!   `last_rbuf_opti`); ssthresh is halved only if T was not in slow start
//!   (`prior_cwnd >= snd_ssthresh`), otherwise left alone. (An intermediate version already
//!   had this trigger and halved only a finite ssthresh.)
//!
//! Opportunistic retransmission is the same in both.
//!
//! Which subflows count as the holders of the head of line: both versions walk the
//! connection's subflow list over the subflows the head was sent on (its path mask), the
//! caller aside. The penalty goes to the first of them, or to none when that one was penalised
//! too recently (nsdi12) or is not slower; opportunistic retransmission fires on the first
//! holder with a window of at most four segments, is vetoed by the first holder that is not
//! four times slower, and fires when every holder walked is. The 2011–2013 code links a new
//! subflow at the head of that list (`mptcp_add_sock`), so the walk goes from the newest
//! subflow, the highest index here, down; the later code is taken to keep that order. With two
//! subflows the walk finds the other one; it matters with three or more, and when the asking
//! subflow itself carried the head (a re-sent head).

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

/// The head-of-line segment: its data range and the subflows it was sent on.
#[derive(Clone, Copy, Debug)]
pub struct HeadOfLine {
    pub dsn: u64,
    pub len: u32,
    pub sent_mask: u32,
}

impl HeadOfLine {
    /// The subflows other than `s` that carried the head, in the kernel's list order (newest
    /// subflow first).
    fn holders_except(&self, s: usize) -> impl Iterator<Item = usize> {
        let mask = self.sent_mask & !(1u32 << s);
        (0..u32::BITS as usize)
            .rev()
            .filter(move |&i| mask & (1 << i) != 0)
    }
}

/// Penalise the holder of the head of line (see the module text for which one) if `s` is
/// faster, by the variant's rules. Returns the subflow penalised.
pub fn maybe_penalize(
    opts: &RbufOptions,
    subflows: &mut [Subflow],
    s: usize,
    head: &HeadOfLine,
    now: SimTime,
) -> Option<usize> {
    let nsdi12 = match opts.penalization {
        Penalization::Off => return None,
        Penalization::Nsdi12 => true,
        Penalization::Conext13 => false,
    };
    let t = head.holders_except(s).next()?;
    let (fast, slow) = (&subflows[s], &subflows[t]);
    let penalise = if nsdi12 {
        // cwnd_T/srtt_T < cwnd_S/srtt_S, as the kernel compared it (in whole products).
        !recent(slow.last_rbuf_opti, slow.rtt.srtt, now)
            && slow.cwnd * fast.rtt.srtt < fast.cwnd * slow.rtt.srtt
    } else {
        !recent(fast.last_rbuf_opti, fast.rtt.srtt, now)
            && fast.rtt.srtt < slow.rtt.srtt
            && !slow.in_recovery
            && !slow.in_loss_state()
    };
    if !penalise {
        return None;
    }
    let slow = &mut subflows[t];
    let mss = slow.mss() as f64;
    let in_slow_start = slow.cwnd < slow.ssthresh;
    slow.cwnd = (slow.cwnd / 2.0).max(mss);
    if nsdi12 {
        slow.ssthresh = slow.cwnd.max(2.0 * mss);
        slow.last_rbuf_opti = Some(now);
    } else {
        if !in_slow_start {
            slow.ssthresh = (slow.ssthresh / 2.0).max(2.0 * mss);
        }
        subflows[s].last_rbuf_opti = Some(now);
    }
    Some(t)
}

/// Whether a penalty at `last` is less than `srtt_s` seconds before `now`.
fn recent(last: Option<SimTime>, srtt_s: f64, now: SimTime) -> bool {
    last.is_some_and(|last| (now - last).as_secs_f64() < srtt_s)
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
    let sf = &subflows[s];
    let mut retransmit = false;
    for t in head.holders_except(s).map(|t| &subflows[t]) {
        // A threshold of 0 makes the first holder decide: unconditional.
        if opts.oretx_small_cwnd == 0 || t.cwnd <= opts.oretx_small_cwnd as f64 * t.mss() as f64 {
            return true;
        }
        if opts.oretx_rtt_factor * sf.rtt.srtt >= t.rtt.srtt {
            return false;
        }
        retransmit = true;
    }
    retransmit
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::TcpOptions;
    use crate::tcp::testing::{established, MSS};

    fn pair() -> Vec<Subflow> {
        let opts = TcpOptions::default();
        let mut fast = Subflow::new(0, 0, 1, SimTime::from_millis(20), &opts);
        let mut slow = Subflow::new(1, 2, 3, SimTime::from_millis(200), &opts);
        for (sf, rtt) in [(&mut fast, 0.02), (&mut slow, 0.2)] {
            sf.established = true;
            sf.rtt.sample(rtt, SimTime::ZERO);
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
    };

    fn penalize(variant: Penalization, sfs: &mut [Subflow], s: usize, at_ms: u64) -> bool {
        let head = if s == 0 {
            HEAD_ON_SLOW
        } else {
            HeadOfLine {
                sent_mask: 0b01,
                ..HEAD_ON_SLOW
            }
        };
        maybe_penalize(&opts(variant), sfs, s, &head, SimTime::from_millis(at_ms)).is_some()
    }

    /// In slow start NSDI 2012 sets ssthresh to the halved window (ending slow start, even from
    /// an infinite ssthresh); the CoNEXT 2013 fix leaves ssthresh alone (spec §3.6).
    #[test]
    fn the_variants_differ_on_ssthresh_in_slow_start() {
        for (variant, ssthresh, expected_ssthresh) in [
            (Penalization::Nsdi12, f64::INFINITY, 15.0 * MSS),
            (Penalization::Nsdi12, 40.0 * MSS, 15.0 * MSS),
            (Penalization::Conext13, f64::INFINITY, f64::INFINITY),
            (Penalization::Conext13, 40.0 * MSS, 40.0 * MSS),
        ] {
            let mut sfs = pair();
            sfs[0].cwnd = 10.0 * MSS; // 500 segments/s against the slow one's 150
            sfs[1].cwnd = 30.0 * MSS;
            sfs[1].ssthresh = ssthresh;
            assert!(penalize(variant, &mut sfs, 0, 500));
            assert_eq!(sfs[1].cwnd, 15.0 * MSS);
            assert_eq!(
                sfs[1].ssthresh, expected_ssthresh,
                "{variant:?} from {ssthresh}"
            );
        }
    }

    /// In congestion avoidance the fix halves cwnd and ssthresh; its penalties are spaced by
    /// the fast subflow's RTT; a slower subflow never penalises a faster one; `off` never does.
    #[test]
    fn conext13_penalties_follow_the_rules() {
        let mut sfs = pair();
        sfs[1].cwnd = 40.0 * MSS;
        sfs[1].ssthresh = 30.0 * MSS;
        assert!(penalize(Penalization::Conext13, &mut sfs, 0, 500));
        assert_eq!((sfs[1].cwnd, sfs[1].ssthresh), (20.0 * MSS, 15.0 * MSS));
        assert!(
            !penalize(Penalization::Conext13, &mut sfs, 0, 510),
            "within 20 ms"
        );
        assert!(penalize(Penalization::Conext13, &mut sfs, 0, 530));
        assert!(!penalize(Penalization::Conext13, &mut pair(), 1, 500));
        assert!(!penalize(Penalization::Off, &mut pair(), 0, 500));
    }

    /// The 2012 code compares rates, not round-trip times: a shorter-RTT subflow with a small
    /// window does not penalise a long-RTT one that carries more, and a long-RTT subflow that
    /// carries more penalises a short-RTT one that carries less; the fix compares srtt alone.
    #[test]
    fn nsdi12_penalises_the_slower_rate_and_conext13_the_longer_rtt() {
        let setup = || {
            let mut sfs = pair();
            sfs[0].cwnd = 2.0 * MSS; // 100 segments/s at 20 ms
            sfs[1].cwnd = 40.0 * MSS; // 200 segments/s at 200 ms
            sfs[1].ssthresh = 30.0 * MSS;
            sfs
        };
        assert!(!penalize(Penalization::Nsdi12, &mut setup(), 0, 500));
        assert!(penalize(Penalization::Conext13, &mut setup(), 0, 500));
        // The long-RTT subflow finds the window full behind the short one's segment.
        assert!(penalize(Penalization::Nsdi12, &mut setup(), 1, 500));
        assert!(!penalize(Penalization::Conext13, &mut setup(), 1, 500));
    }

    /// The 2012 code spaces penalties by the penalised subflow's RTT and penalises whatever its
    /// congestion state; the fix spaces them by the penalising subflow's RTT and spares a
    /// subflow in recovery.
    #[test]
    fn nsdi12_spacing_and_state() {
        let mut sfs = pair();
        sfs[0].cwnd = 10.0 * MSS;
        sfs[1].cwnd = 40.0 * MSS;
        sfs[1].ssthresh = 30.0 * MSS;
        assert!(penalize(Penalization::Nsdi12, &mut sfs, 0, 500));
        assert!(
            !penalize(Penalization::Nsdi12, &mut sfs, 0, 530),
            "within 200 ms"
        );
        assert!(
            !penalize(Penalization::Nsdi12, &mut sfs, 0, 690),
            "within 200 ms"
        );
        assert!(penalize(Penalization::Nsdi12, &mut sfs, 0, 710));

        let in_recovery = || {
            let mut sfs = pair();
            sfs[0].cwnd = 10.0 * MSS;
            sfs[1].cwnd = 40.0 * MSS;
            sfs[1].in_recovery = true;
            sfs
        };
        assert!(penalize(Penalization::Nsdi12, &mut in_recovery(), 0, 500));
        assert!(!penalize(
            Penalization::Conext13,
            &mut in_recovery(),
            0,
            500
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
        sfs[0].rtt.sample(0.1, SimTime::ZERO);
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

    /// Three subflows (indices 0, 1, 2) with these RTTs (seconds) and windows (segments).
    fn three(rtt: [f64; 3], cwnd: [f64; 3]) -> Vec<Subflow> {
        (0..3)
            .map(|i| established(i as u16, rtt[i], cwnd[i], cwnd[i]))
            .collect()
    }

    const RTTS: [f64; 3] = [0.02, 0.1, 0.2];

    /// The head was sent on subflows 1 and 2 (a re-sent head). The out-of-tree code walks its
    /// subflow list, newest first, over the head's path mask and stops at the first other
    /// holder: subflow 2 is penalised, not subflow 1 that may have carried it first; and a
    /// holder that finds the window full itself penalises the other holder.
    #[test]
    fn the_penalty_goes_to_the_first_holder_in_list_order() {
        let head = HeadOfLine {
            dsn: 0,
            len: 1448,
            sent_mask: 0b110,
        };
        for variant in [Penalization::Nsdi12, Penalization::Conext13] {
            let mut sfs = three(RTTS, [10.0, 40.0, 40.0]);
            let at = SimTime::from_millis(500);
            assert_eq!(
                maybe_penalize(&opts(variant), &mut sfs, 0, &head, at),
                Some(2)
            );
            assert_eq!(sfs[2].cwnd, 20.0 * MSS, "{variant:?}");
            assert_eq!(sfs[1].cwnd, 40.0 * MSS, "{variant:?}");
        }
        // Subflow 1 (100 ms, 40 segments: 400 segments/s) against holder 2 (200 ms, 10
        // segments: 50/s): both variants find 2 slower.
        for variant in [Penalization::Nsdi12, Penalization::Conext13] {
            let mut sfs = three(RTTS, [10.0, 40.0, 10.0]);
            let at = SimTime::from_millis(500);
            assert_eq!(
                maybe_penalize(&opts(variant), &mut sfs, 1, &head, at),
                Some(2)
            );
        }
        // The first holder in list order is faster than the asking subflow: nobody is penalised,
        // although the other holder is slower. Here subflow 2 has the 20 ms RTT and subflow 0
        // the 200 ms one; subflow 1 (100 ms) finds the window full.
        let mut sfs = three([0.2, 0.1, 0.02], [40.0, 40.0, 40.0]);
        let on_0_and_2 = HeadOfLine {
            sent_mask: 0b101,
            ..head
        };
        let at = SimTime::from_millis(500);
        let conext13 = opts(Penalization::Conext13);
        assert_eq!(
            maybe_penalize(&conext13, &mut sfs, 1, &on_0_and_2, at),
            None
        );
        assert_eq!(sfs[0].cwnd, 40.0 * MSS);
        // Subflow 2 (200 ms) carried the head and subflow 0 (20 ms) re-sent it; when subflow 2
        // finds the window full, the 2012 rate rule penalises subflow 0 if its rate is the lower
        // (here 5 segments against 40 over 200 ms: 250/s against 200/s, so not; with 3, yes).
        let resent = HeadOfLine {
            sent_mask: 0b101,
            ..head
        };
        let nsdi12 = opts(Penalization::Nsdi12);
        let mut sfs = three(RTTS, [5.0, 40.0, 40.0]);
        assert_eq!(maybe_penalize(&nsdi12, &mut sfs, 2, &resent, at), None);
        let mut sfs = three(RTTS, [3.0, 40.0, 40.0]);
        assert_eq!(maybe_penalize(&nsdi12, &mut sfs, 2, &resent, at), Some(0));
    }

    /// Opportunistic retransmission walks the holders the same way: the first with a window of
    /// at most four segments makes it fire, the first that is not four times slower than the
    /// asking subflow vetoes it, and it fires when every holder walked was four times slower.
    #[test]
    fn opportunistic_retransmission_walks_every_holder() {
        // (windows, asking subflow, head's path mask, expected, why); RTTs 20, 100, 200 ms.
        let cases = [
            (
                [10.0, 40.0, 40.0],
                0,
                0b110,
                true,
                "holders 2 then 1 both more than four times slower",
            ),
            (
                [3.0, 40.0, 40.0],
                1,
                0b101,
                false,
                "holder 2 is not four times slower and comes before holder 0's small window",
            ),
            (
                [40.0, 40.0, 4.0],
                1,
                0b101,
                true,
                "holder 2's window of four segments decides before any veto",
            ),
            (
                [3.0, 40.0, 40.0],
                2,
                0b011,
                false,
                "holder 1 vetoes; holder 0 is never reached",
            ),
        ];
        for (cwnd, asking, mask, expected, why) in cases {
            let head = HeadOfLine {
                dsn: 0,
                len: 1448,
                sent_mask: mask,
            };
            let o = opts(Penalization::Off);
            let got = should_retransmit_opportunistically(&o, &three(RTTS, cwnd), asking, &head);
            assert_eq!(got, expected, "{why}");
        }
    }
}
