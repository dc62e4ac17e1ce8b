//! SHUTDOWN waits for lagging replicas (Redis 7.0, `shutdown-timeout`).
//!
//! A SHUTDOWN without NOW, with `shutdown-timeout` > 0, on a master whose
//! replicas have not all acknowledged the whole stream ([`ready`]), does
//! not stop the server at once: [`start`] pauses client writes (as
//! `CLIENT PAUSE WRITE`, which CLIENT UNPAUSE does not end) and freezes
//! expiry so the stream stops growing, asks the replicas for their offsets
//! (`REPLCONF GETACK *`), and parks the caller. A watcher thread then
//! finishes the shutdown as soon as every replica caught up, or at the
//! timeout: it logs the replicas still behind, saves as SHUTDOWN would
//! (`snapshot::prepare_shutdown`) and stops the server; the parked
//! callers get no reply (their connections close with the server).
//! Another SHUTDOWN meanwhile parks as well. SIGTERM and SIGINT wait the
//! same way (unless `shutdown-on-sig*` says NOW); a second SIGINT during
//! the wait shuts down at once without saving. `SHUTDOWN ABORT` ([`abort`]),
//! or a save that fails without FORCE, ends the wait instead: writes
//! resume and every parked caller gets `-ERR Errors trying to SHUTDOWN.
//! Check logs.`.
//!
//! Invariants: `active` is true exactly while a wait runs; every way out
//! clears it and thaws expiry (`Server::refresh_expiry_freeze`); a watcher
//! serves one `generation` only; a parked caller is answered at most once
//! (its waiter is claimed first).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use crate::base::log::{log, LogLevel};
use crate::kernel::blocking::Waiter;
use crate::kernel::hub::WorkerMsg;
use crate::kernel::replication::state;
use crate::kernel::server::{Pause, Server};

/// The pause the wait imposes on clients (writes), if one runs.
pub fn pause(srv: &Server) -> Option<Pause> {
    srv.replication
        .shutdown
        .active
        .load(Relaxed)
        .then_some(Pause {
            until_ms: u64::MAX,
            all: false,
        })
}

/// Is a SHUTDOWN waiting for its replicas?
pub fn in_progress(srv: &Server) -> bool {
    srv.replication.shutdown.active.load(Relaxed)
}

/// Redis's `isReadyToShutdown`: every replica acknowledged the whole
/// stream (none at all: ready).
pub fn ready(srv: &Server) -> bool {
    let m = &srv.replication.master;
    let offset = m.offset();
    let g = m.inner.lock();
    g.replicas
        .iter()
        .filter(|r| !r.is_closed())
        .all(|r| r.ack_offset.load(Relaxed) == offset)
}

/// Starts waiting (see the module doc) with `waiter` parked (none for a
/// shutdown asked by a signal); the caller checked that no wait runs and
/// that one is needed.
pub fn start(
    srv: &Arc<Server>,
    waiter: Option<Arc<Waiter>>,
    save: Option<bool>,
    force: bool,
    timeout_s: u64,
) {
    let gen = {
        let w = &srv.replication.shutdown;
        let mut g = w.inner.lock();
        g.generation += 1;
        g.end_ms =
            crate::base::clock::unix_time_ms().saturating_add(timeout_s.saturating_mul(1000));
        g.save = save;
        g.force = force;
        g.waiters.extend(waiter);
        w.active.store(true, Relaxed);
        g.generation
    };
    srv.refresh_expiry_freeze();
    super::request_acks(srv);
    log(
        LogLevel::Notice,
        "Waiting for replicas before shutting down.",
    );
    let weak = Arc::downgrade(srv);
    let _ = std::thread::Builder::new()
        .name("petrel-shutdown-wait".into())
        .spawn(move || watch(weak, gen));
}

/// Parks one more caller on the running wait.
pub fn add_waiter(srv: &Server, waiter: Arc<Waiter>) {
    srv.replication.shutdown.inner.lock().waiters.push(waiter);
}

/// Ends the wait because the caller shuts down now (a second SIGINT): the
/// watcher stops, the parked callers stay parked until the server stops.
pub fn take_over(srv: &Server) {
    let w = &srv.replication.shutdown;
    let mut g = w.inner.lock();
    g.generation += 1;
    w.active.store(false, Relaxed);
}

/// SHUTDOWN ABORT: false when no wait runs.
pub fn abort(srv: &Server) -> bool {
    if !cancel(srv) {
        return false;
    }
    log(LogLevel::Notice, "Shutdown manually aborted.");
    true
}

/// Ends the wait without shutting down: writes resume, the parked callers
/// get `ERR_SHUTDOWN_FAILED` (the parked op's timeout reply). False when no wait ran.
fn cancel(srv: &Server) -> bool {
    let waiters = {
        let w = &srv.replication.shutdown;
        let mut g = w.inner.lock();
        if !w.active.swap(false, Relaxed) {
            return false;
        }
        g.generation += 1;
        std::mem::take(&mut g.waiters)
    };
    srv.refresh_expiry_freeze();
    // Each parked caller gets its op's timeout reply: the SHUTDOWN error.
    for w in waiters {
        if let Some(bytes) = crate::services::blocking::unblock_with(srv, &w, false) {
            srv.hub.send(
                w.worker,
                WorkerMsg::Unblock {
                    client_id: w.client_id,
                    bytes,
                },
            );
        }
    }
    true
}

/// Polls until the replicas caught up or the time is up, then finishes.
fn watch(srv: std::sync::Weak<Server>, gen: u64) {
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let Some(srv) = srv.upgrade() else { return };
        let (end_ms, save, force) = {
            let w = &srv.replication.shutdown;
            let g = w.inner.lock();
            if g.generation != gen || !w.active.load(Relaxed) {
                return;
            }
            (g.end_ms, g.save, g.force)
        };
        if ready(&srv) || crate::base::clock::unix_time_ms() >= end_ms {
            finish(&srv, save, force);
            return;
        }
    }
}

/// Redis's `finishShutdown`: logs the replicas still behind, saves, stops
/// the server; a failed save (without FORCE) cancels instead.
fn finish(srv: &Server, save: Option<bool>, force: bool) {
    log_lagging(srv);
    if crate::services::snapshot::prepare_shutdown(srv, save, force).is_err() {
        log(
            LogLevel::Warning,
            "Errors trying to shut down the server. Check the logs for more information.",
        );
        cancel(srv);
        return;
    }
    srv.shutdown_requested.store(true, Relaxed);
    srv.hub.broadcast_shutdown();
}

fn log_lagging(srv: &Server) {
    let m = &srv.replication.master;
    let offset = m.offset();
    let now_s = crate::base::clock::unix_time_ms() / 1000;
    let g = m.inner.lock();
    let (mut all, mut lagging) = (0, 0);
    for r in g.replicas.iter().filter(|r| !r.is_closed()) {
        all += 1;
        let ack = r.ack_offset.load(Relaxed);
        if ack != offset {
            lagging += 1;
            let online = r.state.load(Relaxed) == state::ONLINE;
            let lag = if online {
                now_s.saturating_sub(r.ack_ms.load(Relaxed) / 1000)
            } else {
                0
            };
            log(
                LogLevel::Warning,
                &format!(
                    "Lagging replica {}:{} reported offset {} behind master, lag={lag}, state={}.",
                    r.ip,
                    r.port,
                    offset.saturating_sub(ack),
                    if online { "online" } else { "wait_bgsave" }
                ),
            );
        }
    }
    if all > 0 {
        log(
            LogLevel::Notice,
            &format!(
                "{} of {all} replicas are in sync when shutting down.",
                all - lagging
            ),
        );
    }
}
