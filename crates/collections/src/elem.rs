//! `Elem`: a 16-byte owned byte string, inline up to 15 bytes.
//!
//! Layout (`[u8; 16]`, alignment 1 so slot arrays pack tightly):
//! * inline: bytes `0..15` hold the data, byte 15 holds the length (0..=15);
//! * heap: byte 15 is [`HEAP_TAG`], bytes `0..8` hold the pointer of a
//!   `Box<[u8]>` of exactly the data length, bytes `8..12` its length (u32).
//!
//! Invariants: a heap `Elem` uniquely owns its box (freed on drop, deep
//! copied on clone); an inline `Elem` owns nothing. `heap_size()` is the
//! box length (0 inline). A safe enum holding `Box<[u8]>` or inline bytes
//! would take 24 bytes: this layout saves 8 bytes per element of every large
//! hash, set and sorted set (measured in `examples/memory.rs`).

const HEAP_TAG: u8 = 0xFF;
/// Longest byte string stored inline.
pub const INLINE_MAX: usize = 15;

pub struct Elem {
    raw: [u8; 16],
}

impl Elem {
    /// The empty inline element.
    pub const EMPTY: Elem = Elem { raw: [0; 16] };

    /// An element holding the concatenation of `parts`.
    pub fn from_parts(parts: &[&[u8]]) -> Elem {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let mut raw = [0u8; 16];
        if len <= INLINE_MAX {
            let mut p = 0;
            for part in parts {
                raw[p..p + part.len()].copy_from_slice(part);
                p += part.len();
            }
            raw[15] = len as u8;
        } else {
            assert!(len <= u32::MAX as usize, "element over 4 GiB");
            let mut v = Vec::with_capacity(len);
            for part in parts {
                v.extend_from_slice(part);
            }
            let b: Box<[u8]> = v.into_boxed_slice();
            let ptr = Box::into_raw(b) as *mut u8;
            raw[0..8].copy_from_slice(&(ptr.expose_provenance() as u64).to_le_bytes());
            raw[8..12].copy_from_slice(&(len as u32).to_le_bytes());
            raw[15] = HEAP_TAG;
        }
        Elem { raw }
    }

    pub fn new(s: &[u8]) -> Elem {
        Self::from_parts(&[s])
    }

    #[inline]
    fn is_heap(&self) -> bool {
        self.raw[15] == HEAP_TAG
    }

    #[inline]
    fn heap_parts(&self) -> (*mut u8, usize) {
        let a = u64::from_le_bytes(self.raw[0..8].try_into().unwrap()) as usize;
        let p = std::ptr::with_exposed_provenance_mut::<u8>(a);
        let l = u32::from_le_bytes(self.raw[8..12].try_into().unwrap()) as usize;
        (p, l)
    }

    /// The stored bytes.
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        if self.is_heap() {
            let (p, l) = self.heap_parts();
            // SAFETY: a heap Elem holds the pointer and length of a live
            // `Box<[u8]>` it uniquely owns (created in `from_parts`, freed
            // only in `drop`); the borrow of `self` keeps it alive.
            unsafe { std::slice::from_raw_parts(p, l) }
        } else {
            &self.raw[..self.raw[15] as usize]
        }
    }

    /// Heap bytes owned (the exact-size allocation, 0 when inline).
    #[inline]
    pub fn heap_size(&self) -> usize {
        if self.is_heap() {
            self.heap_parts().1
        } else {
            0
        }
    }
}

impl Drop for Elem {
    fn drop(&mut self) {
        if self.is_heap() {
            let (p, l) = self.heap_parts();
            // SAFETY: see `bytes`: (p, l) came from `Box::into_raw` of a
            // `Box<[u8]>` of length l that only this Elem owns; after drop the
            // raw bytes are never read again.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, l)) });
        }
    }
}

impl Clone for Elem {
    fn clone(&self) -> Self {
        Elem::new(self.bytes())
    }
}

impl Default for Elem {
    fn default() -> Self {
        Elem::EMPTY
    }
}

impl std::fmt::Debug for Elem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.bytes()))
    }
}

impl PartialEq for Elem {
    fn eq(&self, o: &Elem) -> bool {
        self.bytes() == o.bytes()
    }
}

impl Eq for Elem {}

impl PartialOrd for Elem {
    fn partial_cmp(&self, o: &Elem) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Elem {
    fn cmp(&self, o: &Elem) -> std::cmp::Ordering {
        self.bytes().cmp(o.bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn inline_and_heap() {
        assert_eq!(std::mem::size_of::<Elem>(), 16);
        for n in [0, 1, 15, 16, 100, 5000] {
            let s: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let e = Elem::from_parts(&[&s[..n / 2], &s[n / 2..]]);
            assert_eq!(e.bytes(), &s[..]);
            assert_eq!(e.heap_size(), if n > 15 { n } else { 0 });
            let c = e.clone();
            drop(e);
            assert_eq!(c.bytes(), &s[..]);
        }
    }
}
