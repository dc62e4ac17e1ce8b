//! A replica attached to this server: one thread sends it the full sync
//! payload and then the stream, another reads its `REPLCONF ACK`s.
//!
//! The life of a link ([`attach`]):
//! 1. The worker that ran SYNC/PSYNC hands the connection over
//!    ([`Handoff`]); the client stays in the client registry (CLIENT LIST
//!    shows it with flag `S`, CLIENT KILL closes it) until the link ends.
//! 2. Partial resync when the replica's replication ID is ours (or our
//!    previous one up to `second_repl_offset`) and the backlog still holds
//!    its offset: `+CONTINUE`, then the backlog from that offset. The
//!    link joins the replica list under the master lock in the same step
//!    as the backlog is read, so no byte is missed or doubled.
//! 3. Otherwise a full sync: after `repl-diskless-sync-delay` (diskless),
//!    the cut is taken under the journal's order lock (no write is half
//!    done), the link's output starts at the stream offset of the cut,
//!    `+FULLRESYNC <replid> <offset>` goes out, and the forkless snapshot
//!    (`store::keyspace::snapshot`, as BGSAVE) is written as an RDB either
//!    straight to the socket between `$EOF:<mark>` marks (diskless) or to a
//!    temporary file in `dir` sent as `$<len>` (disk). Writes meanwhile
//!    wait in the link's output.
//! 4. Then the link's output is written as it comes: the stream.
//!
//! The link ends on a socket error, CLIENT KILL, or an output buffer over
//! the replica class's `client-output-buffer-limit`.

use std::io::{BufWriter, Read, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::base::log::{log, LogLevel};
use crate::kernel::client::SyncRequest;
use crate::kernel::client::{cflag, Client};
use crate::kernel::persistence::SaveControl;
use crate::kernel::replication::{state, ReplicaLink};
use crate::kernel::server::Server;
use crate::services::snapshot::{self, sink::RdbSink};

use super::socket::{Counting, Socket};

/// A connection handed over by a worker after SYNC/PSYNC.
pub struct Handoff {
    pub client: Client,
    pub socket: Socket,
    /// Input received after the SYNC/PSYNC command.
    pub unread: Vec<u8>,
    /// Replies not yet written to the socket.
    pub pending_out: Vec<u8>,
}

fn notice(msg: &str) {
    log(LogLevel::Notice, msg);
}

fn warning(msg: &str) {
    log(LogLevel::Warning, msg);
}

/// Takes over a replica connection (see the module doc).
pub fn attach(srv: Arc<Server>, h: Handoff) {
    let id = h.client.id;
    let spawned = std::thread::Builder::new()
        .name(format!("petrel-repl-{id}"))
        .spawn(move || run(srv, h));
    if let Err(e) = spawned {
        warning(&format!("Can't serve replica id={id}: {e}"));
    }
}

fn run(srv: Arc<Server>, h: Handoff) {
    let Handoff {
        mut client,
        mut socket,
        unread,
        pending_out,
    } = h;
    let req = client.repl.handoff.take().unwrap_or(SyncRequest::Sync);
    let shared = client.shared.clone();
    shared.set_flag(cflag::REPLICA, true);
    let peer_ip = shared
        .addr
        .rsplit_once(':')
        .map(|(ip, _)| ip.to_string())
        .unwrap_or_default();
    let ip = client.repl.ip_address.clone().unwrap_or(peer_ip);
    let port = client.repl.listening_port;
    let settings = srv.settings();
    let timeout = Duration::from_secs(settings.repl.timeout.max(1));
    let link = Arc::new(ReplicaLink::new(shared.clone(), ip.clone(), port));
    let name = format!("{ip}:{port}");
    let reader = match socket
        .prepare(Some(Duration::from_millis(100)), Some(timeout))
        .and_then(|_| socket.try_clone())
    {
        Ok(r) => Some(r),
        Err(e) => {
            warning(&format!("Can't serve replica {name}: {e}"));
            None
        }
    };
    let mut reader_thread = None;
    if let Some(r) = reader {
        if socket.write_all(&pending_out).is_ok() {
            let (srv2, link2) = (srv.clone(), link.clone());
            reader_thread = std::thread::Builder::new()
                .name(format!("petrel-repl-rd-{}", client.id))
                .spawn(move || read_acks(srv2, link2, r, unread))
                .ok();
        }
    }
    if reader_thread.is_some() {
        super::ensure_stream(&srv, &settings);
        notice(&format!("Replica {name} asks for synchronization"));
        let ok = match try_partial(&srv, &link, &client, &req, &mut socket) {
            Some(r) => r,
            None => full_sync(&srv, &link, &client, &req, &mut socket, &name),
        };
        if ok && !client.repl.rdb_only {
            stream(&srv, &link, &mut socket);
        }
    }
    // The end of the link.
    link.close();
    socket.shutdown();
    if let Some(t) = reader_thread {
        let _ = t.join();
    }
    super::detach_link(&srv, &link);
    if link.over_limit.load(Relaxed) {
        srv.stats
            .client_output_buffer_limit_disconnections
            .fetch_add(1, Relaxed);
        warning(&format!(
            "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
            client.id, shared.addr
        ));
    }
    notice(&format!("Connection with replica {name} lost."));
    crate::services::connection::close(&srv, &mut client);
    srv.clients.remove(client.id);
    super::wake_waiters(&srv);
}

/// Writes, counting the bytes as replication output.
fn send(srv: &Server, link: &ReplicaLink, socket: &mut Socket, bytes: &[u8]) -> bool {
    if socket.write_all(bytes).is_err() {
        return false;
    }
    srv.replication
        .master
        .stats
        .net_repl_output_bytes
        .fetch_add(bytes.len() as u64, Relaxed);
    link.shared
        .tot_net_out
        .fetch_add(bytes.len() as u64, Relaxed);
    true
}

/// Redis's `masterTryPartialResynchronization`: Some(sent ok) when the
/// request was served by `+CONTINUE`, None for a full sync.
fn try_partial(
    srv: &Server,
    link: &Arc<ReplicaLink>,
    client: &Client,
    req: &SyncRequest,
    socket: &mut Socket,
) -> Option<bool> {
    let SyncRequest::Psync { replid, offset } = req else {
        return None;
    };
    // On a replica, not between the bytes of a unit and their apply, nor
    // across a change of ID (see `ReplicaSide::apply_lock`).
    let _unit = srv.replication.replica.apply_lock.lock();
    let ids = srv.replication.ids();
    let known = *replid == ids.replid || (*replid == ids.replid2 && *offset <= ids.second_offset);
    let m = &srv.replication.master;
    let backlog_bytes = {
        let mut g = m.inner.lock();
        let data = if known && *offset >= 0 {
            g.backlog.as_ref().and_then(|b| b.since(*offset as u64))
        } else {
            None
        };
        let data = data?;
        let len = data.len();
        {
            let mut o = link.out.lock();
            o.buf = data;
            o.active = true;
        }
        link.state.store(state::ONLINE, Relaxed);
        g.replicas.push(link.clone());
        len
    };
    m.stats.sync_partial_ok.fetch_add(1, Relaxed);
    let reply = if client.repl.capa_psync2 {
        format!("+CONTINUE {}\r\n", ids.replid)
    } else {
        "+CONTINUE\r\n".to_string()
    };
    notice(&format!(
        "Partial resynchronization request from {}:{} accepted. Sending {backlog_bytes} bytes of backlog starting from offset {offset}.",
        link.ip, link.port
    ));
    Some(send(srv, link, socket, reply.as_bytes()))
}

/// Sends the newline keepalive Redis sends to a replica waiting for its
/// payload (the replica's handshake tolerates empty lines).
fn keepalive(srv: &Server, link: &ReplicaLink, socket: &mut Socket, last: &mut Instant) -> bool {
    if last.elapsed() >= Duration::from_secs(1) {
        *last = Instant::now();
        return send(srv, link, socket, b"\n");
    }
    true
}

fn full_sync(
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
    {
        let mut g = m.inner.lock();
        g.replicas.push(link.clone());
    }
    let settings = srv.settings();
    let diskless = settings.repl.diskless_sync && client.repl.capa_eof;
    let mut last_ping = Instant::now();
    if diskless {
        let until = Instant::now() + Duration::from_secs(settings.repl.diskless_sync_delay);
        while Instant::now() < until {
            if link.is_closed() || !keepalive(srv, link, socket, &mut last_ping) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        notice("Starting BGSAVE for SYNC with target: replicas sockets");
    } else {
        notice("Starting BGSAVE for SYNC with target: disk");
    }
    // The cut, under the order lock: no write is half done, and the
    // stream from here on goes to the link.
    let now = crate::base::clock::unix_time_ms();
    let sink = Arc::new(RdbSink::new(
        snapshot::write_options(&settings),
        snapshot::meta_mode(&settings),
        srv.keyspace.clone(),
        now,
    ));
    let side = &srv.replication.replica;
    let (snap, offset, functions, stream_db, ids) = loop {
        {
            // On a replica the cut falls between two applied units of
            // its master's stream (`ReplicaSide::apply_lock`), and the
            // payload carries that stream's ID and offset.
            let unit = side.apply_lock.lock();
            if side.is_replica.load(Relaxed) && !super::can_serve_replicas(srv) {
                return false;
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
                let mut o = link.out.lock();
                o.buf.clear();
                o.active = true;
                drop(o);
                drop(g);
                drop(out);
                drop(order);
                let ids = srv.replication.ids();
                drop(unit);
                break (snap, offset, functions, stream_db, ids);
            }
        }
        // Another snapshot (BGSAVE, an AOF rewrite) runs: wait for it.
        if link.is_closed() || !keepalive(srv, link, socket, &mut last_ping) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    sink.set_snapshot(snap.clone());
    let walk_sink = sink.clone();
    let keyspace = srv.keyspace.clone();
    let walk_snap = snap.clone();
    let walk = std::thread::Builder::new()
        .name("petrel-repl-snap".into())
        .spawn(move || {
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                keyspace.walk_snapshot(&walk_snap)
            }));
            if !matches!(r, Ok(Ok(()))) {
                walk_sink.abort();
            }
            walk_sink.close();
        });
    if walk.is_err() {
        sink.abort();
        let _ = srv.keyspace.walk_snapshot(&snap);
        return false;
    }
    if let SyncRequest::Psync { .. } = req {
        let line = format!("+FULLRESYNC {} {offset}\r\n", ids.replid);
        if !send(srv, link, socket, line.as_bytes()) {
            sink.abort();
            return false;
        }
    }
    let rdb_meta = RdbMeta {
        functions,
        counts: snap.counts().to_vec(),
        replid: ids.replid.clone(),
        offset,
        stream_db,
    };
    let acks_before = link.acks.load(Relaxed);
    let ok = if diskless {
        send_diskless(srv, link, socket, &sink, &rdb_meta)
            && first_ack_after_payload(link, acks_before, &settings, name)
    } else {
        send_disk(srv, link, socket, &sink, &rdb_meta, &settings)
    };
    if let Ok(w) = walk {
        let _ = w.join();
    }
    if ok {
        link.state.store(state::ONLINE, Relaxed);
        notice(&format!("Synchronization with replica {name} succeeded"));
    } else {
        warning(&format!("Full synchronization with replica {name} failed"));
    }
    ok
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
    settings: &crate::kernel::config::Settings,
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

/// The diskless payload: `$EOF:<mark>\r\n`, the RDB, the mark.
fn send_diskless(
    srv: &Server,
    link: &ReplicaLink,
    socket: &mut Socket,
    sink: &RdbSink,
    meta: &RdbMeta,
) -> bool {
    let mark = crate::base::text::random_hex(40);
    if !send(srv, link, socket, format!("$EOF:{mark}\r\n").as_bytes()) {
        sink.abort();
        return false;
    }
    link.state.store(state::SEND_BULK, Relaxed);
    let out = BufWriter::with_capacity(
        64 * 1024,
        Counting {
            inner: &mut *socket,
            written: 0,
        },
    );
    let written = match write_rdb(srv, sink, meta, out) {
        Ok((buf, _)) => match buf.into_inner() {
            Ok(c) => c.written,
            Err(_) => {
                sink.abort();
                return false;
            }
        },
        Err(_) => {
            sink.abort();
            return false;
        }
    };
    srv.replication
        .master
        .stats
        .net_repl_output_bytes
        .fetch_add(written, Relaxed);
    send(srv, link, socket, mark.as_bytes())
}

/// The disk payload: the RDB written to a temporary file in `dir`, then
/// sent as `$<len>\r\n` and the file's bytes.
fn send_disk(
    srv: &Server,
    link: &ReplicaLink,
    socket: &mut Socket,
    sink: &RdbSink,
    meta: &RdbMeta,
    settings: &crate::kernel::config::Settings,
) -> bool {
    let path = std::path::Path::new(&settings.dir).join(format!(
        "temp-repl-{}-{}.rdb",
        std::process::id(),
        link.shared.id
    ));
    struct Remove<'a>(&'a std::path::Path);
    impl Drop for Remove<'_> {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(self.0);
        }
    }
    let file = match std::fs::File::create(&path) {
        Ok(f) => f,
        Err(e) => {
            warning(&format!("Can't write the RDB for SYNC: {e}"));
            sink.abort();
            return false;
        }
    };
    let _remove = Remove(&path);
    let size = match write_rdb(srv, sink, meta, BufWriter::new(file)) {
        Ok((mut w, size)) => {
            if w.flush().is_err() {
                return false;
            }
            size
        }
        Err(e) => {
            warning(&format!("Write error saving DB on disk: {e}"));
            sink.abort();
            return false;
        }
    };
    link.state.store(state::SEND_BULK, Relaxed);
    if !send(srv, link, socket, format!("${size}\r\n").as_bytes()) {
        return false;
    }
    let Ok(mut f) = std::fs::File::open(&path) else {
        return false;
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return true,
            Ok(n) => {
                if !send(srv, link, socket, &buf[..n]) {
                    return false;
                }
            }
            Err(_) => return false,
        }
    }
}

/// Writes the link's output as it arrives, until the link closes.
fn stream(srv: &Server, link: &ReplicaLink, socket: &mut Socket) {
    loop {
        let bytes = {
            let mut o = link.out.lock();
            while o.buf.is_empty() && !o.closed {
                link.ready.wait(&mut o);
            }
            if o.closed {
                return;
            }
            std::mem::take(&mut o.buf)
        };
        if !send(srv, link, socket, &bytes) {
            return;
        }
    }
}

/// The reading half: `REPLCONF ACK <offset>` (and anything else a replica
/// may send, ignored), until the socket closes or the link ends.
fn read_acks(srv: Arc<Server>, link: Arc<ReplicaLink>, mut socket: Socket, unread: Vec<u8>) {
    read_loop(&srv, &link, &mut socket, unread);
    // Unblocks the sender if it is stuck in a write.
    socket.shutdown();
}

fn read_loop(srv: &Server, link: &ReplicaLink, socket: &mut Socket, unread: Vec<u8>) {
    // The socket's timeouts (shared by both halves) were set by `run`.
    let mut buf = unread;
    let mut chunk = vec![0u8; 4096];
    loop {
        while let Some((argv, used)) = match parse_command(&buf) {
            Ok(x) => x,
            Err(ProtocolError) => {
                link.close();
                return;
            }
        } {
            buf.drain(..used);
            handle_replica_command(srv, link, &argv);
        }
        if link.is_closed() {
            return;
        }
        if link.shared.killed.load(Relaxed) {
            link.close();
            return;
        }
        match socket.read(&mut chunk) {
            Ok(0) => {
                link.close();
                return;
            }
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                srv.replication
                    .master
                    .stats
                    .net_repl_input_bytes
                    .fetch_add(n as u64, Relaxed);
                link.shared.tot_net_in.fetch_add(n as u64, Relaxed);
                if buf.len() > 1 << 20 {
                    link.close();
                    return;
                }
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut
                    || e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                link.close();
                return;
            }
        }
    }
}

fn handle_replica_command(srv: &Server, link: &ReplicaLink, argv: &[Vec<u8>]) {
    let now = crate::base::clock::unix_time_ms();
    link.ack_ms.store(now, Relaxed);
    link.shared.last_interaction_ms.store(now, Relaxed);
    if argv.len() >= 3
        && argv[0].eq_ignore_ascii_case(b"replconf")
        && argv[1].eq_ignore_ascii_case(b"ack")
    {
        if let Some(off) = crate::base::parse::parse_i64(&argv[2]) {
            link.acks.fetch_add(1, Relaxed);
            if off >= 0 {
                link.ack_offset.fetch_max(off as u64, Relaxed);
                super::wake_waiters(srv);
            }
        }
    }
}

/// The replica sent something that is not a command.
#[derive(Debug, PartialEq, Eq)]
pub struct ProtocolError;

/// One command from `buf`: a multibulk array or an inline line. Ok(None)
/// when incomplete, Err on a protocol error.
#[allow(clippy::type_complexity)]
pub fn parse_command(buf: &[u8]) -> Result<Option<(Vec<Vec<u8>>, usize)>, ProtocolError> {
    fn line(buf: &[u8], from: usize) -> Option<(usize, usize)> {
        let rel = buf[from..].windows(2).position(|w| w == b"\r\n")?;
        Some((from + rel, from + rel + 2))
    }
    if buf.is_empty() {
        return Ok(None);
    }
    if buf[0] != b'*' {
        let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
            return if buf.len() > 64 * 1024 {
                Err(ProtocolError)
            } else {
                Ok(None)
            };
        };
        let text = &buf[..nl];
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let argv = text
            .split(|b| *b == b' ')
            .filter(|a| !a.is_empty())
            .map(|a| a.to_vec())
            .collect();
        return Ok(Some((argv, nl + 1)));
    }
    let Some((end, mut pos)) = line(buf, 1) else {
        return Ok(None);
    };
    let n = crate::base::parse::parse_i64(&buf[1..end]).ok_or(ProtocolError)?;
    if !(0..=1024).contains(&n) {
        return Err(ProtocolError);
    }
    let mut argv = Vec::with_capacity(n as usize);
    for _ in 0..n {
        if pos >= buf.len() {
            return Ok(None);
        }
        if buf[pos] != b'$' {
            return Err(ProtocolError);
        }
        let Some((end, start)) = line(buf, pos + 1) else {
            return Ok(None);
        };
        let len = crate::base::parse::parse_i64(&buf[pos + 1..end]).ok_or(ProtocolError)?;
        if !(0..=(1 << 20)).contains(&len) {
            return Err(ProtocolError);
        }
        let len = len as usize;
        if buf.len() < start + len + 2 {
            return Ok(None);
        }
        argv.push(buf[start..start + len].to_vec());
        pos = start + len + 2;
    }
    Ok(Some((argv, pos)))
}

#[cfg(test)]
mod tests {
    use super::parse_command;

    #[test]
    fn parses_multibulk_inline_and_partial() {
        let b = b"*3\r\n$8\r\nREPLCONF\r\n$3\r\nACK\r\n$2\r\n42\r\n";
        let (argv, used) = parse_command(b).unwrap().unwrap();
        assert_eq!(used, b.len());
        assert_eq!(
            argv,
            vec![b"REPLCONF".to_vec(), b"ACK".to_vec(), b"42".to_vec()]
        );
        for cut in 0..b.len() {
            assert_eq!(parse_command(&b[..cut]).unwrap(), None, "cut {cut}");
        }
        let (argv, used) = parse_command(b"\nPING\r\n").unwrap().unwrap();
        assert!(argv.is_empty());
        assert_eq!(used, 1);
        assert!(parse_command(b"*1\r\n+x\r\n").is_err());
        assert!(parse_command(b"*x\r\n").is_err());
    }
}
