//! linkem — the emulator backend's native side: a userspace link emulator and the traffic
//! program that runs real kernel TCP and MPTCP sockets across it.
//!
//! Layers, bottom up:
//! - [`sys`]: the only `unsafe` — TUN devices, namespaces, epoll/timerfd/signalfd, sockets.
//! - [`queue`], [`link`]: one link direction (loss → drop-tail or RED queue → serialiser →
//!   propagation with jitter that never reorders), pure and unit-tested against oracles.
//! - [`network`]: link directions and routes, sans-IO: packets in with a time, releases out.
//! - [`emulator`]: the real-time loop over TUN devices; [`status`] its JSON snapshots;
//!   [`histogram`] its release-lateness histogram; [`config`] what the orchestrator sends.
//! - [`traffic`]: the `mptcp-traffic` program (bulk, blocks, size; TCP or MPTCP per socket;
//!   MPTCP_INFO and per-subflow TCP_INFO sampling).
//!
//! Time inside the emulator is `mpsim::time::SimTime`: nanoseconds since the emulator started,
//! so the link model shares its units and random streams with the simulator.

pub mod config;
pub mod emulator;
pub mod histogram;
pub mod link;
pub mod network;
pub mod queue;
pub mod status;
pub mod sys;
pub mod traffic;
