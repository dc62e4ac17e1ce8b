//! Helpers the cluster suites share (cluster_bus, cluster_failover,
//! cluster_reshard, cluster_tls): reading a reply as text, one command on
//! a fresh connection, a node's id, CLUSTER NODES as a table, the bus
//! port, whether a tool is installed, and waiting for a condition with a
//! deadline (never a timing claim).

use std::time::{Duration, Instant};

use super::{Server, Value};

/// A bulk, verbatim or simple reply as text (anything else panics).
pub fn text(v: Value) -> String {
    match v {
        Value::Bulk(b) | Value::Verbatim { data: b, .. } | Value::Simple(b) => {
            String::from_utf8_lossy(&b).into_owned()
        }
        other => panic!("not text: {other:?}"),
    }
}

/// `args` on a new connection, its reply as text; an error reply (a
/// replica answers `-LOADING` while it loads its master's data, as
/// redis-server does for CLUSTER NODES and INFO) is an `Err` the caller's
/// `wait_for` retries.
pub fn query(s: &Server, args: &[&str]) -> Result<String, String> {
    match cmd(s, args) {
        Value::Error(e) => Err(format!(
            "{} answers {args:?} with {}",
            s.port(),
            String::from_utf8_lossy(&e)
        )),
        v => Ok(text(v)),
    }
}

/// CLUSTER NODES, each line split: id, addr, flags, master, ping, pong,
/// epoch, link, slots... An `Err` while the node answers `-LOADING` (see
/// [`query`]).
pub fn nodes_table(s: &Server) -> Result<Vec<Vec<String>>, String> {
    Ok(query(s, &["CLUSTER", "NODES"])?
        .lines()
        .map(|l| l.split(' ').map(String::from).collect())
        .collect())
}

/// The node's cluster bus port, from its own CLUSTER NODES line.
pub fn bus_port(s: &Server) -> u16 {
    let table = nodes_table(s).expect("CLUSTER NODES");
    let me = table
        .iter()
        .find(|r| r[2].contains("myself"))
        .expect("a myself line");
    me[1]
        .split('@')
        .nth(1)
        .and_then(|b| b.split(',').next())
        .and_then(|b| b.parse().ok())
        .expect("addr@busport")
}

/// One command on a new raw connection.
pub fn cmd(s: &Server, args: &[&str]) -> Value {
    s.raw().cmd(args)
}

/// CLUSTER MYID.
pub fn myid(s: &Server) -> String {
    text(cmd(s, &["CLUSTER", "MYID"]))
}

/// Whether `cmd args` runs and succeeds; says so when it does not.
pub fn have_tool(cmd: &str, args: &[&str]) -> bool {
    let ok = std::process::Command::new(cmd)
        .args(args)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("SKIPPED: `{cmd}` not available");
    }
    ok
}

/// Waits (up to 90 s: a deadline, not a timing claim) until `ok`
/// succeeds, panicking with `what` and the last error after it.
pub fn wait_for(what: &str, mut ok: impl FnMut() -> Result<(), String>) {
    let end = Instant::now() + Duration::from_secs(90);
    loop {
        match ok() {
            Ok(()) => return,
            Err(e) if Instant::now() > end => panic!("{what}: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(100)),
        }
    }
}

/// `redis-cli args`: (success, stdout and stderr).
pub fn redis_cli<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> (bool, String) {
    let o = std::process::Command::new("redis-cli")
        .args(args)
        .output()
        .expect("redis-cli");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.success(), out)
}
