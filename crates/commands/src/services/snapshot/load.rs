//! Loading an RDB file into the keyspace (startup, DEBUG RELOAD), with
//! Redis's rules: keys whose TTL has passed are skipped and counted
//! (kept on a replica, whose master will delete them), a
//! database number at or above `databases` and a key that appears twice
//! are errors, `IDLE`/`FREQ` set the eviction byte the policy uses.
//!
//! Keys go in batches, grouped by partition, so each partition lock is
//! taken once per batch; progress (`loading_loaded_bytes`) is published
//! after every batch. On an error the caller empties the keyspace: a file
//! is loaded whole or not at all (see `services::snapshot`).

use std::fs::File;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use rdb::{Item, KeyEntry, ReadOptions, Reader};
use store::Key;

use crate::base::log::{log, LogLevel};
use crate::kernel::config::Settings;
use crate::kernel::server::Server;

/// Entries read before they are inserted.
const BATCH: usize = 2048;

/// What a load did.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadReport {
    pub keys_loaded: u64,
    pub keys_expired: u64,
    pub bytes: u64,
    pub seconds: f64,
    /// The `repl-stream-db` aux field (a replica's master client starts
    /// in that database).
    pub repl_stream_db: Option<u32>,
    /// The `repl-id` aux field (40 hex digits).
    pub repl_id: Option<[u8; 40]>,
    /// The `repl-offset` aux field.
    pub repl_offset: Option<u64>,
}

/// Why a load failed.
#[derive(Debug)]
pub enum LoadError {
    /// There is no file (not an error at startup).
    NotFound,
    /// The file is unreadable or wrong; the text says what and where.
    Failed(String),
}

impl std::fmt::Display for LoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LoadError::NotFound => f.write_str("no such file"),
            LoadError::Failed(m) => f.write_str(m),
        }
    }
}

/// Loads `path` into the keyspace (which the caller wants empty, or
/// accepts additions to). Publishes loading progress on `srv.persistence`.
/// With `merge` (DEBUG RELOAD MERGE) a key or function library of the file
/// replaces one in the server; otherwise one that exists already is an
/// error. `flush_functions` replaces every library by the file's.
pub fn load_file(
    srv: &Server,
    settings: &Settings,
    path: &Path,
    merge: bool,
    flush_functions: bool,
) -> Result<LoadReport, LoadError> {
    let f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LoadError::NotFound),
        Err(e) => {
            return Err(LoadError::Failed(format!(
                "Fatal error loading the DB: {e}. Exiting."
            )))
        }
    };
    // A FIFO or a device has no length to check reads against.
    let total = f.metadata().ok().filter(|m| m.is_file()).map(|m| m.len());
    let p = &srv.persistence;
    let started = Instant::now();
    p.loading
        .start
        .store(crate::base::clock::unix_time_ms() / 1000, Relaxed);
    p.loading.total_bytes.store(total.unwrap_or(0), Relaxed);
    p.loading.loaded_bytes.store(0, Relaxed);
    p.loading.rdb_used_mem.store(0, Relaxed);
    p.loading.active.store(true, Relaxed);
    let r = read_all(
        srv,
        &srv.keyspace,
        settings,
        f,
        total,
        merge,
        flush_functions,
    );
    p.loading.active.store(false, Relaxed);
    let mut rep = r.map_err(LoadError::Failed)?;
    rep.seconds = started.elapsed().as_secs_f64();
    p.load_keys_loaded.store(rep.keys_loaded, Relaxed);
    p.load_keys_expired.store(rep.keys_expired, Relaxed);
    Ok(rep)
}

/// Loads an RDB read from `r` (a replica's diskless load: the socket),
/// as [`load_file`] with the functions replaced; `r` ends where the
/// payload ends.
pub fn load_reader<R: std::io::Read>(
    srv: &Server,
    settings: &Settings,
    r: R,
) -> Result<LoadReport, LoadError> {
    load_reader_into(srv, settings, &srv.keyspace, r, None)
}

/// [`load_reader`] into `ks` (a replica's `repl-diskless-load swapdb`
/// loads into a keyspace made by `Keyspace::empty_like` while clients
/// keep the served one). Progress is published on `srv.persistence` all
/// the same; the caller marks the load async (`loading.async_mode`).
/// `total`: the payload's length when the master announced it (`$<len>`),
/// INFO's `loading_total_bytes` as Redis shows it (0 for `$EOF:`).
pub fn load_reader_into<R: std::io::Read>(
    srv: &Server,
    settings: &Settings,
    ks: &store::Keyspace,
    r: R,
    total: Option<u64>,
) -> Result<LoadReport, LoadError> {
    let p = &srv.persistence;
    let started = Instant::now();
    p.loading
        .start
        .store(crate::base::clock::unix_time_ms() / 1000, Relaxed);
    p.loading.total_bytes.store(total.unwrap_or(0), Relaxed);
    p.loading.loaded_bytes.store(0, Relaxed);
    p.loading.rdb_used_mem.store(0, Relaxed);
    p.loading.active.store(true, Relaxed);
    let res = read_all(srv, ks, settings, r, total, false, true);
    p.loading.active.store(false, Relaxed);
    let mut rep = res.map_err(LoadError::Failed)?;
    rep.seconds = started.elapsed().as_secs_f64();
    p.load_keys_loaded.store(rep.keys_loaded, Relaxed);
    p.load_keys_expired.store(rep.keys_expired, Relaxed);
    Ok(rep)
}

fn read_all<R: std::io::Read>(
    srv: &Server,
    ks: &store::Keyspace,
    settings: &Settings,
    f: R,
    total: Option<u64>,
    merge: bool,
    flush_functions: bool,
) -> Result<LoadReport, String> {
    let opts = ReadOptions {
        limits: settings.limits,
        verify_checksum: settings.rdbchecksum && !srv.persistence.skip_checksum.load(Relaxed),
        allow_functions: true,
        input_len: total,
    };
    let mut rd = Reader::new(f, opts).map_err(|e| format!("Error loading the RDB file: {e}"))?;
    let now = crate::base::clock::unix_time_ms();
    // A replica keeps keys whose TTL passed: its master's DEL will come
    // (Redis loads them unless it is a master).
    let keep_expired = srv.replication.replica.is_replica.load(Relaxed);
    let lfu = ks.evict_shared().is_lfu();
    // Loaded integers follow the rule of new ones: not shared while
    // `maxmemory` is set with an LRU or LFU policy (Redis's
    // `tryObjectEncoding` and `createStringObjectFromLongLongForValue`).
    let unshare = !srv.eviction.shares_integers();
    let mut rep = LoadReport::default();
    let mut batch: Vec<KeyEntry> = Vec::with_capacity(BATCH);
    let mut functions: Vec<Vec<u8>> = Vec::new();
    loop {
        if srv.shutdown_requested.load(Relaxed) {
            return Err("Loading stopped: shutdown requested".into());
        }
        let item = rd
            .read_item()
            .map_err(|e| format!("Error loading the RDB file: {e}"))?;
        match item {
            Item::Aux { key, value } => {
                if key == b"repl-stream-db" {
                    rep.repl_stream_db = std::str::from_utf8(&value)
                        .ok()
                        .and_then(|v| v.parse::<u32>().ok())
                        .filter(|&db| (db as usize) < ks.databases());
                } else if key == b"repl-id" {
                    rep.repl_id = value
                        .as_slice()
                        .try_into()
                        .ok()
                        .filter(|id: &[u8; 40]| id.iter().all(u8::is_ascii_hexdigit));
                } else if key == b"repl-offset" {
                    rep.repl_offset = std::str::from_utf8(&value)
                        .ok()
                        .and_then(|v| v.parse::<u64>().ok());
                }
                aux_field(srv, &key, &value, now)
            }
            Item::SelectDb(db) => {
                if db as usize >= ks.databases() {
                    return Err(format!(
                        "FATAL: Data file was created with a Redis server configured to handle more than {} databases. Exiting",
                        ks.databases()
                    ));
                }
            }
            Item::ResizeDb { .. } | Item::SlotInfo { .. } => {}
            Item::Entry(e) => {
                if !keep_expired && e.expire_ms.is_some_and(|t| t < now as i64) {
                    rep.keys_expired += 1;
                    continue;
                }
                batch.push(e);
                if batch.len() >= BATCH {
                    rep.keys_loaded += insert_batch(ks, &mut batch, lfu, unshare, now, merge)?;
                    srv.persistence
                        .loading
                        .loaded_bytes
                        .store(rd.offset(), Relaxed);
                }
            }
            Item::Function { code } => functions.push(code),
            Item::Eof { .. } => break,
        }
    }
    rep.keys_loaded += insert_batch(ks, &mut batch, lfu, unshare, now, merge)?;
    // The libraries go in once the whole file has been read. DEBUG RELOAD
    // replaces them (Redis empties them with the data), MERGE keeps the
    // others, a startup load starts from none.
    let policy = match (flush_functions, merge) {
        (true, _) => scripting::RestorePolicy::Flush,
        (false, true) => scripting::RestorePolicy::Replace,
        (false, false) => scripting::RestorePolicy::Append,
    };
    if !functions.is_empty() || policy == scripting::RestorePolicy::Flush {
        let refs: Vec<&[u8]> = functions.iter().map(|c| c.as_slice()).collect();
        let mut engine = srv.scripting.functions.lock();
        let r = engine.restore(&refs, policy);
        srv.scripting.refresh_function_counts(&engine);
        r.map_err(|e| format!("Error loading the RDB file: function libraries: {e}"))?;
    }
    rep.bytes = rd.offset();
    srv.persistence
        .loading
        .loaded_bytes
        .store(rep.bytes, Relaxed);
    if rd.empty_keys_skipped() > 0 {
        log(
            LogLevel::Warning,
            &format!(
                "Skipped {} keys with empty collections in the RDB file",
                rd.empty_keys_skipped()
            ),
        );
    }
    Ok(rep)
}

/// Logs what Redis logs of the aux fields.
fn aux_field(srv: &Server, key: &[u8], value: &[u8], now_ms: u64) {
    let v = String::from_utf8_lossy(value);
    match key {
        b"redis-ver" => log(
            LogLevel::Notice,
            &format!("Loading RDB produced by version {v}"),
        ),
        b"ctime" => {
            if let Ok(t) = v.parse::<i64>() {
                let age = (now_ms / 1000) as i64 - t;
                log(LogLevel::Notice, &format!("RDB age {} seconds", age.max(0)));
            }
        }
        b"used-mem" => {
            if let Ok(m) = v.parse::<u64>() {
                srv.persistence.loading.rdb_used_mem.store(m, Relaxed);
                log(
                    LogLevel::Notice,
                    &format!(
                        "RDB memory usage when created {:.2} Mb",
                        m as f64 / (1024.0 * 1024.0)
                    ),
                );
            }
        }
        _ => {}
    }
}

/// Inserts the batch grouped by partition; returns how many keys went in.
fn insert_batch(
    ks: &store::Keyspace,
    batch: &mut Vec<KeyEntry>,
    lfu: bool,
    unshare_ints: bool,
    now: u64,
    merge: bool,
) -> Result<u64, String> {
    if batch.is_empty() {
        return Ok(0);
    }
    let shared = ks.evict_shared();
    let mut by_part: Vec<(usize, usize)> = batch
        .iter()
        .enumerate()
        .map(|(i, e)| (ks.partition_of_slot(store::slot::key_slot(&e.key)), i))
        .collect();
    by_part.sort_unstable();
    let mut entries: Vec<Option<KeyEntry>> = batch.drain(..).map(Some).collect();
    let mut n = 0;
    let mut i = 0;
    while i < by_part.len() {
        let p = by_part[i].0;
        let mut g = ks.lock_partition(p);
        while i < by_part.len() && by_part[i].0 == p {
            let mut e = entries[by_part[i].1].take().expect("each entry once");
            i += 1;
            if unshare_ints && e.value.is_int() {
                e.value.unshare_int();
            }
            let evict = if lfu {
                e.freq
            } else {
                e.idle_secs
                    .map(|s| shared.lru_byte_for_idle(s.saturating_mul(1000), now))
            };
            let key = Key::new(&e.key);
            let expire = e.expire_ms.map(|t| t.max(0) as u64);
            if merge {
                g.remove(e.db as usize, &key, now);
            }
            if !g.insert_loaded(e.db as usize, &key, e.value, expire, evict) {
                return Err(format!(
                    "Error loading the RDB file: duplicate key '{}' in DB {}",
                    rdb::error::printable(&e.key),
                    e.db
                ));
            }
            n += 1;
        }
    }
    Ok(n)
}
