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
//! 3. Otherwise a full sync ([`super::fullsync`]): one snapshot cut,
//!    shared with the replicas that start together, the link's output
//!    activated at the cut's offset, `+FULLRESYNC <replid> <offset>`, and
//!    the RDB straight to the socket (diskless) or through a temporary
//!    file in `dir` (disk). Writes meanwhile wait in the link's output.
//! 4. Then the link's output is written as it comes: the stream.
//!
//! The link ends on a socket error, CLIENT KILL, or an output buffer over
//! the replica class's `client-output-buffer-limit`.
//!
//! Three threads serve a link: this one (payload, then stream), the
//! reader of ACKs, and the spooler, which moves what the replica does not
//! read beyond a few MB to disk (`kernel::replication::spool`); the
//! stream is sent from there first, then from memory.

use std::io::{Read, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use crate::base::log::{log, LogLevel};
use crate::kernel::client::SyncRequest;
use crate::kernel::client::{cflag, Client};
use crate::kernel::replication::spool::{self, Next};
use crate::kernel::replication::{state, ReplicaLink};
use crate::kernel::server::Server;

use super::socket::{send, Socket};

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
    // The spooler moves what the replica does not read (it loads its
    // payload, or it is slow) to disk (`kernel::replication::spool`).
    let spooler = reader_thread.as_ref().and_then(|_| {
        let link2 = link.clone();
        let dir = std::path::PathBuf::from(&settings.dir);
        std::thread::Builder::new()
            .name(format!("petrel-repl-sp-{}", client.id))
            .spawn(move || {
                spool::run_spooler(&link2, &dir, &|warn, msg| {
                    if warn {
                        warning(msg)
                    } else {
                        notice(msg)
                    }
                })
            })
            .ok()
    });
    if reader_thread.is_some() {
        super::ensure_stream(&srv, &settings);
        notice(&format!("Replica {name} asks for synchronization"));
        let ok = match try_partial(&srv, &link, &client, &req, &mut socket) {
            Some(r) => r,
            None => {
                // As Redis: a replica that needs a full sync gets its
                // socket without TCP_NODELAY under
                // `repl-disable-tcp-nodelay` (fewer, larger packets for
                // the stream, at some latency); a partial resync keeps it.
                if settings.repl.disable_tcp_nodelay {
                    let _ = socket.set_nodelay(false);
                }
                super::fullsync::full_sync(&srv, &link, &client, &req, &mut socket, &name)
            }
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
    if let Some(t) = spooler {
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

/// Writes the link's output as it arrives, until the link closes: the
/// spooled part first, read back from its file, then the memory (the
/// order `kernel::replication::spool` keeps).
fn stream(srv: &Server, link: &ReplicaLink, socket: &mut Socket) {
    use std::os::unix::fs::FileExt;
    let mut chunk = Vec::new();
    loop {
        let mut release = None;
        let next = {
            let mut o = link.out.lock();
            loop {
                if o.closed {
                    return;
                }
                match o.next_to_send(&mut release) {
                    Next::Wait => link.ready.wait(&mut o),
                    next => break next,
                }
            }
        };
        // A drained spool file is closed here, outside the lock.
        drop(release);
        match next {
            Next::File { file, pos, len } => {
                chunk.resize(len, 0);
                if let Err(e) = file.read_exact_at(&mut chunk, pos) {
                    warning(&format!(
                        "Can't read back the spooled stream of replica {}:{}: {e}",
                        link.ip, link.port
                    ));
                    return;
                }
                if !send(srv, link, socket, &chunk) {
                    return;
                }
                link.out.lock().sent_from_file(len);
            }
            Next::Memory(bytes) => {
                if !send(srv, link, socket, &bytes) {
                    return;
                }
            }
            Next::Wait => {}
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
