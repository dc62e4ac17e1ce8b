//! Connection commands: PING, ECHO, QUIT, RESET, HELLO, AUTH, SELECT.
//!
//! This file is also the reference for how a family is written: handlers are
//! plain functions `fn(&mut Ctx, &[&[u8]])`, specs are `const` data with
//! Redis 7.0's arity, flags, ACL categories and docs, and the family's
//! `COMMANDS` slice is listed in `table::FAMILIES`.

use resp::Protocol;

use crate::base::errors;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        acl: &["fast", "connection"],
        docs: Docs::new("O(1)", "Ping the server"),
        ..CommandSpec::new(
            "ping",
            -1,
            flag::FAST | flag::SUBSCRIBED_OK | flag::DISK_ERROR_PROBE,
            ping,
        )
    },
    CommandSpec {
        acl: &["fast", "connection"],
        docs: Docs::new("O(1)", "Echo the given string"),
        ..CommandSpec::new("echo", 2, flag::LOADING | flag::STALE | flag::FAST, echo)
    },
    CommandSpec {
        acl: &["fast", "connection"],
        docs: Docs::new("O(1)", "Close the connection"),
        ..CommandSpec::new(
            "quit",
            -1,
            flag::ALLOW_BUSY
                | flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::FAST
                | flag::NO_AUTH
                | flag::SUBSCRIBED_OK
                | flag::NOT_QUEUED
                | flag::ENDS_TX,
            quit,
        )
    },
    CommandSpec {
        acl: &["fast", "connection"],
        docs: Docs::new("O(1)", "Reset the connection"),
        ..CommandSpec::new(
            "reset",
            1,
            flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::FAST
                | flag::NO_AUTH
                | flag::ALLOW_BUSY
                | flag::SUBSCRIBED_OK
                | flag::NOT_QUEUED
                | flag::ENDS_TX,
            reset,
        )
    },
    CommandSpec {
        acl: &["fast", "connection"],
        docs: Docs::new("O(1)", "Handshake with Redis"),
        redact: Some(redact_hello),
        ..CommandSpec::new(
            "hello",
            -1,
            flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::FAST
                | flag::NO_AUTH
                | flag::SENTINEL_OK
                | flag::ALLOW_BUSY,
            hello,
        )
    },
    CommandSpec {
        acl: &["fast", "connection"],
        docs: Docs::new(
            "O(N) where N is the number of passwords defined for the user",
            "Authenticate to the server",
        ),
        redact: Some(redact_auth),
        ..CommandSpec::new(
            "auth",
            -2,
            flag::NOSCRIPT
                | flag::LOADING
                | flag::STALE
                | flag::FAST
                | flag::NO_AUTH
                | flag::SENTINEL_OK
                | flag::ALLOW_BUSY,
            auth,
        )
    },
    CommandSpec {
        acl: &["fast", "connection"],
        docs: Docs::new(
            "O(1)",
            "Change the selected database for the current connection",
        ),
        ..CommandSpec::new(
            "select",
            2,
            flag::LOADING | flag::STALE | flag::FAST,
            select,
        )
    },
];

fn ping(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 2 {
        return ctx.wrong_arity();
    }
    let subscribed = ctx
        .client
        .shared
        .sub
        .load(std::sync::atomic::Ordering::Relaxed)
        + ctx
            .client
            .shared
            .psub
            .load(std::sync::atomic::Ordering::Relaxed)
        + ctx
            .client
            .shared
            .ssub
            .load(std::sync::atomic::Ordering::Relaxed)
        > 0;
    if subscribed && !ctx.resp3() {
        // RESP2 subscribed mode answers with a "pong" message array.
        ctx.out.array_len(2);
        ctx.out.bulk(b"pong");
        ctx.out.bulk(args.get(1).copied().unwrap_or(b""));
        return;
    }
    match args.get(1) {
        Some(m) => ctx.out.bulk(m),
        None => ctx.out.simple("PONG"),
    }
}

fn echo(ctx: &mut Ctx, args: &[&[u8]]) {
    ctx.out.bulk(args[1]);
}

fn quit(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.ok();
    ctx.client.close_after_reply = true;
}

fn reset(ctx: &mut Ctx, _args: &[&[u8]]) {
    let c = &mut *ctx.client;
    c.set_db(0);
    c.set_protocol(Protocol::Resp2);
    ctx.out.set_protocol(Protocol::Resp2);
    c.reply_mode = crate::kernel::client::ReplyMode::On;
    c.no_evict = false;
    c.no_touch = false;
    crate::services::acl::reset_user(ctx.srv, c);
    c.shared.strings.lock().name.clear();
    c.shared.set_flag(
        crate::kernel::client::cflag::NO_EVICT | crate::kernel::client::cflag::NO_TOUCH,
        false,
    );
    crate::services::connection::reset(ctx.srv, c);
    ctx.out.simple("RESET");
}

/// Authenticates as `user` (the default user when `None`, AUTH's
/// one-argument form) through the ACL; replies with Redis's error on
/// failure. True on success.
fn check_password(ctx: &mut Ctx, user: Option<&[u8]>, pass: &[u8], command: &[u8]) -> bool {
    if user.is_none() && ctx.srv.acl.default_user().nopass {
        ctx.error(errors::ERR_AUTH_WITHOUT_PASSWORD);
        return false;
    }
    let name = user.unwrap_or(b"default");
    if crate::services::acl::authenticate(ctx.srv, ctx.client, name, pass, command) {
        return true;
    }
    ctx.error(errors::WRONGPASS);
    false
}

fn auth(ctx: &mut Ctx, args: &[&[u8]]) {
    match args.len() {
        2 => {
            if check_password(ctx, None, args[1], args[0]) {
                ctx.ok();
            }
        }
        3 => {
            if check_password(ctx, Some(args[1]), args[2], args[0]) {
                ctx.ok();
            }
        }
        _ => ctx.syntax_error(),
    }
}

fn hello(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut proto = None;
    let mut i = 1;
    if args.len() >= 2 {
        let v = crate::base::parse::parse_i64(args[1]);
        match v {
            Some(2) => proto = Some(Protocol::Resp2),
            Some(3) => proto = Some(Protocol::Resp3),
            Some(_) => return ctx.error(errors::NOPROTO),
            None => return ctx.error(errors::ERR_PROTOCOL_VERSION_NOT_INTEGER_OUT_OF_RANGE),
        }
        i = 2;
    }
    let mut auth: Option<(&[u8], &[u8])> = None;
    let mut setname: Option<&[u8]> = None;
    while i < args.len() {
        let more = args.len() - i - 1;
        if eq_ic(args[i], "AUTH") && more >= 2 {
            auth = Some((args[i + 1], args[i + 2]));
            i += 3;
        } else if eq_ic(args[i], "SETNAME") && more >= 1 {
            setname = Some(args[i + 1]);
            i += 2;
        } else {
            return ctx.error(&crate::base::errors::hello_syntax(
                &String::from_utf8_lossy(args[i]),
            ));
        }
    }
    if let Some((u, p)) = auth {
        if !check_password(ctx, Some(u), p, args[0]) {
            return;
        }
    }
    if !ctx.client.authenticated && ctx.srv.acl.auth_required() {
        return ctx.error(errors::NOAUTH_HELLO);
    }
    if let Some(n) = setname {
        if let Err(e) = crate::services::connection::validate_client_name(n) {
            return ctx.error(e);
        }
        ctx.client.shared.strings.lock().name = n.to_vec();
    }
    if let Some(p) = proto {
        ctx.client.set_protocol(p);
        ctx.out.set_protocol(p);
    }
    ctx.out.map_len(7);
    ctx.out.bulk(b"server");
    ctx.out.bulk(b"redis");
    ctx.out.bulk(b"version");
    ctx.out.bulk(crate::REDIS_VERSION.as_bytes());
    ctx.out.bulk(b"proto");
    ctx.out.int(if ctx.resp3() { 3 } else { 2 });
    ctx.out.bulk(b"id");
    ctx.out.int(ctx.client.id as i64);
    ctx.out.bulk(b"mode");
    ctx.out.bulk(b"standalone");
    ctx.out.bulk(b"role");
    ctx.out.bulk(b"master");
    ctx.out.bulk(b"modules");
    ctx.out.array_len(0);
}

fn select(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(n) = crate::base::parse::parse_i64(args[1]) else {
        return ctx.error(crate::base::errors::ERR_NOT_INT);
    };
    // Redis reads the index as an int first.
    if n < i32::MIN as i64 || n > i32::MAX as i64 {
        return ctx.error(crate::base::errors::ERR_OUT_OF_RANGE_I32);
    }
    if ctx.settings.cluster.enabled && n != 0 {
        return ctx.error("ERR SELECT is not allowed in cluster mode");
    }
    if n < 0 || n as usize >= ctx.settings.databases {
        return ctx.error(crate::base::errors::ERR_DB_INDEX);
    }
    ctx.client.set_db(n as usize);
    ctx.ok();
}

/// AUTH's arguments hidden from MONITOR and SLOWLOG: the user name too, as
/// Redis 7.0 does.
fn redact_auth(args: &[&[u8]]) -> Vec<usize> {
    (1..args.len()).collect()
}

/// HELLO ... AUTH <user> <pass>: the two arguments after AUTH.
fn redact_hello(args: &[&[u8]]) -> Vec<usize> {
    match args.iter().position(|a| eq_ic(a, "AUTH")) {
        Some(i) => (i + 1..args.len().min(i + 3)).collect(),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod redact_tests {
    use super::*;

    fn shown<'a>(args: &[&'a [u8]], hide: Vec<usize>) -> Vec<&'a [u8]> {
        let mut v = args.to_vec();
        for i in hide {
            v[i] = b"(redacted)";
        }
        v
    }

    #[test]
    fn passwords_are_redacted() {
        let auth: Vec<&[u8]> = vec![b"AUTH", b"user", b"secret"];
        assert_eq!(
            shown(&auth, redact_auth(&auth)),
            vec![&b"AUTH"[..], b"(redacted)", b"(redacted)"]
        );
        let hello: Vec<&[u8]> = vec![b"HELLO", b"3", b"auth", b"u", b"p", b"SETNAME", b"n"];
        assert_eq!(
            shown(&hello, redact_hello(&hello)),
            vec![
                &b"HELLO"[..],
                b"3",
                b"auth",
                b"(redacted)",
                b"(redacted)",
                b"SETNAME",
                b"n"
            ]
        );
        let plain: Vec<&[u8]> = vec![b"HELLO", b"3"];
        assert!(redact_hello(&plain).is_empty());
    }
}
