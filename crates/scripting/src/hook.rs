//! The count hook: every [`HOOK_INSTRUCTIONS`] VM instructions the running
//! script reports to its host ([`crate::Host::busy`]), which is how the
//! command runtime implements `busy-reply-threshold`, `-BUSY` replies to
//! other clients and SCRIPT KILL / FUNCTION KILL. While a function library
//! loads, the hook enforces Redis's load timeout instead.
//!
//! Invariant: the hook is installed once per VM and does nothing when no
//! run is in progress; its errors are `{err=...}` tables like Redis's.

use std::time::Duration;

use mlua::{HookTriggers, Lua, VmState};

use crate::error::table_error;
use crate::host::BusyAction;
use crate::run::{with_host, with_state, Phase};

/// Instructions between two calls of the hook (Redis uses 100 000).
pub const HOOK_INSTRUCTIONS: u32 = 100_000;

/// FUNCTION LOAD gives a library's top-level code this long.
pub const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

/// The error a killed script fails with (SCRIPT KILL and FUNCTION KILL).
pub const KILLED: &str = "ERR Script killed by user with SCRIPT KILL...";

/// The error of a library whose loading ran past [`LOAD_TIMEOUT`].
pub const LOAD_TIMED_OUT: &str = "ERR FUNCTION LOAD timeout";

/// Installs the hook on `lua`.
pub(crate) fn install(lua: &Lua) {
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_INSTRUCTIONS),
        |lua, _| {
            let Some((phase, elapsed)) = with_state(lua, |st| (st.phase, st.elapsed())) else {
                return Ok(VmState::Continue);
            };
            match phase {
                Phase::Load => {
                    if elapsed > LOAD_TIMEOUT {
                        return Err(table_error(LOAD_TIMED_OUT));
                    }
                }
                Phase::Run => {
                    let action = with_host(lua, |host, st| {
                        let a = host.busy(elapsed);
                        if a == BusyAction::Kill {
                            st.killed = true;
                        }
                        a
                    });
                    if action == Some(BusyAction::Kill) {
                        return Err(table_error(KILLED));
                    }
                }
            }
            Ok(VmState::Continue)
        },
    );
}
