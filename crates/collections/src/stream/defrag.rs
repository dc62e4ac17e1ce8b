//! Defragmentation of a stream (see [`crate::defrag`]), in bounded,
//! resumable steps: the first step offers the node index's arrays, the
//! group list and every group's own blocks (names, consumer tables, PEL
//! index arrays); then each step offers [`NODE_CHUNKS_PER_STEP`] chunks
//! of the node index, each chunk's entry array and the listpack block of
//! every node in it (a node holds up to a few KB; a chunk up to 64 nodes).
//! A move copies a block bit for bit into one of the same layout, so no
//! entry, ID or count changes.
//!
//! Not moved: the entry arrays of the groups' and consumers' PELs.
//!
//! The cursor is the node-index chunk to go on from, plus one (0 starts).
//! Between steps the stream may change: the cursor is then only a place
//! to resume (past the end: done).

use super::Stream;
use crate::defrag::Defrag;

/// Node-index chunks per step.
pub const NODE_CHUNKS_PER_STEP: usize = 1;

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
            return (!self.nodes.is_empty()).then_some(1);
        }
        let c = usize::try_from(from - 1).unwrap_or(usize::MAX);
        self.nodes
            .defrag_chunks(c, NODE_CHUNKS_PER_STEP, d, |n, d| n.defrag(d))
            .map(|c| c as u64 + 1)
    }
}
