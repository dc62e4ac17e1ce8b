//! Saving and loading the dataset in Redis's RDB format.
//!
//! * **BGSAVE** ([`bgsave`]) is forkless: the keyspace takes one cut under
//!   every partition lock (`store::keyspace::snapshot`), then two threads
//!   of this process finish the job while clients go on: the walk
//!   (serialises every bucket the writes have not, in short paced slices)
//!   and the writer (takes the encoded pieces from [`sink::RdbSink`] in
//!   order and puts them in the file). Writes that meet a bucket not yet
//!   serialised serialise it first, on their own thread, so the file holds
//!   the dataset as it was at the cut. Memory: the queue between the
//!   encoders and the writer is bounded ([`sink::MAX_QUEUED`]); nothing is
//!   copied, nothing is forked. Both threads run at a lower priority
//!   (`base::sched::lower_snapshot_thread`, nice 10): beside a worker on
//!   the same core they take about a tenth of it, so the save slows down
//!   rather than the clients (a 2M-key save under 85k requests/s on one
//!   core: 1.4 s with clients queued up to 270 ms before, 6.5 s with p99
//!   1.6 ms after; docs/BENCHMARKS.md).
//! * **SAVE** ([`save`]) holds every partition and writes the file from the
//!   calling thread: the server is blocked meanwhile, as Redis's SAVE
//!   blocks it. SHUTDOWN, FLUSHALL (with save points) and DEBUG RELOAD use it.
//! * Both write a temporary file and rename it over `dbfilename` after an
//!   fsync ([`file`]), so the last good file survives a crash at any
//!   moment.
//! * **Loading** ([`load`]) at startup and for DEBUG RELOAD; while it runs
//!   `Persistence::is_loading` makes dispatch answer `-LOADING`.
//! * **Save points** ([`cron`]): Redis's rules (`save <seconds> <changes>`,
//!   a failed save retried after 5 seconds, BGSAVE SCHEDULE).
//! * **MISCONF** ([`writes_refused`]): after a failed background save,
//!   with `stop-writes-on-bgsave-error` and save points, writes are refused.
//!
//! The log lines are Redis's where tools read them ("Background saving
//! started by pid", "DB saved on disk", "Background saving terminated with
//! success", "DB loaded from disk: x seconds"...). The pid in "started by
//! pid" is the server's own: there is no child process.

pub mod file;
pub mod load;
pub mod sink;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use rdb::{EntryMeta, WriteOptions};

use crate::base::log::{log, LogLevel};
use crate::kernel::config::Settings;
use crate::kernel::persistence::{Running, SaveControl};
use crate::kernel::server::Server;
use file::{Aux, RdbFile};
use sink::{MetaMode, RdbSink};

/// Seconds before a failed background save is retried by the save points
/// (Redis's `CONFIG_BGSAVE_RETRY_DELAY`).
pub const BGSAVE_RETRY_DELAY: u64 = 5;

/// The final save failed: the server must keep running.
#[derive(Debug, PartialEq, Eq)]
pub struct ShutdownRefused;

/// Why BGSAVE could not start.
#[derive(Debug, PartialEq, Eq)]
pub enum BgsaveError {
    AlreadyRunning,
}

fn notice(msg: &str) {
    log(LogLevel::Notice, msg);
}

fn warning(msg: &str) {
    log(LogLevel::Warning, msg);
}

/// The RDB file's path: `dir/dbfilename`.
pub fn rdb_path(s: &Settings) -> PathBuf {
    Path::new(&s.dir).join(&s.dbfilename)
}

/// How RDB files and DUMP payloads are written under these settings.
pub fn write_options(s: &Settings) -> WriteOptions {
    WriteOptions {
        compression: s.rdbcompression,
        checksum: s.rdbchecksum,
        // `DEBUG QUICKLIST-PACKED-THRESHOLD` (1 GiB unless changed).
        packed_threshold: collections::quicklist::packed_threshold(),
    }
}

/// Which eviction metadata Redis writes under the current policy.
pub fn meta_mode(s: &Settings) -> MetaMode {
    match crate::kernel::eviction::store_policy(s.maxmemory_policy).map(|p| p.rank) {
        Some(store::keyspace::evict::Rank::Lru) => MetaMode::Idle,
        Some(store::keyspace::evict::Rank::Lfu) => MetaMode::Freq,
        _ => MetaMode::None,
    }
}

pub fn aux_now() -> Aux {
    Aux {
        ctime: crate::base::clock::unix_time_ms() / 1000,
        used_mem: crate::kernel::memprobe::used_memory(),
        aof_base: false,
        repl: None,
    }
}

/// Starts a background save of the whole dataset to `dir/dbfilename`.
pub fn bgsave(srv: &Server, settings: &Settings) -> Result<(), BgsaveError> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let now = crate::base::clock::unix_time_ms();
    let sink = Arc::new(RdbSink::new(
        write_options(settings),
        meta_mode(settings),
        srv.keyspace.clone(),
        now,
    ));
    let p = &srv.persistence;
    let dirty = srv.stats.dirty.load(Relaxed);
    let control: Arc<dyn SaveControl> = sink.clone();
    if !p.begin(Running {
        control,
        started_ms: now,
        dirty_at_start: dirty,
    }) {
        return Err(BgsaveError::AlreadyRunning);
    }
    p.last_bgsave_try.store(now / 1000, Relaxed);
    p.bgsave_scheduled.store(false, Relaxed);
    // Function libraries go in the file too (FUNCTION2 records), as they
    // are at the cut; on a replica, so is its place in the master's stream.
    let functions = function_codes(srv);
    let (snap, repl) = crate::services::replication::with_save_info(srv, |repl| {
        (srv.keyspace.begin_snapshot(sink.clone(), now), repl)
    });
    let Some(snap) = snap else {
        // An aborted save's walk is still letting go of the partitions.
        p.finish(false, true, now);
        return Err(BgsaveError::AlreadyRunning);
    };
    sink.set_snapshot(snap.clone());
    let job = FileJob {
        dir: PathBuf::from(&settings.dir),
        dbfilename: settings.dbfilename.clone(),
        tmp_name: format!(
            "temp-{}-{}.rdb",
            std::process::id(),
            SEQ.fetch_add(1, Relaxed)
        ),
        opts: write_options(settings),
        fsync: settings.rdb_save_incremental_fsync,
        counts: snap.counts().to_vec(),
        functions,
        aof_base: false,
        repl,
    };
    let persistence = srv.persistence.clone();
    let keyspace = srv.keyspace.clone();
    let snap_for_undo = snap.clone();

    let walk_sink = sink.clone();
    let walk = std::thread::Builder::new()
        .name("petrel-bgsave".into())
        .spawn(move || {
            crate::base::sched::lower_snapshot_thread();
            // A partition stopped by a fault during the walk fails the save
            // (the file would miss its keys), and so does a refusal racing
            // the walk's own check; the writer then ends it with an error.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                keyspace.walk_snapshot(&snap)
            }));
            match r {
                Ok(Ok(())) => {}
                Ok(Err(store::keyspace::snapshot::WalkError::PartitionStopped(p))) => {
                    walk_sink.fail_with(&crate::base::errors::partition_stopped(p))
                }
                Ok(Err(_)) => walk_sink.abort(),
                Err(_) => walk_sink.fail_with("the snapshot walk was refused a partition"),
            }
            walk_sink.close();
        });
    let Ok(walk) = walk else {
        // No thread: undo the cut from here (nothing was written).
        sink.abort();
        let _ = srv.keyspace.walk_snapshot(&snap_for_undo);
        p.finish(false, false, now);
        warning("Can't save in background: could not start a thread");
        return Ok(());
    };
    let writer_sink = sink.clone();
    let writer = std::thread::Builder::new()
        .name("petrel-rdb-writer".into())
        .spawn(move || {
            crate::base::sched::lower_snapshot_thread();
            // A panic while writing fails this save like an I/O error: the
            // walk is released (abort), the temporary file removed, and
            // the save recorded as failed, so BGSAVE is not left "in
            // progress" forever.
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                if crate::base::fault_hooks::take(&crate::base::fault_hooks::BGSAVE_WRITER) {
                    panic!("DEBUG PANIC-THREAD bgsave-writer");
                }
                write_file(&writer_sink, &job, &persistence.file_lock)
            }))
            .unwrap_or_else(|_| {
                writer_sink.abort();
                let _ = std::fs::remove_file(job.dir.join(&job.tmp_name));
                Err(Some(
                    "The background save's writer thread panicked (logged above)".to_string(),
                ))
            });
            // The save ends when the walk has let go of the partitions
            // too (after an abort it is still releasing them): until then
            // a new BGSAVE would be refused, so INFO must not say it ended.
            let _ = walk.join();
            let end = crate::base::clock::unix_time_ms();
            match outcome {
                Ok(size) => {
                    notice("DB saved on disk");
                    notice(&format!(
                        "Fork CoW for RDB: current {} MB, peak {} MB, average {} MB",
                        writer_sink.held_bytes() >> 20,
                        writer_sink.peak_bytes() >> 20,
                        writer_sink.peak_bytes() >> 21
                    ));
                    notice(&format!(
                        "Background saving terminated with success ({} keys, {} bytes, {:.3} seconds)",
                        writer_sink.keys_done(),
                        size,
                        (end - now) as f64 / 1000.0
                    ));
                    persistence.finish(true, false, end);
                }
                Err(None) => {
                    notice("Background saving terminated by signal 10");
                    persistence.finish(false, true, end);
                }
                Err(Some(e)) => {
                    warning(&e);
                    warning("Background saving error");
                    persistence.finish(false, false, end);
                }
            }
        });
    if writer.is_err() {
        sink.abort();
        warning("Can't save in background: could not start a thread");
        // The walk stops on the abort and lets go of the partitions; with
        // no writer thread, record the end here.
        p.finish(false, false, now);
        return Ok(());
    }
    notice(&format!(
        "Background saving started by pid {}",
        std::process::id()
    ));
    Ok(())
}

/// Where and how a background save writes its file (also an AOF
/// rewrite's base, `services::aof::rewrite`).
pub struct FileJob {
    pub dir: PathBuf,
    pub dbfilename: String,
    pub tmp_name: String,
    pub opts: WriteOptions,
    /// `rdb-save-incremental-fsync` (`aof-rewrite-incremental-fsync`).
    pub fsync: bool,
    /// Keys per database at the cut (`RESIZEDB`).
    pub counts: Vec<store::keyspace::snapshot::DbCounts>,
    /// The function libraries' code.
    pub functions: Vec<Vec<u8>>,
    /// The `aof-base` aux field: an AOF base file.
    pub aof_base: bool,
    /// A replica's place in its master's stream at the cut.
    pub repl: Option<file::ReplAux>,
}

/// The code of every function library (FUNCTION DUMP's content).
pub fn function_codes(srv: &Server) -> Vec<Vec<u8>> {
    let engine = srv.scripting.functions.lock();
    engine
        .dump_codes()
        .into_iter()
        .map(|c| c.to_vec())
        .collect()
}

/// The writer thread's work: the file from the sink's pieces. `Err(None)`
/// when aborted, `Err(Some(log text))` on a failure.
pub fn write_file(
    sink: &RdbSink,
    job: &FileJob,
    file_lock: &parking_lot::Mutex<()>,
) -> Result<u64, Option<String>> {
    let counts = &job.counts;
    let created = RdbFile::create(
        &job.dir,
        &job.tmp_name,
        &job.dbfilename,
        job.opts,
        job.fsync,
        Aux {
            aof_base: job.aof_base,
            repl: job.repl.clone(),
            ..aux_now()
        },
    );
    let mut file = match created {
        Ok(f) => f,
        Err(e) => {
            sink.fail_with(&e);
            return Err(Some(e));
        }
    };
    let mut current: Option<u32> = None;
    let mut resized = vec![false; counts.len()];
    let w = file.writer();
    for code in &job.functions {
        if let Err(e) = w.function(code) {
            sink.fail_with("functions");
            return Err(Some(format!("Write error saving DB on disk: {e}")));
        }
    }
    let complete = sink.run_writer(|db, bytes| {
        if current != Some(db) {
            w.select_db(db)?;
            if let Some(r) = resized.get_mut(db as usize).filter(|r| !**r) {
                *r = true;
                let c = counts[db as usize];
                w.resize_db(c.keys, c.expires)?;
            }
            current = Some(db);
        }
        w.raw(bytes)
    });
    if !complete {
        return Err(if sink.was_aborted() {
            None
        } else {
            Some("Write error saving DB on disk".into())
        });
    }
    match file.commit(file_lock, || !sink.was_aborted()) {
        Ok(size) => Ok(size),
        Err(e) if sink.was_aborted() => {
            let _ = e;
            Err(None)
        }
        Err(e) => Err(Some(e)),
    }
}

/// SAVE: writes the dataset from this thread while holding every
/// partition (the server waits, as for Redis's SAVE). The error is the
/// log text. Refused while a background save runs. `repl`: a replica's
/// place in its master's stream, read with the stream held still
/// (`services::replication::with_save_info`) before the partitions were.
pub fn save(srv: &Server, settings: &Settings, repl: Option<file::ReplAux>) -> Result<(), String> {
    // An aborted save may still be letting go: it no longer renames its
    // file (see `file::RdbFile::commit`), so this one can go ahead.
    if srv
        .persistence
        .with_running(|r| !r.control.aborted())
        .unwrap_or(false)
    {
        return Err("Background save already in progress".into());
    }
    let now = crate::base::clock::unix_time_ms();
    // Lock order: the function engine before the partitions (FCALL holds
    // the engine while its script takes every partition).
    let functions = function_codes(srv);
    let mut all = srv.keyspace.lock_all();
    let dirty = srv.stats.dirty.load(Relaxed);
    let dir = PathBuf::from(&settings.dir);
    let tmp = format!("temp-{}.rdb", std::process::id());
    let mut file = RdbFile::create(
        &dir,
        &tmp,
        &settings.dbfilename,
        write_options(settings),
        settings.rdb_save_incremental_fsync,
        Aux { repl, ..aux_now() },
    )?;
    let mode = meta_mode(settings);
    let ks = srv.keyspace.clone();
    let werr = |e: std::io::Error| format!("Write error saving DB on disk: {e}");
    {
        let w = file.writer();
        for code in &functions {
            w.function(code).map_err(werr)?;
        }
        let mut parts: Vec<&mut store::Partition> = all.partitions().collect();
        for db in 0..ks.databases() {
            let (mut keys, mut expires) = (0u64, 0u64);
            for p in parts.iter_mut() {
                if let Some(d) = p.settled_db(db) {
                    keys += d.len() as u64;
                    expires += d.expires() as u64;
                }
            }
            if keys == 0 {
                continue;
            }
            w.select_db(db as u32).map_err(werr)?;
            w.resize_db(keys, expires).map_err(werr)?;
            for p in parts.iter() {
                let Some(d) = p.db(db) else { continue };
                for e in d.table.iter() {
                    if e.is_expired(now) {
                        continue;
                    }
                    let b = e.value().evict_byte();
                    let meta = EntryMeta {
                        expire_ms: e.expire_at().map(|t| t as i64),
                        idle_secs: (mode == MetaMode::Idle).then(|| ks.idle_ms(b, now) / 1000),
                        freq: (mode == MetaMode::Freq).then_some(b),
                    };
                    w.entry(&e.key(), e.value(), meta).map_err(werr)?;
                }
            }
        }
    }
    file.commit(&srv.persistence.file_lock, || true)?;
    drop(all);
    srv.persistence.saved(now / 1000, dirty);
    notice("DB saved on disk");
    Ok(())
}

/// Loads the RDB file at startup, if there is one. Errors are fatal for
/// the caller (the server must not start with part of its data).
pub fn load_at_startup(srv: &Server) -> Result<(), String> {
    let s = srv.settings();
    let removed = file::remove_stale_temp_files(Path::new(&s.dir));
    if removed > 0 {
        notice(&format!(
            "Removed {removed} temporary RDB file(s) left by a server that did not finish saving"
        ));
    }
    match load::load_file(srv, &s, &rdb_path(&s), false, false) {
        Ok(rep) => {
            notice(&format!(
                "Done loading RDB, keys loaded: {}, keys expired: {}.",
                rep.keys_loaded, rep.keys_expired
            ));
            notice(&format!("DB loaded from disk: {:.3} seconds", rep.seconds));
            if let (Some(db), Some(id), Some(off)) =
                (rep.repl_stream_db, rep.repl_id, rep.repl_offset)
            {
                let id = String::from_utf8_lossy(&id);
                crate::services::replication::restore_save_info(srv, db, &id, off);
            }
            Ok(())
        }
        Err(load::LoadError::NotFound) => Ok(()),
        Err(load::LoadError::Failed(e)) => {
            warning(&e);
            Err("Fatal error loading the DB, check server logs. Exiting.".into())
        }
    }
}

/// DEBUG RELOAD: saves (unless `nosave`), empties the keyspace (unless
/// `noflush`) and loads the file back, holding every partition throughout
/// so no client sees the steps. A load that fails leaves the keyspace
/// empty, never half loaded. The error is the client's reply text.
pub fn debug_reload(
    srv: &Server,
    settings: &Settings,
    save_first: bool,
    flush: bool,
    merge: bool,
) -> Result<(), String> {
    let _held = srv.keyspace.hold_all();
    // A running background save would rename an older dataset over the
    // file: stop it (this thread holds every partition, so it cannot wait
    // for it; it no longer renames anything once aborted).
    srv.persistence.abort();
    if save_first {
        if let Err(e) = save(srv, settings, None) {
            warning(&e);
            return Err("ERR".into());
        }
    }
    if flush {
        drop(srv.keyspace.flush_all());
    }
    match load::load_file(srv, settings, &rdb_path(settings), merge, flush) {
        Ok(_) => {
            notice("DB reloaded by DEBUG RELOAD");
            Ok(())
        }
        Err(e) => {
            warning(&format!("Error loading the RDB file for DEBUG RELOAD: {e}"));
            drop(srv.keyspace.flush_all());
            Err("Error trying to load the RDB dump, check server logs.".into())
        }
    }
}

/// FLUSHALL's persistence duties (Redis's `flushAllDataAndResetRDB`): a
/// running background save is stopped (its file would be stale), and with
/// save points the empty dataset is saved at once.
pub fn after_flushall(srv: &Server, settings: &Settings) {
    srv.persistence.abort();
    if !settings.save_points.is_empty() {
        if let Err(e) = save(srv, settings, None) {
            warning(&e);
        }
    }
}

/// What a shutdown does about persistence (SHUTDOWN, SIGTERM, SIGINT):
/// stops a running background save (waiting for it to let go), then saves
/// when `save` is asked, or when save points exist and `nosave` is not.
/// Err when the save failed and `force` is not set (the server must keep
/// running).
///
/// After a successful final save the keyspace stays held by the calling
/// thread for good: no command can change the dataset between the save
/// and the exit (a write acknowledged then would be lost). The caller
/// must hold no partition lock and must be on its way out.
pub fn prepare_shutdown(
    srv: &Server,
    save_flag: Option<bool>,
    force: bool,
) -> Result<(), ShutdownRefused> {
    let settings = srv.settings();
    crate::base::supervisor::notify("STOPPING=1\n");
    if srv.persistence.bgsave_running() {
        warning("There is a child saving an .rdb. Killing it!");
        srv.persistence.abort_and_wait(Duration::from_secs(30));
    }
    // `appendonly` was turned on and its first base is being written: the
    // files on disk do not hold the dataset yet (Redis refuses too).
    if srv.aof.wait_rewrite.load(Relaxed) && srv.aof.rewrite_in_progress.load(Relaxed) {
        if force {
            warning("Writing initial AOF. Exit anyway.");
        } else {
            warning("Writing initial AOF, can't exit.");
            return Err(ShutdownRefused);
        }
    }
    let do_save = match save_flag {
        Some(s) => s,
        None => !settings.save_points.is_empty(),
    };
    // While loading, the file on disk is the dataset: nothing to save.
    if do_save && !srv.persistence.is_loading() {
        notice("Saving the final RDB snapshot before exiting.");
        // A replica's file records its place in the master's stream, so
        // that a restart continues by partial resync: the stream is held
        // still before the partitions are.
        let saved = crate::services::replication::with_save_info(srv, |repl| {
            let held = srv.keyspace.hold_all();
            let r = save(srv, &settings, repl);
            if r.is_ok() {
                std::mem::forget(held);
            }
            r
        });
        if let Err(e) = saved {
            warning(&e);
            if !force {
                warning("Error trying to save the DB, can't exit.");
                return Err(ShutdownRefused);
            }
        }
    }
    Ok(())
}

/// Should write commands (and PING) be refused with MISCONF? Redis's
/// rule: the last background save failed, `stop-writes-on-bgsave-error`
/// is on and save points are set.
pub fn writes_refused(srv: &Server, settings: &Settings) -> bool {
    settings.stop_writes_on_bgsave_error
        && !settings.save_points.is_empty()
        && !srv.persistence.last_bgsave_ok.load(Relaxed)
}

/// The cron's part: a scheduled BGSAVE, or the first save point reached
/// (Redis's `serverCron` rules).
pub fn cron(srv: &Server) {
    let p = &srv.persistence;
    // An AOF rewrite holds the one snapshot: save points wait for it.
    if p.is_loading() || p.bgsave_running() || srv.aof.rewrite_in_progress.load(Relaxed) {
        return;
    }
    let settings = srv.settings();
    let now = crate::base::clock::unix_time_ms() / 1000;
    let retry_ok = now.saturating_sub(p.last_bgsave_try.load(Relaxed)) > BGSAVE_RETRY_DELAY
        || p.last_bgsave_ok.load(Relaxed);
    if p.bgsave_scheduled.load(Relaxed) && retry_ok {
        let _ = bgsave(srv, &settings);
        return;
    }
    let changes = p.changes_since_save(srv.stats.dirty.load(Relaxed));
    let since = now.saturating_sub(p.lastsave.load(Relaxed));
    for sp in &settings.save_points {
        if changes >= sp.changes && since > sp.seconds && retry_ok {
            notice(&format!(
                "{} changes in {} seconds. Saving...",
                sp.changes, sp.seconds
            ));
            let _ = bgsave(srv, &settings);
            break;
        }
    }
}
