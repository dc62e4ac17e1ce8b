//! What the value readers share: the conversion thresholds, reusable
//! buffers, and the rule for preallocating announced element counts.

use std::io::Read;

use collections::Limits;

use super::input::Input;

/// State shared by the value readers: the conversion thresholds and
/// reusable buffers.
pub struct Ctx {
    pub limits: Limits,
    pub a: Vec<u8>,
    pub b: Vec<u8>,
}

impl Ctx {
    pub fn new(limits: Limits) -> Ctx {
        Ctx {
            limits,
            a: Vec::new(),
            b: Vec::new(),
        }
    }
}

/// A capacity to reserve for `n` announced elements: never more than the
/// input could hold (one byte per element at least), than 64 Ki elements
/// when the input length is unknown, or than 1 Mi elements in any case
/// (a collection that really is larger grows as its elements arrive).
pub fn cap_hint<R: Read>(inp: &Input<R>, n: u64) -> usize {
    let bound = inp.remaining().unwrap_or(1 << 16).min(1 << 20);
    n.min(bound) as usize
}
