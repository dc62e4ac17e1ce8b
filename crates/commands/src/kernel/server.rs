//! [`Server`]: the state shared by every worker thread: configuration, the
//! command table, counters, the client registry, SLOWLOG/LATENCY, the
//! cross-thread hub, pause state. The keyspace hangs off it as well.
//!
//! `Server` is part of the command contract (with `spec`, `table`, `ctx`):
//! it owns the table, which `crate::registry` builds and hands in, and the
//! [`RuntimeHooks`] through which a command runs other commands (EXEC) without
//! the kernel naming the runtime. Its methods compose registries that do not
//! know each other (publishing a keyspace event needs Pub/Sub, the hub, the
//! statistics and the output-buffer setting).
//!
//! Locking: nothing here is held across a command except the keyspace
//! partition locks, which the command families take themselves. Registry and
//! log mutexes are held only to copy or append.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use resp::ReplyBuf;

use crate::base::errors;
use crate::kernel::blocking::Blocking;
use crate::kernel::client::{Client, ClientShared};
use crate::kernel::config::{ConfigStore, Params, Settings};
use crate::kernel::eviction::Eviction;
use crate::kernel::hub::Hub;
use crate::kernel::lazyfree::LazyFree;
use crate::kernel::notify;
use crate::kernel::pubsub::PubSub;
use crate::kernel::scripting::{ScriptCall, Scripting};
use crate::kernel::slowlog::{LatencyMonitor, SlowLog};
use crate::kernel::stats::Stats;
use crate::kernel::table::CommandTable;
use crate::kernel::watches::Watches;

/// Runs one command queued by MULTI for `client` (checks were done when it
/// was queued), writing its reply to the buffer.
pub type ExecuteQueued = fn(&Server, &mut Client, &Settings, &[&[u8]], &mut ReplyBuf);

/// Runs one command called by a script (`redis.call`) for the script's
/// client, with the checks Redis applies to script calls, writing its reply
/// (in the protocol of the buffer) to the buffer.
pub type ExecuteFromScript =
    fn(&Server, &mut Client, &Settings, &[&[u8]], &ScriptCall, &mut ReplyBuf);

/// Entry points of the runtime that commands call back into, installed by
/// `crate::registry` (the kernel cannot name the runtime).
#[derive(Clone, Copy)]
pub struct RuntimeHooks {
    pub execute_queued: ExecuteQueued,
    pub execute_from_script: ExecuteFromScript,
}
/// `CLIENT PAUSE` state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pause {
    /// Unix ms until which clients are paused; 0 = not paused.
    pub until_ms: u64,
    /// true = ALL, false = WRITE.
    pub all: bool,
}

/// Who paused clients (Redis 7.0's pause purposes): each has its own
/// pause, and what clients see is their combination
/// ([`Server::pause_state`]); CLIENT UNPAUSE ends only its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PausePurpose {
    /// CLIENT PAUSE.
    Client = 0,
    /// The master side of a cluster manual failover (CLUSTER FAILOVER).
    ClusterFailover = 1,
}

const PAUSE_PURPOSES: usize = 2;

/// The pause clients see: the most restrictive of the purposes' pauses
/// (ALL over WRITE), until the latest end among those of that kind.
fn combined(pauses: &[Pause; PAUSE_PURPOSES]) -> Pause {
    let mut out = Pause::default();
    for p in pauses.iter().filter(|p| p.until_ms != 0) {
        if out.until_ms == 0 || (p.all && !out.all) {
            out = *p;
        } else if p.all == out.all {
            out.until_ms = out.until_ms.max(p.until_ms);
        }
    }
    out
}

#[derive(Default, Debug)]
pub struct ClientRegistry {
    next_id: AtomicU64,
    clients: Mutex<BTreeMap<u64, Arc<ClientShared>>>,
}

/// The first id a connection gets: redis-server 7.0 gives ids 1 and 2 to
/// its two internal Lua clients (EVAL's and the function engine's) at
/// startup, so its first connection is id 3; petrel numbers the same way
/// (`CLIENT ID`, `CLIENT KILL ID`, `CLIENT TRACKING ... REDIRECT` see it).
pub const FIRST_CLIENT_ID: u64 = 3;

impl ClientRegistry {
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Relaxed) + FIRST_CLIENT_ID
    }
    pub fn add(&self, c: Arc<ClientShared>) {
        self.clients.lock().insert(c.id, c);
    }
    pub fn remove(&self, id: u64) {
        self.clients.lock().remove(&id);
    }
    pub fn get(&self, id: u64) -> Option<Arc<ClientShared>> {
        self.clients.lock().get(&id).cloned()
    }
    /// All clients, ordered by id.
    pub fn all(&self) -> Vec<Arc<ClientShared>> {
        self.clients.lock().values().cloned().collect()
    }
    pub fn len(&self) -> usize {
        self.clients.lock().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Number of keyspace partitions (contiguous slot ranges, one lock each).
/// More partitions mean less lock contention between threads; each costs
/// one small table per database in use.
pub const KEYSPACE_PARTITIONS: usize = 16;

/// Everything shared between worker threads.
pub struct Server {
    /// Every database's keys and values, split into slot-range partitions
    /// (shared with the background save's threads).
    pub keyspace: Arc<store::keyspace::Keyspace>,
    /// Saves, loads and their statistics (see `services::snapshot`).
    pub persistence: Arc<crate::kernel::persistence::Persistence>,
    pub config: ConfigStore,
    pub table: CommandTable,
    pub stats: Stats,
    pub clients: ClientRegistry,
    pub slowlog: SlowLog,
    pub latency: LatencyMonitor,
    pub hub: Hub,
    pub pubsub: Arc<PubSub>,
    pub watches: Watches,
    /// Background freeing of large values (UNLINK, FLUSHALL ASYNC...).
    pub lazyfree: LazyFree,
    /// Active defragmentation's state (see `services::defrag`).
    pub defrag: Arc<crate::kernel::defrag::DefragState>,
    /// `maxmemory` state (see `services::eviction`).
    pub eviction: Eviction,
    /// Clients waiting in blocking commands.
    pub blocking: Blocking,
    /// Client-side caching: who read which key (see `services::tracking`).
    pub tracking: crate::kernel::tracking::Tracking,
    /// Runtime entry points commands call back into.
    pub hooks: RuntimeHooks,
    /// Replication IDs (INFO replication, DEBUG CHANGE-REPL-ID).
    pub replication: crate::kernel::replication::Replication,
    /// `DEBUG PAUSE-CRON 1`: the cron skips its work until set back.
    pub cron_paused: AtomicBool,
    /// The Lua engines and the running script (see `kernel::scripting`).
    pub scripting: Scripting,
    /// ACL users and the ACL LOG (see `kernel::acl`, `services::acl`).
    pub acl: Arc<crate::kernel::acl::Acl>,
    /// The write journal (see `kernel::journal`, `services::journal`).
    pub journal: crate::kernel::journal::Journal,
    /// The append-only file (see `kernel::aof`, `services::aof`).
    pub aof: std::sync::Arc<crate::kernel::aof::Aof>,
    /// Cluster mode's nodes and slots (see `kernel::cluster`).
    pub cluster: crate::kernel::cluster::Cluster,
    /// Each purpose's pause (indexed by [`PausePurpose`]); written through
    /// [`Server::set_pause_for`] only.
    pause: Mutex<[Pause; PAUSE_PURPOSES]>,
    /// The combined pause's `until_ms`, so the per-command check is one
    /// atomic load.
    pause_until_ms: AtomicU64,
    /// Clients in MONITOR mode: (client id, worker index).
    pub monitors: Mutex<Vec<(u64, usize)>>,
    pub has_monitors: AtomicBool,
    pub shutdown_requested: AtomicBool,
    pub started: Instant,
    pub started_unix_ms: u64,
    pub run_id: String,
    pub tcp_port: AtomicU64,
    pub executable: String,
}

impl Server {
    /// A server with `table` (built by `crate::registry` with one statistics
    /// shard per worker thread) and the runtime's `hooks`.
    pub fn new(
        settings: Settings,
        config_file: Option<std::path::PathBuf>,
        params: Params,
        table: CommandTable,
        hooks: RuntimeHooks,
    ) -> Server {
        let keyspace = Arc::new(store::keyspace::Keyspace::new(store::keyspace::Config {
            partitions: KEYSPACE_PARTITIONS,
            databases: settings.databases,
        }));
        let started_unix_ms = crate::base::clock::unix_time_ms();
        let eviction = Eviction::default();
        eviction.apply(&settings, &keyspace);
        keyspace.set_active_expire_effort(settings.active_expire_effort);
        let lazyfree = LazyFree::default();
        lazyfree.install_store_hook(&keyspace);
        let scripting = Scripting::new(settings.threads);
        let acl = Arc::new(crate::kernel::acl::Acl::new(
            crate::kernel::acl::CommandIndex::from_table(&table),
            &settings.requirepass,
        ));
        let cluster = crate::kernel::cluster::Cluster::new(
            settings.cluster.enabled,
            std::path::PathBuf::from(&settings.cluster.config_file),
        );
        let config = ConfigStore::new(settings, config_file, params);
        let hook_acl = acl.clone();
        config.set_change_hook(Box::new(move |old, new| {
            if old.requirepass != new.requirepass {
                hook_acl.set_default_password(&new.requirepass);
            }
        }));
        // CONFIG REWRITE writes the users as `user` lines, unless they
        // live in an ACL file (then the config file's `user` lines go).
        let rewrite_acl = acl.clone();
        let with_aclfile = !config.get().aclfile.is_empty();
        config.set_directives_hook(Box::new(move || {
            let lines = if with_aclfile {
                Vec::new()
            } else {
                rewrite_acl.user_lines()
            };
            vec![("user", lines)]
        }));
        Server {
            keyspace,
            config,
            acl,
            persistence: Arc::new(crate::kernel::persistence::Persistence::new(
                started_unix_ms / 1000,
            )),
            table,
            stats: Stats::default(),
            clients: ClientRegistry::default(),
            slowlog: SlowLog::default(),
            latency: LatencyMonitor::default(),
            hub: Hub::default(),
            pubsub: Default::default(),
            watches: Default::default(),
            blocking: Default::default(),
            tracking: Default::default(),
            lazyfree,
            defrag: Arc::default(),
            eviction,
            hooks,
            replication: Default::default(),
            cron_paused: AtomicBool::new(false),
            scripting,
            journal: Default::default(),
            aof: Default::default(),
            cluster,
            pause: Mutex::new([Pause::default(); PAUSE_PURPOSES]),
            pause_until_ms: AtomicU64::new(0),
            monitors: Mutex::new(Vec::new()),
            has_monitors: AtomicBool::new(false),
            shutdown_requested: AtomicBool::new(false),
            started: Instant::now(),
            started_unix_ms,
            run_id: crate::base::text::random_hex(40),
            tcp_port: AtomicU64::new(0),
            executable: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        }
    }

    /// A server with an empty command table and no runtime: for unit tests
    /// of code that reads server state without running commands (a queued
    /// command it is asked to run answers an error).
    pub fn without_commands(settings: Settings) -> Server {
        fn no_runtime(_: &Server, _: &mut Client, _: &Settings, _: &[&[u8]], out: &mut ReplyBuf) {
            out.error(errors::ERR_NO_RUNTIME);
        }
        fn no_script_runtime(
            _: &Server,
            _: &mut Client,
            _: &Settings,
            _: &[&[u8]],
            _: &ScriptCall,
            out: &mut ReplyBuf,
        ) {
            out.error(errors::ERR_NO_RUNTIME);
        }
        let hooks = RuntimeHooks {
            execute_queued: no_runtime,
            execute_from_script: no_script_runtime,
        };
        let params = Params {
            groups: crate::kernel::config::params::KERNEL,
        };
        Server::new(
            settings,
            None,
            params,
            CommandTable::build(&[], &[], &[], 0),
            hooks,
        )
    }

    pub fn settings(&self) -> Arc<Settings> {
        self.config.get()
    }

    /// Runs `f` so that no other client observes the keyspace in between its steps.
    pub fn atomically(&self, f: &mut dyn FnMut()) {
        let _held = self.keyspace.hold_all();
        f()
    }

    /// TTL deadline (unix ms) of a key, for WATCH; None when it has none.
    pub fn key_expire_at(&self, db: usize, key: &[u8], now_ms: u64) -> Option<u64> {
        let k = store::object::Key::new(key);
        let mut part = self.keyspace.lock(&k);
        part.get(db, &k, now_ms).and_then(|e| e.expire_at())
    }

    /// Current pause, if still active.
    pub fn active_pause(&self, now_ms: u64) -> Option<Pause> {
        if self.pause_until_ms.load(Relaxed) <= now_ms {
            return None;
        }
        let p = combined(&self.pause.lock());
        (p.until_ms > now_ms).then_some(p)
    }

    /// Starts, extends or (with `Pause::default()`) ends a CLIENT PAUSE.
    pub fn set_pause(&self, p: Pause) {
        self.set_pause_for(PausePurpose::Client, p);
    }

    /// Sets `purpose`'s pause (`Pause::default()` ends it); the others
    /// stay.
    pub fn set_pause_for(&self, purpose: PausePurpose, p: Pause) {
        let mut g = self.pause.lock();
        g[purpose as usize] = p;
        self.pause_until_ms.store(combined(&g).until_ms, Relaxed);
        // While paused, the dataset stays as it is: no expiry, no eviction
        // (Redis 7.0); the cron thaws it when the pause ends.
        drop(g);
        self.refresh_expiry_freeze();
    }

    /// `purpose`'s own pause.
    pub fn pause_for(&self, purpose: PausePurpose) -> Pause {
        self.pause.lock()[purpose as usize]
    }

    /// The cron's part: ends the pauses whose time has passed.
    pub fn end_passed_pauses(&self, now_ms: u64) {
        for purpose in [PausePurpose::Client, PausePurpose::ClusterFailover] {
            let p = self.pause_for(purpose);
            if p.until_ms != 0 && p.until_ms <= now_ms {
                self.set_pause_for(purpose, Pause::default());
            }
        }
    }

    /// Expiry is frozen (expired keys read as missing but stay, no active
    /// expiry) while clients are paused, while a FAILOVER runs, and on a
    /// replica, whose keys go only when its master's DEL arrives.
    pub fn refresh_expiry_freeze(&self) {
        let paused = self.pause_until_ms.load(Relaxed) != 0;
        self.keyspace
            .set_expiry_frozen(paused || self.replication.expiry_held());
    }

    /// The pause clients see (every purpose's combined).
    pub fn pause_state(&self) -> Pause {
        combined(&self.pause.lock())
    }

    /// Publishes `payload` on `channel` (a shard channel when `shard`) and
    /// returns the number of receivers; a message for `me` lands in `my_out`
    /// directly, ahead of the command's reply.
    pub fn publish(
        &self,
        channel: &[u8],
        payload: &[u8],
        shard: bool,
        me: u64,
        my_out: &mut ReplyBuf,
    ) -> usize {
        let hard = self.config.get().output_pubsub.hard;
        self.pubsub.publish(
            &self.hub,
            &self.stats,
            hard,
            channel,
            payload,
            shard,
            me,
            my_out,
        )
    }

    /// Fires a keyspace notification if `flags` (`notify-keyspace-events`)
    /// enable its class. A message for the client that caused it (`me`, if
    /// subscribed) lands in `my_out` ahead of the command's reply, as in Redis.
    pub fn notify_keyspace_event(
        &self,
        flags: u32,
        ev: notify::Event<'_>,
        me: u64,
        my_out: &mut ReplyBuf,
    ) {
        if flags & ev.class == 0 || flags & (notify::KEYSPACE | notify::KEYEVENT) == 0 {
            return;
        }
        if flags & notify::KEYSPACE != 0 {
            let mut ch = format!("__keyspace@{}__:", ev.db).into_bytes();
            ch.extend_from_slice(ev.key);
            self.publish(&ch, ev.name.as_bytes(), false, me, my_out);
        }
        if flags & notify::KEYEVENT != 0 {
            let ch = format!("__keyevent@{}__:{}", ev.db, ev.name);
            self.publish(ch.as_bytes(), ev.key, false, me, my_out);
        }
    }
}

#[cfg(test)]
mod pause_tests {
    use super::*;

    const T: u64 = 1_000_000;

    /// Each purpose keeps its own pause: CLIENT UNPAUSE (the client's
    /// purpose) leaves a cluster manual failover's write pause in place;
    /// clients see the stricter kind, until the later end of that kind.
    #[test]
    fn purposes_combine_and_end_separately() {
        let srv = Server::without_commands(Settings::default());
        let mf = Pause {
            until_ms: T + 10_000,
            all: false,
        };
        srv.set_pause_for(PausePurpose::ClusterFailover, mf);
        srv.set_pause(Pause {
            until_ms: T + 500,
            all: true,
        });
        assert_eq!(
            srv.pause_state(),
            Pause {
                until_ms: T + 500,
                all: true
            }
        );
        srv.set_pause(Pause::default());
        assert_eq!(srv.pause_state(), mf);
        assert_eq!(srv.active_pause(T), Some(mf));
        // a longer WRITE pause by a client extends what clients see
        srv.set_pause(Pause {
            until_ms: T + 20_000,
            all: false,
        });
        assert_eq!(srv.pause_state().until_ms, T + 20_000);
        // the cron ends each purpose's pause at its own time
        srv.end_passed_pauses(T + 15_000);
        assert_eq!(
            srv.pause_for(PausePurpose::ClusterFailover),
            Pause::default()
        );
        assert_eq!(srv.pause_state().until_ms, T + 20_000);
        srv.end_passed_pauses(T + 20_000);
        assert_eq!(srv.pause_state(), Pause::default());
        assert_eq!(srv.active_pause(T + 20_001), None);
    }
}
