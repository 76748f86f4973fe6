//! Selective acknowledgements (RFC 2018) and the receiver's out-of-order range set.
//!
//! The sender's scoreboard lives in the subflow's list of sent segments (a `sacked` and a
//! `retransmitted` flag each). Loss detection follows Forward Acknowledgement (Mathis & Mahdavi,
//! "Forward Acknowledgement: Refining TCP Congestion Control", SIGCOMM 1996): a segment is lost
//! when it is unSACKed and more than (DupThresh − 1)·MSS bytes above its end lie below fack
//! (`end + 2·MSS < fack`: three full segments), and the data in the network is
//! `awnd = snd_nxt − fack + retran_data`. This is the conservative loss recovery of RFC 6675
//! with its IsLost() test in FACK's O(1) form — what Linux ran for years (tcp_fack) and what
//! lets a sender repair many losses of one window in about one round trip.

use std::collections::VecDeque;

/// SACK blocks carried by one ACK, as offsets from its cumulative ACK number; (0, 0) = empty.
/// Three blocks fit beside the timestamp option (RFC 2018 §3).
pub type SackBlocks = [(u32, u32); 3];

pub const NO_SACK: SackBlocks = [(0, 0); 3];

/// Disjoint, non-adjacent byte ranges [start, end) held out of order by a receiver, sorted.
///
/// A receiver holds a handful of ranges (one per hole in the window), data nearly always
/// extends the highest of them, and they leave from the front as holes fill: a sorted ring
/// buffer does those in O(1), where a tree allocates and frees a node per range and walks
/// pointers on every packet.
#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    ranges: VecDeque<(u64, u64)>,
}

impl RangeSet {
    /// Add [start, end), merging with overlapping or adjacent ranges.
    pub fn insert(&mut self, mut start: u64, mut end: u64) {
        // In-order arrival behind a hole: at or above the highest range's start.
        match self.ranges.back_mut() {
            None => {
                self.ranges.push_back((start, end));
                return;
            }
            Some(last) if start >= last.0 => {
                if start <= last.1 {
                    last.1 = last.1.max(end);
                } else {
                    self.ranges.push_back((start, end));
                }
                return;
            }
            Some(_) => {}
        }
        // The range starting at or below `start` absorbs it if it reaches it; then every
        // range starting within the merged one is absorbed too.
        let mut first = self.ranges.partition_point(|&(s, _)| s <= start);
        if first > 0 && self.ranges[first - 1].1 >= start {
            first -= 1;
            start = self.ranges[first].0;
            end = end.max(self.ranges[first].1);
        }
        let mut past = first;
        while past < self.ranges.len() && self.ranges[past].0 <= end {
            end = end.max(self.ranges[past].1);
            past += 1;
        }
        if past == first {
            self.ranges.insert(first, (start, end));
        } else {
            self.ranges[first] = (start, end);
            self.ranges.drain(first + 1..past);
        }
    }

    /// Forget everything below `point` (delivered in order).
    pub fn trim_below(&mut self, point: u64) {
        while let Some(front) = self.ranges.front_mut() {
            if front.1 <= point {
                self.ranges.pop_front();
            } else {
                front.0 = front.0.max(point);
                break;
            }
        }
    }

    /// The range holding byte `seq`.
    pub fn containing(&self, seq: u64) -> Option<(u64, u64)> {
        let i = self.ranges.partition_point(|&(s, _)| s <= seq);
        let (s, e) = *self.ranges.get(i.checked_sub(1)?)?;
        (e > seq).then_some((s, e))
    }

    /// SACK blocks relative to `ack` (RFC 2018 §4): first the range holding the segment that
    /// arrived out of order last (the one that triggered this ACK, when one did), then those
    /// holding earlier ones, newest first, so that each block is repeated in the next ACKs in
    /// case some are lost; then the highest others.
    pub fn blocks(&self, ack: u64, reported: &ReportedBlocks) -> SackBlocks {
        let mut out = NO_SACK;
        // One hole, the common case: nothing to order.
        if self.ranges.len() == 1 {
            let (s, e) = self.ranges[0];
            out[0] = rel(ack, s, e);
            return out;
        }
        let mut chosen = [(0u64, 0u64); 3];
        let mut n = 0;
        let recent = reported
            .newest_first()
            .filter_map(|seq| self.containing(seq));
        for range in recent.chain(self.ranges.iter().rev().copied()) {
            if n == chosen.len() {
                break;
            }
            if !chosen[..n].contains(&range) {
                chosen[n] = range;
                n += 1;
            }
        }
        for (slot, &(s, e)) in out.iter_mut().zip(&chosen[..n]) {
            *slot = rel(ack, s, e);
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }
}

/// The segments that arrived out of order last, newest first: the ranges holding them are the
/// receiver's most recently reported SACK blocks. Four, as Linux keeps (`selective_acks`), so
/// that three distinct ranges remain when two of them have merged.
#[derive(Clone, Copy, Debug, Default)]
pub struct ReportedBlocks {
    seqs: [u64; 4],
    len: usize,
}

impl ReportedBlocks {
    /// A segment starting at `seq` arrived out of order.
    pub fn note(&mut self, seq: u64) {
        let keep = self.seqs.len() - 1;
        self.seqs.copy_within(0..keep, 1);
        self.seqs[0] = seq;
        self.len = (self.len + 1).min(keep + 1);
    }

    fn newest_first(&self) -> impl Iterator<Item = u64> + '_ {
        self.seqs[..self.len].iter().copied()
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

    /// The ranges as a map from start to end, merged the obvious way: the oracle the ring
    /// buffer's fast paths are checked against.
    #[derive(Default)]
    struct MapModel(std::collections::BTreeMap<u64, u64>);

    impl MapModel {
        fn insert(&mut self, start: u64, end: u64) {
            let mut merged = (start, end);
            let touching: Vec<(u64, u64)> = self
                .0
                .iter()
                .filter(|&(&s, &e)| s <= end && e >= start)
                .map(|(&s, &e)| (s, e))
                .collect();
            for (s, e) in touching {
                merged = (merged.0.min(s), merged.1.max(e));
                self.0.remove(&s);
            }
            self.0.insert(merged.0, merged.1);
        }

        fn trim_below(&mut self, point: u64) {
            let below: Vec<(u64, u64)> = self.0.range(..point).map(|(&s, &e)| (s, e)).collect();
            for (s, e) in below {
                self.0.remove(&s);
                if e > point {
                    self.0.insert(point, e);
                }
            }
        }

        fn containing(&self, seq: u64) -> Option<(u64, u64)> {
            self.0
                .iter()
                .map(|(&s, &e)| (s, e))
                .find(|&(s, e)| s <= seq && seq < e)
        }
    }

    /// Random inserts (mostly above the highest range, as arriving data does) and trims give
    /// the same ranges, containing ranges and SACK blocks as the map.
    #[test]
    fn matches_a_map_of_ranges() {
        let mut state = 99u64;
        let mut next = move |m: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % m
        };
        for _ in 0..200 {
            let mut r = RangeSet::default();
            let mut m = MapModel::default();
            let mut reported = ReportedBlocks::default();
            let mut history: Vec<u64> = Vec::new();
            let mut floor = 0;
            for _ in 0..200 {
                match next(10) {
                    0 => {
                        floor += next(400);
                        r.trim_below(floor);
                        m.trim_below(floor);
                    }
                    k => {
                        let start = floor + next(if k < 7 { 2_000 } else { 300 });
                        let end = start + 1 + next(120);
                        r.insert(start, end);
                        m.insert(start, end);
                    }
                }
                let ours: Vec<(u64, u64)> = r.ranges.iter().copied().collect();
                let model: Vec<(u64, u64)> = m.0.iter().map(|(&s, &e)| (s, e)).collect();
                assert_eq!(ours, model);
                let seq = floor + next(2_200);
                assert_eq!(r.containing(seq), m.containing(seq));
                assert_eq!(r.is_empty(), m.0.is_empty());
                reported.note(seq);
                history.insert(0, seq);
                let mut ranges: Vec<(u64, u64)> = Vec::new();
                let recent = history.iter().take(4).filter_map(|&q| m.containing(q));
                for x in recent.chain(model.iter().rev().copied()) {
                    if !ranges.contains(&x) {
                        ranges.push(x);
                    }
                }
                let mut want = NO_SACK;
                for (slot, &(s, e)) in want.iter_mut().zip(&ranges) {
                    *slot = rel(floor, s, e);
                }
                assert_eq!(r.blocks(floor, &reported), want);
            }
        }
    }

    #[test]
    fn blocks_put_the_recent_range_first() {
        let mut r = RangeSet::default();
        let mut reported = ReportedBlocks::default();
        for s in [100, 300, 500, 700] {
            r.insert(s, s + 50);
        }
        reported.note(310);
        let b = r.blocks(50, &reported);
        assert_eq!(b, [(250, 300), (650, 700), (450, 500)]);
    }

    /// RFC 2018 §4: "The SACK option SHOULD be filled out by repeating the most recently
    /// reported SACK blocks (based on first SACK blocks in previous SACK options)": after
    /// arrivals at 500, 300, 700 and 100 the blocks are 100's, 700's and 300's ranges, not the
    /// highest three.
    #[test]
    fn later_blocks_repeat_the_most_recently_reported() {
        let mut r = RangeSet::default();
        let mut reported = ReportedBlocks::default();
        for s in [500, 300, 700, 100] {
            r.insert(s, s + 50);
            reported.note(s);
        }
        assert_eq!(r.blocks(0, &reported), [(100, 150), (700, 750), (300, 350)]);
        // Ranges that merge count once; the next most recent takes the slot.
        r.insert(150, 300);
        assert_eq!(r.blocks(0, &reported), [(100, 350), (700, 750), (500, 550)]);
    }
}
