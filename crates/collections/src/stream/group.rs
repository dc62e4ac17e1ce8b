//! Consumer groups: last-delivered ID, entries-read counter, the group's
//! pending entries list (PEL) and its consumers (each with its own PEL);
//! XGROUP, the lag / entries-read figures of XINFO and RDB restore. The
//! operations on the PELs (XREADGROUP, XACK, XPENDING, XCLAIM,
//! XAUTOCLAIM) are in `delivery`.
//!
//! Invariants (checked by `Group::check` in tests):
//! * every NACK of the group PEL names a live consumer slot, and that
//!   consumer's PEL holds the same ID; every consumer PEL ID is in the
//!   group PEL (the two views of Redis's shared `streamNACK`);
//! * `order` lists the live consumer slots sorted by name (Redis's rax
//!   order, used by XINFO CONSUMERS and XPENDING); `free` the empty slots;
//! * `consumers_heap` is the sum of the consumers' accounted bytes, so
//!   [`Group::heap_bytes`] is O(1).
//!
//! Times are milliseconds passed in by the caller (`now`), never read here.
//! `entries_read == None` is Redis's `SCG_INVALID_ENTRIES_READ` (-1).

use super::chunkmap::ChunkMap;
use super::{Stream, StreamError, StreamId};
use crate::mem::block_bytes;
use std::mem::size_of;

/// A pending entry: who has it, since when, how many deliveries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Nack {
    pub delivery_time: i64,
    pub delivery_count: u64,
    pub(super) consumer: u32,
}

/// A consumer of a group.
#[derive(Clone, Debug)]
pub struct Consumer {
    pub(super) name: Box<[u8]>,
    pub(super) seen_time: i64,
    pub(super) pel: ChunkMap<StreamId, ()>,
}

impl Consumer {
    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// Last time the consumer was used (`seen-time`; idle = now - this).
    pub fn seen_time(&self) -> i64 {
        self.seen_time
    }

    /// Number of entries pending for this consumer.
    pub fn pending(&self) -> usize {
        self.pel.len()
    }

    /// The consumer's pending IDs, ascending.
    pub fn pending_ids(&self) -> impl Iterator<Item = StreamId> + '_ {
        self.pel.iter().map(|(k, _)| *k)
    }

    fn heap_bytes(&self) -> usize {
        block_bytes(self.name.len()) + self.pel.heap_bytes()
    }
}

/// A consumer group.
#[derive(Debug)]
pub struct Group {
    name: Box<[u8]>,
    pub(super) last_id: StreamId,
    pub(super) entries_read: Option<u64>,
    pub(super) pel: ChunkMap<StreamId, Nack>,
    pub(super) slots: Vec<Option<Consumer>>,
    free: Vec<u32>,
    order: Vec<u32>,
    consumers_heap: usize,
}

impl Group {
    /// Offers the group's own blocks to the defragmenter (see
    /// [`crate::defrag`]): its name, consumer table and lists, each
    /// consumer's name and the index arrays of the PELs (not the PELs'
    /// entry arrays: a PEL may be long, and this is one step; the
    /// stream's later steps offer those, see `stream::defrag`).
    pub(crate) fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        d.boxed_slice(&mut self.name);
        self.pel.defrag_index(d);
        d.vec(&mut self.slots);
        d.vec(&mut self.free);
        d.vec(&mut self.order);
        for c in self.slots.iter_mut().flatten() {
            d.boxed_slice(&mut c.name);
            c.pel.defrag_index(d);
        }
    }
}

impl Group {
    /// The group's name and consumer table blocks a pass offers (tests).
    #[cfg(test)]
    pub(crate) fn defrag_blocks(&self) -> u64 {
        (!self.name.is_empty()) as u64
            + (self.slots.capacity() > 0) as u64
            + (self.free.capacity() > 0) as u64
            + (self.order.capacity() > 0) as u64
    }
}

/// XPENDING summary form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingSummary {
    pub count: u64,
    /// Smallest and greatest pending IDs (`None` when nothing is pending).
    pub bounds: Option<(StreamId, StreamId)>,
    /// (consumer, pending count) for consumers with pending entries, in
    /// name order.
    pub consumers: Vec<(Vec<u8>, u64)>,
}

/// One row of XPENDING's extended form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingEntry {
    pub id: StreamId,
    pub consumer: Vec<u8>,
    /// Milliseconds since the last delivery (never negative).
    pub idle: i64,
    pub delivery_count: u64,
}

/// XINFO GROUPS row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupInfo {
    pub name: Vec<u8>,
    pub consumers: u64,
    pub pending: u64,
    pub last_delivered_id: StreamId,
    /// `None` prints as nil.
    pub entries_read: Option<u64>,
    /// `None` prints as nil.
    pub lag: Option<i64>,
}

/// XINFO CONSUMERS row (Redis 7.0: name, pending, idle).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerInfo {
    pub name: Vec<u8>,
    pub pending: u64,
    /// `now - seen-time`.
    pub idle: i64,
}

/// XCLAIM options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClaimOptions {
    /// IDLE ms: delivery time = now - ms.
    pub idle: Option<i64>,
    /// TIME ms: delivery time (unix ms). The last of IDLE/TIME given wins;
    /// the caller resolves that into `idle` or `time`.
    pub time: Option<i64>,
    /// RETRYCOUNT.
    pub retry_count: Option<u64>,
    pub force: bool,
    pub justid: bool,
    /// LASTID: raises the group's last-delivered ID.
    pub last_id: Option<StreamId>,
}

/// XPENDING extended-form arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PendingQuery<'a> {
    /// Inclusive bounds (exclusive ones resolved by `parse_interval`).
    pub start: StreamId,
    pub end: StreamId,
    pub count: usize,
    /// Only this consumer's entries (an unknown consumer has none).
    pub consumer: Option<&'a [u8]>,
    /// IDLE filter in ms (0 = none).
    pub min_idle: i64,
}

/// XAUTOCLAIM arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AutoClaimOptions {
    pub min_idle: i64,
    /// Inclusive start (exclusive `(` resolved by `parse_interval`).
    pub start: StreamId,
    /// COUNT (default 100).
    pub count: usize,
    pub justid: bool,
}

/// XCLAIM result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Claim {
    /// Claimed IDs, in argument order (all exist in the stream).
    pub claimed: Vec<StreamId>,
}

/// XAUTOCLAIM result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AutoClaim {
    /// Cursor for the next call (0-0 when the scan is complete).
    pub next: StreamId,
    pub claimed: Vec<StreamId>,
    /// PEL entries whose stream entry was gone; removed from the PEL.
    pub deleted: Vec<StreamId>,
}

/// A clone owns new vectors: the consumers' accounted bytes are summed
/// again.
impl Clone for Group {
    fn clone(&self) -> Self {
        let slots = self.slots.clone();
        let consumers_heap = slots.iter().flatten().map(|c| c.heap_bytes()).sum();
        Group {
            name: self.name.clone(),
            last_id: self.last_id,
            entries_read: self.entries_read,
            pel: self.pel.clone(),
            slots,
            free: self.free.clone(),
            order: self.order.clone(),
            consumers_heap,
        }
    }
}

impl Group {
    fn new(name: &[u8], last_id: StreamId, entries_read: Option<u64>) -> Group {
        Group {
            name: name.into(),
            last_id,
            entries_read,
            pel: ChunkMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            order: Vec::new(),
            consumers_heap: 0,
        }
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    /// `last-delivered-id`.
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// `entries-read` (`None` = invalid, printed as nil).
    pub fn entries_read(&self) -> Option<u64> {
        self.entries_read
    }

    /// Number of pending entries.
    pub fn pending_len(&self) -> usize {
        self.pel.len()
    }

    pub fn consumer_count(&self) -> usize {
        self.order.len()
    }

    /// The group PEL in ID order, with each entry's consumer name.
    pub fn pending(&self) -> impl Iterator<Item = (StreamId, &Nack, &[u8])> + '_ {
        self.pel
            .iter()
            .map(move |(id, n)| (*id, n, self.consumer_at(n.consumer).name()))
    }

    /// The group PEL in ID order from the first entry `>= start`, with each
    /// entry's consumer name.
    pub fn pending_from(
        &self,
        start: StreamId,
    ) -> impl Iterator<Item = (StreamId, &Nack, &[u8])> + '_ {
        self.pel
            .iter_from(&start)
            .map(move |(id, n)| (*id, n, self.consumer_at(n.consumer).name()))
    }

    /// The pending entry `id` (delivery time and count; its consumer via
    /// [`Group::pending`] or the consumer's own list).
    pub fn nack(&self, id: StreamId) -> Option<&Nack> {
        self.pel.get(&id)
    }

    /// The pending entry `id` with its consumer's name.
    pub fn pending_entry(&self, id: StreamId) -> Option<(&Nack, &[u8])> {
        self.pel
            .get(&id)
            .map(|n| (n, self.consumer_at(n.consumer).name()))
    }

    /// Consumers in name order.
    pub fn consumers(&self) -> impl Iterator<Item = &Consumer> + '_ {
        self.order.iter().map(move |&i| self.consumer_at(i))
    }

    pub fn consumer(&self, name: &[u8]) -> Option<&Consumer> {
        self.find(name)
            .ok()
            .map(|k| self.consumer_at(self.order[k]))
    }

    pub(super) fn consumer_at(&self, slot: u32) -> &Consumer {
        self.slots[slot as usize]
            .as_ref()
            .expect("NACK names a freed consumer slot")
    }

    /// Index in `order` of `name`, or where it would go.
    fn find(&self, name: &[u8]) -> Result<usize, usize> {
        self.order
            .binary_search_by(|&i| self.consumer_at(i).name[..].cmp(name))
    }

    /// Bytes accounted to this group (name, PELs, consumer tables). O(1).
    pub fn heap_bytes(&self) -> usize {
        block_bytes(self.name.len())
            + self.pel.heap_bytes()
            + block_bytes(self.slots.capacity() * size_of::<Option<Consumer>>())
            + block_bytes(self.free.capacity() * 4)
            + block_bytes(self.order.capacity() * 4)
            + self.consumers_heap
    }

    /// Run `f` on a consumer's PEL keeping `consumers_heap` exact.
    pub(super) fn with_consumer<R>(&mut self, slot: u32, f: impl FnOnce(&mut Consumer) -> R) -> R {
        let c = self.slots[slot as usize].as_mut().expect("live consumer");
        let before = c.heap_bytes();
        let r = f(c);
        self.consumers_heap = self.consumers_heap + c.heap_bytes() - before;
        r
    }

    /// Look a consumer up (refreshing its seen-time unless `refresh` is
    /// false, as Redis's `SLC_DEFAULT` / `SLC_NO_REFRESH`).
    fn lookup(&mut self, name: &[u8], now: i64, refresh: bool) -> Option<u32> {
        let k = self.find(name).ok()?;
        let slot = self.order[k];
        if refresh {
            self.slots[slot as usize].as_mut().unwrap().seen_time = now;
        }
        Some(slot)
    }

    /// Create a consumer (seen-time = now); returns its slot, or `None` if
    /// it already exists.
    fn create(&mut self, name: &[u8], now: i64) -> Option<u32> {
        let at = self.find(name).err()?;
        let c = Consumer {
            name: name.into(),
            seen_time: now,
            pel: ChunkMap::new(),
        };
        self.consumers_heap += c.heap_bytes();
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(c);
                s
            }
            None => {
                self.slots.push(Some(c));
                (self.slots.len() - 1) as u32
            }
        };
        self.order.insert(at, slot);
        Some(slot)
    }

    pub(super) fn lookup_or_create(&mut self, name: &[u8], now: i64) -> u32 {
        match self.lookup(name, now, true) {
            Some(s) => s,
            None => self.create(name, now).unwrap(),
        }
    }

    /// Delete a consumer and its pending entries; returns how many it had.
    fn delete(&mut self, name: &[u8]) -> u64 {
        let Ok(k) = self.find(name) else {
            return 0;
        };
        let slot = self.order.remove(k);
        let c = self.slots[slot as usize].take().unwrap();
        self.consumers_heap -= c.heap_bytes();
        for (id, _) in c.pel.iter() {
            self.pel.remove(id);
        }
        self.free.push(slot);
        if self.order.is_empty() {
            self.slots = Vec::new();
            self.free = Vec::new();
            self.order = Vec::new();
        }
        c.pel.len() as u64
    }

    /// Give the pending entry `id` to `slot` (removing it from its previous
    /// owner's PEL).
    pub(super) fn reassign(&mut self, id: StreamId, slot: u32) {
        let old = self.pel.get(&id).unwrap().consumer;
        if old != slot {
            if old != u32::MAX {
                self.with_consumer(old, |c| c.pel.remove(&id));
            }
            self.with_consumer(slot, |c| c.pel.insert(id, ()));
            self.pel.get_mut(&id).unwrap().consumer = slot;
        }
    }

    /// Remove a pending entry from both PELs.
    pub(super) fn drop_nack(&mut self, id: StreamId) -> Option<Nack> {
        let n = self.pel.remove(&id)?;
        if n.consumer != u32::MAX {
            self.with_consumer(n.consumer, |c| c.pel.remove(&id));
        }
        Some(n)
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.pel.check();
        let mut heap = 0;
        let mut in_consumers = 0;
        for (k, w) in self.order.windows(2).map(|w| (w[0], w[1])).enumerate() {
            let _ = k;
            assert!(self.consumer_at(w.0).name < self.consumer_at(w.1).name);
        }
        for &slot in &self.order {
            let c = self.consumer_at(slot);
            c.pel.check();
            heap += c.heap_bytes();
            for (id, _) in c.pel.iter() {
                assert_eq!(self.pel.get(id).unwrap().consumer, slot);
                in_consumers += 1;
            }
        }
        assert_eq!(in_consumers, self.pel.len());
        assert_eq!(heap, self.consumers_heap);
        assert_eq!(
            self.order.len() + self.free.len(),
            self.slots.len(),
            "slots accounted"
        );
    }
}

impl Stream {
    /// Consumer groups in name order.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    pub fn group(&self, name: &[u8]) -> Option<&Group> {
        self.group_index(name).ok().map(|i| &self.groups[i])
    }

    fn group_index(&self, name: &[u8]) -> Result<usize, usize> {
        self.groups.binary_search_by(|g| g.name[..].cmp(name))
    }

    pub(crate) fn groups_table_bytes(&self) -> usize {
        block_bytes(self.groups.capacity() * size_of::<Group>())
    }

    /// Run `f` on group `name` with `groups_heap` kept exact. `f` gets the
    /// group and the stream's other fields through `StreamView`.
    pub(super) fn with_group<R>(
        &mut self,
        name: &[u8],
        f: impl FnOnce(&mut Group, &StreamView<'_>) -> R,
    ) -> Option<R> {
        let gi = self.group_index(name).ok()?;
        let mut groups = std::mem::take(&mut self.groups);
        let g = &mut groups[gi];
        let before = g.heap_bytes();
        let r = f(g, &StreamView { s: self });
        let after = g.heap_bytes();
        self.groups = groups;
        self.groups_heap = self.groups_heap + after - before;
        Some(r)
    }

    /// XGROUP CREATE (the caller resolved `$` to [`Stream::last_id`] and
    /// parsed ENTRIESREAD; `None` = not given / -1).
    pub fn create_group(
        &mut self,
        name: &[u8],
        last_id: StreamId,
        entries_read: Option<u64>,
    ) -> Result<(), StreamError> {
        let at = match self.group_index(name) {
            Ok(_) => return Err(StreamError::BusyGroup),
            Err(at) => at,
        };
        let before = self.groups_table_bytes();
        let g = Group::new(name, last_id, entries_read);
        self.groups_heap += g.heap_bytes();
        self.groups.insert(at, g);
        self.groups_heap = self.groups_heap + self.groups_table_bytes() - before;
        Ok(())
    }

    /// XGROUP DESTROY; true if the group existed.
    pub fn destroy_group(&mut self, name: &[u8]) -> bool {
        let Ok(gi) = self.group_index(name) else {
            return false;
        };
        let before = self.groups_table_bytes();
        let g = self.groups.remove(gi);
        self.groups_heap -= g.heap_bytes();
        if self.groups.is_empty() {
            self.groups = Vec::new();
        }
        self.groups_heap = self.groups_heap + self.groups_table_bytes() - before;
        true
    }

    /// XGROUP SETID (`entries_read` None = not given, which Redis stores as
    /// -1). False when the group does not exist.
    pub fn set_group_id(&mut self, name: &[u8], id: StreamId, entries_read: Option<u64>) -> bool {
        self.with_group(name, |g, _| {
            g.last_id = id;
            g.entries_read = entries_read;
        })
        .is_some()
    }

    /// XGROUP CREATECONSUMER: `Some(true)` if created, `Some(false)` if it
    /// existed, `None` without the group.
    pub fn create_consumer(&mut self, group: &[u8], consumer: &[u8], now: i64) -> Option<bool> {
        self.with_group(group, |g, _| g.create(consumer, now).is_some())
    }

    /// XGROUP DELCONSUMER: the consumer's pending count (0 if it did not
    /// exist), `None` without the group.
    pub fn delete_consumer(&mut self, group: &[u8], consumer: &[u8]) -> Option<u64> {
        self.with_group(group, |g, _| g.delete(consumer))
    }

    /// Look up (refreshing seen-time) or create a consumer, as XREADGROUP
    /// does before serving or blocking. `None` without the group.
    pub fn touch_consumer(&mut self, group: &[u8], consumer: &[u8], now: i64) -> Option<()> {
        self.with_group(group, |g, _| {
            g.lookup_or_create(consumer, now);
        })
    }

    /// The group's lag as XINFO GROUPS prints it (`None` = nil), following
    /// Redis 7.0's `streamCGLag`.
    pub fn group_lag(&self, g: &Group) -> Option<i64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if let Some(r) = g.entries_read {
            if !self.has_tombstones_from(g.last_id) {
                return Some(self.entries_added as i64 - r as i64);
            }
        }
        self.estimate_entries_read(g.last_id)
            .map(|r| self.entries_added as i64 - r as i64)
    }

    /// XINFO GROUPS rows.
    pub fn groups_info(&self) -> Vec<GroupInfo> {
        self.groups
            .iter()
            .map(|g| GroupInfo {
                name: g.name.to_vec(),
                consumers: g.consumer_count() as u64,
                pending: g.pending_len() as u64,
                last_delivered_id: g.last_id,
                entries_read: g.entries_read,
                lag: self.group_lag(g),
            })
            .collect()
    }

    /// XINFO CONSUMERS rows, `None` without the group.
    pub fn consumers_info(&self, group: &[u8], now: i64) -> Option<Vec<ConsumerInfo>> {
        let g = self.group(group)?;
        Some(
            g.consumers()
                .map(|c| ConsumerInfo {
                    name: c.name.to_vec(),
                    pending: c.pending() as u64,
                    idle: now.saturating_sub(c.seen_time),
                })
                .collect(),
        )
    }

    /// Restore one PEL entry (RDB load): the consumer is created if needed
    /// with `seen_time` 0 until [`Stream::load_consumer`] sets it. False
    /// without the group or when the ID is already pending.
    pub fn load_pending(
        &mut self,
        group: &[u8],
        id: StreamId,
        consumer: &[u8],
        delivery_time: i64,
        delivery_count: u64,
    ) -> bool {
        self.with_group(group, |g, _| {
            if g.pel.contains_key(&id) {
                return false;
            }
            let slot = match g.lookup(consumer, 0, false) {
                Some(s) => s,
                None => g.create(consumer, 0).unwrap(),
            };
            g.pel.insert(
                id,
                Nack {
                    delivery_time,
                    delivery_count,
                    consumer: slot,
                },
            );
            g.with_consumer(slot, |c| c.pel.insert(id, ()));
            true
        })
        .unwrap_or(false)
    }

    /// Restore a consumer and its seen-time (RDB load). False without the
    /// group.
    pub fn load_consumer(&mut self, group: &[u8], consumer: &[u8], seen_time: i64) -> bool {
        self.with_group(group, |g, _| {
            let slot = match g.lookup(consumer, 0, false) {
                Some(s) => s,
                None => g.create(consumer, 0).unwrap(),
            };
            g.slots[slot as usize].as_mut().unwrap().seen_time = seen_time;
        })
        .is_some()
    }
}

/// Read access to the stream while one of its groups is borrowed mutably.
pub(crate) struct StreamView<'a> {
    pub(super) s: &'a Stream,
}
