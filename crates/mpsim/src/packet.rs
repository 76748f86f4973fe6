//! The one packet type that crosses the simulated network. It is small and `Copy`: the simulator
//! moves packets by value through queues and pipes and never allocates per packet.

/// Whether a packet carries data (sender → receiver), an acknowledgement (receiver → sender),
/// or the ACK that completes the sender's three-way handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    Data,
    Ack,
    /// The connecting side's ACK of the SYN/ACK. Linux sends it as the SYN/ACK arrives, before
    /// the writer's first data, so it crosses the forward path just ahead of the initial window
    /// and holds a place in a queue sized in packets; the receiver has nothing to do with it.
    HandshakeAck,
}

/// A TCP segment or ACK with its MPTCP data-level fields (DSS mapping / DATA_ACK, RFC 8684 §3.3)
/// and timestamps (RFC 7323), plus its position on its route.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    pub kind: PacketKind,
    /// Index of the hop the packet is at on its route.
    pub hop: u16,
    /// Subflow index inside the connection.
    pub subflow: u16,
    /// Connection index in the simulator.
    pub conn: u32,
    /// Route index in the network.
    pub route: u32,
    /// Bytes on the wire (payload + headers).
    pub wire_bytes: u32,
    /// Data: payload bytes. Ack: 0.
    pub len: u32,
    /// Data: subflow sequence number of the first byte. Ack: subflow cumulative ACK.
    pub seq: u64,
    /// Data: data sequence number (DSN) of the first byte. Ack: DATA_ACK.
    pub dsn: u64,
    /// Ack: right edge of the connection-level receive window (DATA_ACK + window).
    pub window_edge: u64,
    /// Timestamp value: when the packet was sent, ns.
    pub ts_val: u64,
    /// Timestamp echo: the peer's timestamp being echoed, ns.
    pub ts_ecr: u64,
    /// Ack: SACK blocks as offsets from `seq` (RFC 2018).
    pub sack: crate::tcp::sack::SackBlocks,
}

impl Packet {
    /// A full-sized data segment of connection 0's first subflow at sequence (and data
    /// sequence) `seq`, stamped `ts_val` ns, echoing nothing: the unit tests' usual packet, and
    /// linkem's in its comparison with the simulator's links.
    pub fn full_segment(seq: u64, ts_val: u64) -> Packet {
        use crate::scenario::{HEADER_BYTES, MSS_BYTES};
        Packet {
            kind: PacketKind::Data,
            hop: 0,
            subflow: 0,
            conn: 0,
            route: 0,
            wire_bytes: MSS_BYTES + HEADER_BYTES,
            len: MSS_BYTES,
            seq,
            dsn: seq,
            window_edge: 0,
            ts_val,
            ts_ecr: crate::tcp::subflow::NO_TIMESTAMP,
            sack: crate::tcp::sack::NO_SACK,
        }
    }
}
