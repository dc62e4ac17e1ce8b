//! The interface the command runtime implements for scripts: running a
//! command, logging, ACL checks and the busy-script callback.
//!
//! The engine never touches the keyspace itself. Every `redis.call` /
//! `redis.pcall` becomes one [`Host::call`]; the host runs the command
//! exactly as Redis's `scriptCall` does (command lookup, arity, ACL,
//! `no-writes`/read-only, OOM and cluster checks, then the command) and
//! writes its reply. The engine converts that reply to Lua.

use std::time::Duration;

use resp::ReplyBuf;

/// `redis.log` levels (`redis.LOG_*`), Redis's verbosity levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// `LOG_DEBUG` (0)
    Debug = 0,
    /// `LOG_VERBOSE` (1)
    Verbose = 1,
    /// `LOG_NOTICE` (2)
    Notice = 2,
    /// `LOG_WARNING` (3)
    Warning = 3,
}

/// Where the effects of the script's writes are propagated
/// (`redis.set_repl`): a bit set of `REPL_AOF` (1) and `REPL_REPLICA` (2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReplFlags(pub u8);

impl ReplFlags {
    /// `redis.REPL_NONE`
    pub const NONE: ReplFlags = ReplFlags(0);
    /// `redis.REPL_AOF`
    pub const AOF: ReplFlags = ReplFlags(1);
    /// `redis.REPL_REPLICA` / `redis.REPL_SLAVE`
    pub const REPLICA: ReplFlags = ReplFlags(2);
    /// `redis.REPL_ALL` (the value at the start of every run)
    pub const ALL: ReplFlags = ReplFlags(3);

    /// Propagate to the AOF / journal.
    pub fn aof(self) -> bool {
        self.0 & 1 != 0
    }

    /// Propagate to replicas.
    pub fn replica(self) -> bool {
        self.0 & 2 != 0
    }
}

/// What the host answers from [`Host::busy`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusyAction {
    /// Keep running the script.
    Continue,
    /// Stop it: the script fails with
    /// `ERR Script killed by user with SCRIPT KILL...` (SCRIPT KILL /
    /// FUNCTION KILL). The host decides whether a kill is allowed
    /// (`-UNKILLABLE` once the script wrote).
    Kill,
}

/// Facts about the running script that the host may need per call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallContext {
    /// `redis.set_repl` as last set in this run (`REPL_ALL` initially).
    pub repl: ReplFlags,
    /// True for `redis.pcall` (errors are returned to the script rather
    /// than raised; the host may use it for error statistics, as Redis
    /// counts errors raised by `redis.call` only once).
    pub pcall: bool,
}

/// The command runtime as seen by a running script.
pub trait Host {
    /// Runs one command for the script and appends exactly one complete
    /// reply to `out`, encoded for `out.protocol()` — the protocol the
    /// script selected with `redis.setresp` (RESP2 unless it asked for 3).
    /// `argv` is never empty. Refusals are error replies with Redis's
    /// texts, e.g. `-ERR Unknown Redis command called from script`,
    /// `-ERR Wrong number of args calling Redis command from script`,
    /// `-ERR Write commands are not allowed from read-only scripts.`,
    /// `-ERR This Redis command is not allowed from script`.
    fn call(&mut self, argv: &[&[u8]], ctx: CallContext, out: &mut ReplyBuf);

    /// `redis.log(level, ...)`: the message is the arguments joined by
    /// single spaces. The host filters by its `loglevel`.
    fn log(&mut self, level: LogLevel, msg: &[u8]);

    /// `redis.acl_check_cmd(cmd, ...)`: whether the current user may run
    /// this command with these arguments; `None` when the command does not
    /// exist (the script then fails with
    /// `ERR Invalid command passed to redis.acl_check_cmd()`).
    fn acl_check(&mut self, argv: &[&[u8]]) -> Option<bool>;

    /// Called from the VM's count hook (about every 100 000 Lua
    /// instructions) with the time the script has run so far. After
    /// `busy-reply-threshold` the host serves other clients with `-BUSY`
    /// from here, and returns [`BusyAction::Kill`] after SCRIPT KILL.
    fn busy(&mut self, elapsed: Duration) -> BusyAction;
}
