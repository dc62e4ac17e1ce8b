//! The append-only file, laid out as Redis 7.0 lays it out: a directory
//! (`appenddirname` inside `dir`) holding a manifest, one base file (an
//! RDB image with `aof-use-rdb-preamble yes`, else commands) and numbered
//! incremental files that receive the write journal's stream.
//!
//! # Life cycle
//! * Startup with `appendonly yes` ([`load_at_startup`], after the
//!   listeners opened, clients answered -LOADING): the directory is
//!   loaded (a 6.x single `appendonly.aof` in `dir` is upgraded into it
//!   first), then the last incremental file is opened for appending (a
//!   fresh directory gets a base of the current data and a first
//!   incremental file). `dump.rdb` is not read, as in Redis.
//! * `CONFIG SET appendonly yes` ([`apply_settings`]): replies at once, as
//!   Redis 7.0 does; a background rewrite (`rewrite::start_enabling`)
//!   takes the snapshot cut and starts the journal into a temporary
//!   incremental file at the same instant, writes the base from the cut
//!   while clients are served, then renames the file and persists a
//!   manifest naming both (`Aof::wait_rewrite` until then; a failed try
//!   is retried by the cron from a new cut). Scheduled while a BGSAVE runs
//!   or inside a transaction. `no` closes the files and stops the journal.
//! * A rewrite ([`rewrite`], BGREWRITEAOF, or automatic past
//!   `auto-aof-rewrite-percentage`): under the journal's order lock (held
//!   exclusively, so no write is half-way) a new incremental file is
//!   opened and named in the manifest; the base is written from the same
//!   cut; then a new manifest names the new base and the incremental
//!   files from that one on, and the older files are deleted. While the
//!   AOF is on with an RDB preamble this is forkless and in the
//!   background ([`rewrite::start`], on the keyspace snapshot BGSAVE
//!   uses); a command-format base (`aof-use-rdb-preamble no`, also when
//!   `CONFIG SET appendonly yes` turns the AOF on), the first base of a
//!   fresh directory at startup and BGREWRITEAOF with the AOF off are
//!   written while the server waits (`rewrite_locked`).
//!   A rewrite asked for while a BGSAVE runs (or inside a transaction) is
//!   scheduled and started by the cron, as Redis does.
//!
//! # Writing and fsync
//! The journal's stream is written to the open incremental file before
//! any reply leaves a worker ([`before_reply`], called by each worker
//! once per pass before it writes to sockets), one `write` per pass at
//! most, so a `kill -9` loses nothing that any client saw acknowledged:
//! * `always`: the same call fdatasyncs before returning. Workers share
//!   it (group commit): one waits on the files lock while another syncs
//!   and then finds its bytes already synced. So every reply, and every
//!   reply that observed a write, leaves only after that write is on disk.
//! * `everysec`: the cron thread fdatasyncs once a second outside the
//!   files lock ([`cron_sync`]; an OS crash loses about the last two
//!   seconds, a killed process nothing that was acknowledged).
//! * `no`: the OS decides.
//!
//! A failed write keeps the unwritten bytes for the next try and makes
//! write commands fail with `MISCONF` until a write succeeds, as Redis.

pub mod base;
pub mod load;
pub mod manifest;
pub mod rewrite;
pub mod switch;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;

use crate::kernel::aof::{FileKind, Files, Fsync, Manifest, ManifestFile};
use crate::kernel::config::Settings;
use crate::kernel::server::Server;

pub(crate) use switch::stop_files;
pub use switch::{apply_settings, stop};

/// `dir/appenddirname`.
pub fn aof_dir(s: &Settings) -> PathBuf {
    let dir = if s.dir.is_empty() {
        "."
    } else {
        s.dir.as_str()
    };
    Path::new(dir).join(&s.aof.dirname)
}

fn read_manifest(dir: &Path, prefix: &str) -> Result<Option<Manifest>, String> {
    let path = dir.join(manifest::manifest_name(prefix));
    match std::fs::read(&path) {
        Ok(text) => manifest::parse(&text).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!(
            "Fail to open AOF manifest file {}: {e}",
            path.display()
        )),
    }
}

/// Loads the AOF at startup when `appendonly` is on (see the module doc),
/// then opens it for appending and starts the journal. Returns what was
/// loaded, or None when `appendonly` is off. Clients are served meanwhile
/// (the caller set `persistence.loading`: they get -LOADING, INFO shows
/// the progress, the cron leaves the keyspace alone); a SHUTDOWN asked
/// meanwhile stops the load with an error.
pub fn load_at_startup(srv: &Server, s: &Settings) -> Result<Option<load::Report>, String> {
    srv.aof.set_policy(s.aof.fsync);
    srv.journal
        .timestamps
        .store(s.aof.timestamp_enabled, Relaxed);
    if !s.aof.enabled {
        return Ok(None);
    }
    let dir = aof_dir(s);
    let prefix = &s.aof.filename;
    let mut report = load::Report::default();
    srv.aof.loading.store(true, Relaxed);
    let res = (|| -> Result<(), String> {
        if let Some(m) = read_manifest(&dir, prefix)? {
            report = load::load_manifest(srv, &dir, &m, s.aof.load_truncated).map_err(|e| e.0)?;
        } else {
            let old = Path::new(if s.dir.is_empty() { "." } else { &s.dir }).join(prefix);
            if old.is_file() {
                report = load::load_single(srv, &old, s.aof.load_truncated).map_err(|e| e.0)?;
                upgrade(&dir, prefix, &old)
                    .map_err(|e| format!("Failed to upgrade the AOF: {e}"))?;
            }
        }
        Ok(())
    })();
    srv.aof.loading.store(false, Relaxed);
    res?;
    open_on_start(srv, s)?;
    Ok(Some(report))
}

/// Is there an AOF to load (a manifest in the AOF directory, or a 6.x
/// single file in `dir`)? Without one, startup only writes a first base
/// of the (empty) dataset.
pub fn exists_on_disk(s: &Settings) -> bool {
    let dir = aof_dir(s);
    let old = Path::new(if s.dir.is_empty() { "." } else { &s.dir }).join(&s.aof.filename);
    dir.join(manifest::manifest_name(&s.aof.filename)).exists() || old.is_file()
}

/// Moves a 6.x `appendonly.aof` into the directory as its base, as Redis
/// 7.0 does (the name is kept; the manifest names it).
fn upgrade(dir: &Path, prefix: &str, old: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::rename(old, dir.join(prefix))?;
    let m = Manifest {
        base: Some(ManifestFile {
            name: prefix.to_string(),
            seq: 1,
            kind: FileKind::Base,
        }),
        incrs: vec![],
        history: vec![],
    };
    manifest::persist(dir, prefix, &m)?;
    crate::base::log::notice("Successfully migrated an old-style AOF into the AOF directory");
    Ok(())
}

pub(crate) fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

pub(crate) fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// After loading: appends to the directory's last incremental file (a
/// new one when it has none), or, for a fresh directory, writes a base of
/// the current data first.
fn open_on_start(srv: &Server, s: &Settings) -> Result<(), String> {
    let dir = aof_dir(s);
    let prefix = s.aof.filename.clone();
    remove_stale_rewrite_files(&dir);
    match read_manifest(&dir, &prefix)? {
        // Redis writes this first base synchronously; it is not counted
        // as a background rewrite.
        None => rewrite_inner(srv, s, true, false),
        Some(mut m) => {
            let io = |e: std::io::Error| format!("Can't open the append-only file: {e}");
            if m.incrs.is_empty() {
                let seq = m.incr_seq().max(m.base_seq()).max(1);
                let seq = if m.incrs.is_empty() && m.base.is_some() {
                    seq
                } else {
                    seq + 1
                };
                m.incrs.push(ManifestFile {
                    name: manifest::incr_name(&prefix, seq),
                    seq,
                    kind: FileKind::Incr,
                });
                manifest::persist(&dir, &prefix, &m).map_err(io)?;
            }
            let last = m.incrs.last().expect("an incremental file").name.clone();
            let incr = open_append(&dir.join(&last)).map_err(io)?;
            let base_size = m.base.as_ref().map_or(0, |b| file_size(&dir.join(&b.name)));
            let incr_size = m.incrs.iter().map(|f| file_size(&dir.join(&f.name))).sum();
            delete_history(&dir, &prefix, &mut m);
            install(
                srv,
                Files {
                    dir,
                    prefix,
                    manifest: m,
                    incr,
                    retry: Vec::new(),
                    spare: Vec::new(),
                    base_size,
                    incr_size,
                    temp_incr: None,
                },
            );
            Ok(())
        }
    }
}

/// Removes the temporary bases of rewrites a killed server left in the
/// directory (`temp-rewriteaof-bg-<pid>-<n>.aof`); no manifest names them.
fn remove_stale_rewrite_files(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let name = e.file_name();
        let name = name.to_string_lossy();
        let rewrite_base = name.starts_with("temp-rewriteaof-") && name.ends_with(".aof");
        // The incremental file of an AOF that was being turned on.
        let enabling_incr = name.starts_with("temp-") && name.ends_with(".incr");
        if rewrite_base || enabling_incr {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Makes `files` the open AOF and starts the journal (the caller holds
/// the journal's order lock, or runs before any client).
fn install(srv: &Server, files: Files) {
    srv.aof
        .rewrite_base_size
        .store(files.base_size + files.incr_size, Relaxed);
    *srv.aof.files.lock() = Some(files);
    let appended = srv.journal.appended();
    srv.aof.written.store(appended, Relaxed);
    srv.aof.synced.store(appended, Relaxed);
    {
        let mut out = srv.journal.out.lock();
        out.buf.clear();
        out.db = None;
    }
    srv.keyspace.set_journal_expired(true);
    srv.journal.set_enabled(true);
}

/// Removes the history files a manifest lists, then persists it without
/// them (failures are logged: the files are only garbage).
pub(crate) fn delete_history(dir: &Path, prefix: &str, m: &mut Manifest) {
    if m.history.is_empty() {
        return;
    }
    for h in std::mem::take(&mut m.history) {
        if let Err(e) = std::fs::remove_file(dir.join(&h.name)) {
            if e.kind() != std::io::ErrorKind::NotFound {
                crate::base::log::warning(&format!(
                    "Failed to remove AOF history file {}: {e}",
                    h.name
                ));
            }
        }
    }
    if let Err(e) = manifest::persist(dir, prefix, m) {
        crate::base::log::warning(&format!("Failed to persist the AOF manifest: {e}"));
    }
}

/// What BGREWRITEAOF did.
#[derive(Debug, PartialEq, Eq)]
pub enum Rewrite {
    Started,
    Scheduled,
}

/// BGREWRITEAOF: rewrites the AOF from the current data (module doc).
/// `in_exec`: called from a transaction (the cut would deadlock on its
/// locks: scheduled).
pub fn rewrite(srv: &Server, in_exec: bool) -> Result<Rewrite, String> {
    if srv.aof.rewrite_in_progress.load(Relaxed) {
        return Err("Background append only file rewriting already in progress".into());
    }
    // While the AOF waits for its first base, that rewrite is the one.
    let waiting = srv.aof.wait_rewrite.load(Relaxed);
    if in_exec || srv.persistence.bgsave_running() || waiting {
        srv.aof.rewrite_scheduled.store(true, Relaxed);
        return Ok(Rewrite::Scheduled);
    }
    let s = srv.settings();
    let background = s.aof.use_rdb_preamble && srv.aof.files.lock().is_some();
    if !background {
        return rewrite_inner(srv, &s, false, true).map(|()| Rewrite::Started);
    }
    if srv.aof.rewrite_in_progress.swap(true, Relaxed) {
        return Err("Background append only file rewriting already in progress".into());
    }
    srv.aof.rewrite_scheduled.store(false, Relaxed);
    match rewrite::start(srv, &s) {
        Ok(()) => Ok(Rewrite::Started),
        Err(e) if srv.persistence.bgsave_running() => {
            let _ = e;
            srv.aof.rewrite_scheduled.store(true, Relaxed);
            Ok(Rewrite::Scheduled)
        }
        Err(e) => {
            rewrite_done(&srv.aof, Err(e.clone()));
            Err(e)
        }
    }
}

/// A rewrite ended: INFO's figures and Redis's log lines.
pub fn rewrite_done(aof: &crate::kernel::aof::Aof, res: Result<(), String>) {
    aof.running.lock().0 = None;
    let started = aof.rewrite_started_ms.load(Relaxed);
    let secs = crate::base::clock::unix_time_ms().saturating_sub(started) / 1000;
    aof.last_rewrite_secs.store(secs as i64, Relaxed);
    aof.rewrites_ended.fetch_add(1, Relaxed);
    match &res {
        Ok(()) => {
            aof.rewrite_failures.store(0, Relaxed);
            aof.last_rewrite_ok.store(true, Relaxed);
            crate::base::log::notice("Background AOF rewrite finished successfully");
        }
        Err(e) => {
            aof.rewrite_failures.fetch_add(1, Relaxed);
            aof.last_rewrite_ok.store(false, Relaxed);
            crate::base::log::warning(&format!("Background AOF rewrite failed: {e}"));
        }
    }
    aof.rewrite_in_progress.store(false, Relaxed);
}

/// A rewrite while the server waits; `starting` turns the AOF on with it,
/// `counted` makes it count in INFO (`aof_rewrites`...) as Redis's
/// background rewrites do.
fn rewrite_inner(srv: &Server, s: &Settings, starting: bool, counted: bool) -> Result<(), String> {
    if srv.aof.rewrite_in_progress.swap(true, Relaxed) {
        return Err("Background append only file rewriting already in progress".into());
    }
    srv.aof
        .rewrite_started_ms
        .store(crate::base::clock::unix_time_ms(), Relaxed);
    if counted {
        srv.aof.rewrites.fetch_add(1, Relaxed);
    }
    let res = rewrite_locked(srv, s, starting);
    if !counted {
        srv.aof.rewrite_in_progress.store(false, Relaxed);
        return res;
    }
    rewrite_done(&srv.aof, res.clone());
    res
}

fn rewrite_locked(srv: &Server, s: &Settings, starting: bool) -> Result<(), String> {
    // The cut: no write is half-way, none starts until the base is written.
    let _order = srv.journal.order.write();
    // Lock order: journal, function engine, partitions (as FCALL takes
    // them); no write runs under the order lock, so the code is the cut's.
    let functions = crate::services::snapshot::function_codes(srv);
    let _all = srv.keyspace.hold_all();
    let io = |what: &str, e: std::io::Error| format!("{what}: {e}");
    // Everything journaled so far goes to the current files first.
    write_out(srv, true);
    let mut guard = srv.aof.files.lock();
    let (dir, prefix, mut m) = match guard.as_ref() {
        Some(f) => (f.dir.clone(), f.prefix.clone(), f.manifest.clone()),
        None => {
            let dir = aof_dir(s);
            std::fs::create_dir_all(&dir).map_err(|e| io("Can't create the AOF directory", e))?;
            let m = read_manifest(&dir, &s.aof.filename)?.unwrap_or_default();
            (dir, s.aof.filename.clone(), m)
        }
    };
    // A new incremental file receives everything after the cut.
    let incr_seq = m.incr_seq() + 1;
    let incr_name = manifest::incr_name(&prefix, incr_seq);
    let incr =
        open_append(&dir.join(&incr_name)).map_err(|e| io("Can't open the append-only file", e))?;
    let new_incr = ManifestFile {
        name: incr_name,
        seq: incr_seq,
        kind: FileKind::Incr,
    };
    // The base.
    let rdb = s.aof.use_rdb_preamble;
    let base_seq = m.base_seq() + 1;
    let base_name = manifest::base_name(&prefix, base_seq, rdb);
    let tmp = dir.join(format!("temp-rewriteaof-bg-{}.aof", std::process::id()));
    let now = crate::base::clock::unix_time_ms();
    let base_size = match base::write(srv, &tmp, rdb, now, &functions) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            let _ = std::fs::remove_file(dir.join(&new_incr.name));
            return Err(io("Error writing the AOF base", e));
        }
    };
    std::fs::rename(&tmp, dir.join(&base_name)).map_err(|e| io("Can't rename the AOF base", e))?;
    // The new manifest: new base, new incremental file; the rest history.
    let mut history: Vec<ManifestFile> = m.history.drain(..).collect();
    if let Some(b) = m.base.take() {
        history.push(ManifestFile {
            kind: FileKind::History,
            ..b
        });
    }
    history.extend(m.incrs.drain(..).map(|f| ManifestFile {
        kind: FileKind::History,
        ..f
    }));
    let mut new = Manifest {
        base: Some(ManifestFile {
            name: base_name,
            seq: base_seq,
            kind: FileKind::Base,
        }),
        incrs: vec![new_incr],
        history,
    };
    manifest::persist(&dir, &prefix, &new).map_err(|e| io("Can't persist the AOF manifest", e))?;
    if !s.aof.disable_auto_gc {
        delete_history(&dir, &prefix, &mut new);
    }
    let files = Files {
        dir,
        prefix,
        manifest: new,
        incr,
        retry: Vec::new(),
        spare: Vec::new(),
        base_size,
        incr_size: 0,
        temp_incr: None,
    };
    if starting {
        drop(guard);
        install(srv, files);
    } else if guard.is_none() {
        // BGREWRITEAOF with `appendonly no`: the files are written, the
        // journal stays off.
        drop(guard);
        drop(files);
    } else {
        *guard = Some(files);
        drop(guard);
        let mut out = srv.journal.out.lock();
        out.db = None;
        srv.aof.rewrite_base_size.store(base_size, Relaxed);
    }
    Ok(())
}

/// The largest buffer `write_out` keeps for reuse.
const SPARE_KEEP: usize = 1 << 20;

/// Writes the journal's pending stream to the open incremental file, and
/// fdatasyncs it when `sync` (see the module doc).
pub fn write_out(srv: &Server, sync: bool) {
    let mut guard = srv.aof.files.lock();
    let Some(f) = guard.as_mut() else {
        return;
    };
    // The pending stream is swapped out for the spare buffer (cleared),
    // not copied: the journal keeps appending into reused capacity.
    let (bytes, target) = {
        let mut spare = std::mem::take(&mut f.spare);
        spare.clear();
        let mut out = srv.journal.out.lock();
        std::mem::swap(&mut out.buf, &mut spare);
        (spare, srv.journal.appended())
    };
    let mut ok = true;
    if !f.retry.is_empty() || !bytes.is_empty() {
        let res = if f.retry.is_empty() {
            f.incr.write_all(&bytes)
        } else {
            f.retry.extend_from_slice(&bytes);
            f.incr.write_all(&f.retry)
        };
        let len = if f.retry.is_empty() {
            bytes.len()
        } else {
            f.retry.len()
        };
        match res {
            Ok(()) => {
                f.incr_size += len as u64;
                f.retry.clear();
                srv.aof.written.store(target, Relaxed);
                if srv.aof.write_failed.swap(false, Relaxed) {
                    crate::base::log::warning(
                        "AOF write error looks solved, Redis can write again.",
                    );
                }
            }
            Err(e) => {
                ok = false;
                if f.retry.is_empty() {
                    f.retry.extend_from_slice(&bytes);
                }
                *srv.aof.last_write_error.lock() = e.to_string();
                if !srv.aof.write_failed.swap(true, Relaxed) {
                    crate::base::log::warning(&format!("Error writing to the AOF file: {e}"));
                }
            }
        }
    }
    // A burst's large buffer is not kept for ever.
    if bytes.capacity() <= SPARE_KEEP {
        f.spare = bytes;
    }
    if sync && ok && srv.aof.synced.load(Relaxed) < srv.aof.written.load(Relaxed) {
        if let Err(e) = f.incr.sync_data() {
            *srv.aof.last_write_error.lock() = e.to_string();
            srv.aof.write_failed.store(true, Relaxed);
            return;
        }
        srv.aof.synced.store(srv.aof.written.load(Relaxed), Relaxed);
    }
}

/// Called by every worker before it writes replies (module doc).
pub fn before_reply(srv: &Server) {
    if !srv.journal.enabled() {
        return;
    }
    let appended = srv.journal.appended();
    let always = srv.aof.policy() == Fsync::Always;
    if srv.aof.written.load(Relaxed) >= appended
        && (!always || srv.aof.synced.load(Relaxed) >= appended)
    {
        return;
    }
    if always {
        let s = srv.settings();
        let hold = s.aof.no_fsync_on_rewrite && srv.aof.rewrite_in_progress.load(Relaxed);
        // Group commit: whoever holds the files lock syncs for everyone
        // queued behind it.
        write_out(srv, !hold);
    } else {
        write_out(srv, false);
    }
}

/// Cron step (every tick): writes stream bytes nobody wrote yet (an idle
/// server whose cron expired keys), and under `everysec` fdatasyncs once a
/// second outside the files lock.
pub fn cron_sync(srv: &Server) {
    if !srv.journal.enabled() {
        return;
    }
    if srv.journal.appended() > srv.aof.written.load(Relaxed) {
        write_out(srv, false);
    }
    if srv.aof.policy() != Fsync::Everysec {
        return;
    }
    let now = crate::base::clock::unix_time_ms();
    if now < srv.aof.last_fsync_ms.load(Relaxed) + 1000 {
        return;
    }
    let s = srv.settings();
    if s.aof.no_fsync_on_rewrite && srv.aof.rewrite_in_progress.load(Relaxed) {
        return;
    }
    let written = srv.aof.written.load(Relaxed);
    if written <= srv.aof.synced.load(Relaxed) {
        return;
    }
    let file = srv
        .aof
        .files
        .lock()
        .as_ref()
        .and_then(|f| f.incr.try_clone().ok());
    if let Some(f) = file {
        srv.aof.last_fsync_ms.store(now, Relaxed);
        if f.sync_data().is_ok() {
            srv.aof.synced.fetch_max(written, Relaxed);
        }
    }
}

/// Cron: starts an automatic rewrite when the AOF grew past
/// `auto-aof-rewrite-percentage` of its size after the last rewrite and
/// past `auto-aof-rewrite-min-size`.
pub fn cron(srv: &Server) {
    if srv.aof.rewrite_in_progress.load(Relaxed) || srv.persistence.bgsave_running() {
        return;
    }
    if srv.aof.rewrite_scheduled.load(Relaxed) {
        if srv.aof.wait_rewrite.load(Relaxed) {
            switch::retry_enabling(srv);
        } else {
            let _ = rewrite(srv, false);
        }
        return;
    }
    if !srv.journal.enabled() {
        return;
    }
    let s = srv.settings();
    let pct = s.aof.rewrite_percentage;
    if pct == 0 {
        return;
    }
    let size = {
        let g = srv.aof.files.lock();
        match g.as_ref() {
            Some(f) => f.base_size + f.incr_size,
            None => return,
        }
    };
    let base = srv.aof.rewrite_base_size.load(Relaxed).max(1);
    if size < s.aof.rewrite_min_size || size.saturating_sub(base) * 100 / base < pct {
        return;
    }
    crate::base::log::notice(&format!(
        "Starting automatic rewriting of AOF on {}% growth",
        size.saturating_sub(base) * 100 / base
    ));
    let _ = rewrite(srv, false);
}

/// Sizes for INFO: (base, current).
fn sizes(srv: &Server) -> Option<(u64, u64)> {
    let g = srv.aof.files.lock();
    g.as_ref().map(|f| (f.base_size, f.base_size + f.incr_size))
}

/// The AOF fields of `INFO persistence`, Redis 7.0's names and order.
pub fn info_fields(srv: &Server, t: &mut String) {
    let a = &srv.aof;
    // On, or waiting for the first base (Redis's AOF_WAIT_REWRITE).
    let on = srv.journal.enabled() || a.wait_rewrite.load(Relaxed);
    let running = a.rewrite_in_progress.load(Relaxed);
    let cur = if running {
        (crate::base::clock::unix_time_ms().saturating_sub(a.rewrite_started_ms.load(Relaxed))
            / 1000) as i64
    } else {
        -1
    };
    let ended = a.rewrites_ended.load(Relaxed);
    let last = if ended == 0 {
        -1
    } else {
        a.last_rewrite_secs.load(Relaxed)
    };
    let ok = |b: bool| if b { "ok" } else { "err" };
    let lines = [
        format!("aof_enabled:{}", u8::from(on)),
        format!("aof_rewrite_in_progress:{}", u8::from(running)),
        format!(
            "aof_rewrite_scheduled:{}",
            u8::from(a.rewrite_scheduled.load(Relaxed))
        ),
        format!("aof_last_rewrite_time_sec:{last}"),
        format!("aof_current_rewrite_time_sec:{cur}"),
        format!(
            "aof_last_bgrewrite_status:{}",
            ok(ended == 0 || a.last_rewrite_ok.load(Relaxed))
        ),
        format!("aof_rewrites:{}", a.rewrites.load(Relaxed)),
        format!(
            "aof_rewrites_consecutive_failures:{}",
            a.rewrite_failures.load(Relaxed)
        ),
        format!(
            "aof_last_write_status:{}",
            ok(!a.write_failed.load(Relaxed))
        ),
        format!("aof_last_cow_size:{}", a.last_cow.load(Relaxed)),
        "module_fork_in_progress:0".to_string(),
        "module_fork_last_cow_size:0".to_string(),
    ];
    for l in lines {
        t.push_str(&l);
        t.push_str("\r\n");
    }
    if on {
        let (base, cur) = sizes(srv).unwrap_or((0, 0));
        let pending = srv
            .journal
            .appended()
            .saturating_sub(a.written.load(Relaxed));
        let lines = [
            format!("aof_current_size:{cur}"),
            format!("aof_base_size:{base}"),
            format!(
                "aof_pending_rewrite:{}",
                u8::from(a.rewrite_scheduled.load(Relaxed))
            ),
            format!("aof_buffer_length:{pending}"),
            "aof_pending_bio_fsync:0".to_string(),
            format!("aof_delayed_fsync:{}", a.delayed_fsync.load(Relaxed)),
        ];
        for l in lines {
            t.push_str(&l);
            t.push_str("\r\n");
        }
    }
}

/// The `MISCONF` error for write commands while AOF writes fail, if any.
pub fn write_error(srv: &Server) -> Option<String> {
    if !srv.aof.write_failed.load(Relaxed) {
        return None;
    }
    Some(format!(
        "MISCONF Errors writing to the AOF file: {}",
        srv.aof.last_write_error.lock()
    ))
}

/// DEBUG LOADAOF: writes what is pending, empties the keyspace and loads
/// the AOF again (the journal records nothing of the reload). With the
/// AOF off (redis-server 7.0 exits there) or before its first base is
/// written there is no file to load: an error, and nothing changes.
pub fn debug_loadaof(srv: &Server) -> Result<(), String> {
    if !srv.journal.enabled() || srv.aof.files.lock().is_none() {
        return Err("DEBUG LOADAOF needs appendonly yes: there is no AOF to load".into());
    }
    if srv.aof.wait_rewrite.load(Relaxed) {
        return Err(
            "DEBUG LOADAOF: the AOF's first base is still being written, nothing to load yet"
                .into(),
        );
    }
    let s = srv.settings();
    let _scope = crate::services::journal::suppress(srv);
    let _all = srv.keyspace.hold_all();
    write_out(srv, true);
    let (dir, m) = {
        let g = srv.aof.files.lock();
        let f = g.as_ref().ok_or("AOF is off")?;
        (f.dir.clone(), f.manifest.clone())
    };
    let freed = srv.keyspace.flush_all();
    srv.lazyfree.free_dbs(freed, false);
    load::load_manifest(srv, &dir, &m, s.aof.load_truncated).map_err(|e| e.0)?;
    Ok(())
}

/// Shutdown: writes and syncs what is pending.
pub fn flush_on_shutdown(srv: &Server) {
    if srv.journal.enabled() {
        write_out(srv, true);
    }
}
