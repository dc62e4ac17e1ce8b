//! Deliveries and the pending entries lists: XREADGROUP (new entries and
//! history), XACK, XPENDING, XCLAIM and XAUTOCLAIM on [`Stream`], with
//! Redis 7.0's rules. The group and consumer structures and their
//! invariants are in [`super::group`].

use super::group::{
    AutoClaim, AutoClaimOptions, Claim, ClaimOptions, Nack, PendingEntry, PendingQuery,
    PendingSummary,
};
use super::{EntryRef, Stream, StreamId};

impl Stream {
    /// XREADGROUP with `>`: deliver up to `count` (0 = no limit) entries
    /// after the group's last-delivered ID to `consumer`, calling `emit`
    /// for each. As in Redis, nothing happens (the consumer is not even
    /// looked up) unless the last live entry is past the group's
    /// last-delivered ID; otherwise the consumer is looked up (seen-time
    /// refreshed) or created first. Advances the
    /// last-delivered ID and entries-read as Redis 7.0; creates PEL
    /// entries unless `noack` (an entry already pending moves to this
    /// consumer with a fresh delivery time and count 1). Returns the number
    /// delivered, `None` without the group.
    pub fn read_group_new(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        count: usize,
        noack: bool,
        now: i64,
        mut emit: impl FnMut(EntryRef<'_>),
    ) -> Option<usize> {
        self.with_group(group, |g, v| {
            // Redis serves (and only then looks up or creates the consumer)
            // when the last live entry is past the group's position.
            if v.s.last_valid_id() <= g.last_id || v.s.length == 0 {
                return 0;
            }
            let slot = g.lookup_or_create(consumer, now);
            let Some(start) = g.last_id.next() else {
                return 0;
            };
            let mut n = 0;
            for e in v.s.range(start, StreamId::MAX, false) {
                if count != 0 && n >= count {
                    break;
                }
                if e.id > g.last_id {
                    if g.entries_read.is_some() && !v.s.has_tombstones_from(e.id) {
                        g.entries_read = g.entries_read.map(|r| r + 1);
                    } else if v.s.entries_added != 0 {
                        g.entries_read = v.s.estimate_entries_read(e.id);
                    }
                    g.last_id = e.id;
                }
                emit(e);
                n += 1;
                if !noack {
                    let nack = Nack {
                        delivery_time: now,
                        delivery_count: 1,
                        consumer: slot,
                    };
                    match g.pel.get_mut(&e.id) {
                        None => {
                            g.pel.insert(e.id, nack);
                            g.with_consumer(slot, |c| c.pel.insert(e.id, ()));
                        }
                        Some(old) => {
                            old.delivery_time = now;
                            old.delivery_count = 1;
                            g.reassign(e.id, slot);
                        }
                    }
                }
            }
            n
        })
    }

    /// XREADGROUP with an ID: the consumer's own pending entries with IDs
    /// above `after` (the argument; as in Redis the maximum ID wraps to
    /// 0-0, i.e. everything), up to `count` (0 = no limit). For each, `emit`
    /// gets the ID and the entry, or `None` when the entry was deleted
    /// (Redis replies with the ID and a nil). Delivered (existing) entries
    /// get delivery time = now and their count incremented. The consumer is
    /// looked up or created first. `None` without the group.
    pub fn read_group_history(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        after: StreamId,
        count: usize,
        now: i64,
        mut emit: impl FnMut(StreamId, Option<EntryRef<'_>>),
    ) -> Option<usize> {
        let start = after.next().unwrap_or(StreamId::MIN);
        self.with_group(group, |g, v| {
            let slot = g.lookup_or_create(consumer, now);
            let ids: Vec<StreamId> = {
                let c = g.slots[slot as usize].as_ref().unwrap();
                let it = c.pel.iter_from(&start).map(|(k, _)| *k);
                if count == 0 {
                    it.collect()
                } else {
                    it.take(count).collect()
                }
            };
            for &id in &ids {
                match v.s.get(id) {
                    Some(e) => {
                        emit(id, Some(e));
                        let n = g.pel.get_mut(&id).unwrap();
                        n.delivery_time = now;
                        n.delivery_count += 1;
                    }
                    None => emit(id, None),
                }
            }
            ids.len()
        })
    }

    /// XACK: how many of `ids` were pending (and are no longer). `None`
    /// without the group.
    pub fn ack(&mut self, group: &[u8], ids: &[StreamId]) -> Option<u64> {
        self.with_group(group, |g, _| {
            ids.iter().filter(|&&id| g.drop_nack(id).is_some()).count() as u64
        })
    }

    /// XPENDING summary.
    pub fn pending_summary(&self, group: &[u8]) -> Option<PendingSummary> {
        let g = self.group(group)?;
        let bounds = match (g.pel.first(), g.pel.last()) {
            (Some(a), Some(b)) => Some((*a.0, *b.0)),
            _ => None,
        };
        let consumers = g
            .consumers()
            .filter(|c| c.pending() > 0)
            .map(|c| (c.name.to_vec(), c.pending() as u64))
            .collect();
        Some(PendingSummary {
            count: g.pel.len() as u64,
            bounds,
            consumers,
        })
    }

    /// XPENDING extended form: pending entries with `start <= id <= end`,
    /// at most `count`, of one consumer when given (an unknown consumer
    /// has none; it is not refreshed), skipping entries idle less than
    /// `min_idle` (0 = no filter).
    pub fn pending_range(
        &self,
        group: &[u8],
        q: &PendingQuery<'_>,
        now: i64,
    ) -> Option<Vec<PendingEntry>> {
        let PendingQuery {
            start,
            end,
            count,
            consumer,
            min_idle,
        } = *q;
        let g = self.group(group)?;
        let mut out = Vec::new();
        if count == 0 || start > end {
            return Some(out);
        }
        let mut push = |id: StreamId, n: &Nack| -> bool {
            if id > end {
                return false;
            }
            if min_idle != 0 && now.saturating_sub(n.delivery_time) < min_idle {
                return true;
            }
            out.push(PendingEntry {
                id,
                consumer: g.consumer_at(n.consumer).name.to_vec(),
                idle: now.saturating_sub(n.delivery_time).max(0),
                delivery_count: n.delivery_count,
            });
            out.len() < count
        };
        match consumer {
            Some(name) => {
                let Some(c) = g.consumer(name) else {
                    return Some(out);
                };
                for (id, _) in c.pel.iter_from(&start) {
                    if !push(*id, g.pel.get(id).unwrap()) {
                        break;
                    }
                }
            }
            None => {
                for (id, n) in g.pel.iter_from(&start) {
                    if !push(*id, n) {
                        break;
                    }
                }
            }
        }
        Some(out)
    }

    /// XCLAIM. `ids` in argument order. Entries no longer in the stream
    /// are dropped from the PEL and not claimed. With FORCE an ID that
    /// exists but is not pending gets a new NACK (and the idle check is
    /// skipped for it). The consumer is looked up or created only when the
    /// first entry is claimed. `None` without the group.
    pub fn claim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        min_idle: i64,
        ids: &[StreamId],
        opts: ClaimOptions,
        now: i64,
    ) -> Option<Claim> {
        self.with_group(group, |g, v| {
            if let Some(l) = opts.last_id {
                if l > g.last_id {
                    g.last_id = l;
                }
            }
            let mut delivery = match (opts.idle, opts.time) {
                (Some(idle), _) => Some(now.saturating_sub(idle)),
                (None, Some(t)) => Some(t),
                (None, None) => None,
            }
            .unwrap_or(now);
            if delivery < 0 || delivery > now {
                delivery = now;
            }
            let mut slot: Option<u32> = None;
            let mut out = Claim::default();
            for &id in ids {
                let exists = v.s.contains(id);
                if !exists {
                    g.drop_nack(id);
                    continue;
                }
                let mut forced = false;
                if opts.force && !g.pel.contains_key(&id) {
                    g.pel.insert(
                        id,
                        Nack {
                            delivery_time: now,
                            delivery_count: 1,
                            consumer: u32::MAX,
                        },
                    );
                    forced = true;
                }
                let Some(n) = g.pel.get(&id).copied() else {
                    continue;
                };
                if !forced && min_idle != 0 && now - n.delivery_time < min_idle {
                    continue;
                }
                let s = *slot.get_or_insert_with(|| g.lookup_or_create(consumer, now));
                g.reassign(id, s);
                let n = g.pel.get_mut(&id).unwrap();
                n.delivery_time = delivery;
                if let Some(rc) = opts.retry_count {
                    n.delivery_count = rc;
                } else if !opts.justid {
                    n.delivery_count += 1;
                }
                out.claimed.push(id);
            }
            out
        })
    }

    /// XAUTOCLAIM: scan the group PEL from `start`, claiming up to `count`
    /// entries idle at least `min_idle`, examining at most `count * 10`
    /// PEL entries; entries gone from the stream are removed from the PEL,
    /// reported in `deleted`, and count against `count`. `None` without the
    /// group.
    pub fn autoclaim(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        opts: AutoClaimOptions,
        now: i64,
    ) -> Option<AutoClaim> {
        let AutoClaimOptions {
            min_idle,
            start,
            count,
            justid,
        } = opts;
        const ATTEMPTS_FACTOR: usize = 10;
        self.with_group(group, |g, v| {
            let mut attempts = count.saturating_mul(ATTEMPTS_FACTOR);
            let mut count = count;
            let mut out = AutoClaim::default();
            let mut slot: Option<u32> = None;
            let mut cursor = start;
            let mut exhausted = false;
            while attempts > 0 && count > 0 {
                attempts -= 1;
                let Some(p) = g.pel.pos_ge(&cursor) else {
                    exhausted = true;
                    break;
                };
                let (&id, &n) = g.pel.at(p);
                match id.next() {
                    Some(nx) => cursor = nx,
                    None => exhausted = true,
                }
                if !v.s.contains(id) {
                    g.drop_nack(id);
                    out.deleted.push(id);
                    count -= 1;
                } else if min_idle == 0 || now.saturating_sub(n.delivery_time) >= min_idle {
                    let s = *slot.get_or_insert_with(|| g.lookup_or_create(consumer, now));
                    g.reassign(id, s);
                    let n = g.pel.get_mut(&id).unwrap();
                    n.delivery_time = now;
                    if !justid {
                        n.delivery_count += 1;
                    }
                    out.claimed.push(id);
                    count -= 1;
                }
                if exhausted {
                    break;
                }
            }
            out.next = if exhausted {
                StreamId::MIN
            } else {
                g.pel
                    .pos_ge(&cursor)
                    .map_or(StreamId::MIN, |p| *g.pel.at(p).0)
            };
            out
        })
    }
}
