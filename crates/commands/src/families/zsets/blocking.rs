//! The blocking sorted-set commands: BZPOPMIN, BZPOPMAX, BZMPOP (see
//! `families::lists::blocking` for how blocking works; [`ZsetOp`] is what
//! the blocking service runs when a key gets data).

use collections::{Limits, ZsetValue};
use resp::ReplyBuf;
use store::keyspace::MultiGuard;
use store::Key;

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

/// What a blocked sorted-set command does once one of its keys has data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZsetOp {
    /// BZPOPMIN / BZPOPMAX: reply `[key, member, score]`.
    Pop { max: bool },
    /// BZMPOP: reply `[key, [[member, score], ...]]`.
    MPop { max: bool, count: usize },
}

impl BlockedOp for ZsetOp {
    fn awaits(&self) -> store::Kind {
        store::Kind::ZSet
    }

    fn ready(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &Key<'_>,
        now_ms: u64,
    ) -> Result<Readiness, WrongType> {
        Ok(if coll::check::<ZsetValue>(g.part(key), db, key, now_ms)? {
            Readiness::Ready
        } else {
            Readiness::Empty
        })
    }

    fn serve(
        &self,
        g: &mut MultiGuard<'_>,
        db: usize,
        key: &[u8],
        now_ms: u64,
        _limits: &Limits,
        out: &mut ReplyBuf,
        effects: &mut Served,
    ) {
        let (max, want) = match *self {
            ZsetOp::Pop { max } => (max, 1),
            ZsetOp::MPop { max, count } => (max, count),
        };
        let k = Key::new(key);
        let popped = super::write::pop_key(g.part(&k), db, &k, now_ms, max, want)
            .ok()
            .flatten()
            .expect("ready() checked the sorted set under the same locks");
        effects.event(notify::ZSET, if max { "zpopmax" } else { "zpopmin" }, key);
        if popped.emptied {
            effects.event(notify::GENERIC, "del", key);
        }
        effects.touched.push(key.to_vec());
        let mut c = vec![
            if max {
                b"ZPOPMAX".to_vec()
            } else {
                b"ZPOPMIN".to_vec()
            },
            key.to_vec(),
        ];
        if matches!(self, ZsetOp::MPop { .. }) {
            c.push(want.to_string().into_bytes());
        }
        effects.propagate.push(c);
        if matches!(self, ZsetOp::MPop { .. }) {
            out.array_len(2);
            out.bulk(key);
            out.array_len(popped.items.len());
            for (m, s) in &popped.items {
                out.array_len(2);
                out.bulk(m);
                out.double(*s);
            }
        } else {
            let (m, s) = &popped.items[0];
            out.array_len(3);
            out.bulk(key);
            out.bulk(m);
            out.double(*s);
        }
    }

    fn timeout_reply(&self, out: &mut ReplyBuf) {
        out.null_array();
    }

    fn empty_reply(&self, out: &mut ReplyBuf) {
        out.null_array();
    }
}

fn bzpopmin(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    block_or_serve(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        Box::new(ZsetOp::Pop { max: false }),
    );
}

fn bzpopmax(ctx: &mut Ctx, args: &[&[u8]]) {
    let n = args.len();
    block_or_serve(
        ctx,
        &args[1..n - 1],
        args[n - 1],
        Box::new(ZsetOp::Pop { max: true }),
    );
}

fn bzmpop(ctx: &mut Ctx, args: &[&[u8]]) {
    match parse_mpop(args, ("min", "max")) {
        Ok((keys, min, count)) => block_or_serve(
            ctx,
            &args[keys],
            args[1],
            Box::new(ZsetOp::MPop { max: !min, count }),
        ),
        Err(e) => ctx.error(e),
    }
}
