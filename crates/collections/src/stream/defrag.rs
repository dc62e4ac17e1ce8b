//! Defragmentation of a stream (see [`crate::defrag`]), in bounded,
//! resumable steps:
//! 1. the first step offers the node index's arrays, the group list and
//!    every group's own blocks (names, consumer tables, PEL index arrays);
//! 2. then each step offers [`NODE_CHUNKS_PER_STEP`] chunks of the node
//!    index, each chunk's entry array and the listpack block of every node
//!    in it (a node holds up to a few KB; a chunk up to 64 nodes);
//! 3. then the entry arrays of the PELs, group by group: the group's PEL,
//!    then each consumer's (in slot order), up to [`PEL_CHUNKS_PER_STEP`]
//!    arrays a step (an array holds up to 64 entries: 2.5 KB in a group's
//!    PEL, 1 KB in a consumer's). An empty consumer slot or empty PEL
//!    counts as one array, so a step over many of them is bounded too.
//!
//! A move copies a block bit for bit into one of the same layout, so no
//! entry, ID, count or pending entry changes.
//!
//! The cursor is 0 to start; in phase 2 the node-index chunk to go on
//! from, plus one (below 2^63); in phase 3 bit 63 set and the group
//! index, the PEL's owner (0: the group, `k + 1`: consumer slot `k`) and
//! the PEL's chunk packed below it ([`pel_cursor`]). A position whose
//! fields do not fit (a millionth group, two millionth consumer slot or
//! four millionth chunk, a PEL of 268M entries) ends the stream's pass
//! there. Between steps the stream may change: the cursor is then only a
//! place to resume, checked against the current bounds (past the end of
//! a PEL: its owner is done; past the last slot: the group is done; past
//! the last group: the stream is done).

use super::chunkmap::ChunkMap;
use super::Stream;
use crate::defrag::Defrag;

/// Node-index chunks per step.
pub const NODE_CHUNKS_PER_STEP: usize = 1;

/// PEL entry arrays per step (at most 16 x 2.5 KB copied).
pub const PEL_CHUNKS_PER_STEP: usize = 16;

const PEL_PHASE: u64 = 1 << 63;
const CHUNK_BITS: u32 = 22;
const OWNER_BITS: u32 = 21;
const GROUP_BITS: u32 = 20;

/// The phase-3 cursor for chunk `c` of owner `owner`'s PEL in group `g`,
/// `None` when a field does not fit (see the module docs).
fn pel_cursor(g: usize, owner: usize, c: usize) -> Option<u64> {
    let fits = |v: usize, bits: u32| (v as u64) < (1u64 << bits);
    if !(fits(g, GROUP_BITS) && fits(owner, OWNER_BITS) && fits(c, CHUNK_BITS)) {
        return None;
    }
    Some(
        PEL_PHASE
            | (g as u64) << (OWNER_BITS + CHUNK_BITS)
            | (owner as u64) << CHUNK_BITS
            | c as u64,
    )
}

/// The (group, owner, chunk) of a phase-3 cursor.
fn pel_position(at: u64) -> (usize, usize, usize) {
    let mask = |bits: u32| (1u64 << bits) - 1;
    (
        ((at >> (OWNER_BITS + CHUNK_BITS)) & mask(GROUP_BITS)) as usize,
        ((at >> CHUNK_BITS) & mask(OWNER_BITS)) as usize,
        (at & mask(CHUNK_BITS)) as usize,
    )
}

impl Stream {
    /// One defrag step from `from` (0 starts); returns where to go on,
    /// `None` when done (see the module docs).
    pub fn defrag(&mut self, from: u64, d: &mut Defrag) -> Option<u64> {
        if from == 0 {
            self.nodes.defrag_index(d);
            d.vec(&mut self.groups);
            for g in self.groups.iter_mut() {
                g.defrag(d);
            }
            return if self.nodes.is_empty() {
                self.after_nodes()
            } else {
                Some(1)
            };
        }
        if from & PEL_PHASE != 0 {
            let (g, owner, c) = pel_position(from);
            return self.defrag_pels(g, owner, c, d);
        }
        let c = usize::try_from(from - 1).unwrap_or(usize::MAX);
        match self
            .nodes
            .defrag_chunks(c, NODE_CHUNKS_PER_STEP, d, |n, d| n.defrag(d))
        {
            Some(c) => Some(c as u64 + 1),
            None => self.after_nodes(),
        }
    }

    /// Where the PEL phase starts (`None`: no group, nothing left).
    fn after_nodes(&self) -> Option<u64> {
        if self.groups.is_empty() {
            None
        } else {
            pel_cursor(0, 0, 0)
        }
    }

    /// Offers up to [`PEL_CHUNKS_PER_STEP`] PEL entry arrays from chunk
    /// `c` of `owner`'s PEL in group `g` on; returns where to go on.
    fn defrag_pels(
        &mut self,
        mut g: usize,
        mut owner: usize,
        mut c: usize,
        d: &mut Defrag,
    ) -> Option<u64> {
        let mut budget = PEL_CHUNKS_PER_STEP;
        loop {
            if budget == 0 {
                return pel_cursor(g, owner, c);
            }
            let group = self.groups.get_mut(g)?;
            if owner > group.slots.len() {
                (g, owner, c) = (g + 1, 0, 0);
                continue;
            }
            let left = if owner == 0 {
                offer_pel(&mut group.pel, c, budget, d)
            } else {
                match &mut group.slots[owner - 1] {
                    Some(consumer) => offer_pel(&mut consumer.pel, c, budget, d),
                    None => None,
                }
            };
            match left {
                Some((offered, next)) => {
                    budget -= offered;
                    c = next;
                }
                None => {
                    budget -= 1;
                    (owner, c) = (owner + 1, 0);
                }
            }
        }
    }
}

/// Offers up to `max` entry arrays of `pel` from chunk `from`: the number
/// offered and the chunk to go on from, `None` when none was left there
/// (the owner is done). An owner whose last arrays were offered is done
/// on the next call.
fn offer_pel<V>(
    pel: &mut ChunkMap<super::StreamId, V>,
    from: usize,
    max: usize,
    d: &mut Defrag,
) -> Option<(usize, usize)> {
    let n = pel.chunk_count();
    if from >= n {
        return None;
    }
    let take = max.min(n - from);
    pel.defrag_chunks(from, take, d, |_, _| {});
    Some((take, from + take))
}

impl Stream {
    /// The blocks a whole defrag pass offers (tests): all of them, and of
    /// those the PELs' entry arrays.
    #[cfg(test)]
    pub(crate) fn defrag_blocks(&self) -> (u64, u64) {
        let (index, chunks) = self.nodes.blocks();
        let nodes = self.nodes.iter().filter(|(_, n)| n.heap() > 0).count() as u64;
        let mut all = index + chunks + nodes + (self.groups.capacity() > 0) as u64;
        let mut pels = 0;
        for g in &self.groups {
            all += g.defrag_blocks();
            let (index, chunks) = g.pel.blocks();
            all += index;
            pels += chunks;
            for c in g.slots.iter().flatten() {
                let (index, chunks) = c.pel.blocks();
                all += (!c.name.is_empty()) as u64 + index;
                pels += chunks;
            }
        }
        (all + pels, pels)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phase-3 cursor reads back as the position it was made from, is
    /// never 0 nor a phase-2 cursor, and a position that does not fit
    /// ends the pass.
    #[test]
    fn pel_cursor_round_trips() {
        for &(g, o, c) in &[
            (0, 0, 0),
            (1, 2, 3),
            (
                (1 << GROUP_BITS) - 1,
                (1 << OWNER_BITS) - 1,
                (1 << CHUNK_BITS) - 1,
            ),
        ] {
            let at = pel_cursor(g, o, c).unwrap();
            assert!(at & PEL_PHASE != 0);
            assert_eq!(pel_position(at), (g, o, c));
        }
        assert_eq!(pel_cursor(1 << GROUP_BITS, 0, 0), None);
        assert_eq!(pel_cursor(0, 1 << OWNER_BITS, 0), None);
        assert_eq!(pel_cursor(0, 0, 1 << CHUNK_BITS), None);
    }
}
