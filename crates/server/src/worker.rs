//! A worker thread: one mio event loop serving the connections assigned to
//! it. Commands run directly on this thread, taking keyspace partition locks
//! for their duration (see docs/ARCHITECTURE.md for why).
//!
//! Invariants:
//! * A connection lives in exactly one worker's slab, under token `slot + 1`
//!   (token 0 is the waker), and is registered with this worker's poll only.
//! * `by_id` maps every live client id to its slot.
//! * A connection with pending output after a pass over events is either
//!   written completely or registered for WRITABLE.
//!
//! About once a second the periodic work gives back memory that one burst
//! grew: each connection's buffers ([`Conn::resize_buffers`], from
//! [`Worker::cron`], which visits a tenth of the connections per call so no
//! call walks them all) and the worker's own lists and connection slab
//! ([`Worker::resize`]), so nothing stays sized by the largest command or
//! the most connections ever seen.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use commands::kernel::client::{cflag, Client, ClientShared};
use commands::kernel::config::Settings;
use commands::kernel::hub::WorkerMsg;
use commands::kernel::server::Server;
use crossbeam_channel::Receiver;
use mio::{Events, Interest, Poll, Token, Waker};
use resp::Limits;

use crate::conn::{Conn, ReadResult};
use crate::net::Stream;

mod defrag;

pub const WAKER: Token = Token(0);

/// How often the worker's cron runs ([`Worker::cron`]).
pub const CRON_PERIOD: Duration = Duration::from_millis(100);

/// A connection's buffers are resized when the cron visits it and this
/// long passed since the last time: once a second (a visit comes every
/// second with many connections, every call with few), less half a cron
/// period so a visit that comes a millisecond early still resizes.
const RESIZE_EVERY_MS: u64 = 950;

/// Cron calls per second.
const CRON_CALLS_PER_SEC: usize = 10;

/// Fewest slots one cron call visits (so a handful of connections is
/// checked at every call, as Redis's clientsCron visits at least 5).
const CRON_MIN_VISITS: usize = 5;

/// How many slab slots one cron call visits when the slab has `slots`:
/// a tenth, rounded up (at least [`CRON_MIN_VISITS`], at most all), so ten
/// calls, one second, visit every slot, and one call's work is bounded by
/// a tenth of the connections instead of all of them.
pub fn cron_batch(slots: usize) -> usize {
    slots
        .div_ceil(CRON_CALLS_PER_SEC)
        .max(CRON_MIN_VISITS)
        .min(slots)
}

/// A connection handed over by the acceptor.
pub struct NewConn {
    pub stream: Stream,
    pub peer: String,
    pub local: String,
    pub is_unix: bool,
    pub is_local: bool,
}

pub struct Worker {
    pub index: usize,
    srv: Arc<Server>,
    poll: Poll,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    by_id: HashMap<u64, usize>,
    inbox: Receiver<WorkerMsg>,
    new_conns: Receiver<NewConn>,
    settings: Arc<Settings>,
    settings_gen: u64,
    limits: Limits,
    touched: Vec<usize>,
    /// Connections holding a command back during CLIENT PAUSE.
    paused: Vec<usize>,
    /// Connections waiting in a blocking command.
    blocked: Vec<usize>,
    last_cron: Instant,
    /// When the worker's own lists were last resized ([`Worker::resize`]).
    last_resize: Instant,
    /// The slot the next cron call starts at ([`Worker::cron`]).
    cron_cursor: usize,
    /// The last poll returned events (see `busy-poll` in `run`).
    served_last_poll: bool,
    /// Whether busy-polling may go on (created on the worker's thread,
    /// in `run`).
    spin_gate: crate::spin::SpinGate,
    /// Connections whose readable event the script pump saw while they
    /// were running a script (out of the slab): read after it.
    missed: Vec<usize>,
    /// Connections that used their read budget this pass (`READ_BUDGET`):
    /// read again next pass, since no new edge will come for the bytes
    /// they left in the socket.
    again: Vec<usize>,
    /// When the script pump last tried every connection.
    last_sweep: Instant,
    /// This worker's share of active defrag (`worker/defrag.rs`).
    conn_defrag: defrag::ConnDefrag,
}

/// The script pump this worker installs (see `kernel::scripting::pump`).
///
/// # Safety
/// `data` is the `*mut Worker` that `run_commands` derived from its own
/// `&mut self` right before running the connection's commands; the script
/// calling this runs inside that call, on this thread, and nothing else
/// borrows the worker meanwhile (the connection is out of the slab and the
/// server and settings are borrowed from their `Arc`s).
unsafe fn pump(data: *mut ()) {
    // SAFETY: see the function's contract.
    let w = unsafe { &mut *data.cast::<Worker>() };
    w.pump_events();
}

pub fn limits_from(s: &Settings) -> Limits {
    Limits {
        max_bulk_len: s.proto_max_bulk_len as usize,
        max_multibulk_len: i32::MAX as usize,
        max_inline_len: 64 * 1024,
        unauthenticated: false,
    }
}

impl Worker {
    pub fn new(
        index: usize,
        srv: Arc<Server>,
        poll: Poll,
        inbox: Receiver<WorkerMsg>,
        new_conns: Receiver<NewConn>,
    ) -> Worker {
        let settings = srv.settings();
        let gen = srv.config.generation();
        Worker {
            index,
            limits: limits_from(&settings),
            srv,
            poll,
            conns: Vec::new(),
            free: Vec::new(),
            by_id: HashMap::new(),
            inbox,
            new_conns,
            settings,
            settings_gen: gen,
            touched: Vec::new(),
            paused: Vec::new(),
            blocked: Vec::new(),
            last_cron: Instant::now(),
            last_resize: Instant::now(),
            cron_cursor: 0,
            served_last_poll: false,
            spin_gate: crate::spin::SpinGate::new(),
            missed: Vec::new(),
            again: Vec::new(),
            last_sweep: Instant::now(),
            conn_defrag: Default::default(),
        }
    }

    pub fn make_waker(poll: &Poll) -> std::io::Result<Arc<Waker>> {
        Ok(Arc::new(Waker::new(poll.registry(), WAKER)?))
    }

    pub fn run(mut self) {
        commands::kernel::hub::set_current_worker(self.index);
        // The gate reads the figures of the thread that creates it.
        self.spin_gate = crate::spin::SpinGate::new();
        let mut events = Events::with_capacity(1024);
        loop {
            let any_paused = !self.paused.is_empty();
            let mut timeout = if any_paused {
                Duration::from_millis(10)
            } else {
                Duration::from_millis(100)
            };
            if let Some(ms) = self.next_block_deadline() {
                let now = commands::base::clock::unix_time_ms();
                timeout = timeout.min(Duration::from_millis(ms.saturating_sub(now)));
            }
            // Input left behind by a read budget is ready now.
            let carry = std::mem::take(&mut self.again);
            if !carry.is_empty() {
                timeout = Duration::ZERO;
            }
            // Busy-poll (setting `busy-poll`): a worker that just served
            // events polls without sleeping for a few microseconds first.
            // Under request/response load the next request often arrives
            // within that window: the worker skips a sleep and a wake-up,
            // and so does the sender, whose `send` otherwise has to wake
            // the sleeping worker (on loopback that cost lands on the
            // client; docs/BENCHMARKS.md). A worker whose last poll found
            // nothing never spins, so an idle server stays idle; nor does
            // one whose core another thread keeps wanting (`spin`: there,
            // spinning trades many short waits for few long ones, which
            // land on the requests arriving meanwhile), except the
            // active-defrag thread (see `may_spin`).
            events.clear();
            commands::kernel::loop_busy::pass_ends(self.index);
            let spin = self.settings.busy_poll_us;
            if spin > 0 && self.served_last_poll && carry.is_empty() {
                let now = Instant::now();
                if self.may_spin(now) {
                    let until = now + Duration::from_micros(spin);
                    loop {
                        let _ = self.poll.poll(&mut events, Some(Duration::ZERO));
                        if !events.is_empty() || Instant::now() >= until {
                            break;
                        }
                        std::hint::spin_loop();
                    }
                }
            }
            let polled = if events.is_empty() {
                self.poll.poll(&mut events, Some(timeout))
            } else {
                Ok(())
            };
            self.served_last_poll = !events.is_empty() || !carry.is_empty();
            commands::kernel::loop_busy::pass_begins(self.index);
            if let Err(e) = polled {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    crate::warning!("poll failed on worker {}: {e}", self.index);
                }
                continue;
            }
            commands::base::clock::refresh_cached_clock();
            if commands::base::fault_hooks::take(&commands::base::fault_hooks::WORKER) {
                panic!("DEBUG PANIC-THREAD worker");
            }
            self.refresh_settings();
            // Messages first: an invalidation sent before a write was
            // acknowledged must reach its client before that client's
            // next command reads the new value (client-side caching).
            if self.drain_inbox() {
                self.close_all();
                return;
            }
            // Connections that used their read budget last pass go first,
            // then the ready ones in the order the poll reports them; each
            // gets one budget per turn.
            for slot in carry {
                self.on_readable(slot);
            }
            for ev in events.iter() {
                if ev.token() == WAKER {
                    if self.drain_inbox() {
                        self.close_all();
                        return;
                    }
                    self.accept_new();
                    continue;
                }
                let slot = ev.token().0 - 1;
                if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                    self.on_readable(slot);
                }
                if ev.is_writable() {
                    self.mark(slot);
                }
            }
            if any_paused {
                for slot in std::mem::take(&mut self.paused) {
                    if self
                        .conns
                        .get(slot)
                        .is_some_and(|c| c.as_ref().is_some_and(|c| c.paused))
                    {
                        self.run_commands(slot);
                    }
                }
            }

            if !self.blocked.is_empty() {
                self.expire_blocked();
            }
            // Redis's "before sleep" work: BCAST invalidations of this pass
            // and the tracking-table limit.
            commands::services::tracking::end_of_loop(
                &self.srv,
                self.settings.tracking_table_max_keys,
            );
            commands::services::client_eviction::evict_clients(&self.srv, &self.settings);
            // Messages this thread sent itself (no wake was needed for them).
            if self.drain_inbox() {
                self.close_all();
                return;
            }
            self.flush_touched();
            self.defrag_conns();
            if self.srv.shutdown_requested.load(Relaxed) {
                self.close_all();
                return;
            }
            if self.last_cron.elapsed() >= CRON_PERIOD {
                self.cron();
            }
        }
    }

    fn refresh_settings(&mut self) {
        let g = self.srv.config.generation();
        if g != self.settings_gen {
            self.settings = self.srv.settings();
            self.settings_gen = g;
            self.limits = limits_from(&self.settings);
            crate::log::set_level(self.settings.loglevel);
        }
    }

    fn mark(&mut self, slot: usize) {
        self.touched.push(slot);
    }

    /// Handles messages; returns true on shutdown.
    fn drain_inbox(&mut self) -> bool {
        while let Ok(msg) = self.inbox.try_recv() {
            match msg {
                WorkerMsg::Deliver { client_id, bytes } => {
                    if let Some(&slot) = self.by_id.get(&client_id) {
                        if let Some(c) = self.conns[slot].as_mut() {
                            c.out.raw(&bytes);
                            self.touched.push(slot);
                        }
                    }
                }
                WorkerMsg::Publish { msg, client_ids } => {
                    for id in client_ids {
                        if let Some(&slot) = self.by_id.get(&id) {
                            if let Some(c) = self.conns[slot].as_mut() {
                                c.client
                                    .shared
                                    .pubsub_queued
                                    .fetch_sub(msg.approx_len() as u64, Relaxed);
                                if c.client.pubsub.wants(&msg) {
                                    msg.encode(&mut c.out);
                                    self.touched.push(slot);
                                }
                            }
                        }
                    }
                }
                WorkerMsg::Unblock { client_id, bytes } => {
                    if let Some(&slot) = self.by_id.get(&client_id) {
                        self.finish_block(slot, &bytes);
                    }
                }
                WorkerMsg::Poke { client_id } => {
                    if let Some(&slot) = self.by_id.get(&client_id) {
                        self.check_killed(slot);
                    }
                }
                WorkerMsg::Shutdown => return true,
            }
        }
        false
    }

    fn accept_new(&mut self) {
        while let Ok(nc) = self.new_conns.try_recv() {
            let slot = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.conns.len() - 1
            });
            let token = Token(slot + 1);
            let mut stream = nc.stream;
            if let Err(e) = self
                .poll
                .registry()
                .register(&mut stream, token, Interest::READABLE)
            {
                crate::warning!("register failed: {e}");
                self.free.push(slot);
                self.srv.stats.connected_clients.fetch_sub(1, Relaxed);
                continue;
            }
            let id = self.srv.clients.next_id();
            let now = commands::base::clock::unix_time_ms();
            let shared = Arc::new(ClientShared::new(
                id,
                nc.peer,
                nc.local,
                stream.fd(),
                self.index,
                now,
            ));
            if nc.is_unix {
                shared.set_flag(cflag::UNIX, true);
            }
            self.srv.clients.add(shared.clone());
            let mut client = Client::new(shared, nc.is_unix, nc.is_local);
            client.is_tls = stream.is_tls();
            client.authenticated = !self.srv.acl.auth_required();
            self.by_id.insert(id, slot);
            let mut conn = Conn::new(stream, token, client);
            conn.resized_ms = now;
            self.conns[slot] = Some(conn);
            self.srv
                .stats
                .total_connections_received
                .fetch_add(1, Relaxed);
        }
    }

    fn on_readable(&mut self, slot: usize) {
        let Some(conn) = self.conns.get_mut(slot).and_then(|c| c.as_mut()) else {
            return;
        };
        match conn.read(&self.srv) {
            Ok(ReadResult::Data) => {}
            Ok(ReadResult::Budget) => {
                if !self.again.contains(&slot) {
                    self.again.push(slot);
                }
            }
            Ok(ReadResult::Eof) => {
                conn.dead = true;
            }
            Err(e) => {
                if conn.stream.is_tls() {
                    // Redis logs refused TLS handshakes at verbose level.
                    crate::verbose!(
                        "Error accepting a client connection: {e} (addr={})",
                        conn.client.shared.addr
                    );
                }
                conn.dead = true;
            }
        }
        self.run_commands(slot);
    }

    fn run_commands(&mut self, slot: usize) {
        // The connection leaves the slab while its commands run, and the
        // server and settings are reached through their `Arc`s (not through
        // `self`), so the script pump may use `self` meanwhile (see `pump`).
        let Some(mut conn) = self.conns.get_mut(slot).and_then(|c| c.take()) else {
            return;
        };
        if !conn.dead {
            conn.limits_unauth(&mut self.limits, self.srv.acl.auth_required());
            let limits = self.limits.clone();
            let srv: *const Server = &*self.srv;
            let settings: *const Settings = &*self.settings;
            let this: *mut Worker = self;
            let prev = commands::kernel::scripting::set_pump(Some((pump, this.cast())));
            // SAFETY: both point into `Arc` allocations this worker keeps
            // alive (the pump never replaces `srv`, and `settings` only
            // changes in `refresh_settings`, which the pump does not call);
            // neither points into `self`, which the pump may borrow.
            let (srv, settings) = unsafe { (&*srv, &*settings) };
            conn.process(srv, settings, &limits);
            commands::kernel::scripting::set_pump(prev);
            self.limits.unauthenticated = false;
        }
        if conn.client.repl.handoff.is_some() {
            // SYNC/PSYNC: the connection now belongs to replication.
            let _ = self.poll.registry().deregister(&mut conn.stream);
            self.by_id.remove(&conn.client.id);
            self.free.push(slot);
            self.missed.retain(|&s| s != slot);
            self.again.retain(|&s| s != slot);
            self.srv.stats.connected_clients.fetch_sub(1, Relaxed);
            crate::handoff::replica(self.srv.clone(), conn);
            return;
        }
        self.conns[slot] = Some(conn);
        let conn = self.conns[slot].as_mut().expect("just put back");
        if conn.client.blocked.is_some() && !self.blocked.contains(&slot) {
            self.blocked.push(slot);
            conn.client.shared.set_flag(cflag::BLOCKED, true);
            self.srv.stats.blocked_clients.fetch_add(1, Relaxed);
        }
        if conn.paused && !self.paused.contains(&slot) {
            self.paused.push(slot);
        }
        if conn.paused != conn.paused_counted {
            conn.paused_counted = conn.paused;
            if conn.paused {
                self.srv.stats.blocked_clients.fetch_add(1, Relaxed);
            } else {
                self.srv.stats.blocked_clients.fetch_sub(1, Relaxed);
            }
            let blocked = conn.paused || conn.client.blocked.is_some();
            conn.client.shared.set_flag(cflag::BLOCKED, blocked);
        }
        if conn.client.shutdown_requested {
            self.srv.shutdown_requested.store(true, Relaxed);
        }
        self.touched.push(slot);
        // Input that arrived while this connection was out of the slab
        // (its edge was taken by the pump).
        if let Some(i) = self.missed.iter().position(|&s| s == slot) {
            self.missed.swap_remove(i);
            self.on_readable(slot);
        }
    }

    /// One pass over this worker's events while a script runs on this
    /// thread past `busy-reply-threshold`: other clients get their `-BUSY`
    /// (or run SCRIPT KILL, FUNCTION KILL, SHUTDOWN NOSAVE...), as Redis
    /// serves events from its script hook. Inbox messages wait for the main
    /// loop, which drains the inbox on every turn.
    fn pump_events(&mut self) {
        // Readiness the main loop already took from the poll for a
        // connection it had not reached when the script started is seen by
        // no poll: try every connection now and then.
        // The same goes for the waker: take new connections every time.
        self.accept_new();
        if self.last_sweep.elapsed() >= Duration::from_millis(50) {
            self.last_sweep = Instant::now();
            for slot in 0..self.conns.len() {
                if self.conns[slot].is_some() {
                    self.on_readable(slot);
                }
            }
        }
        let mut events = Events::with_capacity(256);
        if self.poll.poll(&mut events, Some(Duration::ZERO)).is_err() {
            return;
        }
        for ev in events.iter() {
            if ev.token() == WAKER {
                self.accept_new();
                continue;
            }
            let slot = ev.token().0 - 1;
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                if self.conns.get(slot).is_some_and(|c| c.is_none()) && !self.free.contains(&slot) {
                    self.missed.push(slot);
                } else {
                    self.on_readable(slot);
                }
            }
            if ev.is_writable() {
                self.mark(slot);
            }
        }
        self.flush_touched();
    }

    fn flush_touched(&mut self) {
        // The journal reaches the AOF (and disk, under `appendfsync
        // always`) before any reply of this pass leaves.
        commands::services::aof::before_reply(&self.srv);
        let mut touched = std::mem::take(&mut self.touched);
        touched.sort_unstable();
        touched.dedup();
        let now = Instant::now();
        for &slot in &touched {
            let Some(conn) = self.conns.get_mut(slot).and_then(|c| c.as_mut()) else {
                continue;
            };
            if !conn.dead && conn.has_pending_output() {
                match conn.flush(&self.srv) {
                    Ok(true) => {}
                    Ok(false) => {
                        if conn.over_output_limit(&self.settings, now)
                            && !conn.client.shared.killed.swap(true, Relaxed)
                        {
                            crate::warning!(
                                "Client id={} addr={} scheduled to be closed ASAP for overcoming of output buffer limits.",
                                conn.client.id,
                                conn.client.shared.addr
                            );
                            self.srv
                                .stats
                                .client_output_buffer_limit_disconnections
                                .fetch_add(1, Relaxed);
                            conn.dead = true;
                        } else if conn.client.shared.killed.load(Relaxed) {
                            conn.dead = true;
                        }
                    }
                    Err(_) => conn.dead = true,
                }
            }
            let want_write = conn.has_pending_output() && !conn.dead;
            if want_write != conn.write_interest {
                let interest = if want_write {
                    Interest::READABLE | Interest::WRITABLE
                } else {
                    Interest::READABLE
                };
                let _ = self
                    .poll
                    .registry()
                    .reregister(&mut conn.stream, conn.token, interest);
                conn.write_interest = want_write;
            }
            if conn.dead || (conn.closing && !conn.has_pending_output()) {
                self.close(slot);
            }
        }
        touched.clear();
        self.touched = touched;
    }

    /// The busy-poll gate's verdict, except while an active-defrag pass
    /// runs: the defrag thread takes the core in short slices (~0.1 ms)
    /// at a bounded duty cycle (1-25%), each of which may preempt a
    /// spinning worker, and the gate reads a few of those within 20 ms as
    /// a thread that keeps wanting the core, so the worker stopped
    /// spinning for the whole pass. Measured (docs/BENCHMARKS.md, "The
    /// busy-poll gate during a defrag pass"): spinning through the pass,
    /// a GET probe's p50 was 21-22 us instead of 66 and its p99.99
    /// 1.5-1.8 ms instead of 2.3-2.6, within what it was with defrag off.
    /// The gate starts afresh after the pass.
    fn may_spin(&mut self, now: Instant) -> bool {
        if self.srv.defrag.running_pct.load(Relaxed) > 0 {
            self.spin_gate.forget();
            return true;
        }
        self.spin_gate.may_spin(now)
    }

    /// Earliest deadline of this worker's blocked clients.
    fn next_block_deadline(&self) -> Option<u64> {
        self.blocked
            .iter()
            .filter_map(|&s| {
                self.conns
                    .get(s)?
                    .as_ref()?
                    .client
                    .blocked
                    .as_ref()?
                    .deadline_ms
            })
            .min()
    }

    /// Times out blocked clients whose deadline passed.
    fn expire_blocked(&mut self) {
        let now = commands::base::clock::unix_time_ms();
        for slot in self.blocked.clone() {
            let Some(w) = self
                .conns
                .get(slot)
                .and_then(|c| c.as_ref())
                .and_then(|c| c.client.blocked.clone())
            else {
                continue;
            };
            if w.deadline_ms.is_some_and(|d| d <= now) {
                if let Some(bytes) =
                    commands::services::blocking::unblock_with(&self.srv, &w, false)
                {
                    self.finish_block(slot, &bytes);
                }
            }
        }
    }

    /// Ends the wait of a blocked client with `reply` and resumes its input.
    fn finish_block(&mut self, slot: usize, reply: &[u8]) {
        let Some(conn) = self.conns.get_mut(slot).and_then(|c| c.as_mut()) else {
            return;
        };
        if conn.client.blocked.take().is_none() {
            return;
        }
        conn.client.shared.set_flag(cflag::BLOCKED, false);
        self.srv.stats.blocked_clients.fetch_sub(1, Relaxed);
        self.blocked.retain(|&s| s != slot);
        conn.out.raw(reply);
        self.run_commands(slot);
    }

    fn check_killed(&mut self, slot: usize) {
        if let Some(conn) = self.conns.get_mut(slot).and_then(|c| c.as_mut()) {
            if conn.client.shared.killed.load(Relaxed) {
                conn.dead = true;
                self.touched.push(slot);
            }
        }
    }

    pub fn close(&mut self, slot: usize) {
        if let Some(mut conn) = self.conns.get_mut(slot).and_then(|c| c.take()) {
            if let crate::net::Stream::Tls(t) = &mut conn.stream {
                t.close();
            }
            let _ = self.poll.registry().deregister(&mut conn.stream);
            if commands::services::connection::close(&self.srv, &mut conn.client) {
                self.blocked.retain(|&s| s != slot);
            }
            if conn.paused_counted {
                self.srv.stats.blocked_clients.fetch_sub(1, Relaxed);
            }
            self.by_id.remove(&conn.client.id);
            self.srv.clients.remove(conn.client.id);
            self.srv.stats.connected_clients.fetch_sub(1, Relaxed);
            self.again.retain(|&s| s != slot);
            self.free.push(slot);
        }
    }

    fn close_all(&mut self) {
        for slot in 0..self.conns.len() {
            if let Some(c) = self.conns[slot].as_mut() {
                let _ = c.flush(&self.srv);
            }
            self.close(slot);
        }
    }

    /// Periodic work, every [`CRON_PERIOD`]: a bounded share of the
    /// connections (see [`cron_batch`]) gets its idle timeout, `killed`
    /// flag and pending output (output soft limits) checked and its buffers
    /// resized ([`Conn::resize_buffers`]); the next call goes on where this
    /// one stopped, so every connection is visited about once a second and
    /// no pass walks them all (as Redis's clientsCron does). About once a
    /// second the worker's own lists and slab shrink too ([`Worker::resize`]).
    fn cron(&mut self) {
        self.last_cron = Instant::now();
        let now_ms = commands::base::clock::unix_time_ms();
        let timeout_ms = self.settings.timeout * 1000;
        let slots = self.conns.len();
        let mut shrinks = 0;
        for _ in 0..cron_batch(slots) {
            if self.cron_cursor >= self.conns.len() {
                self.cron_cursor = 0;
            }
            let slot = self.cron_cursor;
            self.cron_cursor += 1;
            let Some(conn) = self.conns[slot].as_mut() else {
                continue;
            };
            let sh = &conn.client.shared;
            if sh.killed.load(Relaxed) {
                conn.dead = true;
                self.touched.push(slot);
                continue;
            }
            let exempt =
                conn.client.monitor || sh.has_flag(cflag::PUBSUB) || sh.has_flag(cflag::BLOCKED);
            if timeout_ms > 0
                && !exempt
                && now_ms.saturating_sub(sh.last_interaction_ms.load(Relaxed)) > timeout_ms
            {
                crate::verbose!("Closing idle client id={}", conn.client.id);
                conn.dead = true;
                self.touched.push(slot);
                continue;
            }
            if now_ms.saturating_sub(conn.resized_ms) >= RESIZE_EVERY_MS {
                conn.resized_ms = now_ms;
                shrinks += conn.resize_buffers(now_ms).reply_shrunk as u64;
            }
            if conn.has_pending_output() {
                self.touched.push(slot);
            }
        }
        if shrinks > 0 {
            self.srv
                .stats
                .reply_buffer_shrinks
                .fetch_add(shrinks, Relaxed);
        }
        self.flush_touched();
        if self.last_resize.elapsed() >= Duration::from_secs(1) {
            self.resize();
        }
    }

    /// Gives back memory sized by a past burst in the worker itself: its
    /// scratch lists, the slots of closed connections at the end of the
    /// slab, and the id map (each connection's buffers are the cron's).
    fn resize(&mut self) {
        self.last_resize = Instant::now();
        for v in [&mut self.touched, &mut self.paused, &mut self.blocked] {
            if v.capacity() > 2 * v.len() + 64 {
                v.shrink_to_fit();
            }
        }
        while matches!(self.conns.last(), Some(None)) {
            self.conns.pop();
        }
        let n = self.conns.len();
        self.free.retain(|&s| s < n);
        if self.cron_cursor > n {
            self.cron_cursor = 0;
        }
        if self.conns.capacity() > 2 * n + 16 {
            self.conns.shrink_to_fit();
        }
        if self.free.capacity() > 2 * self.free.len() + 16 {
            self.free.shrink_to_fit();
        }
        if self.by_id.capacity() > 2 * self.by_id.len() + 64 {
            self.by_id.shrink_to_fit();
        }
    }
}

impl Conn {
    /// Before authentication Redis limits request sizes (multibulk <= 10 args... see resp docs).
    pub fn limits_unauth(&self, limits: &mut Limits, auth_required: bool) {
        limits.unauthenticated = !self.client.authenticated && auth_required;
    }
}

pub fn peer_string(addr: &SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("{}:{}", a.ip(), a.port()),
    }
}

#[cfg(test)]
mod tests {
    use super::cron_batch;

    /// Ten calls visit every slot, one call at most a tenth of them (but a
    /// handful at least), whatever the slab's size.
    #[test]
    fn cron_batches_cover_the_slab_in_ten_calls() {
        for slots in [0, 1, 3, 5, 7, 49, 50, 51, 99, 1000, 5001, 65_537] {
            let b = cron_batch(slots);
            assert!(b <= slots, "{slots}");
            assert!(b * 10 >= slots, "{slots}: {b}");
            assert!(b >= slots.min(5), "{slots}: {b}");
            if slots >= 50 {
                assert!(b <= slots / 10 + 1, "{slots}: {b}");
            }
            // A cursor going round visits every slot within ten calls.
            let mut seen = vec![false; slots];
            let mut cursor = 0;
            for _ in 0..10 {
                for _ in 0..b {
                    if cursor >= slots {
                        cursor = 0;
                    }
                    seen[cursor] = true;
                    cursor += 1;
                }
            }
            assert!(seen.iter().all(|&v| v), "{slots}");
        }
    }
}
