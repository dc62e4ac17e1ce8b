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

use crate::spec::CommandSpec;
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
    crate::expire::COMMANDS,
    crate::memory::COMMANDS,
    crate::bitmap::COMMANDS,
    // HyperLogLog: `hyperloglog` edits sparse values exactly as Redis does
    // (byte-identical values); it supersedes `crate::hll::COMMANDS`, which
    // re-encodes canonically, and registering both would panic (pfadd twice).
    crate::hyperloglog::COMMANDS,
];

/// A command or subcommand with its statistics.
pub struct CommandEntry {
    pub spec: &'static CommandSpec,
    pub stats: CommandStats,
    /// Full name as shown in stats: "get", "client|list".
    pub full_name: String,
    /// Index of subcommand entries, for containers.
    pub subs: HashMap<String, usize>,
}

pub struct CommandTable {
    pub entries: Vec<CommandEntry>,
    by_name: HashMap<String, usize>,
}

impl CommandTable {
    pub fn build() -> CommandTable {
        let mut t = CommandTable {
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
        self.entries.push(CommandEntry {
            spec,
            stats: CommandStats::default(),
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
