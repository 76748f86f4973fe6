//! One TCP connection's machinery, used as-is for a single-path flow and for every MPTCP subflow.

pub mod lost_retransmit;
pub mod prr;
pub mod rack;
pub mod rcv_rtt;
pub mod reorder;
pub mod rtt;
pub mod sack;
pub mod subflow;
#[cfg(test)]
pub mod testing;
pub mod truesize;

pub use subflow::Subflow;
