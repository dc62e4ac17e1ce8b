//! The command table: every [`CommandSpec`] of the families
//! `crate::registry` names, looked up by lower-cased name, with per-command
//! statistics beside each spec, and the DEBUG subcommands.
//!
//! To add a command family: write `families/<family>.rs` (or a folder) with
//! `pub const COMMANDS: &[CommandSpec] = &[...]` and list it in
//! `crate::registry::FAMILIES`.

use std::collections::HashMap as StdHashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a: command names are short and trusted (they come from the table),
/// so a simple hash beats SipHash on the per-command lookup.
#[derive(Default)]
pub struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type HashMap<K, V> = StdHashMap<K, V, BuildHasherDefault<NameHasher>>;

use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::kernel::spec::{CommandSpec, DebugSub, Meta};
use crate::kernel::stats::CommandStats;

/// The facts of `full_name` ("get", "client|list") in `meta` (sorted by
/// name, as the generated [`crate::kernel::redis_meta::META`] is).
pub fn meta_of(meta: &'static [Meta], full_name: &str) -> Option<&'static Meta> {
    meta.binary_search_by(|m| m.name.cmp(full_name))
        .ok()
        .map(|i| &meta[i])
}

/// `spec` with the Redis 7.0 facts of `meta` laid over it (see
/// [`Meta::apply`]). Each merged spec is built once per process and shared
/// by every table (the process has one metadata table).
fn with_redis_meta(
    meta: &'static [Meta],
    spec: &'static CommandSpec,
    full_name: &str,
) -> &'static CommandSpec {
    static MERGED: OnceLock<Mutex<StdHashMap<String, &'static CommandSpec>>> = OnceLock::new();
    let Some(meta) = meta_of(meta, full_name) else {
        return spec;
    };
    let mut merged = MERGED.get_or_init(Default::default).lock();
    merged
        .entry(full_name.to_string())
        .or_insert_with(|| Box::leak(Box::new(meta.apply(spec))))
}

/// A command or subcommand with its statistics.
pub struct CommandEntry {
    pub spec: &'static CommandSpec,
    /// Counters written with atomic read-modify-writes: rejected and failed
    /// calls, and calls from threads that are not workers. Read through
    /// [`CommandEntry::snapshot`], which adds the per-worker shards.
    pub stats: CommandStats,
    /// One shard per worker thread, each written only by its worker.
    pub shards: Box<[CommandStats]>,
    /// Full name as shown in stats: "get", "client|list".
    pub full_name: String,
    /// Index of subcommand entries, for containers.
    pub subs: HashMap<String, usize>,
}

pub struct CommandTable {
    pub entries: Vec<CommandEntry>,
    /// DEBUG's subcommands, in DEBUG HELP order.
    pub debug: Vec<&'static DebugSub>,
    /// Number of per-worker statistics shards in every entry.
    workers: usize,
    /// The Redis 7.0 facts laid over the specs.
    meta: &'static [Meta],
    by_name: HashMap<String, usize>,
    /// Entries `rename-command ... ""` removed: no name reaches them.
    removed: Vec<usize>,
}

impl CommandEntry {
    /// Records one call: on a worker thread into its own shard without
    /// locked instructions, elsewhere into the shared counters.
    pub fn record(&self, ns: u64, track_latency: bool) {
        match crate::kernel::hub::current_worker().and_then(|w| self.shards.get(w)) {
            Some(shard) => shard.record_local(ns, track_latency),
            None => self.stats.record(ns, track_latency),
        }
    }

    /// All counters of this command, shards added up.
    pub fn snapshot(&self) -> CommandStats {
        let total = CommandStats::default();
        total.add_from(&self.stats);
        for s in self.shards.iter() {
            total.add_from(s);
        }
        total
    }

    pub fn reset(&self) {
        self.stats.reset();
        for s in self.shards.iter() {
            s.reset();
        }
    }
}

impl CommandTable {
    /// Calls of every command since the last reset (INFO total_commands_processed).
    pub fn total_calls(&self) -> u64 {
        self.entries
            .iter()
            .map(|e| {
                e.stats.calls.load(std::sync::atomic::Ordering::Relaxed)
                    + e.shards
                        .iter()
                        .map(|s| s.calls.load(std::sync::atomic::Ordering::Relaxed))
                        .sum::<u64>()
            })
            .sum()
    }

    /// A table of `families`' commands, with the Redis 7.0 facts of `meta`
    /// laid over them, and `debug`'s DEBUG subcommands, whose statistics
    /// have one shard per worker thread.
    pub fn build(
        families: &[&'static [CommandSpec]],
        meta: &'static [Meta],
        debug: &[&'static [DebugSub]],
        workers: usize,
    ) -> CommandTable {
        let mut t = CommandTable {
            meta,
            workers,
            entries: Vec::new(),
            debug: debug.iter().flat_map(|f| f.iter()).collect(),
            by_name: HashMap::default(),
            removed: Vec::new(),
        };
        for fam in families {
            for spec in fam.iter() {
                let idx = t.push(spec, spec.name.to_string());
                let mut subs = HashMap::default();
                for sub in spec.subcommands {
                    let full = format!("{}|{}", spec.name, sub.short_name());
                    let si = t.push(sub, full);
                    subs.insert(sub.short_name().to_string(), si);
                }
                t.entries[idx].subs = subs;
                let dup = t.by_name.insert(spec.name.to_string(), idx);
                assert!(dup.is_none(), "command {} registered twice", spec.name);
            }
        }
        t
    }

    fn push(&mut self, spec: &'static CommandSpec, full_name: String) -> usize {
        let spec = with_redis_meta(self.meta, spec, &full_name);
        let shards = (0..self.workers).map(|_| CommandStats::default()).collect();
        self.entries.push(CommandEntry {
            spec,
            stats: CommandStats::default(),
            shards,
            full_name,
            subs: HashMap::default(),
        });
        self.entries.len() - 1
    }

    /// Looks a top-level command up by name, case-insensitively.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 64];
        let lower = crate::base::parse::lower(name, &mut buf)?;
        self.by_name.get(lower).copied()
    }

    pub fn lookup_sub(&self, container: usize, sub: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 64];
        let lower = crate::base::parse::lower(sub, &mut buf)?;
        self.entries[container].subs.get(lower).copied()
    }

    /// Top-level entries (no subcommands), in registration order, except
    /// those `rename-command` removed.
    pub fn top_level(&self) -> impl Iterator<Item = (usize, &CommandEntry)> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(i, e)| !e.full_name.contains('|') && !self.removed.contains(i))
    }

    /// `rename-command from to`: the command answers to `to` instead (it
    /// keeps its name everywhere else: COMMAND INFO, statistics, ACL
    /// rules), or to nothing when `to` is empty. The error is Redis's.
    pub fn rename(&mut self, from: &str, to: &str) -> Result<(), &'static str> {
        let idx = self
            .by_name
            .remove(&from.to_ascii_lowercase())
            .ok_or("No such command in rename-command")?;
        if to.is_empty() {
            self.removed.push(idx);
            return Ok(());
        }
        let to = to.to_ascii_lowercase();
        if self.by_name.contains_key(&to) {
            self.by_name.insert(from.to_ascii_lowercase(), idx);
            return Err("Target command name already exists");
        }
        self.by_name.insert(to, idx);
        Ok(())
    }

    /// The entry `args` call (a container's subcommand when it has one
    /// named by `args[1]`), None when it names no command: for logs and
    /// flags, where the runtime's `resolve` would answer an error.
    pub fn entry_of(&self, args: &[&[u8]]) -> Option<&CommandEntry> {
        let idx = self.lookup(args.first()?)?;
        let top = self.get(idx);
        if top.spec.subcommands.is_empty() {
            return Some(top);
        }
        match args.get(1).and_then(|a| self.lookup_sub(idx, a)) {
            Some(sub) => Some(self.get(sub)),
            None => Some(top),
        }
    }

    pub fn get(&self, idx: usize) -> &CommandEntry {
        &self.entries[idx]
    }

    pub fn by_full_name(&self, name: &str) -> Option<&CommandEntry> {
        let lower = name.to_ascii_lowercase();
        match lower.split_once('|') {
            Some((c, s)) => self
                .by_name
                .get(c)
                .and_then(|&i| self.entries[i].subs.get(s))
                .map(|&i| &self.entries[i]),
            None => self.by_name.get(&lower).map(|&i| &self.entries[i]),
        }
    }
}
