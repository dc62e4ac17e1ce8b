//! Replication commands: REPLICAOF/SLAVEOF (the replica side), SYNC,
//! PSYNC, REPLCONF, WAIT, ROLE, FAILOVER (the work is
//! `services::replication`).

use collections::Limits;
use resp::ReplyBuf;
use store::keyspace::MultiGuard;
use store::Key;

use crate::base::errors::{
    ERR_NOT_INT, ERR_SYNTAX, ERR_TIMEOUT_NEGATIVE, ERR_TIMEOUT_NOT_INTEGER_OUT_OF_RANGE,
};
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::blocking::{BlockedOp, Readiness, Served};
use crate::kernel::client::ClientKind;
use crate::kernel::client::SyncRequest;
use crate::kernel::coll::WrongType;
use crate::kernel::ctx::Ctx;
use crate::kernel::replication::{Master, WaitEntry};
use crate::kernel::spec::{flag, CommandSpec, Docs};

/// SYNC / PSYNC: the worker hands the connection to the replication
/// service after this command (`Client::repl.handoff`).
fn sync(ctx: &mut Ctx, args: &[&[u8]]) {
    // A replica asking again is ignored, as Redis does.
    if ctx.client.kind == ClientKind::Replica {
        return;
    }
    // `PSYNC <replid> <offset> FAILOVER`: our master hands its role over
    // to us (its FAILOVER): we become a master if we follow its history.
    if args.len() > 3 && eq_ic(args[0], "psync") && eq_ic(args[3], "failover") {
        if args[1] != ctx.srv.replication.ids().replid.as_bytes() {
            return ctx.error("ERR PSYNC FAILOVER replid must match my replid.");
        }
        crate::services::replication::replica::promote_for_failover(
            ctx.srv,
            &ctx.client.shared.addr,
        );
    }
    if crate::services::replication::failover::in_progress(ctx.srv) {
        return ctx.error("NOMASTERLINK Can't SYNC while failing over");
    }
    // A replica serves its own replicas (chained replication) only while
    // its link with its master is up, as Redis.
    if !crate::services::replication::can_serve_replicas(ctx.srv) {
        return ctx.error("NOMASTERLINK Can't SYNC while not connected with my master");
    }
    let req = if eq_ic(args[0], "psync") {
        let Some(offset) = parse_i64(args[2]) else {
            return ctx.error(ERR_NOT_INT);
        };
        SyncRequest::Psync {
            replid: String::from_utf8_lossy(args[1]).into_owned(),
            offset,
        }
    } else {
        SyncRequest::Sync
    };
    ctx.client.kind = ClientKind::Replica;
    ctx.client.repl.handoff = Some(req);
}

fn replconf(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len().is_multiple_of(2) {
        return ctx.error(ERR_SYNTAX);
    }
    for pair in args[1..].chunks(2) {
        let (opt, val) = (pair[0], pair[1]);
        if eq_ic(opt, "listening-port") {
            match parse_i64(val) {
                Some(p) => ctx.client.repl.listening_port = p.clamp(0, 65535) as u16,
                None => return ctx.error(ERR_NOT_INT),
            }
        } else if eq_ic(opt, "ip-address") {
            if val.len() >= 46 {
                return ctx.error_with_arg(
                    "ERR REPLCONF ip-address provided by replica instance is too long: ",
                    &val.len().to_string().into_bytes(),
                    " bytes",
                );
            }
            ctx.client.repl.ip_address = Some(String::from_utf8_lossy(val).into_owned());
        } else if eq_ic(opt, "capa") {
            if eq_ic(val, "eof") {
                ctx.client.repl.capa_eof = true;
            } else if eq_ic(val, "psync2") {
                ctx.client.repl.capa_psync2 = true;
            }
        } else if eq_ic(opt, "ack") || eq_ic(opt, "getack") {
            // Acks come over the replica's own link (the replication
            // service reads them); from anyone else, and GETACK on a
            // master, nothing is answered, as in Redis.
            return;
        } else if eq_ic(opt, "rdb-only") {
            // The payload only, no stream after it (redis-cli --rdb).
            match parse_i64(val) {
                Some(0) => ctx.client.repl.rdb_only = false,
                Some(1) => ctx.client.repl.rdb_only = true,
                Some(_) => {
                    return ctx.error("ERR value is out of range, value must between 0 and 1")
                }
                None => return ctx.error(ERR_NOT_INT),
            }
        } else if eq_ic(opt, "rdb-filter-only") {
            // Only the empty filter (the whole dataset): the `functions`
            // filter is not built.
            if !val.is_empty() {
                return ctx.error_with_arg("ERR Unsupported rdb-filter-only option: ", val, "");
            }
        } else {
            return ctx.error_with_arg("ERR Unrecognized REPLCONF option: ", opt, "");
        }
    }
    ctx.ok();
}

/// WAIT's waiter: keyless, answered by `services::replication::wake_waiters`
/// or, on timeout, with the count at that moment.
#[derive(Debug)]
struct WaitOp {
    master: std::sync::Arc<Master>,
    offset: u64,
}

impl BlockedOp for WaitOp {
    fn awaits(&self) -> store::Kind {
        store::Kind::String
    }

    fn ready(
        &self,
        _g: &mut MultiGuard<'_>,
        _db: usize,
        _key: &Key<'_>,
        _now_ms: u64,
    ) -> Result<Readiness, WrongType> {
        Ok(Readiness::NotYet)
    }

    fn serve(
        &self,
        _g: &mut MultiGuard<'_>,
        _db: usize,
        _key: &[u8],
        _now_ms: u64,
        _limits: &Limits,
        _out: &mut ReplyBuf,
        _effects: &mut Served,
    ) {
    }

    fn timeout_reply(&self, out: &mut ReplyBuf) {
        out.int(self.master.acked(self.offset) as i64);
    }

    fn empty_reply(&self, out: &mut ReplyBuf) {
        self.timeout_reply(out);
    }
}

fn wait(ctx: &mut Ctx, args: &[&[u8]]) {
    // Redis 7.0 refuses WAIT on a replica before reading its arguments.
    if crate::services::replication::is_replica(ctx.srv) {
        return ctx.error("ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 if a replica is configured to be writable (which is not the default) writes to replicas are just local and are not propagated.");
    }
    let Some(num) = parse_i64(args[1]) else {
        return ctx.error(ERR_NOT_INT);
    };
    let Some(timeout) = parse_i64(args[2]) else {
        return ctx.error(ERR_TIMEOUT_NOT_INTEGER_OUT_OF_RANGE);
    };
    if timeout < 0 {
        return ctx.error(ERR_TIMEOUT_NEGATIVE);
    }
    let master = ctx.srv.replication.master.clone();
    // Every write this client made is at or below the current offset.
    let offset = master.offset();
    let acked = master.acked(offset);
    if acked as i64 >= num || ctx.client.in_exec {
        return ctx.out.int(acked as i64);
    }
    let deadline =
        (timeout > 0).then(|| crate::base::clock::unix_time_ms().saturating_add(timeout as u64));
    let op = Box::new(WaitOp {
        master: master.clone(),
        offset,
    });
    crate::services::blocking::park(ctx, &[], deadline, op);
    let Some(w) = ctx.client.blocked.clone() else {
        // Not blocked (off a worker thread): `park` answered.
        return;
    };
    master.waits.lock().push(WaitEntry {
        waiter: w,
        offset,
        num: num.max(0) as usize,
    });
    crate::services::replication::request_acks(ctx.srv);
    crate::services::replication::wake_waiters(ctx.srv);
}

/// REPLICAOF / SLAVEOF host port | NO ONE.
fn replicaof(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::services::replication::replica::{replicaof as set, Outcome};
    if crate::services::replication::failover::in_progress(ctx.srv) {
        return ctx.error("ERR REPLICAOF not allowed while failing over.");
    }
    let target = if eq_ic(args[1], "no") && eq_ic(args[2], "one") {
        None
    } else {
        if ctx.client.kind == ClientKind::Replica {
            return ctx.error("ERR Command is not valid when client is a replica.");
        }
        let Some(port) = parse_i64(args[2]).filter(|p| (0..=65535).contains(p)) else {
            return ctx.error("ERR Invalid master port");
        };
        Some((String::from_utf8_lossy(args[1]).into_owned(), port as u16))
    };
    match set(ctx.srv, target) {
        Outcome::Ok => ctx.ok(),
        Outcome::AlreadyConnected => ctx.out.simple("OK Already connected to specified master"),
    }
}

/// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: the checks, in
/// Redis 7.0's order; the work is `services::replication::failover`.
fn failover(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::services::replication::failover::{self as fo, TargetCheck};
    if ctx.srv.cluster.enabled {
        return ctx.error("ERR FAILOVER not allowed in cluster mode.");
    }
    let mut target: Option<(String, i64)> = None;
    let mut timeout: i64 = 0;
    let (mut force, mut abort) = (false, false);
    let mut i = 1;
    while i < args.len() {
        let a = args[i];
        if eq_ic(a, "to") && i + 2 < args.len() && target.is_none() {
            let Some(port) = parse_i64(args[i + 2]) else {
                return ctx.error(ERR_NOT_INT);
            };
            target = Some((String::from_utf8_lossy(args[i + 1]).into_owned(), port));
            i += 2;
        } else if eq_ic(a, "timeout") && i + 1 < args.len() && timeout <= 0 {
            let Some(t) = parse_i64(args[i + 1]) else {
                return ctx.error(ERR_NOT_INT);
            };
            if t <= 0 {
                return ctx.error("ERR FAILOVER timeout must be greater than 0");
            }
            timeout = t;
            i += 1;
        } else if eq_ic(a, "force") && !force {
            force = true;
        } else if eq_ic(a, "abort") && !abort {
            abort = true;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
        i += 1;
    }
    if abort {
        if force || timeout != 0 || target.is_some() {
            return ctx.error(ERR_SYNTAX);
        }
        if !fo::abort_request(ctx.srv) {
            return ctx.error("ERR No failover in progress.");
        }
        return ctx.ok();
    }
    if crate::services::replication::is_replica(ctx.srv) {
        return ctx.error("ERR FAILOVER is not valid when server is a replica.");
    }
    if !fo::has_replicas(ctx.srv) {
        return ctx.error("ERR FAILOVER requires connected replicas.");
    }
    if fo::in_progress(ctx.srv) {
        return ctx.error("ERR FAILOVER already in progress.");
    }
    if force && (timeout == 0 || target.is_none()) {
        return ctx.error(
            "ERR FAILOVER with force option requires both a timeout and target HOST and IP.",
        );
    }
    let target = match target {
        Some((host, port)) => {
            let port = u16::try_from(port).ok();
            let check = port.map_or(TargetCheck::NotAReplica, |p| {
                fo::check_target(ctx.srv, &host, p)
            });
            match check {
                TargetCheck::NotAReplica => {
                    return ctx.error("ERR FAILOVER target HOST and PORT is not a replica.")
                }
                TargetCheck::NotOnline => {
                    return ctx.error("ERR FAILOVER target replica is not online.")
                }
                TargetCheck::Online => port.map(|p| (host, p)),
            }
        }
        None => None,
    };
    let Some(srv) = crate::services::replication::server() else {
        return ctx.error("ERR FAILOVER is not available in this context");
    };
    fo::start(&srv, target, timeout as u64, force);
    ctx.ok();
}

fn role(ctx: &mut Ctx, _args: &[&[u8]]) {
    let side = &ctx.srv.replication.replica;
    if let Some((host, port)) = side.master.lock().clone() {
        let state = if side.link_up.load(std::sync::atomic::Ordering::Relaxed) {
            "connected"
        } else if side
            .sync_in_progress
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            "sync"
        } else {
            "connect"
        };
        ctx.out.array_len(5);
        ctx.out.bulk(b"slave");
        ctx.out.bulk(host.as_bytes());
        ctx.out.int(port as i64);
        ctx.out.bulk(state.as_bytes());
        ctx.out
            .int(side.offset.load(std::sync::atomic::Ordering::Relaxed) as i64);
        return;
    }
    let replicas: Vec<_> = crate::services::replication::replicas(ctx.srv)
        .into_iter()
        .filter(|r| r.state == "online")
        .collect();
    ctx.out.array_len(3);
    ctx.out.bulk(b"master");
    ctx.out.int(ctx.srv.replication.master.offset() as i64);
    ctx.out.array_len(replicas.len());
    for r in replicas {
        ctx.out.array_len(3);
        ctx.out.bulk(r.ip.as_bytes());
        ctx.out.bulk(r.port.to_string().as_bytes());
        ctx.out.bulk(r.offset.to_string().as_bytes());
    }
}

const REPLICAOF_FLAGS: u32 = flag::ADMIN | flag::NOSCRIPT | flag::STALE | flag::NO_ASYNC_LOADING;

const SYNC_FLAGS: u32 = flag::ADMIN | flag::NOSCRIPT | flag::NO_ASYNC_LOADING | flag::NO_MULTI;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new(
            "O(1)",
            "Start a coordinated failover between this server and one of its replicas.",
        ),
        ..CommandSpec::new(
            "failover",
            -1,
            flag::ADMIN | flag::NOSCRIPT | flag::STALE,
            failover,
        )
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new(
            "O(1)",
            "Make the server a replica of another instance, or promote it as master.",
        ),
        ..CommandSpec::new("replicaof", 3, REPLICAOF_FLAGS, replicaof)
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new(
            "O(1)",
            "Make the server a replica of another instance, or promote it as master.",
        ),
        ..CommandSpec::new("slaveof", 3, REPLICAOF_FLAGS, replicaof)
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new("", "Internal command used for replication"),
        ..CommandSpec::new("sync", 1, SYNC_FLAGS, sync)
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new("", "Internal command used for replication"),
        ..CommandSpec::new("psync", -3, SYNC_FLAGS, sync)
    },
    CommandSpec {
        acl: &["admin", "slow", "dangerous"],
        docs: Docs::new("O(1)", "An internal command for configuring the replication stream"),
        ..CommandSpec::new(
            "replconf",
            -1,
            flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::ALLOW_BUSY,
            replconf,
        )
    },
    CommandSpec {
        acl: &["slow", "connection"],
        docs: Docs::new(
            "O(1)",
            "Wait for the synchronous replication of all the write commands sent in the context of the current connection",
        ),
        ..CommandSpec::new("wait", 3, flag::NOSCRIPT, wait)
    },
    CommandSpec {
        acl: &["admin", "fast", "dangerous"],
        docs: Docs::new("O(1)", "Return the role of the instance in the context of replication"),
        ..CommandSpec::new(
            "role",
            1,
            flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::FAST,
            role,
        )
    },
];
