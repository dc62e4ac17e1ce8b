//! `ArenaMap`: the large hash encoding, field/value records packed in chunks.
//!
//! The table is the same linear-probing, hash-ordered design as
//! [`crate::table`] (control byte per slot, home = `h * home_cap >> 64`, no
//! wrap-around, the same SCAN guarantee), but a slot is a 4-byte reference
//! into an arena instead of an inline element. Records are packed back to
//! back in chunks of up to [`CHUNK`] bytes:
//!
//! ```text
//! record = varint(field_len << 1 | dead) varint(value_len) field value
//! ref    = chunk_index << 15 | offset
//! ```
//!
//! so a pair costs 5 bytes / load + its record (2 bytes of header for short
//! fields and values), with no per-element allocation and no size-class
//! rounding. Records over [`BIG`] bytes get a dedicated exact-size chunk.
//!
//! Deleting or resizing a record marks it dead (a same-length value update
//! overwrites in place). When a record dies in a chunk other than the open
//! tail and that chunk's dead bytes pass half of it, the chunk is compacted
//! on the spot: its live records (at most 32 KiB) are copied to the tail
//! chunk and their slots, found by probing from their field's home slot,
//! repointed; the chunk is then freed. Fully dead chunks are freed at once.
//! Every compaction step is bounded by one chunk (defrag-friendly: blocks
//! are movable). A chunk that collected its dead bytes while it was the tail
//! is compacted at its next record death, not when the tail moves on.
//!
//! Invariants (checked by `check()` in tests):
//! * table invariants as in [`crate::table`];
//! * every full slot's ref points at a live record whose field hashes to the
//!   slot's fingerprint; no two slots share a record; live records are
//!   exactly those referenced;
//! * `chunks[c].dead` is the byte total of dead records in chunk `c`;
//!   free chunk slots have an empty buffer and are listed in `free`;
//! * `heap` equals the capacities of all vectors (ctrl, refs, chunk list,
//!   chunk buffers, free list), so `heap_bytes()` is O(1).
//!
//! Limits: 2^17 chunks (4 GiB of records) per map.

use crate::hash::hash_bytes;
use crate::mem::{block_bytes, grow_capacity};
use rand::Rng;

/// Bytes per arena chunk.
pub const CHUNK: usize = 32 * 1024;
/// Records longer than this get their own chunk.
pub const BIG: usize = CHUNK / 2;
const OFF_BITS: u32 = 15;
const MAX_CHUNKS: usize = 1 << (32 - OFF_BITS);
const NO_TAIL: u32 = u32::MAX;

const EMPTY: u8 = 0x80;
const TOMB: u8 = 0xFE;
const GROUP: usize = 8;
const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;
const MAX_LOAD_PCT: usize = 85;
const GROW_LOAD_PCT: usize = 60;

#[inline]
fn match_byte(g: u64, b: u8) -> u64 {
    let x = g ^ (LO * b as u64);
    x.wrapping_sub(LO) & !x & HI
}

#[inline]
fn below(lim: u32) -> u64 {
    if lim >= 8 {
        u64::MAX
    } else {
        (1u64 << (lim * 8)) - 1
    }
}

#[inline]
fn read_varint(b: &[u8], mut i: usize) -> (usize, usize) {
    let mut v = 0usize;
    let mut shift = 0;
    loop {
        let c = b[i];
        v |= ((c & 0x7F) as usize) << shift;
        i += 1;
        if c & 0x80 == 0 {
            return (v, i);
        }
        shift += 7;
    }
}

fn put_varint(mut v: usize, out: &mut [u8; 10]) -> usize {
    let mut k = 0;
    loop {
        let c = (v & 0x7F) as u8;
        v >>= 7;
        if v == 0 {
            out[k] = c;
            return k + 1;
        }
        out[k] = c | 0x80;
        k += 1;
    }
}

/// Decoded record at `off` of `buf`: (field, value, dead, total length).
#[inline]
fn record(buf: &[u8], off: usize) -> (&[u8], &[u8], bool, usize) {
    let (a, i) = read_varint(buf, off);
    let (vlen, j) = read_varint(buf, i);
    let flen = a >> 1;
    let f = &buf[j..j + flen];
    let v = &buf[j + flen..j + flen + vlen];
    (f, v, a & 1 == 1, j + flen + vlen - off)
}

#[derive(Clone, Default)]
struct Chunk {
    buf: Vec<u8>,
    dead: u32,
}

/// Large hash: field -> value.
#[derive(Clone)]
pub struct ArenaMap {
    ctrl: Vec<u8>,
    refs: Vec<u32>,
    home_cap: usize,
    len: usize,
    tombs: usize,
    chunks: Vec<Chunk>,
    free: Vec<u32>,
    tail: u32,
    heap: usize,
}

impl Drop for ArenaMap {
    fn drop(&mut self) {
        // On the lazyfree thread, hand the table arrays' pages back in
        // steps (crate::release); the chunks are at most 32 KiB each.
        // SAFETY: both vectors hold Copy data and are dropped right after.
        unsafe {
            crate::release::release_vec(&mut self.ctrl);
            crate::release::release_vec(&mut self.refs);
        }
    }
}

impl std::fmt::Debug for ArenaMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.iter()
                    .map(|(k, v)| (String::from_utf8_lossy(k), String::from_utf8_lossy(v))),
            )
            .finish()
    }
}

impl Default for ArenaMap {
    fn default() -> Self {
        Self::new()
    }
}

impl ArenaMap {
    pub fn new() -> Self {
        ArenaMap {
            ctrl: Vec::new(),
            refs: Vec::new(),
            home_cap: 0,
            len: 0,
            tombs: 0,
            chunks: Vec::new(),
            free: Vec::new(),
            tail: NO_TAIL,
            heap: 0,
        }
    }

    pub fn with_capacity(n: usize) -> Self {
        let mut m = Self::new();
        if n > 0 {
            m.rebuild((n * 100).div_ceil(MAX_LOAD_PCT).max(8));
        }
        m
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.heap
    }

    fn vec_heap(&self) -> usize {
        block_bytes(self.ctrl.capacity())
            + block_bytes(self.refs.capacity() * 4)
            + block_bytes(self.chunks.capacity() * std::mem::size_of::<Chunk>())
            + block_bytes(self.free.capacity() * 4)
    }

    #[inline]
    fn rec(&self, r: u32) -> (&[u8], &[u8], bool, usize) {
        let c = (r >> OFF_BITS) as usize;
        let off = (r & ((1 << OFF_BITS) - 1)) as usize;
        record(&self.chunks[c].buf, off)
    }

    #[inline]
    fn home(&self, h: u64) -> usize {
        ((h as u128 * self.home_cap as u128) >> 64) as usize
    }

    #[inline]
    fn group(&self, i: usize) -> u64 {
        u64::from_le_bytes(self.ctrl[i..i + GROUP].try_into().unwrap())
    }

    #[inline]
    fn find(&self, key: &[u8], h: u64) -> Option<usize> {
        if self.len == 0 {
            return None;
        }
        let fp = (h & 0x7F) as u8;
        let mut i = self.home(h);
        loop {
            let g = self.group(i);
            let em = match_byte(g, EMPTY);
            let lim = em.trailing_zeros() / 8;
            let mut m = match_byte(g, fp) & below(lim);
            while m != 0 {
                let j = i + (m.trailing_zeros() / 8) as usize;
                if self.ctrl[j] == fp && self.rec(self.refs[j]).0 == key {
                    return Some(j);
                }
                m &= m - 1;
            }
            if em != 0 {
                return None;
            }
            i += GROUP;
            if i >= self.refs.len() {
                return None;
            }
        }
    }

    fn free_slot(&self, h: u64) -> Option<usize> {
        let mut i = self.home(h);
        while i < self.refs.len() {
            let m = self.group(i) & HI;
            if m != 0 {
                let j = i + (m.trailing_zeros() / 8) as usize;
                return (j < self.refs.len()).then_some(j);
            }
            i += GROUP;
        }
        None
    }

    fn rebuild(&mut self, home_cap: usize) {
        let before = block_bytes(self.ctrl.capacity()) + block_bytes(self.refs.capacity() * 4);
        let n = home_cap + GROUP + home_cap / 64;
        let old_ctrl = std::mem::take(&mut self.ctrl);
        let old_refs = std::mem::take(&mut self.refs);
        self.home_cap = home_cap;
        self.ctrl = vec![EMPTY; n + GROUP];
        self.refs = vec![0; n];
        self.tombs = 0;
        for (c, r) in old_ctrl.into_iter().zip(old_refs) {
            if c & 0x80 != 0 {
                continue;
            }
            let h = hash_bytes(self.rec(r).0);
            let i = match self.free_slot(h) {
                Some(i) => i,
                None => {
                    let at = self.refs.len();
                    self.refs.reserve_exact(GROUP);
                    self.refs.resize(at + GROUP, 0);
                    self.ctrl.resize(at + 2 * GROUP, EMPTY);
                    self.free_slot(h).expect("fresh overflow slots")
                }
            };
            self.ctrl[i] = c;
            self.refs[i] = r;
        }
        self.heap =
            self.heap + block_bytes(self.ctrl.capacity()) + block_bytes(self.refs.capacity() * 4)
                - before;
    }

    // ------------------------------------------------------------ arena

    fn new_chunk(&mut self, cap: usize) -> u32 {
        let before = self.vec_heap();
        let c = match self.free.pop() {
            Some(c) => c,
            None => {
                assert!(self.chunks.len() < MAX_CHUNKS, "hash arena over 4 GiB");
                self.chunks.push(Chunk::default());
                (self.chunks.len() - 1) as u32
            }
        };
        self.chunks[c as usize].buf = Vec::with_capacity(cap);
        self.heap = self.heap + self.vec_heap() + block_bytes(cap) - before;
        c
    }

    /// Append a record; returns its ref.
    fn append(&mut self, field: &[u8], value: &[u8]) -> u32 {
        let mut h1 = [0u8; 10];
        let mut h2 = [0u8; 10];
        let n1 = put_varint(field.len() << 1, &mut h1);
        let n2 = put_varint(value.len(), &mut h2);
        let size = n1 + n2 + field.len() + value.len();
        let c = if size > BIG {
            self.new_chunk(size)
        } else {
            let fits =
                self.tail != NO_TAIL && self.chunks[self.tail as usize].buf.len() + size <= CHUNK;
            if !fits {
                self.tail = self.new_chunk(grow_capacity(size));
            }
            self.tail
        };
        let chunk = &mut self.chunks[c as usize];
        let off = chunk.buf.len();
        let need = off + size;
        if need > chunk.buf.capacity() {
            let cap = grow_capacity(need).min(CHUNK).max(need);
            let before = block_bytes(chunk.buf.capacity());
            chunk.buf.reserve_exact(cap - off);
            self.heap = self.heap + block_bytes(chunk.buf.capacity()) - before;
        }
        chunk.buf.extend_from_slice(&h1[..n1]);
        chunk.buf.extend_from_slice(&h2[..n2]);
        chunk.buf.extend_from_slice(field);
        chunk.buf.extend_from_slice(value);
        (c << OFF_BITS) | off as u32
    }

    /// Mark the record `r` dead; frees or compacts its chunk when due.
    fn kill(&mut self, r: u32) {
        let c = (r >> OFF_BITS) as usize;
        let off = (r & ((1 << OFF_BITS) - 1)) as usize;
        let size = record(&self.chunks[c].buf, off).3;
        let chunk = &mut self.chunks[c];
        chunk.buf[off] |= 1;
        chunk.dead += size as u32;
        let (dead, len) = (chunk.dead as usize, chunk.buf.len());
        if dead == len {
            self.free_chunk(c);
        } else if c as u32 != self.tail && dead * 2 > len {
            self.compact_chunk(c);
        }
    }

    fn free_chunk(&mut self, c: usize) {
        let before = self.vec_heap() + block_bytes(self.chunks[c].buf.capacity());
        self.chunks[c] = Chunk::default();
        if self.tail == c as u32 {
            self.tail = NO_TAIL;
        }
        if c + 1 == self.chunks.len() {
            self.chunks.pop();
            while matches!(self.chunks.last(), Some(x) if x.buf.capacity() == 0) {
                self.chunks.pop();
            }
            let n = self.chunks.len() as u32;
            self.free.retain(|&x| x < n);
        } else {
            self.free.push(c as u32);
        }
        if self.chunks.capacity() > 2 * self.chunks.len() + 8 {
            self.chunks.shrink_to_fit();
            self.free.shrink_to_fit();
        }
        self.heap = self.heap + self.vec_heap() - before;
    }

    /// Move chunk `c`'s live records to the tail and free it.
    fn compact_chunk(&mut self, c: usize) {
        let buf = std::mem::take(&mut self.chunks[c].buf);
        let cap = block_bytes(buf.capacity());
        self.chunks[c].dead = buf.len() as u32; // all dead once moved
        self.chunks[c].buf = Vec::new();
        self.heap -= cap;
        let mut off = 0;
        while off < buf.len() {
            let (f, v, dead, size) = record(&buf, off);
            if !dead {
                let old = ((c as u32) << OFF_BITS) | off as u32;
                let h = hash_bytes(f);
                // Find the slot that references this record.
                let fp = (h & 0x7F) as u8;
                let mut i = self.home(h);
                let slot = loop {
                    if self.ctrl[i] == fp && self.refs[i] == old {
                        break i;
                    }
                    i += 1;
                };
                let nr = self.append(f, v);
                self.refs[slot] = nr;
            }
            off += size;
        }
        self.chunks[c].dead = 0;
        // Re-free through the normal path (buffer is already empty).
        self.chunks[c].buf = Vec::new();
        self.free_chunk(c);
    }

    // ------------------------------------------------------------ map API

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        let i = self.find(field, hash_bytes(field))?;
        Some(self.rec(self.refs[i]).1)
    }

    pub fn contains(&self, field: &[u8]) -> bool {
        self.find(field, hash_bytes(field)).is_some()
    }

    /// Set `field` to `value`; true if the field is new.
    pub fn insert(&mut self, field: &[u8], value: &[u8]) -> bool {
        let h = hash_bytes(field);
        if let Some(i) = self.find(field, h) {
            let r = self.refs[i];
            let (_, v, _, _) = self.rec(r);
            if v.len() == value.len() {
                // Same length: overwrite in place.
                let c = (r >> OFF_BITS) as usize;
                let off = (r & ((1 << OFF_BITS) - 1)) as usize;
                let (_, i1) = read_varint(&self.chunks[c].buf, off);
                let (_, i2) = read_varint(&self.chunks[c].buf, i1);
                let at = i2 + field.len();
                self.chunks[c].buf[at..at + value.len()].copy_from_slice(value);
                return false;
            }
            let nr = self.append(field, value);
            self.refs[i] = nr;
            self.kill(r);
            return false;
        }
        if (self.len + self.tombs + 1) * 100 > self.home_cap * MAX_LOAD_PCT {
            let cap = ((self.len + 1) * 100).div_ceil(GROW_LOAD_PCT).max(8);
            self.rebuild(cap);
        }
        let i = loop {
            match self.free_slot(h) {
                Some(i) => break i,
                None => {
                    let cap = self.home_cap + self.home_cap / 4 + 8;
                    self.rebuild(cap);
                }
            }
        };
        let r = self.append(field, value);
        if self.ctrl[i] == TOMB {
            self.tombs -= 1;
        }
        self.ctrl[i] = (h & 0x7F) as u8;
        self.refs[i] = r;
        self.len += 1;
        true
    }

    /// Remove `field`, returning its value.
    pub fn remove(&mut self, field: &[u8]) -> Option<Vec<u8>> {
        let i = self.find(field, hash_bytes(field))?;
        let r = self.refs[i];
        let v = self.rec(r).1.to_vec();
        self.len -= 1;
        if self.ctrl[i + 1] == EMPTY {
            self.ctrl[i] = EMPTY;
            let mut j = i;
            while j > 0 && self.ctrl[j - 1] == TOMB {
                j -= 1;
                self.ctrl[j] = EMPTY;
                self.tombs -= 1;
            }
        } else {
            self.ctrl[i] = TOMB;
            self.tombs += 1;
        }
        if self.len == 0 {
            *self = Self::new();
            return Some(v);
        }
        self.kill(r);
        if self.home_cap > 64 && self.len * 8 < self.home_cap {
            let cap = (self.len * 100).div_ceil(GROW_LOAD_PCT).max(8);
            self.rebuild(cap);
        }
        Some(v)
    }

    /// (field, value) pairs in table order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &[u8])> + '_ {
        self.ctrl[..self.refs.len()]
            .iter()
            .enumerate()
            .filter(|(_, &c)| c & 0x80 == 0)
            .map(|(i, _)| {
                let (f, v, _, _) = self.rec(self.refs[i]);
                (f, v)
            })
    }

    /// A uniformly random (field, value).
    pub fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Option<(&[u8], &[u8])> {
        if self.len == 0 {
            return None;
        }
        loop {
            let i = rng.gen_range(0..self.refs.len());
            if self.ctrl[i] & 0x80 == 0 {
                let (f, v, _, _) = self.rec(self.refs[i]);
                return Some((f, v));
            }
        }
    }

    /// One HSCAN step (same guarantee as [`crate::table`]'s scan).
    pub fn scan(&self, cursor: u64, count: usize, mut f: impl FnMut(&[u8], &[u8])) -> u64 {
        if self.len == 0 {
            return 0;
        }
        let a = self.home(cursor);
        let b = (a + count.max(1)).min(self.home_cap);
        let next: u128 = ((b as u128) << 64).div_ceil(self.home_cap as u128);
        let mut i = a;
        while i < self.refs.len() {
            let c = self.ctrl[i];
            if c == EMPTY && i >= b {
                break;
            }
            if c & 0x80 == 0 {
                let (k, v, _, _) = self.rec(self.refs[i]);
                let h = hash_bytes(k) as u128;
                if h >= cursor as u128 && h < next {
                    f(k, v);
                }
            }
            i += 1;
        }
        if next >= 1u128 << 64 {
            0
        } else {
            next as u64
        }
    }

    /// One defrag step (see [`crate::defrag`]): from chunk `from` (0 also
    /// offers the table arrays and the chunk and free lists first), offers
    /// chunk buffers until they held `max_fields` records (at least one
    /// chunk). Returns the chunk to go on from, `None` when done. Records
    /// are addressed by chunk index and offset, so moving a chunk's
    /// buffer changes no reference. A `from` left over from before the map
    /// changed is only a place to resume (past the end: done).
    pub fn defrag(
        &mut self,
        from: u64,
        max_fields: usize,
        d: &mut crate::defrag::Defrag,
    ) -> Option<u64> {
        if from == 0 {
            d.vec(&mut self.ctrl);
            d.vec(&mut self.refs);
            d.vec(&mut self.chunks);
            d.vec(&mut self.free);
        }
        let mut c = usize::try_from(from).unwrap_or(usize::MAX);
        let mut seen = 0usize;
        while c < self.chunks.len() && seen < max_fields.max(1) {
            let buf = &mut self.chunks[c].buf;
            let mut off = 0;
            while off < buf.len() {
                off += record(buf, off).3;
                seen += 1;
            }
            d.vec(buf);
            c += 1;
        }
        (c < self.chunks.len()).then_some(c as u64)
    }

    /// Chunks that own a buffer (tests).
    #[cfg(test)]
    pub(crate) fn live_chunks(&self) -> usize {
        self.chunks.iter().filter(|c| c.buf.capacity() > 0).count()
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        use std::collections::HashSet;
        let mut heap = self.vec_heap();
        let mut dead_by_chunk = vec![0usize; self.chunks.len()];
        let mut live: HashSet<u32> = HashSet::new();
        for (c, ch) in self.chunks.iter().enumerate() {
            heap += block_bytes(ch.buf.capacity());
            let mut off = 0;
            while off < ch.buf.len() {
                let (_, _, dead, size) = record(&ch.buf, off);
                if dead {
                    dead_by_chunk[c] += size;
                } else {
                    live.insert(((c as u32) << OFF_BITS) | off as u32);
                }
                off += size;
            }
            assert_eq!(dead_by_chunk[c], ch.dead as usize, "chunk {c} dead bytes");
            if ch.buf.capacity() == 0 {
                assert!(self.free.contains(&(c as u32)) || c == self.tail as usize);
            }
        }
        assert_eq!(heap, self.heap, "heap accounting");
        if self.refs.is_empty() {
            assert_eq!(self.len, 0);
            return;
        }
        let (mut len, mut tombs) = (0, 0);
        let mut seen = HashSet::new();
        for i in 0..self.refs.len() {
            match self.ctrl[i] {
                EMPTY => {}
                TOMB => tombs += 1,
                c => {
                    len += 1;
                    let r = self.refs[i];
                    assert!(seen.insert(r), "two slots share a record");
                    assert!(live.contains(&r), "slot points at a dead record");
                    let h = hash_bytes(self.rec(r).0);
                    assert_eq!(c, (h & 0x7F) as u8);
                    let m = self.home(h);
                    assert!(m <= i);
                    assert!(self.ctrl[m..i].iter().all(|&x| x != EMPTY));
                }
            }
        }
        assert_eq!(seen.len(), live.len(), "unreferenced live record");
        assert_eq!((len, tombs), (self.len, self.tombs));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use std::collections::HashMap;

    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            (0u32..400).prop_map(|i| format!("k{i}").into_bytes()),
            (0u32..30).prop_map(|i| format!("a-much-longer-field-name-{i}").into_bytes()),
            proptest::collection::vec(any::<u8>(), 0..3),
        ]
    }

    fn val() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => proptest::collection::vec(any::<u8>(), 0..8),
            2 => proptest::collection::vec(any::<u8>(), 0..300),
            1 => (0usize..2).prop_map(|k| vec![b'B'; [BIG + 1, 40_000][k]]),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn model(ops in proptest::collection::vec((0u8..5, key(), val()), 1..1500), seed in any::<u64>()) {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut t = ArenaMap::new();
            let mut m: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
            for (n, (op, k, v)) in ops.into_iter().enumerate() {
                if op < 3 {
                    prop_assert_eq!(t.insert(&k, &v), m.insert(k, v).is_none());
                } else {
                    prop_assert_eq!(t.remove(&k), m.remove(&k));
                }
                prop_assert_eq!(t.len(), m.len());
                if n % 97 == 0 {
                    t.check();
                }
            }
            t.check();
            for (k, v) in &m {
                prop_assert_eq!(t.get(k), Some(&v[..]));
            }
            let got: HashMap<Vec<u8>, Vec<u8>> = t.iter().map(|(a, b)| (a.to_vec(), b.to_vec())).collect();
            prop_assert_eq!(&got, &m);
            let mut c = 0;
            let mut seen = HashMap::new();
            loop {
                c = t.scan(c, 5, |k, v| { assert!(seen.insert(k.to_vec(), v.to_vec()).is_none()); });
                if c == 0 { break; }
            }
            prop_assert_eq!(&seen, &m);
            if let Some((f, v)) = t.random(&mut rng) {
                prop_assert_eq!(m.get(f).map(|x| &x[..]), Some(v));
            }
            let keys: Vec<Vec<u8>> = m.keys().cloned().collect();
            for k in keys {
                prop_assert_eq!(t.remove(&k), m.remove(&k));
            }
            t.check();
            prop_assert_eq!(t.heap_bytes(), 0);
        }
    }

    #[test]
    fn churn_keeps_dead_space_bounded() {
        let mut t = ArenaMap::new();
        for i in 0..50_000u32 {
            t.insert(
                format!("field:{i}").as_bytes(),
                format!("value:{i}").as_bytes(),
            );
        }
        let full = t.heap_bytes();
        for round in 0..4u32 {
            for i in 0..50_000u32 {
                if i % 4 != round {
                    t.insert(
                        format!("field:{i}").as_bytes(),
                        format!("v{round}:{i}:{}", "x".repeat(round as usize)).as_bytes(),
                    );
                }
            }
            t.check();
        }
        for i in 0..45_000u32 {
            t.remove(format!("field:{i}").as_bytes());
        }
        t.check();
        assert!(t.heap_bytes() < full / 2, "{} vs {}", t.heap_bytes(), full);
    }
}
