//! The composition root: the one place that names every command family,
//! every family's DEBUG subcommands and the runtime's entry points, and
//! builds the command table and the [`Server`] from them.
//!
//! To add a family: write it under `families/`, then list it in
//! [`FAMILIES`] as `family!(its::module::path)` (and its `DEBUG` in
//! [`DEBUG_SUBCOMMANDS`] if it has some). Nothing else in the crate names families, so a family can be
//! added or removed here alone.

use std::path::PathBuf;

use crate::families;
use crate::kernel::config::{self, params, ConfigError, Param, Params, Settings};
use crate::kernel::redis_meta::META;
use crate::kernel::server::{RuntimeHooks, Server};
use crate::kernel::spec::{CommandSpec, DebugSub};
use crate::kernel::table::CommandTable;

/// A command family: the module that registers a group of commands, by
/// its path under `families/` ("server::client", "lists::blocking"), and
/// its `COMMANDS`. The name is what reports group commands by (the
/// differential coverage report of `crates/server/tests/coverage.rs`).
#[derive(Clone, Copy)]
pub struct Family {
    pub name: &'static str,
    pub commands: &'static [CommandSpec],
}

/// `family!(server::client)`: the family of `families::server::client`,
/// named by that path, so a name cannot drift from its module.
macro_rules! family {
    ($first:ident $(:: $rest:ident)*) => {
        Family {
            name: concat!(stringify!($first) $(, "::", stringify!($rest))*),
            commands: families::$first$(::$rest)*::COMMANDS,
        }
    };
}

/// Every command family, in registration order.
pub const FAMILIES: &[Family] = &[
    family!(connection),
    family!(server::admin),
    family!(server::client),
    family!(server::command),
    family!(server::info),
    family!(server::slowlog),
    family!(server::latency),
    family!(server::debug),
    family!(server::lolwut),
    family!(pubsub),
    family!(transactions),
    family!(strings),
    family!(keys),
    family!(hashes),
    family!(lists),
    family!(sets),
    family!(zsets),
    family!(keys::sort),
    family!(lists::blocking),
    family!(zsets::blocking),
    family!(keys::expire),
    family!(server::memory),
    family!(bitmap),
    // HyperLogLog: edits sparse values exactly as Redis does (byte-identical values).
    family!(hyperloglog),
    // Streams (issue 25): the X* family over collections::stream.
    family!(streams),
    // Geo (issue 25): points in sorted sets, math in collections::geo.
    family!(geo),
    // EVAL, SCRIPT, FUNCTION, FCALL on crate `scripting`.
    family!(scripting),
    // SAVE, BGSAVE, DUMP, RESTORE... on crate `rdb`.
    family!(persistence),
    // ACL users, rules, DRYRUN, LOG (the check itself runs in dispatch).
    family!(acl),
    // BGREWRITEAOF on services::aof.
    family!(aof),
    // SYNC, PSYNC, REPLCONF, WAIT, ROLE on services::replication.
    family!(replication),
    // CLUSTER, READONLY, READWRITE, ASKING on kernel::cluster.
    family!(cluster),
    // MIGRATE over services::migrate's cached connections.
    family!(migrate),
];

/// Every family's DEBUG subcommands, in DEBUG HELP order.
pub const DEBUG_SUBCOMMANDS: &[&[DebugSub]] = &[
    families::server::debug::CORE,
    families::keys::DEBUG,
    families::lists::DEBUG,
    families::persistence::DEBUG,
    families::aof::DEBUG,
];

/// Every configuration parameter group, in the order CONFIG GET and CONFIG
/// REWRITE walk them.
pub const CONFIG_GROUPS: &[&[Param]] = &[
    params::network::NETWORK,
    params::tls::TLS,
    params::acl::ACL,
    params::server::SERVER,
    params::persistence::PERSISTENCE,
    params::aof::AOF,
    params::replication::REPLICATION,
    params::client_limits::CLIENT_LIMITS,
    params::clients::CLIENTS,
    params::diagnostics::DIAGNOSTICS,
    params::keyspace::KEYSPACE,
    params::memory::MEMORY,
    params::encodings::ENCODINGS,
    params::scripting::SCRIPTING,
    params::cluster::CLUSTER,
    params::absent::ABSENT,
];

/// The parameters of [`CONFIG_GROUPS`].
pub fn config_params() -> Params {
    Params {
        groups: CONFIG_GROUPS,
    }
}

/// Settings from `petrel [file] [--name value ...]` arguments (without
/// argv[0]), and the config file's path.
pub fn load_config(args: &[String]) -> Result<(Settings, Option<PathBuf>), ConfigError> {
    let (settings, file) = config::load_from_args(args, config_params())?;
    let mut table = command_table(0);
    for r in &settings.renamed_commands {
        table
            .rename(&r.from, &r.to)
            .map_err(|why| ConfigError(format!("*** FATAL CONFIG ERROR ***\n{}\n{why}", r.at)))?;
    }
    Ok((settings, file))
}

/// Every setting at its default.
pub fn default_settings() -> Settings {
    Settings::defaults(config_params())
}

/// The command table, with one statistics shard per worker thread.
pub fn command_table(workers: usize) -> CommandTable {
    let families: Vec<&'static [CommandSpec]> = FAMILIES.iter().map(|f| f.commands).collect();
    CommandTable::build(&families, META, DEBUG_SUBCOMMANDS, workers)
}

/// The runtime's entry points that commands call back into.
pub fn runtime_hooks() -> RuntimeHooks {
    RuntimeHooks {
        execute_queued: crate::runtime::dispatch::execute_queued,
        execute_from_script: crate::runtime::script_call::execute_from_script,
    }
}

/// The server for `settings` (read from `config_file`, if any).
pub fn build_server(settings: Settings, config_file: Option<PathBuf>) -> Server {
    let mut table = command_table(settings.threads);
    for r in &settings.renamed_commands {
        // Checked by `load_config`.
        let _ = table.rename(&r.from, &r.to);
    }
    Server::new(
        settings,
        config_file,
        config_params(),
        table,
        runtime_hooks(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::spec::Arg;

    #[test]
    fn config_groups_include_every_kernel_group() {
        for g in params::KERNEL {
            assert!(
                CONFIG_GROUPS.iter().any(|c| std::ptr::eq(*c, *g)),
                "a kernel parameter group is missing from CONFIG_GROUPS: {}",
                g[0].name
            );
        }
        let mut seen = std::collections::HashSet::new();
        for p in config_params().iter() {
            assert!(seen.insert(p.name), "parameter {} listed twice", p.name);
        }
    }

    #[test]
    fn family_names_are_unique_module_paths() {
        let mut seen = std::collections::HashSet::new();
        for f in FAMILIES {
            assert!(
                f.name.split("::").all(|seg| !seg.is_empty()
                    && seg.bytes().all(|c| c.is_ascii_lowercase() || c == b'_')),
                "family name {:?}",
                f.name
            );
            assert!(seen.insert(f.name), "family {} listed twice", f.name);
        }
        assert!(FAMILIES.iter().any(|f| f.name == "server::client"));
    }

    #[test]
    fn debug_names_are_unique_and_upper_case() {
        let mut seen = std::collections::HashSet::new();
        for s in DEBUG_SUBCOMMANDS.iter().flat_map(|f| f.iter()) {
            assert_eq!(s.name, s.name.to_ascii_uppercase());
            assert!(seen.insert(s.name), "duplicate DEBUG {}", s.name);
        }
    }

    #[test]
    fn meta_is_sorted_and_every_entry_is_a_command() {
        let meta = META;
        assert!(
            meta.windows(2).all(|w| w[0].name < w[1].name),
            "sorted, unique"
        );
        let table = command_table(0);
        for m in meta {
            let e = table
                .by_full_name(m.name)
                .unwrap_or_else(|| panic!("{} is not a petrel command", m.name));
            assert_eq!(e.spec.docs.args.len(), m.args.len(), "{}", m.name);
            assert_eq!(e.spec.key_specs.len(), m.key_specs.len(), "{}", m.name);
        }
    }

    /// Rows of commands Redis 7.0 has must not set what [`Meta::apply`]
    /// overrides: such data would be dead, and would invite edits in the
    /// wrong place (regenerate `redis_meta.rs` instead).
    #[test]
    fn rows_of_redis_commands_leave_overridden_facts_to_meta() {
        fn check(spec: &CommandSpec, full: &str, bad: &mut Vec<String>) {
            if crate::kernel::table::meta_of(META, full).is_none() {
                return;
            }
            let d = &spec.docs;
            let set = [
                ("tips", !spec.tips.is_empty()),
                ("key_specs", !spec.key_specs.is_empty()),
                ("since", !d.since.is_empty()),
                ("group", !d.group.is_empty()),
                ("doc_flags", !d.doc_flags.is_empty()),
                ("deprecated_since", !d.deprecated_since.is_empty()),
                ("replaced_by", !d.replaced_by.is_empty()),
                ("history", !d.history.is_empty()),
                ("args", !d.args.is_empty()),
            ];
            for (what, _) in set.iter().filter(|(_, s)| *s) {
                bad.push(format!("{full}: {what}"));
            }
        }
        let mut bad = Vec::new();
        for fam in FAMILIES {
            for spec in fam.commands.iter() {
                check(spec, spec.name, &mut bad);
                for sub in spec.subcommands {
                    check(
                        sub,
                        &format!("{}|{}", spec.name, sub.short_name()),
                        &mut bad,
                    );
                }
            }
        }
        assert!(
            bad.is_empty(),
            "set in a cmd! row but taken from redis_meta.rs: {bad:#?}"
        );
    }

    #[test]
    fn key_spec_indexes_point_at_key_specs() {
        fn check(name: &str, args: &[Arg], n: usize) {
            for a in args {
                assert!(a.key_spec_index < n as i32, "{name} {}", a.name);
                check(name, a.args, n);
            }
        }
        for m in META {
            check(m.name, m.args, m.key_specs.len());
        }
    }
}
