//! One quicklist node: a plain listpack, or the same listpack LZF-compressed
//! (Redis's `QUICKLIST_NODE_ENCODING_LZF`; the compressed bytes are what an
//! RDB file stores for such a node).
//!
//! Invariants:
//! * `Lzf { data, raw_len, count }`: `data` decompresses to a valid listpack
//!   of `raw_len` bytes and `count` elements; `data.len() + MIN_COMPRESS_IMPROVE
//!   < raw_len` and `raw_len >= MIN_COMPRESS_BYTES` (Redis's rule for storing
//!   a node compressed);
//! * `Stuck(lp)`: an interior node whose compression was tried and did not
//!   pay; it is tried again only after it changes (any mutable access turns
//!   it back into `Raw`);
//! * `heap_bytes()` is what the node owns: the listpack's capacity, or the
//!   allocator size class of the compressed block.

use super::lzf;
use crate::listpack::{Listpack, LpValue};
use crate::mem::grow_capacity;

/// Redis's `MIN_COMPRESS_BYTES`: smaller listpacks are never compressed.
pub const MIN_COMPRESS_BYTES: usize = 48;
/// Redis's `MIN_COMPRESS_IMPROVE`: a node is stored compressed only when
/// that saves more than this many bytes.
pub const MIN_COMPRESS_IMPROVE: usize = 8;

#[derive(Clone, Debug)]
pub enum Node {
    Raw(Listpack),
    /// Boxed so that `Node` stays 32 bytes (it is rare).
    Stuck(Box<Listpack>),
    Lzf {
        data: Box<[u8]>,
        raw_len: u32,
        count: u32,
    },
}

impl Node {
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Node::Raw(lp) => lp.len(),
            Node::Stuck(lp) => lp.len(),
            Node::Lzf { count, .. } => *count as usize,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Serialized (uncompressed) listpack size, Redis's `node->sz`.
    #[inline]
    pub fn bytes_len(&self) -> usize {
        match self {
            Node::Raw(lp) => lp.bytes_len(),
            Node::Stuck(lp) => lp.bytes_len(),
            Node::Lzf { raw_len, .. } => *raw_len as usize,
        }
    }

    #[inline]
    pub fn heap_bytes(&self) -> usize {
        match self {
            Node::Raw(lp) => lp.heap_bytes(),
            Node::Stuck(lp) => grow_capacity(std::mem::size_of::<Listpack>()) + lp.heap_bytes(),
            Node::Lzf { data, .. } => {
                if data.is_empty() {
                    0
                } else {
                    grow_capacity(data.len())
                }
            }
        }
    }

    #[inline]
    pub fn is_compressed(&self) -> bool {
        matches!(self, Node::Lzf { .. })
    }

    /// The plain listpack, when the node is not compressed.
    #[inline]
    pub fn as_plain(&self) -> Option<&Listpack> {
        match self {
            Node::Raw(lp) => Some(lp),
            Node::Stuck(lp) => Some(lp),
            Node::Lzf { .. } => None,
        }
    }

    /// The listpack for writing: decompresses a compressed node in place
    /// and forgets a failed compression attempt (the content may change).
    pub fn plain_mut(&mut self) -> &mut Listpack {
        match self {
            Node::Raw(_) => {}
            Node::Stuck(lp) => *self = Node::Raw(std::mem::replace(&mut **lp, Listpack::hollow())),
            Node::Lzf { .. } => *self = Node::Raw(self.decompressed()),
        }
        match self {
            Node::Raw(lp) => lp,
            _ => unreachable!(),
        }
    }

    /// Take the plain listpack out (decompressing if needed).
    pub fn into_plain(self) -> Listpack {
        match self {
            Node::Raw(lp) => lp,
            Node::Stuck(lp) => *lp,
            n @ Node::Lzf { .. } => n.decompressed(),
        }
    }

    /// A decompressed copy of a compressed node.
    fn decompressed(&self) -> Listpack {
        let mut buf = Vec::with_capacity(grow_capacity(self.bytes_len()));
        self.decompress_into(&mut buf);
        Listpack::from_trusted(buf, self.len())
    }

    /// Run `f` on the node's listpack: the node's own when plain, else one
    /// decompressed into `buf` (whose allocation is reused across calls).
    pub fn with_view<R>(&self, buf: &mut Vec<u8>, f: impl FnOnce(&Listpack) -> R) -> R {
        match self {
            Node::Raw(lp) => f(lp),
            Node::Stuck(lp) => f(lp),
            Node::Lzf { .. } => {
                let mut owned = std::mem::take(buf);
                self.decompress_into(&mut owned);
                let lp = Listpack::from_trusted(owned, self.len());
                let r = f(&lp);
                *buf = lp.into_bytes();
                r
            }
        }
    }

    fn decompress_into(&self, buf: &mut Vec<u8>) {
        let Node::Lzf { data, raw_len, .. } = self else {
            unreachable!("decompress_into on a plain node")
        };
        lzf::decompress(data, *raw_len as usize, buf).expect("quicklist: corrupt compressed node");
    }

    /// Element `pos` of the node, passed to `f`.
    pub fn get_with<R>(&self, pos: usize, f: impl FnOnce(LpValue<'_>) -> R) -> R {
        let mut buf = Vec::new();
        self.with_view(&mut buf, |lp| f(lp.get(pos as isize).expect("pos in node")))
    }

    /// Compress a plain node if Redis's rule says it pays; otherwise mark
    /// it `Stuck`. Compressed and stuck nodes are left alone.
    pub fn compress(&mut self) {
        let Node::Raw(lp) = self else { return };
        let raw = lp.as_bytes();
        if raw.len() >= MIN_COMPRESS_BYTES && u32::try_from(raw.len()).is_ok() {
            // Stored compressed only when `len + IMPROVE < raw_len`.
            if let Some(c) = lzf::compress(raw, raw.len() - MIN_COMPRESS_IMPROVE - 1) {
                *self = Node::Lzf {
                    data: c.into_boxed_slice(),
                    raw_len: raw.len() as u32,
                    count: lp.len() as u32,
                };
                return;
            }
        }
        *self = Node::Stuck(Box::new(std::mem::replace(lp, Listpack::hollow())));
    }

    /// Make the node plain (an edge node within the compress depth).
    pub fn decompress(&mut self) {
        match self {
            Node::Raw(_) => {}
            Node::Stuck(lp) => *self = Node::Raw(std::mem::replace(&mut **lp, Listpack::hollow())),
            Node::Lzf { .. } => *self = Node::Raw(self.decompressed()),
        }
    }

    /// Whether [`Node::compress`] would store `lp` compressed.
    #[cfg(test)]
    pub fn compressible(lp: &Listpack) -> bool {
        let raw = lp.as_bytes();
        raw.len() >= MIN_COMPRESS_BYTES
            && u32::try_from(raw.len()).is_ok()
            && lzf::compress(raw, raw.len() - MIN_COMPRESS_IMPROVE - 1).is_some()
    }
}
