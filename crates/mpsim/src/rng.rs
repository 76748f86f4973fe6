//! Seeded random streams.
//!
//! Every entity draws from its own stream derived from `(run seed, entity, purpose)`, so adding a
//! link or a flow does not perturb the random draws of the others, and the same seed always gives
//! the same run (STYLE.md: one endpoint seed, every stream derived from it).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// What a stream is used for; part of the stream's identity.
#[derive(Clone, Copy, Debug)]
pub enum StreamPurpose {
    LinkLoss = 1,
    LinkJitter = 2,
    RedDrop = 3,
    FlowStart = 4,
    StartOrder = 5,
}

/// One independent random stream.
#[derive(Clone, Debug)]
pub struct RandomStream {
    inner: Xoshiro256PlusPlus,
}

impl RandomStream {
    pub fn derive(seed: u64, entity: u64, purpose: StreamPurpose) -> RandomStream {
        // SplitMix64-style mixing of the three identifiers; the generator's own seeding then
        // expands the mixed value into its full state.
        let mut z = seed ^ entity.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ ((purpose as u64) << 56);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        RandomStream {
            inner: Xoshiro256PlusPlus::seed_from_u64(z),
        }
    }

    /// A uniform draw in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.inner.gen::<f64>()
    }

    /// `items` in a uniformly random order.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        items.shuffle(&mut self.inner);
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }
}
