//! Redis 7.0's Lua scripting engine: EVAL scripts and function libraries,
//! running in sandboxed Lua 5.1 VMs, calling back into the command runtime
//! through the [`Host`] trait.
//!
//! * [`ScriptEngine`]: the EVAL VM and script cache (EVAL, EVALSHA,
//!   SCRIPT LOAD/EXISTS/FLUSH), scripts named by SHA-1 ([`sha1`]).
//! * [`FunctionEngine`]: function libraries in their own VM (FUNCTION
//!   LOAD/DELETE/FLUSH/LIST/DUMP/RESTORE, FCALL).
//! * [`Host`]: what the runtime implements — run a command, log, check
//!   ACLs, and answer the busy hook (SCRIPT KILL, `-BUSY` to others).
//!
//! The Lua is the unmodified 5.1.5 that `mlua` builds from its vendored
//! sources (`lua-src`; nothing is downloaded at build time). Libraries:
//! base, `table`, `string`, `math` (with Redis's `math.random`),
//! `coroutine`, and this crate's own `bit`, `cjson`, `cmsgpack`, `struct`
//! ([`libs`]). Error texts, conversions and the sandbox are Redis 7.0.15's;
//! the differential tests in `tests/` compare them byte for byte.
//!
//! Invariants:
//! * A run (script or function) writes exactly one complete reply to the
//!   caller's [`resp::ReplyBuf`], in the caller's protocol.
//! * Every `redis.call` is one [`Host::call`]; the engine never touches
//!   data itself, so the runtime decides atomicity and locking.
//! * A script cannot create or change globals, nor change any library
//!   table ([`sandbox`]); `math.random` follows Redis's process-wide
//!   generator ([`rand`]).
//! * Nothing on any input panics; Lua errors become error replies.
//!
//! Differences from Redis 7.0 (all outside what scripts can rely on):
//! * Read-only tables are proxies instead of a patched VM (see
//!   [`sandbox`] for the two corner cases this shows).
//! * `error({})` (an error table without `err`) crashes redis-server
//!   7.0.15; here it replies `-ERR Error running script <sha>, unknown error`.
//! * The script debugger (SCRIPT DEBUG) is not implemented:
//!   `redis.breakpoint()` returns false and `redis.debug()` does nothing,
//!   as outside a debugging session in Redis.
//! * FUNCTION LIST order: Redis lists in hash-table order; here by name.

pub mod api;
mod builtins;
pub mod cache;
mod call;
pub mod convert;
pub mod error;
mod exec;
pub mod functions;
pub mod hook;
pub mod host;
pub mod libs;
pub mod num;
pub mod rand;
mod reply;
mod run;
pub mod sandbox;
pub mod sha1;
pub mod shebang;

pub use api::VersionInfo;
pub use cache::{EngineConfig, Script, ScriptEngine, Sha, NOSCRIPT};
pub use functions::{FunctionDef, FunctionEngine, Library, RestorePolicy};
pub use host::{BusyAction, CallContext, Host, LogLevel, ReplFlags};
pub use shebang::ScriptFlags;
