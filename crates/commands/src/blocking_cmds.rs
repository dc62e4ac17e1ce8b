//! The blocking commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP,
//! BZPOPMIN, BZPOPMAX, BZMPOP.
//!
//! Each first tries its keys in order like its non-blocking form; when all
//! are empty it registers a [`Waiter`] (see [`crate::blocking`]) and the
//! client stops reading commands until it is served, times out, is
//! unblocked (CLIENT UNBLOCK) or disconnects. Inside MULTI (EXEC) they never
//! block: an empty result is the timeout reply, as in Redis.

use std::sync::Arc;

use crate::blocking::{self, BlockOp, Waiter};
use crate::ctx::Ctx;
use crate::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::util::{eq_ic, ERR_SYNTAX, ERR_WRONGTYPE};

const F: u32 = flag::WRITE | flag::NOSCRIPT | flag::BLOCKING;
macro_rules! spec {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $keys:expr, $cx:expr, $sum:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: $keys,
            docs: Docs::new($cx, $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

pub const COMMANDS: &[CommandSpec] = &[
    spec!("blpop", -3, F, &["write", "list", "slow", "blocking"], KeyPos::range(1, -2, 1),
        "O(N) where N is the number of provided keys.",
        "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
        blpop),
    spec!("brpop", -3, F, &["write", "list", "slow", "blocking"], KeyPos::range(1, -2, 1),
        "O(N) where N is the number of provided keys.",
        "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
        brpop),
    spec!("blmove", 6, F | flag::DENYOOM, &["write", "list", "slow", "blocking"], KeyPos::range(1, 2, 1),
        "O(1)",
        "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.",
        blmove),
    spec!("brpoplpush", 4, F | flag::DENYOOM, &["write", "list", "slow", "blocking"], KeyPos::range(1, 2, 1),
        "O(1)",
        "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.",
        brpoplpush),
    CommandSpec {
        getkeys: Some(mpop_keys),
        ..spec!("blmpop", -5, flag::WRITE | flag::BLOCKING | flag::MOVABLEKEYS, &["write", "list", "slow", "blocking"], KeyPos::NONE,
            "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
            "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.",
            blmpop)
    },
    spec!("bzpopmin", -3, F | flag::FAST, &["write", "sortedset", "fast", "blocking"], KeyPos::range(1, -2, 1),
        "O(log(N)) with N being the number of elements in the sorted set.",
        "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.",
        bzpopmin),
    spec!("bzpopmax", -3, F | flag::FAST, &["write", "sortedset", "fast", "blocking"], KeyPos::range(1, -2, 1),
        "O(log(N)) with N being the number of elements in the sorted set.",
        "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.",
        bzpopmax),
    CommandSpec {
        getkeys: Some(mpop_keys),
        ..spec!("bzmpop", -5, flag::WRITE | flag::BLOCKING | flag::MOVABLEKEYS, &["write", "sortedset", "slow", "blocking"], KeyPos::NONE,
            "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
            "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.",
            bzmpop)
    },
];

/// Keys of BLMPOP/BZMPOP: `numkeys` at index 2, keys after it.
fn mpop_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    let n = crate::util::parse_i64(args.get(2)?)?;
    if n <= 0 || 3 + n as usize > args.len() {
        return None;
    }
    Some((3..3 + n as usize).collect())
}

/// Common path: try now, else block (or reply the timeout value in EXEC).
fn run(ctx: &mut Ctx, keys: &[&[u8]], timeout: &[u8], op: BlockOp) {
    let deadline = match blocking::parse_timeout(timeout, ctx.now_ms) {
        Ok(d) => d,
        Err(e) => return ctx.error(e),
    };
    let srv = ctx.srv;
    let limits = ctx.settings.limits;
    let flags = ctx.settings.notify_keyspace_events;
    let db = ctx.client.db;
    // The registration must happen while the keys' partitions are held (see
    // crate::blocking); take them for the whole check.
    let mut lock_keys: Vec<store::Key> = keys.iter().map(|k| store::Key::new(k)).collect();
    if let BlockOp::ListMove { dest, .. } = &op {
        lock_keys.push(store::Key::new(dest));
    }
    let hold = srv.keyspace.hold_keys(&lock_keys);
    match blocking::try_now(
        srv,
        &limits,
        flags,
        ctx.client.id,
        db,
        keys,
        &op,
        ctx.now_ms,
        ctx.out,
    ) {
        Err(_) => return ctx.error(ERR_WRONGTYPE),
        Ok(Some(_)) => return,
        Ok(None) => {}
    }
    if ctx.client.in_exec {
        drop(hold);
        op.empty_reply(ctx.out);
        return;
    }
    let Some(worker) = crate::hub::current_worker() else {
        drop(hold);
        op.timeout_reply(ctx.out);
        return;
    };
    let w = Arc::new(Waiter::new(
        ctx.client.id,
        worker,
        db,
        keys.iter().map(|k| k.to_vec()).collect(),
        op,
        ctx.client.protocol,
        deadline,
    ));
    srv.blocking.register(w.clone());
    drop(hold);
    ctx.client.blocked = Some(w);
}

fn blpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    run(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        BlockOp::ListPop { left: true },
    );
}

fn brpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    run(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        BlockOp::ListPop { left: false },
    );
}

fn side(a: &[u8], left: &str, right: &str) -> Option<bool> {
    if eq_ic(a, left) {
        Some(true)
    } else if eq_ic(a, right) {
        Some(false)
    } else {
        None
    }
}

fn blmove(ctx: &mut Ctx, args: &[&[u8]]) {
    let (Some(from_left), Some(to_left)) = (
        side(args[3], "left", "right"),
        side(args[4], "left", "right"),
    ) else {
        return ctx.error(ERR_SYNTAX);
    };
    let op = BlockOp::ListMove {
        dest: args[2].to_vec(),
        from_left,
        to_left,
    };
    run(ctx, &args[1..2], args[5], op);
}

fn brpoplpush(ctx: &mut Ctx, args: &[&[u8]]) {
    let op = BlockOp::ListMove {
        dest: args[2].to_vec(),
        from_left: false,
        to_left: true,
    };
    run(ctx, &args[1..2], args[3], op);
}

/// `timeout numkeys key... <LEFT|RIGHT|MIN|MAX> [COUNT n]` (Redis's order of
/// checks: numkeys, then the direction and options, then COUNT's value).
fn mpop(ctx: &mut Ctx, args: &[&[u8]], dirs: (&str, &str), zset: bool) {
    let numkeys = match crate::util::parse_i64(args[2]) {
        Some(n) if n > 0 => n as u64,
        _ => return ctx.error("ERR numkeys should be greater than 0"),
    };
    if numkeys >= (args.len() - 3) as u64 {
        return ctx.error(ERR_SYNTAX);
    }
    let where_i = 3 + numkeys as usize;
    let Some(first) = side(args[where_i], dirs.0, dirs.1) else {
        return ctx.error(ERR_SYNTAX);
    };
    let mut count: Option<usize> = None;
    let mut j = where_i + 1;
    while j < args.len() {
        if eq_ic(args[j], "count") && j + 1 < args.len() && count.is_none() {
            match crate::util::parse_i64(args[j + 1]) {
                Some(c) if c > 0 => count = Some(c as usize),
                _ => return ctx.error("ERR count should be greater than 0"),
            }
            j += 2;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
    }
    let count = count.unwrap_or(1);
    let op = if zset {
        BlockOp::ZMPop { max: !first, count }
    } else {
        BlockOp::ListMPop { left: first, count }
    };
    run(ctx, &args[3..where_i], args[1], op);
}

fn blmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    mpop(ctx, args, ("left", "right"), false);
}

fn bzmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    mpop(ctx, args, ("min", "max"), true);
}

fn bzpopmin(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    run(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        BlockOp::ZPop { max: false },
    );
}

fn bzpopmax(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    run(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        BlockOp::ZPop { max: true },
    );
}
