//! Secrets and protected settings, compared with redis-server 7.0:
//! SLOWLOG and MONITOR show passwords (CONFIG SET requirepass/masterauth,
//! AUTH, HELLO ... AUTH) as `(redacted)`; CONFIG SET refuses protected
//! settings (`dir`) unless `enable-protected-configs` allows it; the
//! replication settings read as Redis's when there is no master.

mod common;
use std::time::Duration;

use common::*;

/// The argument lists of every SLOWLOG entry, oldest first, after running
/// `cmds` with every command logged.
fn slowlog_args(port: u16, cmds: &[&[&str]]) -> Vec<Vec<String>> {
    let mut c = RawConn::tcp(port);
    c.cmd(&["CONFIG", "SET", "slowlog-log-slower-than", "0"]);
    c.cmd(&["SLOWLOG", "RESET"]);
    for cmd in cmds {
        c.cmd(cmd);
    }
    let entries = match c.cmd(&["SLOWLOG", "GET", "100"]) {
        Value::Array(e) => e,
        v => panic!("SLOWLOG GET: {v}"),
    };
    let mut out: Vec<Vec<String>> = entries
        .iter()
        .map(|e| match e {
            Value::Array(f) => match &f[3] {
                Value::Array(args) => args.iter().map(|a| a.to_string()).collect(),
                v => panic!("entry args: {v}"),
            },
            v => panic!("entry: {v}"),
        })
        .collect();
    out.reverse();
    out
}

const SECRET_COMMANDS: &[&[&str]] = &[
    &["CONFIG", "SET", "requirepass", "s3cret"],
    &["AUTH", "s3cret"],
    &["AUTH", "default", "s3cret"],
    &["AUTH", "nosuchuser", "wrong"],
    &["HELLO", "2", "AUTH", "default", "s3cret", "SETNAME", "me"],
    &["CONFIG", "SET", "maxmemory-samples", "6", "requirepass", ""],
    &["CONFIG", "SET", "masterauth", "x"],
    &["ECHO", "visible"],
];

#[test]
fn slowlog_redacts_passwords() {
    let p = TestServer::start(&[]);
    let Some(r) = RefRedis::start() else {
        return;
    };
    let got = slowlog_args(p.port(), SECRET_COMMANDS);
    let want = slowlog_args(r.port(), SECRET_COMMANDS);
    assert_eq!(got, want, "petrel (left) vs redis-server (right)");
    assert!(got.iter().flatten().all(|a| !a.contains("s3cret")));
}

/// What a MONITOR client sees for `cmds`, with the timestamp and client
/// address of each line removed.
fn monitor_lines(port: u16, cmds: &[&[&str]]) -> Vec<String> {
    let mut m = RawConn::tcp(port);
    m.cmd(&["MONITOR"]);
    let mut c = RawConn::tcp(port);
    for cmd in cmds {
        c.cmd(cmd);
    }
    c.cmd(&["ECHO", "end"]);
    let mut out = Vec::new();
    loop {
        match m.read_reply_within(Duration::from_secs(2)) {
            Reply::Value(Value::Simple(l)) => {
                let line = String::from_utf8_lossy(&l).into_owned();
                // `1700000000.123456 [0 127.0.0.1:5555] "cmd" ...`
                let args = line
                    .split_once("] ")
                    .map(|(_, a)| a.to_string())
                    .unwrap_or(line);
                let done = args == "\"ECHO\" \"end\"";
                out.push(args);
                if done {
                    break;
                }
            }
            other => {
                out.push(other.to_string());
                break;
            }
        }
    }
    out
}

#[test]
fn monitor_redacts_passwords() {
    let p = TestServer::start(&[]);
    let Some(r) = RefRedis::start() else {
        return;
    };
    let got = monitor_lines(p.port(), SECRET_COMMANDS);
    let want = monitor_lines(r.port(), SECRET_COMMANDS);
    assert_eq!(got, want, "petrel (left) vs redis-server (right)");
    assert!(got.iter().all(|a| !a.contains("s3cret")));
}

#[test]
fn protected_and_replication_settings() {
    diff_text(
        "protected",
        r#"
CONFIG GET enable-protected-configs
CONFIG SET enable-protected-configs yes
CONFIG SET dir /tmp
CONFIG SET maxmemory-samples 7 dir /tmp
CONFIG GET maxmemory-samples
CONFIG GET replicaof
CONFIG GET slaveof
CONFIG SET replicaof "127.0.0.1 6379"
CONFIG SET slaveof ""
"#,
    );
}

#[test]
fn protected_settings_allowed_when_enabled() {
    let opts = DiffOpts::new(&[("enable-protected-configs", "yes")]);
    diff_text_with(
        "protected_enabled",
        r#"
CONFIG GET enable-protected-configs
CONFIG SET dir /tmp
CONFIG GET dir
"#,
        &opts,
    );
}
