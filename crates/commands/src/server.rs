//! [`Server`]: the state shared by every worker thread: configuration, the
//! command table, counters, the client registry, SLOWLOG/LATENCY, the
//! cross-thread hub, pause state. The keyspace hangs off it as well.
//!
//! Locking: nothing here is held across a command except the keyspace
//! partition locks, which the command families take themselves. Registry and
//! log mutexes are held only to copy or append.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::client::ClientShared;
use crate::config::{ConfigStore, Settings};
use crate::hub::Hub;
use crate::slowlog::{LatencyMonitor, SlowLog};
use crate::stats::Stats;
use crate::table::CommandTable;

/// `CLIENT PAUSE` state.
#[derive(Clone, Copy, Debug, Default)]
pub struct Pause {
    /// Unix ms until which clients are paused; 0 = not paused.
    pub until_ms: u64,
    /// true = ALL, false = WRITE.
    pub all: bool,
}

#[derive(Default, Debug)]
pub struct ClientRegistry {
    next_id: AtomicU64,
    clients: Mutex<BTreeMap<u64, Arc<ClientShared>>>,
}

impl ClientRegistry {
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Relaxed) + 1
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
    /// Every database's keys and values, split into slot-range partitions.
    pub keyspace: store::keyspace::Keyspace,
    pub config: ConfigStore,
    pub table: CommandTable,
    pub stats: Stats,
    pub clients: ClientRegistry,
    pub slowlog: SlowLog,
    pub latency: LatencyMonitor,
    pub hub: Hub,
    pub pubsub: crate::pubsub::PubSub,
    pub watches: crate::transactions::Watches,
    /// Background freeing of large values (UNLINK, FLUSHALL ASYNC...).
    pub lazyfree: crate::lazyfree::LazyFree,
    /// `maxmemory` state (see `eviction`).
    pub eviction: crate::eviction::Eviction,
    /// Clients waiting in blocking commands.
    pub blocking: crate::blocking::Blocking,
    /// CLIENT PAUSE state; written through [`Server::set_pause`] only.
    pause: Mutex<Pause>,
    /// Copy of `pause.until_ms` so the per-command check is one atomic load.
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
    pub fn new(settings: Settings, config_file: Option<std::path::PathBuf>) -> Server {
        let threads = settings.threads;
        let keyspace = store::keyspace::Keyspace::new(store::keyspace::Config {
            partitions: KEYSPACE_PARTITIONS,
            databases: settings.databases,
        });
        let eviction = crate::eviction::Eviction::default();
        eviction.apply(&settings, &keyspace);
        let lazyfree = crate::lazyfree::LazyFree::default();
        lazyfree.install_store_hook(&keyspace);
        Server {
            keyspace,
            config: ConfigStore::new(settings, config_file),
            table: CommandTable::build_for(threads),
            stats: Stats::default(),
            clients: ClientRegistry::default(),
            slowlog: SlowLog::default(),
            latency: LatencyMonitor::default(),
            hub: Hub::default(),
            pubsub: Default::default(),
            watches: Default::default(),
            blocking: Default::default(),
            lazyfree,
            eviction,
            pause: Mutex::new(Pause::default()),
            pause_until_ms: AtomicU64::new(0),
            monitors: Mutex::new(Vec::new()),
            has_monitors: AtomicBool::new(false),
            shutdown_requested: AtomicBool::new(false),
            started: Instant::now(),
            started_unix_ms: crate::util::unix_time_ms(),
            run_id: random_hex(40),
            tcp_port: AtomicU64::new(0),
            executable: std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        }
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
        let p = *self.pause.lock();
        (p.until_ms > now_ms).then_some(p)
    }

    /// Starts, extends or (with `Pause::default()`) ends a CLIENT PAUSE.
    pub fn set_pause(&self, p: Pause) {
        let mut g = self.pause.lock();
        *g = p;
        self.pause_until_ms.store(p.until_ms, Relaxed);
    }

    pub fn pause_state(&self) -> Pause {
        *self.pause.lock()
    }
}

/// Random lowercase hex string (run_id), from the OS random source.
pub fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n / 2 + 1];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut bytes);
    }
    let mut s: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    s.truncate(n);
    s
}
