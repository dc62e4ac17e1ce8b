//! End-to-end tests of the server administration commands: CLIENT, COMMAND,
//! INFO, SLOWLOG, LATENCY, MONITOR, DEBUG. Differential scripts compare with
//! redis-server 7.0 where replies are deterministic; the rest asserts what a
//! client sees from petrel (texts taken from redis-server 7.0.15 outputs).

mod common;
use common::*;

use std::time::Duration;

fn bulk_text(v: &Value) -> String {
    match v {
        Value::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Verbatim { data, .. } => String::from_utf8_lossy(data).into_owned(),
        other => panic!("expected a bulk string, got {other:?}"),
    }
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => *n,
        other => panic!("expected an integer, got {other:?}"),
    }
}

fn err(v: &Value) -> String {
    match v {
        Value::Error(e) => String::from_utf8_lossy(e).into_owned(),
        other => panic!("expected an error, got {other:?}"),
    }
}

fn ok(v: &Value) {
    assert_eq!(v, &Value::Simple(b"OK".to_vec()));
}

/// `field=value` of a CLIENT LIST / CLIENT INFO line.
fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.trim_end()
        .split(' ')
        .find_map(|kv| kv.strip_prefix(name).and_then(|r| r.strip_prefix('=')))
        .unwrap_or_else(|| panic!("no {name}= in {line}"))
}

/// `name:value` of an INFO text.
fn info_field(text: &str, name: &str) -> Option<String> {
    text.split("\r\n")
        .find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')))
        .map(String::from)
}

#[test]
fn diff_client_errors() {
    diff_text(
        "client_errors",
        r#"
CLIENT
CLIENT foo
CLIENT GETNAME
CLIENT SETNAME "a b"
CLIENT SETNAME foo
CLIENT GETNAME
CLIENT SETNAME ""
CLIENT GETNAME
CLIENT ID x
CLIENT GETNAME x
CLIENT INFO x
CLIENT REPLY
CLIENT REPLY foo
CLIENT NO-EVICT
CLIENT NO-EVICT maybe
CLIENT NO-EVICT on
CLIENT NO-EVICT off
CLIENT PAUSE
CLIENT PAUSE abc
CLIENT PAUSE -1
CLIENT PAUSE 10 foo
CLIENT PAUSE 10 write
CLIENT UNPAUSE
CLIENT UNPAUSE x
CLIENT KILL
CLIENT KILL 1.2.3.4:5
CLIENT KILL id
CLIENT KILL id abc
CLIENT KILL id 0
CLIENT KILL id 999
CLIENT KILL type foo
CLIENT KILL type normal skipme foo
CLIENT KILL type normal skipme
CLIENT KILL user nobody
CLIENT KILL laddr x
CLIENT KILL addr x
CLIENT KILL skipme yes
CLIENT KILL type slave
CLIENT KILL type pubsub
CLIENT KILL type master
CLIENT LIST type foo
CLIENT LIST id
CLIENT LIST id abc
CLIENT LIST id 999
CLIENT LIST foo
CLIENT LIST type pubsub
CLIENT LIST type master
CLIENT LIST type replica
CLIENT LIST type slave
CLIENT CACHING yes            # errcode
"#,
    );
}

#[test]
fn diff_command_introspection() {
    diff_text(
        "command_introspection",
        r#"
COMMAND INFO ping echo select hello auth quit reset
COMMAND INFO client|list client|kill client|id client|pause client|no-evict
COMMAND INFO info slowlog|get slowlog|len slowlog|reset latency|latest latency|histogram latency|reset
COMMAND INFO config|get config|set time monitor debug shutdown
COMMAND INFO command|getkeys command|info command|count command|docs command|list
COMMAND INFO nosuch ping
COMMAND INFO slowlog latency command       # unordered
COMMAND DOCS client|id client|getname latency|doctor latency|latest slowlog|len
COMMAND DOCS info slowlog|get client|kill client|list client|pause command|list debug monitor ping select hello
COMMAND DOCS nosuch
COMMAND GETKEYS
COMMAND GETKEYS ping
COMMAND GETKEYS nosuch a
COMMAND GETKEYS client list
COMMAND GETKEYS client foo
COMMAND GETKEYS get a
COMMAND GETKEYS get a b
COMMAND GETKEYS set a b
COMMAND GETKEYS mset a b c d
COMMAND GETKEYS mset a b c
COMMAND GETKEYS del a b c
COMMAND GETKEYS rename a b
COMMAND GETKEYS mget a b
COMMAND GETKEYS scan 0
COMMAND GETKEYSANDFLAGS ping x
COMMAND LIST x
COMMAND LIST FILTERBY
COMMAND LIST FILTERBY foo x
COMMAND LIST FILTERBY aclcat nosuch
COMMAND LIST FILTERBY module x
COMMAND LIST FILTERBY pattern slowlog*        # unordered
COMMAND COUNT x
COMMAND foo
COMMAND HELP
"#,
    );
}

#[test]
fn diff_slowlog_latency_debug() {
    let opts = DiffOpts::new(&[("enable-debug-command", "yes")]);
    diff_text_with(
        "slowlog_latency_debug",
        r#"
SLOWLOG GET -2
SLOWLOG GET abc
SLOWLOG GET 1 2
SLOWLOG RESET
SLOWLOG LEN
SLOWLOG GET
SLOWLOG HELP
SLOWLOG
SLOWLOG foo
LATENCY LATEST
LATENCY HISTORY
LATENCY HISTORY command
LATENCY RESET
LATENCY RESET a b
LATENCY HELP
LATENCY DOCTOR
LATENCY GRAPH command
LATENCY HISTOGRAM nosuch
LATENCY foo
DEBUG
DEBUG sleep
DEBUG sleep abc
DEBUG sleep 0
DEBUG foo
CONFIG SET latency-monitor-threshold 1
LATENCY DOCTOR
INFO nosuch
"#,
        &opts,
    );
}

#[test]
fn diff_debug_disabled() {
    diff_text(
        "debug_disabled",
        r#"
DEBUG HELP
DEBUG SLEEP 0
DEBUG PANIC-CONNECTION    # any
"#,
    );
}

#[test]
fn client_id_name_list_info() {
    let srv = TestServer::start(&[]);
    let mut a = srv.raw();
    let mut b = srv.raw();
    let id_a = int(&a.cmd(&["CLIENT", "ID"]));
    let id_b = int(&b.cmd(&["CLIENT", "ID"]));
    assert_ne!(id_a, id_b);
    ok(&a.cmd(&["CLIENT", "SETNAME", "alpha"]));
    assert_eq!(
        a.cmd(&["CLIENT", "GETNAME"]),
        Value::Bulk(b"alpha".to_vec())
    );
    assert_eq!(b.cmd(&["CLIENT", "GETNAME"]), Value::NullBulk);

    let list = bulk_text(&b.cmd(&["CLIENT", "LIST"]));
    assert!(list.ends_with('\n'));
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    let la = lines
        .iter()
        .find(|l| field(l, "id") == id_a.to_string())
        .unwrap();
    assert_eq!(field(la, "name"), "alpha");
    assert_eq!(field(la, "cmd"), "client|getname");
    assert_eq!(field(la, "flags"), "N");
    assert_eq!(field(la, "db"), "0");
    assert_eq!(field(la, "multi"), "-1");
    assert_eq!(field(la, "user"), "default");
    assert_eq!(field(la, "resp"), "2");
    assert_eq!(field(la, "laddr"), format!("127.0.0.1:{}", srv.port()));
    let keys: Vec<&str> = la
        .split(' ')
        .map(|kv| kv.split('=').next().unwrap())
        .collect();
    assert_eq!(
        keys.join(" "),
        "id addr laddr fd name age idle flags db sub psub ssub multi qbuf qbuf-free argv-mem multi-mem rbs rbp obl oll omem tot-mem events cmd user redir resp lib-name lib-ver"
    );

    // Filters.
    let only_a = bulk_text(&b.cmd(&["CLIENT", "LIST", "ID", &id_a.to_string(), "999"]));
    assert_eq!(only_a.lines().count(), 1);
    assert!(only_a.starts_with(&format!("id={id_a} ")));
    let normal = bulk_text(&b.cmd(&["CLIENT", "LIST", "TYPE", "normal"]));
    assert_eq!(normal.lines().count(), 2);
    assert_eq!(bulk_text(&b.cmd(&["CLIENT", "LIST", "TYPE", "pubsub"])), "");

    // CLIENT INFO is this connection's line.
    let info = bulk_text(&a.cmd(&["CLIENT", "INFO"]));
    assert_eq!(field(&info, "id"), id_a.to_string());
    assert_eq!(field(&info, "cmd"), "client|info");

    // SELECT, NO-EVICT and NO-TOUCH show up.
    ok(&a.cmd(&["SELECT", "5"]));
    ok(&a.cmd(&["CLIENT", "NO-EVICT", "on"]));
    ok(&a.cmd(&["CLIENT", "NO-TOUCH", "on"]));
    let info = bulk_text(&a.cmd(&["CLIENT", "INFO"]));
    assert_eq!(field(&info, "db"), "5");
    assert_eq!(field(&info, "flags"), "eT");
    ok(&a.cmd(&["CLIENT", "NO-TOUCH", "off"]));
    assert_eq!(
        err(&a.cmd(&["CLIENT", "NO-TOUCH", "maybe"])),
        "ERR syntax error"
    );

    // RESP3: CLIENT INFO is a verbatim string.
    let mut c = srv.raw();
    c.cmd(&["HELLO", "3"]);
    match c.cmd(&["CLIENT", "INFO"]) {
        Value::Verbatim { format, data } => {
            assert_eq!(&format, b"txt");
            assert_eq!(field(&String::from_utf8_lossy(&data), "resp"), "3");
        }
        other => panic!("expected verbatim, got {other:?}"),
    }
}

#[test]
fn client_setinfo() {
    let srv = TestServer::start(&[]);
    let mut a = srv.raw();
    ok(&a.cmd(&["CLIENT", "SETINFO", "LIB-NAME", "redis-py"]));
    ok(&a.cmd(&["CLIENT", "SETINFO", "lib-ver", "5.0.1"]));
    let info = bulk_text(&a.cmd(&["CLIENT", "INFO"]));
    assert_eq!(field(&info, "lib-name"), "redis-py");
    assert_eq!(field(&info, "lib-ver"), "5.0.1");
    assert_eq!(
        err(&a.cmd(&["CLIENT", "SETINFO", "lib-name", "a b"])),
        "ERR lib-name cannot contain spaces, newlines or special characters."
    );
    assert_eq!(
        err(&a.cmd(&["CLIENT", "SETINFO", "color", "red"])),
        "ERR Unrecognized option 'color'"
    );
    assert_eq!(
        err(&a.cmd(&["CLIENT", "SETINFO", "lib-name"])),
        "ERR wrong number of arguments for 'client|setinfo' command"
    );
}

#[test]
fn client_kill_across_threads() {
    let srv = TestServer::start(&[("threads", "4")]);
    let mut admin = srv.raw();
    let mut victims: Vec<RawConn> = (0..6).map(|_| srv.raw()).collect();
    let ids: Vec<i64> = victims
        .iter_mut()
        .map(|c| int(&c.cmd(&["CLIENT", "ID"])))
        .collect();

    // New form by ID (the victims are spread over the worker threads).
    for (i, id) in ids.iter().enumerate().take(4) {
        assert_eq!(
            int(&admin.cmd(&["CLIENT", "KILL", "ID", &id.to_string()])),
            1
        );
        assert!(victims[i].closed_within(Duration::from_secs(5)));
    }
    // Already gone.
    assert_eq!(
        int(&admin.cmd(&["CLIENT", "KILL", "ID", &ids[0].to_string()])),
        0
    );

    // Old form by address.
    let list = bulk_text(&admin.cmd(&["CLIENT", "LIST", "ID", &ids[4].to_string()]));
    let addr = field(&list, "addr").to_string();
    ok(&admin.cmd(&["CLIENT", "KILL", &addr]));
    assert!(victims[4].closed_within(Duration::from_secs(5)));
    assert_eq!(
        err(&admin.cmd(&["CLIENT", "KILL", &addr])),
        "ERR No such client"
    );

    // TYPE normal skips the caller by default; the survivor is killed.
    assert_eq!(int(&admin.cmd(&["CLIENT", "KILL", "TYPE", "normal"])), 1);
    assert!(victims[5].closed_within(Duration::from_secs(5)));
    assert_eq!(admin.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));

    // LADDR / USER / MAXAGE filters.
    let mut x = srv.raw();
    x.cmd(&["PING"]);
    let laddr = format!("127.0.0.1:{}", srv.port());
    assert_eq!(
        int(&admin.cmd(&["CLIENT", "KILL", "LADDR", &laddr, "USER", "default"])),
        1
    );
    assert!(x.closed_within(Duration::from_secs(5)));
    let mut y = srv.raw();
    y.cmd(&["PING"]);
    assert_eq!(int(&admin.cmd(&["CLIENT", "KILL", "MAXAGE", "1000"])), 0);

    // Killing yourself: the reply arrives, then the connection closes.
    let me = int(&admin.cmd(&["CLIENT", "ID"]));
    assert_eq!(
        int(&admin.cmd(&["CLIENT", "KILL", "ID", &me.to_string(), "SKIPME", "no"])),
        1
    );
    assert!(admin.closed_within(Duration::from_secs(5)));
    let mut z = srv.raw();
    assert_eq!(z.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
}

#[test]
fn client_pause_and_unpause() {
    let srv = TestServer::start(&[]);
    let mut admin = srv.raw();
    let mut other = srv.raw();

    // WRITE: reads run, PUBLISH (may replicate) waits for the pause to end.
    ok(&admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]));
    assert_eq!(other.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    other.send_cmd(&["PUBLISH", "ch", "m"]);
    assert_eq!(
        other.read_reply_within(Duration::from_millis(300)),
        Reply::Timeout
    );
    ok(&admin.cmd(&["CLIENT", "UNPAUSE"]));
    assert_eq!(other.read_reply(), Value::Int(0));

    // WRITE: GET answers at once, SET waits.
    ok(&admin.cmd(&["CLIENT", "PAUSE", "100000", "WRITE"]));
    assert_eq!(other.cmd(&["GET", "k"]), Value::NullBulk);
    other.send_cmd(&["SET", "k", "v"]);
    assert_eq!(
        other.read_reply_within(Duration::from_millis(300)),
        Reply::Timeout
    );
    let mut third = srv.raw();
    assert_eq!(third.cmd(&["GET", "k"]), Value::NullBulk);
    ok(&admin.cmd(&["CLIENT", "UNPAUSE"]));
    ok(&other.read_reply());
    assert_eq!(third.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));

    // ALL: even PING waits; a timeout ends the pause by itself.
    ok(&admin.cmd(&["CLIENT", "PAUSE", "400"]));
    let t = std::time::Instant::now();
    assert_eq!(other.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    assert!(
        t.elapsed() >= Duration::from_millis(250),
        "{:?}",
        t.elapsed()
    );
}

#[test]
fn client_reply_modes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.raw();
    c.send_cmd(&["CLIENT", "REPLY", "OFF"]);
    c.send_cmd(&["ECHO", "hidden"]);
    c.send_cmd(&["CLIENT", "REPLY", "SKIP"]);
    c.send_cmd(&["ECHO", "skipped?"]);
    assert_eq!(
        c.cmd(&["CLIENT", "REPLY", "ON"]),
        Value::Simple(b"OK".to_vec())
    );
    c.send_cmd(&["CLIENT", "REPLY", "SKIP"]);
    c.send_cmd(&["ECHO", "skipped"]);
    assert_eq!(c.cmd(&["ECHO", "shown"]), Value::Bulk(b"shown".to_vec()));
}

#[test]
fn command_introspection_shapes() {
    let srv = TestServer::start(&[]);
    let mut c = srv.raw();
    let count = int(&c.cmd(&["COMMAND", "COUNT"]));
    let all = c.cmd(&["COMMAND"]);
    let Value::Array(all) = all else {
        panic!("COMMAND is an array")
    };
    assert_eq!(all.len() as i64, count);
    for e in &all {
        let Value::Array(f) = e else { panic!("entry") };
        assert_eq!(f.len(), 10, "{e:?}");
    }
    let Value::Array(list) = c.cmd(&["COMMAND", "LIST"]) else {
        panic!("list")
    };
    // Plain LIST names subcommands too (as Redis 7.0's); COUNT does not.
    let tops = list
        .iter()
        .filter(|n| !matches!(n, Value::Bulk(b) if b.contains(&b'|')))
        .count();
    assert_eq!(tops as i64, count);
    assert!(list.contains(&Value::Bulk(b"client".to_vec())));
    assert!(list.contains(&Value::Bulk(b"client|list".to_vec())));

    // ACL category filter includes subcommands.
    let Value::Array(admin) = c.cmd(&["COMMAND", "LIST", "FILTERBY", "ACLCAT", "admin"]) else {
        panic!("aclcat")
    };
    assert!(admin.contains(&Value::Bulk(b"client|kill".to_vec())));
    assert!(!admin.contains(&Value::Bulk(b"ping".to_vec())));

    // COMMAND INFO client|list as redis-server 7.0 prints it.
    let info = c.cmd(&["COMMAND", "INFO", "client|list"]);
    let s = |x: &str| Value::Simple(x.as_bytes().to_vec());
    assert_eq!(
        info,
        Value::Array(vec![Value::Array(vec![
            Value::Bulk(b"client|list".to_vec()),
            Value::Int(-2),
            Value::Array(vec![s("admin"), s("noscript"), s("loading"), s("stale")]),
            Value::Int(0),
            Value::Int(0),
            Value::Int(0),
            Value::Array(vec![
                s("@admin"),
                s("@slow"),
                s("@dangerous"),
                s("@connection")
            ]),
            Value::Array(vec![Value::Bulk(b"nondeterministic_output".to_vec())]),
            Value::Array(vec![]),
            Value::Array(vec![]),
        ])])
    );

    // GETKEYS errors.
    assert_eq!(
        err(&c.cmd(&["COMMAND", "GETKEYS", "nosuch", "a"])),
        "ERR Invalid command specified"
    );
    assert_eq!(
        err(&c.cmd(&["COMMAND", "GETKEYS", "client", "list"])),
        "ERR The command has no key arguments"
    );
}

#[test]
fn info_sections_report_the_truth() {
    let srv = TestServer::start(&[]);
    let mut c = srv.raw();
    let mut other = srv.raw();
    other.cmd(&["ECHO", "x"]);
    c.cmd(&["ECHO", "x"]);
    c.cmd(&["NOSUCHCMD"]);
    let text = bulk_text(&c.cmd(&["INFO"]));
    let heads: Vec<&str> = text.split("\r\n").filter(|l| l.starts_with('#')).collect();
    assert_eq!(
        heads,
        [
            "# Server",
            "# Clients",
            "# Memory",
            "# Persistence",
            "# Stats",
            "# Replication",
            "# CPU",
            "# Modules",
            "# Errorstats",
            "# Cluster",
            "# Keyspace"
        ]
    );
    assert!(text.ends_with("\r\n") && !text.ends_with("\r\n\r\n"));
    assert_eq!(info_field(&text, "redis_version").unwrap(), "7.0.15");
    assert_eq!(
        info_field(&text, "process_id").unwrap(),
        srv.pid().to_string()
    );
    assert_eq!(
        info_field(&text, "tcp_port").unwrap(),
        srv.port().to_string()
    );
    assert_eq!(info_field(&text, "connected_clients").unwrap(), "2");
    assert_eq!(info_field(&text, "role").unwrap(), "master");
    assert_eq!(info_field(&text, "connected_slaves").unwrap(), "0");
    assert_eq!(info_field(&text, "loading").unwrap(), "0");
    assert_eq!(
        info_field(&text, "rdb_changes_since_last_save").unwrap(),
        "0"
    );
    assert_eq!(info_field(&text, "rdb_saves").unwrap(), "0");
    assert_eq!(info_field(&text, "aof_enabled").unwrap(), "0");
    assert_eq!(info_field(&text, "errorstat_ERR").unwrap(), "count=1");
    let used: u64 = info_field(&text, "used_memory").unwrap().parse().unwrap();
    let rss: u64 = info_field(&text, "used_memory_rss")
        .unwrap()
        .parse()
        .unwrap();
    assert!(used > 0 && rss > 0);
    let cpu: f64 = info_field(&text, "used_cpu_user").unwrap().parse().unwrap();
    assert!(cpu >= 0.0);

    let one = bulk_text(&c.cmd(&["INFO", "commandstats"]));
    assert!(one.starts_with("# Commandstats\r\n"));
    let echo = info_field(&one, "cmdstat_echo").unwrap();
    assert!(echo.starts_with("calls=2,usec="), "{echo}");
    assert!(echo.ends_with(",rejected_calls=0,failed_calls=0"));
    let two = bulk_text(&c.cmd(&["INFO", "CPU", "server"]));
    assert!(two.starts_with("# Server\r\n") && two.contains("\r\n\r\n# CPU\r\n"));
    let every = bulk_text(&c.cmd(&["INFO", "everything"]));
    assert!(every.contains("# Commandstats\r\n") && every.contains("# Latencystats\r\n"));
    assert!(info_field(&every, "latency_percentiles_usec_echo")
        .unwrap()
        .starts_with("p50="));
    assert_eq!(bulk_text(&c.cmd(&["INFO", "nosuch"])), "");
    assert_eq!(bulk_text(&c.cmd(&["INFO", "keyspace"])), "# Keyspace\r\n");
    ok(&c.cmd(&["SET", "a", "1"]));
    ok(&c.cmd(&["SET", "b", "2", "EX", "100"]));
    let ks = bulk_text(&c.cmd(&["INFO", "keyspace"]));
    assert!(
        ks.starts_with("# Keyspace\r\ndb0:keys=2,expires=1,avg_ttl="),
        "{ks}"
    );

    // Instantaneous ops/sec follows real traffic (cron samples every 100 ms).
    let busy = wait_until(Duration::from_secs(10), || {
        for _ in 0..100 {
            c.cmd(&["PING"]);
        }
        let stats = bulk_text(&c.cmd(&["INFO", "stats"]));
        let ops: u64 = info_field(&stats, "instantaneous_ops_per_sec")
            .unwrap()
            .parse()
            .unwrap();
        ops > 0
    });
    assert!(busy, "instantaneous_ops_per_sec stayed 0");
}

#[test]
fn slowlog_records_slow_commands() {
    let srv = TestServer::start(&[("slowlog-log-slower-than", "0")]);
    let mut c = srv.raw();
    ok(&c.cmd(&["CLIENT", "SETNAME", "slowpoke"]));
    c.cmd(&["ECHO", "hello"]);
    let Value::Array(entries) = c.cmd(&["SLOWLOG", "GET", "1"]) else {
        panic!("array")
    };
    assert_eq!(entries.len(), 1);
    let Value::Array(e) = &entries[0] else {
        panic!("entry")
    };
    assert_eq!(e.len(), 6);
    assert_eq!(
        e[3],
        Value::Array(vec![
            Value::Bulk(b"ECHO".to_vec()),
            Value::Bulk(b"hello".to_vec())
        ])
    );
    assert_eq!(e[5], Value::Bulk(b"slowpoke".to_vec()));
    assert!(int(&c.cmd(&["SLOWLOG", "LEN"])) >= 3);
    ok(&c.cmd(&["SLOWLOG", "RESET"]));
    // The RESET itself is logged after it ran.
    assert_eq!(int(&c.cmd(&["SLOWLOG", "LEN"])), 1);
    let long = "x".repeat(200);
    c.cmd(&["ECHO", &long]);
    let Value::Array(entries) = c.cmd(&["SLOWLOG", "GET", "1"]) else {
        panic!("array")
    };
    let Value::Array(e) = &entries[0] else {
        panic!("entry")
    };
    let Value::Array(args) = &e[3] else {
        panic!("args")
    };
    assert_eq!(
        args[1],
        Value::Bulk(format!("{}... (72 more bytes)", "x".repeat(128)).into_bytes())
    );
}

#[test]
fn latency_monitor_and_histogram() {
    let srv = TestServer::start(&[
        ("latency-monitor-threshold", "10"),
        ("enable-debug-command", "yes"),
    ]);
    let mut c = srv.raw();
    ok(&c.cmd(&["DEBUG", "SLEEP", "0.05"]));
    let Value::Array(latest) = c.cmd(&["LATENCY", "LATEST"]) else {
        panic!("array")
    };
    assert_eq!(latest.len(), 1);
    let Value::Array(ev) = &latest[0] else {
        panic!("event")
    };
    assert_eq!(ev[0], Value::Bulk(b"command".to_vec()));
    assert!(int(&ev[2]) >= 50 && int(&ev[3]) >= 50);
    let Value::Array(hist) = c.cmd(&["LATENCY", "HISTORY", "command"]) else {
        panic!("history")
    };
    assert_eq!(hist.len(), 1);
    let doctor = bulk_text(&c.cmd(&["LATENCY", "DOCTOR"]));
    assert!(doctor.contains("1. command: 1 latency spikes"), "{doctor}");
    let graph = bulk_text(&c.cmd(&["LATENCY", "GRAPH", "command"]));
    assert!(graph.starts_with("command - high "), "{graph}");
    assert_eq!(int(&c.cmd(&["LATENCY", "RESET", "command", "nosuch"])), 1);
    assert_eq!(c.cmd(&["LATENCY", "LATEST"]), Value::Array(vec![]));

    c.cmd(&["ECHO", "a"]);
    c.cmd(&["ECHO", "b"]);
    let h = c.cmd(&["LATENCY", "HISTOGRAM", "echo", "nosuch"]);
    let Value::Array(h) = h else { panic!("map") };
    assert_eq!(h.len(), 2);
    assert_eq!(h[0], Value::Bulk(b"echo".to_vec()));
    let Value::Array(m) = &h[1] else {
        panic!("inner")
    };
    assert_eq!(m[0], Value::Bulk(b"calls".to_vec()));
    assert_eq!(m[1], Value::Int(2));
    assert_eq!(m[2], Value::Bulk(b"histogram_usec".to_vec()));
    let Value::Array(b) = &m[3] else {
        panic!("buckets")
    };
    assert_eq!(b.last(), Some(&Value::Int(2)), "cumulative: {b:?}");
    // Subcommands of a container.
    c.cmd(&["CLIENT", "ID"]);
    let Value::Array(h) = c.cmd(&["LATENCY", "HISTOGRAM", "client"]) else {
        panic!("map")
    };
    assert_eq!(h[0], Value::Bulk(b"client|id".to_vec()));
}

#[test]
fn debug_enablement_and_panic_isolation() {
    let srv = TestServer::start(&[]);
    let mut c = srv.raw();
    assert_eq!(
        err(&c.cmd(&["DEBUG", "SLEEP", "0"])),
        "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server."
    );
    drop(srv);

    let srv = TestServer::start(&[("enable-debug-command", "local")]);
    let mut victim = srv.raw();
    let mut bystander = srv.raw();
    ok(&victim.cmd(&["DEBUG", "SLEEP", "0"]));
    let Value::Array(help) = victim.cmd(&["DEBUG", "HELP"]) else {
        panic!("help")
    };
    assert!(help.contains(&Value::Simple(b"SLEEP <seconds>".to_vec())));
    victim.send_cmd(&["DEBUG", "PANIC-CONNECTION"]);
    assert!(victim.closed_within(Duration::from_secs(5)));
    assert_eq!(bystander.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    let mut fresh = srv.raw();
    assert_eq!(fresh.cmd(&["PING"]), Value::Simple(b"PONG".to_vec()));
    assert!(srv.wait_log("Panic while serving client", Duration::from_secs(5)));
}

#[test]
fn monitor_lines_match_redis_format() {
    let dir = TempDir::new("monitor");
    let sock = dir.join("petrel.sock").display().to_string();
    let srv = TestServer::start(&[("unixsocket", &sock)]);
    let mut mon = srv.raw();
    ok(&mon.cmd(&["MONITOR"]));
    let mut c = srv.raw();
    c.cmd(&["ECHO", "a \"b\"\n"]);
    let line = mon.read_reply();
    let Value::Simple(line) = line else {
        panic!("monitor line")
    };
    let line = String::from_utf8(line).unwrap();
    let (ts, rest) = line.split_once(' ').unwrap();
    let (secs, us) = ts.split_once('.').unwrap();
    assert!(secs.parse::<u64>().is_ok() && us.len() == 6, "{line}");
    assert!(
        rest.starts_with("[0 127.0.0.1:") && rest.ends_with(r#"] "ECHO" "a \"b\"\n""#),
        "{line}"
    );
    // Admin commands are not shown; unix socket clients show as unix:<path>.
    c.cmd(&["CLIENT", "LIST"]);
    let mut u = srv.raw_unix();
    ok(&u.cmd(&["SELECT", "2"]));
    let Value::Simple(line) = mon.read_reply() else {
        panic!("monitor line")
    };
    let line = String::from_utf8(line).unwrap();
    assert!(
        line.ends_with(&format!(r#" [2 unix:{sock}] "SELECT" "2""#)),
        "{line}"
    );
    // Passwords never reach MONITOR.
    c.cmd(&["AUTH", "default", "secret"]);
    c.cmd(&["HELLO", "2", "AUTH", "default", "secret", "SETNAME", "n"]);
    let lines: Vec<String> = (0..2)
        .map(|_| match mon.read_reply() {
            Value::Simple(l) => String::from_utf8(l).unwrap(),
            other => panic!("monitor line: {other:?}"),
        })
        .collect();
    assert!(
        lines[0].ends_with(r#""AUTH" "(redacted)" "(redacted)""#),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with(r#""HELLO" "2" "AUTH" "(redacted)" "(redacted)" "SETNAME" "n""#),
        "{}",
        lines[1]
    );
    let info = bulk_text(&u.cmd(&["CLIENT", "INFO"]));
    assert_eq!(field(&info, "addr"), format!("{sock}:0"));
    assert_eq!(field(&info, "laddr"), format!("{sock}:0"));
    assert_eq!(field(&info, "flags"), "U");
}

#[test]
fn redis_cli_info_and_hints_work() {
    if std::process::Command::new("redis-cli")
        .arg("-v")
        .output()
        .is_err()
    {
        eprintln!("redis-cli not installed: skipping");
        return;
    }
    let srv = TestServer::start(&[]);
    let out = std::process::Command::new("redis-cli")
        .args(["-p", &srv.port().to_string(), "INFO", "server"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("redis_version:7.0.15"), "{text}");
    let out = std::process::Command::new("redis-cli")
        .args(["-p", &srv.port().to_string(), "COMMAND", "DOCS", "ping"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("Ping the server"));
}

#[test]
fn info_has_redis_fields_in_redis_order() {
    let Some(reference) = RefRedis::start() else {
        return;
    };
    let srv = TestServer::start(&[]);
    let names = |port: u16| -> Vec<String> {
        let mut c = RawConn::tcp(port);
        let text = bulk_text(&c.cmd(&["INFO", "everything"]));
        text.split("\r\n")
            .filter(|l| !l.is_empty())
            .filter_map(|l| {
                let name = l.split(':').next().unwrap();
                let dynamic = ["cmdstat_", "latency_percentiles_", "errorstat_", "db"]
                    .iter()
                    .any(|p| name.starts_with(p));
                // Fields of Redis 7.2 petrel has (7.0.15 lacks them).
                let petrel_only = name.starts_with("petrel_")
                    || name.ends_with("_limit_disconnections")
                    || name.starts_with("acl_access_denied_");
                (!dynamic && !petrel_only).then(|| name.to_string())
            })
            .collect()
    };
    assert_eq!(names(srv.port()), names(reference.port()));
}
