//! `MEMORY TOPKEYS [count] [TYPE type]`: the `count` (default 10) largest
//! keys of the selected database by exact memory, largest first, without a
//! scan. Petrel's own command; no Redis version has it.
//!
//! Reply (RESP2 and RESP3 alike): an array with one 3-element array per key,
//! `[key, bytes, type]`, where `bytes` is what `MEMORY USAGE key` answers at
//! that moment and `type` what `TYPE key` answers. Ties are ordered by key.
//!
//! Only keys owning at least [`TOPKEYS_MIN_BYTES`] (4 KiB) of heap memory are
//! indexed, so smaller keys never appear and cost nothing to track. The index
//! (`store::keyspace::sizes`) follows every write, delete, expiry, RENAME, MOVE, COPY,
//! SWAPDB and FLUSH as it happens; the query takes each partition's largest
//! entries and merges them: O(partitions x count x log) plus the reply.
//!
//! Errors: a count that is not an integer gets Redis's "value is not an
//! integer" error, one below 1 "value is out of range, must be positive",
//! an unknown type "unknown type name" (the text of SCAN ... TYPE in Redis
//! 7.2+), anything else a syntax error.

use store::keyspace::sizes::{KINDS, TOPKEYS_MIN_BYTES};
use store::Kind;

use crate::base::errors;
use crate::base::errors::ERR_SYNTAX;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;

pub fn topkeys(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut count = 10usize;
    let mut kind: Option<Kind> = None;
    let mut j = 2;
    if j < args.len() && !eq_ic(args[j], "type") {
        let Some(n) = ctx.parse_i64(args[j]) else {
            return;
        };
        if n < 1 {
            return ctx.error(errors::ERR_VALUE_OUT_OF_RANGE_MUST_POSITIVE);
        }
        count = n as usize;
        j += 1;
    }
    while j < args.len() {
        if eq_ic(args[j], "type") && j + 1 < args.len() {
            let name = args[j + 1];
            let Some(k) = KINDS
                .iter()
                .find(|k| name.eq_ignore_ascii_case(k.name().as_bytes()))
            else {
                let msg = crate::base::errors::unknown_type_name(&String::from_utf8_lossy(name));
                return ctx.error(&msg);
            };
            kind = Some(*k);
            j += 2;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
    }
    let rows = ctx
        .srv
        .keyspace
        .largest_keys(ctx.client.db, kind, count, ctx.now_ms);
    ctx.out.array_len(rows.len());
    for r in rows {
        ctx.out.array_len(3);
        ctx.out.bulk(&r.key);
        ctx.out.int(r.bytes as i64);
        ctx.out.bulk(r.kind.name());
    }
}

/// MEMORY HELP lines for TOPKEYS.
pub const HELP: [&str; 3] = [
    "TOPKEYS [<count>] [TYPE <type>]",
    "    Return the <count> (default: 10) largest keys of the current database",
    "    by memory usage, as [key, bytes, type] (keys of 4 KiB or more only).",
];

const _: () = assert!(TOPKEYS_MIN_BYTES == 4096, "HELP text states 4 KiB");
