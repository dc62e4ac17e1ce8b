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
/// Arguments at least this big get their whole size reserved up front.
const BIG_ARG: usize = 32 * 1024;

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
}

pub enum ReadResult {
    Data,
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
            out_peak: 0,
        }
    }

    /// Reads what the socket has. One `read` suffices when it returns less
    /// than asked: the socket was drained and edge-triggered polling reports
    /// any later data as a new event.
    pub fn read(&mut self, srv: &Server) -> io::Result<ReadResult> {
        let mut total = 0;
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
                    if n < avail {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        srv.stats.net_input_bytes.fetch_add(total as u64, Relaxed);
        srv.stats.total_reads_processed.fetch_add(1, Relaxed);
        self.client
            .shared
            .tot_net_in
            .fetch_add(total as u64, Relaxed);
        Ok(ReadResult::Data)
    }

    /// Parses and executes every complete command in the query buffer.
    pub fn process(&mut self, srv: &Server, settings: &Settings, limits: &Limits) {
        self.paused = false;
        while !self.closing
            && !self.dead
            && !self.client.shutdown_requested
            && self.client.blocked.is_none()
        {
            let data = &self.rbuf[self.rpos..self.rlen];
            if data.is_empty() {
                break;
            }
            match self.parser.parse(data, limits, &mut self.args) {
                Ok(None) => break,
                Ok(Some(parsed)) => {
                    let consumed = parsed.consumed;
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
                        Err(_) => {
                            crate::warning!(
                                "Panic while serving client id={} addr={}: closing that connection",
                                self.client.id,
                                self.client.shared.addr
                            );
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

    pub fn has_pending_output(&self) -> bool {
        self.wpos < self.out.len()
    }

    pub fn pending_output(&self) -> usize {
        self.out.len() - self.wpos
    }

    /// Writes as much pending output as the socket takes. Ok(true) = all written.
    pub fn flush(&mut self, srv: &Server) -> io::Result<bool> {
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
