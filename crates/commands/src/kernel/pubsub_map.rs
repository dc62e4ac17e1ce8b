//! One map of the Pub/Sub registry (channels, patterns or shard channels):
//! a name and its subscribers, in a table whose every heap block active
//! defragmentation can move (`collections::defrag_table`): the bucket
//! array, each name's buffer and each subscriber vector.
//!
//! Invariants:
//! * A name is in the map iff it has at least one subscriber (a vector
//!   never stays empty).
//! * Names hash with the map's own SipHash keys (as `std`'s `HashMap` did:
//!   channel names come from clients).
//! * A defrag step visits a bounded number of buckets
//!   ([`SubscriberMap::defrag_step`]), changing no name and no subscriber
//!   list: only where their bytes live.
//!
//! The map is generic over the subscriber type so that it does not import
//! the registry that uses it (`kernel::pubsub` names it `SubscriberMap`).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;

use collections::defrag::Defrag;
use collections::defrag_table::{hash_table::Entry, DefragTable};

/// One map's entries: (name, subscribers in subscription order).
type Slot<S> = (Vec<u8>, Vec<S>);

#[derive(Debug)]
pub struct NameMap<S> {
    table: DefragTable<Slot<S>>,
    hasher: RandomState,
}

impl<S> Default for NameMap<S> {
    fn default() -> Self {
        NameMap {
            table: DefragTable::default(),
            hasher: RandomState::default(),
        }
    }
}

impl<S> NameMap<S> {
    fn hash(&self, name: &[u8]) -> u64 {
        self.hasher.hash_one(name)
    }

    /// The subscribers of `name`, if any.
    pub fn get(&self, name: &[u8]) -> Option<&[S]> {
        self.table
            .find(self.hash(name), |e| e.0 == name)
            .map(|e| e.1.as_slice())
    }

    /// Appends a subscriber to `name`.
    pub fn add(&mut self, name: &[u8], s: S) {
        let h = self.hash(name);
        let hasher = &self.hasher;
        match self
            .table
            .entry(h, |e| e.0 == name, |e| hasher.hash_one(&e.0))
        {
            Entry::Occupied(mut o) => o.get_mut().1.push(s),
            Entry::Vacant(v) => {
                v.insert((name.to_vec(), vec![s]));
            }
        }
    }

    /// Removes the subscribers of `name` that `gone` picks; the name goes
    /// when its last subscriber does.
    pub fn remove(&mut self, name: &[u8], mut gone: impl FnMut(&S) -> bool) {
        let h = self.hash(name);
        if let Ok(mut o) = self.table.find_entry(h, |e| e.0 == name) {
            o.get_mut().1.retain(|s| !gone(s));
            if o.get().1.is_empty() {
                o.remove();
            }
        }
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// Does the map hold a bucket array (a block defrag offers)?
    pub fn has_block(&self) -> bool {
        self.table.allocator().block().is_some()
    }

    /// Every (name, subscribers), in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[S])> {
        self.table.iter().map(|e| (e.0.as_slice(), e.1.as_slice()))
    }

    /// One defrag step: from bucket `from` (`None`: the pass's first step,
    /// which offers the bucket array first) offers the name buffer and the
    /// subscriber vector of up to `buckets` buckets' entries. Returns the
    /// bucket to resume at, `None` when the map is done.
    pub fn defrag_step(
        &mut self,
        from: Option<usize>,
        buckets: usize,
        d: &mut Defrag,
    ) -> Option<usize> {
        let from = match from {
            Some(b) => b,
            None => {
                let hasher = &self.hasher;
                self.table.defrag_table(d, |e| hasher.hash_one(&e.0));
                0
            }
        };
        self.table.defrag_buckets(from, buckets, |e| {
            d.vec(&mut e.0);
            d.vec(&mut e.1);
        })
    }
}
