//! RACK: time-based loss detection (RFC 8985 §6.2–6.3, Linux `tcp_recovery.c`).
//!
//! A segment is lost once a segment sent after it has been delivered (SACKed or cumulatively
//! acknowledged) and the delivered segment's round trip plus a reordering window has passed
//! since it was sent. Unlike counting duplicate ACKs or SACKed bytes above a hole (FACK, see
//! [`super::sack`]), this finds a loss followed by only one or two segments — the window a
//! small or receive-window-limited flow has — without the retransmission timer.
//!
//! The reordering window follows Linux (`tcp_rack_reo_wnd`): min_rtt/4, bounded by the smoothed
//! RTT, and zero in recovery or once DupThresh segments are SACKed. The simulator's paths never
//! reorder (links are FIFO and jitter keeps order), so Linux's adaptation of the window to
//! observed reordering (DSACK, `reord_seen`) has nothing to react to and is not modelled.

use crate::time::SimTime;

/// RACK's record of the most recently sent segment known to be delivered.
#[derive(Clone, Copy, Debug, Default)]
pub struct Rack {
    /// Send time and end sequence of that segment (RACK.xmit_ts, RACK.end_seq).
    xmit_ts: SimTime,
    end_seq: u64,
    /// The round trip of the last segment delivered (RACK.rtt), nanoseconds.
    rtt_ns: u64,
    /// Smallest round trip seen, nanoseconds; 0 before the first.
    min_rtt_ns: u64,
    /// Something was delivered since the last loss check (RACK.advanced).
    advanced: bool,
}

/// Whether a segment sent at `t1` ending at `seq1` went out after one sent at `t2` ending at
/// `seq2` (RFC 8985 RACK_sent_after: ties in time go to the higher sequence).
fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

impl Rack {
    /// A segment sent at `xmit_ts`, ending at `end_seq`, was (S)ACKed at `now`.
    /// `retransmitted`: it was sent more than once, so the ACK may be for an earlier copy; as
    /// Linux (`tcp_rack_advance`), such a segment is ignored when its apparent round trip is
    /// shorter than the smallest seen.
    pub fn delivered(&mut self, xmit_ts: SimTime, end_seq: u64, retransmitted: bool, now: SimTime) {
        let rtt = now.0.saturating_sub(xmit_ts.0);
        if retransmitted && rtt < self.min_rtt_ns {
            return;
        }
        if !retransmitted {
            // An unambiguous round trip, as Linux takes from SACKed segments (`sack_rtt_us`).
            self.note_min_rtt(rtt);
        }
        self.advanced = true;
        self.rtt_ns = rtt;
        if sent_after(xmit_ts, end_seq, self.xmit_ts, self.end_seq) {
            self.xmit_ts = xmit_ts;
            self.end_seq = end_seq;
        }
    }

    /// An RTT sample (from timestamps), seconds: keeps min_rtt.
    pub fn rtt_sample(&mut self, rtt_s: f64) {
        self.note_min_rtt((rtt_s * 1e9) as u64);
    }

    fn note_min_rtt(&mut self, ns: u64) {
        if self.min_rtt_ns == 0 || ns < self.min_rtt_ns {
            self.min_rtt_ns = ns.max(1);
        }
    }

    /// Take the "delivered since the last check" flag.
    pub fn take_advanced(&mut self) -> bool {
        std::mem::take(&mut self.advanced)
    }

    /// The reordering window, nanoseconds (`tcp_rack_reo_wnd`): zero in recovery (or the
    /// timeout's loss state) or with at least DupThresh segments SACKed, else min_rtt/4 bounded
    /// by the smoothed RTT.
    pub fn reo_wnd_ns(&self, recovering: bool, sacked_segments: u64, srtt_s: f64) -> u64 {
        if recovering || sacked_segments >= 3 {
            return 0;
        }
        (self.min_rtt_ns / 4).min((srtt_s * 1e9) as u64)
    }

    /// For a segment not yet (S)ACKed, sent at `xmit_ts` and ending at `end_seq`: `None` when it
    /// was not sent before the delivered segment RACK remembers (nothing can be said yet), else
    /// how long until it counts as lost, nanoseconds (0 = lost now).
    pub fn time_to_lost(
        &self,
        xmit_ts: SimTime,
        end_seq: u64,
        reo_wnd_ns: u64,
        now: SimTime,
    ) -> Option<u64> {
        if !sent_after(self.xmit_ts, self.end_seq, xmit_ts, end_seq) {
            return None;
        }
        let deadline = xmit_ts.0 + self.rtt_ns + reo_wnd_ns;
        Some(deadline.saturating_sub(now.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime::from_millis(v)
    }

    /// RFC 8985 §3.2's example: segments P1–P3 sent at 0, 10, 20 ms; P2 and P3 SACKed at 120 ms
    /// (RTT 100 ms): P1 was sent before P3, and is lost once 100 ms + reo_wnd have passed since
    /// it was sent.
    #[test]
    fn a_segment_sent_before_a_delivered_one_is_lost_after_its_rtt_and_the_window() {
        let mut rack = Rack::default();
        rack.rtt_sample(0.100);
        rack.delivered(ms(10), 2000, false, ms(110));
        rack.delivered(ms(20), 3000, false, ms(120));
        assert!(rack.take_advanced());
        let reo = rack.reo_wnd_ns(false, 2, 0.1);
        assert_eq!(reo, 25_000_000, "min_rtt / 4");
        // P1: deadline 0 + 100 + 25 ms.
        assert_eq!(
            rack.time_to_lost(ms(0), 1000, reo, ms(120)),
            Some(5_000_000)
        );
        assert_eq!(rack.time_to_lost(ms(0), 1000, reo, ms(125)), Some(0));
        // In recovery, no waiting.
        assert_eq!(rack.time_to_lost(ms(0), 1000, 0, ms(120)), Some(0));
        // A segment sent after P3 is not judged.
        assert_eq!(rack.time_to_lost(ms(30), 4000, reo, ms(500)), None);
    }

    #[test]
    fn three_sacked_segments_or_recovery_close_the_window() {
        let mut rack = Rack::default();
        rack.rtt_sample(0.040);
        assert_eq!(rack.reo_wnd_ns(false, 2, 0.05), 10_000_000);
        assert_eq!(rack.reo_wnd_ns(false, 3, 0.05), 0);
        assert_eq!(rack.reo_wnd_ns(true, 0, 0.05), 0);
        assert_eq!(
            rack.reo_wnd_ns(false, 0, 0.005),
            5_000_000,
            "bounded by srtt"
        );
    }

    /// A retransmission acknowledged sooner than any round trip seen was the original's ACK.
    #[test]
    fn an_ambiguous_retransmission_does_not_advance_rack() {
        let mut rack = Rack::default();
        rack.rtt_sample(0.100);
        rack.delivered(ms(300), 5000, true, ms(320));
        assert!(!rack.take_advanced());
        rack.delivered(ms(300), 5000, true, ms(400));
        assert!(rack.take_advanced());
        assert_eq!(rack.time_to_lost(ms(250), 9000, 0, ms(400)), Some(0));
    }
}
