//! Shared plumbing of the collection command families (hashes, lists, sets,
//! sorted sets): typed lookups that answer WRONGTYPE, get-or-create for
//! writes, and deleting a key whose collection became empty.
//!
//! Invariant kept by every family: the keyspace never holds an empty
//! collection. A write that removes the last element calls
//! [`remove_if_empty`] before releasing the partition lock, so no other
//! client can see the empty value. Streams are the exception, as in Redis:
//! an empty stream keeps its IDs and groups, so [`CollType::is_empty`] is
//! false for every stream and the helpers never delete one.

use std::ops::{Deref, DerefMut};

use collections::stream::Stream;
use collections::{HashValue, ListValue, SetValue, ZsetValue};
use store::keyspace::Partition;
use store::{CompactValue, Entry, HashMut, HashRef, Key, Kind};

/// The value held under a key was of another type (reply
/// [`crate::base::errors::ERR_WRONGTYPE`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrongType;

/// A collection type as the keyspace stores it. Access goes through
/// `Ref`/`Mut`: plain references for the boxed types, guards for hashes
/// (a small hash is a block pointed to by the value cell, see
/// `store::HashMut`).
pub trait CollType: Sized {
    const KIND: Kind;
    type Ref<'a>: Deref<Target = Self>;
    type Mut<'a>: DerefMut<Target = Self>;
    fn of(v: &CompactValue) -> Option<Self::Ref<'_>>;
    fn of_mut(e: &mut Entry) -> Option<Self::Mut<'_>>;
    fn into_value(self) -> CompactValue;
    fn is_empty(&self) -> bool;
}

macro_rules! coll_type {
    ($t:ty, $r:ty, $m:ty, $kind:expr, $of:ident, $of_mut:ident, $wrap:ident) => {
        impl CollType for $t {
            const KIND: Kind = $kind;
            type Ref<'a> = $r;
            type Mut<'a> = $m;
            #[inline]
            fn of(v: &CompactValue) -> Option<Self::Ref<'_>> {
                v.$of()
            }
            #[inline]
            fn of_mut(e: &mut Entry) -> Option<Self::Mut<'_>> {
                e.$of_mut()
            }
            fn into_value(self) -> CompactValue {
                CompactValue::$wrap(self)
            }
            fn is_empty(&self) -> bool {
                <$t>::is_empty(self)
            }
        }
    };
}

coll_type!(
    HashValue,
    HashRef<'a>,
    HashMut<'a>,
    Kind::Hash,
    as_hash,
    hash_mut,
    from_hash
);
coll_type!(
    SetValue,
    &'a SetValue,
    &'a mut SetValue,
    Kind::Set,
    as_set,
    set_mut,
    from_set
);
coll_type!(
    ZsetValue,
    &'a ZsetValue,
    &'a mut ZsetValue,
    Kind::ZSet,
    as_zset,
    zset_mut,
    from_zset
);
coll_type!(
    ListValue,
    &'a ListValue,
    &'a mut ListValue,
    Kind::List,
    as_list,
    list_mut,
    from_list
);

impl CollType for Stream {
    const KIND: Kind = Kind::Stream;
    type Ref<'a> = &'a Stream;
    type Mut<'a> = &'a mut Stream;
    #[inline]
    fn of(v: &CompactValue) -> Option<&Stream> {
        v.as_stream()
    }
    #[inline]
    fn of_mut(e: &mut Entry) -> Option<&mut Stream> {
        e.stream_mut()
    }
    fn into_value(self) -> CompactValue {
        CompactValue::from_stream(self)
    }
    /// Never: an empty stream is a value of its own (see the module docs).
    fn is_empty(&self) -> bool {
        false
    }
}

/// Read lookup (counts a hit or miss, touches the eviction byte): the value
/// if the key holds a `T`, `Ok(None)` if the key does not exist.
pub fn read<'a, T: CollType>(
    p: &'a mut Partition,
    db: usize,
    key: &Key,
    now_ms: u64,
) -> Result<Option<T::Ref<'a>>, WrongType> {
    match p.get_read(db, key, now_ms) {
        None => Ok(None),
        Some(e) => T::of(e.value()).map(Some).ok_or(WrongType),
    }
}

/// Write lookup (no statistics): the value if the key holds a `T`.
pub fn write<'a, T: CollType>(
    p: &'a mut Partition,
    db: usize,
    key: &Key,
    now_ms: u64,
) -> Result<Option<T::Mut<'a>>, WrongType> {
    match p.get(db, key, now_ms) {
        None => Ok(None),
        Some(e) => T::of_mut(e).map(Some).ok_or(WrongType),
    }
}

/// Type check only: `Err` if the key exists with another type.
pub fn check<T: CollType>(
    p: &mut Partition,
    db: usize,
    key: &Key,
    now_ms: u64,
) -> Result<bool, WrongType> {
    match p.get(db, key, now_ms) {
        None => Ok(false),
        Some(e) if T::of(e.value()).is_some() => Ok(true),
        Some(_) => Err(WrongType),
    }
}

/// Write lookup that creates the key with `make()` when it is missing.
/// Returns the value and whether it was just created.
pub fn write_or_create<'a, T: CollType>(
    p: &'a mut Partition,
    db: usize,
    key: &Key,
    now_ms: u64,
    make: impl FnOnce() -> T,
) -> Result<(T::Mut<'a>, bool), WrongType> {
    let created = !check::<T>(p, db, key, now_ms)?;
    if created {
        p.insert(db, key, make().into_value(), None, now_ms);
    }
    let e = p
        .get(db, key, now_ms)
        .expect("key just checked or inserted");
    Ok((T::of_mut(e).expect("type just checked"), created))
}

/// Deletes `key` if it holds an empty `T`; returns true if it did.
pub fn remove_if_empty<T: CollType>(p: &mut Partition, db: usize, key: &Key, now_ms: u64) -> bool {
    let empty =
        matches!(p.get(db, key, now_ms), Some(e) if T::of(e.value()).is_some_and(|v| v.is_empty()));
    if empty {
        p.remove(db, key, now_ms);
    }
    empty
}

/// Stores a freshly built value under `key` (the STORE forms: SUNIONSTORE,
/// ZRANGESTORE, SORT STORE...), replacing whatever was there and dropping any
/// TTL; an empty value deletes the key instead. Returns true if a key
/// existed before.
pub fn store_value<T: CollType>(
    p: &mut Partition,
    db: usize,
    key: &Key,
    now_ms: u64,
    v: T,
) -> bool {
    if v.is_empty() {
        return p.remove(db, key, now_ms).is_some();
    }
    p.insert(db, key, v.into_value(), None, now_ms).is_some()
}
