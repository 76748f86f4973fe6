//! The MPTCP connection level (RFC 8684; spec §3): data sequence numbers and DATA_ACK, shared
//! send and receive buffers, schedulers, reinjection, and the head-of-line heuristics. A TCP
//! flow is a connection with one subflow, so both protocols share this code.

pub mod connection;
pub mod penalization;
pub mod receive_buffer;
pub mod scheduler;

pub use connection::Connection;
