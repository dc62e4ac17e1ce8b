//! Keys a writable replica's own clients gave a TTL.
//!
//! On a replica, expiry is frozen (`Keyspace::set_expiry_frozen`): a key
//! whose TTL passed reads as missing but stays until its master's `DEL`.
//! With `replica-read-only no` the replica's clients may write too, and
//! no master will ever delete the keys *they* gave a TTL. As Redis 4.0+
//! does, each partition remembers such keys (name and a bitmask of the
//! databases, 0-63, where a client set the TTL) and the replica's cron
//! deletes them once expired ([`super::Keyspace::expire_replica_local_keys`]),
//! counted and logged as expired like any key active expiry takes.
//!
//! Invariants:
//! * A key is remembered only while the calling thread runs inside
//!   [`super::Keyspace::with_local_ttls_tracked`] (dispatch wraps a
//!   replica's client commands in it, never its master's), and only when
//!   a TTL is set: an insert with a TTL, `set_expire(Some)`, a MOVE of a
//!   key with a TTL.
//! * The set is a superset of what needs deleting: a key the master later
//!   overwrote, removed or persisted is dropped from it by the next sweep
//!   that visits it, not when that happens. Like Redis's list, it goes by
//!   name: a key of that name the master gave a TTL in a remembered
//!   database is deleted when it expires too (reads already saw it as
//!   missing).
//! * `keys[i].0` and `at`'s keys are the same set; `at[k]` is the index of
//!   `k` in `keys`. The sweep's `cursor` is an index into `keys` (reset to
//!   0 when it passes the end).

use std::cell::Cell;
use std::collections::HashMap;

thread_local! {
    /// Set by [`super::Keyspace::with_local_ttls_tracked`].
    static TRACKED: Cell<bool> = const { Cell::new(false) };
}

/// Does this thread remember the keys it gives a TTL?
#[inline]
pub(crate) fn tracked() -> bool {
    TRACKED.with(|t| t.get())
}

/// Runs `f` with [`tracked`] true on this thread.
pub(crate) fn with_tracked<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            TRACKED.with(|t| t.set(self.0));
        }
    }
    let _restore = Restore(TRACKED.with(|t| t.replace(true)));
    f()
}

/// Redis keeps the databases in a 64-bit mask and does not remember keys
/// of databases 64 and up.
const MAX_DBS: usize = 64;

/// What a sweep found for one remembered (database, key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Present with a TTL still ahead: keep remembering.
    Live,
    /// Missing, or without a TTL now: forget.
    Gone,
    /// Its TTL had passed: the visitor deleted it.
    Expired,
}

/// One partition's remembered keys (module docs).
#[derive(Default)]
pub(crate) struct LocalTtls {
    keys: Vec<(Box<[u8]>, u64)>,
    at: HashMap<Box<[u8]>, usize>,
    cursor: usize,
}

impl LocalTtls {
    /// Remembers that a client set a TTL on `key` in `db`.
    pub(crate) fn remember(&mut self, db: usize, key: &[u8]) {
        if db >= MAX_DBS {
            return;
        }
        let bit = 1u64 << db;
        match self.at.get(key) {
            Some(&i) => self.keys[i].1 |= bit,
            None => {
                self.at.insert(key.into(), self.keys.len());
                self.keys.push((key.into(), bit));
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Forgets every key (the dataset was replaced or flushed).
    pub(crate) fn clear(&mut self) {
        *self = LocalTtls::default();
    }

    /// Visits up to `max` remembered keys from where the last sweep
    /// stopped, calling `visit(db, key)` for each remembered database.
    /// Returns (keys visited, deletions, whether it reached the end).
    pub(crate) fn sweep(
        &mut self,
        max: usize,
        mut visit: impl FnMut(usize, &[u8]) -> Found,
    ) -> (usize, usize, bool) {
        let (mut visited, mut expired) = (0, 0);
        let mut i = self.cursor;
        while visited < max && i < self.keys.len() {
            visited += 1;
            let (key, mask) = &self.keys[i];
            let mut keep = 0u64;
            let mut bits = *mask;
            while bits != 0 {
                let db = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                match visit(db, key) {
                    Found::Live => keep |= 1 << db,
                    Found::Gone => {}
                    Found::Expired => expired += 1,
                }
            }
            if keep != 0 {
                self.keys[i].1 = keep;
                i += 1;
                continue;
            }
            let (gone, _) = self.keys.swap_remove(i);
            self.at.remove(&gone);
            if let Some((moved, _)) = self.keys.get(i) {
                *self.at.get_mut(moved).expect("keys and at agree") = i;
            }
        }
        let complete = i >= self.keys.len();
        self.cursor = if complete { 0 } else { i };
        (visited, expired, complete)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn sweep_keeps_live_forgets_gone_and_counts_expired() {
        let mut l = LocalTtls::default();
        l.remember(0, b"a");
        l.remember(3, b"a");
        l.remember(0, b"b");
        l.remember(70, b"c"); // database past the mask: not remembered
        assert_eq!(l.len(), 2);
        let (v, e, done) = l.sweep(10, |db, k| match (db, k) {
            (0, b"a") => Found::Expired,
            (3, b"a") => Found::Live,
            _ => Found::Gone,
        });
        assert_eq!((v, e, done), (2, 1, true));
        assert_eq!(l.keys, vec![(Box::from(&b"a"[..]), 1u64 << 3)]);
        assert_eq!(l.at.get(&b"a"[..]), Some(&0));
    }

    proptest::proptest! {
        /// Against a map model: remembering and sweeps with random
        /// verdicts leave exactly the (db, key) pairs last found live or
        /// remembered since, and `at` indexes `keys`.
        #[test]
        fn agrees_with_a_map(ops in proptest::collection::vec((0u8..3, 0usize..5, 0u8..6, 1usize..4), 1..200)) {
            let mut l = LocalTtls::default();
            let mut model: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
            for (op, db, key, max) in ops {
                let key = vec![b'k', key];
                if op < 2 {
                    l.remember(db, &key);
                    *model.entry(key).or_default() |= 1 << db;
                } else {
                    // verdict by (db + key) parity: even stays live
                    let (_, _, _) = l.sweep(max, |db, k| {
                        let live = (db + k[1] as usize).is_multiple_of(2);
                        let m = model.get_mut(k).unwrap();
                        if !live {
                            *m &= !(1 << db);
                        }
                        if live { Found::Live } else { Found::Gone }
                    });
                    model.retain(|_, m| *m != 0);
                }
                let names: Vec<&[u8]> = model.keys().map(|k| &k[..]).collect();
                let mut held: Vec<&[u8]> = l.keys.iter().map(|(k, _)| &k[..]).collect();
                held.sort();
                proptest::prop_assert_eq!(held, names);
                for (i, (k, _)) in l.keys.iter().enumerate() {
                    proptest::prop_assert_eq!(l.at.get(k), Some(&i));
                }
                proptest::prop_assert_eq!(l.at.len(), l.keys.len());
            }
            let got: BTreeMap<Vec<u8>, u64> = l.keys.iter().map(|(k, m)| (k.to_vec(), *m)).collect();
            proptest::prop_assert_eq!(got, model);
        }
    }
}
