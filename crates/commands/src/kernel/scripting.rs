//! The scripting engines' state (the EVAL engine and the function
//! libraries of crate `scripting`), the running script, and the gate that
//! keeps a script atomic across worker threads.
//!
//! # How a script runs as one unit
//!
//! A script holds every keyspace partition for its whole run (as EXEC does,
//! through `Server::atomically`; the partition lock is re-entrant, so the
//! commands it calls lock partitions as usual). That covers keys the script
//! did not declare, which Redis allows outside cluster mode, at the price
//! that no other client touches any key while a script runs: the same as
//! Redis, whose single thread runs nothing else meanwhile.
//!
//! Holding every partition means a command on another worker must never be
//! caught waiting for a partition lock behind a script (a `while true do
//! end` script would take that worker, and the `SCRIPT KILL` its clients
//! send, down with it). Dispatch and scripts therefore meet at a gate:
//!
//! * every command, before it may touch the keyspace, enters the gate of
//!   its worker ([`Scripting::enter`]: an atomic increment, a full barrier)
//!   and then looks at [`Scripting::running`]; when a script runs it leaves
//!   the gate at once and waits its turn (the worker retries it later, as
//!   during CLIENT PAUSE), gets `-BUSY` past `busy-reply-threshold`, or runs
//!   if it is flagged `allow-busy` and names no key;
//! * a script first claims the running slot ([`Scripting::try_begin`]: one
//!   compare-and-swap, so there is at most one running script), then waits
//!   until every other worker's gate is empty, and only then takes the
//!   partitions. A command that entered its gate before the claim finishes
//!   without waiting for the script (which holds nothing yet); one that
//!   enters after it sees the claim. One of the two always sees the other
//!   (both sides write, then read, with sequentially consistent atomics).
//!
//! Clients served by the script's own worker cannot be answered while the
//! script runs on that thread, so past the threshold the script's busy hook
//! calls the pump the worker installed ([`set_pump`]), which reads and
//! answers those clients (`-BUSY`, or SCRIPT KILL / FUNCTION KILL /
//! SHUTDOWN NOSAVE...), as Redis processes events from its script hook.
//!
//! Invariants:
//! * `owner != 0` exactly between a successful `try_begin` and `end`;
//! * a gate's count is the number of commands of that worker between
//!   `enter` and the drop of the guard (nested for commands the pump runs);
//! * the engines' mutexes are held by the running script for its whole run:
//!   what other clients may ask while one runs (FUNCTION STATS, INFO's
//!   counts) is read from [`EngineCounts`], never from the engines.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::SeqCst};

use parking_lot::Mutex;

use scripting::{FunctionEngine, ScriptEngine};

/// How a script's commands are checked (set per run from the script's
/// flags and the command that runs it).
#[derive(Clone, Copy, Debug, Default)]
pub struct ScriptCall {
    /// EVAL_RO / EVALSHA_RO / FCALL_RO, or the `no-writes` flag: write
    /// commands are refused.
    pub read_only: bool,
    /// The `allow-oom` flag: `denyoom` commands run over `maxmemory`.
    pub allow_oom: bool,
    /// Memory was over `maxmemory` when the script started (Redis refuses
    /// `denyoom` commands then, until the script wrote something).
    pub oom_at_start: bool,
    /// When the script started (unix ms): the time every command it calls
    /// sees, as Redis 7.0 freezes time for a script (keys do not expire
    /// half-way through it).
    pub now_ms: u64,
    /// The id of the connection that runs the script (whose client line
    /// ACL LOG shows for the script's denied calls).
    pub caller: u64,
}

/// The owner id of a claim by the server itself
/// ([`Scripting::try_begin_server`]); no client has it.
const SERVER_OWNER: u64 = u64::MAX;

/// One gate per worker, on its own cache line.
#[repr(align(128))]
#[derive(Default)]
struct Gate(AtomicU32);

/// What other clients may learn about the running script.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// Function name (FCALL) or SHA (EVAL).
    pub name: String,
    /// The command and its arguments (FUNCTION STATS `command`).
    pub argv: Vec<Vec<u8>>,
    /// True when it is a function (FCALL / FCALL_RO).
    pub is_function: bool,
}

/// Counts and sizes kept beside the engines, for INFO and FUNCTION STATS
/// while a script holds the engines.
#[derive(Clone, Copy, Debug, Default)]
pub struct EngineCounts {
    pub cached_scripts: usize,
    pub scripts_bytes: usize,
    pub eval_vm_bytes: usize,
    pub libraries: usize,
    pub functions: usize,
    pub functions_bytes: usize,
    pub functions_vm_bytes: usize,
}

/// The answer to SCRIPT KILL / FUNCTION KILL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KillOutcome {
    /// The kill was requested; the script stops at its next hook call.
    Killed,
    /// No script runs.
    NotBusy,
    /// The script already wrote.
    Unkillable,
    /// A function runs and SCRIPT KILL was asked, or the reverse.
    WrongKind,
}

/// Scripting state owned by the server.
pub struct Scripting {
    /// The EVAL engine and its script cache.
    pub eval: Mutex<ScriptEngine>,
    /// The function libraries.
    pub functions: Mutex<FunctionEngine>,
    /// Client id of the running script's caller, 0 when none runs.
    owner: AtomicU64,
    /// When it started (unix ms).
    started_ms: AtomicU64,
    /// SCRIPT KILL / FUNCTION KILL / SHUTDOWN NOSAVE asked it to stop.
    kill: AtomicBool,
    /// It called a write command (it can no longer be killed).
    wrote: AtomicBool,
    /// Past `busy-reply-threshold` (others get `-BUSY`).
    timed_out: AtomicBool,
    info: Mutex<RunInfo>,
    counts: Mutex<EngineCounts>,
    /// The EVAL VM's bytes, refreshed after every run (no lock on that path).
    eval_vm_bytes: std::sync::atomic::AtomicUsize,
    gates: Box<[Gate]>,
}

impl Scripting {
    /// State for `workers` worker threads (at least one gate).
    pub fn new(workers: usize) -> Scripting {
        let version = scripting::VersionInfo::default();
        let s = Scripting {
            eval: Mutex::new(ScriptEngine::new(scripting::EngineConfig {
                version: version.clone(),
            })),
            functions: Mutex::new(FunctionEngine::new(version)),
            owner: AtomicU64::new(0),
            started_ms: AtomicU64::new(0),
            kill: AtomicBool::new(false),
            wrote: AtomicBool::new(false),
            timed_out: AtomicBool::new(false),
            info: Mutex::new(RunInfo::default()),
            counts: Mutex::new(EngineCounts::default()),
            eval_vm_bytes: std::sync::atomic::AtomicUsize::new(0),
            gates: (0..workers.max(1)).map(|_| Gate::default()).collect(),
        };
        s.refresh_eval_counts(&s.eval.lock());
        s.refresh_function_counts(&s.functions.lock());
        s
    }

    fn my_gate(&self) -> usize {
        crate::kernel::hub::current_worker().unwrap_or(0) % self.gates.len()
    }

    /// Enters this worker's gate (see the module doc); leave it by dropping
    /// the guard.
    pub fn enter(&self) -> GateGuard<'_> {
        let gate = &self.gates[self.my_gate()].0;
        gate.fetch_add(1, SeqCst);
        GateGuard { gate }
    }

    /// Waits up to `max` for the running script to end, outside this
    /// worker's gate (a claimer waits for the gate to empty, so waiting
    /// inside it could hold the next script up). True when none runs.
    /// For a command of another worker that meets a short script: most
    /// scripts end in microseconds, well before a paused command's retry.
    pub fn wait_briefly(&self, max: std::time::Duration) -> bool {
        let gate = &self.gates[self.my_gate()].0;
        gate.fetch_sub(1, SeqCst);
        let start = std::time::Instant::now();
        let mut spins = 0u32;
        while self.owner.load(SeqCst) != 0 && start.elapsed() < max {
            spins += 1;
            if spins < 32 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        gate.fetch_add(1, SeqCst);
        self.owner.load(SeqCst) == 0
    }

    /// The running script's caller and start time (unix ms), if any.
    pub fn running(&self) -> Option<(u64, u64)> {
        match self.owner.load(SeqCst) {
            0 => None,
            id => Some((id, self.started_ms.load(SeqCst))),
        }
    }

    /// Makes `client_id`'s script the running one, then waits until no
    /// other worker is inside its gate. False when another script runs.
    /// The caller is inside its own gate (once).
    pub fn try_begin(&self, client_id: u64, now_ms: u64) -> bool {
        debug_assert!(client_id != 0);
        if self
            .owner
            .compare_exchange(0, client_id, SeqCst, SeqCst)
            .is_err()
        {
            return false;
        }
        self.kill.store(false, SeqCst);
        self.wrote.store(false, SeqCst);
        self.started_ms.store(now_ms, SeqCst);
        *self.info.lock() = RunInfo::default();
        self.wait_gates_empty(Some(self.my_gate()));
        true
    }

    /// Claims the running slot for the server itself, no script: turning
    /// the write journal on (`services::aof`) must find no command of
    /// another worker half-way, since a command that started with the
    /// journal off journals nothing. Commands of other workers then wait
    /// as they do for a short script, until [`Scripting::end`]. Returns
    /// once every gate is empty but the caller's own (a worker's, which
    /// holds the calling command). False when a script runs.
    pub fn try_begin_server(&self, now_ms: u64) -> bool {
        if self
            .owner
            .compare_exchange(0, SERVER_OWNER, SeqCst, SeqCst)
            .is_err()
        {
            return false;
        }
        self.kill.store(false, SeqCst);
        self.wrote.store(false, SeqCst);
        self.started_ms.store(now_ms, SeqCst);
        let mine = crate::kernel::hub::current_worker().map(|w| w % self.gates.len());
        self.wait_gates_empty(mine);
        true
    }

    /// Waits until each worker's gate has been seen empty once (or
    /// `timeout` passed): every command that was inside a gate when this
    /// was called has finished. Replication uses it after turning the
    /// journal on, so no command that saw it off is still running. The
    /// caller is in no gate. False on timeout.
    pub fn wait_gates_drained(&self, timeout: std::time::Duration) -> bool {
        let end = std::time::Instant::now() + timeout;
        for g in self.gates.iter() {
            while g.0.load(SeqCst) > 0 {
                if std::time::Instant::now() > end {
                    return false;
                }
                std::thread::yield_now();
            }
        }
        true
    }

    /// Spins until every gate is empty but `mine` (the claimer's own
    /// worker gate, which holds its calling command), which may hold one.
    fn wait_gates_empty(&self, mine: Option<usize>) {
        for (i, g) in self.gates.iter().enumerate() {
            let allowed = u32::from(Some(i) == mine);
            let mut spins = 0u32;
            while g.0.load(SeqCst) > allowed {
                spins += 1;
                if spins < 64 {
                    std::hint::spin_loop();
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }

    /// Says what runs (each script run of the claiming command sets it).
    pub fn set_info(&self, info: RunInfo) {
        *self.info.lock() = info;
    }

    /// Whether the running script is a function (for the `-BUSY` text).
    pub fn running_function(&self) -> bool {
        self.info.lock().is_function
    }

    /// Ends the running script (after the command that ran it).
    pub fn end(&self) {
        self.timed_out.store(false, SeqCst);
        self.wrote.store(false, SeqCst);
        self.owner.store(0, SeqCst);
    }

    /// Records that the running script called a write command.
    pub fn mark_wrote(&self) {
        self.wrote.store(true, SeqCst);
    }

    /// Whether the running script called a write command.
    pub fn wrote(&self) -> bool {
        self.wrote.load(SeqCst)
    }

    /// Marks the running script as past `busy-reply-threshold`.
    pub fn mark_timed_out(&self) {
        self.timed_out.store(true, SeqCst);
    }

    /// Whether the running script passed `busy-reply-threshold`.
    pub fn timed_out(&self) -> bool {
        self.timed_out.load(SeqCst)
    }

    /// Whether a kill was requested for the running script.
    pub fn kill_requested(&self) -> bool {
        self.kill.load(SeqCst)
    }

    /// SCRIPT KILL (`function == false`) or FUNCTION KILL.
    pub fn request_kill(&self, function: bool) -> KillOutcome {
        if matches!(self.owner.load(SeqCst), 0 | SERVER_OWNER) {
            return KillOutcome::NotBusy;
        }
        if self.info.lock().is_function != function {
            return KillOutcome::WrongKind;
        }
        if self.wrote.load(SeqCst) {
            return KillOutcome::Unkillable;
        }
        self.kill.store(true, SeqCst);
        KillOutcome::Killed
    }

    /// Stops the running script whatever it did (SHUTDOWN NOSAVE).
    pub fn force_kill(&self) {
        if self.owner.load(SeqCst) != 0 {
            self.kill.store(true, SeqCst);
        }
    }

    /// What is running, if anything (FUNCTION STATS).
    pub fn run_info(&self) -> Option<(RunInfo, u64)> {
        let (_, started) = self.running()?;
        Some((self.info.lock().clone(), started))
    }

    /// Counts and sizes (INFO, FUNCTION STATS).
    pub fn counts(&self) -> EngineCounts {
        let mut c = *self.counts.lock();
        c.eval_vm_bytes = self.eval_vm_bytes.load(SeqCst);
        c
    }

    /// Refreshes the EVAL VM's size after a run.
    pub fn refresh_eval_vm(&self, e: &ScriptEngine) {
        self.eval_vm_bytes
            .store(e.vm_memory(), std::sync::atomic::Ordering::Relaxed);
    }

    /// Refreshes the EVAL engine's figures after a change.
    pub fn refresh_eval_counts(&self, e: &ScriptEngine) {
        let mut c = self.counts.lock();
        c.cached_scripts = e.len();
        c.scripts_bytes = e.scripts_memory();
        self.refresh_eval_vm(e);
    }

    /// Refreshes the function engine's figures after a change.
    pub fn refresh_function_counts(&self, f: &FunctionEngine) {
        let mut c = self.counts.lock();
        c.libraries = f.library_count();
        c.functions = f.function_count();
        c.functions_bytes = f.libraries_memory();
        c.functions_vm_bytes = f.vm_memory();
    }
}

/// A command inside its worker's gate.
pub struct GateGuard<'a> {
    gate: &'a AtomicU32,
}

impl Drop for GateGuard<'_> {
    fn drop(&mut self) {
        self.gate.fetch_sub(1, SeqCst);
    }
}

/// The worker's pump: reads and answers the worker's other clients while a
/// script runs on it past the threshold (see the module doc).
pub type Pump = unsafe fn(*mut ());

thread_local! {
    static PUMP: Cell<Option<(Pump, *mut ())>> = const { Cell::new(None) };
    static PUMPING: Cell<bool> = const { Cell::new(false) };
}

/// Installs (`Some`) or removes the calling worker's pump. The worker
/// installs it around each pass over a connection's commands, with a
/// pointer that stays valid until it removes it.
pub fn set_pump(p: Option<(Pump, *mut ())>) -> Option<(Pump, *mut ())> {
    PUMP.with(|c| c.replace(p))
}

/// Runs the calling worker's pump once, if one is installed and it is not
/// already running (the pump never runs a script, but stays safe anyway).
pub fn pump() {
    let Some((f, data)) = PUMP.with(|c| c.get()) else {
        return;
    };
    if PUMPING.with(|c| c.replace(true)) {
        return;
    }
    // SAFETY: the worker that installed `(f, data)` keeps `data` valid while
    // installed, and this thread is that worker (thread-local).
    unsafe { f(data) };
    PUMPING.with(|c| c.set(false));
}

/// Where `redis.log` lines and the scripting warnings go: the server's log,
/// installed by the binary at startup (nothing is logged before that).
pub type LogSink = fn(crate::kernel::config::LogLevel, &str);

static LOG_SINK: std::sync::OnceLock<LogSink> = std::sync::OnceLock::new();

/// Installs the log sink (once; later calls are ignored).
pub fn set_log_sink(f: LogSink) {
    let _ = LOG_SINK.set(f);
}

/// Logs through the installed sink, if any.
pub fn log(level: crate::kernel::config::LogLevel, msg: &str) {
    if let Some(f) = LOG_SINK.get() {
        f(level, msg);
    }
}
