//! The replica side: REPLICAOF starts a link thread that connects to the
//! master, runs the handshake (`PING`, `REPLCONF listening-port`,
//! `REPLCONF capa eof capa psync2`, `PSYNC`), loads the full sync payload
//! (`$<len>` or the diskless `$EOF:<mark>` form) with the RDB loader, and
//! then applies the stream as the master client: no replies, no
//! read-only check, `MULTI`..`EXEC` applied as one unit. The processed
//! offset counts every byte of every applied command; `REPLCONF ACK
//! <offset>` goes back every second and at once on `REPLCONF GETACK`.
//! After a lost link the thread reconnects every second and asks for a
//! partial resync from its replication ID and offset.
//!
//! Invariants:
//! * One link thread per REPLICAOF generation
//!   (`ReplicaSide::generation`); a thread whose generation is no longer
//!   current stops at its next step.
//! * `ReplicaSide::offset` only advances by the bytes of whole units
//!   applied (a command, or MULTI..EXEC at its EXEC, as Redis), or by a
//!   full sync, to the master's offset at its cut. The same bytes, in the
//!   same step under `ReplicaSide::apply_lock`, extend this server's own
//!   offset and backlog and go to its own replicas (chained replication).
//! * The master client starts in the database the stream last selected
//!   (`ReplicaSide::stream_db`: `repl-stream-db` of the full sync, or
//!   where the previous link left it before a `+CONTINUE`).
//!
//! The payload goes through a temporary file, or straight from the socket
//! as `repl-diskless-load` says ([`super::diskless_load`]).
//!
//! While this server is a replica, expiry is frozen: expired keys read as
//! missing to its clients and are deleted only by the master's `DEL`. The
//! master client's commands see them as present (Redis 7.0's
//! `expireIfNeeded`; `Keyspace::with_expired_visible` around each
//! command): a master command on a key whose TTL passed on this replica's
//! clock but not on the master's applies to the same value as on the
//! master. A `PSYNC ... FAILOVER` from the master promotes this server
//! first ([`promote_for_failover`]); a link made by this server's own
//! FAILOVER sends it (`failover`).

use std::io::Write;
use std::net::TcpStream;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use resp::{Protocol, ReplyBuf};

use crate::base::log::{log, LogLevel};
use crate::kernel::client::{cflag, Client, ClientKind, ClientShared};
use crate::kernel::server::Server;

use super::master_link::{current, Link};
use super::socket::Socket;

fn notice(msg: &str) {
    log(LogLevel::Notice, msg);
}

fn warning(msg: &str) {
    log(LogLevel::Warning, msg);
}

/// What REPLICAOF answers.
pub enum Outcome {
    Ok,
    AlreadyConnected,
}

/// `PSYNC ... FAILOVER` from our master: become a master (the PSYNC then
/// continues as a partial resync against our previous ID).
pub fn promote_for_failover(srv: &Server, from: &str) {
    if srv.replication.replica.master.lock().is_none() {
        return;
    }
    replicaof_quiet(srv, None);
    notice(&format!(
        "MASTER MODE enabled (failover request from 'addr={from}')"
    ));
}

/// A cluster replica that won an election (or took over) becomes a
/// master: REPLICAOF NO ONE's promotion, so its former siblings continue
/// from it by partial resync (Redis's replicationUnsetMaster).
pub fn unset_master(srv: &Server) {
    replicaof_quiet(srv, None);
}

/// REPLICAOF host port / NO ONE (None).
pub fn replicaof(srv: &Server, target: Option<(String, u16)>) -> Outcome {
    let promoting = target.is_none() && srv.replication.replica.master.lock().is_some();
    let r = replicaof_quiet(srv, target);
    if promoting {
        notice("MASTER MODE enabled (user request)");
    }
    r
}

fn replicaof_quiet(srv: &Server, target: Option<(String, u16)>) -> Outcome {
    let side = &srv.replication.replica;
    let mut cur = side.master.lock();
    match target {
        None => {
            if cur.is_none() {
                return Outcome::Ok;
            }
            *cur = None;
            side.generation.fetch_add(1, Relaxed);
            side.no_history.store(false, Relaxed);
            // Waits for the unit the link thread may be applying (it
            // applies nothing once the generation moved). Bounded: inside
            // EXEC this thread holds the order lock the unit may need.
            let _unit = side.apply_lock.try_lock_for(Duration::from_secs(2));
            side.is_replica.store(false, Relaxed);
            srv.refresh_expiry_freeze();
            set_oom_score(srv, false);
            side.link_up.store(false, Relaxed);
            side.sync_in_progress.store(false, Relaxed);
            // The stream this server serves continues from the offset it
            // reached, under a new ID; the old one stays valid up to here
            // for former siblings (Redis's shiftReplicationId).
            let offset = side.offset.load(Relaxed);
            {
                // The next record selects its database: former siblings
                // continuing from us do not know which one ours has.
                let mut out = srv.journal.out.lock();
                out.db = None;
                srv.replication.master.set_offset(offset);
            }
            srv.replication.shift_replid(offset);
            // Our replicas reconnect to learn the new ID and continue by
            // partial resync; clients' writes extend the stream from now.
            close_sub_replicas(srv);
            super::resume_stream(srv);
            Outcome::Ok
        }
        Some((host, port)) => {
            if cur.as_ref() == Some(&(host.clone(), port)) {
                return Outcome::AlreadyConnected;
            }
            if cur.is_none() {
                // Continue from our own history (Redis caches the master
                // "using myself"): the new master may know our ID.
                side.offset.store(srv.replication.master.offset(), Relaxed);
            }
            *cur = Some((host.clone(), port));
            // Our own replicas must sync again, as with Redis; the stream
            // this server served stops (as a replica its backlog grows
            // with what it applies, `Master::record_applied`).
            for r in srv.replication.master.inner.lock().replicas.iter() {
                r.close();
            }
            // No order lock here: REPLICAOF may run inside EXEC, which
            // holds it. A write finishing meanwhile only extends the old
            // stream, which the sync that follows replaces.
            if srv.journal.replicating() {
                srv.journal.set_replicating(false);
                srv.keyspace.set_journal_expired(srv.journal.enabled());
            }
            let gen = side.generation.fetch_add(1, Relaxed) + 1;
            side.is_replica.store(true, Relaxed);
            // Keys from the master expire only by its DEL.
            srv.refresh_expiry_freeze();
            set_oom_score(srv, true);
            side.link_up.store(false, Relaxed);
            side.down_since_ms
                .store(crate::base::clock::unix_time_ms(), Relaxed);
            notice(&format!("REPLICAOF {host}:{port} enabled (user request)"));
            if let Some(srv) = super::server() {
                let _ = std::thread::Builder::new()
                    .name("petrel-replica-link".into())
                    .spawn(move || link(srv, gen, host, port));
            }
            Outcome::Ok
        }
    }
}

/// `oom-score-adj`: the role's score (failures are logged).
fn set_oom_score(srv: &Server, replica: bool) {
    let s = srv.settings();
    let _ = crate::base::oom_score::apply(s.oom_score_adj, s.oom_score_adj_values, replica);
}

fn link(srv: Arc<Server>, gen: u64, host: String, port: u16) {
    while current(&srv, gen) {
        notice(&format!("Connecting to MASTER {host}:{port}"));
        match session(&srv, gen, &host, port) {
            Ok(()) => {}
            Err(e) => warning(&format!("Replication link to {host}:{port}: {e}")),
        }
        // A failover whose PSYNC got no answer goes back to being a master
        // (its watcher acts on this; an answer noted first wins).
        srv.replication
            .failover
            .note_psync(crate::kernel::replication::failover::PSYNC_UNREACHABLE);
        let side = &srv.replication.replica;
        if current(&srv, gen) {
            side.link_up.store(false, Relaxed);
            side.sync_in_progress.store(false, Relaxed);
            side.down_since_ms
                .store(crate::base::clock::unix_time_ms(), Relaxed);
            std::thread::sleep(Duration::from_secs(1));
        }
    }
}

fn session(srv: &Arc<Server>, gen: u64, host: &str, port: u16) -> Result<(), String> {
    let settings = srv.settings();
    let timeout = Duration::from_secs(settings.repl.timeout.max(1));
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let tcp = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    let _ = tcp.set_nodelay(true);
    let peer = tcp.peer_addr().map(|a| a.to_string()).unwrap_or_default();
    let local = tcp.local_addr().map(|a| a.to_string()).unwrap_or_default();
    let sock = if settings.tls.replication {
        // `tls-replication yes`: the link speaks TLS (the handshake is
        // done here, bounded by `repl-timeout`).
        tcp.set_read_timeout(Some(timeout))
            .and_then(|_| tcp.set_write_timeout(Some(timeout)))
            .map_err(|e| e.to_string())?;
        let dial = super::socket::tls_dialer().ok_or("TLS is not available")?;
        Socket::Shared(dial(tcp, host, &settings)?)
    } else {
        Socket::Tcp(tcp)
    };
    sock.prepare(Some(Duration::from_millis(100)), Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut l = Link {
        sock,
        buf: Vec::new(),
        peer,
        local,
    };
    notice("MASTER <-> REPLICA sync started");
    l.send(&[b"PING"])?;
    let r = l.reply(timeout)?;
    if r.starts_with('-') && !r.starts_with("-NOAUTH") && !r.starts_with("-NOPERM") {
        return Err(format!("Error reply to PING from master: '{r}'"));
    }
    notice("Master replied to PING, replication can continue...");
    // AUTH with `masterauth` (as `masteruser` when set) before anything
    // else, as Redis's handshake does.
    let pass = &settings.repl.masterauth;
    if !pass.is_empty() {
        let user = &settings.repl.masteruser;
        if user.is_empty() {
            l.send(&[b"AUTH", pass.as_bytes()])?;
        } else {
            l.send(&[b"AUTH", user.as_bytes(), pass.as_bytes()])?;
        }
        let r = l.reply(timeout)?;
        if r.starts_with('-') {
            return Err(format!("Unable to AUTH to MASTER: {r}"));
        }
    }
    // The port this replica serves clients on, as the master lists it:
    // `replica-announce-port`, else the TLS port when replication is over
    // TLS (as Redis announces), else the client port.
    let my_port = if settings.repl.announce_port != 0 {
        settings.repl.announce_port
    } else if settings.tls.replication && settings.tls.port != 0 {
        settings.tls.port
    } else {
        settings.port
    }
    .to_string();
    l.send(&[b"REPLCONF", b"listening-port", my_port.as_bytes()])?;
    let r = l.reply(timeout)?;
    if r.starts_with('-') {
        notice(&format!(
            "(Non critical) Master does not understand REPLCONF listening-port: {r}"
        ));
    }
    // `replica-announce-ip`, when set (NAT, port forwarding).
    if !settings.repl.announce_ip.is_empty() {
        l.send(&[
            b"REPLCONF",
            b"ip-address",
            settings.repl.announce_ip.as_bytes(),
        ])?;
        let r = l.reply(timeout)?;
        if r.starts_with('-') {
            notice(&format!(
                "(Non critical) Master does not understand REPLCONF ip-address: {r}"
            ));
        }
    }
    l.send(&[b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])?;
    let r = l.reply(timeout)?;
    if r.starts_with('-') {
        notice(&format!(
            "(Non critical) Master does not understand REPLCONF capa: {r}"
        ));
    }
    let side = &srv.replication.replica;
    let ids = srv.replication.ids();
    let offset = side.offset.load(Relaxed);
    let psync_off = (offset + 1).to_string();
    // A FAILOVER in progress asks the target to take our role.
    if srv.replication.failover.psync_pending() {
        l.send(&[
            b"PSYNC",
            ids.replid.as_bytes(),
            psync_off.as_bytes(),
            b"FAILOVER",
        ])?;
    } else if side.no_history.load(Relaxed) {
        l.send(&[b"PSYNC", b"?", b"-1"])?;
    } else {
        l.send(&[b"PSYNC", ids.replid.as_bytes(), psync_off.as_bytes()])?;
    }
    let r = l.reply(timeout)?;
    {
        use crate::kernel::replication::failover::{PSYNC_ACCEPTED, PSYNC_REJECTED};
        let accepted = r.starts_with("+FULLRESYNC") || r.starts_with("+CONTINUE");
        let f = &srv.replication.failover;
        if accepted && f.psync_pending() {
            // The target took our role: the failover is done.
            f.note_psync(PSYNC_ACCEPTED);
            if f.clear() {
                srv.refresh_expiry_freeze();
                notice("Failover successful");
            }
        } else if !accepted {
            f.note_psync(PSYNC_REJECTED);
        }
    }
    if let Some(rest) = r.strip_prefix("+FULLRESYNC ") {
        let mut it = rest.split(' ');
        let (Some(id), Some(off)) = (it.next(), it.next()) else {
            return Err(format!("bad FULLRESYNC reply '{r}'"));
        };
        let off: u64 = off
            .parse()
            .map_err(|_| format!("bad FULLRESYNC offset '{r}'"))?;
        notice(&format!("Full resync from master: {id}:{off}"));
        side.sync_in_progress.store(true, Relaxed);
        // Our own replicas must sync again (from the new dataset, under
        // the new ID); none attaches meanwhile (the link is not up).
        close_sub_replicas(srv);
        let _unit = side.apply_lock.lock();
        // Same history: the master kept the ID this server follows
        // (`repl-diskless-load swapdb` then serves the old data meanwhile).
        let same_history = id == ids.replid;
        let stream_db = full_sync(srv, gen, &mut l, timeout, same_history)?;
        if !current(srv, gen) {
            return Ok(());
        }
        srv.replication.set_replid(id);
        srv.replication.clear_replid2();
        side.no_history.store(false, Relaxed);
        side.offset.store(off, Relaxed);
        side.stream_db.store(stream_db, Relaxed);
        srv.replication
            .master
            .follow_from(off, srv.settings().repl.backlog_size);
        side.sync_in_progress.store(false, Relaxed);
        notice("MASTER <-> REPLICA sync: Finished with success");
        crate::base::supervisor::notify(
            "STATUS=MASTER <-> REPLICA sync: Finished with success. Ready to accept connections in read-write mode.\n",
        );
    } else if let Some(rest) = r.strip_prefix("+CONTINUE") {
        let new_id = rest.trim();
        let _unit = side.apply_lock.lock();
        if !new_id.is_empty() && new_id != ids.replid {
            // The master's ID changed (a failover): ours becomes the
            // previous one, and our own replicas reconnect to learn the
            // new one (they continue by partial resync).
            srv.replication.shift_replid(offset);
            srv.replication.set_replid(new_id);
            close_sub_replicas(srv);
        }
        // The history this server serves its own replicas from.
        let m = &srv.replication.master;
        if m.inner.lock().backlog.is_none() {
            m.follow_from(offset, srv.settings().repl.backlog_size);
        }
        notice("Successful partial resynchronization with master.");
    } else {
        return Err(format!("unexpected reply to PSYNC: '{r}'"));
    }
    side.last_io_ms
        .store(crate::base::clock::unix_time_ms(), Relaxed);
    side.link_up.store(true, Relaxed);
    stream(srv, gen, &mut l, timeout)
}

/// Ends the links of this server's own replicas (they reconnect).
fn close_sub_replicas(srv: &Server) {
    for r in srv.replication.master.inner.lock().replicas.iter() {
        r.close();
    }
}

/// Reads the payload into a temporary file in `dir` and loads it;
/// returns the database the master's stream had selected at its cut
/// (`repl-stream-db`).
fn full_sync(
    srv: &Server,
    gen: u64,
    l: &mut Link,
    timeout: Duration,
    same_history: bool,
) -> Result<u32, String> {
    let settings = srv.settings();
    let head = l.reply(timeout)?;
    if super::diskless_load::wanted(srv, &settings) {
        return super::diskless_load::load(srv, gen, l, timeout, &head, &settings, same_history);
    }
    let path = std::path::Path::new(&settings.dir)
        .join(format!("temp-repl-load-{}.rdb", std::process::id()));
    struct Remove<'a>(&'a std::path::Path);
    impl Drop for Remove<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(self.0);
        }
    }
    let mut f = std::fs::File::create(&path).map_err(|e| e.to_string())?;
    let _remove = Remove(&path);
    let mut last_data = Instant::now();
    if let Some(mark) = head.strip_prefix("$EOF:") {
        let mark = mark.as_bytes().to_vec();
        notice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk");
        // Everything but the last `mark.len()` bytes is payload for sure.
        loop {
            if l.buf.len() >= mark.len() && l.buf.ends_with(&mark) {
                let n = l.buf.len() - mark.len();
                f.write_all(&l.buf[..n]).map_err(|e| e.to_string())?;
                l.buf.clear();
                break;
            }
            if l.buf.len() > mark.len() + 64 * 1024 {
                let n = l.buf.len() - mark.len();
                f.write_all(&l.buf[..n]).map_err(|e| e.to_string())?;
                l.buf.drain(..n);
            }
            if !current(srv, gen) {
                return Ok(0);
            }
            if l.fill()? {
                last_data = Instant::now();
            } else if last_data.elapsed() > timeout {
                return Err("timeout receiving the RDB from the master".into());
            }
        }
    } else if let Some(len) = head.strip_prefix('$') {
        let mut left: u64 = len
            .parse()
            .map_err(|_| format!("bad payload length '{head}'"))?;
        notice(&format!(
            "MASTER <-> REPLICA sync: receiving {left} bytes from master to disk"
        ));
        loop {
            let n = (l.buf.len() as u64).min(left) as usize;
            f.write_all(&l.buf[..n]).map_err(|e| e.to_string())?;
            l.buf.drain(..n);
            left -= n as u64;
            if left == 0 {
                break;
            }
            if !current(srv, gen) {
                return Ok(0);
            }
            if l.fill()? {
                last_data = Instant::now();
            } else if last_data.elapsed() > timeout {
                return Err("timeout receiving the RDB from the master".into());
            }
        }
    } else {
        return Err(format!("bad payload header '{head}'"));
    }
    f.sync_all().map_err(|e| e.to_string())?;
    drop(f);
    notice("MASTER <-> REPLICA sync: Flushing old data");
    let _held = srv.keyspace.hold_all();
    srv.persistence.abort();
    srv.lazyfree
        .free_dbs(srv.keyspace.flush_all(), settings.repl.lazy_flush);
    notice("MASTER <-> REPLICA sync: Loading DB in memory");
    match super::super::snapshot::load::load_file(srv, &settings, &path, false, true) {
        Ok(rep) => {
            keep_or_remove_sync_file(&settings, &path);
            Ok(rep.repl_stream_db.unwrap_or(0))
        }
        Err(e) => {
            drop(srv.keyspace.flush_all());
            Err(format!(
                "Failed trying to load the MASTER synchronization DB from disk: {e}"
            ))
        }
    }
}

/// After a disk-based full sync has loaded: as Redis, the payload becomes
/// this replica's `dbfilename` (a restart loads it), unless
/// `rdb-del-sync-files yes` with RDB saving and the AOF both off, where it
/// is removed (it would be the only file on disk). The caller's guard
/// removes what is left at `path`.
fn keep_or_remove_sync_file(settings: &crate::kernel::config::Settings, path: &std::path::Path) {
    let no_persistence = settings.save_points.is_empty() && !settings.aof.enabled;
    if settings.repl.rdb_del_sync_files && no_persistence {
        notice(
            "Removing the RDB file obtained from the master. This replica has persistence disabled",
        );
        return;
    }
    let dest = super::super::snapshot::rdb_path(settings);
    if let Err(e) = std::fs::rename(path, &dest) {
        warning(&format!(
            "Failed trying to rename the temp DB into {} in MASTER <-> REPLICA synchronization: {e}",
            settings.dbfilename
        ));
    }
}

/// The master client: applies the stream.
struct Applier<'a> {
    srv: &'a Server,
    client: Client,
    out: ReplyBuf,
    tx: Option<Vec<Vec<Vec<u8>>>>,
}

impl Applier<'_> {
    fn run(&mut self, argv: &[Vec<u8>]) {
        let args: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
        if self.srv.table.lookup(args[0]).is_none() {
            warning(&format!(
                "Unknown command '{}' from the master",
                String::from_utf8_lossy(&argv[0])
            ));
            return;
        }
        let settings = self.srv.settings();
        let entry = self.srv.table.entry_of(&args);
        if entry.is_some_and(|e| e.spec.flags & crate::kernel::spec::flag::WRITE != 0) {
            super::propagation::before_master_write(self.srv, &settings);
        }
        // The master's view: keys expired on this replica's clock are
        // still there (see the module doc).
        store::keyspace::Keyspace::with_expired_visible(|| {
            (self.srv.hooks.execute_queued)(
                self.srv,
                &mut self.client,
                &settings,
                &args,
                &mut self.out,
            )
        });
        let name = entry.map_or("<unknown>", |e| e.full_name.as_str());
        super::propagation::after_reply(
            self.srv,
            &settings,
            super::propagation::Applier::Replica,
            name,
            self.out.as_bytes(),
        );
        self.out.clear();
    }

    fn feed(&mut self, argv: Vec<Vec<u8>>) {
        if argv[0].eq_ignore_ascii_case(b"MULTI") {
            self.tx = Some(Vec::new());
            return;
        }
        if argv[0].eq_ignore_ascii_case(b"EXEC") {
            if let Some(q) = self.tx.take() {
                let srv = self.srv;
                srv.atomically(&mut || {
                    for c in &q {
                        self.run(c);
                    }
                });
            }
            return;
        }
        match &mut self.tx {
            Some(q) => q.push(argv),
            None => self.run(&argv),
        }
    }
}

fn stream(srv: &Server, gen: u64, l: &mut Link, timeout: Duration) -> Result<(), String> {
    let side = &srv.replication.replica;
    let id = srv.clients.next_id();
    let (addr, laddr) = (l.peer.clone(), l.local.clone());
    let shared = Arc::new(ClientShared::new(
        id,
        addr,
        laddr,
        -1,
        0,
        crate::base::clock::unix_time_ms(),
    ));
    shared.set_flag(cflag::MASTER, true);
    srv.clients.add(shared.clone());
    let mut client = Client::new(shared, false, true);
    client.authenticated = true;
    client.in_exec = true;
    client.kind = ClientKind::Master;
    // The database the master's stream last selected: from the full
    // sync's `repl-stream-db`, or where the previous link left it.
    let db = side.stream_db.load(Relaxed) as usize;
    if db < srv.keyspace.databases() {
        client.set_db(db);
    }
    let mut ap = Applier {
        srv,
        client,
        out: ReplyBuf::new(Protocol::Resp2),
        tx: None,
    };
    let r = apply_loop(srv, gen, l, timeout, &mut ap);
    crate::services::connection::close(srv, &mut ap.client);
    srv.clients.remove(id);
    // A link replaced by a newer REPLICAOF leaves the state to the new one
    // (which may already be up).
    if current(srv, gen) {
        side.link_up.store(false, Relaxed);
    }
    r
}

fn apply_loop(
    srv: &Server,
    gen: u64,
    l: &mut Link,
    timeout: Duration,
    ap: &mut Applier<'_>,
) -> Result<(), String> {
    let side = &srv.replication.replica;
    let mut last_ack = Instant::now() - Duration::from_secs(2);
    let mut last_data = Instant::now();
    // The bytes of a MULTI..EXEC received so far: the offset, the backlog
    // and the sub-replicas get a transaction whole, at its EXEC (as Redis
    // does not advance a master client's offset inside MULTI).
    let mut tx_bytes: Vec<u8> = Vec::new();
    loop {
        if !current(srv, gen) || ap.client.shared.killed.load(Relaxed) {
            return Ok(());
        }
        while let Some((argv, used)) =
            super::master::parse_command(&l.buf).map_err(|_| "protocol error from the master")?
        {
            let bytes: Vec<u8> = l.buf.drain(..used).collect();
            if ap.tx.is_some()
                || argv
                    .first()
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"MULTI"))
            {
                tx_bytes.extend_from_slice(&bytes);
                let exec = argv
                    .first()
                    .is_some_and(|a| a.eq_ignore_ascii_case(b"EXEC"));
                if !exec {
                    if !argv.is_empty() {
                        ap.feed(argv);
                    }
                    continue;
                }
                let unit = std::mem::take(&mut tx_bytes);
                apply_unit(srv, gen, ap, &unit, Some(argv))?;
                continue;
            }
            let getack = argv.len() >= 2
                && argv[0].eq_ignore_ascii_case(b"replconf")
                && argv[1].eq_ignore_ascii_case(b"getack");
            if getack {
                let off = side.offset.load(Relaxed).to_string();
                l.send(&[b"REPLCONF", b"ACK", off.as_bytes()])?;
                last_ack = Instant::now();
            }
            let run = !argv.is_empty() && !getack && !argv[0].eq_ignore_ascii_case(b"ping");
            apply_unit(srv, gen, ap, &bytes, run.then_some(argv))?;
        }
        if last_ack.elapsed() >= Duration::from_secs(1) {
            let off = side.offset.load(Relaxed).to_string();
            l.send(&[b"REPLCONF", b"ACK", off.as_bytes()])?;
            last_ack = Instant::now();
        }
        if l.fill()? {
            last_data = Instant::now();
            side.last_io_ms
                .store(crate::base::clock::unix_time_ms(), Relaxed);
        } else if last_data.elapsed() > timeout {
            return Err("MASTER timeout: no data nor PING received".into());
        }
    }
}

/// Applies one unit of the stream (a command, or EXEC with its queued
/// transaction; None: nothing to run, a PING or GETACK or newline) and
/// records its bytes, under `apply_lock` (see `ReplicaSide::apply_lock`):
/// this server's offset, backlog and sub-replicas get exactly the bytes
/// applied. A link that is no longer current applies nothing.
fn apply_unit(
    srv: &Server,
    gen: u64,
    ap: &mut Applier<'_>,
    bytes: &[u8],
    argv: Option<Vec<Vec<u8>>>,
) -> Result<(), String> {
    let side = &srv.replication.replica;
    let _unit = side.apply_lock.lock();
    if !current(srv, gen) {
        return Ok(());
    }
    srv.replication.master.record_applied(bytes);
    if let Some(argv) = argv {
        ap.feed(argv);
        side.stream_db.store(ap.client.db as u32, Relaxed);
    }
    side.offset.fetch_add(bytes.len() as u64, Relaxed);
    Ok(())
}
