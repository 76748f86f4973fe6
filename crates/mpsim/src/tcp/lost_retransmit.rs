//! Lost retransmissions in SACK recovery.
//!
//! FACK's loss test (see [`super::sack`]) judges each segment once: a retransmission that is
//! dropped again stays "retransmitted" until the timer fires. Linux finds it sooner. RACK
//! (RFC 8985 §6.2, Linux `tcp_rack_detect_loss`) deems a segment lost once a segment sent
//! after it has been delivered and RACK.rtt + RACK.reo_wnd has passed since it was sent; in
//! recovery, with no reordering seen, Linux's reo_wnd is zero (`tcp_rack_reo_wnd`), and the
//! delivered segment's own round trip is RACK.rtt, so the test reduces to "something sent
//! after it was delivered". Before RACK, Linux's `tcp_mark_lost_retrans` (2.6.25–4.3, so the
//! 3.x kernels of the published testbeds too) gave the same answer for new data: a
//! retransmission is lost when data beyond `snd_nxt` at its sending has been SACKed. The
//! simulator's paths never reorder a subflow's packets, so a segment sent later and delivered
//! does mean an earlier one was dropped.
//!
//! The log keeps this recovery's retransmissions in the order they were sent (and, after it
//! ends, those still in flight, until a later recovery judges them); as both what
//! had been sent before each one and its rank grow along the log, the lost ones are always
//! at its front.

use std::collections::VecDeque;

#[derive(Clone, Copy, Debug)]
struct Retransmission {
    seq: u64,
    /// The highest sequence sent + 1 when it was re-sent: a SACK above this is for data sent
    /// after it.
    sent_upto: u64,
    rank: u64,
}

#[derive(Clone, Debug, Default)]
pub struct RetransmitLog {
    sent: VecDeque<Retransmission>,
    next_rank: u64,
    /// Retransmissions ranked below this are lost: the rank of the latest-sent one known
    /// delivered (0: none).
    lost_below: u64,
}

impl RetransmitLog {
    pub fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }

    /// The segment at `seq` was re-sent when data up to `sent_upto` had been sent.
    pub fn record(&mut self, seq: u64, sent_upto: u64) {
        self.sent.push_back(Retransmission {
            seq,
            sent_upto,
            rank: self.next_rank,
        });
        self.next_rank += 1;
    }

    /// The retransmission of the segment at `seq` reached the receiver (SACKed or
    /// cumulatively acknowledged): every retransmission sent before it that has not is lost.
    pub fn delivered(&mut self, seq: u64) {
        if let Some(r) = self.sent.iter().rev().find(|r| r.seq == seq) {
            self.lost_below = self.lost_below.max(r.rank);
        }
    }

    /// The next retransmission shown lost by the forward-most SACKed byte `high_sacked` or by
    /// a later retransmission's delivery; it leaves the log. The caller skips those whose
    /// segment has been (S)ACKed meanwhile.
    pub fn pop_lost(&mut self, high_sacked: u64) -> Option<u64> {
        let front = self.sent.front()?;
        if high_sacked > front.sent_upto || front.rank < self.lost_below {
            self.sent.pop_front().map(|r| r.seq)
        } else {
            None
        }
    }

    /// The recovery ended with everything below `ack` acknowledged: the retransmissions of
    /// segments above it are still in flight and stay, for the next recovery to judge.
    pub fn forget_below(&mut self, ack: u64) {
        self.sent.retain(|r| r.seq >= ack);
    }

    /// The timer fired: everything outstanding is sent again.
    pub fn clear(&mut self) {
        self.sent.clear();
        self.lost_below = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sacked_new_data_shows_earlier_retransmissions_lost() {
        let mut log = RetransmitLog::default();
        log.record(0, 100);
        log.record(10, 120);
        assert_eq!(
            log.pop_lost(100),
            None,
            "nothing sent after the first was delivered"
        );
        assert_eq!(log.pop_lost(101), Some(0));
        assert_eq!(log.pop_lost(101), None);
        assert_eq!(log.pop_lost(121), Some(10));
        assert!(log.is_empty());
    }

    #[test]
    fn a_later_retransmission_delivered_shows_the_earlier_ones_lost() {
        let mut log = RetransmitLog::default();
        log.record(0, 100);
        log.record(10, 100);
        log.record(20, 100);
        log.delivered(20);
        assert_eq!(log.pop_lost(50), Some(0));
        assert_eq!(log.pop_lost(50), Some(10));
        assert_eq!(log.pop_lost(50), None, "the delivered one is not lost");
    }

    #[test]
    fn a_segment_re_sent_again_ranks_after_what_was_sent_before() {
        let mut log = RetransmitLog::default();
        log.record(0, 100);
        log.record(10, 100);
        log.delivered(10);
        assert_eq!(log.pop_lost(50), Some(0));
        log.record(0, 100); // the lost one, re-sent after the delivered one
        assert_eq!(log.pop_lost(50), None);
        log.clear();
        assert!(log.is_empty());
        assert_eq!(log.pop_lost(1000), None);
    }
}
