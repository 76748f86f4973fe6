//! A pure delay element: every packet leaves exactly `delay` after it entered, in order. Used for
//! ACK paths without queueing (the scenario's default reverse direction). Because the delay is
//! constant, one FIFO pipe holds all its packets and only the pipe's head needs a pending event.

use crate::time::SimTime;

pub struct DelayLine {
    pub delay: SimTime,
}

impl DelayLine {
    pub fn new(delay: SimTime) -> DelayLine {
        DelayLine { delay }
    }

    /// When a packet entering at `now` leaves.
    pub fn arrival(&self, now: SimTime) -> SimTime {
        now + self.delay
    }
}
