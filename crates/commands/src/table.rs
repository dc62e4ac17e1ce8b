//! The command table: every [`CommandSpec`] from every family module, looked
//! up by lower-cased name, with per-command statistics beside each spec.
//!
//! To add a command family: write `src/<family>.rs` with
//! `pub const COMMANDS: &[CommandSpec] = &[...]` and add it to [`FAMILIES`].

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

use crate::spec::{CommandSpec, Meta};
use crate::stats::CommandStats;

/// Every command family, in registration order.
pub const FAMILIES: &[&[CommandSpec]] = &[
    crate::connection::COMMANDS,
    crate::admin::COMMANDS,
    crate::client_cmd::COMMANDS,
    crate::introspection::COMMANDS,
    crate::info::COMMANDS,
    crate::slowlog_cmd::COMMANDS,
    crate::latency_cmd::COMMANDS,
    crate::debug::COMMANDS,
    crate::pubsub::COMMANDS,
    crate::transactions::COMMANDS,
    crate::strings::COMMANDS,
    crate::keys::COMMANDS,
    crate::hashes::COMMANDS,
    crate::lists::COMMANDS,
    crate::sets::COMMANDS,
    crate::zsets::COMMANDS,
    crate::sort::COMMANDS,
    crate::blocking_cmds::COMMANDS,
    crate::expire::COMMANDS,
    crate::memory::COMMANDS,
    crate::bitmap::COMMANDS,
    // HyperLogLog: edits sparse values exactly as Redis does (byte-identical values).
    crate::hyperloglog::COMMANDS,
];

/// `spec` with the Redis 7.0 facts of [`crate::redis_meta`] laid over it
/// (see [`Meta::apply`]). Each merged spec is built once per process and
/// shared by every table.
fn with_redis_meta(spec: &'static CommandSpec, full_name: &str) -> &'static CommandSpec {
    static MERGED: OnceLock<StdHashMap<String, &'static CommandSpec>> = OnceLock::new();
    let merged = MERGED.get_or_init(|| {
        let mut m = StdHashMap::new();
        let mut add = |spec: &'static CommandSpec, full: String| {
            if let Some(meta) = Meta::lookup(&full) {
                let spec: &'static CommandSpec = Box::leak(Box::new(meta.apply(spec)));
                m.insert(full, spec);
            }
        };
        for fam in FAMILIES {
            for spec in fam.iter() {
                add(spec, spec.name.to_string());
                for sub in spec.subcommands {
                    add(sub, format!("{}|{}", spec.name, sub.short_name()));
                }
            }
        }
        m
    });
    merged.get(full_name).copied().unwrap_or(spec)
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
    /// Number of per-worker statistics shards in every entry.
    workers: usize,
    by_name: HashMap<String, usize>,
}

impl CommandEntry {
    /// Records one call: on a worker thread into its own shard without
    /// locked instructions, elsewhere into the shared counters.
    pub fn record(&self, ns: u64, track_latency: bool) {
        match crate::hub::current_worker().and_then(|w| self.shards.get(w)) {
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

    pub fn build() -> CommandTable {
        Self::build_for(0)
    }

    /// A table whose statistics have one shard per worker thread.
    pub fn build_for(workers: usize) -> CommandTable {
        let mut t = CommandTable {
            workers,
            entries: Vec::new(),
            by_name: HashMap::default(),
        };
        for fam in FAMILIES {
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
        let spec = with_redis_meta(spec, &full_name);
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
        let lower = crate::util::lower(name, &mut buf)?;
        self.by_name.get(lower).copied()
    }

    pub fn lookup_sub(&self, container: usize, sub: &[u8]) -> Option<usize> {
        let mut buf = [0u8; 64];
        let lower = crate::util::lower(sub, &mut buf)?;
        self.entries[container].subs.get(lower).copied()
    }

    /// Top-level entries (no subcommands), in registration order.
    pub fn top_level(&self) -> impl Iterator<Item = (usize, &CommandEntry)> {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| !e.full_name.contains('|'))
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
