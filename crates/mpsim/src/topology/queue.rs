//! Drop-tail admission: a packet is dropped when it would not fit the buffer. The buffer holds
//! the packet being serialised too, as a router's output buffer does.

/// Size of a drop-tail buffer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BufferLimit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Clone, Copy, Debug)]
pub struct DropTailQueue {
    pub limit: BufferLimit,
}

impl DropTailQueue {
    /// Whether a packet of `wire_bytes` fits behind `queued_packets` / `queued_bytes`.
    /// An empty queue always admits: the packet goes straight onto the wire.
    pub fn admits(&self, queued_packets: u64, queued_bytes: u64, wire_bytes: u32) -> bool {
        if queued_packets == 0 {
            return true;
        }
        match self.limit {
            BufferLimit::Packets(p) => queued_packets < p,
            BufferLimit::Bytes(b) => queued_bytes + wire_bytes as u64 <= b,
        }
    }
}
