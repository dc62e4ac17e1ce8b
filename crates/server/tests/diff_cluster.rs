//! Cluster mode (issue 22) against redis-server 7.0 in cluster mode: the
//! settings, single-database mode, the CLUSTER subcommands, nodes.conf
//! (written before each reply, loaded at startup, and Redis's own file
//! loaded by petrel). Node ids and ports differ between the two servers:
//! replies are compared after replacing each server's id, port and bus
//! port by placeholders. Skips without redis-server unless
//! PETREL_REQUIRE_REDIS=1 (the petrel-only tests always run).

mod common;
use common::*;

/// A cluster-mode server with its own bus port (port + 10000 may not
/// exist for an ephemeral port).
fn cluster_node(kind: Kind, file: Option<&str>) -> Server {
    let cport = free_port().to_string();
    let mut o = Opts::new(&[("cluster-enabled", "yes"), ("cluster-port", &cport)]);
    if let Some(f) = file {
        o = o.arg("cluster-config-file", f);
    }
    Server::start_opts(kind, o)
}

/// A reply as text, with this server's id, port and bus port replaced.
fn show(v: &Value, who: &Names) -> String {
    fn walk(v: &Value, out: &mut String) {
        match v {
            Value::Simple(b) => out.push_str(&format!("+{}", String::from_utf8_lossy(b))),
            Value::Error(b) => out.push_str(&format!("-{}", String::from_utf8_lossy(b))),
            Value::Bulk(b) => out.push_str(&format!("${:?}", String::from_utf8_lossy(b))),
            Value::Int(n) => out.push_str(&format!(":{n}")),
            Value::Verbatim { format, data } => out.push_str(&format!(
                "={}:{:?}",
                String::from_utf8_lossy(format),
                String::from_utf8_lossy(data)
            )),
            Value::Array(a) | Value::Set(a) | Value::Push(a) => {
                out.push('[');
                for x in a {
                    walk(x, out);
                    out.push(',');
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push('{');
                for (k, x) in m {
                    walk(k, out);
                    out.push_str("=>");
                    walk(x, out);
                    out.push(',');
                }
                out.push('}');
            }
            other => out.push_str(&format!("{other:?}")),
        }
    }
    let mut s = String::new();
    walk(v, &mut s);
    s.replace(&who.id, "<id>")
        .replace(&format!(":{}@{}", who.port, who.cport), ":<port>@<cport>")
        .replace(&format!(":{}", who.port), ":<port>")
}

/// Leaves out what only a running cluster bus changes (petrel has none
/// yet): the message counters of CLUSTER INFO, and in CLUSTER NODES the
/// ping-sent time of other nodes and the order of the lines (Redis's is
/// its hash table's).
fn bus_neutral(sub: &str, v: Value) -> Value {
    let text = match &v {
        Value::Bulk(b) | Value::Verbatim { data: b, .. } => String::from_utf8_lossy(b).into_owned(),
        _ => return v,
    };
    let out = match sub {
        "info" => text
            .split_inclusive("\r\n")
            .filter(|l| !l.starts_with("cluster_stats_messages_"))
            .collect::<String>(),
        "nodes" => {
            let mut lines: Vec<String> = text
                .lines()
                .map(|l| {
                    let mut f: Vec<&str> = l.split(' ').collect();
                    if f.len() > 4 && !f[2].contains("myself") {
                        f[4] = "<ping-sent>";
                    }
                    f.join(" ")
                })
                .collect();
            lines.sort();
            lines.join("\n")
        }
        _ => return v,
    };
    match v {
        Value::Verbatim { format, .. } => Value::Verbatim {
            format,
            data: out.into_bytes(),
        },
        _ => Value::Bulk(out.into_bytes()),
    }
}

struct Names {
    id: String,
    port: u16,
    cport: u16,
}

struct Node {
    _srv: Server,
    conn: RawConn,
    names: Names,
}

impl Node {
    fn new(srv: Server) -> Node {
        let mut conn = srv.raw();
        conn.timeout = Duration::from_secs(5);
        let id = match conn.cmd(&["CLUSTER", "MYID"]) {
            Value::Bulk(b) => String::from_utf8(b).unwrap(),
            v => panic!("CLUSTER MYID: {v:?}"),
        };
        let cport = match conn.cmd(&["CONFIG", "GET", "cluster-port"]) {
            Value::Array(a) => match &a[1] {
                Value::Bulk(b) => String::from_utf8_lossy(b).parse().unwrap(),
                v => panic!("{v:?}"),
            },
            v => panic!("{v:?}"),
        };
        let port = srv.port();
        Node {
            _srv: srv,
            conn,
            names: Names { id, port, cport },
        }
    }
    /// Runs a command (`<id>` stands for this node's id) and shows its reply.
    fn cmd(&mut self, args: &[&str]) -> String {
        let args: Vec<&str> = args
            .iter()
            .map(|a| {
                if *a == "<id>" {
                    self.names.id.as_str()
                } else {
                    a
                }
            })
            .collect();
        let mut v = self.conn.cmd(&args);
        if let (Some(c), Some(sub)) = (args.first(), args.get(1)) {
            if c.eq_ignore_ascii_case("cluster") {
                v = bus_neutral(&sub.to_ascii_lowercase(), v);
            }
        }
        show(&v, &self.names)
    }
    fn info_field(&mut self, field: &str) -> String {
        match self.conn.cmd(&["CLUSTER", "INFO"]) {
            Value::Bulk(b) | Value::Verbatim { data: b, .. } => String::from_utf8_lossy(&b)
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{field}:")).map(String::from))
                .unwrap_or_default(),
            v => panic!("{v:?}"),
        }
    }
}

/// A petrel and a redis-server cluster node, or None without redis-server.
fn pair() -> Option<(Node, Node)> {
    if !redis_available() {
        return None;
    }
    let p = Node::new(cluster_node(Kind::Petrel, None));
    let mut r = Node::new(cluster_node(Kind::Redis, None));
    // Redis holds its first state update back for two seconds after start
    // (cluster_size reads 1 until then): wait for it, not a timing claim.
    assert!(wait_until(Duration::from_secs(20), || r
        .info_field("cluster_size")
        == "0"));
    Some((p, r))
}

/// Runs each command on both and collects every difference.
fn compare(p: &mut Node, r: &mut Node, cmds: &[&[&str]]) -> Vec<String> {
    let mut bad = Vec::new();
    for c in cmds {
        let (a, b) = (p.cmd(c), r.cmd(c));
        if a != b {
            bad.push(format!("{c:?}\n  petrel: {a}\n  redis:  {b}"));
        }
    }
    bad
}

fn check(bad: Vec<String>) {
    assert!(
        bad.is_empty(),
        "{} mismatch(es):\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn cluster_disabled() {
    diff_text(
        "cluster_disabled",
        r#"
CLUSTER INFO
CLUSTER NODES
CLUSTER MYID
CLUSTER KEYSLOT foo
CLUSTER ADDSLOTS 1
CLUSTER KEYSLOT
CLUSTER NOSUCH
CLUSTER HELP
CLUSTER REPLICAS abc
CLUSTER SLAVES abc
CLUSTER FAILOVER
CLUSTER FAILOVER FORCE
READONLY
READWRITE
ASKING
READONLY x
INFO cluster
SELECT 1
MOVE k 1
SWAPDB 0 1
"#,
    );
}

#[test]
fn cluster_settings() {
    diff_text(
        "cluster_settings",
        r#"
CONFIG GET cluster-*                            # pairs
CONFIG SET cluster-enabled yes
CONFIG SET cluster-config-file x.conf
CONFIG SET cluster-port 7000
CONFIG SET cluster-node-timeout 5000
CONFIG SET cluster-node-timeout -1
CONFIG SET cluster-node-timeout abc
CONFIG SET cluster-announce-ip 10.0.0.1
CONFIG SET cluster-announce-hostname a_b
CONFIG SET cluster-announce-hostname host-1.example
CONFIG SET cluster-announce-port 70000
CONFIG SET cluster-announce-port 7001
CONFIG SET cluster-announce-bus-port 17001
CONFIG SET cluster-announce-tls-port 0
CONFIG SET cluster-require-full-coverage no
CONFIG SET cluster-allow-reads-when-down yes
CONFIG SET cluster-allow-replica-migration no
CONFIG SET cluster-replica-validity-factor -1
CONFIG SET cluster-slave-validity-factor 3
CONFIG SET cluster-migration-barrier 2147483648
CONFIG SET cluster-migration-barrier 2
CONFIG SET cluster-preferred-endpoint-type x
CONFIG SET cluster-preferred-endpoint-type hostname
CONFIG GET cluster-*                            # pairs
CONFIG GET cluster-replica-validity-factor
"#,
    );
}

#[test]
fn cluster_commands_match_redis() {
    let Some((mut p, mut r)) = pair() else { return };
    check(compare(
        &mut p,
        &mut r,
        &[
            &["SELECT", "1"],
            &["SELECT", "0"],
            &["SELECT", "x"],
            &["SWAPDB", "0", "1"],
            &["INFO", "cluster"],
            &["CLUSTER", "INFO"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &["CLUSTER", "LINKS"],
            &["CLUSTER", "ADDSLOTS", "0", "1", "5"],
            &["CLUSTER", "ADDSLOTS", "5"],
            &["CLUSTER", "ADDSLOTS", "7", "7"],
            &["CLUSTER", "ADDSLOTS", "16384"],
            &["CLUSTER", "ADDSLOTS", "x"],
            &["CLUSTER", "ADDSLOTS"],
            &["CLUSTER", "ADDSLOTSRANGE", "10", "20", "30"],
            &["CLUSTER", "ADDSLOTSRANGE", "20", "10"],
            &["CLUSTER", "ADDSLOTSRANGE", "10", "20", "15", "25"],
            &["CLUSTER", "ADDSLOTSRANGE", "10", "20", "100", "200"],
            &["CLUSTER", "DELSLOTS", "11"],
            &["CLUSTER", "DELSLOTS", "11"],
            &["CLUSTER", "DELSLOTSRANGE", "150", "160", "300", "301"],
            &["CLUSTER", "DELSLOTSRANGE", "150", "160"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &["CLUSTER", "INFO"],
            &["CLUSTER", "KEYSLOT", "foo"],
            &["CLUSTER", "KEYSLOT", "{user1000}.following"],
            &["CLUSTER", "KEYSLOT", "foo{}{bar}"],
            &["CLUSTER", "COUNTKEYSINSLOT", "16384"],
            &["CLUSTER", "COUNTKEYSINSLOT", "-1"],
            &["CLUSTER", "COUNTKEYSINSLOT", "x"],
            &["CLUSTER", "GETKEYSINSLOT", "1", "-1"],
            &["CLUSTER", "GETKEYSINSLOT", "16384", "1"],
            &["CLUSTER", "GETKEYSINSLOT", "x", "1"],
            &["CLUSTER", "GETKEYSINSLOT", "1", "x"],
            &["CLUSTER", "BUMPEPOCH"],
            &["CLUSTER", "BUMPEPOCH"],
            &["CLUSTER", "SAVECONFIG"],
            &["CLUSTER", "SAVECONFIG", "x"],
            &["CLUSTER", "SET-CONFIG-EPOCH", "9"],
            &["CLUSTER", "SET-CONFIG-EPOCH", "-1"],
            &["CLUSTER", "COUNT-FAILURE-REPORTS", "abc"],
            &["CLUSTER", "FORGET", "abc"],
            &["CLUSTER", "SETSLOT", "5", "MIGRATING", "abc"],
            &["CLUSTER", "SETSLOT", "500", "MIGRATING", "abc"],
            &["CLUSTER", "SETSLOT", "5", "IMPORTING", "abc"],
            &["CLUSTER", "SETSLOT", "5", "NODE", "abc"],
            &["CLUSTER", "SETSLOT", "5", "FOO"],
            &["CLUSTER", "SETSLOT", "5", "STABLE", "x"],
            &["CLUSTER", "SETSLOT", "16384", "STABLE"],
            &["CLUSTER", "SETSLOT", "5", "STABLE"],
            &["CLUSTER", "RESET", "foo"],
            &["CLUSTER", "RESET", "hard", "soft"],
            &["CLUSTER", "NOSUCH"],
            &["CLUSTER", "MEET", "nonsense", "7000"],
            &["CLUSTER", "MEET", "127.0.0.1", "x"],
            &["CLUSTER", "MEET", "127.0.0.1"],
            &["CLUSTER", "REPLICATE", "abc"],
            &["CLUSTER", "REPLICATE"],
            &["CLUSTER", "REPLICAS", "<id>"],
            &["CLUSTER", "SLAVES", "<id>"],
            &["CLUSTER", "REPLICAS", "abc"],
            &["CLUSTER", "SLAVES", "abc"],
            &["CLUSTER", "REPLICAS"],
            &["CLUSTER", "HELP"],
            &["CLUSTER", "HELP", "x"],
            &["CLUSTER", "FAILOVER"],
            &["CLUSTER", "FAILOVER", "FORCE"],
            &["CLUSTER", "FAILOVER", "TAKEOVER"],
            &["CLUSTER", "FAILOVER", "FOO"],
            &["CLUSTER", "FAILOVER", "FORCE", "x"],
            &["READONLY"],
            &["READWRITE"],
            &["ASKING"],
            &["READONLY", "x"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "INFO"],
            &["CLUSTER", "FLUSHSLOTS"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"],
        ],
    ));
    // Redis settles its state in the background: wait, then compare.
    assert!(wait_until(Duration::from_secs(20), || r
        .info_field("cluster_state")
        == "ok"));
    check(compare(
        &mut p,
        &mut r,
        &[
            &["CLUSTER", "INFO"],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &["MOVE", "k", "1"],
            &["SET", "a", "1"],
            &["SET", "{a}2", "1"],
            &["SET", "{a}3", "1"],
            &["SET", "b", "1"],
            &["CLUSTER", "COUNTKEYSINSLOT", "15495"],
            &["CLUSTER", "COUNTKEYSINSLOT", "0"],
            &["CLUSTER", "GETKEYSINSLOT", "15495", "0"],
        ],
    ));
    // The order of a slot's keys is the table's: compare them sorted.
    let sorted = |n: &mut Node, max: &str| -> Vec<Vec<u8>> {
        match n.conn.cmd(&["CLUSTER", "GETKEYSINSLOT", "15495", max]) {
            Value::Array(a) => {
                let mut v: Vec<Vec<u8>> = a
                    .into_iter()
                    .map(|x| match x {
                        Value::Bulk(b) => b,
                        x => panic!("{x:?}"),
                    })
                    .collect();
                v.sort();
                v
            }
            v => panic!("{v:?}"),
        }
    };
    assert_eq!(sorted(&mut p, "10"), sorted(&mut r, "10"));
    assert_eq!(sorted(&mut p, "10").len(), 3);
    assert_eq!(sorted(&mut p, "2").len(), 2);
    check(compare(
        &mut p,
        &mut r,
        &[
            &["CLUSTER", "FLUSHSLOTS"],
            &["CLUSTER", "RESET"],
            &["CLUSTER", "SETSLOT", "15495", "NODE", "<id>"],
            &["DEL", "a", "{a}2", "{a}3"],
            &["DEL", "b"],
            &["CLUSTER", "COUNTKEYSINSLOT", "15495"],
            &["CLUSTER", "SETSLOT", "15495", "MIGRATING", "<id>"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SETSLOT", "15495", "STABLE"],
            &["CLUSTER", "DELSLOTS", "15495"],
            &["CLUSTER", "SETSLOT", "15495", "IMPORTING", "<id>"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SETSLOT", "15495", "NODE", "<id>"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "INFO"],
            // The announced endpoints, as CLUSTER NODES, SLOTS and SHARDS show them.
            &[
                "CONFIG",
                "SET",
                "cluster-announce-hostname",
                "host-1.example",
            ],
            &["CONFIG", "SET", "cluster-announce-port", "7001"],
            &["CONFIG", "SET", "cluster-announce-bus-port", "17001"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &[
                "CONFIG",
                "SET",
                "cluster-preferred-endpoint-type",
                "hostname",
            ],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &[
                "CONFIG",
                "SET",
                "cluster-preferred-endpoint-type",
                "unknown-endpoint",
            ],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &["CONFIG", "SET", "cluster-announce-hostname", ""],
            &["CLUSTER", "SLOTS"],
            &[
                "CONFIG",
                "SET",
                "cluster-preferred-endpoint-type",
                "hostname",
            ],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &["CONFIG", "SET", "cluster-preferred-endpoint-type", "ip"],
            &["CONFIG", "SET", "cluster-announce-port", "0"],
            &["CONFIG", "SET", "cluster-announce-bus-port", "0"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "RESET", "SOFT"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "INFO"],
        ],
    ));
}

/// nodes.conf is written before the reply and read back at startup: the
/// restarted node has the same id, slots, migration marks and epochs.
#[test]
fn nodes_conf_survives_restart() {
    let dir = TempDir::new("cluster-conf");
    let file = dir.join("nodes.conf").display().to_string();
    let mut p = Node::new(cluster_node(Kind::Petrel, Some(&file)));
    for c in [
        &["CLUSTER", "ADDSLOTSRANGE", "0", "99", "200", "300"][..],
        &["CLUSTER", "SETSLOT", "5", "MIGRATING", "<id>"],
        &["CLUSTER", "SETSLOT", "400", "IMPORTING", "<id>"],
        &["CLUSTER", "BUMPEPOCH"],
    ] {
        assert!(!p.cmd(c).starts_with('-'), "{c:?}");
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let id = p.names.id.clone();
    let nodes = p.cmd(&["CLUSTER", "NODES"]);
    assert!(text.starts_with(&format!("{id} :")), "{text}");
    assert!(
        text.ends_with(&format!(
            " myself,master - 0 0 1 connected 0-99 200-300 [5->-{id}] [400-<-{id}]\nvars currentEpoch 1 lastVoteEpoch 0\n"
        )),
        "{text}"
    );
    drop(p);
    let mut again = Node::new(cluster_node(Kind::Petrel, Some(&file)));
    assert_eq!(again.names.id, id);
    assert_eq!(again.cmd(&["CLUSTER", "NODES"]), nodes);
    assert_eq!(again.info_field("cluster_current_epoch"), "1");
}

/// Petrel reads the nodes.conf redis-server wrote, and shows the same
/// CLUSTER NODES.
#[test]
fn loads_redis_nodes_conf() {
    if !redis_available() {
        return;
    }
    let dir = TempDir::new("cluster-redis-conf");
    let file = dir.join("nodes.conf").display().to_string();
    let mut r = Node::new(cluster_node(Kind::Redis, Some(&file)));
    for c in [
        &["CLUSTER", "ADDSLOTSRANGE", "0", "5460", "6000", "6001"][..],
        &["CLUSTER", "ADDSLOTS", "9000"],
        &["CLUSTER", "SETSLOT", "7", "MIGRATING", "<id>"],
        &["CLUSTER", "BUMPEPOCH"],
    ] {
        assert!(!r.cmd(c).starts_with('-'), "{c:?}");
    }
    let want = match r.conn.cmd(&["CLUSTER", "NODES"]) {
        Value::Bulk(b) => String::from_utf8(b).unwrap(),
        v => panic!("{v:?}"),
    };
    let (id, port, cport) = (r.names.id.clone(), r.names.port, r.names.cport);
    drop(r);
    let p = Server::start_opts(
        Kind::Petrel,
        Opts::new(&[
            ("cluster-enabled", "yes"),
            ("cluster-config-file", &file),
            ("port", &port.to_string()),
            ("cluster-port", &cport.to_string()),
        ]),
    );
    let mut c = p.raw();
    assert_eq!(c.cmd(&["CLUSTER", "MYID"]), Value::Bulk(id.into_bytes()));
    assert_eq!(c.cmd(&["CLUSTER", "NODES"]), Value::Bulk(want.into_bytes()));
}

/// A corrupt nodes.conf stops the server at startup, naming the problem.
#[test]
fn corrupt_nodes_conf_refuses_to_start() {
    let dir = TempDir::new("cluster-bad-conf");
    let file = dir.join("nodes.conf");
    std::fs::write(
        &file,
        format!(
            "{} :1@2 myself,master - 0 0 0 connected 0-16384\n",
            "a".repeat(40)
        ),
    )
    .unwrap();
    let f = file.display().to_string();
    let (code, log) = petrel_startup_failure(
        None,
        &["--cluster-enabled", "yes", "--cluster-config-file", &f],
    );
    assert_ne!(code, Some(0));
    assert!(log.contains("corrupted cluster config file"), "{log}");
}

/// Both servers loaded from one nodes.conf: this node (`A`) owns slots
/// 0-8000 and another master (`B`, never reachable: no link) owns the
/// rest, so MOVED and ASK name the same address on both.
fn routed_pair() -> Option<(Node, Node, TempDir)> {
    if !redis_available() {
        return None;
    }
    let dir = TempDir::new("cluster-route");
    let a = "a".repeat(40);
    let b = "b".repeat(40);
    let text = format!(
        "{a} 127.0.0.1:1@2 myself,master - 0 0 1 connected 0-8000\n\
         {b} 127.0.0.1:30001@40001 master - 0 0 2 connected 8001-16383\n\
         vars currentEpoch 2 lastVoteEpoch 0\n"
    );
    let start = |kind: Kind, name: &str| {
        let f = dir.join(name);
        std::fs::write(&f, &text).unwrap();
        let cport = free_port().to_string();
        Node::new(Server::start_opts(
            kind,
            Opts::new(&[
                ("cluster-enabled", "yes"),
                ("cluster-port", &cport),
                ("cluster-config-file", &f.display().to_string()),
                // B must not be marked failing while the test runs.
                ("cluster-node-timeout", "600000"),
            ]),
        ))
    };
    let p = start(Kind::Petrel, "petrel.conf");
    let mut r = start(Kind::Redis, "redis.conf");
    assert!(wait_until(Duration::from_secs(20), || r
        .info_field("cluster_state")
        == "ok"));
    Some((p, r, dir))
}

#[test]
fn routing_matches_redis() {
    let Some((mut p, mut r, _dir)) = routed_pair() else {
        return;
    };
    let b = "b".repeat(40);
    // KEYSLOT: a 15495 (B), b 3300 (A), c 7365 (A), {b}x 3300.
    check(compare(
        &mut p,
        &mut r,
        &[
            &["CLUSTER", "INFO"],
            &["SET", "b", "1"],
            &["GET", "b"],
            &["GET", "a"],
            &["SET", "a", "1"],
            // Shard channels are routed by their slot as keys are.
            &["SPUBLISH", "a", "m"],
            &["SPUBLISH", "b", "m"],
            &["SPUBLISH", "b", "m", "extra"],
            &["MSET", "b", "1", "{b}x", "2"],
            &["MSET", "b", "1", "c", "2"],
            &["MSET", "a", "1", "b", "2"],
            &["MGET", "b", "{b}x"],
            &["DEL", "b", "c"],
            &["EXISTS", "a"],
            &["PING"],
            &["DBSIZE"],
            &["EVAL", "return 1", "1", "a"],
            &["EVAL", "return 1", "2", "b", "c"],
            &["EVAL", "return redis.call('get', KEYS[1])", "1", "b"],
            &["EVAL", "return 1", "0"],
            // Keys a script did not declare must be local too.
            &["EVAL", "return redis.call('get', 'a')", "0"],
            &["EVAL", "return redis.pcall('get', 'a')", "0"],
            &["EVAL", "return redis.call('get', 'b')", "0"],
            &["EVAL", "return redis.call('mget', 'b', 'c')", "0"],
            // Transactions: a redirection at queue time aborts EXEC; keys of
            // two slots across the queue fail EXEC itself.
            &["MULTI"],
            &["SET", "a", "1"],
            &["SET", "b", "2"],
            &["EXEC"],
            &["MULTI"],
            &["SET", "b", "2"],
            &["SET", "c", "3"],
            &["EXEC"],
            &["GET", "c"],
            &["MULTI"],
            &["SET", "b", "3"],
            &["GET", "{b}x"],
            &["EXEC"],
            // Migrating slot 3300 to B: present keys are served, missing ones
            // are asked for at B, a mix is TRYAGAIN.
            &["CLUSTER", "SETSLOT", "3300", "MIGRATING", &b],
            // Shard channels are served here until the migration ends.
            &["SPUBLISH", "{b}missing", "m"],
            &["GET", "b"],
            &["GET", "{b}missing"],
            &["MGET", "b", "{b}missing"],
            &["MGET", "{b}m1", "{b}m2"],
            &["SET", "{b}new", "1"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SETSLOT", "3300", "STABLE"],
            // Importing slot 15495 from B: only after ASKING, for one command.
            &["CLUSTER", "SETSLOT", "15495", "IMPORTING", &b],
            &["SPUBLISH", "a", "m"],
            &["GET", "a"],
            &["ASKING"],
            &["GET", "a"],
            &["GET", "a"],
            &["ASKING"],
            &["SET", "a", "1"],
            &["ASKING"],
            &["MSET", "a", "1", "{a}2", "2"],
            &["ASKING"],
            &["MGET", "a", "{a}2"],
            &["MULTI"],
            &["ASKING"],
            &["GET", "a"],
            &["SET", "{a}2", "x"],
            &["EXEC"],
            &["GET", "a"],
            &["CLUSTER", "SETSLOT", "15495", "NODE", "<id>"],
            &["GET", "a"],
            &["CLUSTER", "NODES"],
            // Without full coverage required, unassigned slots answer
            // "not served"; with it, the cluster is down.
            &["CLUSTER", "DELSLOTS", "7365"],
        ],
    ));
    assert!(wait_until(Duration::from_secs(20), || r
        .info_field("cluster_state")
        == "fail"));
    check(compare(
        &mut p,
        &mut r,
        &[
            &["CLUSTER", "INFO"],
            &["GET", "b"],
            &["GET", "c"],
            &["CONFIG", "SET", "cluster-allow-reads-when-down", "yes"],
            &["GET", "b"],
            &["SET", "b", "1"],
            &["EVAL", "return redis.call('get', 'b')", "0"],
            &["EVAL", "return redis.call('set', 'b', '1')", "0"],
            &["CONFIG", "SET", "cluster-allow-reads-when-down", "no"],
            &["EVAL", "return redis.call('get', 'b')", "0"],
            // Sharded Pub/Sub has its own setting (default yes).
            &["SPUBLISH", "b", "m"],
            &["SPUBLISH", "a", "m"],
            &["CONFIG", "SET", "cluster-allow-pubsubshard-when-down", "no"],
            &["SPUBLISH", "b", "m"],
            &["CONFIG", "GET", "cluster-allow-pubsubshard-when-down"],
            &[
                "CONFIG",
                "SET",
                "cluster-allow-pubsubshard-when-down",
                "yes",
            ],
            &["CONFIG", "SET", "cluster-require-full-coverage", "no"],
        ],
    ));
    assert!(wait_until(Duration::from_secs(20), || r
        .info_field("cluster_state")
        == "ok"));
    check(compare(
        &mut p,
        &mut r,
        &[&["GET", "c"], &["SET", "b", "1"], &["CLUSTER", "INFO"]],
    ));
}

/// The same replies over RESP3 (verbatim text, maps).
#[test]
fn cluster_replies_in_resp3() {
    let Some((mut p, mut r)) = pair() else { return };
    for n in [&mut p, &mut r] {
        n.conn.cmd(&["HELLO", "3"]);
        n.cmd(&["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]);
        n.cmd(&["CONFIG", "SET", "cluster-announce-hostname", "h.example"]);
    }
    assert!(wait_until(Duration::from_secs(20), || r
        .info_field("cluster_state")
        == "ok"));
    check(compare(
        &mut p,
        &mut r,
        &[
            &["CLUSTER", "INFO"],
            &["CLUSTER", "NODES"],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
            &["CLUSTER", "LINKS"],
            &["CLUSTER", "MYID"],
            &["CLUSTER", "GETKEYSINSLOT", "0", "5"],
            &["CLUSTER", "COUNTKEYSINSLOT", "0"],
            &[
                "CONFIG",
                "SET",
                "cluster-preferred-endpoint-type",
                "unknown-endpoint",
            ],
            &["CLUSTER", "SLOTS"],
            &["CLUSTER", "SHARDS"],
        ],
    ));
}

/// Without `cluster-port`, the bus port is port + 10000: a client port
/// above 55535 stops startup, as in Redis.
#[test]
fn port_too_high_for_the_bus_refuses_to_start() {
    let dir = TempDir::new("cluster-high-port");
    let f = dir.join("nodes.conf").display().to_string();
    let (code, log) = petrel_startup_failure(
        None,
        &[
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            &f,
            "--port",
            "60000",
        ],
    );
    assert_ne!(code, Some(0));
    assert!(
        log.contains("Your Redis port number must be 55535 or less."),
        "{log}"
    );
    assert!(!dir.join("nodes.conf").exists());
}
