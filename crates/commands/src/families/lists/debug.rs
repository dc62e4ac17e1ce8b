//! The lists family's DEBUG subcommands: `QUICKLIST-PACKED-THRESHOLD`
//! (the size from which an element gets a plain quicklist node; one value
//! for the whole process, kept by `collections::quicklist`) and `QUICKLIST`
//! (a list's node structure, written to stdout as Redis writes it).

use std::io::Write;

use collections::quicklist;
use store::Key;

use crate::base::errors;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::DebugSub;

pub const DEBUG: &[DebugSub] = &[
    DebugSub {
        name: "QUICKLIST-PACKED-THRESHOLD",
        arity: 3,
        help: &[
            "QUICKLIST-PACKED-THRESHOLD <size>",
            "    Sets the threshold for elements to be inserted as plain vs packed nodes",
            "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
        ],
        handler: debug_packed_threshold,
    },
    DebugSub {
        name: "QUICKLIST",
        arity: -3,
        help: &[
            "QUICKLIST <key> [<0|1>]",
            "    Show low level info about the quicklist encoding of <key>.",
            "    The optional argument (0 by default) sets the level of detail",
        ],
        handler: debug_quicklist,
    },
];

/// `DEBUG QUICKLIST-PACKED-THRESHOLD <size>`: Redis's memory units, its
/// 4 GiB - 1 MiB ceiling, and 0 for the default.
fn debug_packed_threshold(ctx: &mut Ctx, args: &[&[u8]]) {
    match memtoull(args[2]) {
        Some(n) if quicklist::set_packed_threshold(n) => ctx.ok(),
        _ => ctx.error(errors::ERR_PACKED_THRESHOLD_ARGUMENT),
    }
}

/// Redis's `memtoull`: digits then an optional unit (`b`, `k`, `kb`, `m`,
/// `mb`, `g`, `gb`, any case). As in Redis, no digits means 0 and the
/// multiplication wraps; a sign, a space, a fraction, too many digits or
/// an unknown unit is an error.
fn memtoull(a: &[u8]) -> Option<u64> {
    let digits = a.iter().take_while(|b| b.is_ascii_digit()).count();
    let mul: u64 = match a[digits..].to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1024,
        b"m" => 1000 * 1000,
        b"mb" => 1024 * 1024,
        b"g" => 1000 * 1000 * 1000,
        b"gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits >= 128 {
        return None;
    }
    let val = if digits == 0 {
        0
    } else {
        std::str::from_utf8(&a[..digits])
            .ok()?
            .parse::<u64>()
            .ok()?
    };
    Some(val.wrapping_mul(mul))
}

/// `DEBUG QUICKLIST <key> [<level>]`: the structure goes to stdout (as
/// Redis prints it there, whatever `logfile` says); a non-zero level (read
/// like C's `atoi`) adds every node's elements.
fn debug_quicklist(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 4 {
        return ctx.error(&errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "DEBUG",
        ));
    }
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let full = args.get(3).is_some_and(|a| atoi(a) != 0);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read_notouch(db, &k, now) else {
        drop(p);
        return ctx.error(errors::ERR_NO_SUCH_KEY);
    };
    let repr = e.value().as_list().map(|l| l.ql.repr(full));
    drop(p);
    match repr {
        Some(text) => {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
            ctx.out.simple("Quicklist structure printed on stdout");
        }
        None => ctx.error(errors::ERR_NOT_QUICKLIST),
    }
}

/// C's `atoi` on the leading integer (0 when there is none).
fn atoi(a: &[u8]) -> i64 {
    let s = std::str::from_utf8(a).unwrap_or("").trim_start();
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let digits: &str = &rest[..rest.bytes().take_while(u8::is_ascii_digit).count()];
    let v = digits
        .parse::<i64>()
        .unwrap_or(if digits.is_empty() { 0 } else { i64::MAX });
    if neg {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtoull_is_redis_s() {
        assert_eq!(memtoull(b"1k"), Some(1000));
        assert_eq!(memtoull(b"1KB"), Some(1024));
        assert_eq!(memtoull(b"01"), Some(1));
        assert_eq!(memtoull(b"kb"), Some(0));
        assert_eq!(memtoull(b""), Some(0));
        assert_eq!(memtoull(b"17179869185gb"), Some(1 << 30));
        for bad in [
            &b"-1"[..],
            b" 1",
            b"+1",
            b"1.5mb",
            b"1x",
            b"1tb",
            b"99999999999999999999",
        ] {
            assert_eq!(memtoull(bad), None, "{}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn atoi_reads_the_leading_integer() {
        assert_eq!(atoi(b"x"), 0);
        assert_eq!(atoi(b"2"), 2);
        assert_eq!(atoi(b" -1abc"), -1);
    }
}
