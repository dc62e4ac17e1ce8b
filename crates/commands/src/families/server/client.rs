//! `CLIENT` and its subcommands: ID, SETNAME, GETNAME, LIST, INFO, KILL,
//! PAUSE, UNPAUSE, REPLY, NO-EVICT, NO-TOUCH, SETINFO, UNBLOCK, HELP.
//!
//! Replies and error texts follow Redis 7.0.15. NO-TOUCH, SETINFO, the
//! MAXAGE filter of KILL and the `lib-name`/`lib-ver` fields of LIST/INFO
//! arrived in Redis 7.2; they follow 7.2's behaviour. TRACKING, CACHING,
//! GETREDIR and TRACKINGINFO parse and answer here; the tracking itself is
//! `services::tracking`.
//!
//! Every CLIENT subcommand carries `KEEPS_CACHING`: as in Redis, a `CLIENT
//! CACHING` choice survives CLIENT commands and applies to the next other
//! command.
//!
//! Clients served by other worker threads are only read through their
//! [`ClientShared`]; `CLIENT KILL` marks them `killed` and pokes their worker,
//! which closes the connection on its own thread.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crate::base::errors;
use crate::base::parse::eq_ic;
use crate::kernel::client::{cflag, ClientShared, ReplyMode};
use crate::kernel::ctx::Ctx;
use crate::kernel::hub::WorkerMsg;
use crate::kernel::server::Pause;
use crate::kernel::spec::{flag, Arg, ArgType, CommandSpec, Docs};

const ACL_CONN: &[&str] = &["connection"];
const F_CONN: u32 = flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::KEEPS_CACHING;
const F_ADMIN: u32 =
    flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE | flag::KEEPS_CACHING;

const ON_OFF: &[Arg] =
    &[Arg::new("enabled", ArgType::OneOf).of(&[Arg::pure("on", "ON"), Arg::pure("off", "OFF")])];

const SUBS: &[CommandSpec] = &[
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(1). Some options may introduce additional complexity.",
            "Enable or disable server assisted client side caching support",
        ),
        ..CommandSpec::new("tracking", -3, F_CONN, client_tracking)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(1)",
            "Instruct the server about tracking or not keys in the next request",
        ),
        ..CommandSpec::new("caching", 3, F_CONN, client_caching)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(1)",
            "Get tracking notifications redirection client ID if any",
        ),
        ..CommandSpec::new("getredir", 2, F_CONN, client_getredir)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(1)",
            "Return information about server assisted client side caching for the current connection",
        ),
        ..CommandSpec::new("trackinginfo", 2, F_CONN, client_trackinginfo)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(log N) where N is the number of client connections",
            "Unblocks a client blocked by a blocking command from a different connection.",
        ),
        ..CommandSpec::new("unblock", -3, F_ADMIN, client_unblock)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(1)",
            "Returns information about the current client connection.",
        ),
        ..CommandSpec::new("info", 2, F_CONN, client_info)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new("O(1)", "Get the current connection name"),
        ..CommandSpec::new("getname", 2, F_CONN, client_getname)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(1)",
            "Set client eviction mode for the current connection",
        ),
        ..CommandSpec::new("no-evict", 3, F_ADMIN, client_no_evict)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::petrel(
            "connection",
            "7.2.0",
            "O(1)",
            "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
        )
        .args(ON_OFF),
        ..CommandSpec::new("no-touch", 3, F_CONN | flag::FAST, client_no_touch)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new("O(1)", "Show helpful text about the different subcommands"),
        ..CommandSpec::new(
            "help",
            2,
            flag::LOADING | flag::STALE | flag::KEEPS_CACHING,
            client_help
        )
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) where N is the number of client connections",
            "Kill the connection of a client",
        ),
        ..CommandSpec::new("kill", -3, F_ADMIN, client_kill)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new("O(1)", "Instruct the server whether to reply to commands"),
        ..CommandSpec::new("reply", 3, F_CONN, client_reply)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new("O(1)", "Set the current connection name"),
        ..CommandSpec::new("setname", 3, F_CONN, client_setname)
    },
    CommandSpec {
        acl: ACL_CONN,
        tips: &["request_policy:all_nodes", "response_policy:all_succeeded"],
        docs: Docs::petrel(
            "connection",
            "7.2.0",
            "O(1)",
            "Sets information specific to the client or connection.",
        )
        .args(&[Arg::new("attr", ArgType::OneOf).of(&[
            Arg::new("libname", ArgType::String).token("LIB-NAME"),
            Arg::new("libver", ArgType::String).token("LIB-VER"),
        ])]),
        ..CommandSpec::new("setinfo", 4, F_CONN, client_setinfo)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) Where N is the number of paused clients",
            "Resume processing of clients that were paused",
        ),
        ..CommandSpec::new("unpause", 2, F_ADMIN, client_unpause)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new("O(1)", "Returns the client ID for the current connection"),
        ..CommandSpec::new("id", 2, F_CONN, client_id)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(1)",
            "Stop processing commands from clients for some time",
        ),
        ..CommandSpec::new("pause", -3, F_ADMIN, client_pause)
    },
    CommandSpec {
        acl: ACL_CONN,
        docs: Docs::new(
            "O(N) where N is the number of client connections",
            "Get the list of client connections",
        ),
        ..CommandSpec::new("list", -2, F_ADMIN, client_list)
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    docs: Docs::new(
        "Depends on subcommand.",
        "A container for client connection commands",
    ),
    handler: None,
    subcommands: SUBS,
    ..CommandSpec::new("client", -2, 0, client_help)
}];

const HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "    * ID <client-id>",
    "      Kill connections by client id.",
    "    * MAXAGE <maxage>",
    "      Kill connections older than the specified age.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "HELP",
    "    Prints this help.",
];

/// Replies with a help text as Redis does: an array of status lines.
fn client_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(HELP);
}

fn client_id(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.out.int(ctx.client.id as i64);
}

fn client_getname(ctx: &mut Ctx, _args: &[&[u8]]) {
    let name = ctx.client.shared.strings.lock().name.clone();
    if name.is_empty() {
        ctx.out.null_bulk();
    } else {
        ctx.out.bulk(&name);
    }
}

fn client_setname(ctx: &mut Ctx, args: &[&[u8]]) {
    if let Err(e) = crate::services::connection::validate_client_name(args[2]) {
        return ctx.error(e);
    }
    ctx.client.shared.strings.lock().name = args[2].to_vec();
    ctx.ok();
}

fn client_setinfo(ctx: &mut Ctx, args: &[&[u8]]) {
    let is_name = eq_ic(args[2], "LIB-NAME");
    if !is_name && !eq_ic(args[2], "LIB-VER") {
        return ctx.error(&crate::base::errors::unrecognized_option(
            &String::from_utf8_lossy(args[2]),
        ));
    }
    if args[3].iter().any(|&b| !(b'!'..=b'~').contains(&b)) {
        return ctx.error(&crate::base::errors::no_special_characters(
            &String::from_utf8_lossy(args[2]),
        ));
    }
    {
        let mut s = ctx.client.shared.strings.lock();
        if is_name {
            s.lib_name = args[3].to_vec();
        } else {
            s.lib_ver = args[3].to_vec();
        }
    }
    ctx.ok();
}

/// Parses ON|OFF for NO-EVICT / NO-TOUCH.
fn on_off(arg: &[u8]) -> Option<bool> {
    if eq_ic(arg, "ON") {
        Some(true)
    } else if eq_ic(arg, "OFF") {
        Some(false)
    } else {
        None
    }
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: ends another client's blocking wait
/// with its timeout reply or an UNBLOCKED error; 1 if it was blocked.
fn client_unblock(ctx: &mut Ctx, args: &[&[u8]]) {
    // Redis 7.0 matches UNBLOCK with 3 or 4 arguments only; more falls
    // through to the unknown-subcommand reply, before the id is read.
    if args.len() > 4 {
        return ctx.error(&errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "CLIENT",
        ));
    }
    // The reason is read before the id, as Redis 7.0 does.
    let error = match args.get(3) {
        None => false,
        Some(a) if a.eq_ignore_ascii_case(b"timeout") => false,
        Some(a) if a.eq_ignore_ascii_case(b"error") => true,
        Some(_) => return ctx.error(errors::ERR_CLIENT_UNBLOCK_REASON_SHOULD_TIMEOUT_ERROR),
    };
    let Some(id) = ctx.parse_i64(args[2]) else {
        return;
    };
    let srv = ctx.srv;
    let done = srv.blocking.of_client(id as u64).and_then(|w| {
        let bytes = crate::services::blocking::unblock_with(srv, &w, error)?;
        srv.hub.send(
            w.worker,
            WorkerMsg::Unblock {
                client_id: w.client_id,
                bytes,
            },
        );
        Some(())
    });
    ctx.out.int(done.is_some() as i64);
}

/// CLIENT TRACKING on|off [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN]
/// [OPTOUT] [NOLOOP]: options are parsed first (Redis's order of errors).
fn client_tracking(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut o = crate::services::tracking::Options::default();
    let mut j = 3;
    while j < args.len() {
        let a = args[j];
        let more = j + 1 < args.len();
        if eq_ic(a, "REDIRECT") && more {
            j += 1;
            if o.redirect != 0 {
                return ctx.error(errors::ERR_TRACKING_ONE_REDIRECT);
            }
            let Some(id) = ctx.parse_i64(args[j]) else {
                return;
            };
            match u64::try_from(id)
                .ok()
                .and_then(|id| ctx.srv.clients.get(id))
            {
                Some(c) if !c.killed.load(Relaxed) => o.redirect = c.id,
                _ => return ctx.error(errors::ERR_TRACKING_NO_REDIRECT_CLIENT),
            }
        } else if eq_ic(a, "BCAST") {
            o.bcast = true;
        } else if eq_ic(a, "OPTIN") {
            o.optin = true;
        } else if eq_ic(a, "OPTOUT") {
            o.optout = true;
        } else if eq_ic(a, "NOLOOP") {
            o.noloop = true;
        } else if eq_ic(a, "PREFIX") && more {
            j += 1;
            o.prefixes.push(args[j].to_vec());
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    if eq_ic(args[2], "ON") {
        if let Err(e) = crate::services::tracking::enable(ctx.srv, ctx.client, o) {
            return ctx.error(&e);
        }
    } else if eq_ic(args[2], "OFF") {
        crate::services::tracking::disable(ctx.srv, ctx.client);
    } else {
        return ctx.syntax_error();
    }
    ctx.ok();
}

/// CLIENT CACHING yes|no: applies to the next command (or transaction).
fn client_caching(ctx: &mut Ctx, args: &[&[u8]]) {
    let t = &mut ctx.client.tracking;
    if !t.on {
        return ctx.error(errors::ERR_CACHING_NOT_TRACKING);
    }
    if eq_ic(args[2], "YES") {
        if !t.optin {
            return ctx.error(errors::ERR_CACHING_YES_NEEDS_OPTIN);
        }
    } else if eq_ic(args[2], "NO") {
        if !t.optout {
            return ctx.error(errors::ERR_CACHING_NO_NEEDS_OPTOUT);
        }
    } else {
        return ctx.syntax_error();
    }
    t.caching = true;
    ctx.ok();
}

fn client_getredir(ctx: &mut Ctx, _args: &[&[u8]]) {
    let t = &ctx.client.tracking;
    let v = if t.on { t.redirect as i64 } else { -1 };
    ctx.out.int(v);
}

fn client_trackinginfo(ctx: &mut Ctx, _args: &[&[u8]]) {
    let t = &ctx.client.tracking;
    let broken = ctx.client.shared.has_flag(cflag::TRACKING_BROKEN_REDIR);
    let mut flags: Vec<&str> = vec![if t.on { "on" } else { "off" }];
    if t.bcast {
        flags.push("bcast");
    }
    if t.optin {
        flags.push("optin");
        if t.caching {
            flags.push("caching-yes");
        }
    }
    if t.optout {
        flags.push("optout");
        if t.caching {
            flags.push("caching-no");
        }
    }
    if t.noloop {
        flags.push("noloop");
    }
    if t.on && broken {
        flags.push("broken_redirect");
    }
    let redirect = if t.on { t.redirect as i64 } else { -1 };
    let out = &mut *ctx.out;
    out.map_len(3);
    out.bulk(b"flags");
    out.set_len(flags.len());
    for f in flags {
        out.bulk(f.as_bytes());
    }
    out.bulk(b"redirect");
    out.int(redirect);
    out.bulk(b"prefixes");
    out.array_len(t.prefixes.len());
    for p in &t.prefixes {
        out.bulk(p);
    }
}

fn client_no_evict(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(on) = on_off(args[2]) else {
        return ctx.syntax_error();
    };
    ctx.client.no_evict = on;
    ctx.client.shared.set_flag(cflag::NO_EVICT, on);
    ctx.ok();
}

fn client_no_touch(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(on) = on_off(args[2]) else {
        return ctx.syntax_error();
    };
    ctx.client.no_touch = on;
    ctx.client.shared.set_flag(cflag::NO_TOUCH, on);
    ctx.ok();
}

fn client_reply(ctx: &mut Ctx, args: &[&[u8]]) {
    let a = args[2];
    if eq_ic(a, "ON") {
        ctx.client.reply_mode = ReplyMode::On;
        ctx.ok();
    } else if eq_ic(a, "OFF") {
        ctx.client.reply_mode = ReplyMode::Off;
    } else if eq_ic(a, "SKIP") {
        if ctx.client.reply_mode != ReplyMode::Off {
            ctx.client.reply_mode = ReplyMode::SkipNext;
        }
    } else {
        ctx.syntax_error();
    }
}

fn client_pause(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(ms) = crate::base::parse::parse_i64(args[2]) else {
        return ctx.error(errors::ERR_TIMEOUT_NOT_INTEGER_OUT_OF_RANGE);
    };
    if ms < 0 {
        return ctx.error(errors::ERR_TIMEOUT_NEGATIVE);
    }
    let all = match args.len() {
        3 => true,
        4 if eq_ic(args[3], "ALL") => true,
        4 if eq_ic(args[3], "WRITE") => false,
        4 => return ctx.error(errors::ERR_CLIENT_PAUSE_MODE_MUST_WRITE_ALL),
        _ => return ctx.syntax_error(),
    };
    let until = ctx.now_ms.saturating_add(ms as u64);
    // Like Redis: an active pause is only ever extended and made stricter.
    let cur = ctx
        .srv
        .pause_for(crate::kernel::server::PausePurpose::Client);
    let active = cur.until_ms > ctx.now_ms;
    let p = Pause {
        until_ms: if active {
            cur.until_ms.max(until)
        } else {
            until
        },
        all: all || (active && cur.all),
    };
    ctx.srv.set_pause(p);
    ctx.ok();
}

fn client_unpause(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.srv.set_pause(Pause::default());
    ctx.ok();
}

/// `CLIENT LIST` / `CLIENT KILL` client type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientType {
    Normal,
    Replica,
    PubSub,
    Master,
}

impl ClientType {
    /// Redis's `getClientTypeByName` (accepts "slave" for replica).
    pub fn parse(name: &[u8]) -> Option<ClientType> {
        if eq_ic(name, "normal") {
            Some(ClientType::Normal)
        } else if eq_ic(name, "replica") || eq_ic(name, "slave") {
            Some(ClientType::Replica)
        } else if eq_ic(name, "pubsub") {
            Some(ClientType::PubSub)
        } else if eq_ic(name, "master") {
            Some(ClientType::Master)
        } else {
            None
        }
    }

    /// The type of a client as Redis classifies it for these filters.
    pub fn of(c: &ClientShared) -> ClientType {
        let f = c.flags.load(Relaxed);
        if f & cflag::MASTER != 0 {
            ClientType::Master
        } else if f & cflag::REPLICA != 0 && f & cflag::MONITOR == 0 {
            ClientType::Replica
        } else if f & cflag::PUBSUB != 0
            || c.sub.load(Relaxed) + c.psub.load(Relaxed) + c.ssub.load(Relaxed) > 0
        {
            ClientType::PubSub
        } else {
            ClientType::Normal
        }
    }
}

fn unknown_type(ctx: &mut Ctx, name: &[u8]) {
    ctx.error_with_arg("ERR Unknown client type '", name, "'");
}

pub use crate::services::client_info::{client_line, laddr_of};

fn client_info(ctx: &mut Ctx, _args: &[&[u8]]) {
    let mut line = client_line(ctx.srv, &ctx.client.shared, ctx.now_ms);
    line.push('\n');
    ctx.out.verbatim(b"txt", line.as_bytes());
}

fn client_list(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut want_type = None;
    let mut ids: Option<Vec<u64>> = None;
    if args.len() == 4 && eq_ic(args[2], "TYPE") {
        match ClientType::parse(args[3]) {
            Some(t) => want_type = Some(t),
            None => return unknown_type(ctx, args[3]),
        }
    } else if args.len() > 3 && eq_ic(args[2], "ID") {
        let mut v = Vec::new();
        for a in &args[3..] {
            // Any integer, as Redis 7.0: one below 1 matches no client.
            match crate::base::parse::parse_i64(a) {
                Some(n) if n > 0 => v.push(n as u64),
                Some(_) => {}
                None => return ctx.error(errors::ERR_INVALID_CLIENT_ID),
            }
        }
        ids = Some(v);
    } else if args.len() != 2 {
        return ctx.syntax_error();
    }
    let clients: Vec<Arc<ClientShared>> = match &ids {
        Some(ids) => ids
            .iter()
            .filter_map(|&id| ctx.srv.clients.get(id))
            .collect(),
        None => ctx.srv.clients.all(),
    };
    let mut text = String::new();
    for c in clients {
        if want_type.is_some_and(|t| ClientType::of(&c) != t) {
            continue;
        }
        text.push_str(&client_line(ctx.srv, &c, ctx.now_ms));
        text.push('\n');
    }
    ctx.out.verbatim(b"txt", text.as_bytes());
}

/// Filters of `CLIENT KILL` (new form).
#[derive(Default)]
struct KillFilter {
    addr: Option<Vec<u8>>,
    laddr: Option<Vec<u8>>,
    id: Option<u64>,
    ctype: Option<ClientType>,
    user: Option<Vec<u8>>,
    max_age: Option<u64>,
    skipme: bool,
}

impl KillFilter {
    fn matches(&self, c: &ClientShared, me: u64, now_ms: u64) -> bool {
        if self.skipme && c.id == me || c.killed.load(Relaxed) {
            return false;
        }
        if self.addr.as_ref().is_some_and(|a| a != c.addr.as_bytes()) {
            return false;
        }
        if self
            .laddr
            .as_ref()
            .is_some_and(|a| a.as_slice() != laddr_of(c).as_bytes())
        {
            return false;
        }
        if self.id.is_some_and(|id| id != c.id) {
            return false;
        }
        if self.ctype.is_some_and(|t| ClientType::of(c) != t) {
            return false;
        }
        if self
            .user
            .as_ref()
            .is_some_and(|u| u.as_slice() != c.strings.lock().user.as_bytes())
        {
            return false;
        }
        if self
            .max_age
            .is_some_and(|a| now_ms.saturating_sub(c.created_ms) / 1000 < a)
        {
            return false;
        }
        true
    }
}

/// Closes client `c`: the caller after its reply, anyone else right away
/// on its own worker thread.
pub fn kill_client(ctx: &mut Ctx, c: &ClientShared) {
    if c.id == ctx.client.id {
        ctx.client.close_after_reply = true;
        c.set_flag(cflag::CLOSE_AFTER_REPLY, true);
        return;
    }
    c.killed.store(true, Relaxed);
    c.set_flag(cflag::CLOSE_ASAP, true);
    crate::services::replication::close_killed_link(ctx.srv, c);
    ctx.srv
        .hub
        .send(c.worker, WorkerMsg::Poke { client_id: c.id });
}

fn client_kill(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() == 3 {
        // Old form: CLIENT KILL addr:port.
        let found = ctx
            .srv
            .clients
            .all()
            .into_iter()
            .find(|c| c.addr.as_bytes() == args[2] && !c.killed.load(Relaxed));
        return match found {
            Some(c) => {
                kill_client(ctx, &c);
                ctx.ok();
            }
            None => ctx.error(errors::ERR_NO_SUCH_CLIENT),
        };
    }
    let mut f = KillFilter {
        skipme: true,
        ..Default::default()
    };
    let mut i = 2;
    while i < args.len() {
        if i + 1 >= args.len() {
            return ctx.syntax_error();
        }
        let (opt, val) = (args[i], args[i + 1]);
        if eq_ic(opt, "ID") {
            match crate::base::parse::parse_i64(val) {
                Some(n) if n > 0 => f.id = Some(n as u64),
                _ => return ctx.error(errors::ERR_CLIENT_ID_SHOULD_GREATER_THAN_0),
            }
        } else if eq_ic(opt, "TYPE") {
            match ClientType::parse(val) {
                Some(t) => f.ctype = Some(t),
                None => return unknown_type(ctx, val),
            }
        } else if eq_ic(opt, "ADDR") {
            f.addr = Some(val.to_vec());
        } else if eq_ic(opt, "LADDR") {
            f.laddr = Some(val.to_vec());
        } else if eq_ic(opt, "USER") {
            if ctx.srv.acl.get(val).is_none() {
                return ctx.error(&crate::base::errors::no_such_user(
                    &String::from_utf8_lossy(val),
                ));
            }
            f.user = Some(val.to_vec());
        } else if eq_ic(opt, "SKIPME") {
            if eq_ic(val, "yes") {
                f.skipme = true;
            } else if eq_ic(val, "no") {
                f.skipme = false;
            } else {
                return ctx.syntax_error();
            }
        } else if eq_ic(opt, "MAXAGE") {
            match crate::base::parse::parse_i64(val) {
                Some(n) if n >= 0 => f.max_age = Some(n as u64),
                _ => return ctx.error(crate::base::errors::ERR_NOT_INT),
            }
        } else {
            return ctx.syntax_error();
        }
        i += 2;
    }
    let me = ctx.client.id;
    let now = ctx.now_ms;
    let victims: Vec<Arc<ClientShared>> = ctx
        .srv
        .clients
        .all()
        .into_iter()
        .filter(|c| f.matches(c, me, now))
        .collect();
    for c in &victims {
        kill_client(ctx, c);
    }
    ctx.out.int(victims.len() as i64);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shared(id: u64) -> ClientShared {
        ClientShared::new(
            id,
            "127.0.0.1:5000".into(),
            "127.0.0.1:6379".into(),
            9,
            0,
            1_000,
        )
    }

    #[test]
    fn types() {
        assert_eq!(ClientType::parse(b"SLAVE"), Some(ClientType::Replica));
        assert_eq!(ClientType::parse(b"Normal"), Some(ClientType::Normal));
        assert_eq!(ClientType::parse(b"x"), None);
        let c = shared(1);
        assert_eq!(ClientType::of(&c), ClientType::Normal);
        c.sub.store(1, Relaxed);
        assert_eq!(ClientType::of(&c), ClientType::PubSub);
    }

    #[test]
    fn kill_filter_matches() {
        let c = shared(7);
        let mut f = KillFilter {
            skipme: true,
            ..Default::default()
        };
        assert!(f.matches(&c, 1, 5_000));
        assert!(!f.matches(&c, 7, 5_000));
        f.addr = Some(b"127.0.0.1:5000".to_vec());
        assert!(f.matches(&c, 1, 5_000));
        f.laddr = Some(b"127.0.0.1:1".to_vec());
        assert!(!f.matches(&c, 1, 5_000));
        f.laddr = None;
        f.max_age = Some(5);
        assert!(!f.matches(&c, 1, 5_000));
        assert!(f.matches(&c, 1, 6_000));
    }

    #[test]
    fn line_fields() {
        let srv = crate::kernel::server::Server::without_commands(
            crate::kernel::config::Settings::default(),
        );
        let c = shared(3);
        c.strings.lock().name = b"app".to_vec();
        let line = client_line(&srv, &c, 3_500);
        let keys: Vec<&str> = line
            .split(' ')
            .map(|kv| kv.split_once('=').unwrap().0)
            .collect();
        assert_eq!(
            keys.join(" "),
            "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp lib-name lib-ver"
        );
        assert!(line.starts_with(
            "id=3 addr=127.0.0.1:5000 laddr=127.0.0.1:6379 fd=9 name=app age=2 idle=2 flags=N db=0"
        ));
        assert!(line.contains(" cmd=NULL user=default redir=-1 resp=2 "));
    }
}
