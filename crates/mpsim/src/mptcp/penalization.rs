//! Receive-buffer optimisations against head-of-line blocking (spec §3.6): opportunistic
//! retransmission (M1) and penalising slow subflows (M2), Raiciu et al., "How Hard Can It Be?
//! Designing and Implementing a Deployable Multipath TCP", NSDI 2012 §4.2, in the form of the
//! out-of-tree Linux `mptcp_rcv_buf_optimization()`; the `conext13` variant is the fix of
//! Paasch, Khalili, Bonaventure, "On the Benefits of Applying Experimental Design to Improve
//! Multipath TCP", CoNEXT 2013 §5: leave ssthresh alone while the penalised subflow is in slow
//! start.

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
    let halve_ssthresh = match opts.penalization {
        Penalization::Nsdi12 => t.ssthresh.is_finite(),
        Penalization::Conext13 => !in_slow_start,
        Penalization::Off => false,
    };
    if halve_ssthresh {
        t.ssthresh = (t.ssthresh / 2.0).max(2.0 * mss);
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
