//! The event list: a binary heap ordered by (time, sequence number), so events at the same
//! instant run in the order they were scheduled and every run is reproducible.
//!
//! Entities keep at most one pending event each (a link's transmitter, a pipe's head, a timer),
//! as htsim does, so the heap stays small however many packets are in flight.
//!
//! Two heaps share the sequence counter: one for packet arrivals (one entry per link direction
//! and delay line, a handful) and one for timers (one per subflow and connection, thousands
//! with thousands of flows). Nearly every event is an arrival, and it now costs a pop from the
//! small heap; the timer heap is touched only when a timer is armed earlier or fires. The
//! order is the single heap's (time, sequence) order, so results do not depend on the split.

use crate::time::SimTime;
use std::cmp::Ordering;
use std::collections::binary_heap::PeekMut;
use std::collections::BinaryHeap;

/// Something that happens at a point in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The head of a pipe (a link direction's or a delay line's) arrives at its far end.
    Arrival(crate::topology::PipeId),
    /// A subflow's retransmission timer.
    Rto { conn: u32, subflow: u16 },
    /// A subflow's RACK reordering timer (RFC 8985 §6.3).
    RackReorder { conn: u32, subflow: u16 },
    /// A subflow's delayed-ACK timer.
    DelayedAck { conn: u32, subflow: u16 },
    /// A subflow's handshake completes: it may send.
    SubflowStart { conn: u32, subflow: u16 },
    /// A connection's MPTCP-level retransmission timer (upstream Linux, spec §3.8).
    MptcpRetransmit { conn: u32 },
    /// End of the warm-up: measurement counters are snapshotted.
    WarmupEnd,
    /// Take one sample of the requested traces.
    TraceSample,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    time: SimTime,
    seq: u64,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    arrivals: BinaryHeap<Entry>,
    timers: BinaryHeap<Entry>,
    next_seq: u64,
    processed: u64,
}

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    pub fn schedule(&mut self, time: SimTime, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { time, seq, event };
        match event {
            Event::Arrival(_) => self.arrivals.push(entry),
            _ => self.timers.push(entry),
        }
    }

    /// The next event if it is due no later than `until`.
    ///
    /// An arrival's entity (a pipe) usually has another packet behind the one arriving:
    /// `next_arrival` gives that packet's arrival time, and the entry at the top of the heap is
    /// re-used for it (one sift instead of a pop and a push). It gets its sequence number now,
    /// as if scheduled right after the pop, before anything the arrival itself schedules.
    pub fn pop_until(
        &mut self,
        until: SimTime,
        next_arrival: impl FnOnce(Event) -> Option<SimTime>,
    ) -> Option<(SimTime, Event)> {
        // `Entry`'s order is reversed (the earliest is the greatest).
        let from_arrivals = match (self.arrivals.peek(), self.timers.peek()) {
            (Some(a), Some(t)) => a > t,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return None,
        };
        let heap = if from_arrivals {
            &mut self.arrivals
        } else {
            &mut self.timers
        };
        let mut top = heap.peek_mut().filter(|e| e.time <= until)?;
        self.processed += 1;
        let (time, event) = (top.time, top.event);
        match from_arrivals.then(|| next_arrival(event)).flatten() {
            Some(next) => {
                top.time = next;
                top.seq = self.next_seq;
                self.next_seq += 1;
            }
            None => {
                PeekMut::pop(top);
            }
        }
        Some((time, event))
    }

    pub fn processed(&self) -> u64 {
        self.processed
    }

    pub fn pending(&self) -> usize {
        self.arrivals.len() + self.timers.len()
    }
}

/// A timer as data (STYLE.md, smoltcp): the wanted expiry, plus the time of the one event
/// currently in the queue for it. Moving the deadline later costs nothing; the pending event
/// re-arms itself when it fires early. Moving it earlier schedules one new event and makes the
/// old one stale.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    deadline: Option<SimTime>,
    scheduled: Option<SimTime>,
}

impl Timer {
    pub fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }

    /// Arm (or re-arm) the timer for `deadline`.
    pub fn set(&mut self, deadline: SimTime, queue: &mut EventQueue, event: Event) {
        self.deadline = Some(deadline);
        match self.scheduled {
            Some(s) if s <= deadline => {}
            _ => {
                self.scheduled = Some(deadline);
                queue.schedule(deadline, event);
            }
        }
    }

    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    /// Called when an event for this timer fires at `now`. Returns true when the timer really
    /// expired; false for a stale event or one that re-armed itself for a later deadline.
    pub fn fire(&mut self, now: SimTime, queue: &mut EventQueue, event: Event) -> bool {
        if self.scheduled != Some(now) {
            return false;
        }
        self.scheduled = None;
        match self.deadline {
            None => false,
            Some(d) if d > now => {
                self.scheduled = Some(d);
                queue.schedule(d, event);
                false
            }
            Some(_) => {
                self.deadline = None;
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Arrivals and timers live in different heaps but come out in one (time, scheduling order)
    /// sequence, ties included, as from a single heap.
    #[test]
    fn arrivals_and_timers_pop_in_time_then_scheduling_order() {
        let rto = |conn| Event::Rto { conn, subflow: 0 };
        let mut q = EventQueue::new();
        let t = SimTime;
        q.schedule(t(30), Event::Arrival(0));
        q.schedule(t(10), rto(1));
        q.schedule(t(20), Event::Arrival(2));
        q.schedule(t(20), rto(2));
        q.schedule(t(20), Event::Arrival(1));
        q.schedule(t(10), Event::Arrival(3));
        q.schedule(t(40), rto(3));
        let mut got = Vec::new();
        while let Some(e) = q.pop_until(t(35), |_| None) {
            got.push(e);
        }
        assert_eq!(
            got,
            vec![
                (t(10), rto(1)),
                (t(10), Event::Arrival(3)),
                (t(20), Event::Arrival(2)),
                (t(20), rto(2)),
                (t(20), Event::Arrival(1)),
                (t(30), Event::Arrival(0)),
            ]
        );
        assert_eq!(q.pending(), 1, "the event after `until` stays");
        assert_eq!(q.processed(), 6);
    }
}
