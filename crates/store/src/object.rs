//! Compact objects: the 32-byte keyspace entry.
//!
//! ```text
//! Entry (32 bytes, align 8) = key cell (16) | value cell (16)
//!
//! key cell   k[0]      code: bit7 = has TTL, bits0-6 = kind+length
//!                      0..=15 raw inline (len 0..15)
//!                      16..=36 6-bit packed inline (len 0..20)
//!                      37..=54 7-bit packed inline (len 0..17)
//!                      55 heap
//!            inline:   k[1..1+plen] payload, k[1+plen..16] free ("key tail")
//!            heap:     k[1..8] TTL (56-bit absolute ms) when bit7, k[8..16] ptr
//!
//! value cell v[0]      code: bit7 = "raw" (modified in place, OBJECT ENCODING raw)
//!                      0..=14 raw inline (len 0..14)
//!                      15..=33 6-bit packed (len 0..18)
//!                      34..=50 7-bit packed (len 0..16)
//!                      51 int (i64 at v[8..16])
//!                      52 heap string, 53 6-bit packed heap string,
//!                      54 7-bit packed heap string: length in chars
//!                      at v[2] when 1..=255, pointer at v[8..16] to a
//!                      header-less block (heap::HeapStr) of the bytes,
//!                      packed or not; v[2] = 0: a plain block that starts
//!                      with its u32 LE length (empty or 256+ bytes)
//!                      64 list, 65 set, 66 zset, 67 hash: pointer at
//!                      v[8..16] to a Box of the collections crate's value
//!                      enum (ListValue, SetValue, ZsetValue, HashValue)
//!                      68 small hash: pointer at v[8..16] to the hash's
//!                      PackBlock itself (listpack header + entries in one
//!                      exact-size block, no enum box; HashValue::Pack)
//!                      69 stream: pointer at v[8..16] to a Box<Stream>
//!                      (collections::stream; may be empty, as in Redis)
//!                      70..=117 split string of 17 + (code - 70) chars:
//!                      its first 8 bytes at v[2..10], a 48-bit pointer
//!                      at v[10..16] to a header-less block of the rest
//!            v[1]      eviction byte (LRU clock / LFU counter)
//!            inline:   v[2..2+plen] payload, the rest free ("value tail")
//!            heap str: v[3..8] free ("value tail")
//!            int/coll: v[2..8] free ("value tail")
//!            split:    no free byte
//! ```
//!
//! Heap strings: a string of up to 255 bytes that does not fit inline gets
//! a block of exactly its bytes; its length is one byte of the cell, so no
//! header pushes the block into the next allocator size class, and the cell
//! keeps 5 free tail bytes: a TTL always fits next to a heap string, whatever
//! the key. A string of 256 bytes or more (or an empty one mid-edit) keeps
//! its u32 length at the start of its block instead (at most 1.6% of it);
//! edits resize the block in place and only move the bytes when crossing
//! the line. A string of at most [`PACK_MAX`] chars
//! that is created whole (SET and friends, not edited in place) is stored
//! 6-bit or 7-bit packed when its alphabet allows and the packed block is
//! in a smaller size class than the plain one (40 digits: 30 bytes, 32-byte
//! class, instead of 48). In-place edits (APPEND, SETRANGE, SETBIT...) turn
//! a packed value into the plain form first (as Redis turns embstr into
//! raw), so the edited bytes are always a plain block.
//!
//! Split strings: a string of 17..=24, 33..=40 or 49..=56 bytes created
//! whole keeps its first 8 bytes in the cell and the rest in a block one
//! size class smaller than the plain block (40 bytes: a 32-byte block, not
//! 48; [`split_gain`]). On a tie with a packed form split wins (it reads
//! back with two copies, no decoding). A split cell has no tail bytes, so
//! when a TTL is set and the key's own tail has fewer than 5 free bytes,
//! the value takes its unsplit form first (packed or plain, with 5 tail
//! bytes): a TTL still never moves a key to the heap because of a heap
//! string, and costs at most the class the split saved. Clearing the TTL
//! splits it again. The pointer takes 48 bits (user-space addresses on
//! x86_64 and aarch64 Linux); a block whose address does not fit makes
//! the cell a plain heap string instead.
//!
//! TTL: a key without TTL pays nothing. With a TTL and an inline key, the
//! expiry is stored as 5 bytes (ms since [`EXPIRE_EPOCH_MS`], 2024-01-01, good
//! until 2058) scattered over the free bytes of the key tail then the value
//! tail. When they are fewer than 5 (or the time is out of that range), the key
//! moves to a heap block and the TTL takes 7 bytes of its cell. So
//! `key:12345678`/`value:12345678` (6-bit packed: 9 + 11 bytes) carry a TTL
//! at no cost at all. A heap string, int or collection leaves 5 or 6 tail
//! bytes, so its key keeps a TTL inline whatever its form; only an inline
//! value that fills its cell with a key that fills its own moves the key.
//!
//! Inline packing is canonical (densest of 6-bit, 7-bit, raw; raw on ties),
//! so a lookup packs the searched key once and compares cell bytes.
//! Invariant: value methods never read the value tail; only the entry does.

use crate::heap::{self, size_class, HeapBytes, HeapStr};
use crate::pack::{max_chars, pack6, pack7, packed_len, unpack6, unpack7};

/// Base of the 5-byte inline expiry encoding: 2024-01-01T00:00:00Z.
pub const EXPIRE_EPOCH_MS: u64 = 1_704_067_200_000;
const SHORT_TTL: usize = 5;
const SHORT_RANGE: u64 = 1 << 40;
/// Largest expiry time representable (ms); larger ones are clamped.
pub const MAX_EXPIRE_MS: u64 = (1 << 56) - 1;

const KEY_CAP: usize = 15;
const VAL_CAP: usize = 14;

const K_P6: u8 = 16;
const K_P7: u8 = 37;
const K_HEAP: u8 = 55;
const K_TTL: u8 = 0x80;

const V_P6: u8 = 15;
const V_P7: u8 = 34;
const V_INT: u8 = 51;
const V_HEAP: u8 = 52;
const V_HEAP6: u8 = 53;
const V_HEAP7: u8 = 54;
/// Last string code.
const V_STR_LAST: u8 = V_HEAP7;
const V_LIST: u8 = 64;
const V_SET: u8 = 65;
const V_ZSET: u8 = 66;
const V_HASH: u8 = 67;
const V_HASH_PACK: u8 = 68;
const V_STREAM: u8 = 69;
const V_RAWFLAG: u8 = 0x80;
/// Split heap strings: code `V_SPLIT + (n - SPLIT_MIN)` for a string of
/// `n` chars (SPLIT_MIN..=PACK_MAX). The first [`SPLIT_HEAD`] bytes are in
/// the cell (v[2..10]), the rest in a header-less block whose address
/// takes 48 bits (v[10..16]). Only lengths where this saves a size class
/// ([`split_gain`]) are stored so. The codes are below 128, so the raw flag
/// stays free (an edited string is never split).
const V_SPLIT: u8 = 70;
const SPLIT_MIN: usize = 17;
const SPLIT_HEAD: usize = 8;
const V_SPLIT_LAST: u8 = V_SPLIT + (PACK_MAX - SPLIT_MIN) as u8;
const _: () = assert!(V_SPLIT > V_STREAM && (V_SPLIT_LAST as usize) < V_RAWFLAG as usize);

/// Longest heap string (in chars) that is stored packed. Reading a packed
/// string decodes it into a stack buffer of this size.
pub const PACK_MAX: usize = 64;
/// Decoding buffer of [`Bytes::Inline`]: packed heap strings, inline cells,
/// formatted integers.
const BUF: usize = PACK_MAX;

use collections::stream::Stream;
use collections::{HashValue, ListValue, PackHash, SetValue, ZsetValue};
use std::mem::ManuallyDrop;

pub mod defrag;

/// The value cell's length byte v[2] of a heap string of `n` chars: `n`
/// for 1..=255, else 0 (the plain block then holds the length, see
/// [`heap::str_hdr`]).
#[inline]
fn len_byte(n: usize) -> u8 {
    if heap::str_hdr(n) == 0 {
        n as u8
    } else {
        0
    }
}

/// Is `c` (without the raw flag) the code of a string value?
#[inline]
fn is_str_code(c: u8) -> bool {
    c <= V_STR_LAST || (V_SPLIT..=V_SPLIT_LAST).contains(&c)
}

/// Does storing a string of `n` chars split (first [`SPLIT_HEAD`] bytes in
/// the cell, the rest in a block) put its block in a smaller size class
/// than the plain block? True for 17..=24, 33..=40 and 49..=56 chars
/// (32 -> 16, 48 -> 32 and 64 -> 48 bytes).
#[inline]
const fn split_gain(n: usize) -> bool {
    n >= SPLIT_MIN && n <= PACK_MAX && size_class(n - SPLIT_HEAD) < heap::str_block_size(n)
}

/// Heap bytes of a boxed collection: the box's block plus what the value
/// itself has allocated.
fn boxed_size<T>(heap: usize) -> usize {
    crate::heap::size_class(std::mem::size_of::<T>()) + heap
}

/// Redis data types (TYPE command names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    String,
    List,
    Set,
    ZSet,
    Hash,
    Stream,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::List => "list",
            Kind::Set => "set",
            Kind::ZSet => "zset",
            Kind::Hash => "hash",
            Kind::Stream => "stream",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Enc {
    Raw,
    P6,
    P7,
}

/// Chooses the canonical inline encoding of `s` for a cell of `cap` payload
/// bytes and writes it to `out`; returns (encoding, packed length).
fn encode_inline(s: &[u8], cap: usize, out: &mut [u8]) -> Option<(Enc, usize)> {
    let n = s.len();
    if n >= 4 && n <= max_chars(cap, 6) && pack6(s, out) {
        return Some((Enc::P6, packed_len(n, 6)));
    }
    if n >= 8 && n <= max_chars(cap, 7) && pack7(s, out) {
        return Some((Enc::P7, packed_len(n, 7)));
    }
    if n <= cap {
        out[..n].copy_from_slice(s);
        return Some((Enc::Raw, n));
    }
    None
}

fn decode_inline(enc: Enc, n: usize, payload: &[u8], out: &mut [u8]) {
    match enc {
        Enc::Raw => out[..n].copy_from_slice(&payload[..n]),
        Enc::P6 => unpack6(payload, n, out),
        Enc::P7 => unpack7(payload, n, out),
    }
}

/// String bytes read out of a compact object: borrowed from a heap block or
/// decoded into a small buffer.
pub enum Bytes<'a> {
    Borrowed(&'a [u8]),
    Inline([u8; BUF], u8),
}

impl std::ops::Deref for Bytes<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Borrowed(b) => b,
            Bytes::Inline(buf, n) => &buf[..*n as usize],
        }
    }
}

impl AsRef<[u8]> for Bytes<'_> {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for Bytes<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self))
    }
}

#[inline]
fn read_ptr(b: &[u8; 16]) -> *mut u8 {
    let a = usize::from_le_bytes(b[8..16].try_into().unwrap());
    std::ptr::with_exposed_provenance_mut(a)
}

#[inline]
fn write_ptr(b: &mut [u8; 16], p: *mut u8) {
    b[8..16].copy_from_slice(&p.expose_provenance().to_le_bytes());
}

/// The 48-bit block address of a split string cell (v[10..16]).
#[inline]
fn read_ptr48(b: &[u8; 16]) -> *mut u8 {
    let mut a = [0u8; 8];
    a[..6].copy_from_slice(&b[10..16]);
    std::ptr::with_exposed_provenance_mut(u64::from_le_bytes(a) as usize)
}

/// Does `p` fit the 48 bits of a split cell? (User-space addresses do on
/// x86_64 and aarch64 Linux unless asked for above 2^47/2^48.)
#[inline]
fn fits48(p: *mut u8) -> bool {
    (p.addr() as u64) >> 48 == 0
}

#[inline]
fn write_ptr48(b: &mut [u8; 16], p: *mut u8) {
    debug_assert!(fits48(p));
    b[10..16].copy_from_slice(&(p.expose_provenance() as u64).to_le_bytes()[..6]);
}

/// Formats an i64 into a small buffer.
pub fn fmt_i64(v: i64, buf: &mut [u8]) -> usize {
    let mut tmp = [0u8; 20];
    let mut u = v.unsigned_abs();
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (u % 10) as u8;
        u /= 10;
        if u == 0 {
            break;
        }
    }
    let mut n = 0;
    if v < 0 {
        buf[0] = b'-';
        n = 1;
    }
    let digits = &tmp[i..];
    buf[n..n + digits.len()].copy_from_slice(digits);
    n + digits.len()
}

/// Parses an integer exactly like Redis's `string2ll` (no '+', no leading
/// zeros, no spaces, at most 20 chars).
pub fn parse_i64_strict(b: &[u8]) -> Option<i64> {
    if b.is_empty() || b.len() > 20 {
        return None;
    }
    if b == b"0" {
        return Some(0);
    }
    let (neg, d) = if b[0] == b'-' {
        (true, &b[1..])
    } else {
        (false, b)
    };
    if d.is_empty() || !(b'1'..=b'9').contains(&d[0]) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in d {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
    }
    if neg {
        if v > 1u64 << 63 {
            None
        } else {
            Some((v as i64).wrapping_neg())
        }
    } else {
        i64::try_from(v).ok()
    }
}

// ---------------------------------------------------------------------------
// CompactValue
// ---------------------------------------------------------------------------

/// A 16-byte value: inline string, integer, or pointer to a heap block.
#[repr(C, align(8))]
pub struct CompactValue {
    b: [u8; 16],
}

impl CompactValue {
    #[inline]
    fn code(&self) -> u8 {
        self.b[0] & !V_RAWFLAG
    }

    /// A string value in its most compact form (int, inline, heap).
    pub fn from_bytes(s: &[u8]) -> CompactValue {
        if let Some(i) = parse_i64_strict(s) {
            return CompactValue::from_int(i);
        }
        Self::from_bytes_no_int(s)
    }

    /// A string value that is never int-encoded (INCRBYFLOAT results,
    /// Redis's `createStringObject`).
    pub fn from_bytes_no_int(s: &[u8]) -> CompactValue {
        let mut b = [0u8; 16];
        if let Some((enc, _)) = encode_inline(s, VAL_CAP, &mut b[2..]) {
            b[0] = match enc {
                Enc::Raw => s.len() as u8,
                Enc::P6 => V_P6 + s.len() as u8,
                Enc::P7 => V_P7 + s.len() as u8,
            };
            return CompactValue { b };
        }
        if let Some(v) = Self::compact_heap(s) {
            return v;
        }
        Self::plain_heap(HeapStr::from_slice(s), 0)
    }

    /// `s` (too long for the cell, not edited in place) in the form with
    /// the smallest block, if that is not the plain block: split
    /// ([`split_gain`]) or packed; on a tie split wins, as it reads back
    /// without decoding.
    fn compact_heap(s: &[u8]) -> Option<CompactValue> {
        let n = s.len();
        if n > PACK_MAX {
            return None;
        }
        let plain = heap::str_block_size(n);
        if !split_gain(n) {
            return Self::packed_heap(s, plain);
        }
        if let Some(v) = Self::packed_heap(s, size_class(n - SPLIT_HEAD)) {
            return Some(v);
        }
        Self::split_heap(s).or_else(|| Self::packed_heap(s, plain))
    }

    /// `s` (a [`split_gain`] length) split: None if its block's address
    /// does not fit the cell's 48 bits.
    fn split_heap(s: &[u8]) -> Option<CompactValue> {
        let n = s.len();
        debug_assert!(split_gain(n));
        let (p, _) = HeapStr::from_slice(&s[SPLIT_HEAD..]).into_raw();
        if !fits48(p) {
            // SAFETY: `p` came from into_raw just above with this length.
            drop(unsafe { HeapStr::from_raw(p, n - SPLIT_HEAD) });
            return None;
        }
        let mut b = [0u8; 16];
        b[0] = V_SPLIT + (n - SPLIT_MIN) as u8;
        b[2..2 + SPLIT_HEAD].copy_from_slice(&s[..SPLIT_HEAD]);
        write_ptr48(&mut b, p);
        Some(CompactValue { b })
    }

    /// `s` (too long for the cell) in its smallest unsplit form: packed
    /// or plain (a TTL needs the tail bytes a split cell uses).
    fn unsplit_heap(s: &[u8]) -> CompactValue {
        Self::packed_heap(s, heap::str_block_size(s.len()))
            .unwrap_or_else(|| Self::plain_heap(HeapStr::from_slice(s), 0))
    }

    /// A heap string cell over a plain block.
    fn plain_heap(h: HeapStr, flag: u8) -> CompactValue {
        let mut b = [0u8; 16];
        b[0] = V_HEAP | flag;
        let (p, n) = h.into_raw();
        b[2] = len_byte(n);
        write_ptr(&mut b, p);
        CompactValue { b }
    }

    /// `s` (too long for the cell) as a packed heap string, if it has at
    /// most [`PACK_MAX`] chars, its alphabet allows a packing, and the packed
    /// block is in a smaller size class than `limit` (the plain block's, or
    /// the split block's).
    fn packed_heap(s: &[u8], limit: usize) -> Option<CompactValue> {
        let n = s.len();
        if n > PACK_MAX {
            return None;
        }
        let plain = limit;
        let mut buf = [0u8; PACK_MAX];
        let (code, plen) = if size_class(packed_len(n, 6)) < plain && pack6(s, &mut buf) {
            (V_HEAP6, packed_len(n, 6))
        } else if size_class(packed_len(n, 7)) < plain && pack7(s, &mut buf) {
            (V_HEAP7, packed_len(n, 7))
        } else {
            return None;
        };
        let mut b = [0u8; 16];
        b[0] = code;
        b[2] = len_byte(n);
        debug_assert!(b[2] != 0 && heap::str_hdr(plen) == 0);
        let (p, _) = HeapStr::from_slice(&buf[..plen]).into_raw();
        write_ptr(&mut b, p);
        Some(CompactValue { b })
    }

    pub fn from_int(i: i64) -> CompactValue {
        let mut b = [0u8; 16];
        b[0] = V_INT;
        b[8..16].copy_from_slice(&i.to_le_bytes());
        CompactValue { b }
    }

    /// Wraps a heap string; short strings are moved inline. `raw` marks a
    /// string modified in place (OBJECT ENCODING reports "raw"); such a
    /// string stays a plain block, others are packed when that saves memory.
    pub fn from_heap(h: HeapStr, raw: bool) -> CompactValue {
        let flag = if raw { V_RAWFLAG } else { 0 };
        if h.len() <= max_chars(VAL_CAP, 6) {
            let mut v = Self::from_bytes_no_int_inline(h.as_slice());
            if let Some(v) = v.as_mut() {
                v.b[0] |= flag;
                return std::mem::replace(v, CompactValue::from_int(0));
            }
        }
        if !raw {
            if let Some(v) = Self::compact_heap(h.as_slice()) {
                return v;
            }
        }
        Self::plain_heap(h, flag)
    }

    fn from_bytes_no_int_inline(s: &[u8]) -> Option<CompactValue> {
        let mut b = [0u8; 16];
        let (enc, _) = encode_inline(s, VAL_CAP, &mut b[2..])?;
        b[0] = match enc {
            Enc::Raw => s.len() as u8,
            Enc::P6 => V_P6 + s.len() as u8,
            Enc::P7 => V_P7 + s.len() as u8,
        };
        Some(CompactValue { b })
    }

    fn from_box<T>(code: u8, v: T) -> CompactValue {
        let mut b = [0u8; 16];
        b[0] = code;
        write_ptr(&mut b, Box::into_raw(Box::new(v)).cast());
        CompactValue { b }
    }

    pub fn from_list(v: ListValue) -> CompactValue {
        Self::from_box(V_LIST, v)
    }

    pub fn from_set(v: SetValue) -> CompactValue {
        Self::from_box(V_SET, v)
    }

    pub fn from_zset(v: ZsetValue) -> CompactValue {
        Self::from_box(V_ZSET, v)
    }

    /// A stream value (boxed; an empty stream is a valid value).
    pub fn from_stream(v: Stream) -> CompactValue {
        Self::from_box(V_STREAM, v)
    }

    /// A hash value: a small listpack hash as its block pointed to by
    /// the cell (code 68), the other forms boxed (code 67).
    pub fn from_hash(v: HashValue) -> CompactValue {
        match v.normalized() {
            HashValue::Pack(p) => {
                let mut b = [0u8; 16];
                b[0] = V_HASH_PACK;
                write_ptr(&mut b, p.into_raw());
                CompactValue { b }
            }
            v => Self::from_box(V_HASH, v),
        }
    }

    /// A non-owning view of the cell's small-hash block (code 68).
    #[inline]
    fn pack_hash(&self) -> Option<ManuallyDrop<HashValue>> {
        if self.code() == V_HASH_PACK {
            // SAFETY: code-68 cells own a block given away by
            // PackHash::into_raw. The copy is never dropped (ManuallyDrop)
            // and is only read while `self` is borrowed, so the block stays
            // alive and unchanged.
            Some(ManuallyDrop::new(HashValue::Pack(unsafe {
                PackHash::from_raw(read_ptr(&self.b))
            })))
        } else {
            None
        }
    }

    /// The boxed collection of type `T` when the code is `code`.
    #[inline]
    fn boxed<T>(&self, code: u8) -> Option<&T> {
        if self.code() == code {
            // SAFETY: cells with a collection code own a live Box<T> of the
            // type that code names (from_box); the borrow is tied to &self.
            Some(unsafe { &*read_ptr(&self.b).cast::<T>() })
        } else {
            None
        }
    }

    #[inline]
    fn boxed_mut<T>(&mut self, code: u8) -> Option<&mut T> {
        if self.code() == code {
            // SAFETY: as in `boxed`, and &mut self makes the access unique.
            Some(unsafe { &mut *read_ptr(&self.b).cast::<T>() })
        } else {
            None
        }
    }

    pub fn as_list(&self) -> Option<&ListValue> {
        self.boxed(V_LIST)
    }

    pub fn as_set(&self) -> Option<&SetValue> {
        self.boxed(V_SET)
    }

    pub fn as_zset(&self) -> Option<&ZsetValue> {
        self.boxed(V_ZSET)
    }

    /// Read access to a hash, whatever its cell form.
    #[inline]
    pub fn as_hash(&self) -> Option<HashRef<'_>> {
        if let Some(h) = self.boxed::<HashValue>(V_HASH) {
            return Some(HashRef::Boxed(h));
        }
        self.pack_hash()
            .map(|h| HashRef::Pack(h, std::marker::PhantomData))
    }

    pub fn as_list_mut(&mut self) -> Option<&mut ListValue> {
        self.boxed_mut(V_LIST)
    }

    pub fn as_set_mut(&mut self) -> Option<&mut SetValue> {
        self.boxed_mut(V_SET)
    }

    pub fn as_zset_mut(&mut self) -> Option<&mut ZsetValue> {
        self.boxed_mut(V_ZSET)
    }

    pub fn as_stream(&self) -> Option<&Stream> {
        self.boxed(V_STREAM)
    }

    pub fn as_stream_mut(&mut self) -> Option<&mut Stream> {
        self.boxed_mut(V_STREAM)
    }

    /// Write access to a hash; the cell is brought up to date (code and
    /// pointer) when the guard is dropped.
    #[inline]
    pub fn as_hash_mut(&mut self) -> Option<HashMut<'_>> {
        match self.code() {
            V_HASH => Some(HashMut {
                cell: self,
                moved: None,
            }),
            V_HASH_PACK => {
                // SAFETY: the cell owns the block (code 68); ownership moves
                // to the guard, and the cell is marked an empty inline
                // string until the guard puts a value back, so a leaked
                // guard leaks the block but never frees it twice.
                let h = HashValue::Pack(unsafe { PackHash::from_raw(read_ptr(&self.b)) });
                self.b[0] = 0;
                Some(HashMut {
                    cell: self,
                    moved: Some(h),
                })
            }
            _ => None,
        }
    }

    pub fn kind(&self) -> Kind {
        match self.code() {
            0..=V_STR_LAST | V_SPLIT..=V_SPLIT_LAST => Kind::String,
            V_LIST => Kind::List,
            V_SET => Kind::Set,
            V_ZSET => Kind::ZSet,
            V_HASH | V_HASH_PACK => Kind::Hash,
            V_STREAM => Kind::Stream,
            c => panic!("unknown value code {c}"),
        }
    }

    pub fn is_string(&self) -> bool {
        is_str_code(self.code())
    }

    /// Inline payload length in bytes (0 for non-inline).
    #[inline]
    fn inline_enc(&self) -> Option<(Enc, usize)> {
        let c = self.code();
        if c < V_P6 {
            Some((Enc::Raw, c as usize))
        } else if c < V_P7 {
            Some((Enc::P6, (c - V_P6) as usize))
        } else if c < V_INT {
            Some((Enc::P7, (c - V_P7) as usize))
        } else {
            None
        }
    }

    /// Index of the first free byte (start of the value tail) and its end.
    #[inline]
    fn tail(&self) -> (usize, usize) {
        match self.inline_enc() {
            Some((Enc::Raw, n)) => (2 + n, 16),
            Some((Enc::P6, n)) => (2 + packed_len(n, 6), 16),
            Some((Enc::P7, n)) => (2 + packed_len(n, 7), 16),
            None if self.is_heap_str() => (3, 8),
            None if self.is_split() => (16, 16),
            None => (2, 8),
        }
    }

    #[inline]
    fn is_heap_str(&self) -> bool {
        (V_HEAP..=V_HEAP7).contains(&self.code())
    }

    /// A split string (see [`V_SPLIT`]): no value tail.
    #[inline]
    fn is_split(&self) -> bool {
        (V_SPLIT..=V_SPLIT_LAST).contains(&self.code())
    }

    /// Length in chars of a split string.
    #[inline]
    fn split_len(&self) -> usize {
        (self.code() - V_SPLIT) as usize + SPLIT_MIN
    }

    /// The block of a split string: its bytes after the first
    /// [`SPLIT_HEAD`].
    #[inline]
    fn split_block(&self) -> &[u8] {
        debug_assert!(self.is_split());
        // SAFETY: split cells own a live header-less block of
        // split_len() - SPLIT_HEAD bytes at their 48-bit address; the
        // slice borrows &self.
        unsafe { HeapStr::slice_from_raw(read_ptr48(&self.b), self.split_len() - SPLIT_HEAD) }
    }

    /// Stores `p` as the block of this split cell (code and head bytes
    /// set, no block owned yet). An address that does not fit 48 bits
    /// turns the cell into a plain heap string of the same bytes instead.
    ///
    /// # Safety
    /// `p` is a live block of `split_len() - SPLIT_HEAD` bytes (from
    /// `HeapStr::into_raw` or a move of one) that nothing else owns.
    unsafe fn set_split_block(&mut self, p: *mut u8) {
        if fits48(p) {
            write_ptr48(&mut self.b, p);
            return;
        }
        let n = self.split_len();
        // SAFETY: guaranteed by the caller.
        let rest = unsafe { HeapStr::from_raw(p, n - SPLIT_HEAD) };
        let mut s = [0u8; PACK_MAX];
        s[..SPLIT_HEAD].copy_from_slice(&self.b[2..2 + SPLIT_HEAD]);
        s[SPLIT_HEAD..n].copy_from_slice(rest.as_slice());
        drop(rest);
        let mut v = Self::plain_heap(HeapStr::from_slice(&s[..n]), 0);
        v.b[1] = self.b[1];
        // The old cell owns no block any more: replace it without Drop.
        std::mem::forget(std::mem::replace(self, v));
    }

    /// Length in chars of a heap string (from the cell).
    #[inline]
    fn heap_len(&self) -> usize {
        match self.b[2] {
            // SAFETY: a heap string cell with length byte 0 owns a live
            // plain block with a length header (len 0 or >= STR_LONG).
            0 => unsafe { HeapStr::len_from_raw(read_ptr(&self.b)) },
            n => n as usize,
        }
    }

    /// Bytes in the block of a heap string (packed length for packed ones).
    #[inline]
    fn block_len(&self) -> usize {
        let n = self.heap_len();
        match self.code() {
            V_HEAP6 => packed_len(n, 6),
            V_HEAP7 => packed_len(n, 7),
            _ => n,
        }
    }

    /// The block of a heap string, if this is one.
    #[inline]
    fn heap_block(&self) -> Option<&[u8]> {
        if self.is_heap_str() {
            // SAFETY: heap string cells own a live block of block_len()
            // initialized bytes; the slice borrows &self.
            Some(unsafe { HeapStr::slice_from_raw(read_ptr(&self.b), self.block_len()) })
        } else {
            None
        }
    }

    /// Bytes of a plain (unpacked) heap string, if this is one.
    #[inline]
    fn heap_slice(&self) -> Option<&[u8]> {
        if self.code() == V_HEAP {
            self.heap_block()
        } else {
            None
        }
    }

    /// The string bytes, or None for non-string types.
    pub fn string(&self) -> Option<Bytes<'_>> {
        if let Some((enc, n)) = self.inline_enc() {
            let mut buf = [0u8; BUF];
            decode_inline(enc, n, &self.b[2..], &mut buf);
            return Some(Bytes::Inline(buf, n as u8));
        }
        match self.code() {
            V_INT => {
                let mut buf = [0u8; BUF];
                let n = fmt_i64(self.int_unchecked(), &mut buf);
                Some(Bytes::Inline(buf, n as u8))
            }
            V_HEAP => Some(Bytes::Borrowed(self.heap_slice().unwrap())),
            V_SPLIT..=V_SPLIT_LAST => {
                let n = self.split_len();
                let mut buf = [0u8; BUF];
                buf[..SPLIT_HEAD].copy_from_slice(&self.b[2..2 + SPLIT_HEAD]);
                buf[SPLIT_HEAD..n].copy_from_slice(self.split_block());
                Some(Bytes::Inline(buf, n as u8))
            }
            c @ (V_HEAP6 | V_HEAP7) => {
                let n = self.heap_len();
                let mut buf = [0u8; BUF];
                let enc = if c == V_HEAP6 { Enc::P6 } else { Enc::P7 };
                decode_inline(enc, n, self.heap_block().unwrap(), &mut buf);
                Some(Bytes::Inline(buf, n as u8))
            }
            _ => None,
        }
    }

    #[inline]
    fn int_unchecked(&self) -> i64 {
        i64::from_le_bytes(self.b[8..16].try_into().unwrap())
    }

    /// The value as an integer if it is a string holding one (Redis rules).
    pub fn as_int(&self) -> Option<i64> {
        match self.code() {
            V_INT => Some(self.int_unchecked()),
            c if is_str_code(c) => parse_i64_strict(&self.string()?),
            _ => None,
        }
    }

    /// True if stored with the integer encoding.
    pub fn is_int(&self) -> bool {
        self.code() == V_INT
    }

    /// Is this one of Redis's shared integers (OBJECT REFCOUNT answers
    /// INT_MAX)? An int-encoded value in 0..10000 is, unless it was made
    /// an integer object of its own ([`CompactValue::unshare_int`]). In an
    /// int cell the code byte's raw flag (meaningless for an integer)
    /// marks "of its own".
    pub fn is_shared_int(&self) -> bool {
        self.code() == V_INT
            && self.b[0] & V_RAWFLAG == 0
            && (0..10_000).contains(&self.int_unchecked())
    }

    /// Makes an int-encoded value an integer object of its own, as Redis's
    /// COPY (`dupStringObject`) and its integers created under an LRU or
    /// LFU `maxmemory-policy` are: OBJECT REFCOUNT then answers 1. No
    /// effect on any other value; nothing else reads the flag.
    pub fn unshare_int(&mut self) {
        if self.code() == V_INT {
            self.b[0] |= V_RAWFLAG;
        }
    }

    /// Length of the string (STRLEN).
    pub fn str_len(&self) -> usize {
        if let Some((_, n)) = self.inline_enc() {
            return n;
        }
        match self.code() {
            V_INT => {
                let mut buf = [0u8; 24];
                fmt_i64(self.int_unchecked(), &mut buf[..])
            }
            V_HEAP..=V_HEAP7 => self.heap_len(),
            V_SPLIT..=V_SPLIT_LAST => self.split_len(),
            _ => 0,
        }
    }

    /// OBJECT ENCODING name.
    pub fn encoding_name(&self) -> &'static str {
        match self.code() {
            V_INT => "int",
            c if is_str_code(c) => {
                if self.b[0] & V_RAWFLAG != 0 || self.str_len() > 44 {
                    "raw"
                } else {
                    "embstr"
                }
            }
            V_LIST => self.as_list().unwrap().encoding_name(),
            V_SET => self.as_set().unwrap().encoding_name(),
            V_ZSET => self.as_zset().unwrap().encoding_name(),
            V_HASH => self.as_hash().unwrap().encoding_name(),
            V_HASH_PACK => "listpack",
            V_STREAM => "stream",
            _ => "unknown",
        }
    }

    /// Petrel's own encoding name (DEBUG OBJECT).
    pub fn internal_encoding(&self) -> &'static str {
        match self.code() {
            V_INT => "int",
            V_HEAP => "heap",
            V_HEAP6 => "heap-6bit",
            V_HEAP7 => "heap-7bit",
            V_SPLIT..=V_SPLIT_LAST => "heap-split",
            c if c < V_P6 => "inline-raw",
            c if c < V_P7 => "inline-6bit",
            c if c < V_INT => "inline-7bit",
            _ => self.encoding_name(),
        }
    }

    /// Heap bytes owned by this value (allocator size classes).
    pub fn heap_size(&self) -> usize {
        match self.code() {
            V_HEAP..=V_HEAP7 => heap::str_block_size(self.block_len()),
            V_SPLIT..=V_SPLIT_LAST => heap::str_block_size(self.split_len() - SPLIT_HEAD),
            V_LIST => boxed_size::<ListValue>(self.as_list().unwrap().heap_bytes()),
            V_SET => boxed_size::<SetValue>(self.as_set().unwrap().heap_bytes()),
            V_ZSET => boxed_size::<ZsetValue>(self.as_zset().unwrap().heap_bytes()),
            V_HASH => boxed_size::<HashValue>(self.as_hash().unwrap().heap_bytes()),
            V_HASH_PACK => self.pack_hash().unwrap().heap_bytes(),
            V_STREAM => boxed_size::<Stream>(self.as_stream().unwrap().heap_bytes()),
            _ => 0,
        }
    }

    /// Number of elements of a collection (0 for strings).
    pub fn collection_len(&self) -> usize {
        match self.code() {
            V_LIST => self.as_list().unwrap().len(),
            V_SET => self.as_set().unwrap().len(),
            V_ZSET => self.as_zset().unwrap().len(),
            V_HASH | V_HASH_PACK => self.as_hash().unwrap().len(),
            V_STREAM => self.as_stream().unwrap().len() as usize,
            _ => 0,
        }
    }

    /// Eviction byte (LRU clock or LFU counter).
    #[inline]
    pub fn evict_byte(&self) -> u8 {
        self.b[1]
    }

    #[inline]
    pub fn set_evict_byte(&mut self, x: u8) {
        self.b[1] = x;
    }

    /// Turns a string value into an owned plain heap block (for in-place
    /// edits); packed strings are unpacked.
    pub fn into_heap_string(self) -> Option<HeapStr> {
        if self.code() == V_HEAP {
            let (p, n) = (read_ptr(&self.b), self.heap_len());
            std::mem::forget(self);
            // SAFETY: the pointer and length came from HeapStr::into_raw
            // (plain_heap) and we were the block's owner.
            return Some(unsafe { HeapStr::from_raw(p, n) });
        }
        let s = self.string()?;
        Some(HeapStr::from_slice(&s))
    }
}

impl Drop for CompactValue {
    fn drop(&mut self) {
        let p = read_ptr(&self.b);
        // SAFETY: heap string cells own the block behind the stored pointer
        // (of block_len() bytes, as HeapStr::into_raw gave it), split cells
        // the block of their length's rest at their 48-bit address, and
        // collection cells own a Box of the type their code names.
        unsafe {
            match self.code() {
                V_HEAP..=V_HEAP7 => drop(HeapStr::from_raw(p, self.block_len())),
                V_SPLIT..=V_SPLIT_LAST => drop(HeapStr::from_raw(
                    read_ptr48(&self.b),
                    self.split_len() - SPLIT_HEAD,
                )),
                V_LIST => drop(Box::from_raw(p.cast::<ListValue>())),
                V_SET => drop(Box::from_raw(p.cast::<SetValue>())),
                V_ZSET => drop(Box::from_raw(p.cast::<ZsetValue>())),
                V_HASH => drop(Box::from_raw(p.cast::<HashValue>())),
                V_HASH_PACK => drop(PackHash::from_raw(p)),
                V_STREAM => drop(Box::from_raw(p.cast::<Stream>())),
                _ => {}
            }
        }
    }
}

impl Clone for CompactValue {
    fn clone(&self) -> Self {
        match self.code() {
            V_HEAP..=V_HEAP7 => {
                let mut b = self.b;
                let (p, _) = HeapStr::from_slice(self.heap_block().unwrap()).into_raw();
                write_ptr(&mut b, p);
                CompactValue { b }
            }
            V_SPLIT..=V_SPLIT_LAST => {
                let (p, _) = HeapStr::from_slice(self.split_block()).into_raw();
                let mut v = CompactValue { b: self.b };
                // SAFETY: `p` is a fresh block of the split length's rest,
                // owned by nobody; `v` owns no block yet.
                unsafe { v.set_split_block(p) };
                v
            }
            c if c <= V_STR_LAST => CompactValue { b: self.b },
            V_LIST => Self::from_list(self.as_list().unwrap().clone()),
            V_SET => Self::from_set(self.as_set().unwrap().clone()),
            V_ZSET => Self::from_zset(self.as_zset().unwrap().clone()),
            V_HASH | V_HASH_PACK => Self::from_hash(self.as_hash().unwrap().clone()),
            V_STREAM => Self::from_stream(self.as_stream().unwrap().clone()),
            c => unreachable!("value code {c}"),
        }
    }
}

impl std::fmt::Debug for CompactValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.string() {
            Some(s) => write!(f, "Str({:?})", s),
            None => write!(
                f,
                "{}({}, len={})",
                self.kind().name(),
                self.encoding_name(),
                self.collection_len()
            ),
        }
    }
}

// ---------------------------------------------------------------------------
// Hash views
// ---------------------------------------------------------------------------

/// Read access to a hash value: the boxed enum (code 67) or a view of the
/// small-hash block the cell points to (code 68). Derefs to [`HashValue`].
pub enum HashRef<'a> {
    Boxed(&'a HashValue),
    /// A non-owning copy of the cell's block pointer: never dropped, only
    /// read while the cell is borrowed.
    Pack(
        ManuallyDrop<HashValue>,
        std::marker::PhantomData<&'a CompactValue>,
    ),
}

impl std::ops::Deref for HashRef<'_> {
    type Target = HashValue;
    #[inline]
    fn deref(&self) -> &HashValue {
        match self {
            HashRef::Boxed(h) => h,
            HashRef::Pack(h, _) => h,
        }
    }
}

/// Write access to a hash value, derefs to `&mut HashValue`. A small hash
/// (code 68) is moved out of its cell into the guard; on drop the guard
/// stores whatever form the hash has then: a [`HashValue::Pack`] as its
/// block (code 68), the other forms boxed (code 67). A boxed hash that
/// turned `Pack` is unboxed. The eviction byte and the value tail (TTL
/// bytes) are never touched.
///
/// Invariant: outside a guard, a code-67 box never holds `HashValue::Pack`.
pub struct HashMut<'a> {
    cell: &'a mut CompactValue,
    /// The hash taken out of a code-68 cell (the cell reads as an empty
    /// string meanwhile); `None` when the guard works on the box in place.
    moved: Option<HashValue>,
}

impl std::ops::Deref for HashMut<'_> {
    type Target = HashValue;
    #[inline]
    fn deref(&self) -> &HashValue {
        match &self.moved {
            Some(h) => h,
            // SAFETY: `moved` is None only for a code-67 cell, which owns a
            // live Box<HashValue>; the guard borrows the cell uniquely.
            None => unsafe { &*read_ptr(&self.cell.b).cast::<HashValue>() },
        }
    }
}

impl std::ops::DerefMut for HashMut<'_> {
    #[inline]
    fn deref_mut(&mut self) -> &mut HashValue {
        match &mut self.moved {
            Some(h) => h,
            // SAFETY: as in `deref`; &mut self makes the access unique.
            None => unsafe { &mut *read_ptr(&self.cell.b).cast::<HashValue>() },
        }
    }
}

impl Drop for HashMut<'_> {
    fn drop(&mut self) {
        let h = match self.moved.take() {
            Some(h) => h,
            None => {
                if !matches!(**self, HashValue::Pack(_)) {
                    return;
                }
                // SAFETY: code-67 cell owning a Box<HashValue>; the box is
                // taken back here and the cell rewritten just below.
                *unsafe { Box::from_raw(read_ptr(&self.cell.b).cast::<HashValue>()) }
            }
        };
        let b = &mut self.cell.b;
        match h {
            HashValue::Pack(p) => {
                b[0] = V_HASH_PACK;
                write_ptr(b, p.into_raw());
            }
            h => {
                b[0] = V_HASH;
                write_ptr(b, Box::into_raw(Box::new(h)).cast());
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------

/// A key prepared for lookups: its bytes, table hash, slot and canonical
/// inline cell (if the key can be inline).
pub struct Key<'a> {
    pub bytes: &'a [u8],
    pub hash: u64,
    cell: [u8; 16],
    plen: u8,
}

impl<'a> Key<'a> {
    pub fn new(bytes: &'a [u8]) -> Key<'a> {
        let slot = crate::slot::key_slot(bytes);
        Self::with_slot(bytes, slot)
    }

    pub fn with_slot(bytes: &'a [u8], slot: u16) -> Key<'a> {
        let hash = crate::slot::key_hash_with_slot(bytes, slot);
        let mut cell = [0u8; 16];
        let (code, plen) = key_code(bytes, &mut cell);
        cell[0] = code;
        Key {
            bytes,
            hash,
            cell,
            plen: plen as u8,
        }
    }

    #[inline]
    pub fn slot(&self) -> u16 {
        crate::slot::slot_of_hash(self.hash)
    }

    #[inline]
    fn inline(&self) -> bool {
        self.cell[0] != K_HEAP
    }
}

/// Canonical key cell code and payload (written to cell[1..]).
fn key_code(s: &[u8], cell: &mut [u8; 16]) -> (u8, usize) {
    match encode_inline(s, KEY_CAP, &mut cell[1..]) {
        Some((Enc::Raw, p)) => (s.len() as u8, p),
        Some((Enc::P6, p)) => (K_P6 + s.len() as u8, p),
        Some((Enc::P7, p)) => (K_P7 + s.len() as u8, p),
        None => (K_HEAP, 0),
    }
}

fn key_inline_enc(code: u8) -> Option<(Enc, usize)> {
    if code < K_P6 {
        Some((Enc::Raw, code as usize))
    } else if code < K_P7 {
        Some((Enc::P6, (code - K_P6) as usize))
    } else if code < K_HEAP {
        Some((Enc::P7, (code - K_P7) as usize))
    } else {
        None
    }
}

fn enc_plen(enc: Enc, n: usize) -> usize {
    match enc {
        Enc::Raw => n,
        Enc::P6 => packed_len(n, 6),
        Enc::P7 => packed_len(n, 7),
    }
}

// ---------------------------------------------------------------------------
// Entry
// ---------------------------------------------------------------------------

/// One keyspace entry: key cell + value cell, 32 bytes.
#[repr(C, align(8))]
pub struct Entry {
    k: [u8; 16],
    v: CompactValue,
}

const _: () = assert!(std::mem::size_of::<Entry>() == 32);
const _: () = assert!(std::mem::size_of::<CompactValue>() == 16);
const _: () = assert!(std::mem::size_of::<HeapBytes>() == 8);

impl Entry {
    /// A new entry without TTL.
    pub fn new(key: &Key, v: CompactValue) -> Entry {
        let mut k = [0u8; 16];
        if key.inline() {
            k = key.cell;
        } else {
            k[0] = K_HEAP;
            write_ptr(&mut k, HeapBytes::from_slice(key.bytes).into_raw());
        }
        Entry { k, v }
    }

    #[inline]
    fn kcode(&self) -> u8 {
        self.k[0] & !K_TTL
    }

    /// The key bytes.
    pub fn key(&self) -> Bytes<'_> {
        match key_inline_enc(self.kcode()) {
            Some((enc, n)) => {
                let mut buf = [0u8; BUF];
                decode_inline(enc, n, &self.k[1..], &mut buf);
                Bytes::Inline(buf, n as u8)
            }
            // SAFETY: heap key cells own a live block.
            None => Bytes::Borrowed(unsafe { HeapBytes::slice_from_raw(read_ptr(&self.k)) }),
        }
    }

    /// Does this entry hold `key`?
    #[inline]
    pub fn matches(&self, key: &Key) -> bool {
        let c = self.kcode();
        if c == K_HEAP {
            // SAFETY: heap key cells own a live block.
            let kb = unsafe { HeapBytes::slice_from_raw(read_ptr(&self.k)) };
            return kb == key.bytes;
        }
        let n = key.plen as usize;
        c == key.cell[0] && self.k[1..1 + n] == key.cell[1..1 + n]
    }

    /// Table hash (recomputed from the key; used by the table on splits).
    pub fn hash(&self) -> u64 {
        crate::slot::key_hash(&self.key())
    }

    #[inline]
    pub fn value(&self) -> &CompactValue {
        &self.v
    }

    /// Mutable access to a list value (the cell itself stays as it is, so
    /// the TTL bytes in its tail are safe).
    pub fn list_mut(&mut self) -> Option<&mut ListValue> {
        self.v.as_list_mut()
    }

    pub fn set_mut(&mut self) -> Option<&mut SetValue> {
        self.v.as_set_mut()
    }

    pub fn zset_mut(&mut self) -> Option<&mut ZsetValue> {
        self.v.as_zset_mut()
    }

    pub fn stream_mut(&mut self) -> Option<&mut Stream> {
        self.v.as_stream_mut()
    }

    /// Write access to a hash value (see [`HashMut`]); the guard keeps the
    /// value tail, so the TTL bytes stay where they are.
    pub fn hash_mut(&mut self) -> Option<HashMut<'_>> {
        self.v.as_hash_mut()
    }

    /// Mutable access to the eviction byte.
    #[inline]
    pub fn set_evict_byte(&mut self, x: u8) {
        self.v.b[1] = x;
    }

    #[inline]
    pub fn has_expire(&self) -> bool {
        self.k[0] & K_TTL != 0
    }

    fn tail_positions(&self) -> ([u8; 32], usize) {
        let mut pos = [0u8; 32];
        let mut n = 0;
        if let Some((enc, len)) = key_inline_enc(self.kcode()) {
            for i in 1 + enc_plen(enc, len)..16 {
                pos[n] = i as u8;
                n += 1;
            }
        }
        let (a, b) = self.v.tail();
        for i in a..b {
            pos[n] = 16 + i as u8;
            n += 1;
        }
        (pos, n)
    }

    #[inline]
    fn byte_at(&self, p: u8) -> u8 {
        if p < 16 {
            self.k[p as usize]
        } else {
            self.v.b[p as usize - 16]
        }
    }

    #[inline]
    fn byte_at_mut(&mut self, p: u8) -> &mut u8 {
        if p < 16 {
            &mut self.k[p as usize]
        } else {
            &mut self.v.b[p as usize - 16]
        }
    }

    /// Absolute expiry time in unix ms, if the key has one.
    pub fn expire_at(&self) -> Option<u64> {
        if !self.has_expire() {
            return None;
        }
        if self.kcode() == K_HEAP {
            let mut b = [0u8; 8];
            b[..7].copy_from_slice(&self.k[1..8]);
            return Some(u64::from_le_bytes(b));
        }
        let (pos, _) = self.tail_positions();
        let mut t: u64 = 0;
        for (i, &p) in pos[..SHORT_TTL].iter().enumerate() {
            t |= (self.byte_at(p) as u64) << (8 * i);
        }
        Some(EXPIRE_EPOCH_MS + t)
    }

    /// True if the key has an expiry at or before `now_ms`.
    #[inline]
    pub fn is_expired(&self, now_ms: u64) -> bool {
        self.has_expire() && self.expire_at().is_some_and(|t| t <= now_ms)
    }

    fn key_to_heap(&mut self) {
        let kb = self.key();
        let h = HeapBytes::from_slice(&kb);
        let ttl = self.k[0] & K_TTL;
        self.k = [0u8; 16];
        self.k[0] = K_HEAP | ttl;
        write_ptr(&mut self.k, h.into_raw());
    }

    fn key_to_inline(&mut self, cell: [u8; 16]) {
        // SAFETY: heap key cells own the block; we replace the cell right after.
        drop(unsafe { HeapBytes::from_raw(read_ptr(&self.k)) });
        self.k = cell;
    }

    /// Free bytes of the key cell with the key inline: now, or once a
    /// heap key that fits the cell moves back. None for a key that can
    /// only live on the heap.
    fn inline_key_tail(&self) -> Option<usize> {
        if let Some((enc, len)) = key_inline_enc(self.kcode()) {
            return Some(KEY_CAP - enc_plen(enc, len));
        }
        let kb = self.key();
        if kb.len() > max_chars(KEY_CAP, 6) {
            return None;
        }
        let mut cell = [0u8; 16];
        let (code, plen) = key_code(&kb, &mut cell);
        (code != K_HEAP).then_some(KEY_CAP - plen)
    }

    /// A split value has no tail bytes: with a TTL whose key tail is too
    /// short, the value takes its unsplit form (the cost the TTL had before
    /// split strings: the key stays inline). Without a TTL, a heap string
    /// that split would shrink (left unsplit by an earlier TTL) splits
    /// again. The eviction byte is kept.
    fn fit_value_to_ttl(&mut self, t: Option<u64>, short_ok: bool) {
        let v = &self.v;
        let new = match t {
            Some(_)
                if v.is_split()
                    && short_ok
                    && self.inline_key_tail().is_some_and(|n| n < SHORT_TTL) =>
            {
                CompactValue::unsplit_heap(&v.string().unwrap())
            }
            None if (V_HEAP..=V_HEAP7).contains(&v.b[0])
                && split_gain(v.b[2] as usize)
                && size_class(v.b[2] as usize - SPLIT_HEAD) < v.heap_size() =>
            {
                match CompactValue::split_heap(&v.string().unwrap()) {
                    Some(n) => n,
                    None => return,
                }
            }
            _ => return,
        };
        let evict = self.v.b[1];
        self.v = new;
        self.v.b[1] = evict;
    }

    /// Sets or clears the expiry (unix ms). Relocates bytes as needed.
    pub(crate) fn set_expire(&mut self, t: Option<u64>) {
        self.k[0] &= !K_TTL;
        let short_ok = |t: u64| (EXPIRE_EPOCH_MS..EXPIRE_EPOCH_MS + SHORT_RANGE).contains(&t);
        self.fit_value_to_ttl(t, t.is_some_and(short_ok));
        if self.kcode() == K_HEAP {
            // Move a heap key back inline if it fits there now.
            let kb = self.key();
            if kb.len() <= max_chars(KEY_CAP, 6) {
                let mut cell = [0u8; 16];
                let (code, plen) = key_code(&kb, &mut cell);
                if code != K_HEAP {
                    let vt = self.v.tail();
                    let fits = match t {
                        None => true,
                        Some(t) => short_ok(t) && (KEY_CAP - plen) + (vt.1 - vt.0) >= SHORT_TTL,
                    };
                    if fits {
                        cell[0] = code;
                        self.key_to_inline(cell);
                    }
                }
            }
        }
        let Some(t) = t else { return };
        let t = t.min(MAX_EXPIRE_MS);
        if self.kcode() != K_HEAP && short_ok(t) {
            let (pos, n) = self.tail_positions();
            if n >= SHORT_TTL {
                let rel = t - EXPIRE_EPOCH_MS;
                for (i, &p) in pos[..SHORT_TTL].iter().enumerate() {
                    *self.byte_at_mut(p) = (rel >> (8 * i)) as u8;
                }
                self.k[0] |= K_TTL;
                return;
            }
        }
        if self.kcode() != K_HEAP {
            self.key_to_heap();
        }
        self.k[1..8].copy_from_slice(&t.to_le_bytes()[..7]);
        self.k[0] |= K_TTL;
    }

    /// Replaces the value, keeping the expiry; returns the old value.
    pub fn set_value(&mut self, v: CompactValue) -> CompactValue {
        let t = self.expire_at();
        let evict = self.v.b[1];
        let old = std::mem::replace(&mut self.v, v);
        self.v.b[1] = evict;
        if t.is_some() {
            self.set_expire(t);
        }
        old
    }

    /// Edits a string value in place as a heap block (APPEND, SETRANGE,
    /// SETBIT...). The value is marked raw; short results move back inline.
    /// Returns None if the value is not a string.
    pub fn modify_string<R>(&mut self, f: impl FnOnce(&mut HeapStr) -> R) -> Option<R> {
        if !self.v.is_string() {
            return None;
        }
        if self.v.code() == V_HEAP {
            // SAFETY: the cell owns the plain block of heap_len() bytes;
            // ManuallyDrop keeps that ownership and the (possibly moved)
            // pointer and new length are written back below. The value tail
            // v[3..8] (TTL bytes) is left as it is.
            let mut h = std::mem::ManuallyDrop::new(unsafe {
                HeapStr::from_raw(read_ptr(&self.v.b), self.v.heap_len())
            });
            let r = f(&mut h);
            let small = h.len() <= max_chars(VAL_CAP, 6);
            let (p, n) = std::mem::ManuallyDrop::into_inner(h).into_raw();
            write_ptr(&mut self.v.b, p);
            self.v.b[2] = len_byte(n);
            self.v.b[0] |= V_RAWFLAG;
            if small {
                // Small again: move inline.
                let t = self.expire_at();
                let evict = self.v.b[1];
                let hb = std::mem::replace(&mut self.v, CompactValue::from_int(0))
                    .into_heap_string()
                    .unwrap();
                self.v = CompactValue::from_heap(hb, true);
                self.v.b[1] = evict;
                if t.is_some() {
                    self.set_expire(t);
                }
            }
            return Some(r);
        }
        let t = self.expire_at();
        let evict = self.v.b[1];
        let mut hb = std::mem::replace(&mut self.v, CompactValue::from_int(0))
            .into_heap_string()
            .unwrap();
        let r = f(&mut hb);
        self.v = CompactValue::from_heap(hb, true);
        self.v.b[1] = evict;
        if t.is_some() {
            self.set_expire(t);
        }
        Some(r)
    }

    /// Heap bytes owned by this entry (key block + value blocks).
    pub fn heap_size(&self) -> usize {
        let k = if self.kcode() == K_HEAP {
            // SAFETY: heap key cells own a live block.
            let s = unsafe { HeapBytes::slice_from_raw(read_ptr(&self.k)) };
            crate::heap::size_class(crate::heap::HDR + s.len())
        } else {
            0
        };
        k + self.v.heap_size()
    }

    /// Is the key stored inline?
    pub fn key_inline(&self) -> bool {
        self.kcode() != K_HEAP
    }

    /// A deep copy under another key (COPY), without TTL.
    pub fn clone_value(&self) -> CompactValue {
        let mut v = self.v.clone();
        // tail bytes may hold this entry's TTL; harmless but zero them
        let (a, b) = v.tail();
        v.b[a..b].fill(0);
        v
    }

    /// Takes the value out, leaving the entry to be dropped.
    pub fn into_value(mut self) -> CompactValue {
        let v = std::mem::replace(&mut self.v, CompactValue::from_int(0));
        drop(self);
        v
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        if self.kcode() == K_HEAP {
            // SAFETY: heap key cells own the block behind the stored pointer.
            drop(unsafe { HeapBytes::from_raw(read_ptr(&self.k)) });
        }
    }
}

impl std::fmt::Debug for Entry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Entry({:?} => {:?}, ttl {:?})",
            self.key(),
            self.v,
            self.expire_at()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(k: &[u8], v: &[u8]) -> Entry {
        Entry::new(&Key::new(k), CompactValue::from_bytes(v))
    }

    #[test]
    fn an_integer_of_its_own_reads_back_the_same_and_is_not_shared() {
        let shared = CompactValue::from_bytes(b"42");
        assert!(shared.is_int() && shared.is_shared_int());
        let mut own = CompactValue::from_bytes(b"42");
        own.unshare_int();
        assert!(own.is_int() && !own.is_shared_int());
        assert_eq!(own.as_int(), Some(42));
        assert_eq!(own.encoding_name(), "int");
        assert_eq!(own.string().as_deref(), Some(&b"42"[..]));
        assert_eq!(own.str_len(), 2);
        // A clone (COPY's deep copy) keeps what it is.
        assert!(!own.clone().is_shared_int());
        // Outside 0..10000 no integer is shared; other values are untouched.
        assert!(!CompactValue::from_bytes(b"10000").is_shared_int());
        assert!(!CompactValue::from_bytes(b"-1").is_shared_int());
        let mut s = CompactValue::from_bytes(b"hello");
        s.unshare_int();
        assert_eq!(s.encoding_name(), "embstr");
        assert_eq!(s.string().as_deref(), Some(&b"hello"[..]));
    }

    #[test]
    fn populate_shapes_are_inline() {
        let e = entry(b"key:12345678", b"value:12345678");
        assert!(e.key_inline());
        assert_eq!(e.heap_size(), 0);
        assert_eq!(&*e.key(), b"key:12345678");
        assert_eq!(&*e.value().string().unwrap(), b"value:12345678");
        assert_eq!(e.value().encoding_name(), "embstr");
        // redis-benchmark shapes: 16-byte keys and values
        let e = entry(b"key:000000012345", b"xxxxxxxxxxxxxxxx");
        assert_eq!(e.heap_size(), 0);
        assert_eq!(&*e.value().string().unwrap(), b"xxxxxxxxxxxxxxxx");
    }

    #[test]
    fn ttl_is_free_for_populate_shapes() {
        let now = 1_800_000_000_000;
        for (k, v) in [
            (&b"key:12345678"[..], &b"value:12345678"[..]),
            (b"key:000000012345", b"xxxxxxxxxxxxxxxx"),
            (b"k", b"12345"),
        ] {
            let mut e = entry(k, v);
            e.set_expire(Some(now));
            assert!(e.key_inline(), "{:?}", e);
            assert_eq!(e.heap_size(), 0);
            assert_eq!(e.expire_at(), Some(now));
            assert!(e.matches(&Key::new(k)));
            assert_eq!(&*e.value().string().unwrap(), v);
            e.set_expire(None);
            assert_eq!(e.expire_at(), None);
        }
    }

    #[test]
    fn ttl_fallback_to_heap_key() {
        let mut e = entry(
            b"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e",
            b"\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b",
        );
        e.set_expire(Some(1_800_000_000_000));
        assert!(!e.key_inline());
        assert_eq!(e.expire_at(), Some(1_800_000_000_000));
        e.set_expire(None);
        assert!(e.key_inline());
        // out of short range
        let mut e = entry(b"a", b"b");
        e.set_expire(Some(5));
        assert_eq!(e.expire_at(), Some(5));
        e.set_expire(Some(u64::MAX));
        assert_eq!(e.expire_at(), Some(MAX_EXPIRE_MS));
    }

    #[test]
    fn ints_and_encodings() {
        let v = CompactValue::from_bytes(b"-12345");
        assert!(v.is_int());
        assert_eq!(v.as_int(), Some(-12345));
        assert_eq!(&*v.string().unwrap(), b"-12345");
        assert_eq!(v.encoding_name(), "int");
        assert_eq!(v.str_len(), 6);
        assert!(!CompactValue::from_bytes(b"012").is_int());
        assert!(!CompactValue::from_bytes(b"+1").is_int());
        let big = vec![b'a'; 45];
        assert_eq!(CompactValue::from_bytes(&big).encoding_name(), "raw");
        assert_eq!(
            CompactValue::from_bytes(&big[..44]).encoding_name(),
            "embstr"
        );
        let m = CompactValue::from_int(i64::MIN);
        assert_eq!(&*m.string().unwrap(), b"-9223372036854775808");
    }

    #[test]
    fn modify_keeps_ttl() {
        let mut e = entry(b"key:1", b"abc");
        e.set_expire(Some(1_800_000_000_123));
        e.modify_string(|h| h.extend_from_slice(&[b'x'; 100]))
            .unwrap();
        assert_eq!(e.value().str_len(), 103);
        assert_eq!(e.value().encoding_name(), "raw");
        assert_eq!(e.expire_at(), Some(1_800_000_000_123));
        e.modify_string(|h| h.resize(2)).unwrap();
        assert_eq!(&*e.value().string().unwrap(), b"ab");
        assert_eq!(e.value().encoding_name(), "raw");
        assert_eq!(e.heap_size(), 0);
        assert_eq!(e.expire_at(), Some(1_800_000_000_123));
        let old = e.set_value(CompactValue::from_int(7));
        assert_eq!(&*old.string().unwrap(), b"ab");
        assert_eq!(e.expire_at(), Some(1_800_000_000_123));
    }

    #[derive(Debug, Clone)]
    enum HOp {
        Set(u8, Vec<u8>),
        Del(u8),
    }

    fn hash_op() -> impl Strategy<Value = HOp> {
        prop_oneof![
            3 => (0u8..40, prop_oneof![
                4 => "[a-z0-9]{0,12}".prop_map(String::into_bytes),
                1 => proptest::collection::vec(any::<u8>(), 60..70),
            ]).prop_map(|(f, v)| HOp::Set(f, v)),
            2 => (0u8..40).prop_map(HOp::Del),
        ]
    }

    /// Alphabets for the heap-string tests: 6-bit, 7-bit, any byte.
    fn sample(len: usize, alphabet: u8, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match alphabet {
                    0 => {
                        b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ:_"
                            [(x % 64) as usize]
                    }
                    1 => b' ' + (x % 95) as u8,
                    _ => x as u8,
                }
            })
            .collect()
    }

    #[test]
    fn forty_bytes_take_a_32_byte_block() {
        // Split: 8 bytes in the cell, 32 in the block. On a tie with the
        // 6-bit packing (30 bytes, also the 32-byte class), split wins: it
        // reads back without decoding.
        let v = CompactValue::from_bytes(b"1234567890123456789012345678901234567890");
        assert_eq!(v.internal_encoding(), "heap-split");
        assert_eq!(v.heap_size(), 32);
        assert_eq!(v.encoding_name(), "embstr");
        assert_eq!(v.str_len(), 40);
        assert_eq!(
            &*v.string().unwrap(),
            b"1234567890123456789012345678901234567890"
        );
        // 36 ASCII chars: split (28 bytes) ties with 7-bit (32 bytes).
        let s = b"hello world, this is 36 chars long!!";
        assert_eq!(s.len(), 36);
        let v = CompactValue::from_bytes(s);
        assert_eq!(v.internal_encoding(), "heap-split");
        assert_eq!(v.heap_size(), 32);
        // Their unsplit forms (what a TTL on a key with a short tail uses):
        // 6-bit and 7-bit packed, 32 bytes.
        let v = CompactValue::unsplit_heap(b"1234567890123456789012345678901234567890");
        assert_eq!(v.internal_encoding(), "heap-6bit");
        assert_eq!(v.heap_size(), 32);
        let v = CompactValue::unsplit_heap(s);
        assert_eq!(v.internal_encoding(), "heap-7bit");
        assert_eq!(v.heap_size(), 32);
        assert_eq!(&*v.string().unwrap(), s);
        // 41 digits: 6-bit (31 bytes) is the only form under 48.
        let v = CompactValue::from_bytes(&[b'7'; 41]);
        assert_eq!(v.internal_encoding(), "heap-6bit");
        assert_eq!(v.heap_size(), 32);
        // Binary: split (40 bytes -> 32-byte class, plain would be 48).
        let v = CompactValue::from_bytes(&[0xffu8; 40]);
        assert_eq!(v.internal_encoding(), "heap-split");
        assert_eq!(v.heap_size(), 32);
        assert_eq!(&*v.string().unwrap(), &[0xffu8; 40]);
        // 16 binary bytes is still plain (a 16-byte block), 17 split (9 in
        // a 16-byte block instead of 32), 25 plain (17 would not gain).
        for (n, enc, block) in [(16, "heap", 16), (17, "heap-split", 16), (25, "heap", 32)] {
            let v = CompactValue::from_bytes(&vec![0xfe; n]);
            assert_eq!((v.internal_encoding(), v.heap_size()), (enc, block), "{n}");
        }
        // 44 chars: packing would not leave the 48-byte class; stays plain.
        let v = CompactValue::from_bytes(&[b'a'; 44]);
        assert_eq!(v.internal_encoding(), "heap");
        assert_eq!(v.heap_size(), 48);
        // 16-char key + heap value keeps a TTL inline (3 + 5 tail bytes):
        // the split value (no tail) takes its unsplit form, 6-bit packed.
        let mut e = entry(b"key:000000012345", &[b'7'; 40]);
        assert_eq!(e.heap_size(), 32);
        e.set_expire(Some(1_800_000_000_000));
        assert!(e.key_inline());
        assert_eq!(e.value().internal_encoding(), "heap-6bit");
        assert_eq!(e.heap_size(), 32);
        assert_eq!(e.expire_at(), Some(1_800_000_000_000));
        // A 15-byte raw key (no key tail) too: the value tail has 5 bytes;
        // 40 binary bytes then take the plain 48-byte block.
        let mut e = entry(&[0xff; 15], &[0xfe; 40]);
        e.set_evict_byte(0x33);
        assert_eq!(e.heap_size(), 32);
        e.set_expire(Some(1_800_000_000_000));
        assert!(e.key_inline());
        assert_eq!(e.heap_size(), 48);
        assert_eq!(e.expire_at(), Some(1_800_000_000_000));
        assert_eq!(&*e.value().string().unwrap(), &[0xfe; 40]);
        // PERSIST splits it again; the eviction byte stays.
        e.set_expire(None);
        assert_eq!(e.value().internal_encoding(), "heap-split");
        assert_eq!(e.heap_size(), 32);
        assert_eq!(e.value().evict_byte(), 0x33);
        // A key with 5 tail bytes keeps the split value with a TTL.
        let mut e = entry(b"key:1234", &[0xfe; 40]);
        e.set_expire(Some(1_800_000_000_000));
        assert_eq!(e.value().internal_encoding(), "heap-split");
        assert_eq!(e.heap_size(), 32);
        assert_eq!(e.expire_at(), Some(1_800_000_000_000));
        assert_eq!(&*e.value().string().unwrap(), &[0xfe; 40]);
    }

    /// Every value form the cell has, with the string it holds (if any).
    fn value_forms() -> Vec<(&'static str, CompactValue)> {
        use collections::Limits;
        let lim = Limits::default();
        let mut v: Vec<(&'static str, CompactValue)> = vec![
            ("inline-empty", CompactValue::from_bytes(b"")),
            ("inline-raw", CompactValue::from_bytes(&[0xff; 14])),
            (
                "inline-6bit",
                CompactValue::from_bytes(b"value:123456789012"),
            ),
            ("inline-7bit", CompactValue::from_bytes(b"Value 1234567890")),
            ("int", CompactValue::from_bytes(b"-1234567890123")),
            ("heap-short", CompactValue::from_bytes(&[0xfe; 44])),
            ("heap-split", CompactValue::from_bytes(&[0xfe; 40])),
            ("heap-split-17", CompactValue::from_bytes(&[0xfe; 17])),
            ("heap-split-56", CompactValue::from_bytes(&[0xfe; 56])),
            ("heap-255", CompactValue::from_bytes(&[0xfe; 255])),
            ("heap-long", CompactValue::from_bytes(&[0xfe; 300])),
            ("heap-6bit", CompactValue::from_bytes(&[b'7'; 41])),
            (
                "heap-7bit",
                CompactValue::unsplit_heap(b"hello world, this is 36 chars long!!"),
            ),
            ("raw-edited", {
                let mut e = entry(b"x", &[0xfe; 20]);
                e.modify_string(|h| h.extend_from_slice(&[1; 400])).unwrap();
                e.into_value()
            }),
            ("list", CompactValue::from_list(ListValue::new(&lim))),
            ("set", CompactValue::from_set(SetValue::default())),
            ("zset", CompactValue::from_zset(ZsetValue::default())),
        ];
        let mut h = HashValue::new();
        h.insert(&lim, b"f", b"v");
        v.push(("hash-pack", CompactValue::from_hash(h)));
        let mut big = HashValue::new();
        for i in 0..20 {
            big.insert(&lim, format!("f{i}").as_bytes(), b"v");
        }
        v.push(("hash-box", CompactValue::from_hash(big)));
        v.push(("stream-empty", CompactValue::from_stream(Stream::new())));
        let mut st = Stream::new();
        for i in 0..300u64 {
            st.add(
                collections::stream::AddId::Auto,
                &[b"f".as_slice(), format!("{i}").as_bytes()],
                i as i64,
                Default::default(),
            )
            .unwrap();
        }
        st.create_group(b"g", st.last_id(), None).unwrap();
        v.push(("stream", CompactValue::from_stream(st)));
        v
    }

    #[test]
    fn stream_values() {
        let mut st = Stream::new();
        let lim = collections::stream::NodeLimits::default();
        for i in 1..=250u64 {
            st.add(
                collections::stream::AddId::Explicit(collections::stream::StreamId::new(i, 0)),
                &[b"field".as_slice(), b"value"],
                0,
                lim,
            )
            .unwrap();
        }
        let heap = st.heap_bytes();
        let v = CompactValue::from_stream(st);
        assert_eq!(v.kind(), Kind::Stream);
        assert_eq!(v.kind().name(), "stream");
        assert_eq!(v.encoding_name(), "stream");
        assert_eq!(v.internal_encoding(), "stream");
        assert_eq!(v.collection_len(), 250);
        assert!(!v.is_string() && v.string().is_none());
        assert_eq!(
            v.heap_size(),
            crate::heap::size_class(std::mem::size_of::<Stream>()) + heap
        );
        // A deep copy: changing the copy leaves the original alone.
        let mut e = Entry::new(&Key::new(b"s"), v.clone());
        let c = e.stream_mut().unwrap();
        c.delete(&[collections::stream::StreamId::new(1, 0)]);
        assert_eq!(e.value().collection_len(), 249);
        assert_eq!(v.collection_len(), 250);
        assert!(CompactValue::from_bytes(b"x").as_stream().is_none());
        assert!(CompactValue::from_zset(ZsetValue::default())
            .as_stream()
            .is_none());
        // An empty stream is a value too (XGROUP CREATE MKSTREAM).
        let empty = CompactValue::from_stream(Stream::new());
        assert_eq!(empty.collection_len(), 0);
        assert_eq!(empty.kind(), Kind::Stream);
    }

    /// Every key form (raw 0..=15, 6-bit 4..=20, 7-bit 8..=17 chars) with
    /// every value form: a TTL keeps the key inline and costs no heap byte
    /// wherever key tail + value tail give 5 bytes, always with a heap
    /// string value; the expiry and value read back, and clearing the TTL
    /// or replacing the value keeps them consistent.
    #[test]
    fn ttl_is_free_wherever_five_tail_bytes_exist() {
        let mut keys: Vec<Vec<u8>> = (0..=15).map(|n| vec![0xf0u8; n]).collect();
        keys.extend((4..=20).map(|n| sample(n, 0, n as u64)));
        keys.extend((8..=17).map(|n| {
            let mut k = sample(n, 1, n as u64);
            k[0] = b' '; // outside the 6-bit alphabet
            k
        }));
        let t = 1_800_000_000_123;
        for k in &keys {
            for (name, v) in value_forms() {
                let mut e = Entry::new(&Key::new(k), v.clone());
                assert!(e.key_inline(), "{k:?}");
                let before = e.heap_size();
                let key_tail = match key_inline_enc(e.kcode()) {
                    Some((enc, len)) => 15 - enc_plen(enc, len),
                    None => unreachable!(),
                };
                let (a, b) = e.value().tail();
                let heap_str = e.value().is_heap_str();
                if heap_str {
                    assert_eq!(b - a, 5, "{name}");
                }
                let split = e.value().is_split();
                if split {
                    assert_eq!(b - a, 0, "{name}");
                }
                e.set_expire(Some(t));
                // A split value with a short key tail takes its unsplit
                // form (5 tail bytes), so the key stays inline.
                let unsplit = split && key_tail < SHORT_TTL;
                if key_tail + (b - a) >= SHORT_TTL || unsplit {
                    assert!(e.key_inline(), "{k:?} {name}");
                } else {
                    assert!(!heap_str);
                    assert!(e.heap_size() <= before + 32, "{k:?} {name}");
                }
                if key_tail + (b - a) >= SHORT_TTL {
                    assert_eq!(e.heap_size(), before, "{k:?} {name}");
                }
                assert_eq!(e.expire_at(), Some(t), "{k:?} {name}");
                assert_eq!(&*e.key(), &k[..]);
                if let Some(s) = v.string() {
                    assert_eq!(&*e.value().string().unwrap(), &*s, "{name}");
                    let want = if unsplit {
                        CompactValue::unsplit_heap(&s).heap_size()
                    } else {
                        v.heap_size()
                    };
                    assert_eq!(e.value().heap_size(), want, "{name}");
                    assert_eq!(e.value().is_split(), split && !unsplit, "{name}");
                }
                assert_eq!(e.value().encoding_name(), v.encoding_name());
                // a new value of every form keeps the TTL
                for (n2, v2) in value_forms() {
                    let mut e2 = Entry::new(&Key::new(k), v.clone());
                    e2.set_expire(Some(t));
                    e2.set_value(v2.clone());
                    assert_eq!(e2.expire_at(), Some(t), "{k:?} {name} -> {n2}");
                    if e2.value().is_heap_str() || v2.is_split() {
                        assert!(e2.key_inline(), "{k:?} {name} -> {n2}");
                    }
                    if let Some(s) = v2.string() {
                        assert_eq!(&*e2.value().string().unwrap(), &*s);
                    }
                }
                e.set_expire(None);
                assert!(e.key_inline());
                assert_eq!(e.expire_at(), None);
                assert_eq!(e.heap_size(), before);
            }
        }
    }

    /// In-place edits that cross the 256-byte line (and back, and to the
    /// empty string) keep bytes, TTL and exact block sizes; a plain long
    /// string's block is its length header plus the bytes.
    #[test]
    fn edits_across_256_keep_ttl_and_bytes() {
        let t = 1_800_000_000_777;
        for k in [&[0xf0u8; 15][..], b"key:000000012345", b"k"] {
            let mut model: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
            let mut e = Entry::new(&Key::new(k), CompactValue::from_bytes(&model));
            e.set_expire(Some(t));
            e.set_evict_byte(0x5a);
            let steps: [(usize, usize); 12] = [
                (255, 0),
                (256, 0),
                (257, 3),
                (300, 0),
                (255, 9),
                (600, 1),
                (250, 2),
                (256, 5),
                (0, 0),
                (20, 4),
                (5000, 11),
                (16, 0),
            ];
            for (len, fill) in steps {
                e.modify_string(|h| {
                    assert_eq!(h.as_slice(), &model[..]);
                    let old = h.len();
                    h.resize(len);
                    if len > old {
                        assert!(h.as_slice()[old..].iter().all(|&b| b == 0));
                    }
                    for (i, b) in h.as_mut_slice().iter_mut().enumerate().skip(fill) {
                        *b = b.wrapping_add(i as u8 | 1);
                    }
                })
                .unwrap();
                model.resize(len, 0);
                for (i, b) in model.iter_mut().enumerate().skip(fill) {
                    *b = b.wrapping_add(i as u8 | 1);
                }
                assert_eq!(&*e.value().string().unwrap(), &model[..], "{len}");
                assert_eq!(e.value().str_len(), len);
                assert_eq!(e.expire_at(), Some(t), "{len}");
                assert_eq!(e.value().evict_byte(), 0x5a);
                // (a short result moves inline and may fill its cell)
                assert!(e.key_inline() || !e.value().is_heap_str(), "{len}");
                assert_eq!(e.value().encoding_name(), "raw");
                let want = if e.value().is_heap_str() {
                    let hdr = if len >= 256 { 4 } else { 0 };
                    size_class(len + hdr)
                } else {
                    0
                };
                assert_eq!(e.value().heap_size(), want, "{len}");
                // an APPEND across the line
                if (200..256).contains(&len) {
                    e.modify_string(|h| h.extend_from_slice(&[b'z'; 100]))
                        .unwrap();
                    model.extend_from_slice(&[b'z'; 100]);
                    assert_eq!(&*e.value().string().unwrap(), &model[..]);
                    assert!(e.key_inline());
                    assert_eq!(e.heap_size(), size_class(len + 104));
                    assert_eq!(e.expire_at(), Some(t));
                }
                let c = e.value().clone();
                assert_eq!(&*c.string().unwrap(), &model[..]);
                assert_eq!(c.heap_size(), e.value().heap_size());
            }
            let h = e.into_value().into_heap_string().unwrap();
            assert_eq!(h.as_slice(), &model[..]);
        }
    }

    /// Every length from 0 to past PACK_MAX, every alphabet: the bytes come
    /// back, the block is the smallest size class of the plain or packed
    /// form, encodings follow Redis's names, and edits convert to plain.
    #[test]
    fn heap_strings_around_the_limits() {
        for len in 0..=PACK_MAX + 40 {
            for alphabet in 0..3u8 {
                for seed in 0..3u64 {
                    let s = sample(len, alphabet, seed + len as u64 * 7);
                    if parse_i64_strict(&s).is_some() {
                        continue;
                    }
                    let v = CompactValue::from_bytes(&s);
                    assert_eq!(&*v.string().unwrap(), &s[..], "{len}/{alphabet}");
                    assert_eq!(v.str_len(), len);
                    assert_eq!(v.encoding_name(), if len > 44 { "raw" } else { "embstr" });
                    let heap = v.heap_size();
                    if v.inline_enc().is_some() {
                        assert_eq!(heap, 0);
                    } else {
                        let mut best = heap::str_block_size(len);
                        if split_gain(len) {
                            best = best.min(size_class(len - SPLIT_HEAD));
                        }
                        if len <= PACK_MAX {
                            if alphabet == 0 {
                                best = best.min(size_class(packed_len(len, 6)));
                            }
                            if alphabet <= 1 {
                                best = best.min(size_class(packed_len(len, 7)));
                            }
                        }
                        assert_eq!(heap, best, "{len}/{alphabet} {}", v.internal_encoding());
                    }
                    let c = v.clone();
                    assert_eq!(&*c.string().unwrap(), &s[..]);
                    assert_eq!(c.heap_size(), heap);
                    // an in-place edit: plain and raw
                    let mut e = Entry::new(&Key::new(b"k"), v);
                    e.modify_string(|h| {
                        assert_eq!(h.as_slice(), &s[..]);
                        h.extend_from_slice(b"!");
                    })
                    .unwrap();
                    let mut s2 = s.clone();
                    s2.push(b'!');
                    assert_eq!(&*e.value().string().unwrap(), &s2[..]);
                    assert_eq!(e.value().encoding_name(), "raw");
                    if e.value().inline_enc().is_none() {
                        assert_eq!(e.value().internal_encoding(), "heap");
                        assert_eq!(e.heap_size(), heap::str_block_size(len + 1));
                    }
                    let h = e.into_value().into_heap_string().unwrap();
                    assert_eq!(h.as_slice(), &s2[..]);
                    // from_heap(raw = false) packs like from_bytes
                    let v2 = CompactValue::from_heap(HeapStr::from_slice(&s), false);
                    assert_eq!(v2.heap_size(), heap);
                    assert_eq!(&*v2.string().unwrap(), &s[..]);
                }
            }
        }
    }

    proptest! {
        /// A hash changed through `Entry::hash_mut` against a HashMap model,
        /// across every form change (block in the cell <-> boxed indexed
        /// listpack -> hashtable): contents, OBJECT ENCODING, exact heap
        /// size (a small hash costs its block and nothing else), and the
        /// TTL and eviction byte of the entry stay as they were.
        #[test]
        fn hash_cell_forms(
            key in "[a-z:0-9]{1,30}",
            ttl in proptest::option::of(1_700_000_000_000u64..1_900_000_000_000),
            ops in proptest::collection::vec(hash_op(), 1..150),
            entries in prop_oneof![Just(10usize), Just(24), Just(512)],
        ) {
            let lim = collections::Limits {
                hash_max_listpack_entries: entries,
                ..collections::Limits::default()
            };
            let k = Key::new(key.as_bytes());
            let mut h0 = HashValue::new();
            h0.insert(&lim, b"first", b"1");
            let mut e = Entry::new(&k, CompactValue::from_hash(h0));
            e.set_expire(ttl);
            e.set_evict_byte(0xA5);
            let mut m = std::collections::HashMap::new();
            m.insert(b"first".to_vec(), b"1".to_vec());
            let mut table = false;
            for o in ops {
                let mut h = e.hash_mut().unwrap();
                match o {
                    HOp::Set(f, v) => {
                        let f = format!("field:{f}").into_bytes();
                        prop_assert_eq!(h.insert(&lim, &f, &v), m.insert(f, v).is_none());
                    }
                    HOp::Del(f) => {
                        let f = format!("field:{f}").into_bytes();
                        prop_assert_eq!(h.remove(&f), m.remove(&f).is_some());
                    }
                }
                drop(h);
                let v = e.value();
                let h = v.as_hash().unwrap();
                table |= m.len() > entries || m.values().any(|x| x.len() > 64);
                prop_assert_eq!(v.encoding_name(), if table { "hashtable" } else { "listpack" });
                prop_assert_eq!(h.len(), m.len());
                prop_assert_eq!(v.collection_len(), m.len());
                for (f, x) in &m {
                    prop_assert_eq!(h.get(f).map(|y| y.to_vec()), Some(x.clone()));
                }
                let want = match &*h {
                    HashValue::Pack(p) => {
                        prop_assert_eq!(v.code(), V_HASH_PACK);
                        p.heap_bytes()
                    }
                    other => {
                        prop_assert_eq!(v.code(), V_HASH);
                        boxed_size::<HashValue>(other.heap_bytes())
                    }
                };
                prop_assert_eq!(v.heap_size(), want);
                prop_assert_eq!(e.expire_at(), ttl);
                prop_assert_eq!(e.value().evict_byte(), 0xA5);
                prop_assert!(e.matches(&k));
                let c = e.clone_value();
                let ch = c.as_hash().unwrap();
                prop_assert_eq!(ch.len(), m.len());
                // A copy is never bigger (a boxed listpack below 16 fields
                // is copied into the packed form, Vec copies are exact).
                prop_assert!(c.heap_size() <= want);
                prop_assert_eq!(c.encoding_name(), v.encoding_name());
            }
        }

        #[test]
        fn entry_roundtrip(
            k in proptest::collection::vec(any::<u8>(), 0..40),
            ks in "[a-z:0-9]{0,24}",
            v in proptest::collection::vec(any::<u8>(), 0..100),
            vs in "[a-zA-Z0-9 :_]{0,90}",
            use_s in any::<(bool, bool)>(),
            ttl in proptest::option::of(0u64..u64::MAX),
            ttl2 in proptest::option::of(1_700_000_000_000u64..1_900_000_000_000),
        ) {
            let k = if use_s.0 { ks.as_bytes().to_vec() } else { k };
            let v = if use_s.1 { vs.as_bytes().to_vec() } else { v };
            let key = Key::new(&k);
            let mut e = Entry::new(&key, CompactValue::from_bytes(&v));
            prop_assert!(e.matches(&key));
            prop_assert_eq!(e.hash(), key.hash);
            e.set_expire(ttl);
            prop_assert_eq!(e.expire_at(), ttl.map(|t| t.min(MAX_EXPIRE_MS)));
            prop_assert!(e.matches(&key));
            prop_assert_eq!(&*e.key(), &k[..]);
            prop_assert_eq!(&*e.value().string().unwrap(), &v[..]);
            e.set_expire(ttl2);
            prop_assert_eq!(e.expire_at(), ttl2);
            prop_assert!(e.matches(&key));
            prop_assert_eq!(&*e.value().string().unwrap(), &v[..]);
            e.modify_string(|h| h.extend_from_slice(b"zz")).unwrap();
            let mut v2 = v.clone();
            v2.extend_from_slice(b"zz");
            prop_assert_eq!(&*e.value().string().unwrap(), &v2[..]);
            prop_assert_eq!(e.expire_at(), ttl2);
            prop_assert_eq!(&*e.key(), &k[..]);
            // SETRANGE-like overwrite and truncation against the model
            e.modify_string(|h| {
                if !h.is_empty() {
                    h.as_mut_slice()[0] = b'#';
                }
            })
            .unwrap();
            if !v2.is_empty() {
                v2[0] = b'#';
            }
            prop_assert_eq!(&*e.value().string().unwrap(), &v2[..]);
            let cut = v2.len() / 2;
            e.modify_string(|h| h.resize(cut)).unwrap();
            v2.truncate(cut);
            prop_assert_eq!(&*e.value().string().unwrap(), &v2[..]);
            prop_assert_eq!(e.value().str_len(), v2.len());
            prop_assert_eq!(e.expire_at(), ttl2);
            let other = Key::new(b"definitely-some-other-key");
            prop_assert!(k == b"definitely-some-other-key" || !e.matches(&other));
        }
    }
}
