//! Replication, master side (issue 21): replicas attach with SYNC/PSYNC
//! and get a full sync from the forkless snapshot or a partial resync
//! from the backlog, then the write journal's stream (`services::journal`
//! produces it; this service is its second consumer, through
//! `Journal::set_feed`, beside the AOF). The shared state is
//! `kernel::replication`; the per-replica threads are [`master`].
//!
//! * **The stream** is on from the first replica until the backlog's TTL
//!   (`repl-backlog-ttl`) passes with no replica attached
//!   ([`ensure_stream`], the cron). Turning it on creates the backlog with
//!   a new replication ID (as Redis does when it creates a backlog from
//!   scratch) and then waits until every worker's script gate has been
//!   empty once, so no command that saw the journal off is still running
//!   when a full sync takes its cut.
//! * **The cron** (one thread, started with the stream) sends `PING` into
//!   the stream every `repl-ping-replica-period` while replicas are
//!   attached, keeps the backlog size and the replica output limit in line
//!   with the settings, and frees the backlog after its TTL.
//! * **WAIT** blocks the client as a keyless waiter
//!   (`kernel::blocking::Waiter`) in `Master::waits`; every `REPLCONF ACK`
//!   and every link that ends re-checks them ([`wake_waiters`]); the
//!   worker times them out like any blocked client. Blocking sends
//!   `REPLCONF GETACK *` into the stream so replicas answer at once.
//!
//! The replica side (REPLICAOF) is [`replica`]; FAILOVER is [`failover`].
//!
//! * **Chained replicas.** A replica serves SYNC/PSYNC of its own
//!   replicas while its link is up (else `-NOMASTERLINK`). Its stream is
//!   its master's, proxied verbatim: the link thread records the exact
//!   bytes of each unit it applies (`Master::record_applied`: offset,
//!   backlog, sub-replicas' output) under `ReplicaSide::apply_lock`, and a
//!   full sync to a sub-replica takes its cut under that lock, so the
//!   snapshot, its master's ID and offset and `repl-stream-db` agree.
//!   The journal feeds nothing on a replica; its cron sends no PING (the
//!   master's PINGs are proxied). A new ID (`+CONTINUE <id>`, promotion)
//!   and a full sync from the master close the sub-replicas' links: they
//!   reconnect and continue by partial resync from replid2, or sync
//!   again.
//!
//! * **TLS.** A replica on the master's TLS port keeps its TLS session
//!   after the hand-over ([`socket::Socket::Shared`]); with
//!   `tls-replication yes` a replica dials its master over TLS through
//!   the dialer the server installs ([`socket::set_tls_dialer`]) and
//!   announces its TLS port.
//!
//! Dispatch checks `min-replicas-to-write` ([`too_few_good_replicas`]),
//! `-READONLY` on a replica ([`refuses_writes`], scripts' writes included)
//! and `replica-serve-stale-data no` ([`serves_stale_only`]: `-MASTERDOWN`
//! for commands without the `stale` flag while the link is not up). On a
//! replica, expiry is frozen (`Server::refresh_expiry_freeze`): expired
//! keys read as missing but stay until the master's `DEL`.
//!
//! * **Full sync** ([`fullsync`]): one snapshot for the replicas that
//!   start together (a diskless group formed during
//!   `repl-diskless-sync-delay`, cut short by
//!   `repl-diskless-sync-max-replicas`; a disk RDB being written, joined
//!   while the backlog covers its cut).
//! * **A replica that does not read** (it loads its payload, or it is
//!   slow) has its pending stream beyond a few MB spooled to an unlinked
//!   file in `dir` (`kernel::replication::spool`): the master's memory
//!   stays bounded during a full sync under full-speed writes, and the
//!   replica output limits still count every pending byte, as Redis.

pub mod diskless_load;
pub mod failover;
pub mod fullsync;
pub mod master;
pub mod master_link;
pub mod propagation;
pub mod replica;
pub mod shutdown_wait;
pub mod socket;

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Once};
use std::time::Duration;

use resp::ReplyBuf;

use crate::kernel::config::Settings;
use crate::kernel::hub::WorkerMsg;
use crate::kernel::journal::encode_command;
use crate::kernel::replication::{Backlog, Limit, ReplicaLink};
use crate::kernel::server::Server;

static THIS: std::sync::OnceLock<std::sync::Weak<Server>> = std::sync::OnceLock::new();

/// Tells replication which server it serves (at startup, once), so
/// commands can start the threads replication runs on.
pub fn install(srv: &Arc<Server>) {
    let _ = THIS.set(Arc::downgrade(srv));
}

/// Starts following the master `replicaof` names in the configuration
/// (once the dataset is loaded, at startup).
pub fn start_configured(srv: &Arc<Server>) {
    if let Some(target) = srv.settings().repl.replicaof.clone() {
        // Nothing restored (`restore_save_info`): no history of our own.
        let side = &srv.replication.replica;
        if !side.place_restored.load(Relaxed) {
            side.no_history.store(true, Relaxed);
        }
        replica::replicaof(srv, Some(target));
    } else if srv.replication.master.inner.lock().backlog.is_some() {
        // A master that continues its saved history (`restore_save_info`):
        // its stream's cron (PINGs, the backlog's TTL) runs from now.
        start_cron(srv);
    }
}

/// The server [`install`] named.
pub fn server() -> Option<Arc<Server>> {
    THIS.get()?.upgrade()
}

/// Is this server a replica (its dataset follows a master's stream)?
pub fn is_replica(srv: &Server) -> bool {
    srv.replication.replica.is_replica.load(Relaxed)
}

/// Runs `f` with this server's place in its replication stream (ID,
/// offset and the stream's database) while the stream is held still, so
/// an RDB cut taken inside `f` holds exactly the writes up to that
/// offset; a restart then continues by partial resync
/// (`restore_save_info`). On a replica: its master's stream, held by
/// `ReplicaSide::apply_lock`. On a master: its own, only while it has a
/// backlog (as Redis), held by the journal's order lock. None otherwise,
/// during a full sync, or when the stream cannot be held within 50 ms (the
/// caller may hold what the writer waits for, e.g. inside EXEC): the file
/// is then written without them, and a restart takes a full sync.
pub fn with_save_info<R>(
    srv: &Server,
    f: impl FnOnce(Option<crate::services::snapshot::file::ReplAux>) -> R,
) -> R {
    use crate::services::snapshot::file::ReplAux;
    const HOLD: std::time::Duration = std::time::Duration::from_millis(50);
    let side = &srv.replication.replica;
    if !side.is_replica.load(Relaxed) {
        if !srv.journal.replicating() || crate::services::journal::in_scope() {
            return f(None);
        }
        let Some(_order) = srv.journal.order.try_write_for(HOLD) else {
            return f(None);
        };
        let m = &srv.replication.master;
        if side.is_replica.load(Relaxed) || m.inner.lock().backlog.is_none() {
            return f(None);
        }
        // The next write selects its database (Redis's slaveseldb, 0
        // when none was selected yet).
        let stream_db = srv.journal.out.lock().db.unwrap_or(0) as u32;
        return f(Some(ReplAux {
            stream_db,
            replid: srv.replication.ids().replid,
            offset: m.offset(),
        }));
    }
    let Some(_unit) = side.apply_lock.try_lock_for(HOLD) else {
        return f(None);
    };
    if !side.is_replica.load(Relaxed) || side.sync_in_progress.load(Relaxed) {
        return f(None);
    }
    f(Some(ReplAux {
        stream_db: side.stream_db.load(Relaxed),
        replid: srv.replication.ids().replid,
        offset: side.offset.load(Relaxed),
    }))
}

/// At startup, before `replicaof` from the configuration starts its link:
/// an RDB that recorded a place in a replication stream (see
/// [`with_save_info`]) continues that history, as in Redis 7.0.
/// * Starting as a replica: the place becomes this server's own (Redis's
///   "cached master using myself"), so the first PSYNC asks to continue
///   from there.
/// * Starting as a master: the saved ID stays valid as the previous one
///   up to the saved offset, a new ID starts there, and an empty backlog
///   starts at that offset, so the replicas of the server that saved the
///   file continue by partial resync.
pub fn restore_save_info(srv: &Server, stream_db: u32, replid: &str, offset: u64) {
    let settings = srv.settings();
    let side = &srv.replication.replica;
    side.place_restored.store(true, Relaxed);
    if settings.repl.replicaof.is_some() {
        srv.replication.set_replid(replid);
        srv.replication.master.set_offset(offset);
        side.stream_db.store(stream_db, Relaxed);
        return;
    }
    let m = &srv.replication.master;
    m.follow_from(offset, settings.repl.backlog_size);
    m.inner.lock().alone_since_ms = crate::base::clock::unix_time_ms();
    srv.replication.set_replid(replid);
    srv.replication.shift_replid(offset);
    resume_stream(srv);
}

/// A replica's cron: deletes the keys its own clients gave a TTL once it
/// passed (writable replicas; the master's keys wait for its `DEL`), as
/// Redis's `expireSlaveKeys`: counted in `expired_keys`, an `expired`
/// event each, a `DEL` in this replica's AOF, nothing in the stream it
/// proxies to its own replicas. Not while clients are paused or active
/// expiry is off (`DEBUG SET-ACTIVE-EXPIRE 0`).
pub fn expire_local_keys(srv: &Server) {
    if !is_replica(srv) || srv.pause_state().until_ms != 0 || !srv.keyspace.active_expire_enabled()
    {
        return;
    }
    let hz = srv.settings().hz.max(1);
    let budget = std::time::Duration::from_micros(1_000_000 / hz / 4);
    srv.keyspace.expire_replica_local_keys(
        budget,
        crate::base::clock::unix_time_ms(),
        &mut |step| crate::services::journal::shared_section(srv, step),
    );
}

/// Is this server a replica whose clients may not write (`-READONLY`):
/// a replica with `replica-read-only yes` (the default)? One relaxed load
/// when it is not a replica.
pub fn refuses_writes(srv: &Server, s: &Settings) -> bool {
    is_replica(srv) && s.repl.read_only
}

/// May SYNC/PSYNC be served now: always on a master; on a replica only
/// while its link with its master is up (Redis's `-NOMASTERLINK`).
pub fn can_serve_replicas(srv: &Server) -> bool {
    let side = &srv.replication.replica;
    !side.is_replica.load(Relaxed)
        || (side.link_up.load(Relaxed) && !side.sync_in_progress.load(Relaxed))
}

/// A replica was promoted (REPLICAOF NO ONE): if it has a backlog, its
/// clients' writes extend it from now on, so former sub-replicas and
/// siblings continue by partial resync. No order lock: REPLICAOF may run
/// inside EXEC, which holds it; a replica has no client writes in flight.
pub fn resume_stream(srv: &Server) {
    let m = &srv.replication.master;
    if m.inner.lock().backlog.is_none() || srv.journal.replicating() {
        return;
    }
    let feed_master = m.clone();
    srv.journal.set_feed(Arc::new(move |b| feed_master.feed(b)));
    srv.journal.out.lock().db = None;
    srv.journal.set_replicating(true);
    srv.keyspace.set_journal_expired(true);
}

/// A replica whose link to the master is not up (or whose first sync
/// has not finished) with `replica-serve-stale-data no`: only commands
/// with the `stale` flag run (`-MASTERDOWN`).
pub fn serves_stale_only(srv: &Server, s: &Settings) -> bool {
    !s.repl.serve_stale_data
        && srv.replication.replica.is_replica.load(Relaxed)
        && !srv.replication.replica.link_up.load(Relaxed)
}

/// `min-replicas-to-write`: fewer replicas than that are online with a
/// lag (since their last message) of at most `min-replicas-max-lag`
/// seconds, on a master (Redis refuses writes with `-NOREPLICAS`).
pub fn too_few_good_replicas(srv: &Server, s: &Settings) -> bool {
    let (want, max_lag) = (s.repl.min_replicas_to_write, s.repl.min_replicas_max_lag);
    if want == 0 || max_lag == 0 || is_replica(srv) {
        return false;
    }
    let now = crate::base::clock::unix_time_ms();
    let good = srv
        .replication
        .master
        .inner
        .lock()
        .replicas
        .iter()
        .filter(|r| {
            r.state.load(Relaxed) == crate::kernel::replication::state::ONLINE
                && now.saturating_sub(r.ack_ms.load(Relaxed)) / 1000 <= max_lag
        })
        .count() as u64;
    good < want
}

fn limit_of(s: &Settings) -> Limit {
    Limit {
        hard: s.output_replica.hard,
        soft: s.output_replica.soft,
        soft_seconds: s.output_replica.soft_seconds,
    }
}

/// Turns the replication stream on if it is off (see the module doc).
pub fn ensure_stream(srv: &Arc<Server>, settings: &Settings) {
    let m = &srv.replication.master;
    m.inner.lock().limit = limit_of(settings);
    if srv.replication.replica.is_replica.load(Relaxed) {
        // A replica's stream is its master's, proxied verbatim
        // (`Master::record_applied`); its backlog exists once synced.
        start_cron(srv);
        return;
    }
    if srv.journal.replicating() {
        return;
    }
    let feed_master = m.clone();
    srv.journal.set_feed(Arc::new(move |b| feed_master.feed(b)));
    {
        let _order = srv.journal.order.write();
        let mut g = m.inner.lock();
        if g.backlog.is_none() {
            g.backlog = Some(Backlog::new(settings.repl.backlog_size, g.offset));
            srv.replication.change_replid();
            srv.replication.clear_replid2();
        }
        drop(g);
        srv.journal.out.lock().db = None;
        srv.journal.set_replicating(true);
        srv.keyspace.set_journal_expired(true);
    }
    srv.scripting.wait_gates_drained(Duration::from_secs(10));
    start_cron(srv);
}

/// Removes an ended link from the replica list.
pub fn detach_link(srv: &Server, link: &Arc<ReplicaLink>) {
    let mut g = srv.replication.master.inner.lock();
    g.replicas.retain(|r| !Arc::ptr_eq(r, link));
    if g.replicas.is_empty() {
        g.alone_since_ms = crate::base::clock::unix_time_ms();
    }
}

/// CLIENT KILL (or ACL) closed client `c`: if it is an attached
/// replica, its link closes now, as Redis frees a killed replica at once.
/// Nothing fed after this reaches it (the feed skips closed links), not
/// even the rest of the EXEC or script that killed it, whose unit is fed
/// when it ends; what it had not been sent is dropped. It reconnects and
/// continues by partial resync from what it processed.
pub fn close_killed_link(srv: &Server, c: &crate::kernel::client::ClientShared) {
    if !c.has_flag(crate::kernel::client::cflag::REPLICA) {
        return;
    }
    let link = srv
        .replication
        .master
        .inner
        .lock()
        .replicas
        .iter()
        .find(|r| r.shared.id == c.id)
        .cloned();
    if let Some(link) = link {
        link.close();
    }
}

/// Appends a command of the server's own (PING, GETACK) to the stream.
fn feed_command(srv: &Server, argv: &[&[u8]]) {
    if !srv.journal.replicating() {
        return;
    }
    let mut bytes = Vec::with_capacity(48);
    encode_command(&mut bytes, argv);
    // The journal's `out` lock orders it among the journal's records.
    let _out = srv.journal.out.lock();
    srv.replication.master.feed(&bytes);
}

fn start_cron(srv: &Arc<Server>) {
    static STARTED: Once = Once::new();
    let srv = Arc::downgrade(srv);
    STARTED.call_once(move || {
        let _ = std::thread::Builder::new()
            .name("petrel-repl-cron".into())
            .spawn(move || cron(srv));
    });
}

fn cron(srv: std::sync::Weak<Server>) {
    let mut last_ping = std::time::Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(100));
        let Some(srv) = srv.upgrade() else {
            return;
        };
        let s = srv.settings();
        let m = &srv.replication.master;
        let now = crate::base::clock::unix_time_ms();
        let (attached, free_backlog) = {
            let mut g = m.inner.lock();
            g.limit = limit_of(&s);
            if let Some(b) = g.backlog.as_mut() {
                if b.size() as u64
                    != s.repl
                        .backlog_size
                        .max(crate::kernel::replication::BACKLOG_MIN_SIZE)
                {
                    b.resize(s.repl.backlog_size);
                }
            }
            let attached = !g.replicas.is_empty();
            // A replica keeps its backlog whatever the TTL (Redis's rule:
            // it may be promoted and continue its siblings).
            let expired = !attached
                && !srv.replication.replica.is_replica.load(Relaxed)
                && g.backlog.is_some()
                && s.repl.backlog_ttl > 0
                && now.saturating_sub(g.alone_since_ms) > s.repl.backlog_ttl * 1000;
            (attached, expired)
        };
        // No PING while a failover holds the stream still (the target
        // must reach the master's offset), CLUSTER FAILOVER's included.
        if attached
            && !srv.replication.failover.active.load(Relaxed)
            && !srv.cluster.mf_pausing.load(Relaxed)
            && last_ping.elapsed() >= Duration::from_secs(s.repl.ping_period)
        {
            last_ping = std::time::Instant::now();
            feed_command(&srv, &[b"PING".as_slice()]);
        }
        if free_backlog {
            let _order = srv.journal.order.write();
            let mut g = m.inner.lock();
            if g.replicas.is_empty() {
                g.backlog = None;
                srv.journal.set_replicating(false);
                srv.keyspace.set_journal_expired(srv.journal.enabled());
                srv.replication.change_replid();
                srv.replication.clear_replid2();
                crate::base::log::log(
                    crate::base::log::LogLevel::Notice,
                    &format!(
                        "Replication backlog freed after {} seconds without connected replicas.",
                        s.repl.backlog_ttl
                    ),
                );
            }
        }
    }
}

/// Answers the WAIT clients whose offset enough replicas acknowledged
/// (and forgets the ones that ended otherwise).
pub fn wake_waiters(srv: &Server) {
    let m = &srv.replication.master;
    let mut waits = m.waits.lock();
    if waits.is_empty() {
        return;
    }
    waits.retain(|e| {
        if e.waiter.is_done() {
            return false;
        }
        let n = m.acked(e.offset);
        if n < e.num {
            return true;
        }
        let Some(claim) = e.waiter.claim() else {
            return !e.waiter.is_done();
        };
        claim.complete();
        srv.blocking.unregister(&e.waiter);
        let mut out = ReplyBuf::new(e.waiter.protocol);
        out.int(n as i64);
        srv.hub.send(
            e.waiter.worker,
            WorkerMsg::Unblock {
                client_id: e.waiter.client_id,
                bytes: out.take(),
            },
        );
        false
    });
}

/// Asks every replica for its offset now (`REPLCONF GETACK *`).
pub fn request_acks(srv: &Server) {
    feed_command(srv, &[b"REPLCONF".as_slice(), b"GETACK", b"*"]);
}

/// One `slaveN:` value of INFO replication, and ROLE's triples.
pub struct ReplicaView {
    pub ip: String,
    pub port: u16,
    pub state: &'static str,
    pub offset: u64,
    pub lag_secs: u64,
}

/// The attached replicas, in attach order.
pub fn replicas(srv: &Server) -> Vec<ReplicaView> {
    let now = crate::base::clock::unix_time_ms();
    srv.replication
        .master
        .inner
        .lock()
        .replicas
        .iter()
        .map(|r| ReplicaView {
            ip: r.ip.clone(),
            port: r.port,
            state: crate::kernel::replication::state::name(r.state.load(Relaxed)),
            offset: r.ack_offset.load(Relaxed),
            lag_secs: now.saturating_sub(r.ack_ms.load(Relaxed)) / 1000,
        })
        .collect()
}

/// Appends the INFO replication section (master side).
pub fn info_section(srv: &Server, t: &mut String) {
    use std::fmt::Write as _;
    let m = &srv.replication.master;
    let views = replicas(srv);
    let ids = srv.replication.ids();
    let (offset, backlog) = {
        let g = m.inner.lock();
        (
            g.offset,
            g.backlog
                .as_ref()
                .map(|b| (b.size(), b.first_byte_offset(), b.histlen())),
        )
    };
    let s = srv.settings();
    t.push_str("# Replication\r\n");
    let side = &srv.replication.replica;
    let following = side.master.lock().clone();
    let mut offset = offset;
    if let Some((host, port)) = following {
        let now = crate::base::clock::unix_time_ms();
        let up = side.link_up.load(Relaxed);
        offset = side.offset.load(Relaxed);
        let _ = write!(t, "role:slave\r\n");
        let _ = write!(t, "master_host:{host}\r\n");
        let _ = write!(t, "master_port:{port}\r\n");
        let _ = write!(
            t,
            "master_link_status:{}\r\n",
            if up { "up" } else { "down" }
        );
        let io = side.last_io_ms.load(Relaxed);
        let ago = if io == 0 {
            -1
        } else {
            (now.saturating_sub(io) / 1000) as i64
        };
        let _ = write!(t, "master_last_io_seconds_ago:{ago}\r\n");
        let _ = write!(
            t,
            "master_sync_in_progress:{}\r\n",
            side.sync_in_progress.load(Relaxed) as u8
        );
        let _ = write!(t, "slave_read_repl_offset:{offset}\r\n");
        let _ = write!(t, "slave_repl_offset:{offset}\r\n");
        if !up {
            let since = now.saturating_sub(side.down_since_ms.load(Relaxed)) / 1000;
            let _ = write!(t, "master_link_down_since_seconds:{since}\r\n");
        }
        let _ = write!(t, "slave_priority:{}\r\n", s.repl.priority);
        let _ = write!(t, "slave_read_only:1\r\n");
        let _ = write!(t, "replica_announced:{}\r\n", s.repl.announced as u8);
    } else {
        let _ = write!(t, "role:master\r\n");
    }
    let _ = write!(t, "connected_slaves:{}\r\n", views.len());
    for (i, v) in views.iter().enumerate() {
        let _ = write!(
            t,
            "slave{i}:ip={},port={},state={},offset={},lag={}\r\n",
            v.ip, v.port, v.state, v.offset, v.lag_secs
        );
    }
    let _ = write!(t, "master_failover_state:{}\r\n", failover::state_name(srv));
    let _ = write!(t, "master_replid:{}\r\n", ids.replid);
    let _ = write!(t, "master_replid2:{}\r\n", ids.replid2);
    let _ = write!(t, "master_repl_offset:{offset}\r\n");
    let _ = write!(t, "second_repl_offset:{}\r\n", ids.second_offset);
    match backlog {
        Some((size, first, hist)) => {
            let _ = write!(t, "repl_backlog_active:1\r\n");
            let _ = write!(t, "repl_backlog_size:{size}\r\n");
            let _ = write!(t, "repl_backlog_first_byte_offset:{first}\r\n");
            let _ = write!(t, "repl_backlog_histlen:{hist}\r\n");
        }
        None => {
            let _ = write!(t, "repl_backlog_active:0\r\n");
            let _ = write!(t, "repl_backlog_size:{}\r\n", s.repl.backlog_size);
            let _ = write!(t, "repl_backlog_first_byte_offset:0\r\n");
            let _ = write!(t, "repl_backlog_histlen:0\r\n");
        }
    }
}

/// Bytes the backlog holds (INFO memory `mem_replication_backlog`).
pub fn backlog_memory(srv: &Server) -> u64 {
    srv.replication
        .master
        .inner
        .lock()
        .backlog
        .as_ref()
        .map_or(0, |b| b.size() as u64)
}

/// Bytes held for replicas beside the backlog: each attached replica's
/// output buffer in memory (the stream waiting to be sent, which grows
/// while a full sync sends its payload, up to the spool threshold) and
/// the chunk its spooler is writing; not what is spooled to disk.
/// INFO `mem_clients_slaves`.
pub fn replica_buffers_memory(srv: &Server) -> u64 {
    let links: Vec<Arc<ReplicaLink>> = srv.replication.master.inner.lock().replicas.clone();
    links
        .iter()
        .map(|l| {
            let o = l.out.lock();
            o.buf.capacity() as u64 + o.spool.in_flight()
        })
        .sum()
}
