//! One client connection: socket, query buffer, incremental parser, reply
//! buffer and the [`Client`] state the commands see.
//!
//! Invariants:
//! * `rbuf[..rlen]` holds received bytes; `rbuf[rpos..rlen]` is not yet
//!   executed and starts at the beginning of a command, so the parser's
//!   offsets (relative to `rpos`) stay valid when the buffer is compacted.
//! * `out.as_bytes()[wpos..]` is written to the socket in order; nothing else
//!   writes to the socket.
//! * Only the owning worker thread touches a `Conn`.
//!
//! Buffers that one large command grew (query buffer, argument ranges,
//! reply buffer, the client's per-command key lists) give their room back
//! in [`Conn::resize_buffers`], which the worker calls about once a second
//! for every connection, off the request path, in the spirit of Redis's
//! `clientsCronResizeQueryBuffer` and `clientsCronResizeOutputBuffer`:
//! an idle connection (no command for 2 seconds) keeps only what holds
//! data, a busy one keeps what its recent peak needs. The peaks are the
//! largest use seen since the previous call.

use std::io::{self, Read, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use commands::kernel::client::{Client, ClientKind, ClientShared};
use commands::kernel::config::{OutputLimit, Settings};
use commands::kernel::server::Server;
use commands::runtime::dispatch::{self, Outcome};
use mio::Token;
use resp::{Limits, ReplyBuf, RequestParser};

use crate::net::Stream;

const READ_CHUNK: usize = 16 * 1024;
/// Input one connection may read in one pass of its worker's event loop
/// before the other ready connections get their turn (the fairness rule,
/// see docs/ARCHITECTURE.md "Request path"). A big argument being read is
/// not many requests and is read to its end.
pub const READ_BUDGET: usize = 64 * 1024;
/// Arguments at least this big get their whole size reserved up front.
const BIG_ARG: usize = 32 * 1024;
/// A connection with no command for longer than this is idle (Redis's
/// query buffer rule uses 2 seconds).
const IDLE_MS: u64 = 2000;
/// Redis's `PROTO_RESIZE_THRESHOLD`: a busy connection's query buffer
/// above this is cut back when its recent peak used less than half.
const QBUF_RESIZE_THRESHOLD: usize = 32 * 1024;
/// Spare query-buffer bytes worth giving back (Redis: 4 KiB).
const QBUF_MIN_SPARE: usize = 4 * 1024;
/// Redis's `PROTO_REPLY_MIN_BYTES`: a busy connection's reply buffer is
/// never cut below this.
const REPLY_MIN_BYTES: usize = 1024;
/// Argument ranges a connection keeps room for whatever its peak.
const ARGS_KEEP: usize = 16;
/// The most WATCHed keys, or names in one subscription set, whose blocks
/// one connection offers to active defrag ([`Conn::defrag`]).
pub const DEFRAG_NAMES_MAX: usize = 1024;

pub struct Conn {
    pub stream: Stream,
    pub token: Token,
    pub client: Client,
    rbuf: Vec<u8>,
    rlen: usize,
    rpos: usize,
    parser: RequestParser,
    args: Vec<(usize, usize)>,
    pub out: ReplyBuf,
    wpos: usize,
    pub write_interest: bool,
    /// Waiting for CLIENT PAUSE to end before running the next command.
    pub paused: bool,
    /// The worker counts this paused client in `blocked_clients` (and
    /// shows it with flag `b`), as Redis counts clients postponed by
    /// CLIENT PAUSE.
    pub paused_counted: bool,
    /// Close once the pending output is written.
    pub closing: bool,
    /// Close now, dropping pending output.
    pub dead: bool,
    soft_limit_since: Option<Instant>,
    /// Largest reply-buffer use since the buffer was last emptied (`rbp`).
    out_peak: usize,
    /// Largest unexecuted query-buffer content since the last resize.
    qbuf_peak: usize,
    /// Largest argument count since the last resize.
    args_peak: usize,
    /// Largest reply-buffer content since the last resize.
    reply_peak: usize,
    /// Unix time (ms) of the last [`Conn::resize_buffers`] (set by the
    /// worker, whose cron resizes each connection about once a second).
    pub resized_ms: u64,
}

/// What [`Conn::resize_buffers`] did, for INFO's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resized {
    /// The reply buffer was made smaller (INFO `reply_buffer_shrinks`).
    pub reply_shrunk: bool,
}

pub enum ReadResult {
    /// The socket was drained.
    Data,
    /// [`READ_BUDGET`] was used up: the socket may hold more, and no new
    /// edge will say so; the worker comes back to it next pass.
    Budget,
    Eof,
}

impl Conn {
    pub fn new(stream: Stream, token: Token, client: Client) -> Conn {
        Conn {
            stream,
            token,
            client,
            rbuf: Vec::new(),
            rlen: 0,
            rpos: 0,
            parser: RequestParser::new(),
            args: Vec::with_capacity(8),
            out: ReplyBuf::new(resp::Protocol::Resp2),
            wpos: 0,
            write_interest: false,
            paused: false,
            paused_counted: false,
            closing: false,
            dead: false,
            soft_limit_since: None,
            qbuf_peak: 0,
            args_peak: 0,
            reply_peak: 0,
            out_peak: 0,
            resized_ms: 0,
        }
    }

    /// Reads what the socket has, up to [`READ_BUDGET`] (more while a big
    /// argument is being read). One `read` suffices when it returns less
    /// than asked: the socket was drained and edge-triggered polling reports
    /// any later data as a new event.
    pub fn read(&mut self, srv: &Server) -> io::Result<ReadResult> {
        let mut total = 0;
        let mut result = ReadResult::Data;
        loop {
            // Free space for this read: a chunk, or for a big argument as much
            // as it still needs, but never more than doubling the buffer. The
            // buffer thus grows with the bytes that actually arrive: a client
            // announcing a 400 MB argument and sending 4 bytes costs nothing.
            let want = match self.parser.pending_bulk_len() {
                Some(n) if n >= BIG_ARG => (n + 2).min(self.rbuf.len().max(READ_CHUNK)),
                _ => READ_CHUNK,
            };
            if self.rbuf.len() - self.rlen < want {
                self.rbuf.resize(self.rlen + want, 0);
            }
            let avail = self.rbuf.len() - self.rlen;
            match self.stream.read(&mut self.rbuf[self.rlen..]) {
                Ok(0) => {
                    if total == 0 {
                        return Ok(ReadResult::Eof);
                    }
                    break;
                }
                Ok(n) => {
                    self.rlen += n;
                    total += n;
                    // A TLS stream's short read says nothing about the
                    // socket: it returns WouldBlock once that is drained.
                    if n < avail && !self.stream.is_tls() {
                        break;
                    }
                    if total >= READ_BUDGET
                        && self.parser.pending_bulk_len().is_none_or(|n| n < BIG_ARG)
                    {
                        result = ReadResult::Budget;
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.qbuf_peak = self.qbuf_peak.max(self.rlen - self.rpos);
        srv.stats.net_input_bytes.fetch_add(total as u64, Relaxed);
        srv.stats.total_reads_processed.fetch_add(1, Relaxed);
        self.client
            .shared
            .tot_net_in
            .fetch_add(total as u64, Relaxed);
        Ok(result)
    }

    /// Parses and executes every complete command in the query buffer.
    pub fn process(&mut self, srv: &Server, settings: &Settings, limits: &Limits) {
        self.paused = false;
        while !self.closing
            && !self.dead
            && !self.client.shutdown_requested
            && self.client.blocked.is_none()
            // After SYNC/PSYNC the connection belongs to replication.
            && self.client.repl.handoff.is_none()
        {
            let data = &self.rbuf[self.rpos..self.rlen];
            if data.is_empty() {
                break;
            }
            match self.parser.parse(data, limits, &mut self.args) {
                Ok(None) => break,
                Ok(Some(parsed)) => {
                    let consumed = parsed.consumed;
                    self.args_peak = self.args_peak.max(self.args.len());
                    if self.args.is_empty() {
                        self.rpos += consumed;
                        continue;
                    }
                    let outcome = {
                        let data = self.parser.base(&self.rbuf[self.rpos..self.rlen], &parsed);
                        let mut small: [&[u8]; 8] = [&[]; 8];
                        let mut big: Vec<&[u8]>;
                        let argv: &[&[u8]] = if self.args.len() <= 8 {
                            for (i, &(s, e)) in self.args.iter().enumerate() {
                                small[i] = &data[s..e];
                            }
                            &small[..self.args.len()]
                        } else {
                            big = Vec::with_capacity(self.args.len());
                            for &(s, e) in &self.args {
                                big.push(&data[s..e]);
                            }
                            &big
                        };
                        // `qbuf` counts the running command, as in Redis.
                        self.client
                            .shared
                            .qbuf
                            .store((self.rlen - self.rpos) as u64, Relaxed);
                        let client = &mut self.client;
                        let out = &mut self.out;
                        catch_unwind(AssertUnwindSafe(|| {
                            dispatch::execute(srv, client, settings, argv, out)
                        }))
                    };
                    match outcome {
                        Ok(Outcome::Done) => {
                            self.rpos += consumed;
                            self.client
                                .shared
                                .last_interaction_ms
                                .store(commands::base::clock::cached_time_ms(), Relaxed);
                            if self.client.close_after_reply {
                                self.closing = true;
                            }
                        }
                        Ok(Outcome::Blocked) => {
                            self.rpos += consumed;
                            self.client
                                .shared
                                .last_interaction_ms
                                .store(commands::base::clock::cached_time_ms(), Relaxed);
                            break;
                        }
                        Ok(Outcome::Paused) => {
                            self.parser.reset();
                            self.paused = true;
                            break;
                        }
                        Err(payload) => {
                            crate::warning!(
                                "Panic while serving client id={} addr={}: closing that connection",
                                self.client.id,
                                self.client.shared.addr
                            );
                            // A panic under a partition's lock stopped it
                            // (store::partlock): say so once per partition.
                            if payload
                                .downcast_ref::<store::partlock::PartitionStopped>()
                                .is_none()
                            {
                                crate::faults::report_stopped(srv);
                            }
                            self.dead = true;
                            break;
                        }
                    }
                }
                Err(e) => {
                    crate::verbose!(
                        "Protocol error ({}) from client: id={} addr={}",
                        e.log_reason(),
                        self.client.id,
                        self.client.shared.addr
                    );
                    // Raw bytes: "expected '$', got '\xff'" carries the byte as is.
                    self.out.raw(&e.to_reply());
                    srv.stats.count_error(b"ERR");
                    self.closing = true;
                    self.rpos = self.rlen;
                    break;
                }
            }
        }
        self.compact();
        self.out_peak = self.out_peak.max(self.out.len());
        self.account_memory();
        let pending = (self.rlen - self.rpos) as u64;
        self.client.shared.qbuf.store(pending, Relaxed);
        self.client
            .shared
            .qbuf_free
            .store((self.rbuf.len() - self.rlen) as u64, Relaxed);
        if pending > settings.client_query_buffer_limit {
            crate::warning!(
                "Closing client that reached max query buffer length: id={} addr={} (qbuf={pending})",
                self.client.id,
                self.client.shared.addr
            );
            srv.stats
                .client_qbuf_limit_disconnections
                .fetch_add(1, Relaxed);
            self.dead = true;
        }
    }

    fn compact(&mut self) {
        if self.rpos == self.rlen {
            self.rpos = 0;
            self.rlen = 0;
            if self.rbuf.len() > 4 * READ_CHUNK {
                self.rbuf = Vec::new();
            }
        } else if self.rpos > 0
            && (self.rpos >= self.rbuf.len() / 2 || self.rbuf.len() - self.rlen < READ_CHUNK)
        {
            self.rbuf.copy_within(self.rpos..self.rlen, 0);
            self.rlen -= self.rpos;
            self.rpos = 0;
        }
    }

    /// Gives back the room of buffers grown beyond what the connection
    /// needs (see the module docs); `now_ms` is the unix time in ms. Runs
    /// between commands, from the worker's periodic work.
    pub fn resize_buffers(&mut self, now_ms: u64) -> Resized {
        let last = self.client.shared.last_interaction_ms.load(Relaxed);
        let idle = now_ms.saturating_sub(last) > IDLE_MS;
        self.resize_query_buffer(idle);
        // Argument ranges: the connection's vector and the parser's spare
        // one (they swap at every command) keep room for the recent peak.
        let keep = if idle {
            0
        } else {
            self.args_peak.max(ARGS_KEEP)
        };
        if self.args.capacity() > keep.max(ARGS_KEEP) {
            self.args = Vec::with_capacity(keep);
        }
        self.parser.shrink_buffers(keep);
        let reply_shrunk = self.resize_reply_buffer(idle);
        // Key lists of the client's last command (filled only while some
        // client WATCHes or waits in a blocking command).
        let c = &mut self.client;
        if c.modified.is_empty() && c.modified.capacity() > ARGS_KEEP {
            c.modified = Vec::new();
        }
        if c.ready_keys.is_empty() && c.ready_keys.capacity() > ARGS_KEEP {
            c.ready_keys = Vec::new();
        }
        if c.tx.watched.capacity() > 2 * c.tx.watched.len() + ARGS_KEEP {
            c.tx.watched.shrink_to_fit();
        }
        self.qbuf_peak = self.rlen - self.rpos;
        self.args_peak = 0;
        self.reply_peak = self.pending_output();
        self.client
            .shared
            .qbuf_free
            .store((self.rbuf.len() - self.rlen) as u64, Relaxed);
        // tot-mem, rbs (and the client eviction reading them) see the
        // smaller buffers.
        self.account_memory();
        Resized { reply_shrunk }
    }

    /// Redis's `clientsCronResizeQueryBuffer` rule: an idle connection keeps
    /// only its unexecuted bytes; a busy one whose buffer is above
    /// [`QBUF_RESIZE_THRESHOLD`] and more than twice its recent peak keeps
    /// the peak (or the bulk being received, if larger) plus a read's worth.
    fn resize_query_buffer(&mut self, idle: bool) {
        let used = self.rlen - self.rpos;
        let size = self.rbuf.capacity();
        if size - used <= QBUF_MIN_SPARE {
            return;
        }
        let bulk = self.parser.pending_bulk_len().map_or(0, |n| used + n);
        let target = if idle {
            used
        } else if size > QBUF_RESIZE_THRESHOLD && size / 2 > self.qbuf_peak {
            used.max(self.qbuf_peak).max(bulk) + READ_CHUNK
        } else {
            return;
        };
        if target >= size {
            return;
        }
        if self.rpos > 0 {
            // The parser's positions are relative to the command's first
            // byte, which moves to offset 0 with the rest.
            self.rbuf.copy_within(self.rpos..self.rlen, 0);
            self.rlen = used;
            self.rpos = 0;
        }
        if target == 0 {
            self.rbuf = Vec::new();
        } else {
            self.rbuf.truncate(target.max(self.rlen));
            self.rbuf.shrink_to(target);
        }
    }

    /// Redis 7.0's `clientsCronResizeOutputBuffer` rule, for the bytes not
    /// pending: a buffer whose recent peak used less than half of it is
    /// cut to that peak (not below [`REPLY_MIN_BYTES`]); an idle
    /// connection's empty buffer is freed. True if it shrank.
    fn resize_reply_buffer(&mut self, idle: bool) -> bool {
        if self.has_pending_output() {
            return false;
        }
        self.out.clear();
        self.wpos = 0;
        let cap = self.out.capacity();
        let shrink = if idle {
            cap > 0
        } else {
            cap / 2 >= REPLY_MIN_BYTES && self.reply_peak < cap / 2
        };
        if !shrink {
            return false;
        }
        let target = if idle {
            0
        } else {
            self.reply_peak.max(REPLY_MIN_BYTES)
        };
        self.out.shrink_to(target);
        true
    }

    /// Offers this connection's long-lived blocks to active defrag (the
    /// worker's share of a pass, `worker/defrag.rs`): the query buffer,
    /// the argument ranges, the reply buffer, the WATCHed keys and the
    /// names of the client's subscriptions (sets of at most
    /// [`DEFRAG_NAMES_MAX`] names, so one connection's share stays
    /// bounded). Runs on the owning worker between commands, when nothing
    /// borrows a buffer: the connection reaches its bytes only through
    /// indices (`rpos`, `rlen`, `wpos`, the parser's offsets relative to
    /// `rpos`), so a moved block changes no state. The TLS session's and
    /// the parser's own buffers are not offered.
    pub fn defrag(&mut self, d: &mut collections::defrag::Defrag) {
        d.vec(&mut self.rbuf);
        d.vec(&mut self.args);
        d.vec(self.out.vec_mut());
        let c = &mut self.client;
        if c.tx.watched.len() <= DEFRAG_NAMES_MAX {
            for w in &mut c.tx.watched {
                d.vec(&mut w.1);
            }
            d.vec(&mut c.tx.watched);
        }
        let ps = &mut c.pubsub;
        for set in [&mut ps.channels, &mut ps.patterns, &mut ps.shard_channels] {
            if set.is_empty() || set.len() > DEFRAG_NAMES_MAX {
                continue;
            }
            // A name inside a set cannot be moved in place: the set is
            // taken apart only when one of its names would move (most
            // passes move none), keeps its table (drain keeps the room),
            // and gets each name back, unchanged.
            if !set.iter().any(|n| d.would_move_vec(n)) {
                d.misses += set.len() as u64;
                continue;
            }
            let mut names: Vec<Vec<u8>> = set.drain().collect();
            for n in &mut names {
                d.vec(n);
            }
            set.extend(names);
        }
    }

    /// For the hand-over of a replica connection (`crate::handoff`): the
    /// input not executed yet and the output not written yet.
    pub fn take_buffers(&mut self) -> (Vec<u8>, Vec<u8>) {
        let unread = self.rbuf[self.rpos..self.rlen].to_vec();
        self.rpos = self.rlen;
        let pending = self.out.as_bytes()[self.wpos..].to_vec();
        self.out.clear();
        self.wpos = 0;
        (unread, pending)
    }

    pub fn has_pending_output(&self) -> bool {
        self.wpos < self.out.len() || self.stream.tls_pending()
    }

    pub fn pending_output(&self) -> usize {
        self.out.len() - self.wpos
    }

    /// Writes as much pending output as the socket takes. Ok(true) = all written.
    pub fn flush(&mut self, srv: &Server) -> io::Result<bool> {
        self.reply_peak = self.reply_peak.max(self.out.len());
        let mut written = 0u64;
        let result = loop {
            if self.wpos >= self.out.len() {
                break Ok(true);
            }
            match self.stream.write(&self.out.as_bytes()[self.wpos..]) {
                Ok(0) => break Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0")),
                Ok(n) => {
                    self.wpos += n;
                    written += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            }
        };
        // TLS: the replies are written once rustls has sent them (and the
        // handshake's own messages have no reply bytes at all).
        let result = match result {
            Ok(true) if self.stream.tls_pending() => match self.stream.flush() {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(false),
                Err(e) => Err(e),
            },
            r => r,
        };
        if written > 0 {
            srv.stats.net_output_bytes.fetch_add(written, Relaxed);
            srv.stats.total_writes_processed.fetch_add(1, Relaxed);
            self.client.shared.tot_net_out.fetch_add(written, Relaxed);
        }
        if self.wpos >= self.out.len() {
            self.out.clear();
            self.wpos = 0;
            if self.out.vec_mut().capacity() > 64 * 1024 {
                self.out.vec_mut().shrink_to(16 * 1024);
            }
        }
        self.client
            .shared
            .omem
            .store(self.pending_output() as u64, Relaxed);
        self.account_memory();
        result
    }

    /// Publishes this client's memory (`tot-mem`, `rbs`, `rbp`), counted by
    /// Redis's rule: query buffer, reply buffer, pending output, the running
    /// command's arguments, queued MULTI commands, and the client structs.
    /// `maxmemory-clients` eviction reads `tot-mem`.
    pub fn account_memory(&mut self) {
        let sh = &self.client.shared;
        let out_cap = self.out.vec_mut().capacity();
        let queue_array = self
            .client
            .tx
            .queue
            .as_ref()
            .map_or(0, |q| q.capacity() * std::mem::size_of::<Vec<Vec<u8>>>());
        let structs = std::mem::size_of::<Conn>() + std::mem::size_of::<ClientShared>();
        let tot = self.rbuf.len()
            + out_cap
            + queue_array
            + structs
            + (sh.argv_mem.load(Relaxed) + sh.multi_mem.load(Relaxed)) as usize;
        sh.tot_mem.store(tot as u64, Relaxed);
        sh.rbs.store(out_cap as u64, Relaxed);
        sh.rbp.store(self.out_peak as u64, Relaxed);
        if self.out.is_empty() {
            self.out_peak = 0;
        }
    }

    /// Applies `client-output-buffer-limit`: true if the client must be closed.
    pub fn over_output_limit(&mut self, settings: &Settings, now: Instant) -> bool {
        let limit: &OutputLimit = match self.client.kind {
            ClientKind::Normal if self.is_pubsub() => &settings.output_pubsub,
            ClientKind::PubSub => &settings.output_pubsub,
            ClientKind::Replica => &settings.output_replica,
            _ => &settings.output_normal,
        };
        let used = self.pending_output() as u64;
        if limit.hard > 0 && used >= limit.hard {
            return true;
        }
        if limit.soft > 0 && used >= limit.soft {
            let since = *self.soft_limit_since.get_or_insert(now);
            if now.duration_since(since).as_secs() >= limit.soft_seconds {
                return true;
            }
        } else {
            self.soft_limit_since = None;
        }
        false
    }

    fn is_pubsub(&self) -> bool {
        let s = &self.client.shared;
        s.sub.load(Relaxed) + s.psub.load(Relaxed) + s.ssub.load(Relaxed) > 0
    }
}

#[cfg(test)]
#[path = "conn_defrag_tests.rs"]
mod defrag_tests;
