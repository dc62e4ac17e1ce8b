//! Static description of a command: name, arity, flags, key positions and docs.
//!
//! Every command family module exposes a `pub const COMMANDS: &[CommandSpec]`
//! that [`crate::kernel::table::CommandTable`] collects at startup. A spec is plain data
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
//!
//! Which source wins:
//! * The family modules' `cmd!` rows own arity, flags, ACL categories, key
//!   positions (`keys`/`getkeys`), handler, subcommands, and the summary
//!   and complexity prose ([`Docs::new`]).
//! * For every command and subcommand Redis 7.0 also has, everything else
//!   `COMMAND INFO`/`COMMAND DOCS` report (tips, key specs, since, group,
//!   doc flags, deprecation, history, arguments) comes from the generated
//!   [`crate::kernel::redis_meta`] table, laid over the row when the command table
//!   is built ([`Meta::apply`]). Rows of such commands leave those fields
//!   empty (a test enforces it): to change them, regenerate
//!   `redis_meta.rs` with `scripts/gen_command_meta.py`, which is also
//!   where petrel's deliberate differences from Redis 7.0 in those facts
//!   live (ZRANK/ZREVRANK's 7.2 `WITHSCORE` argument).
//! * Petrel-only commands and subcommands (those `redis_meta` lacks:
//!   `client|no-touch`, `client|setinfo`, `memory|topkeys`) state all their
//!   facts in their rows ([`Docs::petrel`], `tips`, `key_specs`,
//!   [`Docs::args`]).

use crate::kernel::ctx::Ctx;

/// A command implementation. `args[0]` is the command name as the client sent it.
pub type Handler = fn(&mut Ctx<'_>, &[&[u8]]);

/// Which arguments MONITOR and SLOWLOG must not show (passwords): their
/// indexes in `args` (args[0] is the command name); empty when none.
pub type Redactor = fn(&[&[u8]]) -> Vec<usize>;

/// The flags a call has when they depend on its arguments (EVAL: the
/// script's shebang flags replace `write`, `denyoom` and `stale`).
pub type FlagsOf = fn(&crate::kernel::server::Server, &[&[u8]], u32) -> u32;

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
    /// Served in cluster mode as if the client had sent ASKING first
    /// (RESTORE-ASKING: MIGRATE's writes into a slot being imported).
    pub const ASKING: u32 = 1 << 28;

    // Flags for the runtime (never shown by COMMAND INFO): dispatch treats
    // commands by these, never by their names.

    /// Acts on the transaction instead of being queued under MULTI (MULTI,
    /// EXEC, DISCARD, WATCH, QUIT, RESET).
    pub const NOT_QUEUED: u32 = 1 << 21;
    /// Ends a transaction (EXEC, DISCARD, QUIT, RESET): inside MULTI every
    /// other command is refused while over `maxmemory` (queueing takes memory).
    pub const ENDS_TX: u32 = 1 << 22;
    /// Runs the queued transaction (EXEC): whether it writes (for CLIENT
    /// PAUSE) or needs memory (for `maxmemory`) is decided by the queued
    /// commands.
    pub const RUNS_QUEUE: u32 = 1 << 23;
    /// Refused with MISCONF, like a write, while saving to disk fails
    /// (PING: Redis's health probe reports the disk error).
    pub const DISK_ERROR_PROBE: u32 = 1 << 24;
    /// Changes whole databases (FLUSHDB, FLUSHALL, SWAPDB): counts as one
    /// change for the dirty counter, and names no keys to wake blocked
    /// clients by (the command hands its ready keys over itself).
    pub const WHOLE_KEYSPACE: u32 = 1 << 25;
    /// Leaves a `CLIENT CACHING` choice for the command after it (the CLIENT
    /// subcommands, as in Redis); any other command uses it up.
    pub const KEEPS_CACHING: u32 = 1 << 26;
    /// Runs a script (EVAL, EVALSHA, FCALL and their `_RO` forms): dispatch
    /// makes it the one running script before the call (see
    /// `kernel::scripting`), shows it to MONITOR before the commands it
    /// calls, and takes its write/denyoom flags from the spec's `flags_of`.
    pub const RUNS_SCRIPT: u32 = 1 << 27;

    /// (flag, name) pairs in the order Redis 7.0 prints them in `COMMAND INFO`.
    /// `may_replicate`, `subscribed_ok` and `sentinel_ok` are internal and
    /// hidden, as Redis hides its `may_replicate` and `sentinel` flags.
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
        (ASKING, "asking"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (MOVABLEKEYS, "movablekeys"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// One DEBUG subcommand. DEBUG's subcommands are dispatched by the DEBUG
/// command itself (they are not Redis subcommands: COMMAND INFO shows none).
pub struct DebugSub {
    /// Upper-case name as shown in DEBUG HELP.
    pub name: &'static str,
    /// Like a command arity, counting `DEBUG` and the subcommand name:
    /// positive = exact, negative = at least.
    pub arity: i32,
    /// Help lines: the usage line, then indented explanations.
    pub help: &'static [&'static str],
    pub handler: fn(&mut Ctx, &[&[u8]]),
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

/// Where the search for a key spec's keys begins (Redis 7 key specs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeginSearch {
    /// At a fixed argument index (1 = first argument after the name).
    Index(i32),
    /// After `keyword`, searching from `startfrom` (negative = from the end).
    Keyword {
        keyword: &'static str,
        startfrom: i32,
    },
    /// Cannot be described.
    Unknown,
}

/// How keys are found once the search began (Redis 7 key specs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FindKeys {
    /// Keys up to `lastkey` (relative to the begin index; -1 = last
    /// argument), every `keystep`; `limit` > 1 keeps 1/limit of the rest.
    Range {
        lastkey: i32,
        keystep: i32,
        limit: i32,
    },
    /// The argument at `keynumidx` (relative to begin) holds the key count;
    /// keys start at `firstkey` (relative to begin) every `keystep`.
    Keynum {
        keynumidx: i32,
        firstkey: i32,
        keystep: i32,
    },
    /// Cannot be described.
    Unknown,
}

/// One key specification as reported by `COMMAND INFO` and used by
/// `COMMAND GETKEYSANDFLAGS` (e.g. flags `["RW", "access", "delete"]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeySpec {
    pub notes: &'static str,
    pub flags: &'static [&'static str],
    pub begin: BeginSearch,
    pub find: FindKeys,
}

impl KeySpec {
    /// A spec for keys from `index` to `lastkey` (relative) every `keystep`.
    pub const fn range(
        flags: &'static [&'static str],
        index: i32,
        lastkey: i32,
        keystep: i32,
    ) -> KeySpec {
        KeySpec {
            notes: "",
            flags,
            begin: BeginSearch::Index(index),
            find: FindKeys::Range {
                lastkey,
                keystep,
                limit: 0,
            },
        }
    }

    /// Argument indexes of the keys this spec finds in `args` (args[0] is
    /// the command name), or `None` when the arguments do not fit the spec.
    pub fn find(&self, args: &[&[u8]]) -> Option<Vec<usize>> {
        let argc = args.len() as i64;
        let begin: i64 = match self.begin {
            BeginSearch::Index(i) => i as i64,
            BeginSearch::Keyword { keyword, startfrom } => {
                let (start, end, step): (i64, i64, i64) = if startfrom >= 0 {
                    (startfrom as i64, argc - 1, 1)
                } else {
                    (argc + startfrom as i64, 1, -1)
                };
                let mut i = start;
                let mut found = None;
                while (step > 0 && i <= end) || (step < 0 && i >= end) {
                    if i >= 1
                        && i < argc
                        && args[i as usize].eq_ignore_ascii_case(keyword.as_bytes())
                    {
                        found = Some(i + 1);
                        break;
                    }
                    i += step;
                }
                found?
            }
            BeginSearch::Unknown => return None,
        };
        if begin < 1 || begin >= argc {
            return Some(Vec::new());
        }
        let mut out = Vec::new();
        match self.find {
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => {
                let step = keystep.max(1) as i64;
                let last = if lastkey >= 0 {
                    begin + lastkey as i64
                } else if limit > 1 {
                    begin + (argc - begin) / limit as i64 - 1
                } else {
                    argc + lastkey as i64
                };
                if last >= argc {
                    return None;
                }
                let mut i = begin;
                while i <= last {
                    out.push(i as usize);
                    i += step;
                }
            }
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => {
                let idx = begin + keynumidx as i64;
                let n = args
                    .get(idx as usize)
                    .and_then(|a| crate::base::parse::parse_i64(a))
                    .filter(|&n| n >= 0)?;
                let first = begin + firstkey as i64;
                let step = keystep.max(1) as i64;
                let mut i = first;
                for _ in 0..n {
                    if i >= argc {
                        return None;
                    }
                    out.push(i as usize);
                    i += step;
                }
            }
            FindKeys::Unknown => return None,
        }
        Some(out)
    }
}

/// Type of a documented argument (`COMMAND DOCS` "type").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgType {
    String,
    Integer,
    Double,
    Key,
    Pattern,
    UnixTime,
    PureToken,
    OneOf,
    Block,
}

impl ArgType {
    pub fn name(self) -> &'static str {
        match self {
            ArgType::String => "string",
            ArgType::Integer => "integer",
            ArgType::Double => "double",
            ArgType::Key => "key",
            ArgType::Pattern => "pattern",
            ArgType::UnixTime => "unix-time",
            ArgType::PureToken => "pure-token",
            ArgType::OneOf => "oneof",
            ArgType::Block => "block",
        }
    }
}

/// Flags of a documented argument.
pub mod argflag {
    pub const OPTIONAL: u8 = 1;
    pub const MULTIPLE: u8 = 2;
    pub const MULTIPLE_TOKEN: u8 = 4;
}

/// A documented argument, as `COMMAND DOCS` lists it. Built with const
/// builders: `Arg::new("count", ArgType::Integer).optional()`.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    pub name: &'static str,
    pub typ: ArgType,
    /// Index into the command's key specs for `key` arguments, else -1.
    pub key_spec_index: i32,
    pub token: &'static str,
    pub summary: &'static str,
    pub since: &'static str,
    pub deprecated_since: &'static str,
    pub flags: u8,
    /// Members of a `oneof` or `block`.
    pub args: &'static [Arg],
}

impl Arg {
    pub const fn new(name: &'static str, typ: ArgType) -> Arg {
        Arg {
            name,
            typ,
            key_spec_index: -1,
            token: "",
            summary: "",
            since: "",
            deprecated_since: "",
            flags: 0,
            args: &[],
        }
    }
    /// A `pure-token` argument named like its lower-cased token.
    pub const fn pure(name: &'static str, token: &'static str) -> Arg {
        Arg::new(name, ArgType::PureToken).token(token)
    }
    pub const fn key(name: &'static str, key_spec_index: i32) -> Arg {
        Arg {
            key_spec_index,
            ..Arg::new(name, ArgType::Key)
        }
    }
    pub const fn token(self, token: &'static str) -> Arg {
        Arg { token, ..self }
    }
    /// A non-`key` argument that names keys (SORT's `BY pattern`).
    pub const fn key_spec_index(self, key_spec_index: i32) -> Arg {
        Arg {
            key_spec_index,
            ..self
        }
    }
    pub const fn summary(self, summary: &'static str) -> Arg {
        Arg { summary, ..self }
    }
    pub const fn since(self, since: &'static str) -> Arg {
        Arg { since, ..self }
    }
    pub const fn deprecated_since(self, deprecated_since: &'static str) -> Arg {
        Arg {
            deprecated_since,
            ..self
        }
    }
    pub const fn optional(self) -> Arg {
        Arg {
            flags: self.flags | argflag::OPTIONAL,
            ..self
        }
    }
    pub const fn multiple(self) -> Arg {
        Arg {
            flags: self.flags | argflag::MULTIPLE,
            ..self
        }
    }
    pub const fn multiple_token(self) -> Arg {
        Arg {
            flags: self.flags | argflag::MULTIPLE_TOKEN,
            ..self
        }
    }
    pub const fn of(self, args: &'static [Arg]) -> Arg {
        Arg { args, ..self }
    }
}

/// Documentation shown by `COMMAND DOCS`.
#[derive(Clone, Copy, Debug)]
pub struct Docs {
    pub summary: &'static str,
    pub since: &'static str,
    pub group: &'static str,
    /// Empty when Redis documents none (e.g. MONITOR).
    pub complexity: &'static str,
    /// "syscmd", "deprecated".
    pub doc_flags: &'static [&'static str],
    /// Version that deprecated the command and what replaces it (both
    /// empty unless `doc_flags` has "deprecated").
    pub deprecated_since: &'static str,
    pub replaced_by: &'static str,
    /// (version, change) pairs.
    pub history: &'static [(&'static str, &'static str)],
    pub args: &'static [Arg],
}

impl Docs {
    /// Docs of a command Redis 7.0 has: petrel's complexity and summary
    /// prose; every other field comes from [`crate::kernel::redis_meta`] (see
    /// [`Meta::apply`]).
    pub const fn new(complexity: &'static str, summary: &'static str) -> Docs {
        Docs {
            summary,
            since: "",
            group: "",
            complexity,
            doc_flags: &[],
            deprecated_since: "",
            replaced_by: "",
            history: &[],
            args: &[],
        }
    }
    /// Docs of a petrel-only command (one [`crate::kernel::redis_meta`] has no
    /// entry for), which must state its group and version itself.
    pub const fn petrel(
        group: &'static str,
        since: &'static str,
        complexity: &'static str,
        summary: &'static str,
    ) -> Docs {
        Docs {
            group,
            since,
            ..Docs::new(complexity, summary)
        }
    }
    /// The documented arguments of a petrel-only command.
    pub const fn args(self, args: &'static [Arg]) -> Docs {
        Docs { args, ..self }
    }
}

/// The Redis 7.0 interface facts of one command or subcommand (its full
/// name, e.g. `client|list`), kept in the generated [`crate::kernel::redis_meta`]
/// table and laid over the family module's [`CommandSpec`] when the command
/// table is built: tips, key specs and every `COMMAND DOCS` field except the
/// summary and complexity prose.
#[derive(Clone, Copy, Debug)]
pub struct Meta {
    pub name: &'static str,
    pub tips: &'static [&'static str],
    pub key_specs: &'static [KeySpec],
    pub since: &'static str,
    pub group: &'static str,
    pub doc_flags: &'static [&'static str],
    pub deprecated_since: &'static str,
    pub replaced_by: &'static str,
    pub history: &'static [(&'static str, &'static str)],
    pub args: &'static [Arg],
}

impl Meta {
    /// `spec` with these facts laid over it; arity, flags, ACL categories,
    /// key positions, handler, summary and complexity stay `spec`'s.
    pub fn apply(&self, spec: &CommandSpec) -> CommandSpec {
        CommandSpec {
            tips: self.tips,
            key_specs: self.key_specs,
            docs: Docs {
                since: self.since,
                group: self.group,
                doc_flags: self.doc_flags,
                deprecated_since: self.deprecated_since,
                replaced_by: self.replaced_by,
                history: self.history,
                args: self.args,
                ..spec.docs
            },
            ..*spec
        }
    }
}

/// Which arguments are Pub/Sub channels the ACL checks (Redis's
/// `getChannelsFromCommand`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    None,
    /// The first argument is a channel published to (PUBLISH, SPUBLISH).
    Publish,
    /// Every argument is a channel subscribed to (SUBSCRIBE, SSUBSCRIBE).
    Subscribe,
    /// Every argument is a pattern subscribed to (PSUBSCRIBE): it must
    /// equal an allowed channel pattern literally.
    PatternSubscribe,
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
    /// Redis "command tips" (e.g. "nondeterministic_output"); set in a
    /// row only for petrel-only commands (see the module doc).
    pub tips: &'static [&'static str],
    /// Redis 7 key specifications; set in a row only for petrel-only
    /// commands (see the module doc). When empty and `keys` is not
    /// [`KeyPos::NONE`], `COMMAND INFO` derives one range spec from `keys`.
    pub key_specs: &'static [KeySpec],
    pub docs: Docs,
    /// `None` for containers that only dispatch to subcommands.
    pub handler: Option<Handler>,
    pub subcommands: &'static [CommandSpec],
    /// Arguments to hide from MONITOR and SLOWLOG (see [`Redactor`]).
    pub redact: Option<Redactor>,
    /// Per-call flags (see [`FlagsOf`]); `None` = `flags`.
    pub flags_of: Option<FlagsOf>,
    /// The channels the ACL checks (see [`Channels`]).
    pub channels: Channels,
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
            key_specs: &[],
            docs: Docs::new("O(1)", ""),
            handler: Some(handler),
            subcommands: &[],
            redact: None,
            flags_of: None,
            channels: Channels::None,
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

    /// Number of key arguments, without allocating for (first, last, step) specs.
    pub fn key_count(&self, args: &[&[u8]]) -> usize {
        if self.getkeys.is_some() {
            return self.key_indexes(args).map_or(0, |k| k.len());
        }
        let k = self.keys;
        if k.first <= 0 || k.step <= 0 {
            return 0;
        }
        let argc = args.len() as i32;
        let last = if k.last < 0 {
            argc + k.last
        } else {
            k.last.min(argc - 1)
        };
        if last < k.first {
            0
        } else {
            ((last - k.first) / k.step + 1) as usize
        }
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

#[cfg(test)]
mod key_count_tests {
    use super::*;

    fn nop(_: &mut crate::kernel::ctx::Ctx, _: &[&[u8]]) {}

    #[test]
    fn key_count_matches_key_indexes() {
        let specs = [
            CommandSpec {
                keys: KeyPos::ONE,
                ..CommandSpec::new("get", 2, 0, nop)
            },
            CommandSpec {
                keys: KeyPos::ALL,
                ..CommandSpec::new("del", -2, 0, nop)
            },
            CommandSpec {
                keys: KeyPos::range(1, -1, 2),
                ..CommandSpec::new("mset", -3, 0, nop)
            },
            CommandSpec {
                keys: KeyPos::range(1, 2, 1),
                ..CommandSpec::new("rename", 3, 0, nop)
            },
            CommandSpec::new("ping", -1, 0, nop),
        ];
        let args: Vec<&[u8]> = vec![b"x", b"a", b"b", b"c", b"d", b"e"];
        for spec in &specs {
            for n in 1..=args.len() {
                assert_eq!(
                    spec.key_count(&args[..n]),
                    spec.key_indexes(&args[..n]).unwrap().len(),
                    "{} argc {n}",
                    spec.name
                );
            }
        }
    }
}
