//! Segments held out of order by a receiver, keyed by their first sequence number.
//!
//! Out-of-order data nearly always arrives in increasing order behind a hole (the packets after
//! a loss, or the faster subflow's data ahead of the slower one's), and leaves from the front
//! when the hole fills. A sorted ring buffer does both in O(1) in that case; a tree allocates a
//! node per segment and walks pointers on every access.

use std::collections::VecDeque;

/// Entries sorted by key, at most one per key.
#[derive(Clone, Debug)]
pub struct ReorderQueue<V> {
    entries: VecDeque<(u64, V)>,
}

impl<V> Default for ReorderQueue<V> {
    fn default() -> Self {
        ReorderQueue {
            entries: VecDeque::new(),
        }
    }
}

impl<V: Copy> ReorderQueue<V> {
    /// Insert `value` under `key` unless the key is already held; returns whether it was added.
    pub fn insert_if_vacant(&mut self, key: u64, value: V) -> bool {
        match self.entries.back() {
            None => {}
            Some(&(last, _)) if key > last => {}
            Some(_) => {
                let at = self.entries.partition_point(|&(k, _)| k < key);
                if self.entries.get(at).is_some_and(|&(k, _)| k == key) {
                    return false;
                }
                self.entries.insert(at, (key, value));
                return true;
            }
        }
        self.entries.push_back((key, value));
        true
    }

    /// The entry with the smallest key.
    pub fn first(&self) -> Option<(u64, V)> {
        self.entries.front().copied()
    }

    pub fn pop_first(&mut self) -> Option<(u64, V)> {
        self.entries.pop_front()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Behaves as a `BTreeMap` with insert-if-vacant and pop-first, whatever the insertion order.
    #[test]
    fn matches_an_ordered_map() {
        let mut q = ReorderQueue::default();
        let mut m = BTreeMap::new();
        let mut state = 12_345u64;
        for step in 0..20_000u32 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let key = (state >> 33) % 500;
            if state.is_multiple_of(5) {
                assert_eq!(q.pop_first(), m.pop_first());
            } else {
                let added = q.insert_if_vacant(key, step);
                let vacant = !m.contains_key(&key);
                if vacant {
                    m.insert(key, step);
                }
                assert_eq!(added, vacant);
            }
            assert_eq!(q.first(), m.first_key_value().map(|(&k, &v)| (k, v)));
            assert_eq!(q.is_empty(), m.is_empty());
        }
    }
}
