//! MPTCP packet schedulers (spec §3.5, §3.8): which subflow carries the next segment.
//!
//! - `minrtt`: the out-of-tree Linux default (`mptcp_sched.c`): the available subflow with the
//!   lowest smoothed RTT; a reinjection avoids subflows that already carried the data.
//! - `roundrobin`: `mptcp_rr.c` with num_segments = 1 and cwnd_limited = true.
//! - `redundant`: `mptcp_redundant.c`: minrtt for the original, a copy for every other subflow.
//! - `linger`: the upstream Linux default (`mptcp_subflow_get_send`, protocol.c): the subflow
//!   whose queued data would drain soonest at its pacing rate averaged over its bursts, fed in
//!   bursts of up to `MPTCP_SEND_BURST_SIZE`.

use crate::scenario::SchedulerKind;
use crate::tcp::{truesize, Subflow};

/// Upstream `MPTCP_SEND_BURST_SIZE`: 64 KiB minus header and option space.
pub const LINGER_BURST_BYTES: u64 = 65_428;

/// Available for new data in the out-of-tree sense (`mptcp_is_available`): established, not in
/// the RTO loss state, no go-back-N retransmissions or assigned data waiting, and room for a
/// segment in the congestion window. (The costly test, the scan for lost segments, comes last.)
pub fn available(sf: &Subflow) -> bool {
    sf.established
        && !sf.in_loss_state()
        && sf.assigned.is_empty()
        && sf.has_cwnd_space()
        && !sf.has_retransmissions_pending()
}

/// [`available`] for a subflow that owes nothing (`Subflow::owes_nothing`: nothing assigned, no
/// go-back-N sweep or SACK recovery, hence no retransmission pending).
pub fn available_owing_nothing(sf: &Subflow) -> bool {
    sf.established && !sf.in_loss_state() && sf.has_cwnd_space()
}

fn srtt_or_base(sf: &Subflow) -> f64 {
    if sf.rtt.srtt > 0.0 {
        sf.rtt.srtt
    } else {
        sf.base_rtt.as_secs_f64()
    }
}

/// The subflows [`available`] now, as a bit mask (a connection has at most 32 subflows). The
/// push loop computes it once and then only updates the subflow it sent on.
pub fn available_mask(subflows: &[Subflow]) -> u32 {
    subflows
        .iter()
        .enumerate()
        .filter(|(_, sf)| available(sf))
        .fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The lowest-RTT subflow of `candidates`. Ties go to the first subflow.
fn min_rtt(subflows: &[Subflow], candidates: u32) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, sf) in subflows.iter().enumerate() {
        if candidates & (1 << i) == 0 {
            continue;
        }
        let rtt = srtt_or_base(sf);
        if best.is_none_or(|(_, b)| rtt.total_cmp(&b).is_lt()) {
            best = Some((i, rtt));
        }
    }
    best.map(|(i, _)| i)
}

/// The next subflow of `candidates` after `last`, cyclically.
fn round_robin(n: usize, last: usize, candidates: u32) -> Option<usize> {
    (1..=n)
        .map(|k| (last + k) % n)
        .find(|&i| candidates & (1 << i) != 0)
}

/// Linux `tcp_update_pacing_rate`, bytes/s: 2·cwnd/srtt below half of ssthresh (early slow
/// start), 1.2·cwnd/srtt above it.
fn pacing_rate_now(sf: &Subflow) -> f64 {
    let ratio = if sf.cwnd < sf.ssthresh / 2.0 {
        2.0
    } else {
        1.2
    };
    ratio * sf.cwnd / srtt_or_base(sf)
}

/// Set the subflow's pacing rate, as Linux does at establishment and on each ACK; between
/// them it stays as set, so a window that a timeout or a restart after idle has just cut
/// shows in the rate only at the next ACK.
pub fn update_pacing_rate(sf: &mut Subflow) {
    sf.sk_pacing_rate = pacing_rate_now(sf);
}

/// The pacing rate as last set ([`update_pacing_rate`]), or as it would be set now if it has
/// not been yet.
pub fn pacing_rate(sf: &Subflow) -> f64 {
    if sf.sk_pacing_rate > 0.0 {
        sf.sk_pacing_rate
    } else {
        pacing_rate_now(sf)
    }
}

/// What Linux charges subflow `sf` for its queued data (`sk_wmem_queued`): the data assigned
/// and not sent, and the data sent and not acknowledged, at their skbs' truesize
/// ([`truesize::wmem_queued`]).
pub fn wmem_queued(sf: &Subflow) -> u64 {
    truesize::wmem_queued(
        sf.assigned_bytes,
        sf.high_data - sf.snd_una,
        sf.mss(),
        pacing_rate(sf),
    )
}

/// Upstream linger-time choice (`mptcp_subflow_get_send`): among established, non-stale
/// subflows, the one with the smallest `sk_wmem_queued / avg_pacing_rate` ([`wmem_queued`]).
/// A subflow's average starts at its pacing rate the first time the scheduler looks at it and
/// then moves only as bursts are given to it ([`note_linger_burst`]), so a path whose first
/// round trips ran before its queue built keeps a high average, and short linger times, for
/// many bursts.
/// Whether that subflow has send-buffer room is the caller's test: upstream returns no subflow
/// when the fastest-draining one is full (`sk_stream_memory_free`), rather than falling back
/// to a slower one.
pub fn linger(subflows: &mut [Subflow], exclude_mask: u32) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, sf) in subflows.iter_mut().enumerate() {
        // `mptcp_subflow_active`: established and not stale; unlike the out-of-tree
        // schedulers, upstream does not skip a subflow in the RTO Loss state (its cwnd of one
        // segment gives it a long linger time instead).
        if exclude_mask & (1 << i) != 0 || !sf.established || sf.is_stale() {
            continue;
        }
        if sf.avg_pacing_rate == 0.0 {
            sf.avg_pacing_rate = pacing_rate(sf);
        }
        let linger_time = wmem_queued(sf) as f64 / sf.avg_pacing_rate;
        if best.is_none_or(|(_, b)| linger_time < b) {
            best = Some((i, linger_time));
        }
    }
    best.map(|(i, _)| i)
}

/// The linger scheduler gives `sf` a burst of `burst` bytes (at most `MPTCP_SEND_BURST_SIZE`,
/// within the peer's window): its pacing rate now enters the average, weighted by the burst
/// against what the subflow already queues, `avg ← (avg·wmem + pacing·burst)/(burst + wmem)`
/// (spec §3.8).
pub fn note_linger_burst(sf: &mut Subflow, burst: u64) {
    if burst == 0 {
        return;
    }
    let wmem = wmem_queued(sf) as f64;
    let burst = burst as f64;
    sf.avg_pacing_rate = (sf.avg_pacing_rate * wmem + pacing_rate(sf) * burst) / (burst + wmem);
}

/// Pick the subflow for the next segment among `candidates`, a mask of available subflows, for
/// the out-of-tree schedulers (linger chooses by [`linger`]). With one candidate or none, as
/// always for plain TCP, every one of them has the same answer.
#[inline(always)]
pub fn pick(
    kind: SchedulerKind,
    subflows: &[Subflow],
    rr_last: usize,
    candidates: u32,
) -> Option<usize> {
    if candidates & candidates.wrapping_sub(1) == 0 {
        return (candidates != 0).then_some(candidates.trailing_zeros() as usize);
    }
    match kind {
        SchedulerKind::Minrtt | SchedulerKind::Redundant => min_rtt(subflows, candidates),
        SchedulerKind::Roundrobin => round_robin(subflows.len(), rr_last, candidates),
        SchedulerKind::Linger => unreachable!("linger picks by drain time"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::testing::{established, MSS};

    fn subflow(index: u16, cwnd_segments: f64, ssthresh_segments: f64) -> Subflow {
        let mut sf = established(index, 0.1, cwnd_segments, ssthresh_segments);
        sf.assigned_bytes = 100_000;
        sf
    }

    /// Linux paces at twice the window per RTT only below half of ssthresh
    /// (`tcp_update_pacing_rate`): a subflow back in slow start after a timeout with 30 of 40
    /// segments paces at 1.2 × 30 = 36 segments per RTT, slower than one at 20 segments in its
    /// first slow start (2 × 20 = 40), so the equal queue drains sooner on the second.
    #[test]
    fn linger_paces_a_window_above_half_of_ssthresh_at_the_congestion_avoidance_ratio() {
        let mut subflows = [subflow(0, 30.0, 40.0), subflow(1, 20.0, f64::INFINITY)];
        assert_eq!(linger(&mut subflows, 0), Some(1));
        let mut below_half = [subflow(0, 19.0, 40.0), subflow(1, 20.0, f64::INFINITY)];
        assert_eq!(linger(&mut below_half, 0), Some(1), "2 × 19 < 2 × 20");
        let mut both_early = [subflow(0, 21.0, 50.0), subflow(1, 20.0, f64::INFINITY)];
        assert_eq!(linger(&mut both_early, 0), Some(0), "2 × 21 > 2 × 20");
    }

    /// Upstream ranks by the pacing rate averaged over the bursts a subflow was given, not by
    /// today's rate (`mptcp_subflow_get_send`). Subflow 0 is first seen at 10 segments per 10 ms
    /// (2 × 10 × 1448 B / 10 ms = 2.896 MB/s); its RTT then grows to 100 ms (0.2896 MB/s now),
    /// against subflow 1 at 10 segments per 50 ms (0.5792 MB/s); both queue 100 kB unsent, two
    /// size-goal skbs charged 102 560 bytes. By today's rates subflow 1 drains sooner, but
    /// subflow 0 keeps the choice until its average falls below 0.5792 MB/s: each 65 428-byte
    /// burst keeps r = 102 560 / 167 988 of the distance to today's rate, and
    /// r^k · 2.6064 MB/s + 0.2896 MB/s > 0.5792 MB/s holds for k ≤ 4.
    #[test]
    fn linger_ranks_by_the_pacing_rate_averaged_over_bursts() {
        let queued_100k = |index: u16, rtt_s: f64| {
            let mut sf = established(index, rtt_s, 10.0, f64::INFINITY);
            sf.assigned_bytes = 100_000;
            sf
        };
        let mut subflows = [queued_100k(0, 0.01), queued_100k(1, 0.05)];
        assert_eq!(linger(&mut subflows, 0), Some(0));
        assert!((subflows[0].avg_pacing_rate - 2_896_000.0).abs() < 1.0);
        for _ in 0..200 {
            subflows[0].rtt.sample(0.1, crate::time::SimTime::ZERO);
        }
        assert!((pacing_rate(&subflows[0]) - 289_600.0).abs() < 10.0);
        for burst in 1..=4 {
            note_linger_burst(&mut subflows[0], LINGER_BURST_BYTES);
            assert_eq!(linger(&mut subflows, 0), Some(0), "after burst {burst}");
        }
        note_linger_burst(&mut subflows[0], LINGER_BURST_BYTES);
        assert_eq!(linger(&mut subflows, 0), Some(1));
        let r: f64 = 102_560.0 / 167_988.0;
        let expected = r.powi(5) * (2_896_000.0 - 289_600.0) + 289_600.0;
        assert!((subflows[0].avg_pacing_rate - expected).abs() < 10.0);
    }

    /// Linux sets `sk_pacing_rate` at establishment and on each ACK only
    /// (`tcp_update_pacing_rate`): a window cut from 40 to 10 segments by a restart after idle
    /// or a timeout leaves the rate the linger scheduler reads, and so its choice, as it was
    /// until the next ACK.
    #[test]
    fn the_pacing_rate_follows_the_window_at_the_next_ack() {
        let mut cut = subflow(0, 40.0, f64::INFINITY);
        update_pacing_rate(&mut cut);
        let before = pacing_rate(&cut);
        let mut other = subflow(1, 20.0, f64::INFINITY);
        update_pacing_rate(&mut other);
        cut.cwnd = 10.0 * MSS;
        assert_eq!(pacing_rate(&cut), before);
        let mut pair = [cut, other];
        assert_eq!(
            linger(&mut pair, 0),
            Some(0),
            "40 segments' rate until an ACK"
        );
        let [mut cut, other] = pair;
        update_pacing_rate(&mut cut);
        assert!((pacing_rate(&cut) - before / 4.0).abs() < 1e-6 * before);
        cut.avg_pacing_rate = 0.0;
        assert_eq!(linger(&mut [cut, other], 0), Some(1));
    }

    /// No window left, no burst: the average stays (upstream returns before updating it).
    #[test]
    fn an_empty_burst_leaves_the_average() {
        let mut sf = subflow(0, 10.0, f64::INFINITY);
        sf.avg_pacing_rate = 1000.0;
        note_linger_burst(&mut sf, 0);
        assert_eq!(sf.avg_pacing_rate, 1000.0);
    }

    /// A timeout moves `snd_nxt` back for the go-back-N sweep but frees nothing: Linux's
    /// `sk_wmem_queued` still holds every unacknowledged byte. A subflow that timed out with
    /// 20 segments outstanding and paces at a window of one (2 × 1 segment per 100 ms: 1 s to
    /// drain) is not the choice over one with 10 segments in flight and a window of 10
    /// (1.2 × 10 per 100 ms: 83 ms), though nothing of its own is in flight.
    #[test]
    fn linger_counts_what_a_timeout_left_unacknowledged() {
        let mut timed_out = subflow(0, 1.0, 10.0);
        timed_out.assigned_bytes = 0;
        timed_out.high_data = (20.0 * MSS) as u64;
        timed_out.snd_nxt = 0;
        let mut busy = subflow(1, 10.0, 10.0);
        busy.assigned_bytes = 0;
        busy.high_data = (10.0 * MSS) as u64;
        busy.snd_nxt = busy.high_data;
        assert_eq!(timed_out.flight(), 0);
        assert_eq!(timed_out.queued_bytes(), (20.0 * MSS) as u64);
        assert_eq!(linger(&mut [timed_out, busy], 0), Some(1));
    }
}
