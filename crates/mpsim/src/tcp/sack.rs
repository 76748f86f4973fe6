//! Selective acknowledgements (RFC 2018) and the receiver's out-of-order range set.
//!
//! The sender's scoreboard lives in the subflow's list of sent segments (a `sacked` and a
//! `retransmitted` flag each). Loss detection follows Forward Acknowledgement (Mathis & Mahdavi,
//! "Forward Acknowledgement: Refining TCP Congestion Control", SIGCOMM 1996): a segment is lost
//! when it is unSACKed and at least DupThresh segments' worth of data above it has been SACKed
//! (`seq + 3·MSS ≤ fack`), and the data in the network is `awnd = snd_nxt − fack +
//! retran_data`. This is the conservative loss recovery of RFC 6675 with its IsLost() test in
//! FACK's O(1) form — what Linux ran for years (tcp_fack) and what lets a sender repair many losses
//! of one window in about one round trip.

use std::collections::BTreeMap;

/// SACK blocks carried by one ACK, as offsets from its cumulative ACK number; (0, 0) = empty.
/// Three blocks fit beside the timestamp option (RFC 2018 §3).
pub type SackBlocks = [(u32, u32); 3];

pub const NO_SACK: SackBlocks = [(0, 0); 3];

/// Disjoint, non-adjacent byte ranges [start, end) held out of order by a receiver.
#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    ranges: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// Add [start, end), merging with overlapping or adjacent ranges.
    pub fn insert(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.ranges.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
                self.ranges.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.ranges.range(start..).next() {
            if s > end {
                break;
            }
            end = end.max(e);
            self.ranges.remove(&s);
        }
        self.ranges.insert(start, end);
    }

    /// Forget everything below `point` (delivered in order).
    pub fn trim_below(&mut self, point: u64) {
        while let Some((&s, &e)) = self.ranges.first_key_value() {
            if e <= point {
                self.ranges.remove(&s);
            } else if s < point {
                self.ranges.remove(&s);
                self.ranges.insert(point, e);
                break;
            } else {
                break;
            }
        }
    }

    /// The range holding byte `seq`.
    pub fn containing(&self, seq: u64) -> Option<(u64, u64)> {
        self.ranges
            .range(..=seq)
            .next_back()
            .filter(|(_, &e)| e > seq)
            .map(|(&s, &e)| (s, e))
    }

    /// SACK blocks relative to `ack`: first the range holding `recent` (the segment that
    /// triggered this ACK, RFC 2018 §4), then the highest others.
    pub fn blocks(&self, ack: u64, recent: Option<u64>) -> SackBlocks {
        let mut out = NO_SACK;
        let mut n = 0;
        let first = recent.and_then(|seq| self.containing(seq));
        if let Some((s, e)) = first {
            out[0] = rel(ack, s, e);
            n = 1;
        }
        for (&s, &e) in self.ranges.iter().rev() {
            if n == out.len() {
                break;
            }
            if Some((s, e)) == first {
                continue;
            }
            out[n] = rel(ack, s, e);
            n += 1;
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

fn rel(ack: u64, s: u64, e: u64) -> (u32, u32) {
    let off = |x: u64| x.saturating_sub(ack).min(u32::MAX as u64) as u32;
    (off(s), off(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_merge_and_trim() {
        let mut r = RangeSet::default();
        r.insert(10, 20);
        r.insert(30, 40);
        r.insert(20, 25);
        assert_eq!(r.containing(22), Some((10, 25)));
        r.insert(24, 31);
        assert_eq!(r.containing(35), Some((10, 40)));
        r.trim_below(15);
        assert_eq!(r.containing(15), Some((15, 40)));
        r.trim_below(40);
        assert!(r.is_empty());
    }

    #[test]
    fn blocks_put_the_recent_range_first() {
        let mut r = RangeSet::default();
        for s in [100, 300, 500, 700] {
            r.insert(s, s + 50);
        }
        let b = r.blocks(50, Some(310));
        assert_eq!(b, [(250, 300), (650, 700), (450, 500)]);
    }
}
