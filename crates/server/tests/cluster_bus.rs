//! The cluster bus (issue 22) between real processes: petrel nodes with
//! each other and with redis-server 7.0 nodes. The handshake and gossip
//! (CLUSTER MEET, node ids learned, CLUSTER NODES agreed, slots and epochs
//! propagated, nodes.conf), `redis-cli --cluster create` and `check`, a
//! cluster client routed by MOVED, failure detection (PFAIL → FAIL), and
//! the codec against a message redis-server itself sent. Tests that need
//! redis-server skip without it unless PETREL_REQUIRE_REDIS=1.

mod common;
use common::cluster::*;
use common::*;

use std::io::Read;

use server::cluster_bus::codec;

/// A cluster-mode server with its own free bus port.
fn node(kind: Kind, extra: &[(&str, &str)]) -> Server {
    let cport = free_port().to_string();
    let mut o = Opts::new(&[("cluster-enabled", "yes"), ("cluster-port", &cport)]);
    for (k, v) in extra {
        o = o.arg(k, v);
    }
    Server::start_opts(kind, o)
}

/// Every node lists every node, connected, with its address, the flags
/// it should have, and the slots `slots` says it owns.
fn agreed(nodes: &[&Server], slots: &[&str]) -> Result<(), String> {
    let ids: Vec<String> = nodes.iter().map(|s| myid(s)).collect();
    for (i, s) in nodes.iter().enumerate() {
        let table = nodes_table(s)?;
        if table.len() != nodes.len() {
            return Err(format!("node {i} knows {} nodes: {table:?}", table.len()));
        }
        for (j, other) in nodes.iter().enumerate() {
            let row = table
                .iter()
                .find(|r| r[0] == ids[j])
                .ok_or_else(|| format!("node {i} does not know node {j}: {table:?}"))?;
            let want_addr = format!("127.0.0.1:{}@{}", other.port(), bus_port(other));
            let addr = row[1].split(',').next().unwrap();
            if addr != want_addr {
                return Err(format!(
                    "node {i} has {} for node {j}, not {want_addr}",
                    row[1]
                ));
            }
            let want_flags = if i == j { "myself,master" } else { "master" };
            if row[2] != want_flags || row[7] != "connected" {
                return Err(format!("node {i} sees node {j} as {row:?}"));
            }
            let got_slots = row[8..].join(" ");
            if got_slots != slots[j] {
                return Err(format!(
                    "node {i} sees node {j} owning {got_slots:?}, not {:?}",
                    slots[j]
                ));
            }
        }
    }
    Ok(())
}

fn meet(a: &Server, b: &Server) {
    let r = cmd(
        a,
        &[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &b.port().to_string(),
            &bus_port(b).to_string(),
        ],
    );
    assert_eq!(r, Value::Simple(b"OK".to_vec()));
}

#[test]
fn meet_argument_errors_match_redis() {
    let p = node(Kind::Petrel, &[]);
    let cases: &[&[&str]] = &[
        &["CLUSTER", "MEET", "nonsense", "7000"],
        &["CLUSTER", "MEET", "127.0.0.1", "x"],
        &["CLUSTER", "MEET", "127.0.0.1", "7000", "y"],
        &["CLUSTER", "MEET", "127.0.0.1", "70000"],
        &["CLUSTER", "MEET", "127.0.0.1"],
    ];
    let want = [
        "ERR Invalid node address specified: nonsense:7000",
        "ERR Invalid TCP base port specified: x",
        "ERR Invalid TCP bus port specified: y",
        "ERR Invalid node address specified: 127.0.0.1:70000",
        "ERR wrong number of arguments for 'cluster|meet' command",
    ];
    for (c, w) in cases.iter().zip(want) {
        match p.raw().cmd(c) {
            Value::Error(e) => assert_eq!(String::from_utf8_lossy(&e), w, "{c:?}"),
            other => panic!("{c:?}: {other:?}"),
        }
    }
    if redis_available() {
        let r = node(Kind::Redis, &[]);
        for (c, w) in cases.iter().zip(want) {
            match r.raw().cmd(c) {
                Value::Error(e) => assert_eq!(String::from_utf8_lossy(&e), w, "redis {c:?}"),
                other => panic!("redis {c:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn petrel_nodes_meet_gossip_and_share_slots() {
    let a = node(Kind::Petrel, &[]);
    let b = node(Kind::Petrel, &[]);
    let c = node(Kind::Petrel, &[]);
    // a meets b, b meets c: a learns c from gossip.
    meet(&a, &b);
    meet(&b, &c);
    cmd(&a, &["CLUSTER", "ADDSLOTSRANGE", "0", "99"]);
    cmd(&c, &["CLUSTER", "ADDSLOTS", "200", "300"]);
    wait_for("agreement", || {
        agreed(&[&a, &b, &c], &["0-99", "", "200 300"])
    });
    // Every node's nodes.conf names the others.
    for s in [&a, &b, &c] {
        let conf = std::fs::read_to_string(s.dir().join("nodes.conf")).unwrap();
        for o in [&a, &b, &c] {
            assert!(conf.contains(&myid(o)), "{conf}");
        }
        assert!(conf.contains("vars currentEpoch"));
    }
    // Epochs: after meeting, the masters' config epochs are distinct
    // (the collision rule) and every node agrees on the current epoch.
    wait_for("epochs", || {
        let epochs: Vec<String> = [&a, &b, &c]
            .iter()
            .map(|s| {
                nodes_table(s)
                    .unwrap()
                    .into_iter()
                    .find(|r| r[2].contains("myself"))
                    .unwrap()[6]
                    .clone()
            })
            .collect();
        let mut d = epochs.clone();
        d.sort();
        d.dedup();
        if d.len() != 3 {
            return Err(format!("config epochs {epochs:?}"));
        }
        let cur: Vec<String> = [&a, &b, &c]
            .iter()
            .map(|s| {
                text(cmd(s, &["CLUSTER", "INFO"]))
                    .lines()
                    .find(|l| l.starts_with("cluster_current_epoch:"))
                    .unwrap()
                    .to_string()
            })
            .collect();
        if cur.iter().any(|c| *c != cur[0]) {
            return Err(format!("current epochs {cur:?}"));
        }
        Ok(())
    });
    // CLUSTER LINKS: a link to and a link from each other node.
    wait_for("links", || {
        let Value::Array(links) = cmd(&a, &["CLUSTER", "LINKS"]) else {
            return Err("not an array".into());
        };
        let mut seen: Vec<(String, String)> = links
            .iter()
            .map(|l| {
                let Value::Array(kv) = l else { panic!("{l:?}") };
                let f = |k: &str| {
                    let i = kv
                        .iter()
                        .position(|x| *x == Value::Bulk(k.as_bytes().to_vec()))
                        .unwrap();
                    match &kv[i + 1] {
                        Value::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
                        Value::Int(n) => n.to_string(),
                        v => panic!("{v:?}"),
                    }
                };
                assert_eq!(kv.len(), 12);
                (f("direction"), f("node"))
            })
            .collect();
        seen.sort();
        let mut want = vec![
            ("from".to_string(), myid(&b)),
            ("from".to_string(), myid(&c)),
            ("to".to_string(), myid(&b)),
            ("to".to_string(), myid(&c)),
        ];
        want.sort();
        if seen != want {
            return Err(format!("{seen:?}"));
        }
        Ok(())
    });
    // The bus's message counters move.
    let info = text(cmd(&a, &["CLUSTER", "INFO"]));
    assert!(info.contains("cluster_stats_messages_ping_sent:"), "{info}");
    assert!(
        info.contains("cluster_stats_messages_pong_received:"),
        "{info}"
    );
}

#[test]
fn petrel_and_redis_nodes_meet_both_ways() {
    if !redis_available() {
        return;
    }
    let p1 = node(Kind::Petrel, &[]);
    let r = node(Kind::Redis, &[]);
    let p2 = node(Kind::Petrel, &[]);
    meet(&p1, &r); // petrel meets redis
    meet(&r, &p2); // redis meets petrel
    cmd(&r, &["CLUSTER", "ADDSLOTSRANGE", "0", "10"]);
    cmd(&p2, &["CLUSTER", "ADDSLOTSRANGE", "11", "20"]);
    wait_for("agreement", || {
        agreed(&[&p1, &r, &p2], &["", "0-10", "11-20"])
    });
}

/// A Redis 7.0 MEET, as redis-server sends it to a node it was told to
/// meet, decodes and encodes back to the same bytes; its fields are the
/// sender's.
#[test]
fn codec_roundtrips_a_redis_meet() {
    if !redis_available() {
        return;
    }
    let fake = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let fport = fake.local_addr().unwrap().port();
    let r = node(
        Kind::Redis,
        &[("cluster-announce-hostname", "redis-a.example")],
    );
    cmd(&r, &["CLUSTER", "ADDSLOTS", "5", "16383"]);
    cmd(
        &r,
        &[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &fport.to_string(),
            &fport.to_string(),
        ],
    );
    fake.set_nonblocking(false).unwrap();
    let (mut s, _) = fake.accept().unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = [0u8; 8];
    s.read_exact(&mut head).unwrap();
    let len = codec::frame_len(&head).unwrap().unwrap();
    let mut msg = head.to_vec();
    msg.resize(len, 0);
    s.read_exact(&mut msg[8..]).unwrap();
    if let Ok(p) = std::env::var("PETREL_WRITE_BUS_FIXTURE") {
        std::fs::write(p, &msg).unwrap();
    }
    let m = codec::decode(&msg).unwrap();
    assert_eq!(codec::encode(&m), msg);
    let h = &m.header;
    assert_eq!(h.mtype, codec::mtype::MEET);
    assert_eq!(codec::field_text(&h.sender), myid(&r));
    assert_eq!(h.port, r.port());
    assert_eq!(h.cport, bus_port(&r));
    assert_eq!(h.flags, codec::wflags::MYSELF | codec::wflags::MASTER);
    assert!(codec::slot_bit(&h.myslots, 5) && codec::slot_bit(&h.myslots, 16383));
    assert!(!codec::slot_bit(&h.myslots, 6));
    match &m.body {
        codec::Body::Ping { exts, .. } => {
            assert_eq!(exts.len(), 1);
            assert_eq!(exts[0].etype, codec::ext::HOSTNAME);
            assert_eq!(exts[0].text(), "redis-a.example");
        }
        other => panic!("{other:?}"),
    }
}

/// `redis-cli --cluster create` of `nodes` (masters only), then `check`.
fn create_and_check(nodes: &[&Server]) {
    let mut args = vec!["--cluster".to_string(), "create".to_string()];
    args.extend(nodes.iter().map(|s| s.addr()));
    args.push("--cluster-yes".into());
    let (ok, out) = redis_cli(&args);
    assert!(ok, "create failed:\n{out}");
    assert!(
        out.contains("[OK] All nodes agree about slots configuration."),
        "{out}"
    );
    assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
    for s in nodes {
        let (ok, out) = redis_cli(&["--cluster".into(), "check".into(), s.addr()]);
        assert!(ok, "check failed:\n{out}");
        assert!(
            out.contains("[OK] All nodes agree about slots configuration."),
            "{out}"
        );
        assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
        assert!(
            !out.contains("[ERR]") && !out.contains("[WARNING]"),
            "{out}"
        );
    }
    wait_for("cluster_state:ok everywhere", || {
        for s in nodes {
            let info = text(cmd(s, &["CLUSTER", "INFO"]));
            if !info.contains("cluster_state:ok") {
                return Err(info);
            }
        }
        Ok(())
    });
}

/// redis-py's RedisCluster, started on the first node, writes and reads
/// back keys that land on every node (MOVED routing).
fn cluster_client_workload(nodes: &[&Server]) {
    let script = r#"
import sys
from redis.cluster import RedisCluster
rc = RedisCluster(host='127.0.0.1', port=int(sys.argv[1]))
for i in range(300):
    rc.set('key:%d' % i, 'v%d' % i)
for i in range(300):
    assert rc.get('key:%d' % i) == b'v%d' % i, i
print('ok')
"#;
    let o = std::process::Command::new("python3")
        .args(["-c", script, &nodes[0].port().to_string()])
        .output()
        .unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success() && out.contains("ok"), "{out}");
    let mut total = 0;
    for s in nodes {
        let Value::Int(n) = cmd(s, &["DBSIZE"]) else {
            panic!()
        };
        assert!(n > 0, "a node got no keys");
        total += n;
    }
    assert_eq!(total, 300);
    // A key asked of a node that does not own it is redirected.
    let slot_owner_elsewhere = nodes
        .iter()
        .any(|s| matches!(cmd(s, &["GET", "key:0"]), Value::Error(e) if e.starts_with(b"MOVED ")));
    assert!(slot_owner_elsewhere);
}

#[test]
fn redis_cli_creates_a_petrel_cluster() {
    if !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let a = node(Kind::Petrel, &[]);
    let b = node(Kind::Petrel, &[]);
    let c = node(Kind::Petrel, &[]);
    create_and_check(&[&a, &b, &c]);
    if have_tool("python3", &["-c", "import redis.cluster"]) {
        cluster_client_workload(&[&a, &b, &c]);
    }
}

#[test]
fn redis_cli_creates_a_mixed_petrel_and_redis_cluster() {
    if !redis_available() || !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let a = node(Kind::Petrel, &[]);
    let r = node(Kind::Redis, &[]);
    let c = node(Kind::Petrel, &[]);
    create_and_check(&[&a, &r, &c]);
    if have_tool("python3", &["-c", "import redis.cluster"]) {
        cluster_client_workload(&[&a, &r, &c]);
    }
}

/// A master that stops answering is flagged `fail?` by each node, then
/// `fail` once a majority of masters report it; the cluster goes down.
#[test]
fn a_dead_master_is_flagged_failing_then_failed() {
    if !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let t = [("cluster-node-timeout", "1000")];
    let a = node(Kind::Petrel, &t);
    let b = if redis_available() {
        node(Kind::Redis, &t)
    } else {
        node(Kind::Petrel, &t)
    };
    let c = node(Kind::Petrel, &t);
    create_and_check(&[&a, &b, &c]);
    let dead = myid(&c);
    drop(c);
    for s in [&a, &b] {
        wait_for("FAIL flag", || {
            let table = nodes_table(s)?;
            let row = table.iter().find(|r| r[0] == dead).unwrap();
            if row[2] != "master,fail" {
                return Err(format!("{row:?}"));
            }
            let info = text(cmd(s, &["CLUSTER", "INFO"]));
            if !info.contains("cluster_state:fail") {
                return Err(info);
            }
            Ok(())
        });
    }
}

/// PUBLISH on any node reaches the subscribers of every node, relayed
/// over the bus both ways between petrel and redis-server.
#[test]
fn publish_reaches_subscribers_on_every_node() {
    let a = node(Kind::Petrel, &[]);
    let b = if redis_available() {
        node(Kind::Redis, &[])
    } else {
        node(Kind::Petrel, &[])
    };
    let c = node(Kind::Petrel, &[]);
    meet(&a, &b);
    meet(&a, &c);
    wait_for("agreement", || agreed(&[&a, &b, &c], &["", "", ""]));
    let mut subs: Vec<RawConn> = [&a, &b, &c]
        .iter()
        .map(|s| {
            let mut r = s.raw();
            r.timeout = Duration::from_secs(10);
            r.send_cmd(&["SUBSCRIBE", "news"]);
            let _ = r.read_reply();
            r
        })
        .collect();
    for (from, msg) in [(&a, "from-petrel"), (&b, "from-b")] {
        assert_eq!(cmd(from, &["PUBLISH", "news", msg]), Value::Int(1));
        for (i, sub) in subs.iter_mut().enumerate() {
            let got = sub.read_reply();
            let want = Value::Array(vec![
                Value::Bulk(b"message".to_vec()),
                Value::Bulk(b"news".to_vec()),
                Value::Bulk(msg.as_bytes().to_vec()),
            ]);
            assert_eq!(got, want, "subscriber {i}");
        }
    }
}

/// A slot claimed by a node with a greater config epoch changes owner on
/// every node (the header's slots, and UPDATE to the stale owner). The
/// owner keeps another slot: a master that loses its last slot becomes
/// the claimer's replica in Redis, which petrel does not do yet.
fn greater_epoch_takes_the_slot(owner: &Server, claimer: &Server) {
    meet(owner, claimer);
    cmd(owner, &["CLUSTER", "ADDSLOTS", "5", "6"]);
    wait_for("agreement", || agreed(&[owner, claimer], &["5-6", ""]));
    // Both start at config epoch 0: wait for the collision rule to have
    // set them apart (and both to know it), so the bump below is the
    // greatest epoch.
    wait_for("distinct epochs", || {
        let epochs = |s: &Server| -> Vec<String> {
            let mut v: Vec<String> = nodes_table(s)
                .unwrap()
                .into_iter()
                .map(|r| r[6].clone())
                .collect();
            v.sort();
            v
        };
        let (a, b) = (epochs(owner), epochs(claimer));
        if a != b || a[0] == a[1] {
            return Err(format!("{a:?} {b:?}"));
        }
        Ok(())
    });
    // The claimer takes the greatest epoch first (BUMPED, or STILL when
    // it already had it), then the slot: claimed the other way round, a
    // ping of the owner at a greater epoch could take the slot back.
    let Value::Simple(bumped) = cmd(claimer, &["CLUSTER", "BUMPEPOCH"]) else {
        panic!()
    };
    assert!(
        bumped.starts_with(b"BUMPED") || bumped.starts_with(b"STILL"),
        "{bumped:?}"
    );
    let id = myid(claimer);
    assert_eq!(
        cmd(claimer, &["CLUSTER", "SETSLOT", "5", "NODE", &id]),
        Value::Simple(b"OK".to_vec())
    );
    wait_for("new owner everywhere", || {
        agreed(&[owner, claimer], &["6", "5"])
    });
}

#[test]
fn slot_ownership_follows_the_config_epoch() {
    let a = node(Kind::Petrel, &[]);
    let b = node(Kind::Petrel, &[]);
    greater_epoch_takes_the_slot(&a, &b);
    if redis_available() {
        let r = node(Kind::Redis, &[]);
        let p = node(Kind::Petrel, &[]);
        greater_epoch_takes_the_slot(&r, &p);
        let p = node(Kind::Petrel, &[]);
        let r = node(Kind::Redis, &[]);
        greater_epoch_takes_the_slot(&p, &r);
    }
}

/// A master whose last slot goes to another node at a greater config
/// epoch becomes that node's replica, as Redis 7.0 does: CLUSTER NODES
/// shows it as its replica everywhere, and it replicates from it.
#[test]
fn a_master_losing_its_last_slot_becomes_a_replica() {
    let owner = node(Kind::Petrel, &[]);
    let claimer = node(Kind::Petrel, &[]);
    meet(&owner, &claimer);
    cmd(&owner, &["CLUSTER", "ADDSLOTS", "5"]);
    wait_for("agreement", || agreed(&[&owner, &claimer], &["5", ""]));
    wait_for("distinct epochs", || {
        let mut v: Vec<String> = nodes_table(&claimer)?
            .into_iter()
            .map(|r| r[6].clone())
            .collect();
        v.dedup();
        if v.len() != 2 {
            return Err(format!("{v:?}"));
        }
        Ok(())
    });
    let cid = myid(&claimer);
    cmd(&claimer, &["SET", "{5}-no-matter", "x"]);
    cmd(&claimer, &["CLUSTER", "BUMPEPOCH"]);
    cmd(&claimer, &["CLUSTER", "SETSLOT", "5", "NODE", &cid]);
    let oid = myid(&owner);
    wait_for("replica everywhere", || {
        for (s, me) in [(&owner, true), (&claimer, false)] {
            let row = nodes_table(s)?.into_iter().find(|r| r[0] == oid).unwrap();
            let flags = if me { "myself,slave" } else { "slave" };
            if row[2] != flags || row[3] != cid || row.len() != 8 {
                return Err(format!("{row:?}"));
            }
        }
        let info = query(&owner, &["INFO", "replication"])?;
        if !info.contains("role:slave")
            || !info.contains(&format!("master_port:{}", claimer.port()))
            || !info.contains("master_link_status:up")
        {
            return Err(info);
        }
        Ok(())
    });
    let conf = std::fs::read_to_string(owner.dir().join("nodes.conf")).unwrap();
    assert!(conf.contains(&format!("myself,slave {cid}")), "{conf}");
}

/// `redis-cli --cluster create --cluster-replicas 1` of six petrel nodes:
/// CLUSTER REPLICATE makes three of them replicas, every node agrees on
/// the roles, and each replica's link to its master comes up.
#[test]
fn redis_cli_creates_a_petrel_cluster_with_replicas() {
    if !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let nodes: Vec<Server> = (0..6).map(|_| node(Kind::Petrel, &[])).collect();
    let mut args = vec!["--cluster".to_string(), "create".to_string()];
    args.extend(nodes.iter().map(|s| s.addr()));
    args.extend([
        "--cluster-replicas".into(),
        "1".into(),
        "--cluster-yes".into(),
    ]);
    let (ok, out) = redis_cli(&args);
    assert!(ok, "create failed:\n{out}");
    assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
    wait_for("roles agreed, replicas linked", || {
        for s in &nodes {
            let table = nodes_table(s)?;
            let masters = table.iter().filter(|r| r[2].ends_with("master")).count();
            let replicas: Vec<&Vec<String>> =
                table.iter().filter(|r| r[2].ends_with("slave")).collect();
            if table.len() != 6 || masters != 3 || replicas.len() != 3 {
                return Err(format!("{table:?}"));
            }
            for r in replicas {
                let master = table.iter().find(|m| m[0] == r[3]);
                if !master.is_some_and(|m| m[2].ends_with("master") && m.len() > 8) {
                    return Err(format!("replica of no serving master: {r:?}"));
                }
            }
        }
        for s in &nodes {
            let info = query(s, &["INFO", "replication"])?;
            if info.contains("role:slave") && !info.contains("master_link_status:up") {
                return Err(info);
            }
        }
        Ok(())
    });
    let (ok, out) = redis_cli(&["--cluster".into(), "check".into(), nodes[0].addr()]);
    assert!(
        ok && out.contains("[OK] All nodes agree about slots configuration."),
        "{out}"
    );
    assert!(
        !out.contains("[ERR]") && !out.contains("[WARNING]"),
        "{out}"
    );
}

#[test]
fn cluster_replicate_errors_match_redis() {
    let kinds: &[Kind] = if redis_available() {
        &[Kind::Petrel, Kind::Redis]
    } else {
        &[Kind::Petrel]
    };
    for &k in kinds {
        let a = node(k, &[]);
        let b = node(k, &[]);
        meet(&a, &b);
        wait_for("agreement", || agreed(&[&a, &b], &["", ""]));
        let err = |v: Value| match v {
            Value::Error(e) => String::from_utf8_lossy(&e).into_owned(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            err(cmd(&a, &["CLUSTER", "REPLICATE", &"0".repeat(40)])),
            format!("ERR Unknown node {}", "0".repeat(40)),
            "{k:?}"
        );
        assert_eq!(
            err(cmd(&a, &["CLUSTER", "REPLICATE", &myid(&a)])),
            "ERR Can't replicate myself",
            "{k:?}"
        );
        cmd(&a, &["CLUSTER", "ADDSLOTS", "1"]);
        assert_eq!(
            err(cmd(&a, &["CLUSTER", "REPLICATE", &myid(&b)])),
            "ERR To set a master the node must be empty and without assigned slots.",
            "{k:?}"
        );
    }
}

/// A field of CLUSTER INFO.
fn cluster_info_num(s: &Server, field: &str) -> i64 {
    let text = match cmd(s, &["CLUSTER", "INFO"]) {
        Value::Bulk(b) | Value::Verbatim { data: b, .. } => String::from_utf8(b).unwrap(),
        v => panic!("CLUSTER INFO: {v:?}"),
    };
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {text}"))
        .trim()
        .parse()
        .unwrap()
}

/// Two nodes of `kind`; the second stops reading (SIGSTOP) while the
/// first relays PUBLISH messages to it over the bus: with
/// `cluster-link-sendbuf-limit 1mb` the first frees the link whose unsent
/// bytes pass the limit. Returns (links freed, the setting as CONFIG GET
/// shows it).
fn sendbuf_limit(kind: Kind) -> Option<(i64, Value)> {
    if kind == Kind::Redis && !redis_available() {
        return None;
    }
    let a = node(kind, &[]);
    let b = node(kind, &[]);
    meet(&a, &b);
    wait_for("agreement", || agreed(&[&a, &b], &["", ""]));
    assert_eq!(
        cluster_info_num(&a, "total_cluster_links_buffer_limit_exceeded"),
        0
    );
    assert_eq!(
        cmd(&a, &["CONFIG", "SET", "cluster-link-sendbuf-limit", "1mb"]),
        Value::Simple(b"OK".to_vec())
    );
    let shown = cmd(&a, &["CONFIG", "GET", "cluster-link-sendbuf-limit"]);
    b.signal(libc::SIGSTOP);
    let big = "x".repeat(100_000);
    let mut c = a.raw();
    wait_for("a link over the limit to be freed", || {
        for _ in 0..20 {
            c.cmd(&["PUBLISH", "ch", &big]);
        }
        match cluster_info_num(&a, "total_cluster_links_buffer_limit_exceeded") {
            0 => Err("none yet".into()),
            _ => Ok(()),
        }
    });
    b.signal(libc::SIGCONT);
    Some((
        cluster_info_num(&a, "total_cluster_links_buffer_limit_exceeded"),
        shown,
    ))
}

/// `cluster-link-sendbuf-limit`: a link whose peer does not read is freed
/// once it holds more than the limit, and CLUSTER INFO counts it, on
/// petrel as on redis-server.
#[test]
fn a_link_over_its_send_buffer_limit_is_freed() {
    let want = Value::Array(vec![
        Value::Bulk(b"cluster-link-sendbuf-limit".to_vec()),
        Value::Bulk(b"1048576".to_vec()),
    ]);
    for kind in [Kind::Petrel, Kind::Redis] {
        if let Some((freed, shown)) = sendbuf_limit(kind) {
            assert!(freed >= 1, "{kind:?}");
            assert_eq!(shown, want, "{kind:?}");
        }
    }
}
