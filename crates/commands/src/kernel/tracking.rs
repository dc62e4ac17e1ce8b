//! Client-side caching state (`CLIENT TRACKING`): the tracking table
//! (key -> ids of the clients that read it), the broadcast prefix table
//! (prefix -> BCAST clients, and the keys changed under it since the last
//! broadcast), and each client's own tracking mode ([`ClientTracking`]).
//!
//! `services::tracking` does the work (remembering reads, invalidating,
//! broadcasting, sending through the hub); this module only keeps the
//! state, so it names no other registry.
//!
//! Invariants:
//! * The table is keyed by key name only, across databases, as in Redis: a
//!   write to `k` in any database invalidates every reader of `k`.
//! * A key's entry holds each client id at most once; `items` is the sum of
//!   the entries' lengths. Entries are removed whole when the key is
//!   invalidated; ids of clients that stopped tracking or disconnected stay
//!   until then (they are skipped when sending), as in Redis.
//! * A prefix is in the prefix table while at least one BCAST client
//!   registered it; a client registers each of its prefixes once.
//! * `clients` counts the clients with tracking on (`tracking_clients`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};

use parking_lot::Mutex;

/// The channel RESP2 redirection targets receive invalidations on.
pub const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

/// One client's tracking mode, owned by its worker (the bits other threads
/// need are mirrored in `ClientShared`: flags and `tracking_redir`).
#[derive(Default, Debug)]
pub struct ClientTracking {
    pub on: bool,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    /// `CLIENT CACHING yes|no` was given for the next command (or the next
    /// transaction).
    pub caching: bool,
    /// Client id invalidations are redirected to (0 = none).
    pub redirect: u64,
    /// BCAST prefixes, in the order TRACKINGINFO lists them.
    pub prefixes: BTreeSet<Vec<u8>>,
    /// Invalidations this client's own running command caused, sent after
    /// its reply (after EXEC's for a transaction): a key, or None for the
    /// null invalidation of a flush.
    pub pending: Vec<Option<Vec<u8>>>,
}

/// Keys changed under one broadcast prefix since the last broadcast.
#[derive(Default, Debug)]
struct Bcast {
    clients: BTreeSet<u64>,
    /// Key -> id of the client that changed it last (0 = no client).
    keys: BTreeMap<Vec<u8>, u64>,
}

/// What to broadcast for one prefix.
#[derive(Debug)]
pub struct Broadcast {
    pub clients: Vec<u64>,
    pub keys: Vec<(Vec<u8>, u64)>,
}

#[derive(Default, Debug)]
struct Table {
    keys: HashMap<Vec<u8>, Vec<u64>>,
    items: usize,
}

/// The server-wide tracking state.
#[derive(Default, Debug)]
pub struct Tracking {
    clients: AtomicUsize,
    table: Mutex<Table>,
    prefixes: Mutex<BTreeMap<Vec<u8>, Bcast>>,
    nprefixes: AtomicUsize,
    /// Some prefix has keys waiting for the next broadcast.
    bcast_pending: AtomicBool,
}

impl Tracking {
    /// Is any client tracking? (One relaxed load: the fast path of every
    /// command when nobody uses client-side caching.)
    pub fn any(&self) -> bool {
        self.clients.load(Relaxed) > 0
    }

    /// `tracking_clients`.
    pub fn clients(&self) -> usize {
        self.clients.load(Relaxed)
    }

    pub fn client_on(&self) {
        self.clients.fetch_add(1, Relaxed);
    }

    pub fn client_off(&self) {
        let _ = self
            .clients
            .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1));
    }

    /// Remembers that client `id` read `key`.
    pub fn remember(&self, key: &[u8], id: u64) {
        let mut t = self.table.lock();
        let ids = t.keys.entry(key.to_vec()).or_default();
        if !ids.contains(&id) {
            ids.push(id);
            t.items += 1;
        }
    }

    /// Removes `key` from the table, returning the clients that read it.
    pub fn take_key(&self, key: &[u8]) -> Option<Vec<u64>> {
        let mut t = self.table.lock();
        let ids = t.keys.remove(key)?;
        t.items -= ids.len();
        Some(ids)
    }

    /// Empties the table (FLUSHDB, FLUSHALL).
    pub fn clear_table(&self) {
        let mut t = self.table.lock();
        t.keys = HashMap::new();
        t.items = 0;
    }

    /// Removes keys until at most `max` remain (`tracking-table-max-keys`),
    /// returning them with their readers. `max` 0 means no limit.
    pub fn take_over_limit(&self, max: usize) -> Vec<(Vec<u8>, Vec<u64>)> {
        let mut t = self.table.lock();
        if max == 0 || t.keys.len() <= max {
            return Vec::new();
        }
        let excess = t.keys.len() - max;
        let victims: Vec<Vec<u8>> = t.keys.keys().take(excess).cloned().collect();
        let mut out = Vec::with_capacity(victims.len());
        for k in victims {
            if let Some(ids) = t.keys.remove(&k) {
                t.items -= ids.len();
                out.push((k, ids));
            }
        }
        out
    }

    /// `tracking_total_keys`.
    pub fn total_keys(&self) -> usize {
        self.table.lock().keys.len()
    }

    /// `tracking_total_items`.
    pub fn total_items(&self) -> usize {
        self.table.lock().items
    }

    /// `tracking_total_prefixes`.
    pub fn total_prefixes(&self) -> usize {
        self.nprefixes.load(Relaxed)
    }

    /// Registers BCAST client `id` for `prefix`.
    pub fn add_prefix(&self, prefix: &[u8], id: u64) {
        let mut p = self.prefixes.lock();
        p.entry(prefix.to_vec()).or_default().clients.insert(id);
        self.nprefixes.store(p.len(), Relaxed);
    }

    /// Unregisters BCAST client `id` from `prefix` (dropping the prefix
    /// and its pending keys when it was the last client).
    pub fn remove_prefix(&self, prefix: &[u8], id: u64) {
        let mut p = self.prefixes.lock();
        if let Some(b) = p.get_mut(prefix) {
            b.clients.remove(&id);
            if b.clients.is_empty() {
                p.remove(prefix);
            }
        }
        self.nprefixes.store(p.len(), Relaxed);
    }

    /// Notes that `key` changed (by client `writer`, 0 = none) for the BCAST
    /// clients of every prefix it starts with.
    pub fn note_broadcast(&self, key: &[u8], writer: u64) {
        if self.nprefixes.load(Relaxed) == 0 {
            return;
        }
        let mut p = self.prefixes.lock();
        let mut any = false;
        for (prefix, b) in p.iter_mut() {
            if key.starts_with(prefix) {
                b.keys.insert(key.to_vec(), writer);
                any = true;
            }
        }
        if any {
            self.bcast_pending.store(true, Relaxed);
        }
    }

    /// Takes what is waiting to be broadcast, prefix by prefix in prefix
    /// order, each prefix's keys in byte order.
    pub fn take_broadcasts(&self) -> Vec<Broadcast> {
        if !self.bcast_pending.swap(false, Relaxed) {
            return Vec::new();
        }
        let mut p = self.prefixes.lock();
        p.values_mut()
            .filter(|b| !b.keys.is_empty())
            .map(|b| Broadcast {
                clients: b.clients.iter().copied().collect(),
                keys: std::mem::take(&mut b.keys).into_iter().collect(),
            })
            .collect()
    }
}

/// The keys an invalidation message carries.
#[derive(Clone, Copy, Debug)]
pub enum Invalidated<'a> {
    Keys(&'a [&'a [u8]]),
    /// Everything (a flush): a null instead of the key array.
    All,
}

/// The invalidation message as a connection receives it: a RESP3 push
/// `invalidate [keys]`, or for a RESP2 redirection target in Pub/Sub mode
/// a `message` on `__redis__:invalidate`; None when the connection can get
/// neither (RESP2 without redirection, or a RESP2 target not subscribed).
pub fn encode_invalidation(
    proto: resp::Protocol,
    subscribed: bool,
    redirected: bool,
    what: Invalidated<'_>,
) -> Option<Vec<u8>> {
    let mut out = resp::ReplyBuf::new(proto);
    if proto == resp::Protocol::Resp3 {
        out.push_len(2);
        out.bulk(b"invalidate");
    } else if redirected && subscribed {
        out.array_len(3);
        out.bulk(b"message");
        out.bulk(INVALIDATE_CHANNEL);
    } else {
        return None;
    }
    match what {
        Invalidated::Keys(keys) => {
            out.array_len(keys.len());
            for k in keys {
                out.bulk(k);
            }
        }
        Invalidated::All => out.null(),
    }
    Some(out.take())
}

/// `tracking-redir-broken <id>`: told to a RESP3 tracking client whose
/// redirection target is gone, instead of an invalidation.
pub fn encode_redir_broken(redirect: u64) -> Vec<u8> {
    let mut out = resp::ReplyBuf::new(resp::Protocol::Resp3);
    out.push_len(2);
    out.bulk(b"tracking-redir-broken");
    out.int(redirect as i64);
    out.take()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn broadcast_groups_by_prefix() {
        let t = Tracking::default();
        t.add_prefix(b"a", 1);
        t.add_prefix(b"", 2);
        t.note_broadcast(b"b1", 7);
        t.note_broadcast(b"a2", 0);
        t.note_broadcast(b"a1", 7);
        let b = t.take_broadcasts();
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].clients, vec![2]);
        assert_eq!(
            b[0].keys,
            vec![
                (b"a1".to_vec(), 7),
                (b"a2".to_vec(), 0),
                (b"b1".to_vec(), 7)
            ]
        );
        assert_eq!(b[1].clients, vec![1]);
        assert_eq!(b[1].keys.len(), 2);
        assert!(t.take_broadcasts().is_empty());
        t.remove_prefix(b"a", 1);
        assert_eq!(t.total_prefixes(), 1);
    }

    #[test]
    fn encodings() {
        let k: &[&[u8]] = &[b"k"];
        let r3 = encode_invalidation(resp::Protocol::Resp3, false, false, Invalidated::Keys(k));
        assert_eq!(r3.unwrap(), b">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n");
        let r2 = encode_invalidation(resp::Protocol::Resp2, true, true, Invalidated::All);
        assert_eq!(
            r2.unwrap(),
            b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n".to_vec()
        );
        assert!(
            encode_invalidation(resp::Protocol::Resp2, true, false, Invalidated::All).is_none()
        );
        assert!(
            encode_invalidation(resp::Protocol::Resp2, false, true, Invalidated::All).is_none()
        );
        assert_eq!(
            encode_redir_broken(12),
            b">2\r\n$21\r\ntracking-redir-broken\r\n:12\r\n"
        );
    }

    proptest! {
        /// The table against a model: key -> set of ids, items = total.
        #[test]
        fn table_matches_model(ops in prop::collection::vec((0u8..4, 0u8..6, 1u64..4), 0..200), max in 0usize..4) {
            let t = Tracking::default();
            let mut model: std::collections::HashMap<Vec<u8>, BTreeSet<u64>> = Default::default();
            for (op, k, id) in ops {
                let key = vec![b'k', k];
                match op {
                    0 | 1 => { t.remember(&key, id); model.entry(key).or_default().insert(id); }
                    2 => {
                        let got = t.take_key(&key).map(|v| v.into_iter().collect::<BTreeSet<_>>());
                        prop_assert_eq!(got, model.remove(&key));
                    }
                    _ => {
                        for (k, ids) in t.take_over_limit(max) {
                            let m = model.remove(&k).expect("evicted key was tracked");
                            prop_assert_eq!(ids.into_iter().collect::<BTreeSet<_>>(), m);
                        }
                        if max > 0 { prop_assert!(model.len() <= max); }
                    }
                }
                prop_assert_eq!(t.total_keys(), model.len());
                prop_assert_eq!(t.total_items(), model.values().map(|s| s.len()).sum::<usize>());
            }
        }
    }
}
