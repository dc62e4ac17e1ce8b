//! The commands as the ACL sees them: one entry per command-table entry
//! (subcommands included, by the same index), with its full original name
//! (`rename-command` never changes what the ACL calls a command, as in
//! Redis), its categories, its container and its subcommands.
//!
//! Invariant: `entries[i]` describes `CommandTable::entries[i]`, so a
//! selector's command bits are indexed by table index.

use std::collections::HashMap;

use crate::kernel::spec::flag;
use crate::kernel::table::CommandTable;

/// One command or subcommand.
#[derive(Debug, Clone)]
pub struct AclCommand {
    /// `get`, `client|list`.
    pub full_name: String,
    /// Category bits (see `categories::mask`).
    pub cats: u32,
    /// The container of a subcommand.
    pub parent: Option<usize>,
    /// Subcommands of a container, in table order.
    pub subs: Vec<usize>,
    /// `no_auth` commands (AUTH, HELLO, QUIT, RESET) are never denied.
    pub no_auth: bool,
    /// Names keys (`kernel::keyspecs::has_keys`): the key check applies.
    pub has_keys: bool,
}

/// Every command of the table, for rule parsing, describing and checks.
#[derive(Debug, Clone, Default)]
pub struct CommandIndex {
    pub entries: Vec<AclCommand>,
    by_name: HashMap<String, usize>,
}

impl CommandIndex {
    pub fn from_table(table: &CommandTable) -> CommandIndex {
        let mut entries: Vec<AclCommand> = table
            .entries
            .iter()
            .map(|e| AclCommand {
                full_name: e.full_name.clone(),
                cats: super::categories::mask(e.spec),
                parent: None,
                subs: Vec::new(),
                no_auth: e.spec.flags & flag::NO_AUTH != 0,
                has_keys: crate::kernel::keyspecs::has_keys(e.spec),
            })
            .collect();
        let mut by_name = HashMap::new();
        for (i, e) in table.entries.iter().enumerate() {
            by_name.insert(e.full_name.clone(), i);
            let mut subs: Vec<usize> = e.subs.values().copied().collect();
            subs.sort_unstable();
            for &s in &subs {
                entries[s].parent = Some(i);
            }
            entries[i].subs = subs;
        }
        CommandIndex { entries, by_name }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Redis's lookup of a rule's command name: `name` or `container|sub`
    /// (case-insensitive); a `|` after a command without subcommands, or
    /// more than one `|`, names nothing.
    pub fn lookup(&self, name: &[u8]) -> Option<usize> {
        let name = std::str::from_utf8(name).ok()?.to_ascii_lowercase();
        let mut parts = name.split('|');
        let top = parts.next()?;
        let sub = parts.next();
        if parts.next().is_some() {
            return None;
        }
        let i = *self.by_name.get(top)?;
        if self.entries[i].parent.is_some() {
            return None;
        }
        match sub {
            None => Some(i),
            Some(_) if self.entries[i].subs.is_empty() => None,
            Some(_) => self.by_name.get(&name).copied(),
        }
    }

    /// Top-level commands, each followed by its subcommands (the order
    /// rules and category listings are written in).
    pub fn walk(&self) -> impl Iterator<Item = usize> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.parent.is_none())
            .flat_map(|(i, e)| std::iter::once(i).chain(e.subs.iter().copied()))
    }
}
