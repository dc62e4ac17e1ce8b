//! `DEBUG DIGEST` and `DEBUG DIGEST-VALUE`: the SHA-1 based digest Redis
//! computes of a dataset or a value, so that a dataset can be compared
//! across Petrel and Redis, across a copy, a save and load, a replica.
//!
//! The algorithm is Redis 7.0's (debug.c), so the same data gives the same
//! 40 hex digits on both servers:
//! * `xor(d, bytes)`: `d ^= sha1(bytes)` (order-independent mixing);
//! * `mix(d, bytes)`: `xor(d, bytes)` then `d = sha1(d)` (order-dependent);
//! * a value: `mix(type as 4 big-endian bytes)`, then strings `mix(bytes)`;
//!   lists `mix` each element head to tail; sets `xor` each member; sorted
//!   sets and hashes `xor` one per-element digest (`mix(member)`,
//!   `mix(score as %.17g)`; `mix(field)`, `mix(value)`); streams `mix`
//!   each entry's `<ms>.<seq>` then its fields and values in order (groups
//!   are not part of it); then
//!   `xor("!!expire!!")` when the key has a TTL. Integers are their decimal
//!   text.
//! * the dataset: for each non-empty database `mix(db index as 4 big-endian
//!   bytes)`, then for each key `xor(final, key digest)` where the key
//!   digest is `mix(key)` followed by the value's.
//!   Keys that expired but were not collected yet count, as in Redis.
//!
//! All zeros means an empty dataset (or a missing key).

use collections::{HashValue, LpValue};
use sha1_smol::Sha1;
use store::{CompactValue, Entry, Kind};

use crate::kernel::server::Server;

/// A 20-byte digest.
pub type Digest = [u8; 20];

fn sha1(bytes: &[u8]) -> Digest {
    Sha1::from(bytes).digest().bytes()
}

/// `digest ^= sha1(bytes)`.
fn xor(digest: &mut Digest, bytes: &[u8]) {
    let h = sha1(bytes);
    for (d, h) in digest.iter_mut().zip(h) {
        *d ^= h;
    }
}

/// `xor`, then `digest = sha1(digest)`.
fn mix(digest: &mut Digest, bytes: &[u8]) {
    xor(digest, bytes);
    *digest = sha1(&digest[..]);
}

fn mix_lp(digest: &mut Digest, v: LpValue<'_>) {
    match v {
        LpValue::Str(s) => mix(digest, s),
        LpValue::Int(i) => mix(digest, i.to_string().as_bytes()),
    }
}

/// Redis's type numbers (`OBJ_STRING` ...).
fn type_code(kind: Kind) -> u32 {
    match kind {
        Kind::String => 0,
        Kind::List => 1,
        Kind::Set => 2,
        Kind::ZSet => 3,
        Kind::Hash => 4,
        Kind::Stream => 6,
    }
}

/// Mixes a value (and its TTL presence) into `digest` (Redis's
/// `xorObjectDigest`).
pub fn value_digest(digest: &mut Digest, v: &CompactValue, has_expire: bool) {
    mix(digest, &type_code(v.kind()).to_be_bytes());
    match v.kind() {
        Kind::String => {
            if let Some(s) = v.string() {
                mix(digest, &s);
            }
        }
        Kind::List => {
            if let Some(l) = v.as_list() {
                l.for_each(|e| mix_lp(digest, e));
            }
        }
        Kind::Set => {
            if let Some(s) = v.as_set() {
                for m in s.iter() {
                    match m {
                        collections::value::set::Member::Int(i) => {
                            xor(digest, i.to_string().as_bytes())
                        }
                        collections::value::set::Member::Str(b) => xor(digest, b),
                    }
                }
            }
        }
        Kind::ZSet => {
            if let Some(z) = v.as_zset() {
                z.for_each_in(0, z.len(), false, |m, score| {
                    let mut ele = [0u8; 20];
                    mix(&mut ele, m);
                    mix(&mut ele, &resp::format_double_like_redis(score));
                    xor(digest, &ele);
                    true
                });
            }
        }
        Kind::Stream => {
            if let Some(st) = v.as_stream() {
                use collections::stream::StreamId;
                for e in st.range(StreamId::MIN, StreamId::MAX, false) {
                    mix(digest, format!("{}.{}", e.id.ms, e.id.seq).as_bytes());
                    for (f, val) in e.fields() {
                        mix_lp(digest, f);
                        mix_lp(digest, val);
                    }
                }
            }
        }
        Kind::Hash => {
            if let Some(h) = v.as_hash() {
                let h: &HashValue = &h;
                for (f, val) in h.iter() {
                    let mut ele = [0u8; 20];
                    mix_lp(&mut ele, f);
                    mix_lp(&mut ele, val);
                    xor(digest, &ele);
                }
            }
        }
    }
    if has_expire {
        xor(digest, b"!!expire!!");
    }
}

/// The digest of one key's value (`DEBUG DIGEST-VALUE`), all zeros for none.
pub fn entry_value_digest(e: Option<&Entry>) -> Digest {
    let mut d = [0u8; 20];
    if let Some(e) = e {
        value_digest(&mut d, e.value(), e.has_expire());
    }
    d
}

/// The digest of every database (`DEBUG DIGEST`), taken with every
/// partition held so no write lands halfway.
pub fn dataset_digest(srv: &Server) -> Digest {
    let mut fin = [0u8; 20];
    let mut g = srv.keyspace.lock_all();
    for db in 0..srv.keyspace.databases() {
        let mut any = false;
        let mut keys = [0u8; 20];
        for p in g.partitions() {
            let Some(d) = p.db(db) else {
                continue;
            };
            for e in d.table.iter() {
                any = true;
                let mut kd = [0u8; 20];
                mix(&mut kd, &e.key());
                value_digest(&mut kd, e.value(), e.has_expire());
                xor(&mut keys, &kd);
            }
        }
        if any {
            // The db id is mixed in before the (order-independent) keys.
            mix(&mut fin, &(db as u32).to_be_bytes());
            for (a, b) in fin.iter_mut().zip(keys) {
                *a ^= b;
            }
        }
    }
    fin
}

/// Lower-case hex, as the replies show digests.
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}
