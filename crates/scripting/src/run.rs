//! The state of one script run, kept as the Lua VM's app data so the
//! `redis.*` callbacks and the count hook can reach the host.
//!
//! Invariant: `host` is `Some` only between [`enter`] and the drop of the
//! [`RunGuard`] it returns, i.e. while the engine is inside a call into Lua
//! on behalf of that host; the pointer is never kept past that.

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

/// A host pointer with its lifetime erased; see the module invariant.
struct HostPtr(NonNull<dyn Host + 'static>);

// SAFETY: the pointer is only dereferenced by the thread that called
// `enter` (the VM runs on that thread until `enter`'s guard drops), and the
// guard clears it before `enter`'s borrow of the host ends. mlua's `send`
// feature requires app data to be `Send`; no other thread ever sees it.
unsafe impl Send for HostPtr {}

/// Per-run state (app data of the VM).
pub(crate) struct RunState {
    host: Option<HostPtr>,
    pub start: Instant,
    pub phase: Phase,
    /// `redis.setresp`
    pub resp: Protocol,
    /// `redis.set_repl`
    pub repl: ReplFlags,
    /// Reused buffer for command replies.
    pub buf: ReplyBuf,
    /// Name used in "script killed" errors: SCRIPT or FUNCTION.
    pub killed: bool,
}

impl RunState {
    pub fn new() -> Self {
        RunState {
            host: None,
            start: Instant::now(),
            phase: Phase::Run,
            resp: Protocol::Resp2,
            repl: ReplFlags::ALL,
            buf: ReplyBuf::new(Protocol::Resp2),
            killed: false,
        }
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }
}

/// Clears the host pointer when dropped.
pub(crate) struct RunGuard<'a> {
    lua: &'a Lua,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        if let Some(mut st) = self.lua.app_data_mut::<RunState>() {
            st.host = None;
        }
    }
}

/// Starts a run (or a load) for `host`: resets the per-run settings.
pub(crate) fn enter<'a>(lua: &'a Lua, host: Option<&mut dyn Host>, phase: Phase) -> RunGuard<'a> {
    let mut st = lua
        .app_data_mut::<RunState>()
        .expect("run state installed at VM creation");
    st.host = host.map(|h| {
        let p: NonNull<dyn Host + '_> = NonNull::from(h);
        // SAFETY: only the lifetime is erased (same fat pointer layout);
        // the module invariant keeps every use within the borrow.
        HostPtr(unsafe {
            std::mem::transmute::<NonNull<dyn Host + '_>, NonNull<dyn Host + 'static>>(p)
        })
    });
    st.start = Instant::now();
    st.phase = phase;
    st.resp = Protocol::Resp2;
    st.repl = ReplFlags::ALL;
    st.killed = false;
    drop(st);
    RunGuard { lua }
}

/// Runs `f` with the current host, if a run is in progress.
pub(crate) fn with_host<R>(
    lua: &Lua,
    f: impl FnOnce(&mut dyn Host, &mut RunState) -> R,
) -> Option<R> {
    let mut st = lua.app_data_mut::<RunState>()?;
    let mut ptr = st.host.as_ref()?.0;
    // SAFETY: see the module invariant: the pointer is live while set, and
    // this thread is the one running the VM for that host.
    let host = unsafe { ptr.as_mut() };
    Some(f(host, &mut st))
}

/// Runs `f` on the run state (present for the VM's whole life).
pub(crate) fn with_state<R>(lua: &Lua, f: impl FnOnce(&mut RunState) -> R) -> Option<R> {
    let mut st = lua.app_data_mut::<RunState>()?;
    Some(f(&mut st))
}
