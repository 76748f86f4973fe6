//! Applications: what the sending application writes into the send buffer and what the
//! receiving application measures. The receiver reads everything as soon as it is in order.
//!
//! - `bulk`: always has data (iperf-like).
//! - `blocks`: writes blocks back to back; block k is stamped when the write of block k−1
//!   completed, and its latency runs until the receiver has read its last byte, so it includes
//!   send-buffer queueing (NSDI 2012, Raiciu et al., §5 Fig. 7; spec §5.6).
//! - `size`: a finite transfer; records its completion time.

use crate::scenario::AppSpec;
use crate::time::SimTime;
use std::collections::VecDeque;

pub enum Application {
    Bulk,
    Blocks(BlockWriter),
    Size {
        total: u64,
        completed_at: Option<SimTime>,
    },
}

pub struct BlockWriter {
    pub block_bytes: u64,
    /// Bytes of the current block already written.
    written_in_block: u64,
    /// When the current block's write began.
    stamp: SimTime,
    /// Written blocks awaiting complete reading: (end DSN, stamp).
    in_flight: VecDeque<(u64, SimTime)>,
    /// Completed blocks: (time read, latency).
    pub completed: Vec<(SimTime, SimTime)>,
}

impl Application {
    pub fn new(spec: &AppSpec, start: SimTime) -> Application {
        match spec {
            AppSpec::Bulk => Application::Bulk,
            AppSpec::Blocks { block_bytes } => Application::Blocks(BlockWriter {
                block_bytes: *block_bytes,
                written_in_block: 0,
                stamp: start,
                in_flight: VecDeque::new(),
                completed: Vec::new(),
            }),
            AppSpec::Size { bytes } => Application::Size {
                total: *bytes,
                completed_at: None,
            },
        }
    }

    /// The application writes into `space` free bytes of the send buffer, the next byte having
    /// data sequence number `write_end`. Returns how many bytes it wrote.
    pub fn write(&mut self, write_end: u64, space: u64, now: SimTime) -> u64 {
        match self {
            Application::Bulk => space,
            Application::Size { total, .. } => space.min(total.saturating_sub(write_end)),
            Application::Blocks(b) => {
                let mut written = 0;
                while written < space {
                    let chunk = (b.block_bytes - b.written_in_block).min(space - written);
                    written += chunk;
                    b.written_in_block += chunk;
                    if b.written_in_block == b.block_bytes {
                        b.in_flight.push_back((write_end + written, b.stamp));
                        b.written_in_block = 0;
                        b.stamp = now;
                    }
                }
                written
            }
        }
    }

    /// Whether the application would write more if the buffer had room.
    pub fn wants_to_write(&self, write_end: u64) -> bool {
        match self {
            Application::Size { total, .. } => write_end < *total,
            _ => true,
        }
    }

    /// The receiver has read everything before `read_end` at `now`.
    pub fn on_read(&mut self, read_end: u64, now: SimTime) {
        match self {
            Application::Bulk => {}
            Application::Size {
                total,
                completed_at,
            } => {
                if completed_at.is_none() && read_end >= *total {
                    *completed_at = Some(now);
                }
            }
            Application::Blocks(b) => {
                while let Some(&(end, stamp)) = b.in_flight.front() {
                    if end > read_end {
                        break;
                    }
                    b.in_flight.pop_front();
                    b.completed.push((now, now - stamp));
                }
            }
        }
    }
}
