//! Differential tests: connection and server commands against redis-server.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn ping_echo() {
    diff_text(
        "ping_echo",
        r#"
PING
PING hello
PING "a b"
PING a b
ping
PiNg ""
ECHO hello
ECHO ""
ECHO "\x00\xff\r\n binary"
ECHO
ECHO a b
"#,
    );
}

#[test]
fn select() {
    diff_text(
        "select",
        r#"
SELECT 0
SELECT 15
SELECT 16
SELECT -1
SELECT abc
SELECT 1.5
SELECT " 1"
SELECT 9999999999999999999999
SELECT
SELECT 1 2
"#,
    );
}

#[test]
fn hello() {
    diff_text(
        "hello",
        r#"
HELLO 4
HELLO 1
HELLO abc
HELLO 3 FOO
HELLO 2 SETNAME
HELLO 2 AUTH default
HELLO 2 AUTH default wrong          # type
HELLO 2 AUTH nosuchuser wrong
HELLO 2 SETNAME "bad name"
HELLO 3 SETNAME myname              # type
HELLO                               # type
HELLO 2                             # type
PING
HELLO 3                             # type
PING
ECHO x
@reconnect
"#,
    );
}

#[test]
fn auth_without_password() {
    diff_text(
        "auth_without_password",
        r#"
AUTH
AUTH foo
AUTH default foo
AUTH someone foo
AUTH a b c
"#,
    );
}

#[test]
fn auth_with_password() {
    diff_text_with(
        "auth_with_password",
        r#"
PING
ECHO x
SELECT 1
CONFIG GET port
HELLO 2 AUTH default wrong
AUTH wrong
AUTH default wrong
AUTH nosuchuser secret
PING
AUTH secret
PING
AUTH default secret
@reconnect
HELLO 2 AUTH default secret          # type
PING
@reconnect
RESET
PING
AUTH secret
SELECT 2
RESET
PING
AUTH secret
HELLO 3 AUTH default wrong SETNAME n1
HELLO 2 SETNAME n2 AUTH default secret                # type
PING
QUIT
"#,
        &DiffOpts::new(&[("requirepass", "secret")]),
    );
}

#[test]
fn quit_and_reset() {
    diff_text(
        "quit_and_reset",
        r#"
QUIT
PING
QUIT extra args
PING
SELECT 3
RESET
RESET now
@resp3 HELLO 3                      # type
RESET
ECHO after-reset
"#,
    );
}

#[test]
fn unknown_and_arity() {
    diff_text(
        "unknown_and_arity",
        r#"
NOSUCHCOMMAND
NOSUCHCOMMAND a b "c d"
"" x
CONFIG
CONFIG NOSUCH
CONFIG nosuch a b
CONFIG GET
CONFIG SET port
CONFIG SET maxclients
CONFIG RESETSTAT x
CONFIG REWRITE x
TIME x
MONITOR x
"#,
    );
}

#[test]
fn time_shape() {
    diff(
        &Script::new("time")
            .cmd_mode(&["TIME"], Mode::SameType)
            .check(&["TIME"], |p, r| {
                // Both are [seconds, microseconds] as decimal bulk strings,
                // and the two clocks agree within a few seconds.
                let parse = |x: &Reply| -> Result<(i64, i64), String> {
                    match x {
                        Reply::Value(Value::Array(a)) if a.len() == 2 => {
                            let n = |v: &Value| -> Result<i64, String> {
                                let b = v.as_bytes().ok_or("not a string")?;
                                std::str::from_utf8(b)
                                    .ok()
                                    .and_then(|s| s.parse().ok())
                                    .ok_or_else(|| format!("not a number: {v}"))
                            };
                            Ok((n(&a[0])?, n(&a[1])?))
                        }
                        other => Err(format!("not a 2-array: {other}")),
                    }
                };
                let (ps, pu) = parse(p)?;
                let (rs, _) = parse(r)?;
                if (ps - rs).abs() > 5 || !(0..1_000_000).contains(&pu) {
                    return Err(format!("implausible TIME {ps}.{pu} vs {rs}"));
                }
                Ok(())
            }),
    );
}

#[test]
fn config_get_common() {
    diff_text(
        "config_get_common",
        r#"
CONFIG GET maxclients
CONFIG GET timeout
CONFIG GET databases
CONFIG GET proto-max-bulk-len
CONFIG GET client-query-buffer-limit
CONFIG GET client-output-buffer-limit
CONFIG GET tcp-keepalive
CONFIG GET protected-mode
CONFIG GET requirepass
CONFIG GET slowlog-log-slower-than
CONFIG GET slowlog-max-len
CONFIG GET latency-monitor-threshold
CONFIG GET latency-tracking
CONFIG GET latency-tracking-info-percentiles
CONFIG GET loglevel
CONFIG GET appendonly
CONFIG GET save
CONFIG GET hz
CONFIG GET unixsocket
CONFIG GET unixsocketperm
CONFIG GET enable-debug-command
CONFIG GET daemonize
CONFIG GET tcp-backlog
CONFIG GET nosuchparam
CONFIG GET maxclients timeout                # pairs
CONFIG GET maxclients maxclients
CONFIG GET slowlog-*                          # pairs
CONFIG GET latency-track*                     # pairs
CONFIG GET proto-max-bulk-le?                 # pairs
CONFIG GET tcp-[kb]*                          # pairs
"#,
    );
}

#[test]
fn config_set_common() {
    diff_text(
        "config_set_common",
        r#"
CONFIG SET maxclients 100
CONFIG GET maxclients
CONFIG SET timeout 30 slowlog-max-len 64
CONFIG GET timeout
CONFIG GET slowlog-max-len
CONFIG SET timeout abc
CONFIG SET timeout -1
CONFIG SET nosuchparam 1
CONFIG SET databases 4
CONFIG SET timeout 1 timeout 2
CONFIG SET timeout 5 nosuchparam 1
CONFIG GET timeout
CONFIG SET timeout 5 maxclients abc
CONFIG GET timeout
CONFIG SET proto-max-bulk-len 2mb
CONFIG GET proto-max-bulk-len
CONFIG SET proto-max-bulk-len 1
CONFIG SET client-query-buffer-limit 10mb
CONFIG GET client-query-buffer-limit
CONFIG SET client-output-buffer-limit "normal 1mb 512kb 10"
CONFIG GET client-output-buffer-limit
CONFIG SET client-output-buffer-limit "normal 1mb 512kb"
CONFIG SET client-output-buffer-limit "nosuch 1 1 1"
CONFIG SET loglevel warning
CONFIG GET loglevel
CONFIG SET protected-mode maybe
CONFIG SET latency-tracking-info-percentiles "50 99.9"
CONFIG GET latency-tracking-info-percentiles
CONFIG SET hz 1000
CONFIG GET hz
CONFIG SET hz 10
CONFIG SET slowlog-log-slower-than -2
CONFIG SET maxclients 10000
CONFIG SET appendfsync sometimes
CONFIG SET maxmemory 99999999999999999999
CONFIG GET maxmemory
CONFIG SET maxmemory 99999999999999999999kb
CONFIG GET maxmemory
CONFIG SET maxmemory 0
CONFIG SET proto-max-bulk-len 99999999999999999999
CONFIG SET hash-max-listpack-value 99999999999999999999
CONFIG SET maxmemory-clients 99999999999999999999
CONFIG GET maxmemory-clients
CONFIG SET maxmemory-clients 18446744073709551515
CONFIG SET maxmemory-clients 0
CONFIG SET active-expire-effort -1
CONFIG SET replica-announce-port 70000
CONFIG SET replica-priority -1
CONFIG SET shutdown-timeout -1
CONFIG SET oom-score-adj maybe
CONFIG SET oom-score-adj-values "1 2"
CONFIG SET oom-score-adj-values "1 2 3000"
CONFIG SET oom-score-adj-values "1 +2 03"
CONFIG GET oom-score-adj-values
CONFIG SET oom-score-adj-values "0 200 800"
CONFIG SET active-expire-effort 7
CONFIG GET active-expire-effort
CONFIG SET active-expire-effort 11
CONFIG SET active-expire-effort 1
CONFIG GET supervised
CONFIG SET supervised no
CONFIG GET disable-thp
CONFIG SET disable-thp no
CONFIG GET replica-read-only
CONFIG GET slave-lazy-flush
CONFIG GET propagation-error-behavior
CONFIG SET propagation-error-behavior maybe
CONFIG GET cluster-link-sendbuf-limit
CONFIG SET cluster-link-sendbuf-limit 1kb
CONFIG GET cluster-link-sendbuf-limit
CONFIG SET cluster-link-sendbuf-limit 0
CONFIG GET cluster-allow-pubsubshard-when-down
CONFIG GET repl-disable-tcp-nodelay
CONFIG GET rdb-del-sync-files
CONFIG GET replica-ignore-disk-write-errors
CONFIG SET propagation-error-behavior sometimes
CONFIG SET latency-tracking-info-percentiles "50 abc"
CONFIG SET latency-tracking-info-percentiles "50 101"
CONFIG SET latency-tracking-info-percentiles "50 nan"
CONFIG GET latency-tracking-info-percentiles
CONFIG SET repl-backlog-size 100
CONFIG GET repl-backlog-size
CONFIG SET repl-backlog-size 1mb
CONFIG SET replica-priority 42 slave-announce-ip 10.1.2.3 replica-announce-port 7777 replica-announced no
CONFIG GET replica-priority
CONFIG GET slave-priority
CONFIG GET replica-announce-ip
CONFIG GET replica-announce-port
CONFIG GET replica-announced
CONFIG SET replica-priority 100 slave-announce-ip "" replica-announce-port 0 replica-announced yes
"#,
    );
}

#[test]
fn config_get_name_case() {
    diff_text(
        "config_get_name_case",
        r#"
CONFIG GET MAXCLIENTS
CONFIG GET Timeout
"#,
    );
}

#[test]
fn config_set_error_texts() {
    diff_text(
        "config_set_error_texts",
        r#"
CONFIG SET maxclients 0
CONFIG SET loglevel loud
CONFIG SET latency-tracking-info-percentiles "50 101"
"#,
    );
}

/// CONFIG SET port replies (the rebinding itself is tested end to end in
/// tests/config.rs: one free port cannot be given to both servers here).
#[test]
fn config_set_port() {
    diff_text(
        "config_set_port",
        "CONFIG SET port 99999\nCONFIG SET port abc\nCONFIG SET bind 10.255.255.1\nCONFIG SET port 0\nCONFIG GET port\nPING\n",
    );
}

#[test]
fn hello_noauth_text() {
    diff_text_with(
        "hello_noauth_text",
        "HELLO 3\nHELLO 2\nHELLO\n",
        &DiffOpts::new(&[("requirepass", "secret")]),
    );
}

#[test]
fn misc_server_commands() {
    diff_text(
        "misc_server_commands",
        r#"
CONFIG GET nosuch1 nosuch2
CONFIG SET save ""
CONFIG SET appendonly no
CONFIG SET timeout 0 TIMEOUT 1
CONFIG SET TIMEOUT 3
CONFIG GET timeout
SHUTDOWN PLEASE
SHUTDOWN ABORT
SHUTDOWN NOW ABORT
SELECT 1e3
SELECT +1
SELECT 01
ECHO "\r\n"
PING "\x00"
QUIT                                     # close
CONFIG SET requirepass pw
PING
AUTH pw
PING
@reconnect
PING
AUTH pw
CONFIG SET requirepass ""
@reconnect
PING
"#,
    );
}

#[test]
fn config_help() {
    diff_text("config_help", "CONFIG HELP\nCONFIG help\n");
}

#[test]
fn config_set_odd_args() {
    diff_text(
        "config_set_odd_args",
        "CONFIG SET maxclients 10 timeout\nCONFIG SET maxclients 10 timeout 5 slowlog-max-len\n",
    );
}

#[test]
fn shutdown_conflicting_flags() {
    diff_text(
        "shutdown_conflicting_flags",
        "SHUTDOWN NOSAVE SAVE\nSHUTDOWN SAVE NOSAVE\n",
    );
}
