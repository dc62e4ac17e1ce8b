//! The state of one script run, reachable from the `redis.*` callbacks and
//! the count hook.
//!
//! Each VM owns one [`RunState`], allocated once when the VM is built
//! ([`StateBox`]) and freed after the VM is closed. Code reaches it only
//! through its raw pointer: `redis.call` / `redis.pcall` (raw C functions,
//! see [`crate::call`]) hold it as an upvalue, the other callbacks find it
//! in the VM's app data ([`StatePtr`]), the engines keep the box.
//!
//! Invariants:
//! * `host` is `Some` only between [`enter`] and the drop of the
//!   [`RunGuard`] it returns, i.e. while the engine is inside a call into
//!   Lua on behalf of that host; the pointer is never kept past that.
//! * At most one `&mut RunState` exists at a time: each user creates one
//!   for the length of a callback (or of the engine's code around a
//!   `lua_pcall`) and never across a call that can run Lua code.
//! * The VM runs on one thread at a time (the engines are used under a
//!   mutex), so no two threads ever touch one `RunState`.

use std::any::Any;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use mlua::Lua;
use resp::{Protocol, ReplyBuf};

use crate::host::{Host, ReplFlags};

/// What the VM is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Running an EVAL script or a function.
    Run,
    /// Running a library's code for FUNCTION LOAD.
    Load,
}

/// Per-run state of a VM.
pub(crate) struct RunState {
    /// The running script's host, lifetime erased (module invariant).
    host: Option<NonNull<dyn Host + 'static>>,
    pub start: Instant,
    pub phase: Phase,
    /// `redis.setresp`
    pub resp: Protocol,
    /// `redis.set_repl`
    pub repl: ReplFlags,
    /// Reused buffer for command replies.
    pub buf: ReplyBuf,
    /// The host asked to stop the script (SCRIPT KILL / FUNCTION KILL).
    pub killed: bool,
    /// Arguments of the `redis.call` in progress, lifetime erased: they
    /// point into Lua strings on that call's stack or into `nums`, and
    /// the vector is emptied before the call returns (see `crate::call`).
    pub args: Vec<&'static [u8]>,
    /// Numeric arguments of the `redis.call` in progress, as text.
    pub nums: Vec<u8>,
    /// Where each number of `nums` ends.
    pub num_ends: Vec<usize>,
    /// A panic caught in the host during `redis.call`, resumed by the
    /// engine once the VM is back at its top level.
    pub panic: Option<Box<dyn Any + Send + 'static>>,
}

impl RunState {
    fn new() -> Self {
        RunState {
            host: None,
            start: Instant::now(),
            phase: Phase::Run,
            resp: Protocol::Resp2,
            repl: ReplFlags::ALL,
            buf: ReplyBuf::new(Protocol::Resp2),
            killed: false,
            args: Vec::new(),
            nums: Vec::new(),
            num_ends: Vec::new(),
            panic: None,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The host of the run in progress.
    ///
    /// # Safety
    /// Only while the run that set it is in progress (module invariant),
    /// and not while another `&mut` to that host is in use.
    pub unsafe fn host<'a>(&self) -> Option<&'a mut dyn Host> {
        // SAFETY: per the function contract the pointer is live (set by
        // `enter` from a `&mut dyn Host` whose borrow outlives the run)
        // and unaliased.
        self.host.map(|mut p| unsafe { p.as_mut() })
    }
}

/// The owner of a VM's [`RunState`]: one heap allocation with a stable
/// address, reached only through [`StateBox::ptr`].
///
/// Declared after the Lua state in its owner, so it is freed after the
/// state is closed: no callback can run once it is gone.
pub(crate) struct StateBox(NonNull<RunState>);

impl StateBox {
    pub fn new() -> Self {
        StateBox(NonNull::from(Box::leak(Box::new(RunState::new()))))
    }

    pub fn ptr(&self) -> *mut RunState {
        self.0.as_ptr()
    }
}

impl Drop for StateBox {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `Box::leak` in `new` and is freed
        // only here; nothing uses it after the VM is closed (see the type
        // doc).
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

// SAFETY: the state is only touched by the thread running its VM, one at
// a time (module invariants); moving the owner between threads (the
// engines live in a mutex) moves nothing any other thread still uses.
unsafe impl Send for StateBox {}

/// The run state's address, kept as the VM's app data for the callbacks
/// that are not raw C functions.
#[derive(Clone, Copy)]
pub(crate) struct StatePtr(pub *mut RunState);

// SAFETY: as for `StateBox`: only the thread running the VM dereferences
// it. mlua's `send` feature requires app data to be `Send`.
unsafe impl Send for StatePtr {}

/// The run state of `lua`, if it has one (every engine VM does).
pub(crate) fn state_of(lua: &Lua) -> Option<*mut RunState> {
    lua.app_data_ref::<StatePtr>().map(|p| p.0)
}

/// Clears the host pointer when dropped.
pub(crate) struct RunGuard {
    state: *mut RunState,
}

impl RunGuard {
    /// Ends the run: clears the host pointer, then resumes a panic the
    /// host raised during a `redis.call` (kept until the VM was back at
    /// its top level), so it reaches the caller as any command's panic.
    pub fn finish(self) {
        let state = self.state;
        drop(self);
        // SAFETY: as in `drop`.
        if let Some(p) = unsafe { (*state).panic.take() } {
            std::panic::resume_unwind(p);
        }
    }
}

impl Drop for RunGuard {
    fn drop(&mut self) {
        // SAFETY: the state outlives the VM's runs (StateBox), and no other
        // reference to it is live once the run's `lua_pcall` returned.
        unsafe { (*self.state).host = None };
    }
}

/// Starts a run (or a load) for `host` on the VM whose state is `state`:
/// resets the per-run settings.
pub(crate) fn enter(state: *mut RunState, host: Option<&mut dyn Host>, phase: Phase) -> RunGuard {
    // SAFETY: `state` is a VM's live state (StateBox) and no Lua code runs
    // during this function, so no other reference to it exists.
    let st = unsafe { &mut *state };
    st.host = host.map(|h| {
        let p: NonNull<dyn Host + '_> = NonNull::from(h);
        // SAFETY: only the lifetime is erased (same fat pointer layout);
        // the module invariant keeps every use within the borrow.
        unsafe { std::mem::transmute::<NonNull<dyn Host + '_>, NonNull<dyn Host + 'static>>(p) }
    });
    st.start = Instant::now();
    st.phase = phase;
    st.resp = Protocol::Resp2;
    st.repl = ReplFlags::ALL;
    st.killed = false;
    RunGuard { state }
}

/// Runs `f` with the current host, if a run is in progress. For callbacks
/// called from Lua (no other reference to the state or host is live).
pub(crate) fn with_host<R>(
    lua: &Lua,
    f: impl FnOnce(&mut dyn Host, &mut RunState) -> R,
) -> Option<R> {
    let p = state_of(lua)?;
    // SAFETY: module invariants: the state is live, and the callback that
    // calls this holds no other reference to it or to the host.
    let st = unsafe { &mut *p };
    // SAFETY: as above; the host is set only while its run is in progress.
    let host = unsafe { st.host()? };
    Some(f(host, st))
}

/// Runs `f` on the run state (present for the VM's whole life). For
/// callbacks called from Lua and for the engine between runs.
pub(crate) fn with_state<R>(lua: &Lua, f: impl FnOnce(&mut RunState) -> R) -> Option<R> {
    let p = state_of(lua)?;
    // SAFETY: module invariants: the state is live and no other reference
    // to it is in use while a callback or the engine runs this.
    Some(f(unsafe { &mut *p }))
}
