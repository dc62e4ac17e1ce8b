//! The WATCH registry: (db, key) mapped to the clients watching it.
//!
//! Every successful write command touches the keys it changed (and
//! FLUSHDB, FLUSHALL, SWAPDB whole databases), setting the watchers'
//! `DIRTY_CAS` flag from whatever thread ran the write; EXEC of a dirty
//! client answers with a null array. Invariant: a key is in the registry
//! with a client iff it is in that client's `Transaction::watched`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::kernel::client::{cflag, ClientShared};

pub type WatchKey = (usize, Vec<u8>);

#[derive(Default, Debug)]
pub struct Watches {
    entries: AtomicUsize,
    map: Mutex<HashMap<WatchKey, Vec<Arc<ClientShared>>>>,
}

impl Watches {
    pub fn add(&self, db: usize, key: &[u8], c: &Arc<ClientShared>) {
        let mut m = self.map.lock();
        let v = m.entry((db, key.to_vec())).or_default();
        if !v.iter().any(|x| x.id == c.id) {
            v.push(c.clone());
            self.entries.fetch_add(1, Relaxed);
        }
    }

    pub fn remove(&self, db: usize, key: &[u8], id: u64) {
        let mut m = self.map.lock();
        let k = (db, key.to_vec());
        if let Some(v) = m.get_mut(&k) {
            let before = v.len();
            v.retain(|x| x.id != id);
            self.entries.fetch_sub(before - v.len(), Relaxed);
            if v.is_empty() {
                m.remove(&k);
            }
        }
    }

    /// True if any client watches anything (one atomic load).
    pub fn any(&self) -> bool {
        self.entries.load(Relaxed) > 0
    }

    /// Marks the watchers of `key` in `db` (or in every db when `db` is None) dirty.
    pub fn touch(&self, db: Option<usize>, key: &[u8]) {
        if !self.any() {
            return;
        }
        let m = self.map.lock();
        match db {
            Some(db) => {
                if let Some(v) = m.get(&(db, key.to_vec())) {
                    v.iter().for_each(|c| c.set_flag(cflag::DIRTY_CAS, true));
                }
            }
            None => {
                for ((_, k), v) in m.iter() {
                    if k == key {
                        v.iter().for_each(|c| c.set_flag(cflag::DIRTY_CAS, true));
                    }
                }
            }
        }
    }

    /// The watched keys of database `db` (every database when None).
    pub fn keys_in_db(&self, db: Option<usize>) -> Vec<WatchKey> {
        if !self.any() {
            return Vec::new();
        }
        let m = self.map.lock();
        m.keys()
            .filter(|(d, _)| db.is_none_or(|db| db == *d))
            .cloned()
            .collect()
    }
}
