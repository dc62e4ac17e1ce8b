//! Defragmentation of a large sorted set (see [`crate::defrag`]), in
//! bounded, resumable steps.
//!
//! The tree is walked in rank order, whole leaves at a time: a step starts
//! at the leaf holding rank `from` and offers leaves (the entry vector,
//! then every out-of-line member) until it has visited `max_fields`
//! entries; an inner node offers its three vectors and its separators'
//! members when the walk enters it at its first entry. Then the member
//! table ([`ArenaMap::defrag`]) is stepped the same way. A move copies a
//! block bit for bit into a block of the same layout, so no order, count
//! or heap figure changes.
//!
//! The cursor is the rank to go on from while in the tree, and
//! [`MAP_PHASE`] plus the member table's own cursor after it. Between
//! steps the set may change: the cursor is then only a place to resume
//! (a rank past the end goes on to the table), so some blocks may be
//! offered twice or not at all in that pass, never a stale one.

use super::{Node, ScoreTree, SortedSet};
use crate::arena::ArenaMap;
use crate::defrag::Defrag;

/// Set in a cursor once the tree is done and the member table is being
/// stepped.
const MAP_PHASE: u64 = 1 << 63;

/// Offers the blocks of `n`'s leaves from the one holding relative rank
/// `start` on, until `budget` entries were visited; returns the relative
/// rank after the last leaf visited.
fn node_from(n: &mut Node, start: usize, budget: &mut usize, d: &mut Defrag) -> usize {
    match n {
        Node::Leaf(v) => {
            d.vec(v);
            for e in v.iter_mut() {
                e.member.defrag(d);
            }
            *budget = budget.saturating_sub(v.len().max(1));
            v.len()
        }
        Node::Inner(i) => {
            if start == 0 {
                d.vec(&mut i.seps);
                d.vec(&mut i.kids);
                d.vec(&mut i.counts);
                for s in i.seps.iter_mut() {
                    s.member.defrag(d);
                }
            }
            let mut k = 0;
            let mut off = 0;
            while k + 1 < i.kids.len() && off + i.counts[k] <= start {
                off += i.counts[k];
                k += 1;
            }
            let mut end = off;
            while k < i.kids.len() && *budget > 0 {
                let got = node_from(&mut i.kids[k], start.saturating_sub(off), budget, d);
                end = off + got;
                off += i.counts[k];
                k += 1;
            }
            end
        }
    }
}

impl ScoreTree {
    /// One defrag step over the tree from rank `from` (see the module
    /// docs); returns the rank to go on from, `None` when done.
    pub fn defrag(&mut self, from: usize, max_fields: usize, d: &mut Defrag) -> Option<usize> {
        if from >= self.len.max(1) {
            return None;
        }
        let mut budget = max_fields.max(1);
        let next = node_from(&mut self.root, from, &mut budget, d);
        (next < self.len && next > from).then_some(next)
    }
}

impl SortedSet {
    /// One defrag step (see the module docs): from `from` (0 starts),
    /// visits about `max_fields` entries; returns where to go on, `None`
    /// when done.
    pub fn defrag(&mut self, from: u64, max_fields: usize, d: &mut Defrag) -> Option<u64> {
        if from & MAP_PHASE == 0 {
            let rank = usize::try_from(from).unwrap_or(usize::MAX);
            return match self.tree.defrag(rank, max_fields, d) {
                Some(r) => Some(r as u64),
                None => Some(MAP_PHASE),
            };
        }
        let map: &mut ArenaMap = &mut self.map;
        map.defrag(from & !MAP_PHASE, max_fields, d)
            .map(|c| c | MAP_PHASE)
    }
}
