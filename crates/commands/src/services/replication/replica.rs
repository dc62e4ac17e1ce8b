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
//! * `ReplicaSide::offset` only advances by the bytes of whole commands
//!   applied (or by a full sync, to the master's offset at its cut).
//!
//! While this server is a replica, expiry is frozen: expired keys read as
//! missing (the master's commands too: see the limits below) and are
//! deleted only by the master's `DEL`. A `PSYNC ... FAILOVER` from the
//! master promotes this server first ([`promote_for_failover`]); a link
//! made by this server's own FAILOVER sends it (`failover`).
//!
//! Not built yet: `repl-diskless-load` other
//! than `disabled` (the payload always goes through a temporary file),
//! proxying the stream verbatim to sub-replicas. Unlike Redis, the
//! master's own commands also see an expired (not yet deleted) key as
//! missing: a master command on a key whose TTL passed on this replica's
//! clock but not on the master's may apply differently.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use resp::{Protocol, ReplyBuf};

use crate::base::log::{log, LogLevel};
use crate::kernel::client::{cflag, Client, ClientKind, ClientShared};
use crate::kernel::server::Server;

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
            side.is_replica.store(false, Relaxed);
            srv.refresh_expiry_freeze();
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

fn current(srv: &Server, gen: u64) -> bool {
    srv.replication.replica.generation.load(Relaxed) == gen
}

fn link(srv: Arc<Server>, gen: u64, host: String, port: u16) {
    while current(&srv, gen) {
        notice(&format!("Connecting to MASTER {host}:{port}"));
        match session(&srv, gen, &host, port) {
            Ok(()) => {}
            Err(e) => warning(&format!("Replication link to {host}:{port}: {e}")),
        }
        // A failover whose PSYNC got no answer goes back to being a master.
        super::failover::link_failed(&srv);
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

/// A socket with a read buffer.
struct Link {
    sock: TcpStream,
    buf: Vec<u8>,
}

impl Link {
    fn fill(&mut self) -> Result<bool, String> {
        let mut chunk = [0u8; 16 * 1024];
        match self.sock.read(&mut chunk) {
            Ok(0) => Err("connection closed by the master".into()),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut
                    || e.kind() == std::io::ErrorKind::Interrupted =>
            {
                Ok(false)
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// One line without its CRLF, waiting up to `timeout`.
    fn line(&mut self, timeout: Duration) -> Result<String, String> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let l: Vec<u8> = self.buf.drain(..=i).collect();
                let l = &l[..l.len() - 1];
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                return Ok(String::from_utf8_lossy(l).into_owned());
            }
            if Instant::now() > end {
                return Err("timeout reading from the master".into());
            }
            self.fill()?;
        }
    }

    /// A reply line, skipping the master's newline keepalives.
    fn reply(&mut self, timeout: Duration) -> Result<String, String> {
        loop {
            let l = self.line(timeout)?;
            if !l.is_empty() {
                return Ok(l);
            }
        }
    }

    fn send(&mut self, argv: &[&[u8]]) -> Result<(), String> {
        let mut b = Vec::new();
        crate::kernel::journal::encode_command(&mut b, argv);
        self.sock.write_all(&b).map_err(|e| e.to_string())
    }
}

fn session(srv: &Arc<Server>, gen: u64, host: &str, port: u16) -> Result<(), String> {
    let settings = srv.settings();
    let timeout = Duration::from_secs(settings.repl.timeout.max(1));
    let addr = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| e.to_string())?
        .next()
        .ok_or("no address")?;
    let sock = TcpStream::connect_timeout(&addr, timeout).map_err(|e| e.to_string())?;
    let _ = sock.set_nodelay(true);
    sock.set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(|e| e.to_string())?;
    sock.set_write_timeout(Some(timeout))
        .map_err(|e| e.to_string())?;
    let mut l = Link {
        sock,
        buf: Vec::new(),
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
    let my_port = settings.port.to_string();
    l.send(&[b"REPLCONF", b"listening-port", my_port.as_bytes()])?;
    let r = l.reply(timeout)?;
    if r.starts_with('-') {
        notice(&format!(
            "(Non critical) Master does not understand REPLCONF listening-port: {r}"
        ));
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
    if super::failover::psync_failover(srv) {
        l.send(&[
            b"PSYNC",
            ids.replid.as_bytes(),
            psync_off.as_bytes(),
            b"FAILOVER",
        ])?;
    } else {
        l.send(&[b"PSYNC", ids.replid.as_bytes(), psync_off.as_bytes()])?;
    }
    let r = l.reply(timeout)?;
    super::failover::psync_answered(
        srv,
        r.starts_with("+FULLRESYNC") || r.starts_with("+CONTINUE"),
    );
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
        full_sync(srv, gen, &mut l, timeout)?;
        if !current(srv, gen) {
            return Ok(());
        }
        srv.replication.set_replid(id);
        srv.replication.clear_replid2();
        side.offset.store(off, Relaxed);
        srv.replication
            .master
            .follow_from(off, srv.settings().repl.backlog_size);
        side.sync_in_progress.store(false, Relaxed);
        notice("MASTER <-> REPLICA sync: Finished with success");
    } else if let Some(rest) = r.strip_prefix("+CONTINUE") {
        let new_id = rest.trim();
        if !new_id.is_empty() && new_id != ids.replid {
            // The master's ID changed (a failover): ours becomes the
            // previous one.
            srv.replication.shift_replid(offset);
            srv.replication.set_replid(new_id);
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

/// Reads the payload into a temporary file in `dir` and loads it.
fn full_sync(srv: &Server, gen: u64, l: &mut Link, timeout: Duration) -> Result<(), String> {
    let settings = srv.settings();
    let head = l.reply(timeout)?;
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
                return Ok(());
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
                return Ok(());
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
    drop(srv.keyspace.flush_all());
    notice("MASTER <-> REPLICA sync: Loading DB in memory");
    match super::super::snapshot::load::load_file(srv, &settings, &path, false, true) {
        Ok(_) => Ok(()),
        Err(e) => {
            drop(srv.keyspace.flush_all());
            Err(format!(
                "Failed trying to load the MASTER synchronization DB from disk: {e}"
            ))
        }
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
        (self.srv.hooks.execute_queued)(
            self.srv,
            &mut self.client,
            &settings,
            &args,
            &mut self.out,
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
    let addr = l
        .sock
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
    let laddr = l
        .sock
        .local_addr()
        .map(|a| a.to_string())
        .unwrap_or_default();
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
    loop {
        if !current(srv, gen) || ap.client.shared.killed.load(Relaxed) {
            return Ok(());
        }
        while let Some((argv, used)) =
            super::master::parse_command(&l.buf).map_err(|_| "protocol error from the master")?
        {
            // Every byte that advances the processed offset also goes to
            // this server's own backlog (see `Master::record_applied`).
            srv.replication.master.record_applied(&l.buf[..used]);
            l.buf.drain(..used);
            if argv.is_empty() {
                side.offset.fetch_add(used as u64, Relaxed);
                continue;
            }
            let getack = argv.len() >= 2
                && argv[0].eq_ignore_ascii_case(b"replconf")
                && argv[1].eq_ignore_ascii_case(b"getack");
            if getack {
                let off = side.offset.load(Relaxed).to_string();
                l.send(&[b"REPLCONF", b"ACK", off.as_bytes()])?;
                last_ack = Instant::now();
            } else if argv[0].eq_ignore_ascii_case(b"ping") {
                // Keeps the link alive; nothing to apply.
            } else {
                ap.feed(argv);
            }
            side.offset.fetch_add(used as u64, Relaxed);
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
