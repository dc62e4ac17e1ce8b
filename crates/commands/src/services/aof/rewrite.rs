//! The forkless background rewrite (BGREWRITEAOF and the automatic
//! rewrite while `appendonly` is on, and `CONFIG SET appendonly yes`,
//! with `aof-use-rdb-preamble yes`).
//!
//! Redis forks and the child writes the base from its copy-on-write image.
//! Petrel takes the same cut without a fork, with Persistence I's snapshot
//! (`store::keyspace::snapshot`, as BGSAVE does):
//!
//! 1. Under the journal's order lock held exclusively (no write is
//!    half-way, none starts) everything journaled so far is written to the
//!    current incremental file, the keyspace takes its snapshot cut, and a
//!    new incremental file is opened, named in the manifest (persisted) and
//!    made the one the journal's stream goes to. From here on the old base
//!    and incremental files plus the new one hold the whole dataset: a
//!    crash at any later point loses nothing (Redis 7.0's order).
//! 2. The lock is released; clients go on. A walk thread serialises the
//!    buckets the writes have not, and a writer thread puts the pieces in
//!    a temporary file in the AOF directory (`snapshot::write_file`, the
//!    RDB file with `aof-base` 1), which is fsynced and renamed to the new
//!    base's name.
//!
//!    Turning the AOF on ([`start_enabling`]) differs in step 1: the
//!    journal was off, so commands run without taking the order lock; the
//!    cut is taken while no command of another worker is half-way (the
//!    scripting gates, `Scripting::try_begin_server`), and the journal is
//!    started at the cut into `temp-<appendfilename>.incr`, which no
//!    manifest names yet. Every write is thus in the base (before the cut)
//!    or in that file (after it), exactly once.
//! 3. Under the files lock the manifest is made to name the new base and
//!    the incremental files from step 1 on; the older base and incremental
//!    files become history and are deleted (unless `aof-disable-auto-gc`).
//!
//! Memory: the snapshot copies nothing; the queue between the encoders and
//! the writer is bounded (`snapshot::sink::MAX_QUEUED`).
//!
//! Invariants: at most one snapshot exists (a BGSAVE and a rewrite never
//! overlap: whichever comes second is scheduled, as Redis does with its
//! one child); `Aof::rewrite_in_progress` is set by the caller before
//! [`start`] and cleared by [`start`] on failure or by the writer thread
//! when it ends.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crate::kernel::aof::{Aof, FileKind, Files, ManifestFile};
use crate::kernel::config::Settings;
use crate::kernel::persistence::SaveControl;
use crate::kernel::server::Server;
use crate::services::snapshot::{self, sink::RdbSink};

use super::{file_size, manifest, open_append, write_out};

/// Starts the background rewrite (module doc). The caller set
/// `rewrite_in_progress` and checked that the AOF is on; on Err it is
/// cleared here.
pub fn start(srv: &Server, s: &Settings) -> Result<(), String> {
    let r = start_inner(srv, s, false);
    if r.is_err() {
        srv.aof.rewrite_in_progress.store(false, Relaxed);
    }
    r
}

/// Turns the AOF on at runtime (`CONFIG SET appendonly yes`) with the
/// first base written in the background, as Redis 7.0 does: step 1 also
/// starts the journal, into a temporary incremental file that step 3
/// renames to the name the new manifest gives it. Until then the
/// manifest on disk is the old one (a crash loses the half-made AOF, as
/// Redis's). The caller set `rewrite_in_progress` and `wait_rewrite`; on
/// Err `rewrite_in_progress` is cleared here.
pub fn start_enabling(srv: &Server, s: &Settings) -> Result<(), String> {
    let r = start_inner(srv, s, true);
    if r.is_err() {
        srv.aof.rewrite_in_progress.store(false, Relaxed);
    }
    r
}

/// What step 1 prepared for the walk and the writer.
struct Prepared {
    snap: Arc<store::keyspace::snapshot::Snapshot>,
    job: snapshot::FileJob,
    base_seq: u64,
    incr_seq: u64,
}

static SEQ: AtomicU64 = AtomicU64::new(0);

fn start_inner(srv: &Server, s: &Settings, enabling: bool) -> Result<(), String> {
    let now = crate::base::clock::unix_time_ms();
    srv.aof.rewrite_started_ms.store(now, Relaxed);
    let sink = Arc::new(RdbSink::new(
        snapshot::write_options(s),
        snapshot::meta_mode(s),
        srv.keyspace.clone(),
        now,
    ));
    let prep = if enabling {
        cut_enabling(srv, s, &sink, now)?
    } else {
        cut_running(srv, s, &sink, now)?
    };
    let Prepared {
        snap,
        job,
        base_seq,
        incr_seq,
    } = prep;
    let undo = |sink: &RdbSink| {
        // Let the partitions go (nothing was written).
        sink.abort();
        let _ = srv.keyspace.walk_snapshot(&snap);
    };

    // Step 2: the walk and the writer.
    let keyspace = srv.keyspace.clone();
    let walk_sink = sink.clone();
    let walk_snap = snap.clone();
    let walk = std::thread::Builder::new()
        .name("petrel-aofrw".into())
        .spawn(move || {
            crate::base::sched::lower_snapshot_thread();
            if keyspace.walk_snapshot(&walk_snap).is_err() {
                walk_sink.abort();
            }
            walk_sink.close();
        });
    if walk.is_err() {
        undo(&sink);
        if enabling {
            super::stop_files(srv);
        }
        return Err("could not start a thread".into());
    }
    srv.aof.rewrites.fetch_add(1, Relaxed);
    let aof = srv.aof.clone();
    let gc = !s.aof.disable_auto_gc;
    let writer_sink = sink.clone();
    let writer = std::thread::Builder::new()
        .name("petrel-aofrw-writer".into())
        .spawn(move || {
            crate::base::sched::lower_snapshot_thread();
            let lock = parking_lot::Mutex::new(());
            let outcome = snapshot::write_file(&writer_sink, &job, &lock);
            let res = match outcome {
                Ok(size) => install_base(
                    &aof,
                    &job.dir,
                    &job.dbfilename,
                    base_seq,
                    incr_seq,
                    size,
                    gc,
                ),
                Err(None) => Err("the rewrite was stopped".to_string()),
                Err(Some(e)) => Err(e),
            };
            aof.last_cow.store(writer_sink.peak_bytes(), Relaxed);
            if res.is_err() {
                let _ = std::fs::remove_file(job.dir.join(&job.tmp_name));
            }
            if enabling {
                if res.is_ok() {
                    aof.wait_rewrite.store(false, Relaxed);
                } else if aof.wait_rewrite.load(Relaxed) {
                    // Redis retries until the AOF is on (or turned off):
                    // the cron starts over from a new cut.
                    aof.rewrite_scheduled.store(true, Relaxed);
                }
            }
            super::rewrite_done(&aof, res);
        });
    if writer.is_err() {
        sink.abort();
        return Err("could not start a thread".into());
    }
    srv.aof.running.lock().0 = Some(sink as Arc<dyn SaveControl>);
    crate::base::log::notice(&format!(
        "Background append only file rewriting started by pid {}",
        std::process::id()
    ));
    Ok(())
}

/// The job writing base `base_seq` of `prefix` into `dir`.
fn file_job(
    s: &Settings,
    dir: &std::path::Path,
    prefix: &str,
    base_seq: u64,
    snap: &store::keyspace::snapshot::Snapshot,
    functions: Vec<Vec<u8>>,
) -> snapshot::FileJob {
    snapshot::FileJob {
        dir: dir.to_path_buf(),
        dbfilename: manifest::base_name(prefix, base_seq, true),
        tmp_name: format!(
            "temp-rewriteaof-bg-{}-{}.aof",
            std::process::id(),
            SEQ.fetch_add(1, Relaxed)
        ),
        opts: snapshot::write_options(s),
        fsync: s.aof.rewrite_incremental_fsync,
        counts: snap.counts().to_vec(),
        functions,
        aof_base: true,
        // As Redis: an AOF base records no replication place.
        repl: None,
    }
}

/// Step 1 of a rewrite of the running AOF, under the order lock.
fn cut_running(
    srv: &Server,
    s: &Settings,
    sink: &Arc<RdbSink>,
    now: u64,
) -> Result<Prepared, String> {
    let order = srv.journal.order.write();
    write_out(srv, true);
    let functions = snapshot::function_codes(srv);
    let mut guard = srv.aof.files.lock();
    let Some(f) = guard.as_mut() else {
        return Err("the append only file is off".into());
    };
    let Some(snap) = srv.keyspace.begin_snapshot(sink.clone(), now) else {
        return Err(SNAPSHOT_BUSY.into());
    };
    sink.set_snapshot(snap.clone());
    let undo = |sink: &RdbSink| {
        // Let the partitions go (nothing was written).
        sink.abort();
        let _ = srv.keyspace.walk_snapshot(&snap);
    };
    let incr_seq = f.manifest.incr_seq() + 1;
    let incr_name = manifest::incr_name(&f.prefix, incr_seq);
    let incr = match open_append(&f.dir.join(&incr_name)) {
        Ok(x) => x,
        Err(e) => {
            undo(sink);
            return Err(format!("Can't open the append-only file {incr_name}: {e}"));
        }
    };
    let mut m = f.manifest.clone();
    m.incrs.push(ManifestFile {
        name: incr_name,
        seq: incr_seq,
        kind: FileKind::Incr,
    });
    if let Err(e) = manifest::persist(&f.dir, &f.prefix, &m) {
        undo(sink);
        let _ = std::fs::remove_file(f.dir.join(&m.incrs.last().expect("pushed").name));
        return Err(format!("Can't persist the AOF manifest: {e}"));
    }
    f.manifest = m;
    f.incr = incr;
    let base_seq = f.manifest.base_seq() + 1;
    let job = file_job(s, &f.dir, &f.prefix, base_seq, &snap, functions);
    drop(guard);
    {
        let mut out = srv.journal.out.lock();
        out.db = None;
    }
    drop(order);
    Ok(Prepared {
        snap,
        job,
        base_seq,
        incr_seq,
    })
}

/// Why turning the AOF on could not start: a script holds the workers
/// (the caller schedules it for the cron).
pub const SCRIPT_RUNNING: &str = "a script is running";
/// The keyspace's snapshot is taken (a BGSAVE, or the walk of a rewrite
/// that was stopped and has not let the partitions go yet).
pub const SNAPSHOT_BUSY: &str = "a background save is running";

/// How many times turning the AOF on tries to claim the workers while a
/// script runs (yielding between tries) before giving up for this time.
const CLAIM_TRIES: u32 = 1000;

/// Step 1 of turning the AOF on: with no command of any other worker
/// half-way (`Scripting::try_begin_server`: one that started with the
/// journal off would journal nothing) and under the order lock, the
/// snapshot cut is taken and the journal starts into a temporary
/// incremental file: every write is then either in the base or in that
/// file, never both.
fn cut_enabling(
    srv: &Server,
    s: &Settings,
    sink: &Arc<RdbSink>,
    now: u64,
) -> Result<Prepared, String> {
    with_workers_claimed(srv, now, || cut_enabling_claimed(srv, s, sink, now))
}

/// Runs `f` while no command of another worker is half-way and none
/// starts (`Scripting::try_begin_server`): what turning the journal on
/// needs, since a command that started with it off journals nothing.
/// Err([`SCRIPT_RUNNING`]) when a script holds the workers.
pub fn with_workers_claimed<R>(
    srv: &Server,
    now: u64,
    f: impl FnOnce() -> Result<R, String>,
) -> Result<R, String> {
    let mut tries = 0;
    while !srv.scripting.try_begin_server(now) {
        tries += 1;
        if tries >= CLAIM_TRIES {
            return Err(SCRIPT_RUNNING.into());
        }
        std::thread::yield_now();
    }
    let r = f();
    srv.scripting.end();
    r
}

fn cut_enabling_claimed(
    srv: &Server,
    s: &Settings,
    sink: &Arc<RdbSink>,
    now: u64,
) -> Result<Prepared, String> {
    let order = srv.journal.order.write();
    if srv.aof.files.lock().is_some() {
        return Err("the append only file is already on".into());
    }
    let functions = snapshot::function_codes(srv);
    let dir = super::aof_dir(s);
    let prefix = s.aof.filename.clone();
    std::fs::create_dir_all(&dir).map_err(|e| format!("Can't create the AOF directory: {e}"))?;
    super::remove_stale_rewrite_files(&dir);
    let mut m = super::read_manifest(&dir, &prefix)?.unwrap_or_default();
    let Some(snap) = srv.keyspace.begin_snapshot(sink.clone(), now) else {
        return Err(SNAPSHOT_BUSY.into());
    };
    sink.set_snapshot(snap.clone());
    let temp = temp_incr_name(&prefix);
    let incr = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .open(dir.join(&temp));
    let incr = match incr {
        Ok(f) => f,
        Err(e) => {
            sink.abort();
            let _ = srv.keyspace.walk_snapshot(&snap);
            return Err(format!("Can't open the append-only file {temp}: {e}"));
        }
    };
    let incr_seq = m.incr_seq() + 1;
    m.incrs.push(ManifestFile {
        name: manifest::incr_name(&prefix, incr_seq),
        seq: incr_seq,
        kind: FileKind::Incr,
    });
    let base_seq = m.base_seq() + 1;
    let job = file_job(s, &dir, &prefix, base_seq, &snap, functions);
    super::install(
        srv,
        Files {
            dir,
            prefix,
            manifest: m,
            incr,
            retry: Vec::new(),
            spare: Vec::new(),
            base_size: 0,
            incr_size: 0,
            temp_incr: Some(temp),
        },
    );
    drop(order);
    Ok(Prepared {
        snap,
        job,
        base_seq,
        incr_seq,
    })
}

/// The temporary name of the incremental file while the AOF is turned on
/// (Redis's `temp-<appendfilename>.incr`).
pub fn temp_incr_name(prefix: &str) -> String {
    format!("temp-{prefix}.incr")
}

/// Step 3: the new base replaces the old one in the manifest.
fn install_base(
    aof: &Aof,
    dir: &std::path::Path,
    base_name: &str,
    base_seq: u64,
    incr_seq: u64,
    size: u64,
    gc: bool,
) -> Result<(), String> {
    let mut guard = aof.files.lock();
    let Some(f) = guard.as_mut().filter(|f| f.dir == dir) else {
        // The AOF was turned off meanwhile: the base is of no use.
        let _ = std::fs::remove_file(dir.join(base_name));
        return Err("the append only file was turned off".into());
    };
    if let Some(temp) = f.temp_incr.take() {
        // The AOF is being turned on: its incremental file gets its name.
        let name = &f
            .manifest
            .incrs
            .iter()
            .find(|i| i.seq == incr_seq)
            .expect("the incremental file of the cut")
            .name;
        if let Err(e) = std::fs::rename(dir.join(&temp), dir.join(name)) {
            f.temp_incr = Some(temp);
            let _ = std::fs::remove_file(dir.join(base_name));
            return Err(format!("Can't rename the temporary incremental AOF: {e}"));
        }
    }
    let mut m = f.manifest.clone();
    if let Some(b) = m.base.take() {
        m.history.push(ManifestFile {
            kind: FileKind::History,
            ..b
        });
    }
    let (old, keep): (Vec<_>, Vec<_>) = m.incrs.drain(..).partition(|i| i.seq < incr_seq);
    m.history.extend(old.into_iter().map(|i| ManifestFile {
        kind: FileKind::History,
        ..i
    }));
    m.incrs = keep;
    m.base = Some(ManifestFile {
        name: base_name.to_string(),
        seq: base_seq,
        kind: FileKind::Base,
    });
    manifest::persist(dir, &f.prefix, &m)
        .map_err(|e| format!("Can't persist the AOF manifest: {e}"))?;
    if gc {
        super::delete_history(dir, &f.prefix, &mut m);
    }
    f.manifest = m;
    f.base_size = size;
    f.incr_size = f
        .manifest
        .incrs
        .iter()
        .map(|i| file_size(&dir.join(&i.name)))
        .sum();
    aof.rewrite_base_size
        .store(f.base_size + f.incr_size, Relaxed);
    Ok(())
}
