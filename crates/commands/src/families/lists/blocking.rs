//! The blocking list commands: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP.
//!
//! Each first tries its keys in order like its non-blocking form; when all
//! are empty it blocks through the blocking service
//! ([`crate::services::blocking::block_or_serve`]) until it is served, times
//! out, is unblocked (CLIENT UNBLOCK) or disconnects. Inside MULTI (EXEC)
//! they never block: an empty result is the timeout reply, as in Redis.
//! [`ListOp`] is what the service runs when a key gets data.

use collections::value::list::End;
use collections::{Limits, ListValue};
use resp::ReplyBuf;
use store::keyspace::MultiGuard;
use store::Key;

use crate::base::errors::ERR_SYNTAX;
use crate::base::errors::ERR_WRONGTYPE;
use crate::base::parse::eq_ic;
use crate::kernel::blocking::{BlockedOp, Readiness, Served};
use crate::kernel::coll::{self, WrongType};
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::services::blocking::{block_or_serve, mpop_keys, parse_mpop};

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
];

/// What a blocked list command does once one of its keys has data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListOp {
    /// BLPOP / BRPOP: reply `[key, element]`.
    Pop { left: bool },
    /// BLMPOP: reply `[key, [elements]]`.
    MPop { left: bool, count: usize },
    /// BLMOVE / BRPOPLPUSH: reply the element. `dest` is a one-key vector
    /// so it can be handed out as [`BlockedOp::extra_keys`].
    Move {
        dest: Vec<Vec<u8>>,
        from_left: bool,
        to_left: bool,
        /// BRPOPLPUSH (journaled as RPOPLPUSH rather than LMOVE).
        rpoplpush: bool,
    },
}

fn side_word(left: bool) -> Vec<u8> {
    let w: &[u8] = if left { b"left" } else { b"right" };
    w.to_vec()
}

fn end(left: bool) -> End {
    if left {
        End::Head
    } else {
        End::Tail
    }
}

impl BlockedOp for ListOp {
    fn awaits(&self) -> store::Kind {
        store::Kind::List
    }

    fn extra_keys(&self) -> &[Vec<u8>] {
        match self {
            ListOp::Move { dest, .. } => dest,
            _ => &[],
        }
    }

    fn ready(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &Key<'_>,
        now_ms: u64,
    ) -> Result<Readiness, WrongType> {
        if !coll::check::<ListValue>(g.part(key), db, key, now_ms)? {
            return Ok(Readiness::Empty);
        }
        if let ListOp::Move { dest, .. } = self {
            let dk = Key::new(&dest[0]);
            if coll::check::<ListValue>(g.part(&dk), db, &dk, now_ms).is_err() {
                return Ok(Readiness::Refused(ERR_WRONGTYPE));
            }
        }
        Ok(Readiness::Ready)
    }

    fn serve(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &[u8],
        now_ms: u64,
        limits: &Limits,
        out: &mut ReplyBuf,
        effects: &mut Served,
    ) {
        let k = Key::new(key);
        match self {
            ListOp::Pop { left } | ListOp::MPop { left, .. } => {
                let want = match self {
                    ListOp::MPop { count, .. } => *count,
                    _ => 1,
                };
                let popped = super::pop_elems(g.part(&k), db, &k, now_ms, end(*left), want)
                    .ok()
                    .flatten()
                    .expect("ready() checked the list under the same locks");
                effects.event(notify::LIST, if *left { "lpop" } else { "rpop" }, key);
                if popped.deleted {
                    effects.event(notify::GENERIC, "del", key);
                }
                effects.touched.push(key.to_vec());
                let mut c = vec![
                    if *left {
                        b"LPOP".to_vec()
                    } else {
                        b"RPOP".to_vec()
                    },
                    key.to_vec(),
                ];
                if matches!(self, ListOp::MPop { .. }) {
                    c.push(want.to_string().into_bytes());
                }
                effects.propagate.push(c);
                out.array_len(2);
                out.bulk(key);
                if matches!(self, ListOp::MPop { .. }) {
                    out.array_len(popped.elems.len());
                    for i in &popped.elems {
                        out.bulk(i);
                    }
                } else {
                    out.bulk(&popped.elems[0]);
                }
            }
            ListOp::Move {
                dest,
                from_left,
                to_left,
                rpoplpush,
            } => {
                let dk = Key::new(&dest[0]);
                let moved = super::move_elem(
                    g,
                    db,
                    &k,
                    &dk,
                    now_ms,
                    end(*from_left),
                    end(*to_left),
                    limits,
                )
                .ok()
                .flatten()
                .expect("ready() checked both lists under the same locks");
                effects.event(notify::LIST, if *from_left { "lpop" } else { "rpop" }, key);
                if moved.src_deleted {
                    effects.event(notify::GENERIC, "del", key);
                }
                effects.event(
                    notify::LIST,
                    if *to_left { "lpush" } else { "rpush" },
                    &dest[0],
                );
                effects.touched.push(key.to_vec());
                effects.touched.push(dest[0].clone());
                effects.propagate.push(if *rpoplpush {
                    vec![b"RPOPLPUSH".to_vec(), key.to_vec(), dest[0].clone()]
                } else {
                    vec![
                        b"LMOVE".to_vec(),
                        key.to_vec(),
                        dest[0].clone(),
                        side_word(*from_left),
                        side_word(*to_left),
                    ]
                });
                out.bulk(&moved.elem);
            }
        }
    }

    /// A null array for every blocking list command, BLMOVE included (Redis 7.0).
    fn timeout_reply(&self, out: &mut ReplyBuf) {
        out.null_array();
    }

    /// What the non-blocking form answers on nothing: LMOVE a null bulk.
    fn empty_reply(&self, out: &mut ReplyBuf) {
        match self {
            ListOp::Move { .. } => out.null_bulk(),
            _ => out.null_array(),
        }
    }
}

fn blpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    block_or_serve(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        Box::new(ListOp::Pop { left: true }),
    );
}

fn brpop(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    block_or_serve(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        Box::new(ListOp::Pop { left: false }),
    );
}

fn side(a: &[u8]) -> Option<bool> {
    if eq_ic(a, "left") {
        Some(true)
    } else if eq_ic(a, "right") {
        Some(false)
    } else {
        None
    }
}

fn blmove(ctx: &mut Ctx, args: &[&[u8]]) {
    let (Some(from_left), Some(to_left)) = (side(args[3]), side(args[4])) else {
        return ctx.error(ERR_SYNTAX);
    };
    let op = ListOp::Move {
        dest: vec![args[2].to_vec()],
        from_left,
        to_left,
        rpoplpush: false,
    };
    block_or_serve(ctx, &args[1..2], args[5], Box::new(op));
}

fn brpoplpush(ctx: &mut Ctx, args: &[&[u8]]) {
    let op = ListOp::Move {
        dest: vec![args[2].to_vec()],
        from_left: false,
        to_left: true,
        rpoplpush: true,
    };
    block_or_serve(ctx, &args[1..2], args[3], Box::new(op));
}

fn blmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    match parse_mpop(args, ("left", "right")) {
        Ok((keys, left, count)) => block_or_serve(
            ctx,
            &args[keys],
            args[1],
            Box::new(ListOp::MPop { left, count }),
        ),
        Err(e) => ctx.error(e),
    }
}
