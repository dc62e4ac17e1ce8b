//! Per-connection state seen by command handlers.
//!
//! A [`Client`] is owned by the worker thread that serves its connection and is
//! only touched by that thread. What other threads need to see (for `CLIENT
//! LIST`, `CLIENT KILL`, `INFO clients`) lives in the [`ClientShared`] behind an
//! `Arc`, registered in the server's client registry for the connection's whole
//! life. The owner refreshes the shared counters after each command with relaxed
//! stores; readers may see values a command old, never torn ones.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

use parking_lot::Mutex;
use resp::Protocol;

use crate::kernel::blocking::Waiter;

/// Subscription sets owned by one client (the registry side is
/// `kernel::pubsub::PubSub`; the two always agree).
#[derive(Default, Debug)]
pub struct ClientPubSub {
    pub channels: HashSet<Vec<u8>>,
    pub patterns: HashSet<Vec<u8>>,
    pub shard_channels: HashSet<Vec<u8>>,
}

impl ClientPubSub {
    pub fn is_subscribed(&self) -> bool {
        !(self.channels.is_empty() && self.patterns.is_empty() && self.shard_channels.is_empty())
    }

    /// Is the client still subscribed to what `msg` was published for?
    /// A message travels to its receiver's worker after PUBLISH chose the
    /// receivers; one that arrives after the client's UNSUBSCRIBE (or
    /// RESET) reply is dropped, so that nothing follows the confirmation,
    /// as in Redis where the two cannot interleave.
    pub fn wants(&self, msg: &crate::kernel::message::Published) -> bool {
        use crate::kernel::message::MessageKind;
        match msg.kind {
            MessageKind::Message => self.channels.contains(&msg.channel),
            MessageKind::SMessage => self.shard_channels.contains(&msg.channel),
            MessageKind::PMessage => msg
                .pattern
                .as_ref()
                .is_some_and(|p| self.patterns.contains(p)),
        }
    }
}

/// Per-client transaction state (MULTI queue and WATCHed keys; the
/// registry side of WATCH is `kernel::watches::Watches`).
#[derive(Default, Debug)]
pub struct Transaction {
    /// Queued commands while in MULTI (`None` outside MULTI).
    pub queue: Option<Vec<Vec<Vec<u8>>>>,
    /// A command was rejected while queuing: EXEC must abort.
    pub dirty_exec: bool,
    /// Keys watched with WATCH: (db, key, TTL deadline in unix ms when watched).
    pub watched: Vec<(usize, Vec<u8>, Option<u64>)>,
}

impl Transaction {
    pub fn in_multi(&self) -> bool {
        self.queue.is_some()
    }
}

/// How replies are handled (`CLIENT REPLY`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyMode {
    On,
    Off,
    /// Skip the reply of the next command only.
    SkipNext,
    /// Set while the command after `CLIENT REPLY SKIP` runs.
    Skipping,
}

/// Kind of connection, for `CLIENT LIST` and output buffer limit classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    Normal,
    Replica,
    PubSub,
    Master,
}

/// Strings other threads may read; changed rarely.
#[derive(Default, Debug, Clone)]
pub struct ClientStrings {
    pub name: Vec<u8>,
    pub lib_name: Vec<u8>,
    pub lib_ver: Vec<u8>,
    /// Last command name (`cmd=` in CLIENT LIST), e.g. "client|list".
    pub last_cmd: String,
    pub user: String,
}

/// The part of a client visible to every thread.
#[derive(Debug)]
pub struct ClientShared {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    pub fd: i32,
    /// Unix time in ms when the connection was accepted.
    pub created_ms: u64,
    /// Unix time in ms of the last command.
    pub last_interaction_ms: AtomicU64,
    pub db: AtomicU32,
    pub resp: AtomicU8,
    pub flags: AtomicU32,
    pub sub: AtomicU32,
    pub psub: AtomicU32,
    pub ssub: AtomicU32,
    /// Commands queued in MULTI, -1 outside MULTI.
    pub multi: AtomicI64,
    pub qbuf: AtomicU64,
    pub qbuf_free: AtomicU64,
    pub argv_mem: AtomicU64,
    pub obl: AtomicU64,
    pub oll: AtomicU64,
    pub omem: AtomicU64,
    pub tot_mem: AtomicU64,
    pub tot_net_in: AtomicU64,
    pub tot_net_out: AtomicU64,
    pub tot_cmds: AtomicU64,
    /// Command table index + 1 of the last command run (0 = none yet), for
    /// `cmd=` in CLIENT LIST.
    pub last_cmd: AtomicU32,
    /// Set by `CLIENT KILL` (or an output limit) from any thread; the owner closes the connection.
    pub killed: AtomicBool,
    /// Pub/Sub message bytes sent to this client's worker and not yet in
    /// its output buffer.
    pub pubsub_queued: AtomicU64,
    /// Set by `CLIENT UNBLOCK`: 1 = timeout, 2 = error.
    pub unblock: AtomicU8,
    /// `multi-mem`: Redis's rule for queued MULTI commands, the bytes of
    /// their arguments plus one pointer per argument.
    pub multi_mem: AtomicU64,
    /// Reply buffer size and peak use (`rbs`, `rbp`), kept by the connection.
    pub rbs: AtomicU64,
    pub rbp: AtomicU64,
    /// CLIENT TRACKING REDIRECT target (0 = none; `redir=` in CLIENT LIST).
    pub tracking_redir: AtomicU64,
    pub worker: usize,
    pub strings: Mutex<ClientStrings>,
}

/// Bits of [`ClientShared::flags`] (letters as in CLIENT LIST `flags=`).
pub mod cflag {
    pub const MONITOR: u32 = 1 << 0; // O
    pub const PUBSUB: u32 = 1 << 1; // P
    pub const MULTI: u32 = 1 << 2; // x
    pub const BLOCKED: u32 = 1 << 3; // b
    pub const CLOSE_ASAP: u32 = 1 << 4; // A
    pub const UNIX: u32 = 1 << 5; // U
    pub const NO_EVICT: u32 = 1 << 6; // e
    pub const NO_TOUCH: u32 = 1 << 7; // T
    pub const DIRTY_CAS: u32 = 1 << 8; // d
    pub const CLOSE_AFTER_REPLY: u32 = 1 << 9; // c
    pub const READONLY: u32 = 1 << 10; // r
    pub const TRACKING: u32 = 1 << 11; // t
    pub const REPLICA: u32 = 1 << 12; // S
    pub const MASTER: u32 = 1 << 13; // M
                                     // Client-side caching (see `kernel::tracking`).
    pub const TRACKING_BROKEN_REDIR: u32 = 1 << 14; // R
    pub const TRACKING_BCAST: u32 = 1 << 15; // B
    pub const TRACKING_NOLOOP: u32 = 1 << 16;
}

impl ClientShared {
    /// Accounts `n` more Pub/Sub bytes queued for this client; false (and
    /// nothing accounted) when queued plus output bytes would pass `hard`
    /// (0 = no limit) or the client is already being closed.
    pub fn queue_pubsub_bytes(&self, n: u64, hard: u64) -> bool {
        if self.killed.load(Relaxed) {
            return false;
        }
        let queued = self.pubsub_queued.fetch_add(n, Relaxed) + n;
        if hard > 0 && queued + self.omem.load(Relaxed) > hard {
            self.pubsub_queued.fetch_sub(n, Relaxed);
            return false;
        }
        true
    }

    pub fn new(id: u64, addr: String, laddr: String, fd: i32, worker: usize, now_ms: u64) -> Self {
        ClientShared {
            id,
            addr,
            laddr,
            fd,
            created_ms: now_ms,
            last_interaction_ms: AtomicU64::new(now_ms),
            db: AtomicU32::new(0),
            resp: AtomicU8::new(2),
            flags: AtomicU32::new(0),
            sub: AtomicU32::new(0),
            psub: AtomicU32::new(0),
            ssub: AtomicU32::new(0),
            multi: AtomicI64::new(-1),
            qbuf: AtomicU64::new(0),
            qbuf_free: AtomicU64::new(0),
            argv_mem: AtomicU64::new(0),
            obl: AtomicU64::new(0),
            oll: AtomicU64::new(0),
            omem: AtomicU64::new(0),
            tot_mem: AtomicU64::new(0),
            tot_net_in: AtomicU64::new(0),
            tot_net_out: AtomicU64::new(0),
            tot_cmds: AtomicU64::new(0),
            last_cmd: AtomicU32::new(0),
            killed: AtomicBool::new(false),
            pubsub_queued: AtomicU64::new(0),
            unblock: AtomicU8::new(0),
            tracking_redir: AtomicU64::new(0),
            multi_mem: AtomicU64::new(0),
            rbs: AtomicU64::new(0),
            rbp: AtomicU64::new(0),
            worker,
            strings: Mutex::new(ClientStrings {
                user: "default".into(),
                ..Default::default()
            }),
        }
    }

    pub fn has_flag(&self, f: u32) -> bool {
        self.flags.load(Relaxed) & f != 0
    }
    pub fn set_flag(&self, f: u32, on: bool) {
        if on {
            self.flags.fetch_or(f, Relaxed);
        } else {
            self.flags.fetch_and(!f, Relaxed);
        }
    }

    /// `flags=` field of CLIENT LIST.
    pub fn flag_letters(&self) -> String {
        let f = self.flags.load(Relaxed);
        let mut s = String::new();
        // Redis's order: O or S, M, P, x, b, t, R, B, d, c, A, U, r, e, T.
        let pairs = [
            (cflag::MONITOR, 'O'),
            (cflag::REPLICA, 'S'),
            (cflag::MASTER, 'M'),
            (cflag::PUBSUB, 'P'),
            (cflag::MULTI, 'x'),
            (cflag::BLOCKED, 'b'),
            (cflag::TRACKING, 't'),
            (cflag::TRACKING_BROKEN_REDIR, 'R'),
            (cflag::TRACKING_BCAST, 'B'),
            (cflag::DIRTY_CAS, 'd'),
            (cflag::CLOSE_AFTER_REPLY, 'c'),
            (cflag::CLOSE_ASAP, 'A'),
            (cflag::UNIX, 'U'),
            (cflag::READONLY, 'r'),
            (cflag::NO_EVICT, 'e'),
            (cflag::NO_TOUCH, 'T'),
        ];
        for (bit, c) in pairs {
            if bit == cflag::REPLICA && f & cflag::MONITOR != 0 {
                continue;
            }
            if f & bit != 0 {
                s.push(c);
            }
        }
        if s.is_empty() {
            s.push('N');
        }
        s
    }
}

/// What a connection told us with REPLCONF before PSYNC, and the PSYNC
/// request the server's worker hands over (kept in `Client::repl`).
#[derive(Debug, Default, Clone)]
pub struct ReplClientConf {
    /// `REPLCONF listening-port`.
    pub listening_port: u16,
    /// `REPLCONF ip-address`.
    pub ip_address: Option<String>,
    /// `REPLCONF capa eof`: accepts the diskless `$EOF:` payload.
    pub capa_eof: bool,
    /// `REPLCONF capa psync2`: accepts `+CONTINUE <new replid>`.
    pub capa_psync2: bool,
    /// `REPLCONF rdb-only 1`: the payload only, then the link closes.
    pub rdb_only: bool,
    /// Set by SYNC/PSYNC: the worker hands the connection to the
    /// replication service after this command.
    pub handoff: Option<SyncRequest>,
}

/// A SYNC or PSYNC request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncRequest {
    /// SYNC (old protocol: no `+FULLRESYNC` line, never partial).
    Sync,
    /// PSYNC replid offset.
    Psync { replid: String, offset: i64 },
}

/// Connection state owned by the serving thread.
#[derive(Debug)]
pub struct Client {
    pub shared: Arc<ClientShared>,
    pub id: u64,
    pub db: usize,
    pub protocol: Protocol,
    pub authenticated: bool,
    pub reply_mode: ReplyMode,
    pub kind: ClientKind,
    /// Close the connection once pending replies are written (QUIT, protocol errors).
    pub close_after_reply: bool,
    /// Ask the worker to shut the server down after this command (SHUTDOWN).
    pub shutdown_requested: bool,
    pub no_evict: bool,
    pub no_touch: bool,
    pub monitor: bool,
    /// READONLY (cluster mode): reads may be served by a replica.
    pub cluster_readonly: bool,
    /// ASKING (cluster mode): the next command may use an importing slot.
    pub cluster_asking: bool,
    /// Set when the connection arrived over a unix socket.
    pub is_unix: bool,
    /// Set when the connection speaks TLS (cluster mode with `tls-cluster`
    /// shows such clients the nodes' TLS ports, others their plaintext
    /// ones).
    pub is_tls: bool,
    /// Name bytes and table index of the last top-level command looked up.
    pub last_lookup: Option<(Vec<u8>, usize)>,
    /// MULTI/WATCH state.
    pub tx: Transaction,
    /// True while EXEC runs the queued commands (blocking commands don't block).
    pub in_exec: bool,
    /// Pub/Sub subscriptions (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE).
    pub pubsub: ClientPubSub,
    /// Peer is on a loopback address or the unix socket (DEBUG "local", protected-mode).
    pub is_local: bool,
    /// Set while the client waits in a blocking command (see `blocking`).
    pub blocked: Option<Arc<Waiter>>,
    /// Keys written by this client's last command while some client was
    /// blocked: their waiters are served after the command (or EXEC).
    pub ready_keys: Vec<Vec<u8>>,
    /// Keys the running command changed (Redis's signalModifiedKey), as
    /// (db, key); filled only while some client WATCHes (see `Ctx::modified`).
    pub modified: Vec<(usize, Vec<u8>)>,
    /// How many changes the running command signalled (dirty counter).
    pub changes: u64,
    /// Client-side caching mode (CLIENT TRACKING; see `kernel::tracking`).
    pub tracking: crate::kernel::tracking::ClientTracking,
    /// The user the connection runs as (see `kernel::acl`).
    pub acl: crate::kernel::acl::ClientAcl,
    /// The time commands run through `execute_queued` see instead of the
    /// clock: the AOF loader's client sets 0, so nothing expires while an
    /// AOF loads and a past PEXPIREAT sets a TTL instead of deleting (as
    /// Redis 7.0 does while loading).
    pub replay_now_ms: Option<u64>,
    /// REPLCONF settings and a pending SYNC/PSYNC hand-over
    /// (`services::replication`).
    pub repl: ReplClientConf,
}

impl Client {
    pub fn new(shared: Arc<ClientShared>, is_unix: bool, is_local: bool) -> Client {
        Client {
            id: shared.id,
            shared,
            cluster_readonly: false,
            cluster_asking: false,
            db: 0,
            protocol: Protocol::Resp2,
            authenticated: false,
            reply_mode: ReplyMode::On,
            kind: ClientKind::Normal,
            close_after_reply: false,
            shutdown_requested: false,
            no_evict: false,
            no_touch: false,
            monitor: false,
            is_unix,
            is_tls: false,
            is_local,
            pubsub: Default::default(),
            tx: Default::default(),
            last_lookup: None,
            in_exec: false,
            blocked: None,
            ready_keys: Vec::new(),
            modified: Vec::new(),
            changes: 0,
            tracking: Default::default(),
            acl: Default::default(),
            replay_now_ms: None,
            repl: Default::default(),
        }
    }

    pub fn set_db(&mut self, db: usize) {
        self.db = db;
        self.shared.db.store(db as u32, Relaxed);
    }

    /// Publishes the subscription counts (`sub=`, `psub=`, `ssub=`, flag P
    /// in CLIENT LIST) after the client's sets changed.
    pub fn sync_pubsub_counts(&self) {
        let sh = &self.shared;
        sh.sub.store(self.pubsub.channels.len() as u32, Relaxed);
        sh.psub.store(self.pubsub.patterns.len() as u32, Relaxed);
        sh.ssub
            .store(self.pubsub.shard_channels.len() as u32, Relaxed);
        sh.set_flag(cflag::PUBSUB, self.pubsub.is_subscribed());
    }

    pub fn set_protocol(&mut self, p: Protocol) {
        self.protocol = p;
        self.shared
            .resp
            .store(if p == Protocol::Resp3 { 3 } else { 2 }, Relaxed);
    }
}
