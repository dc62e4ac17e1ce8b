//! FAILOVER: a master hands its role to one of its replicas (Redis 7.0's
//! coordinated failover).
//!
//! 1. [`start`] (the command checked its arguments and preconditions)
//!    enters `waiting-for-sync` and pauses client writes
//!    (`kernel::replication::Failover::active`, read by dispatch as a
//!    `CLIENT PAUSE WRITE` that CLIENT UNPAUSE does not end); expiry is
//!    frozen and the cron sends no PING, so the stream stops growing.
//! 2. A watcher thread polls until a replica (the `TO` one, or the first
//!    online replica) acknowledged the whole stream (`REPLCONF ACK` equal
//!    to `master_repl_offset`). At `TIMEOUT` it aborts, or with `FORCE`
//!    fails over to the target anyway.
//! 3. `failover-in-progress`: the master becomes a replica of the target
//!    (`replica::replicaof`); its link sends `PSYNC <replid> <offset>
//!    FAILOVER`, which makes the target promote itself and continue the
//!    stream (`+CONTINUE`). The link notes the answer in the kernel state
//!    (`Failover::note_psync`; the link does not call this module):
//!    `+CONTINUE`/`+FULLRESYNC` ends the failover there and then
//!    (`Failover::clear`); an error reply, or a link that cannot reach
//!    the target, is acted on by the watcher, which aborts it: the server
//!    is a master again.
//!
//! Invariants: the state is `NONE` exactly when `active` is false; every
//! way out ([`finish`]) unpauses and thaws expiry (unless a CLIENT PAUSE
//! or the replica role still holds it, `Server::refresh_expiry_freeze`);
//! a watcher thread serves one `generation` only.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use crate::base::log::{log, LogLevel};
use crate::kernel::replication::{failover, state};
use crate::kernel::server::{Pause, Server};

fn notice(msg: &str) {
    log(LogLevel::Notice, msg);
}

/// The pause a failover imposes on clients (writes), if one runs.
pub fn pause(srv: &Server) -> Option<Pause> {
    srv.replication
        .failover
        .active
        .load(Relaxed)
        .then_some(Pause {
            until_ms: u64::MAX,
            all: false,
        })
}

/// INFO's `master_failover_state`.
pub fn state_name(srv: &Server) -> &'static str {
    failover::name(srv.replication.failover.inner.lock().state)
}

/// Is a failover in any state but `NONE`?
pub fn in_progress(srv: &Server) -> bool {
    srv.replication.failover.inner.lock().state != failover::NONE
}

/// Starts a failover (see the module doc); the command checked the rest.
pub fn start(srv: &Arc<Server>, target: Option<(String, u16)>, timeout_ms: u64, force: bool) {
    let gen = {
        let f = &srv.replication.failover;
        let mut g = f.inner.lock();
        g.state = failover::WAIT_FOR_SYNC;
        g.targeted = target.is_some();
        g.target = target.clone();
        g.force = force;
        g.end_ms = if timeout_ms > 0 {
            crate::base::clock::unix_time_ms().saturating_add(timeout_ms)
        } else {
            0
        };
        g.generation += 1;
        g.psync = 0;
        f.active.store(true, Relaxed);
        g.generation
    };
    srv.refresh_expiry_freeze();
    match &target {
        Some((h, p)) => notice(&format!("FAILOVER requested to {h}:{p}.")),
        None => notice("FAILOVER requested to any replica."),
    }
    let srv = Arc::downgrade(srv);
    let _ = std::thread::Builder::new()
        .name("petrel-failover".into())
        .spawn(move || watch(srv, gen));
}

/// ABORT: false when no failover runs.
pub fn abort_request(srv: &Server) -> bool {
    if !in_progress(srv) {
        return false;
    }
    abort(srv, "Failover manually aborted");
    true
}

/// Redis's `abortFailover`: back to a plain master.
pub fn abort(srv: &Server, why: &str) {
    let (st, target) = {
        let g = srv.replication.failover.inner.lock();
        (g.state, g.target.clone())
    };
    if st == failover::NONE {
        return;
    }
    match target {
        Some((h, p)) => notice(&format!("FAILOVER to {h}:{p} aborted: {why}")),
        None => notice(&format!("FAILOVER to any replica aborted: {why}")),
    }
    if st == failover::IN_PROGRESS {
        super::replica::replicaof(srv, None);
    }
    finish(srv);
}

/// Redis's `clearFailoverState`.
fn finish(srv: &Server) {
    srv.replication.failover.clear();
    srv.refresh_expiry_freeze();
}

/// The wait for a replica that has the whole stream.
fn watch(srv: std::sync::Weak<Server>, gen: u64) {
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let Some(srv) = srv.upgrade() else {
            return;
        };
        let g = srv.replication.failover.inner.lock().clone();
        if g.generation != gen || g.state != failover::WAIT_FOR_SYNC {
            return;
        }
        let now = crate::base::clock::unix_time_ms();
        let mut go_to = None;
        if g.end_ms != 0 && g.end_ms <= now {
            if g.force {
                if let Some((h, p)) = &g.target {
                    notice(&format!(
                        "FAILOVER to {h}:{p} time out exceeded, failing over."
                    ));
                    go_to = g.target.clone();
                }
            }
            if go_to.is_none() {
                abort(&srv, "Replica never caught up before timeout");
                return;
            }
        }
        if go_to.is_none() {
            go_to = synced_replica(&srv, g.target.as_ref());
            if let Some((h, p)) = &go_to {
                notice(&format!("Failover target {h}:{p} is synced, failing over."));
            }
        }
        let Some(target) = go_to else {
            continue;
        };
        {
            let mut f = srv.replication.failover.inner.lock();
            if f.generation != gen || f.state != failover::WAIT_FOR_SYNC {
                return;
            }
            f.state = failover::IN_PROGRESS;
            f.target = Some(target.clone());
        }
        super::replica::replicaof(&srv, Some(target));
        return in_progress_until_answered(&srv, gen);
    }
}

/// `failover-in-progress`: waits for what the replica link notes about
/// `PSYNC ... FAILOVER` (`Failover::note_psync`) and aborts the failover
/// (a master again) on an error reply or an unreachable target. On
/// `+CONTINUE`/`+FULLRESYNC` the link ends it itself, before it goes on,
/// as Redis clears the state when the PSYNC is answered.
fn in_progress_until_answered(srv: &Arc<Server>, gen: u64) {
    let srv = Arc::downgrade(srv);
    loop {
        std::thread::sleep(Duration::from_millis(5));
        let Some(srv) = srv.upgrade() else {
            return;
        };
        let g = srv.replication.failover.inner.lock().clone();
        if g.generation != gen || g.state != failover::IN_PROGRESS {
            return;
        }
        // An accepted PSYNC ends the failover in the link itself.
        match g.psync {
            failover::PSYNC_REJECTED => {
                return abort(&srv, "Failover target rejected psync request")
            }
            failover::PSYNC_UNREACHABLE => return abort(&srv, "Failover target unreachable"),
            _ => {}
        }
    }
}

/// The replica (the given one, or the first) that acknowledged the whole
/// stream.
fn synced_replica(srv: &Server, target: Option<&(String, u16)>) -> Option<(String, u16)> {
    let m = &srv.replication.master;
    let offset = m.offset();
    let g = m.inner.lock();
    g.replicas
        .iter()
        .filter(|r| match target {
            Some((h, p)) => r.ip.eq_ignore_ascii_case(h) && r.port == *p,
            None => true,
        })
        .find(|r| {
            r.state.load(Relaxed) == state::ONLINE
                && !r.is_closed()
                && r.ack_offset.load(Relaxed) == offset
        })
        .map(|r| (r.ip.clone(), r.port))
}

/// What `FAILOVER TO host port` finds among the replicas.
pub enum TargetCheck {
    Online,
    NotOnline,
    NotAReplica,
}

pub fn check_target(srv: &Server, host: &str, port: u16) -> TargetCheck {
    let g = srv.replication.master.inner.lock();
    match g
        .replicas
        .iter()
        .find(|r| r.ip.eq_ignore_ascii_case(host) && r.port == port)
    {
        None => TargetCheck::NotAReplica,
        Some(r) if r.state.load(Relaxed) == state::ONLINE => TargetCheck::Online,
        Some(_) => TargetCheck::NotOnline,
    }
}

/// Has this master any replica attached (in any state)?
pub fn has_replicas(srv: &Server) -> bool {
    !srv.replication.master.inner.lock().replicas.is_empty()
}
