//! Static description of a command: name, arity, flags, key positions and docs.
//!
//! Every command family module exposes a `pub const COMMANDS: &[CommandSpec]`
//! that [`crate::table::CommandTable`] collects at startup. A spec is plain data
//! so `COMMAND INFO`/`COMMAND DOCS` can be generated from it and the dispatcher
//! can check arity and find keys without running the handler.
//!
//! Invariants:
//! * `name` is lower case; subcommand names are `container|sub` lower case.
//! * `arity` follows Redis: positive = exact argument count (command name
//!   included), negative = at least `-arity`.
//! * `keys` uses Redis's legacy (first, last, step) triple; `last` may be
//!   negative (counted from the end). Commands whose keys cannot be described
//!   that way set `getkeys`.

use crate::ctx::Ctx;

/// A command implementation. `args[0]` is the command name as the client sent it.
pub type Handler = fn(&mut Ctx<'_>, &[&[u8]]);

/// Extracts key positions for commands whose keys are not a simple range
/// (e.g. `numkeys` arguments). Returns `None` when the arguments are malformed.
pub type KeyFinder = fn(&[&[u8]]) -> Option<Vec<usize>>;

/// Command flags, as reported by `COMMAND INFO` (Redis 7.0 names).
pub mod flag {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const PUBSUB: u32 = 1 << 4;
    pub const NOSCRIPT: u32 = 1 << 5;
    pub const BLOCKING: u32 = 1 << 6;
    pub const LOADING: u32 = 1 << 7;
    pub const STALE: u32 = 1 << 8;
    pub const SKIP_MONITOR: u32 = 1 << 9;
    pub const SKIP_SLOWLOG: u32 = 1 << 10;
    pub const FAST: u32 = 1 << 11;
    pub const NO_AUTH: u32 = 1 << 12;
    pub const MAY_REPLICATE: u32 = 1 << 13;
    pub const NO_MULTI: u32 = 1 << 14;
    pub const ALLOW_BUSY: u32 = 1 << 15;
    pub const NO_MANDATORY_KEYS: u32 = 1 << 16;
    pub const NO_ASYNC_LOADING: u32 = 1 << 17;
    pub const MOVABLEKEYS: u32 = 1 << 18;
    /// Allowed while the client is in RESP2 subscribed mode.
    pub const SUBSCRIBED_OK: u32 = 1 << 19;
    /// Allowed in sentinel mode (reported for COMMAND INFO fidelity).
    pub const SENTINEL_OK: u32 = 1 << 20;

    /// (flag, name) pairs in the order Redis prints them.
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (MAY_REPLICATE, "may_replicate"),
        (NO_MULTI, "no_multi"),
        (MOVABLEKEYS, "movablekeys"),
        (ALLOW_BUSY, "allow_busy"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
    ];
}

/// Legacy key position triple (1-based argument indexes, 0 = no keys).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyPos {
    pub first: i32,
    pub last: i32,
    pub step: i32,
}

impl KeyPos {
    pub const NONE: KeyPos = KeyPos {
        first: 0,
        last: 0,
        step: 0,
    };
    pub const ONE: KeyPos = KeyPos {
        first: 1,
        last: 1,
        step: 1,
    };
    pub const ALL: KeyPos = KeyPos {
        first: 1,
        last: -1,
        step: 1,
    };
    pub const fn range(first: i32, last: i32, step: i32) -> KeyPos {
        KeyPos { first, last, step }
    }
}

/// Documentation shown by `COMMAND DOCS`.
#[derive(Clone, Copy, Debug)]
pub struct Docs {
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    pub complexity: &'static str,
}

impl Docs {
    pub const fn new(
        group: &'static str,
        since: &'static str,
        complexity: &'static str,
        summary: &'static str,
    ) -> Docs {
        Docs {
            summary,
            since,
            group,
            complexity,
        }
    }
}

/// A command or subcommand.
#[derive(Clone, Copy, Debug)]
pub struct CommandSpec {
    pub name: &'static str,
    pub arity: i32,
    pub flags: u32,
    /// ACL categories without the leading '@' (e.g. "string", "fast").
    pub acl: &'static [&'static str],
    pub keys: KeyPos,
    pub getkeys: Option<KeyFinder>,
    /// Redis "command tips" (e.g. "nondeterministic_output").
    pub tips: &'static [&'static str],
    pub docs: Docs,
    /// `None` for containers that only dispatch to subcommands.
    pub handler: Option<Handler>,
    pub subcommands: &'static [CommandSpec],
}

impl CommandSpec {
    /// Base for a `const` spec; fill the remaining fields with struct update syntax.
    pub const fn new(name: &'static str, arity: i32, flags: u32, handler: Handler) -> CommandSpec {
        CommandSpec {
            name,
            arity,
            flags,
            acl: &[],
            keys: KeyPos::NONE,
            getkeys: None,
            tips: &[],
            docs: Docs {
                summary: "",
                since: "1.0.0",
                group: "generic",
                complexity: "O(1)",
            },
            handler: Some(handler),
            subcommands: &[],
        }
    }

    pub fn arity_ok(&self, argc: usize) -> bool {
        let a = self.arity;
        if a >= 0 {
            argc == a as usize
        } else {
            argc >= (-a) as usize
        }
    }

    pub fn is_write(&self) -> bool {
        self.flags & flag::WRITE != 0
    }

    /// Indexes of the key arguments in `args` (args[0] is the command name).
    pub fn key_indexes(&self, args: &[&[u8]]) -> Option<Vec<usize>> {
        if let Some(f) = self.getkeys {
            return f(args);
        }
        Some(legacy_key_indexes(self.keys, args.len()))
    }

    /// Short name without the container prefix (`client|list` -> `list`).
    pub fn short_name(&self) -> &'static str {
        match self.name.rfind('|') {
            Some(i) => &self.name[i + 1..],
            None => self.name,
        }
    }
}

/// Expands a (first, last, step) triple for `argc` arguments.
pub fn legacy_key_indexes(k: KeyPos, argc: usize) -> Vec<usize> {
    if k.first <= 0 || k.step <= 0 {
        return Vec::new();
    }
    let last = if k.last < 0 {
        argc as i32 + k.last
    } else {
        k.last
    };
    let mut v = Vec::new();
    let mut i = k.first;
    while i <= last && (i as usize) < argc {
        v.push(i as usize);
        i += k.step;
    }
    v
}
