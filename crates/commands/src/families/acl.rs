//! `ACL SETUSER | GETUSER | DELUSER | USERS | LIST | WHOAMI | CAT | GENPASS
//! | LOG | DRYRUN | SAVE | LOAD | HELP`, over the user registry
//! (`kernel::acl`) and the check (`services::acl`), with Redis 7.0's
//! replies and error texts.

use crate::base::errors;
use crate::base::parse::eq_ic;
use crate::kernel::acl::categories::{bit_of, ACL_CATEGORIES};
use crate::kernel::acl::selector::{has_space, Selector};
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs};
use crate::services::acl as check;

/// Flags of the administrative subcommands.
const ADMIN: u32 = flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE;
/// Flags of WHOAMI, CAT and GENPASS.
const PLAIN: u32 = flag::NOSCRIPT | flag::LOADING | flag::STALE;

const USERS_N: &str = "O(N). Where N is the number of configured users.";

const SUBS: &[CommandSpec] = &[
    CommandSpec {
        docs: Docs::new(
            "O(1) since the categories and commands are a fixed set.",
            "List the ACL categories or the commands inside a category",
        ),
        ..CommandSpec::new("cat", -2, PLAIN, acl_cat)
    },
    CommandSpec {
        docs: Docs::new(
            "O(1) amortized time considering the typical user.",
            "Remove the specified ACL users and the associated rules",
        ),
        ..CommandSpec::new("deluser", -3, ADMIN, acl_deluser)
    },
    CommandSpec {
        docs: Docs::new(
            "O(1).",
            "Returns whether the user can execute the given command without executing the command.",
        ),
        ..CommandSpec::new("dryrun", -4, ADMIN, acl_dryrun)
    },
    CommandSpec {
        docs: Docs::new(
            "O(1)",
            "Generate a pseudorandom secure password to use for ACL users",
        ),
        ..CommandSpec::new("genpass", -2, PLAIN, acl_genpass)
    },
    CommandSpec {
        docs: Docs::new(
            "O(N). Where N is the number of password, command and pattern rules that the user has.",
            "Get the rules for a specific ACL user",
        ),
        ..CommandSpec::new("getuser", 3, ADMIN, acl_getuser)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Show helpful text about the different subcommands"),
        ..CommandSpec::new("help", 2, flag::LOADING | flag::STALE, acl_help)
    },
    CommandSpec {
        docs: Docs::new(
            USERS_N,
            "List the current ACL rules in ACL config file format",
        ),
        ..CommandSpec::new("list", 2, ADMIN, acl_list)
    },
    CommandSpec {
        docs: Docs::new(USERS_N, "Reload the ACLs from the configured ACL file"),
        ..CommandSpec::new("load", 2, ADMIN, acl_load)
    },
    CommandSpec {
        docs: Docs::new(
            "O(N) with N being the number of entries shown.",
            "List latest events denied because of ACLs in place",
        ),
        ..CommandSpec::new("log", -2, ADMIN, acl_log)
    },
    CommandSpec {
        docs: Docs::new(
            USERS_N,
            "Save the current ACL rules in the configured ACL file",
        ),
        ..CommandSpec::new("save", 2, ADMIN, acl_save)
    },
    CommandSpec {
        docs: Docs::new(
            "O(N). Where N is the number of rules provided.",
            "Modify or create the rules for a specific ACL user",
        ),
        redact: Some(redact_setuser),
        ..CommandSpec::new("setuser", -3, ADMIN, acl_setuser)
    },
    CommandSpec {
        docs: Docs::new(USERS_N, "List the username of all the configured ACL rules"),
        ..CommandSpec::new("users", 2, ADMIN, acl_users)
    },
    CommandSpec {
        docs: Docs::new(
            "O(1)",
            "Return the name of the user associated to the current connection",
        ),
        ..CommandSpec::new("whoami", 2, PLAIN, acl_whoami)
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    docs: Docs::new(
        "Depends on subcommand.",
        "A container for Access List Control commands ",
    ),
    handler: None,
    subcommands: SUBS,
    ..CommandSpec::new("acl", -2, 0, acl_help)
}];

const HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Prints this help.",
];

const NO_ACL_FILE: &str = "ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

fn acl_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(HELP);
}

/// The `ERR unknown subcommand or wrong number of arguments` reply.
fn wrong_form(ctx: &mut Ctx, args: &[&[u8]]) {
    let sub = String::from_utf8_lossy(args[1]).into_owned();
    ctx.error(&errors::unknown_subcommand_or_arity(&sub, "ACL"));
}

/// SETUSER's arguments hidden from MONITOR and SLOWLOG: all of them, as
/// Redis 7.0 redacts them.
fn redact_setuser(args: &[&[u8]]) -> Vec<usize> {
    (2..args.len()).collect()
}

fn acl_setuser(ctx: &mut Ctx, args: &[&[u8]]) {
    let name = args[2];
    if has_space(name) {
        return ctx.error("ERR Usernames can't contain spaces or null characters");
    }
    let pubsub_all = ctx.settings.acl_pubsub_all;
    match ctx.srv.acl.set_user(name, &args[3..], pubsub_all) {
        Ok((old, new)) => {
            if let Some(old) = old {
                check::kill_pubsub_if_revoked(ctx.srv, ctx.client, &old, &new);
            }
            ctx.ok();
        }
        Err(e) => ctx.error_with_arg("ERR ", &e, ""),
    }
}

fn acl_deluser(ctx: &mut Ctx, args: &[&[u8]]) {
    if args[2..].iter().any(|n| *n == b"default") {
        return ctx.error("ERR The 'default' user cannot be removed");
    }
    let gone = ctx.srv.acl.delete(&args[2..]);
    let names: Vec<&[u8]> = gone.iter().map(|u| u.name.as_slice()).collect();
    check::kill_users(ctx.srv, ctx.client, &names);
    ctx.out.int(gone.len() as i64);
}

fn reply_selector(ctx: &mut Ctx, s: &Selector) {
    let cmds = &ctx.srv.acl.cmds;
    ctx.out.bulk(b"commands");
    ctx.out.bulk(s.describe_commands(cmds).as_bytes());
    ctx.out.bulk(b"keys");
    ctx.out.bulk(s.describe_keys());
    ctx.out.bulk(b"channels");
    ctx.out.bulk(s.describe_channels());
}

fn acl_getuser(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(u) = ctx.srv.acl.get(args[2]) else {
        return ctx.out.null();
    };
    ctx.out.map_len(6);
    ctx.out.bulk(b"flags");
    let flags = u.flags();
    ctx.out.set_len(flags.len());
    for f in flags {
        ctx.out.bulk(f.as_bytes());
    }
    ctx.out.bulk(b"passwords");
    ctx.out.array_len(u.passwords.len());
    for p in &u.passwords {
        ctx.out.bulk(p.as_bytes());
    }
    reply_selector(ctx, u.root());
    ctx.out.bulk(b"selectors");
    ctx.out.array_len(u.selectors.len() - 1);
    for s in &u.selectors[1..] {
        ctx.out.map_len(3);
        reply_selector(ctx, s);
    }
}

fn acl_users(ctx: &mut Ctx, _args: &[&[u8]]) {
    let users = ctx.srv.acl.users();
    ctx.out.array_len(users.len());
    for u in users {
        ctx.out.bulk(&u.name);
    }
}

fn acl_list(ctx: &mut Ctx, _args: &[&[u8]]) {
    let users = ctx.srv.acl.users();
    ctx.out.array_len(users.len());
    for u in users {
        let mut line = b"user ".to_vec();
        line.extend_from_slice(&u.name);
        line.push(b' ');
        line.extend_from_slice(&u.describe(&ctx.srv.acl.cmds));
        ctx.out.bulk(&line);
    }
}

fn acl_whoami(ctx: &mut Ctx, _args: &[&[u8]]) {
    let name = ctx.client.acl.user.name.clone();
    ctx.out.bulk(&name);
}

fn acl_cat(ctx: &mut Ctx, args: &[&[u8]]) {
    match args.len() {
        2 => {
            ctx.out.array_len(ACL_CATEGORIES.len());
            for c in ACL_CATEGORIES {
                ctx.out.bulk(c.as_bytes());
            }
        }
        3 => {
            let Some(cat) = bit_of(args[2]) else {
                // Redis's "%.128s" of the raw bytes (a C string: it ends
                // at the first NUL), CR/LF as spaces.
                let raw = args[2];
                let raw = &raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())];
                let mut msg = b"ERR Unknown category '".to_vec();
                msg.extend(raw[..raw.len().min(128)].iter().map(|&b| {
                    if b == b'\r' || b == b'\n' {
                        b' '
                    } else {
                        b
                    }
                }));
                msg.push(b'\'');
                return ctx.error_bytes(&msg);
            };
            let cmds = &ctx.srv.acl.cmds;
            let names: Vec<&str> = cmds
                .walk()
                .filter(|&i| cmds.entries[i].cats & cat != 0)
                .map(|i| cmds.entries[i].full_name.as_str())
                .collect();
            ctx.out.array_len(names.len());
            for n in names {
                ctx.out.bulk(n.as_bytes());
            }
        }
        _ => wrong_form(ctx, args),
    }
}

fn acl_genpass(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return wrong_form(ctx, args);
    }
    let mut bits = 256;
    if let Some(a) = args.get(2) {
        let Some(n) = ctx.parse_i64(a) else { return };
        bits = n;
    }
    if bits <= 0 || bits > 4096 {
        return ctx.error("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096");
    }
    let chars = (bits as usize).div_ceil(4);
    ctx.out
        .bulk(crate::base::text::random_hex(chars).as_bytes());
}

fn acl_log(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 3 {
        return wrong_form(ctx, args);
    }
    let mut count = 10i64;
    if let Some(a) = args.get(2) {
        if eq_ic(a, "RESET") {
            ctx.srv.acl.log.lock().clear();
            return ctx.ok();
        }
        let Some(n) = ctx.parse_i64(a) else { return };
        count = n.max(0);
    }
    let entries = ctx.srv.acl.log.lock().newest(count as usize);
    let now = crate::base::clock::unix_time_ms();
    ctx.out.array_len(entries.len());
    for e in entries {
        ctx.out.map_len(7);
        ctx.out.bulk(b"count");
        ctx.out.int(e.count as i64);
        ctx.out.bulk(b"reason");
        ctx.out.bulk(e.reason.name().as_bytes());
        ctx.out.bulk(b"context");
        ctx.out.bulk(e.context.name().as_bytes());
        ctx.out.bulk(b"object");
        ctx.out.bulk(&e.object);
        ctx.out.bulk(b"username");
        ctx.out.bulk(&e.username);
        ctx.out.bulk(b"age-seconds");
        ctx.out
            .double(now.saturating_sub(e.time_ms) as f64 / 1000.0);
        ctx.out.bulk(b"client-info");
        ctx.out.bulk(e.client_info.as_bytes());
    }
}

fn acl_dryrun(ctx: &mut Ctx, args: &[&[u8]]) {
    let srv = ctx.srv;
    let Some(user) = srv.acl.get(args[2]) else {
        return ctx.error_with_arg("ERR User '", args[2], "' not found");
    };
    let cmd = &args[3..];
    let not_found = |ctx: &mut Ctx| ctx.error_with_arg("ERR Command '", cmd[0], "' not found");
    let Some(mut idx) = srv.table.lookup(cmd[0]) else {
        return not_found(ctx);
    };
    if !srv.table.get(idx).spec.subcommands.is_empty() && cmd.len() >= 2 {
        match srv.table.lookup_sub(idx, cmd[1]) {
            Some(s) => idx = s,
            None => return not_found(ctx),
        }
    }
    let entry = srv.table.get(idx);
    if !entry.spec.arity_ok(cmd.len()) {
        return ctx.error(&errors::wrong_arity(&entry.full_name));
    }
    match check::check(srv, &user, idx, cmd) {
        Ok(()) => ctx.ok(),
        Err(d) => ctx
            .out
            .bulk(check::dryrun_text(srv, idx, cmd, d).as_bytes()),
    }
}

fn acl_load(ctx: &mut Ctx, _args: &[&[u8]]) {
    let path = ctx.settings.aclfile.clone();
    if path.is_empty() {
        return ctx.error(NO_ACL_FILE);
    }
    match check::read_file(ctx.srv, &path) {
        Ok(users) => {
            let old = ctx.srv.acl.replace_all(users);
            // Redis drops every old user but `default`, and with them the
            // connections authenticated as one of them.
            let names: Vec<&[u8]> = old
                .keys()
                .filter(|n| n.as_slice() != b"default")
                .map(|n| n.as_slice())
                .collect();
            check::kill_users(ctx.srv, ctx.client, &names);
            ctx.ok();
        }
        Err(e) => ctx.error(&format!("ERR {e}")),
    }
}

fn acl_save(ctx: &mut Ctx, _args: &[&[u8]]) {
    let path = ctx.settings.aclfile.clone();
    if path.is_empty() {
        return ctx.error(NO_ACL_FILE);
    }
    match check::save_file(ctx.srv, &path) {
        Ok(()) => ctx.ok(),
        Err(e) => {
            crate::base::log::warning(&format!("Saving the ACL file {path}: {e}"));
            ctx.error("ERR There was an error trying to save the ACLs. Please check the server logs for more information");
        }
    }
}
