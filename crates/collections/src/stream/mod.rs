//! The stream value type (Redis 7.0 semantics), data structure only: the
//! command layer parses arguments with [`id`], calls these operations with
//! the current time passed in (`now_ms`), and formats the replies.
//!
//! Layout:
//! * entries live in nodes: listpacks in Redis 7.0's stream node format,
//!   byte for byte ([`node`] documents it), so RDB `STREAM_LISTPACKS_2`
//!   (what 7.0 writes) can copy nodes as they are ([`Stream::nodes`],
//!   [`Stream::from_nodes`]);
//! * each node is one heap block of its allocator size class with the
//!   listpack in its prefix (`node::NodeBuf`, 16 bytes), indexed by its
//!   master ID (the first entry's ID when the node was created) in a
//!   [`ChunkMap`] instead of Redis's radix tree: 32 bytes per node in the
//!   index, against ~44 for Redis's rax (measured: used_memory minus the
//!   listpacks' size classes, 1M entries);
//! * consumer groups, their pending entries lists and consumers are in
//!   [`group`]; deliveries, acknowledgements and claims in `delivery`.
//!
//! Invariants (checked by `check()` in tests):
//! * every node holds at least one entry; its live count may be 0 (as in
//!   Redis, exact MINID trimming can tombstone every live entry of a node
//!   whose last entry is an older tombstone at or above the MINID); entries
//!   ascend, every entry of a node is below the next node's master ID;
//! * `length` is the sum of the nodes' live counts; `last_id` is at least
//!   every entry's ID; `first_id` is the first live entry's ID (0-0 when
//!   empty), as Redis's `first_id` is maintained;
//! * `lp_heap` is the sum of the nodes' block sizes, `groups_heap` the
//!   sum of the groups' accounted bytes; [`Stream::heap_bytes`] adds the
//!   index and is O(1). Sealed nodes (a new node was started after them)
//!   are shrunk to their size class, as Redis's `lpShrinkToFit`.
//!
//! Node splitting follows Redis 7.0's `streamAppendItem`: a new node starts
//! when `bytes + sum(field and value lengths) >= stream-node-max-bytes`
//! (0 or above 1 GiB means 1 GiB) or when `count + deleted >=
//! stream-node-max-entries` (0 = no limit).

pub mod chunkmap;
mod defrag;
mod delivery;
pub mod group;
pub mod id;
pub mod node;
#[cfg(test)]
mod tests;

pub use chunkmap::ChunkMap;
#[cfg(test)]
pub(crate) use defrag::PEL_CHUNKS_PER_STEP;
pub use group::{
    AutoClaim, AutoClaimOptions, Claim, ClaimOptions, Consumer, ConsumerInfo, Group, GroupInfo,
    Nack, PendingEntry, PendingQuery, PendingSummary,
};
pub use id::{
    parse_add_id, parse_id, parse_interval, parse_strict_id, AddId, Bound, StreamError, StreamId,
};
pub use node::{Fields, InvalidNode};

use crate::listpack::Listpack;
use node::{Loc, Lp, Master, NodeBuf};

/// `STREAM_LISTPACK_MAX_SIZE`: no node grows past 1 GiB, and no single
/// entry may carry more than that.
pub const NODE_MAX_SIZE: usize = 1 << 30;

/// `stream-node-max-bytes` and `stream-node-max-entries`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeLimits {
    pub max_bytes: usize,
    pub max_entries: usize,
}

impl Default for NodeLimits {
    fn default() -> Self {
        NodeLimits {
            max_bytes: 4096,
            max_entries: 100,
        }
    }
}

/// A trimming request (XADD/XTRIM MAXLEN or MINID).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrimTo {
    /// Keep at most this many entries.
    MaxLen(u64),
    /// Drop entries with IDs below this one.
    MinId(StreamId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trim {
    pub to: TrimTo,
    /// `~`: remove whole nodes only.
    pub approx: bool,
    /// Most entries to remove; 0 = no limit.
    pub limit: u64,
}

impl Trim {
    /// The LIMIT Redis uses when none is given: `100 *
    /// stream-node-max-entries` with `~`, none for exact trimming.
    pub fn default_limit(approx: bool, limits: NodeLimits) -> u64 {
        if approx {
            100 * limits.max_entries as u64
        } else {
            0
        }
    }
}

/// A stream.
#[derive(Debug, Default)]
pub struct Stream {
    nodes: ChunkMap<StreamId, NodeBuf>,
    length: u64,
    last_id: StreamId,
    first_id: StreamId,
    max_deleted: StreamId,
    entries_added: u64,
    groups: Vec<Group>,
    lp_heap: usize,
    groups_heap: usize,
}

/// Deep copy (COPY): the copy's vectors have their own capacities, so its
/// accounted bytes are summed again.
impl Clone for Stream {
    fn clone(&self) -> Self {
        let nodes = self.nodes.clone();
        let lp_heap = nodes.iter().map(|(_, nb)| nb.heap()).sum();
        let groups = self.groups.clone();
        let mut s = Stream {
            nodes,
            length: self.length,
            last_id: self.last_id,
            first_id: self.first_id,
            max_deleted: self.max_deleted,
            entries_added: self.entries_added,
            groups,
            lp_heap,
            groups_heap: 0,
        };
        s.groups_heap =
            s.groups_table_bytes() + s.groups.iter().map(|g| g.heap_bytes()).sum::<usize>();
        s
    }
}

/// One entry, borrowed from its node.
#[derive(Clone, Copy, Debug)]
pub struct EntryRef<'a> {
    pub id: StreamId,
    lp: Lp<'a>,
    master: Master,
    loc: Loc,
}

impl<'a> EntryRef<'a> {
    /// Number of field/value pairs.
    pub fn len(&self) -> usize {
        self.loc.nfields
    }

    pub fn is_empty(&self) -> bool {
        self.loc.nfields == 0
    }

    /// The (field, value) pairs in order.
    pub fn fields(&self) -> Fields<'a> {
        Fields::new(self.lp, &self.master, &self.loc)
    }

    /// The pairs copied out.
    pub fn to_vec(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        self.fields()
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect()
    }
}

impl Stream {
    pub fn new() -> Stream {
        Stream::default()
    }

    /// Live entries (XLEN).
    pub fn len(&self) -> u64 {
        self.length
    }

    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// `last-generated-id`.
    pub fn last_id(&self) -> StreamId {
        self.last_id
    }

    /// `recorded-first-entry-id`.
    pub fn first_id(&self) -> StreamId {
        self.first_id
    }

    /// `max-deleted-entry-id`.
    pub fn max_deleted_id(&self) -> StreamId {
        self.max_deleted
    }

    /// `entries-added`.
    pub fn entries_added(&self) -> u64 {
        self.entries_added
    }

    /// Number of nodes (`radix-tree-keys`).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Heap bytes owned by the stream (nodes, index, groups), not counting
    /// the `Stream` struct itself. O(1).
    pub fn heap_bytes(&self) -> usize {
        self.nodes.heap_bytes() + self.lp_heap + self.groups_heap
    }

    /// The nodes in ID order: (master ID, listpack bytes), for RDB.
    pub fn nodes(&self) -> impl Iterator<Item = (StreamId, &[u8])> + '_ {
        self.nodes.iter().map(|(k, nb)| (*k, nb.lp().as_bytes()))
    }

    /// Rebuild a stream from RDB parts, checking every node deeply (see
    /// `node::validate`) and the metadata against the nodes. Groups are
    /// added afterwards with [`Stream::create_group`] and
    /// [`Stream::load_pending`].
    pub fn from_nodes(
        nodes: Vec<(StreamId, Vec<u8>)>,
        length: u64,
        last_id: StreamId,
        first_id: StreamId,
        max_deleted: StreamId,
        entries_added: u64,
    ) -> Result<Stream, InvalidNode> {
        if entries_added < length {
            return Err(InvalidNode("entries added below length"));
        }
        let mut s = Stream::new();
        let mut prev: Option<StreamId> = None;
        let mut total = 0u64;
        for (master_id, bytes) in nodes {
            // A node's master ID must be above every entry of the previous
            // node, or seeks by master ID would skip entries.
            if let Some(p) = prev {
                if master_id <= p {
                    return Err(InvalidNode("node keys not ascending"));
                }
            }
            let lp = Listpack::from_bytes(bytes).map_err(|e| InvalidNode(e.0))?;
            let (live, last) = node::validate(Lp::of(&lp), master_id, prev)?;
            total += live;
            prev = Some(last);
            let nb = NodeBuf::from_lp(lp);
            s.lp_heap += nb.heap();
            s.nodes.insert(master_id, nb);
        }
        if total != length {
            return Err(InvalidNode("stream length mismatch"));
        }
        s.length = length;
        // Only live entries are bounded by the last ID: XSETID may move it
        // below deleted entries still in their node (down to the last live
        // entry), and Redis saves such streams as they are.
        if s.last_valid_id() > last_id {
            return Err(InvalidNode("entry above last id"));
        }
        s.last_id = last_id;
        s.first_id = first_id;
        s.max_deleted = max_deleted;
        s.entries_added = entries_added;
        Ok(s)
    }

    /// XADD: append an entry (`fields` = field, value, field, value...;
    /// the caller guarantees an even, non-zero count). Trimming is a
    /// separate call ([`Stream::trim`]), as in Redis.
    pub fn add<F: AsRef<[u8]>>(
        &mut self,
        req: AddId,
        fields: &[F],
        now_ms: i64,
        limits: NodeLimits,
    ) -> Result<StreamId, StreamError> {
        debug_assert!(fields.len().is_multiple_of(2));
        if req == AddId::Explicit(StreamId::MIN) {
            return Err(StreamError::XaddIdZero);
        }
        if self.last_id == StreamId::MAX {
            return Err(StreamError::Exhausted);
        }
        let last = self.last_id;
        let id = match req {
            AddId::Auto => {
                let ms = now_ms.max(0) as u64;
                if ms > last.ms {
                    StreamId::new(ms, 0)
                } else {
                    last.next().ok_or(StreamError::XaddIdNotGreater)?
                }
            }
            AddId::Partial(ms) => {
                if ms == last.ms {
                    if last.seq == u64::MAX {
                        // Redis 7.0.15 replies with a stale errno here.
                        return Err(StreamError::ElementsTooLarge);
                    }
                    StreamId::new(ms, last.seq + 1)
                } else {
                    StreamId::new(ms, 0)
                }
            }
            AddId::Explicit(id) => id,
        };
        if id <= last {
            return Err(StreamError::XaddIdNotGreater);
        }
        let total: usize = fields.iter().map(|f| f.as_ref().len()).sum();
        if total > NODE_MAX_SIZE {
            return Err(StreamError::ElementsTooLarge);
        }
        let max_bytes = if limits.max_bytes == 0 || limits.max_bytes > NODE_MAX_SIZE {
            NODE_MAX_SIZE
        } else {
            limits.max_bytes
        };
        let mut appended = false;
        if let Some(p) = self.nodes.last_pos() {
            let (&master_id, nb) = self.nodes.at_mut(p);
            let lp = nb.lp();
            let full = lp.as_bytes().len() + total >= max_bytes
                || (limits.max_entries != 0
                    && (node::live_count(lp) + node::deleted_count(lp)) as u64
                        >= limits.max_entries as u64);
            let before = nb.heap();
            if full {
                nb.with_lp(|lp| lp.shrink_to_fit());
            } else {
                nb.with_lp(|lp| node::append(lp, master_id, id, fields));
                appended = true;
            }
            self.lp_heap = self.lp_heap + nb.heap() - before;
        }
        if !appended {
            let nb = NodeBuf::from_lp(node::new_node(fields));
            self.lp_heap += nb.heap();
            self.nodes.insert(id, nb);
        }
        self.length += 1;
        self.entries_added += 1;
        self.last_id = id;
        if self.length == 1 {
            self.first_id = id;
        }
        Ok(id)
    }

    /// XTRIM / XADD trimming; returns the number of entries removed.
    pub fn trim(&mut self, t: Trim) -> u64 {
        let mut deleted = 0u64;
        loop {
            if let TrimTo::MaxLen(n) = t.to {
                if self.length <= n {
                    break;
                }
            }
            let Some(p) = self.nodes.first_pos() else {
                break;
            };
            let (&master_id, nb) = self.nodes.at(p);
            let lp = nb.lp();
            let entries = node::live_count(lp) as u64;
            if t.limit != 0 && deleted + entries > t.limit {
                break;
            }
            let remove = match t.to {
                TrimTo::MaxLen(n) => self.length - entries >= n,
                TrimTo::MinId(min) => {
                    let m = node::master(lp);
                    let last = node::last_entry(lp, &m, master_id).map_or(StreamId::MIN, |l| l.id);
                    last < min
                }
            };
            if remove {
                let (_, nb) = self.nodes.remove_at(p);
                self.lp_heap -= nb.heap();
                self.length -= entries;
                deleted += entries;
                continue;
            }
            if t.approx {
                break;
            }
            // Mark entries inside the first node deleted.
            let length = &mut self.length;
            let (_, nb) = self.nodes.at_mut(p);
            let before = nb.heap();
            let from_lp = nb.with_lp(|lp| {
                let m = node::master(Lp::of(lp));
                let mut off = m.first_entry;
                let mut from_lp = 0i64;
                while off < lp.end_offset() {
                    let loc = node::entry_at(Lp::of(lp), &m, master_id, off);
                    let stop = match t.to {
                        TrimTo::MaxLen(n) => *length <= n,
                        TrimTo::MinId(min) => loc.id >= min,
                    };
                    if stop {
                        break;
                    }
                    if !loc.deleted() {
                        // Same-size rewrite: flags 0..=3 are one byte.
                        lp.replace_enc_at_offset(
                            loc.flags_off,
                            crate::listpack::Enc::Int(loc.flags | node::FLAG_DELETED),
                        );
                        from_lp += 1;
                        *length -= 1;
                    }
                    off = loc.end;
                }
                let count = node::live_count(Lp::of(lp));
                let dels = node::deleted_count(Lp::of(lp));
                node::set_counters(lp, count - from_lp, dels + from_lp);
                from_lp
            });
            self.lp_heap = self.lp_heap + nb.heap() - before;
            deleted += from_lp as u64;
            break;
        }
        if self.length == 0 {
            self.first_id = StreamId::MIN;
        } else if deleted > 0 {
            self.first_id = self.first_entry().map_or(StreamId::MAX, |e| e.id);
        }
        deleted
    }

    /// Entries with `start <= id <= end` (inclusive; exclusive bounds are
    /// resolved by [`parse_interval`]), ascending or, with `rev`, descending.
    /// Tombstones are skipped. Take `COUNT` with `.take(n)`.
    pub fn range(&self, start: StreamId, end: StreamId, rev: bool) -> Range<'_> {
        Range::new(self, start, end, rev)
    }

    /// The live entry with this ID.
    pub fn get(&self, id: StreamId) -> Option<EntryRef<'_>> {
        self.range(id, id, false).next()
    }

    /// First live entry.
    pub fn first_entry(&self) -> Option<EntryRef<'_>> {
        self.range(StreamId::MIN, StreamId::MAX, false).next()
    }

    /// Last live entry.
    pub fn last_entry(&self) -> Option<EntryRef<'_>> {
        self.range(StreamId::MIN, StreamId::MAX, true).next()
    }

    /// The ID of the last live entry (Redis's `streamLastValidID`), 0-0
    /// when empty.
    pub fn last_valid_id(&self) -> StreamId {
        self.last_entry().map_or(StreamId::MIN, |e| e.id)
    }

    /// Locate a live entry: (node position, its master layout, entry).
    fn find_live(&self, id: StreamId) -> Option<(chunkmap::Pos, Master, Loc)> {
        let p = self.nodes.pos_le(&id)?;
        let (&master_id, nb) = self.nodes.at(p);
        let lp = nb.lp();
        let m = node::master(lp);
        let mut off = m.first_entry;
        while off < lp.end_offset() {
            let loc = node::entry_at(lp, &m, master_id, off);
            if loc.id == id {
                return (!loc.deleted()).then_some((p, m, loc));
            }
            if loc.id > id {
                return None;
            }
            off = loc.end;
        }
        None
    }

    /// True if a live entry has this ID.
    pub fn contains(&self, id: StreamId) -> bool {
        self.find_live(id).is_some()
    }

    /// Delete one entry (tombstone, or the whole node with its last live
    /// entry). Does not update `first_id`/`max_deleted` (see
    /// [`Stream::delete`]).
    fn delete_one(&mut self, id: StreamId) -> bool {
        let Some((p, _m, loc)) = self.find_live(id) else {
            return false;
        };
        let (_, nb) = self.nodes.at_mut(p);
        let before = nb.heap();
        if nb.with_lp(|lp| node::mark_deleted(lp, &loc)) {
            self.lp_heap = self.lp_heap + nb.heap() - before;
        } else {
            let (_, nb) = self.nodes.remove_at(p);
            self.lp_heap -= nb.heap();
        }
        self.length -= 1;
        true
    }

    /// XDEL: delete these IDs; returns how many existed. Updates
    /// `max-deleted-entry-id` and the recorded first ID as Redis 7.0 does.
    pub fn delete(&mut self, ids: &[StreamId]) -> u64 {
        let mut deleted = 0;
        let mut first_gone = false;
        for &id in ids {
            if self.delete_one(id) {
                if id == self.first_id {
                    first_gone = true;
                }
                if id > self.max_deleted {
                    self.max_deleted = id;
                }
                deleted += 1;
            }
        }
        if deleted > 0 {
            if self.length == 0 {
                self.first_id = StreamId::MIN;
            } else if first_gone {
                self.first_id = self.first_entry().map_or(StreamId::MAX, |e| e.id);
            }
        }
        deleted
    }

    /// XSETID (the key must exist; the caller replies "no such key"
    /// otherwise). `entries_added` / `max_deleted` are the ENTRIESADDED and
    /// MAXDELETEDID options. Checks in Redis 7.0.15's order.
    pub fn set_id(
        &mut self,
        id: StreamId,
        entries_added: Option<u64>,
        max_deleted: Option<StreamId>,
    ) -> Result<(), StreamError> {
        if let Some(md) = max_deleted {
            if id < md {
                return Err(StreamError::SetIdBelowGivenMaxDeleted);
            }
        }
        if self.length > 0 {
            if id < self.last_valid_id() {
                return Err(StreamError::SetIdBelowTop);
            }
            if let Some(n) = entries_added {
                if self.length > n {
                    return Err(StreamError::SetIdEntriesAddedBelowLength);
                }
            }
        }
        self.last_id = id;
        if let Some(n) = entries_added {
            self.entries_added = n;
        }
        if let Some(md) = max_deleted {
            if !md.is_zero() {
                self.max_deleted = md;
            }
        }
        Ok(())
    }

    /// Redis's `streamRangeHasTombstones(s, start, NULL)`: may a tombstone
    /// lie at or after `start`?
    fn has_tombstones_from(&self, start: StreamId) -> bool {
        if self.length == 0 || self.max_deleted.is_zero() {
            return false;
        }
        if self.first_id > self.max_deleted {
            return false;
        }
        start <= self.max_deleted
    }

    /// Redis's `streamEstimateDistanceFromFirstEverEntry`: the logical read
    /// counter of `id`, or `None` when it cannot be known.
    pub fn estimate_entries_read(&self, id: StreamId) -> Option<u64> {
        if self.entries_added == 0 {
            return Some(0);
        }
        if self.length == 0 && id <= self.last_id {
            return Some(self.entries_added);
        }
        if id == self.last_id {
            return Some(self.entries_added);
        }
        if id > self.last_id {
            return None;
        }
        if self.max_deleted.is_zero() || self.max_deleted < self.first_id {
            if id < self.first_id {
                return Some(self.entries_added - self.length);
            }
            if id == self.first_id {
                return Some(self.entries_added - self.length + 1);
            }
        }
        None
    }

    #[cfg(test)]
    pub(crate) fn check(&self) {
        self.nodes.check();
        let mut total = 0u64;
        let mut heap = 0;
        let mut prev: Option<StreamId> = None;
        for (k, nb) in self.nodes.iter() {
            Listpack::validate_bytes(nb.lp().as_bytes()).unwrap();
            let (live, last) = node::validate(nb.lp(), *k, prev).unwrap();
            total += live;
            prev = Some(last);
            heap += nb.heap();
        }
        assert_eq!(total, self.length);
        assert_eq!(heap, self.lp_heap);
        if let Some(p) = prev {
            assert!(p <= self.last_id);
        }
        let first = self.first_entry().map_or(StreamId::MIN, |e| e.id);
        assert_eq!(first, self.first_id);
        let gh: usize = self.groups.iter().map(|g| g.heap_bytes()).sum();
        assert_eq!(
            gh + crate::mem::block_bytes(self.groups.capacity() * std::mem::size_of::<Group>()),
            self.groups_heap
        );
        for g in &self.groups {
            g.check();
        }
    }
}

/// Iterator of [`Stream::range`].
pub struct Range<'a> {
    s: &'a Stream,
    start: StreamId,
    end: StreamId,
    rev: bool,
    /// Current node and the offset of the next entry to look at (forward)
    /// or of the entry after the next one (backward).
    cur: Option<(chunkmap::Pos, Master, usize)>,
    done: bool,
}

impl<'a> Range<'a> {
    fn new(s: &'a Stream, start: StreamId, end: StreamId, rev: bool) -> Range<'a> {
        let pos = if !rev {
            s.nodes.pos_le(&start).or_else(|| s.nodes.first_pos())
        } else {
            s.nodes.pos_le(&end).or_else(|| s.nodes.last_pos())
        };
        let cur = pos.map(|p| {
            let lp = s.nodes.at(p).1.lp();
            let m = node::master(lp);
            let off = if rev { lp.end_offset() } else { m.first_entry };
            (p, m, off)
        });
        Range {
            s,
            start,
            end,
            rev,
            cur,
            done: start > end,
        }
    }
}

impl<'a> Iterator for Range<'a> {
    type Item = EntryRef<'a>;

    fn next(&mut self) -> Option<EntryRef<'a>> {
        if self.done {
            return None;
        }
        loop {
            let (p, m, off) = self.cur?;
            let (&master_id, nb) = self.s.nodes.at(p);
            let lp = nb.lp();
            let loc = if !self.rev {
                (off < lp.end_offset()).then(|| node::entry_at(lp, &m, master_id, off))
            } else {
                node::prev_entry(lp, &m, master_id, off)
            };
            let Some(loc) = loc else {
                let np = if self.rev {
                    self.s.nodes.prev_pos(p)
                } else {
                    self.s.nodes.next_pos(p)
                };
                self.cur = np.map(|q| {
                    let lp = self.s.nodes.at(q).1.lp();
                    let m = node::master(lp);
                    let off = if self.rev {
                        lp.end_offset()
                    } else {
                        m.first_entry
                    };
                    (q, m, off)
                });
                if self.cur.is_none() {
                    self.done = true;
                    return None;
                }
                continue;
            };
            self.cur = Some((p, m, if self.rev { loc.flags_off } else { loc.end }));
            if !self.rev {
                if loc.id < self.start || loc.deleted() {
                    continue;
                }
                if loc.id > self.end {
                    self.done = true;
                    return None;
                }
            } else {
                if loc.id > self.end || loc.deleted() {
                    continue;
                }
                if loc.id < self.start {
                    self.done = true;
                    return None;
                }
            }
            return Some(EntryRef {
                id: loc.id,
                lp,
                master: m,
                loc,
            });
        }
    }
}
