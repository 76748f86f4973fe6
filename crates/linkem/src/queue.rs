//! Queue disciplines of a link direction: the simulator's own (`mpsim::topology::discipline`),
//! so both backends admit and drop alike.

pub use mpsim::topology::discipline::{
    QueueDiscipline as Discipline, Verdict, FULL_PACKET as FULL_PACKET_BYTES,
};
