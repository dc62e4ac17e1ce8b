// Shared by the examples and the bench: 32-byte entries (16-byte key,
// 16-byte value) and one hash function used by both dash and hashbrown.
#![allow(dead_code)]

use std::hash::{BuildHasherDefault, Hash, Hasher};

/// A 16-byte key.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Key(pub [u64; 2]);

/// A 32-byte entry: 16-byte key + 16-byte value.
pub type Entry = (Key, [u64; 2]);

#[inline]
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline]
pub fn hash_key(k: &Key) -> u64 {
    mix(k.0[0] ^ mix(k.0[1].wrapping_add(0x9E37_79B9_7F4A_7C15)))
}

#[inline]
pub fn hash_entry(e: &Entry) -> u64 {
    hash_key(&e.0)
}

pub fn key(i: u64) -> Key {
    Key([i, 0x5eed])
}

/// Feeds `hash_key` to hashbrown so both tables pay the same hash cost.
impl Hash for Key {
    fn hash<S: Hasher>(&self, state: &mut S) {
        state.write_u64(hash_key(self));
    }
}

#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!()
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

pub type BuildPass = BuildHasherDefault<PassThrough>;

pub type Dash = dash::DashTable<Entry, fn(&Entry) -> u64>;

pub fn new_dash() -> Dash {
    dash::DashTable::with_hasher(hash_entry as fn(&Entry) -> u64)
}

/// A dash table and a hashbrown map holding the same `n` entries
/// (`key(i)` -> `[i, i]`), filled in the same order.
pub fn populate(n: u64) -> (Dash, hashbrown::HashMap<Key, [u64; 2], BuildPass>) {
    let mut d = new_dash();
    let mut h = hashbrown::HashMap::<Key, [u64; 2], BuildPass>::default();
    for i in 0..n {
        let k = key(i);
        d.insert(hash_key(&k), (k, [i, i]), |e| e.0 == k);
        h.insert(k, [i, i]);
    }
    (d, h)
}
