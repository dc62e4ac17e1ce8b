//! Full sync: one snapshot of the dataset sent to one replica or to
//! several that start together, as Redis shares one child among them.
//!
//! * **Diskless** (`repl-diskless-sync yes`, replica with `capa eof`):
//!   the first replica opens a *group* and its thread becomes the group's
//!   leader; replicas arriving during `repl-diskless-sync-delay` join it
//!   ("Delay next BGSAVE for diskless SYNC"). The transfer starts at the
//!   end of the delay, or at once when `repl-diskless-sync-max-replicas`
//!   (if not 0) replicas wait. Then the group closes (later replicas open
//!   the next one), the leader takes one cut for all its members, sends
//!   each `+FULLRESYNC`, `$EOF:<mark>`, the one RDB through a fan-out
//!   writer and the mark ("Starting BGSAVE for SYNC with target: replicas
//!   sockets" is logged once per group). A member whose socket fails is
//!   dropped; the others go on (the slowest sets the pace, as in Redis).
//!   Each member's own thread then waits for its replica's first ACK and
//!   streams.
//! * **Disk** (`repl-diskless-sync no`, or a replica without `capa
//!   eof`): the leader writes the RDB to a temporary file in `dir` and
//!   publishes the job while it writes it. A replica arriving meanwhile
//!   joins it ("Waiting for end of BGSAVE for SYNC") when the backlog
//!   still holds the whole stream since the job's cut: its output starts
//!   with those backlog bytes, so it gets exactly the stream from the
//!   cut's offset; otherwise it waits for a snapshot of its own. Every
//!   member sends the same file; the last one done removes it.
//!
//! Invariants:
//! * Every member of a sync is activated at the cut's offset, under the
//!   journal's order lock (the leader's cut) or under `Master::inner`
//!   with the backlog bytes since the cut (a disk joiner), so each
//!   replica's output is the stream from exactly the offset its
//!   `+FULLRESYNC` names.
//! * Lock order: [`COORD`], then a group's lock; [`COORD`], then
//!   `Master::inner`. Nothing takes [`COORD`] under the journal's locks
//!   or `Master::inner`.
//! * A member's outcome is set exactly once ([`Done`]); a member dropped
//!   without one (its socket failed, the leader ended) fails.

use std::io::{BufWriter, Read, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::base::log::{log, LogLevel};
use crate::kernel::client::{Client, SyncRequest};
use crate::kernel::config::Settings;
use crate::kernel::persistence::SaveControl;
use crate::kernel::replication::{state, ReplicaLink};
use crate::kernel::server::Server;
use crate::services::snapshot::{self, sink::RdbSink};

use super::socket::{send, Socket};

fn notice(msg: &str) {
    log(LogLevel::Notice, msg);
}

fn warning(msg: &str) {
    log(LogLevel::Warning, msg);
}

/// The outcome of one member's payload, set once.
#[derive(Default)]
struct Done {
    result: Mutex<Option<bool>>,
    cv: Condvar,
}

impl Done {
    fn finish(&self, ok: bool) {
        let mut g = self.result.lock();
        if g.is_none() {
            *g = Some(ok);
            self.cv.notify_all();
        }
    }

    fn wait(&self) -> bool {
        let mut g = self.result.lock();
        loop {
            if let Some(ok) = *g {
                return ok;
            }
            self.cv.wait_for(&mut g, Duration::from_millis(200));
        }
    }
}

/// A replica in a diskless group: the leader writes through `socket`, a
/// clone of the link's.
struct Member {
    link: Arc<ReplicaLink>,
    socket: Socket,
    name: String,
    psync: bool,
    done: Arc<Done>,
    last_keepalive: Instant,
}

impl Drop for Member {
    fn drop(&mut self) {
        self.done.finish(false);
    }
}

impl Member {
    fn send(&mut self, srv: &Server, bytes: &[u8]) -> bool {
        !self.link.is_closed() && send(srv, &self.link, &mut self.socket, bytes)
    }

    /// The newline keepalive Redis sends to a replica waiting for its
    /// payload (its handshake tolerates empty lines), once a second.
    fn keepalive(&mut self, srv: &Server) -> bool {
        if self.last_keepalive.elapsed() >= Duration::from_secs(1) {
            self.last_keepalive = Instant::now();
            return self.send(srv, b"\n");
        }
        !self.link.is_closed()
    }
}

/// A diskless group waiting for its transfer.
#[derive(Default)]
struct Group {
    members: Vec<Member>,
}

/// A disk RDB being written for replication, joinable.
#[derive(Clone)]
struct DiskJob {
    offset: u64,
    replid: String,
    result: Arc<DiskResult>,
}

/// The file of a disk job: None while it is written, then the file (or
/// None: the save failed).
#[derive(Default)]
struct DiskResult {
    file: Mutex<Option<Option<Arc<RdbFile>>>>,
}

/// A finished RDB file; removed when the last member drops it.
struct RdbFile {
    path: std::path::PathBuf,
    size: u64,
}

impl Drop for RdbFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The syncs open to newcomers.
#[derive(Default)]
struct Coord {
    diskless: Option<Arc<Mutex<Group>>>,
    disk: Option<DiskJob>,
}

static COORD: Mutex<Coord> = Mutex::new(Coord {
    diskless: None,
    disk: None,
});

/// Serves a full sync to `link` (module doc); true when the replica has
/// its payload and may get the stream.
pub(super) fn full_sync(
    srv: &Arc<Server>,
    link: &Arc<ReplicaLink>,
    client: &Client,
    req: &SyncRequest,
    socket: &mut Socket,
    name: &str,
) -> bool {
    let m = &srv.replication.master;
    m.stats.sync_full.fetch_add(1, Relaxed);
    if let SyncRequest::Psync { replid, .. } = req {
        if replid != "?" {
            m.stats.sync_partial_err.fetch_add(1, Relaxed);
            notice(&format!(
                "Partial resynchronization not accepted: Replication ID mismatch or offset out of range (Replica asked for '{replid}')"
            ));
        } else {
            notice(&format!("Full resync requested by replica {name}"));
        }
    }
    m.inner.lock().replicas.push(link.clone());
    let settings = srv.settings();
    let psync = matches!(req, SyncRequest::Psync { .. });
    let acks_before = link.acks.load(Relaxed);
    let ok = if settings.repl.diskless_sync && client.repl.capa_eof {
        diskless(srv, link, socket, name, psync, &settings)
            && first_ack_after_payload(link, acks_before, &settings, name)
    } else {
        disk(srv, link, socket, psync, &settings)
    };
    if ok {
        link.state.store(state::ONLINE, Relaxed);
        notice(&format!("Synchronization with replica {name} succeeded"));
    } else {
        warning(&format!("Full synchronization with replica {name} failed"));
    }
    ok
}

/// A diskless full sync: joins the open group or leads a new one.
fn diskless(
    srv: &Arc<Server>,
    link: &Arc<ReplicaLink>,
    socket: &mut Socket,
    name: &str,
    psync: bool,
    settings: &Settings,
) -> bool {
    let Ok(clone) = socket.try_clone() else {
        return false;
    };
    let done = Arc::new(Done::default());
    let member = Member {
        link: link.clone(),
        socket: clone,
        name: name.to_string(),
        psync,
        done: done.clone(),
        last_keepalive: Instant::now(),
    };
    let lead = {
        let mut c = COORD.lock();
        let delayed = settings.repl.diskless_sync_delay > 0;
        if delayed {
            notice("Delay next BGSAVE for diskless SYNC");
        }
        match &c.diskless {
            Some(g) => {
                g.lock().members.push(member);
                None
            }
            None => {
                let g = Arc::new(Mutex::new(Group {
                    members: vec![member],
                }));
                if delayed {
                    c.diskless = Some(g.clone());
                }
                Some(g)
            }
        }
    };
    if let Some(group) = lead {
        lead_diskless(srv, &group, settings);
    }
    done.wait()
}

/// The leader of a diskless group: waits out the delay (or for enough
/// members), closes the group and sends the one payload to every member.
fn lead_diskless(srv: &Arc<Server>, group: &Arc<Mutex<Group>>, settings: &Settings) {
    let until = Instant::now() + Duration::from_secs(settings.repl.diskless_sync_delay);
    let max = settings.repl.diskless_sync_max_replicas as usize;
    loop {
        {
            let mut g = group.lock();
            g.members.retain_mut(|m| m.keepalive(srv));
            if max > 0 && g.members.len() >= max {
                break;
            }
        }
        if Instant::now() >= until {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut members = {
        let mut c = COORD.lock();
        if c.diskless.as_ref().is_some_and(|g| Arc::ptr_eq(g, group)) {
            c.diskless = None;
        }
        drop(c);
        std::mem::take(&mut group.lock().members)
    };
    members.retain(|m| !m.link.is_closed());
    if members.is_empty() {
        return;
    }
    notice("Starting BGSAVE for SYNC with target: replicas sockets");
    let links: Vec<Arc<ReplicaLink>> = members.iter().map(|m| m.link.clone()).collect();
    let Some(cut) = take_cut(srv, settings, &links, &mut || {
        members.retain_mut(|m| m.keepalive(srv));
        !members.is_empty()
    }) else {
        return;
    };
    let walk = start_walk(srv, &cut);
    let mark = crate::base::text::random_hex(40);
    members.retain_mut(|m| {
        let line = format!("+FULLRESYNC {} {}\r\n", cut.meta.replid, cut.meta.offset);
        (!m.psync || m.send(srv, line.as_bytes()))
            && m.send(srv, format!("$EOF:{mark}\r\n").as_bytes())
    });
    if members.is_empty() {
        cut.sink.abort();
        let _ = walk.join();
        return;
    }
    for m in &members {
        m.link.state.store(state::SEND_BULK, Relaxed);
    }
    let out = BufWriter::with_capacity(
        64 * 1024,
        Fanout {
            srv,
            members: &mut members,
        },
    );
    let written = write_rdb(srv, &cut.sink, &cut.meta, out)
        .ok()
        .and_then(|(w, _)| w.into_inner().ok())
        .is_some();
    if !written {
        cut.sink.abort();
        members.clear();
    }
    members.retain_mut(|m| m.send(srv, mark.as_bytes()));
    let _ = walk.join();
    for m in &members {
        m.done.finish(true);
    }
}

/// Writes the payload to every member still there; a member whose write
/// fails is dropped (its sync fails). Fails only when none is left.
struct Fanout<'a> {
    srv: &'a Server,
    members: &'a mut Vec<Member>,
}

impl Write for Fanout<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let srv = self.srv;
        self.members.retain_mut(|m| {
            let ok = m.send(srv, buf);
            if !ok {
                warning(&format!(
                    "Diskless transfer to replica {} failed: dropped from the transfer",
                    m.name
                ));
            }
            ok
        });
        if self.members.is_empty() {
            return Err(std::io::Error::other("no replica left"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A disk full sync: joins the RDB being written for replication if the
/// backlog still covers its cut, else writes one.
fn disk(
    srv: &Arc<Server>,
    link: &Arc<ReplicaLink>,
    socket: &mut Socket,
    psync: bool,
    settings: &Settings,
) -> bool {
    let mut last_keepalive = Instant::now();
    let joined = {
        let c = COORD.lock();
        c.disk.clone().filter(|job| {
            let g = srv.replication.master.inner.lock();
            let Some(data) = g.backlog.as_ref().and_then(|b| b.since(job.offset + 1)) else {
                return false;
            };
            let mut o = link.out.lock();
            o.buf = data;
            o.active = true;
            true
        })
    };
    let file = match joined {
        Some(job) => {
            notice("Waiting for end of BGSAVE for SYNC");
            if psync {
                let line = format!("+FULLRESYNC {} {}\r\n", job.replid, job.offset);
                if !send(srv, link, socket, line.as_bytes()) {
                    return false;
                }
            }
            loop {
                if let Some(f) = job.result.file.lock().clone() {
                    break f;
                }
                if link.is_closed() || !keepalive(srv, link, socket, &mut last_keepalive) {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        None => {
            notice("Starting BGSAVE for SYNC with target: disk");
            let links = [link.clone()];
            let Some(cut) = take_cut(srv, settings, &links, &mut || {
                !link.is_closed() && keepalive(srv, link, socket, &mut last_keepalive)
            }) else {
                return false;
            };
            let result = Arc::new(DiskResult::default());
            COORD.lock().disk = Some(DiskJob {
                offset: cut.meta.offset,
                replid: cut.meta.replid.clone(),
                result: result.clone(),
            });
            let walk = start_walk(srv, &cut);
            let sent_line = !psync || {
                let line = format!("+FULLRESYNC {} {}\r\n", cut.meta.replid, cut.meta.offset);
                send(srv, link, socket, line.as_bytes())
            };
            let file = write_file(srv, &cut, settings, link.shared.id);
            let _ = walk.join();
            // No one joins once the file is complete.
            {
                let mut c = COORD.lock();
                if c.disk
                    .as_ref()
                    .is_some_and(|j| Arc::ptr_eq(&j.result, &result))
                {
                    c.disk = None;
                }
            }
            *result.file.lock() = Some(file.clone());
            if !sent_line {
                return false;
            }
            file
        }
    };
    match file {
        Some(f) => send_file(srv, link, socket, &f),
        None => false,
    }
}

fn keepalive(srv: &Server, link: &ReplicaLink, socket: &mut Socket, last: &mut Instant) -> bool {
    if last.elapsed() >= Duration::from_secs(1) {
        *last = Instant::now();
        return send(srv, link, socket, b"\n");
    }
    true
}

/// A snapshot cut and what the payload carries besides the entries.
struct Cut {
    snap: Arc<store::keyspace::snapshot::Snapshot>,
    sink: Arc<RdbSink>,
    meta: RdbMeta,
}

/// Takes the cut for `links` (see the module doc): under the order lock,
/// no write is half done, and the stream from here on goes to every
/// link. Waits while another snapshot (BGSAVE, an AOF rewrite) runs,
/// calling `alive` (keepalives; false: give up).
fn take_cut(
    srv: &Arc<Server>,
    settings: &Settings,
    links: &[Arc<ReplicaLink>],
    alive: &mut dyn FnMut() -> bool,
) -> Option<Cut> {
    let m = &srv.replication.master;
    let now = crate::base::clock::unix_time_ms();
    let sink = Arc::new(RdbSink::new(
        snapshot::write_options(settings),
        snapshot::meta_mode(settings),
        srv.keyspace.clone(),
        now,
    ));
    let side = &srv.replication.replica;
    loop {
        {
            // On a replica the cut falls between two applied units of
            // its master's stream (`ReplicaSide::apply_lock`), and the
            // payload carries that stream's ID and offset.
            let unit = side.apply_lock.lock();
            if side.is_replica.load(Relaxed) && !super::can_serve_replicas(srv) {
                return None;
            }
            let stream_db = if side.is_replica.load(Relaxed) {
                side.stream_db.load(Relaxed)
            } else {
                0
            };
            let order = srv.journal.order.write();
            let functions = snapshot::function_codes(srv);
            if let Some(snap) = srv.keyspace.begin_snapshot(sink.clone(), now) {
                let mut out = srv.journal.out.lock();
                // The stream after the cut selects its database first.
                out.db = None;
                let g = m.inner.lock();
                let offset = g.offset;
                for link in links {
                    let mut o = link.out.lock();
                    o.buf.clear();
                    o.active = true;
                }
                drop(g);
                drop(out);
                drop(order);
                let ids = srv.replication.ids();
                drop(unit);
                sink.set_snapshot(snap.clone());
                let meta = RdbMeta {
                    functions,
                    counts: snap.counts().to_vec(),
                    replid: ids.replid,
                    offset,
                    stream_db,
                };
                return Some(Cut { snap, sink, meta });
            }
        }
        if !alive() {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Walks the cut's snapshot into its sink on a thread of its own.
fn start_walk(srv: &Server, cut: &Cut) -> WalkHandle {
    let walk_sink = cut.sink.clone();
    let keyspace = srv.keyspace.clone();
    let snap = cut.snap.clone();
    let spawned = std::thread::Builder::new()
        .name("petrel-repl-snap".into())
        .spawn(move || {
            // Only the walk: the payload is written by the replica's own
            // thread, which goes on to send the stream.
            crate::base::sched::lower_snapshot_thread();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                keyspace.walk_snapshot(&snap)
            }));
            if !matches!(r, Ok(Ok(()))) {
                walk_sink.abort();
            }
            walk_sink.close();
        });
    match spawned {
        Ok(h) => WalkHandle(Some(h)),
        Err(_) => {
            // The snapshot must end: walk it here with nowhere to go.
            cut.sink.abort();
            let _ = srv.keyspace.walk_snapshot(&cut.snap);
            WalkHandle(None)
        }
    }
}

struct WalkHandle(Option<std::thread::JoinHandle<()>>);

impl WalkHandle {
    fn join(self) -> std::thread::Result<()> {
        match self.0 {
            Some(h) => h.join(),
            None => Ok(()),
        }
    }
}

/// After a diskless payload, waits for the replica's first `REPLCONF
/// ACK` before the stream may follow (Redis 7.0 does the same): a replica
/// finds the end of a `$EOF:` payload by the mark being the last bytes it
/// has read, so bytes sent right after the mark would hide it and the
/// replica would take the stream for more payload. Nothing is sent while
/// waiting; the loading replica's newline keepalives keep the link alive
/// (`repl-timeout` after its last message fails the sync).
fn first_ack_after_payload(
    link: &ReplicaLink,
    acks_before: u64,
    settings: &Settings,
    name: &str,
) -> bool {
    notice(&format!(
        "Streamed RDB transfer with replica {name} succeeded (socket). Waiting for REPLCONF ACK from replica to enable streaming"
    ));
    let timeout_ms = settings.repl.timeout.max(1) * 1000;
    while link.acks.load(Relaxed) == acks_before {
        if link.is_closed() {
            return false;
        }
        let now = crate::base::clock::unix_time_ms();
        if now.saturating_sub(link.ack_ms.load(Relaxed)) > timeout_ms {
            warning(&format!(
                "Disconnecting timedout replica (streaming sync): {name}"
            ));
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// What goes into the payload besides the entries.
struct RdbMeta {
    functions: Vec<Vec<u8>>,
    counts: Vec<store::keyspace::snapshot::DbCounts>,
    replid: String,
    offset: u64,
    /// `repl-stream-db`: 0 on a master (its stream selects a database
    /// first after the cut), the master client's on a replica.
    stream_db: u32,
}

/// Writes the whole RDB from the sink into `w`; returns `w` and the size.
fn write_rdb<W: Write>(
    srv: &Server,
    sink: &RdbSink,
    meta: &RdbMeta,
    w: W,
) -> std::io::Result<(W, u64)> {
    let settings = srv.settings();
    let aux = snapshot::aux_now();
    let mut rdb = rdb::Writer::new(w, snapshot::write_options(&settings))?;
    rdb.aux(b"redis-ver", crate::REDIS_VERSION.as_bytes())?;
    rdb.aux_int(b"redis-bits", 64)?;
    rdb.aux_int(b"ctime", aux.ctime as i64)?;
    rdb.aux_int(b"used-mem", aux.used_mem as i64)?;
    rdb.aux_int(b"repl-stream-db", meta.stream_db as i64)?;
    rdb.aux(b"repl-id", meta.replid.as_bytes())?;
    rdb.aux_int(b"repl-offset", meta.offset as i64)?;
    rdb.aux_int(b"aof-base", 0)?;
    for code in &meta.functions {
        rdb.function(code)?;
    }
    let mut current: Option<u32> = None;
    let mut resized = vec![false; meta.counts.len()];
    let complete = sink.run_writer(|db, bytes| {
        if current != Some(db) {
            rdb.select_db(db)?;
            if let Some(r) = resized.get_mut(db as usize).filter(|r| !**r) {
                *r = true;
                let c = meta.counts[db as usize];
                rdb.resize_db(c.keys, c.expires)?;
            }
            current = Some(db);
        }
        rdb.raw(bytes)
    });
    if !complete {
        return Err(std::io::Error::other("the snapshot was aborted"));
    }
    rdb.finish()
}

/// Writes the cut's RDB to a temporary file in `dir` (None on failure).
fn write_file(srv: &Server, cut: &Cut, settings: &Settings, id: u64) -> Option<Arc<RdbFile>> {
    let path = std::path::Path::new(&settings.dir)
        .join(format!("temp-repl-{}-{id}.rdb", std::process::id()));
    let file = match std::fs::File::create(&path) {
        Ok(f) => f,
        Err(e) => {
            warning(&format!("Can't write the RDB for SYNC: {e}"));
            cut.sink.abort();
            return None;
        }
    };
    let mut rdb = RdbFile { path, size: 0 };
    match write_rdb(srv, &cut.sink, &cut.meta, BufWriter::new(file)) {
        Ok((mut w, size)) => {
            w.flush().ok()?;
            rdb.size = size;
            Some(Arc::new(rdb))
        }
        Err(e) => {
            warning(&format!("Write error saving DB on disk: {e}"));
            cut.sink.abort();
            None
        }
    }
}

/// The disk payload: `$<len>\r\n` and the file's bytes.
fn send_file(srv: &Server, link: &ReplicaLink, socket: &mut Socket, f: &RdbFile) -> bool {
    link.state.store(state::SEND_BULK, Relaxed);
    if !send(srv, link, socket, format!("${}\r\n", f.size).as_bytes()) {
        return false;
    }
    let Ok(mut file) = std::fs::File::open(&f.path) else {
        return false;
    };
    let mut buf = vec![0u8; 64 * 1024];
    let mut left = f.size;
    while left > 0 {
        match file.read(&mut buf) {
            Ok(0) => return false,
            Ok(n) => {
                let n = (n as u64).min(left) as usize;
                if !send(srv, link, socket, &buf[..n]) {
                    return false;
                }
                left -= n as u64;
            }
            Err(_) => return false,
        }
    }
    true
}
