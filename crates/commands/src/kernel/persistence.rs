//! Persistence state: the running background save, the outcome of the
//! last saves (LASTSAVE, `INFO persistence`), loading progress, and the
//! debug switches. The work (cut, walk, file, load) is in
//! `services::snapshot`; dispatch, INFO and the cron read this.
//!
//! Invariants:
//! * At most one background save runs: [`Persistence::begin`] refuses a
//!   second, and [`Persistence::finish`] is the only way back to none
//!   (called once by the save's writer thread, whatever the outcome), which
//!   wakes [`Persistence::abort_and_wait`].
//! * `dirty_at_save` is the server's dirty counter (`Stats::dirty`, which
//!   only grows) as it was at the cut of the last successful save, so
//!   `rdb_changes_since_last_save` = dirty now - `dirty_at_save`.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// What a running background save exposes to the rest of the server.
pub trait SaveControl: Send + Sync {
    /// Stops the save; the last good file is left as it was.
    fn abort(&self);
    /// Was it stopped?
    fn aborted(&self) -> bool;
    /// Bytes the save holds now beyond the dataset (serialised, not yet
    /// on disk): Petrel's counterpart of Redis's copy-on-write size.
    fn held_bytes(&self) -> u64;
    /// The most it held so far.
    fn peak_bytes(&self) -> u64;
    /// Keys serialised so far.
    fn keys_done(&self) -> u64;
    /// Keys at the cut.
    fn keys_total(&self) -> u64;
}

/// The background save in progress.
pub struct Running {
    pub control: Arc<dyn SaveControl>,
    /// Unix ms when it started (the cut).
    pub started_ms: u64,
    /// The dirty counter at the cut.
    pub dirty_at_start: u64,
}

/// Loading progress (`INFO persistence` while `loading:1`).
#[derive(Debug, Default)]
pub struct Loading {
    pub active: AtomicBool,
    /// Redis 7.0's async loading (a replica's `repl-diskless-load swapdb`
    /// when the master kept its replication ID): the load goes into a
    /// separate keyspace and clients keep the served one, only commands
    /// flagged `no_async_loading` get `-LOADING`. Set before `active` and
    /// cleared after it, once the new dataset is swapped in (or dropped).
    pub async_mode: AtomicBool,
    /// Unix seconds when loading began.
    pub start: AtomicU64,
    pub total_bytes: AtomicU64,
    pub loaded_bytes: AtomicU64,
    /// The file's `used-mem` aux field.
    pub rdb_used_mem: AtomicU64,
}

/// Persistence state shared by every thread.
pub struct Persistence {
    /// Unix seconds of the last successful save (LASTSAVE); the start time
    /// until then.
    pub lastsave: AtomicU64,
    /// `rdb_last_bgsave_status`.
    pub last_bgsave_ok: AtomicBool,
    /// Unix seconds of the last background save attempt (retry delay).
    pub last_bgsave_try: AtomicU64,
    /// `rdb_last_bgsave_time_sec` (-1 before the first).
    pub last_bgsave_secs: AtomicI64,
    /// `rdb_saves`: successful saves since startup.
    pub saves: AtomicU64,
    /// See the module invariants.
    pub dirty_at_save: AtomicU64,
    /// BGSAVE SCHEDULE / BGSAVE inside a transaction: the cron starts it.
    pub bgsave_scheduled: AtomicBool,
    /// `rdb_last_cow_size`: peak held bytes of the last background save.
    pub last_cow: AtomicU64,
    pub loading: Loading,
    /// `rdb_last_load_keys_loaded` / `_expired`.
    pub load_keys_loaded: AtomicU64,
    pub load_keys_expired: AtomicU64,
    /// `DEBUG SET-SKIP-CHECKSUM-VALIDATION`: RESTORE and loads skip the CRC.
    pub skip_checksum: AtomicBool,
    /// Held while an RDB file is renamed into place (see
    /// `services::snapshot::file::RdbFile::commit`).
    pub file_lock: Mutex<()>,
    running: Mutex<Option<Running>>,
    finished: Condvar,
}

impl Persistence {
    pub fn new(now_unix: u64) -> Persistence {
        Persistence {
            lastsave: AtomicU64::new(now_unix),
            last_bgsave_ok: AtomicBool::new(true),
            last_bgsave_try: AtomicU64::new(0),
            last_bgsave_secs: AtomicI64::new(-1),
            saves: AtomicU64::new(0),
            dirty_at_save: AtomicU64::new(0),
            bgsave_scheduled: AtomicBool::new(false),
            last_cow: AtomicU64::new(0),
            loading: Loading::default(),
            load_keys_loaded: AtomicU64::new(0),
            load_keys_expired: AtomicU64::new(0),
            skip_checksum: AtomicBool::new(false),
            file_lock: Mutex::new(()),
            running: Mutex::new(None),
            finished: Condvar::new(),
        }
    }

    /// Records a starting background save; false if one is running.
    pub fn begin(&self, r: Running) -> bool {
        let mut g = self.running.lock();
        if g.is_some() {
            return false;
        }
        *g = Some(r);
        true
    }

    /// Is a background save running?
    pub fn bgsave_running(&self) -> bool {
        self.running.lock().is_some()
    }

    /// Reads the running save, if any.
    pub fn with_running<T>(&self, f: impl FnOnce(&Running) -> T) -> Option<T> {
        self.running.lock().as_ref().map(f)
    }

    /// Ends the running background save (its writer thread calls this once,
    /// whatever the outcome). `ok`: the file is in place; `aborted`: it was
    /// stopped on purpose (FLUSHALL, SHUTDOWN), which is not an error.
    pub fn finish(&self, ok: bool, aborted: bool, now_ms: u64) {
        let mut g = self.running.lock();
        if let Some(r) = g.take() {
            let secs = now_ms.saturating_sub(r.started_ms) / 1000;
            self.last_bgsave_secs.store(secs as i64, Relaxed);
            self.last_cow.store(r.control.peak_bytes(), Relaxed);
            if ok {
                self.saved(now_ms / 1000, r.dirty_at_start);
            }
            if !aborted {
                self.last_bgsave_ok.store(ok, Relaxed);
            }
        }
        self.finished.notify_all();
    }

    /// Records a successful save of the dataset as it was when the dirty
    /// counter read `dirty_at_cut`.
    pub fn saved(&self, now_unix: u64, dirty_at_cut: u64) {
        self.lastsave.store(now_unix, Relaxed);
        self.saves.fetch_add(1, Relaxed);
        self.dirty_at_save.store(dirty_at_cut, Relaxed);
    }

    /// Stops the running background save, if any, and waits (at most
    /// `timeout`) until its threads have let go of the keyspace. The caller
    /// must hold no partition lock. Returns false on timeout.
    pub fn abort_and_wait(&self, timeout: Duration) -> bool {
        let mut g = self.running.lock();
        if let Some(r) = g.as_ref() {
            r.control.abort();
        }
        let deadline = std::time::Instant::now() + timeout;
        while g.is_some() {
            if self.finished.wait_until(&mut g, deadline).timed_out() {
                return g.is_none();
            }
        }
        true
    }

    /// Stops the running background save without waiting (a caller that
    /// may hold partition locks).
    pub fn abort(&self) {
        if let Some(r) = self.running.lock().as_ref() {
            r.control.abort();
        }
    }

    /// Changes since the last successful save, given the dirty counter now.
    pub fn changes_since_save(&self, dirty_now: u64) -> u64 {
        dirty_now.saturating_sub(self.dirty_at_save.load(Relaxed))
    }

    /// A load is in progress (either kind: the cron leaves the dataset
    /// alone meanwhile).
    pub fn is_loading(&self) -> bool {
        self.loading.active.load(Relaxed)
    }

    /// An async load is in progress (see [`Loading::async_mode`]).
    pub fn is_async_loading(&self) -> bool {
        self.loading.async_mode.load(Relaxed)
    }

    /// A load that refuses clients `-LOADING` (INFO `loading:1`).
    pub fn is_blocking_loading(&self) -> bool {
        self.is_loading() && !self.is_async_loading()
    }
}
