//! Faults the server survives, and the ones it stops for.
//!
//! * A panic inside one client's command closes that connection
//!   (`conn`). If the command had a partition's data borrowed, a change may
//!   be half made: that partition is *stopped* (`store::partlock`), every
//!   later command that needs it answers
//!   `commands::base::errors::partition_stopped`, and this module logs it
//!   once per partition. The other partitions, and other connections, go on.
//! * A panic in the cron thread ends the process with a log line, as does a
//!   worker or the acceptor thread ending before shutdown (their clients
//!   could never be served again): a dead thread is never ignored.
//!   Handled elsewhere: the lazy-free thread ends the process itself
//!   (`commands::kernel::lazyfree`); a BGSAVE's walk or writer thread that
//!   panics fails that save (`commands::services::snapshot`). A cron tick
//!   refused by a stopped partition is not a fault: the tick is abandoned
//!   (expiry and eviction skip stopped partitions themselves).
//!
//! The main thread learns that a worker or the acceptor ended from
//! [`Watch`]: each such thread holds an [`EndNotice`] that reports its end
//! when dropped (returning or unwinding), and the main thread sleeps on the
//! channel until one does, instead of polling the threads.
//!
//! Invariant: the panic hook logs every panic except the
//! `PartitionStopped` refusals, which are an expected reply path.

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Mutex;

use crossbeam_channel::{Receiver, Sender};

use commands::kernel::server::Server;
use store::partlock::PartitionStopped;

/// Replaces the default panic message (stderr) with a warning in the log
/// naming the thread and place; refusals of stopped partitions are silent.
pub fn install_panic_hook() {
    static ONCE: AtomicBool = AtomicBool::new(false);
    if ONCE.swap(true, Relaxed) {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        if info.payload().is::<PartitionStopped>() {
            return;
        }
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(no message)".to_string()
        };
        let thread = std::thread::current();
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        crate::warning!(
            "Panic in thread '{}' at {place}: {msg}",
            thread.name().unwrap_or("?")
        );
    }));
}

/// Logs each stopped partition once (after a panic under a partition lock).
pub fn report_stopped(srv: &Server) {
    static REPORTED: Mutex<Vec<usize>> = Mutex::new(Vec::new());
    let mut seen = REPORTED.lock().unwrap_or_else(|e| e.into_inner());
    for p in srv.keyspace.stopped_partitions() {
        if seen.contains(&p) {
            continue;
        }
        seen.push(p);
        let (a, b) = srv.keyspace.slot_range(p);
        crate::warning!(
            "Partition {p} (hash slots {a}-{b}) is stopped: a command panicked while changing it, so its data may be half changed. Commands on its keys answer an error until a restart; the other partitions are served."
        );
    }
}

/// One cron tick, with its faults handled (see the module docs).
pub fn cron_tick(srv: &Server) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if commands::base::fault_hooks::take(&commands::base::fault_hooks::CRON) {
            panic!("DEBUG PANIC-THREAD cron");
        }
        commands::runtime::cron::tick(srv)
    }));
    if let Err(payload) = r {
        if payload.is::<PartitionStopped>() {
            return;
        }
        report_stopped(srv);
        crate::warning!("The cron thread panicked (logged above): exiting, as its work (expiry, eviction, save points) would stop silently");
        std::process::exit(1);
    }
}

/// A worker (`Some(i)`) or the acceptor (`None`) ended before a shutdown
/// was asked for: logs it and ends the process.
pub fn thread_died(srv: &Server, worker: Option<usize>) -> ! {
    report_stopped(srv);
    match worker {
        Some(i) => crate::warning!(
            "Worker thread {i} ended unexpectedly (see the panic above): its clients cannot be served; exiting"
        ),
        None => crate::warning!(
            "The acceptor thread ended unexpectedly (see the panic above): no new connection could be accepted; exiting"
        ),
    }
    std::process::exit(1);
}

/// A thread the main thread watches ([`Watch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Watched {
    Worker(usize),
    Acceptor,
}

impl Watched {
    /// The worker index, as [`thread_died`] takes it (`None`: the acceptor).
    pub fn worker(self) -> Option<usize> {
        match self {
            Watched::Worker(i) => Some(i),
            Watched::Acceptor => None,
        }
    }
}

/// The ends of watched threads, as they happen.
pub struct Watch {
    tx: Sender<Watched>,
    rx: Receiver<Watched>,
}

impl Default for Watch {
    fn default() -> Self {
        Self::new()
    }
}

impl Watch {
    pub fn new() -> Watch {
        let (tx, rx) = crossbeam_channel::unbounded();
        Watch { tx, rx }
    }

    /// A notice for thread `who` to hold for its whole life (create it
    /// first thing in the thread, so a panic anywhere after drops it).
    pub fn notice(&self, who: Watched) -> EndNotice {
        EndNotice {
            tx: self.tx.clone(),
            who,
        }
    }

    /// The receiving end alone: once every notice is dropped, receiving
    /// reports the channel disconnected instead of blocking for ever.
    pub fn into_receiver(self) -> Receiver<Watched> {
        self.rx
    }
}

/// Reports the end of its thread to the [`Watch`] when dropped, be it by a
/// return or by a panic unwinding the thread.
pub struct EndNotice {
    tx: Sender<Watched>,
    who: Watched,
}

impl Drop for EndNotice {
    fn drop(&mut self) {
        let _ = self.tx.send(self.who);
    }
}
