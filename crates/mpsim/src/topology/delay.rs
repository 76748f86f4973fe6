//! A pure delay element: every packet leaves exactly `delay` after it entered, in order. Used for
//! ACK paths without queueing (the scenario's default reverse direction). Because the delay is
//! constant, one FIFO holds all packets and only its head needs a pending event.

use crate::packet::Packet;
use crate::time::SimTime;
use std::collections::VecDeque;

pub struct DelayLine {
    pub delay: SimTime,
    pub pipe: VecDeque<(SimTime, Packet)>,
}

impl DelayLine {
    pub fn new(delay: SimTime) -> DelayLine {
        DelayLine {
            delay,
            pipe: VecDeque::new(),
        }
    }

    /// Insert a packet; returns the time of a new head event to schedule, if the line was empty.
    pub fn push(&mut self, now: SimTime, pkt: &Packet) -> Option<SimTime> {
        let at = now + self.delay;
        self.pipe.push_back((at, *pkt));
        (self.pipe.len() == 1).then_some(at)
    }
}
