//! One quicklist node, in one of Redis 7.0's two containers:
//!
//! * **packed** (`QUICKLIST_NODE_CONTAINER_PACKED`): a listpack of one or
//!   more elements;
//! * **plain** (`QUICKLIST_NODE_CONTAINER_PLAIN`): one element stored as its
//!   bytes, for elements of at least the packed threshold
//!   ([`super::packed_threshold`]).
//!
//! Either may be stored LZF-compressed (Redis's `QUICKLIST_NODE_ENCODING_LZF`;
//! the compressed bytes are what an RDB file stores for such a node, with
//! the container in front). [`Node::container`] and [`Node::lzf`] tell an
//! RDB writer what to write.
//!
//! Invariants:
//! * `Lzf { data, raw_len, count }`: `data` decompresses to a valid listpack
//!   of `raw_len` bytes and `count` elements; `PlainLzf { data, raw_len }`:
//!   `data` decompresses to the element, `raw_len` bytes. For both,
//!   `data.len() + MIN_COMPRESS_IMPROVE < raw_len` and
//!   `raw_len >= MIN_COMPRESS_BYTES` (Redis's rule for storing a node
//!   compressed, the same for both containers);
//! * `Stuck(lp)` and `Plain { stuck: true, .. }`: an interior node whose
//!   compression was tried and did not pay; it is tried again only after it
//!   changes or leaves the interior (any mutable access turns it back into
//!   `Raw` / `Plain { stuck: false }`);
//! * a plain node holds exactly one element; a packed node may hold any
//!   number (the quicklist never keeps an empty one);
//! * `heap_bytes()` is what the node owns: the listpack's capacity, or the
//!   allocator size class of the element or compressed block.

use super::lzf;
use crate::listpack::{Listpack, LpValue};
use crate::mem::{block_bytes, grow_capacity};

/// Redis's `MIN_COMPRESS_BYTES`: smaller nodes are never compressed.
pub const MIN_COMPRESS_BYTES: usize = 48;
/// Redis's `MIN_COMPRESS_IMPROVE`: a node is stored compressed only when
/// that saves more than this many bytes.
pub const MIN_COMPRESS_IMPROVE: usize = 8;

/// Redis's node containers, with their RDB codes (`QUICKLIST_NODE_CONTAINER_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    /// One element as its bytes (RDB code 1).
    Plain = 1,
    /// A listpack (RDB code 2).
    Packed = 2,
}

#[derive(Clone, Debug)]
pub enum Node {
    /// Packed, uncompressed.
    Raw(Listpack),
    /// Packed, uncompressed, compression tried and not worth it. Boxed so
    /// that `Node` stays 32 bytes (it is rare).
    Stuck(Box<Listpack>),
    /// Packed, LZF-compressed listpack.
    Lzf {
        data: Box<[u8]>,
        raw_len: u32,
        count: u32,
    },
    /// Plain, uncompressed: the element's bytes; `stuck` as for
    /// [`Node::Stuck`].
    Plain { elem: Box<[u8]>, stuck: bool },
    /// Plain, LZF-compressed element of `raw_len` bytes.
    PlainLzf { data: Box<[u8]>, raw_len: u32 },
}

/// A node's uncompressed contents, as [`Node::visit`] hands them out.
#[derive(Clone, Copy, Debug)]
pub enum View<'a> {
    Packed(&'a Listpack),
    Plain(&'a [u8]),
}

impl Node {
    /// A plain node holding `elem`.
    pub fn plain(elem: &[u8]) -> Node {
        Node::Plain {
            elem: elem.into(),
            stuck: false,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Node::Raw(lp) => lp.len(),
            Node::Stuck(lp) => lp.len(),
            Node::Lzf { count, .. } => *count as usize,
            Node::Plain { .. } | Node::PlainLzf { .. } => 1,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Uncompressed size, Redis's `node->sz`: the listpack's serialized
    /// size, or the element's length for a plain node.
    #[inline]
    pub fn bytes_len(&self) -> usize {
        match self {
            Node::Raw(lp) => lp.bytes_len(),
            Node::Stuck(lp) => lp.bytes_len(),
            Node::Lzf { raw_len, .. } | Node::PlainLzf { raw_len, .. } => *raw_len as usize,
            Node::Plain { elem, .. } => elem.len(),
        }
    }

    #[inline]
    pub fn heap_bytes(&self) -> usize {
        match self {
            Node::Raw(lp) => lp.heap_bytes(),
            Node::Stuck(lp) => grow_capacity(std::mem::size_of::<Listpack>()) + lp.heap_bytes(),
            Node::Lzf { data, .. } | Node::PlainLzf { data, .. } => block_bytes(data.len()),
            Node::Plain { elem, .. } => block_bytes(elem.len()),
        }
    }

    /// The node's container (plain or packed).
    #[inline]
    pub fn container(&self) -> Container {
        match self {
            Node::Plain { .. } | Node::PlainLzf { .. } => Container::Plain,
            _ => Container::Packed,
        }
    }

    /// True for a plain-container node (one element as its bytes).
    #[inline]
    pub fn is_plain(&self) -> bool {
        self.container() == Container::Plain
    }

    #[inline]
    pub fn is_compressed(&self) -> bool {
        matches!(self, Node::Lzf { .. } | Node::PlainLzf { .. })
    }

    /// The LZF block and the uncompressed size, when compressed (what an
    /// RDB file stores for the node as it is).
    pub fn lzf(&self) -> Option<(&[u8], usize)> {
        match self {
            Node::Lzf { data, raw_len, .. } | Node::PlainLzf { data, raw_len } => {
                Some((data, *raw_len as usize))
            }
            _ => None,
        }
    }

    /// Uncompressed and not marked as tried: the state a node in the
    /// compress depth of an end must be in, and the one from which an
    /// interior node is compressed.
    #[inline]
    pub(crate) fn is_fresh(&self) -> bool {
        matches!(self, Node::Raw(_) | Node::Plain { stuck: false, .. })
    }

    /// The listpack of an uncompressed packed node.
    #[inline]
    pub fn as_listpack(&self) -> Option<&Listpack> {
        match self {
            Node::Raw(lp) => Some(lp),
            Node::Stuck(lp) => Some(lp),
            _ => None,
        }
    }

    /// The element of an uncompressed plain node.
    #[inline]
    pub fn as_plain_elem(&self) -> Option<&[u8]> {
        match self {
            Node::Plain { elem, .. } => Some(elem),
            _ => None,
        }
    }

    /// The listpack of a packed node, for writing: decompresses in place
    /// and forgets a failed compression attempt (the content may change).
    /// Panics on a plain node (callers check [`Node::is_plain`]).
    pub fn listpack_mut(&mut self) -> &mut Listpack {
        match self {
            Node::Raw(_) => {}
            Node::Stuck(lp) => *self = Node::Raw(std::mem::replace(&mut **lp, Listpack::hollow())),
            Node::Lzf { .. } => *self = Node::Raw(self.decompressed_listpack()),
            Node::Plain { .. } | Node::PlainLzf { .. } => {
                unreachable!("listpack_mut on a plain node")
            }
        }
        match self {
            Node::Raw(lp) => lp,
            _ => unreachable!(),
        }
    }

    /// Take the listpack of a packed node out (decompressing if needed).
    /// Panics on a plain node.
    pub fn into_listpack(self) -> Listpack {
        match self {
            Node::Raw(lp) => lp,
            Node::Stuck(lp) => *lp,
            n @ Node::Lzf { .. } => n.decompressed_listpack(),
            Node::Plain { .. } | Node::PlainLzf { .. } => {
                unreachable!("into_listpack on a plain node")
            }
        }
    }

    /// Take the element of a plain node out (decompressing if needed).
    /// Panics on a packed node.
    pub fn into_elem(self) -> Vec<u8> {
        match self {
            Node::Plain { elem, .. } => elem.into_vec(),
            Node::PlainLzf { .. } => {
                let mut buf = Vec::new();
                self.decompress_into(&mut buf);
                buf
            }
            _ => unreachable!("into_elem on a packed node"),
        }
    }

    /// A decompressed copy of a compressed packed node.
    fn decompressed_listpack(&self) -> Listpack {
        let mut buf = Vec::with_capacity(grow_capacity(self.bytes_len()));
        self.decompress_into(&mut buf);
        Listpack::from_trusted(buf, self.len())
    }

    /// Run `f` on the node's uncompressed contents: its own when
    /// uncompressed, else decompressed into `buf` (whose allocation is
    /// reused across calls).
    pub fn visit<R>(&self, buf: &mut Vec<u8>, f: impl FnOnce(View<'_>) -> R) -> R {
        match self {
            Node::Raw(lp) => f(View::Packed(lp)),
            Node::Stuck(lp) => f(View::Packed(lp)),
            Node::Plain { elem, .. } => f(View::Plain(elem)),
            Node::PlainLzf { .. } => {
                self.decompress_into(buf);
                f(View::Plain(buf))
            }
            Node::Lzf { .. } => {
                let mut owned = std::mem::take(buf);
                self.decompress_into(&mut owned);
                let lp = Listpack::from_trusted(owned, self.len());
                let r = f(View::Packed(&lp));
                *buf = lp.into_bytes();
                r
            }
        }
    }

    /// Run `f` on the listpack of a packed node (see [`Node::visit`]).
    /// Panics on a plain node, which has no listpack.
    pub fn with_view<R>(&self, buf: &mut Vec<u8>, f: impl FnOnce(&Listpack) -> R) -> R {
        self.visit(buf, |v| match v {
            View::Packed(lp) => f(lp),
            View::Plain(_) => unreachable!("with_view on a plain node"),
        })
    }

    /// The node's uncompressed bytes (listpack serialization or element),
    /// passed to `f`.
    pub fn with_bytes<R>(&self, buf: &mut Vec<u8>, f: impl FnOnce(&[u8]) -> R) -> R {
        self.visit(buf, |v| match v {
            View::Packed(lp) => f(lp.as_bytes()),
            View::Plain(b) => f(b),
        })
    }

    fn decompress_into(&self, buf: &mut Vec<u8>) {
        let (data, raw_len) = self.lzf().expect("decompress_into on an uncompressed node");
        lzf::decompress(data, raw_len, buf).expect("quicklist: corrupt compressed node");
    }

    /// Element `pos` of the node, passed to `f`.
    pub fn get_with<R>(&self, pos: usize, f: impl FnOnce(LpValue<'_>) -> R) -> R {
        let mut buf = Vec::new();
        self.visit(&mut buf, |v| match v {
            View::Packed(lp) => f(lp.get(pos as isize).expect("pos in node")),
            View::Plain(b) => {
                debug_assert_eq!(pos, 0);
                f(LpValue::Str(b))
            }
        })
    }

    /// Compress an uncompressed node if Redis's rule says it pays;
    /// otherwise mark it as tried. Compressed and marked nodes are left
    /// alone.
    pub fn compress(&mut self) {
        match self {
            Node::Raw(lp) => {
                if let Some(c) = compress_block(lp.as_bytes()) {
                    *self = Node::Lzf {
                        data: c,
                        raw_len: lp.bytes_len() as u32,
                        count: lp.len() as u32,
                    };
                } else {
                    *self = Node::Stuck(Box::new(std::mem::replace(lp, Listpack::hollow())));
                }
            }
            Node::Plain { elem, stuck } if !*stuck => match compress_block(elem) {
                Some(c) => {
                    *self = Node::PlainLzf {
                        data: c,
                        raw_len: elem.len() as u32,
                    }
                }
                None => *stuck = true,
            },
            _ => {}
        }
    }

    /// Make the node uncompressed and unmarked (a node within the compress
    /// depth of an end).
    pub fn decompress(&mut self) {
        match self {
            Node::Raw(_) | Node::Plain { stuck: false, .. } => {}
            Node::Stuck(lp) => *self = Node::Raw(std::mem::replace(&mut **lp, Listpack::hollow())),
            Node::Lzf { .. } => *self = Node::Raw(self.decompressed_listpack()),
            Node::Plain { stuck, .. } => *stuck = false,
            Node::PlainLzf { .. } => {
                let mut buf = Vec::new();
                self.decompress_into(&mut buf);
                *self = Node::Plain {
                    elem: buf.into_boxed_slice(),
                    stuck: false,
                };
            }
        }
    }

    /// Whether [`Node::compress`] would store the node compressed.
    #[cfg(test)]
    pub fn compressible(&self) -> bool {
        let mut buf = Vec::new();
        self.with_bytes(&mut buf, |b| compress_block(b).is_some())
    }
}

/// `raw` LZF-compressed, when Redis's rule says storing it so pays: at
/// least [`MIN_COMPRESS_BYTES`], a size that fits the node's u32, and a
/// block more than [`MIN_COMPRESS_IMPROVE`] bytes smaller.
fn compress_block(raw: &[u8]) -> Option<Box<[u8]>> {
    if raw.len() < MIN_COMPRESS_BYTES || u32::try_from(raw.len()).is_err() {
        return None;
    }
    lzf::compress(raw, raw.len() - MIN_COMPRESS_IMPROVE - 1).map(Vec::into_boxed_slice)
}

impl Node {
    /// Offers its blocks to the defragmenter (see [`crate::defrag`]).
    pub fn defrag(&mut self, d: &mut crate::defrag::Defrag) {
        match self {
            Node::Raw(lp) => lp.defrag(d),
            Node::Stuck(b) => {
                d.boxed(b);
                b.defrag(d);
            }
            Node::Lzf { data, .. } | Node::PlainLzf { data, .. } => d.boxed_slice(data),
            Node::Plain { elem, .. } => d.boxed_slice(elem),
        }
    }
}
