//! `COMMAND` and its subcommands (COUNT, INFO, DOCS, GETKEYS,
//! GETKEYSANDFLAGS, LIST, HELP), generated from the command table's
//! [`CommandSpec`]s (the `cmd!` rows with the Redis 7.0 facts of
//! [`crate::kernel::redis_meta`] laid over them; see [`crate::kernel::spec`] for which
//! source owns what) so that what clients learn (arity, flags, key
//! positions, key specs, ACL categories, tips) is exactly what the
//! dispatcher enforces.
//!
//! Reply shapes follow Redis 7.0: `COMMAND INFO` gives per command
//! `[name, arity, flags, first, last, step, acl-categories, tips, key-specs,
//! subcommands]`; `COMMAND DOCS` a map of name to doc map.

use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, BeginSearch, CommandSpec, Docs, FindKeys, KeySpec};
use crate::kernel::table::CommandEntry;

const F_INTRO: u32 = flag::LOADING | flag::STALE;
const ACL_CONN: &[&str] = &["connection"];

const SUBS: &[CommandSpec] = &[
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) where N is the number of commands to look up",
            "Get array of specific Redis command details, or all when no argument is given.",
        ),
        ..CommandSpec::new("info", -2, F_INTRO, command_info)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) where N is the number of commands to look up",
            "Get array of specific Redis command documentation",
        ),
        ..CommandSpec::new("docs", -2, F_INTRO, command_docs)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) where N is the number of arguments to the command",
            "Extract keys given a full Redis command",
        ),
        ..CommandSpec::new("getkeys", -4, F_INTRO, command_getkeys)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) where N is the number of arguments to the command",
            "Extract keys and access flags given a full Redis command",
        ),
        ..CommandSpec::new("getkeysandflags", -4, F_INTRO, command_getkeysandflags)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new("O(1)", "Show helpful text about the different subcommands"),
        ..CommandSpec::new("help", 2, F_INTRO, command_help)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new("O(1)", "Get total number of Redis commands"),
        ..CommandSpec::new("count", 2, F_INTRO, command_count)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) where N is the total number of Redis commands",
            "Get an array of Redis command names",
        ),
        ..CommandSpec::new("list", -2, F_INTRO, command_list)
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    acl: ACL_CONN,
    docs: Docs::new(
        "O(N) where N is the total number of Redis commands",
        "Get array of Redis command details",
    ),
    subcommands: SUBS,
    ..CommandSpec::new("command", -1, F_INTRO, command_all)
}];

const HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
];

pub use crate::kernel::acl::categories::{acl_categories, ACL_CATEGORIES};

/// Flag names as `COMMAND INFO` prints them.
pub fn flag_names(spec: &CommandSpec) -> Vec<&'static str> {
    let mut f = spec.flags;
    if spec.getkeys.is_some() {
        f |= flag::MOVABLEKEYS;
    }
    flag::NAMES
        .iter()
        .filter(|(bit, _)| f & bit != 0)
        .map(|&(_, n)| n)
        .collect()
}

pub use crate::kernel::keyspecs::{key_specs, keys_and_flags};

fn reply_key_spec(ctx: &mut Ctx, ks: &KeySpec) {
    let notes = !ks.notes.is_empty();
    ctx.out.map_len(if notes { 4 } else { 3 });
    if notes {
        ctx.out.bulk(b"notes");
        ctx.out.bulk(ks.notes.as_bytes());
    }
    ctx.out.bulk(b"flags");
    ctx.out.set_len(ks.flags.len());
    for f in ks.flags {
        ctx.out.simple(f);
    }
    ctx.out.bulk(b"begin_search");
    ctx.out.map_len(2);
    ctx.out.bulk(b"type");
    match ks.begin {
        BeginSearch::Index(i) => {
            ctx.out.bulk(b"index");
            ctx.out.bulk(b"spec");
            ctx.out.map_len(1);
            ctx.out.bulk(b"index");
            ctx.out.int(i as i64);
        }
        BeginSearch::Keyword { keyword, startfrom } => {
            ctx.out.bulk(b"keyword");
            ctx.out.bulk(b"spec");
            ctx.out.map_len(2);
            ctx.out.bulk(b"keyword");
            ctx.out.bulk(keyword.as_bytes());
            ctx.out.bulk(b"startfrom");
            ctx.out.int(startfrom as i64);
        }
        BeginSearch::Unknown => {
            ctx.out.bulk(b"unknown");
            ctx.out.bulk(b"spec");
            ctx.out.map_len(0);
        }
    }
    ctx.out.bulk(b"find_keys");
    ctx.out.map_len(2);
    ctx.out.bulk(b"type");
    match ks.find {
        FindKeys::Range {
            lastkey,
            keystep,
            limit,
        } => {
            ctx.out.bulk(b"range");
            ctx.out.bulk(b"spec");
            ctx.out.map_len(3);
            ctx.out.bulk(b"lastkey");
            ctx.out.int(lastkey as i64);
            ctx.out.bulk(b"keystep");
            ctx.out.int(keystep as i64);
            ctx.out.bulk(b"limit");
            ctx.out.int(limit as i64);
        }
        FindKeys::Keynum {
            keynumidx,
            firstkey,
            keystep,
        } => {
            ctx.out.bulk(b"keynum");
            ctx.out.bulk(b"spec");
            ctx.out.map_len(3);
            ctx.out.bulk(b"keynumidx");
            ctx.out.int(keynumidx as i64);
            ctx.out.bulk(b"firstkey");
            ctx.out.int(firstkey as i64);
            ctx.out.bulk(b"keystep");
            ctx.out.int(keystep as i64);
        }
        FindKeys::Unknown => {
            ctx.out.bulk(b"unknown");
            ctx.out.bulk(b"spec");
            ctx.out.map_len(0);
        }
    }
}

/// One `COMMAND INFO` entry.
fn reply_info(ctx: &mut Ctx, e: &CommandEntry) {
    let spec = e.spec;
    ctx.out.array_len(10);
    ctx.out.bulk(e.full_name.as_bytes());
    ctx.out.int(spec.arity as i64);
    let flags = flag_names(spec);
    ctx.out.set_len(flags.len());
    for f in flags {
        ctx.out.simple(f);
    }
    // Movable-key commands still report their legacy (first, last, step)
    // (SORT: 1 1 1, ZUNIONSTORE: 1 1 1, EVAL: 0 0 0), as Redis 7.0 does.
    let k = spec.keys;
    ctx.out.int(k.first as i64);
    ctx.out.int(k.last as i64);
    ctx.out.int(k.step as i64);
    let cats = acl_categories(spec);
    ctx.out.set_len(cats.len());
    for c in cats {
        ctx.out.simple(format!("@{c}"));
    }
    ctx.out.set_len(spec.tips.len());
    for t in spec.tips {
        ctx.out.bulk(t.as_bytes());
    }
    let specs = key_specs(spec);
    ctx.out.set_len(specs.len());
    for ks in &specs {
        reply_key_spec(ctx, ks);
    }
    let subs: Vec<usize> = sub_indexes(ctx, e);
    // Redis 7.0 replies an empty *set* when there are no subcommands.
    if subs.is_empty() {
        ctx.out.set_len(0);
    } else {
        ctx.out.array_len(subs.len());
    }
    for i in subs {
        let sub = ctx.srv.table.get(i);
        reply_info(ctx, sub);
    }
}

/// Table indexes of a container's subcommands, in registration order.
fn sub_indexes(ctx: &Ctx, e: &CommandEntry) -> Vec<usize> {
    let mut v: Vec<usize> = e.subs.values().copied().collect();
    v.sort_unstable();
    let _ = ctx;
    v
}

fn command_all(ctx: &mut Ctx, _args: &[&[u8]]) {
    let tops: Vec<usize> = ctx.srv.table.top_level().map(|(i, _)| i).collect();
    ctx.out.array_len(tops.len());
    for i in tops {
        let e = ctx.srv.table.get(i);
        reply_info(ctx, e);
    }
}

fn command_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(HELP);
}

fn command_count(ctx: &mut Ctx, _args: &[&[u8]]) {
    let n = ctx.srv.table.top_level().count();
    ctx.out.int(n as i64);
}

/// Looks up "name" or "container|sub" (as COMMAND INFO/DOCS accept).
fn lookup_full<'s>(ctx: &Ctx<'s>, name: &[u8]) -> Option<&'s CommandEntry> {
    let name = std::str::from_utf8(name).ok()?;
    let srv: &'s crate::kernel::server::Server = ctx.srv;
    srv.table.by_full_name(name)
}

fn command_info(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 2 {
        return command_all(ctx, args);
    }
    ctx.out.array_len(args.len() - 2);
    for a in &args[2..] {
        match lookup_full(ctx, a) {
            Some(e) => reply_info(ctx, e),
            None => ctx.out.null_bulk(),
        }
    }
}

fn reply_arg(ctx: &mut Ctx, a: &crate::kernel::spec::Arg) {
    use crate::kernel::spec::argflag;
    // A pure token always has its token, even the empty one (MIGRATE's
    // `""` instead of a key).
    let has_token = !a.token.is_empty() || a.typ == crate::kernel::spec::ArgType::PureToken;
    let mut n = 2;
    n += (a.key_spec_index >= 0) as usize;
    n += has_token as usize;
    n += !a.summary.is_empty() as usize;
    n += !a.since.is_empty() as usize;
    n += !a.deprecated_since.is_empty() as usize;
    n += (a.flags != 0) as usize;
    n += !a.args.is_empty() as usize;
    ctx.out.map_len(n);
    ctx.out.bulk(b"name");
    ctx.out.bulk(a.name.as_bytes());
    ctx.out.bulk(b"type");
    ctx.out.bulk(a.typ.name().as_bytes());
    if a.key_spec_index >= 0 {
        ctx.out.bulk(b"key_spec_index");
        ctx.out.int(a.key_spec_index as i64);
    }
    for (field, v) in [
        ("token", a.token),
        ("summary", a.summary),
        ("since", a.since),
        ("deprecated_since", a.deprecated_since),
    ] {
        if !v.is_empty() || (field == "token" && has_token) {
            ctx.out.bulk(field.as_bytes());
            ctx.out.bulk(v.as_bytes());
        }
    }
    if a.flags != 0 {
        let names: Vec<&str> = [
            (argflag::OPTIONAL, "optional"),
            (argflag::MULTIPLE, "multiple"),
            (argflag::MULTIPLE_TOKEN, "multiple_token"),
        ]
        .iter()
        .filter(|(f, _)| a.flags & f != 0)
        .map(|&(_, n)| n)
        .collect();
        ctx.out.bulk(b"flags");
        ctx.out.set_len(names.len());
        for n in names {
            ctx.out.simple(n);
        }
    }
    if !a.args.is_empty() {
        ctx.out.bulk(b"arguments");
        ctx.out.array_len(a.args.len());
        for sub in a.args {
            reply_arg(ctx, sub);
        }
    }
}

fn reply_docs(ctx: &mut Ctx, e: &CommandEntry) {
    let d = &e.spec.docs;
    let subs = sub_indexes(ctx, e);
    let deprecated =
        (!d.deprecated_since.is_empty()).then_some((d.deprecated_since, d.replaced_by));
    let doc_flags = d.doc_flags;
    let n = 3
        + !d.complexity.is_empty() as usize
        + !doc_flags.is_empty() as usize
        + 2 * deprecated.is_some() as usize
        + !d.history.is_empty() as usize
        + !d.args.is_empty() as usize
        + !subs.is_empty() as usize;
    ctx.out.map_len(n);
    ctx.out.bulk(b"summary");
    ctx.out.bulk(d.summary.as_bytes());
    ctx.out.bulk(b"since");
    ctx.out.bulk(d.since.as_bytes());
    ctx.out.bulk(b"group");
    ctx.out.bulk(d.group.as_bytes());
    if !d.complexity.is_empty() {
        ctx.out.bulk(b"complexity");
        ctx.out.bulk(d.complexity.as_bytes());
    }
    if !doc_flags.is_empty() {
        ctx.out.bulk(b"doc_flags");
        ctx.out.set_len(doc_flags.len());
        for f in doc_flags {
            ctx.out.simple(f);
        }
    }
    if let Some((since, by)) = deprecated {
        ctx.out.bulk(b"deprecated_since");
        ctx.out.bulk(since.as_bytes());
        ctx.out.bulk(b"replaced_by");
        ctx.out.bulk(by.as_bytes());
    }
    if !d.history.is_empty() {
        ctx.out.bulk(b"history");
        // Redis 7.0 replies the history as a set (RESP3 `~`).
        ctx.out.set_len(d.history.len());
        for (v, what) in d.history {
            ctx.out.array_len(2);
            ctx.out.bulk(v.as_bytes());
            ctx.out.bulk(what.as_bytes());
        }
    }
    if !d.args.is_empty() {
        ctx.out.bulk(b"arguments");
        ctx.out.array_len(d.args.len());
        for a in d.args {
            reply_arg(ctx, a);
        }
    }
    if !subs.is_empty() {
        ctx.out.bulk(b"subcommands");
        ctx.out.map_len(subs.len());
        for i in subs {
            let sub = ctx.srv.table.get(i);
            ctx.out.bulk(sub.full_name.as_bytes());
            reply_docs(ctx, sub);
        }
    }
}

fn command_docs(ctx: &mut Ctx, args: &[&[u8]]) {
    let entries: Vec<&CommandEntry> = if args.len() == 2 {
        let srv = ctx.srv;
        srv.table.top_level().map(|(_, e)| e).collect()
    } else {
        args[2..]
            .iter()
            .filter_map(|a| lookup_full(ctx, a))
            .collect()
    };
    ctx.out.map_len(entries.len());
    for e in entries {
        ctx.out.bulk(e.full_name.as_bytes());
        reply_docs(ctx, e);
    }
}

fn getkeys_common(ctx: &mut Ctx, args: &[&[u8]], with_flags: bool) {
    let cmd = &args[2..];
    match keys_and_flags(&ctx.srv.table, cmd) {
        Err(e) => ctx.error(e),
        Ok(keys) => {
            ctx.out.array_len(keys.len());
            for (i, flags) in keys {
                if with_flags {
                    ctx.out.array_len(2);
                    ctx.out.bulk(cmd[i]);
                    ctx.out.set_len(flags.len());
                    for f in flags {
                        ctx.out.simple(f);
                    }
                } else {
                    ctx.out.bulk(cmd[i]);
                }
            }
        }
    }
}

fn command_getkeys(ctx: &mut Ctx, args: &[&[u8]]) {
    getkeys_common(ctx, args, false);
}

fn command_getkeysandflags(ctx: &mut Ctx, args: &[&[u8]]) {
    getkeys_common(ctx, args, true);
}

fn command_list(ctx: &mut Ctx, args: &[&[u8]]) {
    enum Filter<'a> {
        All,
        Module,
        AclCat(&'a [u8]),
        Pattern(&'a [u8]),
    }
    let filter = match args.len() {
        2 => Filter::All,
        5 if eq_ic(args[2], "FILTERBY") => {
            if eq_ic(args[3], "MODULE") {
                Filter::Module
            } else if eq_ic(args[3], "ACLCAT") {
                Filter::AclCat(args[4])
            } else if eq_ic(args[3], "PATTERN") {
                Filter::Pattern(args[4])
            } else {
                return ctx.syntax_error();
            }
        }
        _ => return ctx.syntax_error(),
    };
    let srv = ctx.srv;
    let mut names: Vec<&str> = Vec::new();
    for (_, top) in srv.table.top_level() {
        let mut subs: Vec<usize> = top.subs.values().copied().collect();
        subs.sort_unstable();
        let family = std::iter::once(top).chain(subs.into_iter().map(|i| srv.table.get(i)));
        for e in family {
            let keep = match filter {
                // Plain LIST names subcommands too, as Redis 7.0's does.
                Filter::All => true,
                Filter::Module => false,
                Filter::AclCat(cat) => acl_categories(e.spec)
                    .iter()
                    .any(|c| c.as_bytes().eq_ignore_ascii_case(cat)),
                Filter::Pattern(p) => {
                    crate::base::glob::glob_match(p, e.full_name.as_bytes(), true)
                }
            };
            if keep {
                names.push(&e.full_name);
            }
        }
    }
    ctx.out.array_len(names.len());
    for n in names {
        ctx.out.bulk(n.as_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::spec::KeyPos;

    fn noop(_: &mut Ctx, _: &[&[u8]]) {}

    #[test]
    fn implied_categories() {
        let get = CommandSpec {
            acl: &["string"],
            ..CommandSpec::new("get", 2, flag::READONLY | flag::FAST, noop)
        };
        assert_eq!(acl_categories(&get), ["read", "string", "fast"]);
        let list = CommandSpec {
            acl: &["connection"],
            ..CommandSpec::new("list", -2, flag::ADMIN | flag::NOSCRIPT, noop)
        };
        assert_eq!(
            acl_categories(&list),
            ["admin", "slow", "dangerous", "connection"]
        );
        assert_eq!(flag_names(&list), ["admin", "noscript"]);
    }

    #[test]
    fn key_spec_search() {
        let args: Vec<&[u8]> = vec![b"mset", b"a", b"1", b"b", b"2"];
        let ks = KeySpec::range(&["OW", "update"], 1, -1, 2);
        assert_eq!(ks.find(&args), Some(vec![1, 3]));
        let eval: Vec<&[u8]> = vec![b"eval", b"s", b"2", b"k1", b"k2", b"a"];
        let ks = KeySpec {
            notes: "",
            flags: &["RW"],
            begin: BeginSearch::Index(2),
            find: FindKeys::Keynum {
                keynumidx: 0,
                firstkey: 1,
                keystep: 1,
            },
        };
        assert_eq!(ks.find(&eval), Some(vec![3, 4]));
        let bad: Vec<&[u8]> = vec![b"eval", b"s", b"5", b"k1"];
        assert_eq!(ks.find(&bad), None);
        let kw: Vec<&[u8]> = vec![
            b"xread", b"COUNT", b"2", b"STREAMS", b"s1", b"s2", b"0", b"0",
        ];
        let ks = KeySpec {
            notes: "",
            flags: &["RO"],
            begin: BeginSearch::Keyword {
                keyword: "STREAMS",
                startfrom: 1,
            },
            find: FindKeys::Range {
                lastkey: -1,
                keystep: 1,
                limit: 2,
            },
        };
        assert_eq!(ks.find(&kw), Some(vec![4, 5]));
    }

    #[test]
    fn derived_key_spec() {
        let get = CommandSpec {
            keys: KeyPos::ONE,
            ..CommandSpec::new("get", 2, flag::READONLY, noop)
        };
        let ks = key_specs(&get);
        assert_eq!(ks, vec![KeySpec::range(&["RO", "access"], 1, 0, 1)]);
    }
}
