//! Turning the AOF on and off at runtime (`CONFIG SET appendonly`), as
//! Redis 7.0 does: on, the first base is written in the background
//! (`rewrite::start_enabling`) while the journal runs into a temporary
//! incremental file and INFO shows `aof_enabled:1` (`Aof::wait_rewrite`
//! until the base is installed; scheduled while a BGSAVE runs, inside a
//! transaction or while a script holds the workers, and retried by the
//! cron after a failure); off, the files are closed and the journal
//! stops at once (a rewrite in progress is stopped and its files removed).

use std::sync::atomic::Ordering::Relaxed;

use crate::kernel::config::Settings;
use crate::kernel::server::Server;

use super::{rewrite, rewrite_inner, write_out};

/// Turns the AOF on at runtime (`CONFIG SET appendonly yes`, module doc).
/// With an RDB preamble, as Redis 7.0: the base is written in the
/// background while clients are served and the journal runs into a new
/// incremental file (`rewrite::start_enabling`); when a BGSAVE runs or
/// inside a transaction the rewrite is scheduled and the cron starts it.
/// INFO shows `aof_enabled:1` from here on. A command-format base is
/// written while the server waits, with the other workers' commands held
/// back as for the background cut (`rewrite::with_workers_claimed`).
fn start(srv: &Server, s: &Settings, in_exec: bool) -> Result<(), String> {
    if !s.aof.use_rdb_preamble {
        let now = crate::base::clock::unix_time_ms();
        return rewrite::with_workers_claimed(srv, now, || rewrite_inner(srv, s, true, true));
    }
    srv.aof.wait_rewrite.store(true, Relaxed);
    start_enabling(srv, s, in_exec)
}

/// Starts (or schedules) the background rewrite that turns the AOF on;
/// `wait_rewrite` is set.
fn start_enabling(srv: &Server, s: &Settings, in_exec: bool) -> Result<(), String> {
    if in_exec || srv.persistence.bgsave_running() || srv.aof.rewrite_in_progress.load(Relaxed) {
        crate::base::log::notice(
            "AOF was enabled but there is already another background operation. An AOF background was scheduled to start when possible.",
        );
        srv.aof.rewrite_scheduled.store(true, Relaxed);
        return Ok(());
    }
    if srv.aof.rewrite_in_progress.swap(true, Relaxed) {
        srv.aof.rewrite_scheduled.store(true, Relaxed);
        return Ok(());
    }
    srv.aof.rewrite_scheduled.store(false, Relaxed);
    match rewrite::start_enabling(srv, s) {
        Ok(()) => Ok(()),
        // Busy (a BGSAVE, a stopped rewrite's walk still winding down, a
        // script): scheduled, as Redis schedules it behind a running child.
        Err(e)
            if srv.persistence.bgsave_running()
                || e == rewrite::SCRIPT_RUNNING
                || e == rewrite::SNAPSHOT_BUSY =>
        {
            srv.aof.rewrite_scheduled.store(true, Relaxed);
            Ok(())
        }
        Err(e) => {
            srv.aof.wait_rewrite.store(false, Relaxed);
            crate::base::log::warning(&format!("Background AOF rewrite failed: {e}"));
            Err("Redis needs to enable the AOF but can't trigger a background AOF rewrite operation. Check the above logs for more info about the error.".into())
        }
    }
}

/// Cron: the scheduled rewrite that turns the AOF on. An earlier try that
/// failed left its journal running into its temporary file: that is
/// dropped and everything starts over from a new cut.
pub(super) fn retry_enabling(srv: &Server) {
    if srv.aof.files.lock().is_some() {
        stop_files(srv);
    }
    let s = srv.settings();
    if let Err(e) = start_enabling(srv, &s, false) {
        crate::base::log::warning(&e);
    }
}

/// Turns the AOF off: writes and syncs what is pending, closes the files,
/// stops the journal.
pub fn stop(srv: &Server) {
    srv.aof.wait_rewrite.store(false, Relaxed);
    srv.aof.rewrite_scheduled.store(false, Relaxed);
    // A running background rewrite is of no use any more (Redis kills its
    // child): it stops and removes its files.
    if let Some(r) = srv.aof.running.lock().0.as_ref() {
        r.abort();
    }
    stop_files(srv);
}

/// Closes the files and stops the journal (what was pending is written);
/// the temporary incremental file of an AOF being turned on is removed.
pub(crate) fn stop_files(srv: &Server) {
    let _order = srv.journal.order.write();
    write_out(srv, true);
    srv.journal.set_enabled(false);
    // Replication may still read the journal (and its expired-key DELs).
    srv.keyspace.set_journal_expired(srv.journal.enabled());
    if let Some(f) = srv.aof.files.lock().take() {
        if let Some(temp) = &f.temp_incr {
            let _ = std::fs::remove_file(f.dir.join(temp));
        }
    }
    let mut out = srv.journal.out.lock();
    out.buf.clear();
    out.db = None;
}

/// Brings the running AOF in line with `s` after CONFIG SET: the fsync
/// policy, and `appendonly` turned on (a rewrite) or off. `in_exec`: CONFIG
/// SET runs inside a transaction (the rewrite is scheduled).
pub fn apply_settings(srv: &Server, s: &Settings, in_exec: bool) -> Result<(), String> {
    srv.aof.set_policy(s.aof.fsync);
    srv.journal
        .timestamps
        .store(s.aof.timestamp_enabled, Relaxed);
    let on = srv.aof.files.lock().is_some() || srv.aof.wait_rewrite.load(Relaxed);
    if s.aof.enabled && !on {
        start(srv, s, in_exec)
    } else if !s.aof.enabled && on {
        stop(srv);
        Ok(())
    } else {
        Ok(())
    }
}
