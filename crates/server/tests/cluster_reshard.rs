//! Moving slots between nodes (issue 22): `redis-cli --cluster reshard`,
//! `rebalance`, `add-node`, `del-node`, `fix` and `check` on a cluster of
//! petrel masters, and resharding both ways between petrel and
//! redis-server 7.0 nodes of one cluster while a client writes; every key
//! written before (and by the writer) is read back afterwards through a
//! client that follows MOVED and ASK. Also: a master losing a slot with
//! keys to a greater config epoch deletes them. Tests that need
//! redis-server skip without it unless PETREL_REQUIRE_REDIS=1; tests that
//! need redis-cli skip without it.

mod common;
use common::cluster::*;
use common::*;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// A cluster-mode server with its own free bus port.
fn node(kind: Kind) -> Server {
    node_with(kind, &[])
}

fn node_with(kind: Kind, extra: &[(&str, &str)]) -> Server {
    let cport = free_port().to_string();
    let mut o = Opts::new(&[("cluster-enabled", "yes"), ("cluster-port", &cport)]);
    for (k, v) in extra {
        o = o.arg(k, v);
    }
    Server::start_opts(kind, o)
}

/// Waits until every node knows every other (no handshake left):
/// `redis-cli --cluster add-node` returns before gossip spread the news.
fn all_known(nodes: &[&Server]) {
    let ids: Vec<String> = nodes.iter().map(|s| myid(s)).collect();
    wait_for("every node knows every node", || {
        for s in nodes {
            let t = query(s, &["CLUSTER", "NODES"])?;
            if t.lines().count() != nodes.len() || t.contains("handshake") {
                return Err(t);
            }
            if let Some(id) = ids.iter().find(|id| !t.contains(id.as_str())) {
                return Err(format!("{id} unknown: {t}"));
            }
        }
        Ok(())
    });
}

/// Runs `redis-cli --cluster <args>` and asserts it succeeded.
fn cluster_cmd(args: &[&str]) -> String {
    let mut all = vec!["--cluster"];
    all.extend_from_slice(args);
    let (ok, out) = redis_cli(&all);
    assert!(ok, "redis-cli {all:?} failed:\n{out}");
    assert!(!out.contains("[ERR]"), "redis-cli {all:?}:\n{out}");
    out
}

/// `redis-cli --cluster check` from every node passes cleanly (all slots
/// covered, all nodes agree, no open slot), and every node serves.
fn check_all(nodes: &[&Server]) {
    wait_for("a clean check from every node", || {
        for s in nodes {
            let (ok, out) = redis_cli(&["--cluster", "check", &s.addr()]);
            if !ok
                || !out.contains("[OK] All nodes agree about slots configuration.")
                || !out.contains("[OK] All 16384 slots covered.")
                || out.contains("[ERR]")
                || out.contains("[WARNING]")
            {
                return Err(out);
            }
            let info = query(s, &["CLUSTER", "INFO"])?;
            if !info.contains("cluster_state:ok") {
                return Err(info);
            }
        }
        Ok(())
    });
}

fn create(nodes: &[&Server]) {
    let addrs: Vec<String> = nodes.iter().map(|s| s.addr()).collect();
    let mut args = vec!["create"];
    args.extend(addrs.iter().map(|a| a.as_str()));
    args.push("--cluster-yes");
    cluster_cmd(&args);
    check_all(nodes);
}

/// Redis Cluster's key slot: CRC16 (XMODEM) of the key or its hash tag.
fn key_slot(key: &[u8]) -> u16 {
    let k = match key.iter().position(|&b| b == b'{') {
        Some(s) => match key[s + 1..].iter().position(|&b| b == b'}') {
            Some(0) | None => key,
            Some(e) => &key[s + 1..s + 1 + e],
        },
        None => key,
    };
    let mut crc: u16 = 0;
    for &b in k {
        crc ^= (b as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc % 16384
}

/// A cluster client: sends each command to the node it believes owns the
/// key's slot, follows MOVED (remembering the new owner) and ASK (ASKING
/// first), and retries TRYAGAIN and CLUSTERDOWN.
struct ClusterClient {
    conns: HashMap<u16, RawConn>,
    owner: Vec<u16>,
}

impl ClusterClient {
    fn new(seed: u16) -> ClusterClient {
        ClusterClient {
            conns: HashMap::new(),
            owner: vec![seed; 16384],
        }
    }

    fn conn(&mut self, port: u16) -> &mut RawConn {
        self.conns.entry(port).or_insert_with(|| {
            let mut c = RawConn::tcp(port);
            c.timeout = Duration::from_secs(30);
            c
        })
    }

    fn port_of(redirect: &[u8]) -> u16 {
        let t = String::from_utf8_lossy(redirect);
        let addr = t.split(' ').nth(2).expect("redirect address");
        addr.rsplit(':').next().unwrap().parse().unwrap()
    }

    fn cmd(&mut self, args: &[&str]) -> Value {
        let slot = key_slot(args[1].as_bytes()) as usize;
        let mut port = self.owner[slot];
        let mut asking = false;
        let end = Instant::now() + Duration::from_secs(60);
        loop {
            assert!(Instant::now() < end, "no answer for {args:?}");
            let c = self.conn(port);
            if asking {
                assert_eq!(c.cmd(&["ASKING"]), Value::Simple(b"OK".to_vec()));
            }
            let v = c.cmd(args);
            match &v {
                Value::Error(e) if e.starts_with(b"MOVED ") => {
                    port = Self::port_of(e);
                    self.owner[slot] = port;
                    asking = false;
                }
                Value::Error(e) if e.starts_with(b"ASK ") => {
                    port = Self::port_of(e);
                    asking = true;
                }
                Value::Error(e) if e.starts_with(b"TRYAGAIN") || e.starts_with(b"CLUSTERDOWN") => {
                    std::thread::sleep(Duration::from_millis(20));
                    asking = false;
                    port = self.owner[slot];
                }
                _ => return v,
            }
        }
    }
}

/// Writes `n` keys of several types through a cluster client.
fn write_keys(seed: u16, n: usize) {
    let mut c = ClusterClient::new(seed);
    for i in 0..n {
        let k = format!("key:{i}");
        let v = format!("value:{i}");
        assert_eq!(c.cmd(&["SET", &k, &v]), Value::Simple(b"OK".to_vec()));
        if i % 10 == 0 {
            let l = format!("list:{i}");
            assert_eq!(c.cmd(&["RPUSH", &l, "a", "b", &v]), Value::Int(3));
            let t = format!("ttl:{i}");
            assert_eq!(
                c.cmd(&["SET", &t, &v, "EX", "100000"]),
                Value::Simple(b"OK".to_vec())
            );
        }
    }
}

/// Every key `write_keys` wrote reads back, TTLs kept.
fn read_keys(seed: u16, n: usize) {
    let mut c = ClusterClient::new(seed);
    for i in 0..n {
        let k = format!("key:{i}");
        let v = format!("value:{i}");
        assert_eq!(
            c.cmd(&["GET", &k]),
            Value::Bulk(v.clone().into_bytes()),
            "{k}"
        );
        if i % 10 == 0 {
            let l = format!("list:{i}");
            assert_eq!(
                c.cmd(&["LRANGE", &l, "0", "-1"]),
                Value::Array(vec![
                    Value::Bulk(b"a".to_vec()),
                    Value::Bulk(b"b".to_vec()),
                    Value::Bulk(v.clone().into_bytes())
                ]),
                "{l}"
            );
            let t = format!("ttl:{i}");
            match c.cmd(&["TTL", &t]) {
                Value::Int(n) => assert!(n > 0 && n <= 100000, "{t}: {n}"),
                v => panic!("{t}: {v:?}"),
            }
        }
    }
}

/// Slots a node owns, per CLUSTER NODES as seen by itself.
fn owned_slots(s: &Server) -> usize {
    let nodes = text(cmd(s, &["CLUSTER", "NODES"]));
    let line = nodes.lines().find(|l| l.contains("myself")).unwrap();
    line.split(' ')
        .skip(8)
        .filter(|r| !r.starts_with('['))
        .map(|r| match r.split_once('-') {
            Some((a, b)) => b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1,
            None => 1,
        })
        .sum()
}

fn dbsize(s: &Server) -> i64 {
    match cmd(s, &["DBSIZE"]) {
        Value::Int(n) => n,
        v => panic!("{v:?}"),
    }
}

const KEYS: usize = 3000;

#[test]
fn redis_cli_reshards_rebalances_adds_deletes_and_fixes_petrel_nodes() {
    if !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let a = node(Kind::Petrel);
    let b = node(Kind::Petrel);
    let c = node(Kind::Petrel);
    create(&[&a, &b, &c]);
    write_keys(a.port(), KEYS);
    let before: i64 = [&a, &b, &c].iter().map(|s| dbsize(s)).sum();

    // reshard: 300 slots from a to b (slot moves are few in this test:
    // each saves nodes.conf on every node it touches).
    let (ida, idb, idc) = (myid(&a), myid(&b), myid(&c));
    let a_slots = owned_slots(&a);
    cluster_cmd(&[
        "reshard",
        &a.addr(),
        "--cluster-from",
        &ida,
        "--cluster-to",
        &idb,
        "--cluster-slots",
        "300",
        "--cluster-yes",
    ]);
    check_all(&[&a, &b, &c]);
    assert_eq!(owned_slots(&a), a_slots - 300);
    read_keys(c.port(), KEYS);

    // add-node, then rebalance a share onto the new (empty) master.
    let d = node(Kind::Petrel);
    cluster_cmd(&["add-node", &d.addr(), &a.addr()]);
    all_known(&[&a, &b, &c, &d]);
    check_all(&[&a, &b, &c, &d]);
    let idd = myid(&d);
    cluster_cmd(&[
        "rebalance",
        &a.addr(),
        "--cluster-use-empty-masters",
        "--cluster-weight",
        &format!("{idd}=0.1"),
        "--cluster-yes",
    ]);
    check_all(&[&a, &b, &c, &d]);
    assert!(owned_slots(&d) > 300, "{}", owned_slots(&d));
    assert!(dbsize(&d) > 0);
    read_keys(b.port(), KEYS);

    // Empty d (weight 0), then del-node it.
    cluster_cmd(&[
        "rebalance",
        &a.addr(),
        "--cluster-weight",
        &format!("{idd}=0"),
        "--cluster-yes",
    ]);
    assert_eq!(owned_slots(&d), 0);
    assert_eq!(dbsize(&d), 0);
    cluster_cmd(&["del-node", &a.addr(), &idd]);
    check_all(&[&a, &b, &c]);
    read_keys(a.port(), KEYS);
    let after: i64 = [&a, &b, &c].iter().map(|s| dbsize(s)).sum();
    assert_eq!(after, before);

    // fix: a slot left half-migrated (MIGRATING on its owner, IMPORTING
    // on another node, some keys moved) is closed and its keys gathered.
    let slot = key_slot(b"key:1");
    let owner = [(&a, &ida), (&b, &idb), (&c, &idc)]
        .into_iter()
        .find(|(s, _)| matches!(cmd(s, &["CLUSTER", "COUNTKEYSINSLOT", &slot.to_string()]), Value::Int(n) if n > 0))
        .expect("an owner of key:1's slot");
    let other = [(&a, &ida), (&b, &idb), (&c, &idc)]
        .into_iter()
        .find(|(s, _)| s.port() != owner.0.port())
        .unwrap();
    let s = slot.to_string();
    assert_eq!(
        cmd(other.0, &["CLUSTER", "SETSLOT", &s, "IMPORTING", owner.1]),
        Value::Simple(b"OK".to_vec())
    );
    assert_eq!(
        cmd(owner.0, &["CLUSTER", "SETSLOT", &s, "MIGRATING", other.1]),
        Value::Simple(b"OK".to_vec())
    );
    assert_eq!(
        cmd(
            owner.0,
            &[
                "MIGRATE",
                "127.0.0.1",
                &other.0.port().to_string(),
                "key:1",
                "0",
                "5000"
            ]
        ),
        Value::Simple(b"OK".to_vec())
    );
    let (_, out) = redis_cli(&["--cluster", "check", &a.addr()]);
    assert!(out.contains("open slot"), "{out}");
    cluster_cmd(&["fix", &a.addr(), "--cluster-yes"]);
    check_all(&[&a, &b, &c]);
    read_keys(a.port(), KEYS);
}

/// A client writing throughout; the value each key last got, kept.
struct Writer {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<HashMap<String, String>>,
}

fn start_writer(seed: u16) -> Writer {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    let handle = std::thread::spawn(move || {
        let mut c = ClusterClient::new(seed);
        let mut last = HashMap::new();
        let mut i = 0u64;
        while !s.load(Ordering::Relaxed) {
            let k = format!("w:{}", i % 2000);
            let v = format!("{i}");
            assert_eq!(
                c.cmd(&["SET", &k, &v]),
                Value::Simple(b"OK".to_vec()),
                "{k}"
            );
            last.insert(k, v);
            i += 1;
        }
        last
    });
    Writer { stop, handle }
}

impl Writer {
    fn finish(self) -> HashMap<String, String> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().expect("writer")
    }
}

fn reshard(from: &Server, to: &Server, slots: usize) {
    cluster_cmd(&[
        "reshard",
        &from.addr(),
        "--cluster-from",
        &myid(from),
        "--cluster-to",
        &myid(to),
        "--cluster-slots",
        &slots.to_string(),
        "--cluster-yes",
    ]);
}

#[test]
fn mixed_cluster_reshards_both_ways_under_writes() {
    if !redis_available() || !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let p1 = node(Kind::Petrel);
    let r = node(Kind::Redis);
    let p2 = node(Kind::Petrel);
    create(&[&p1, &r, &p2]);
    write_keys(p1.port(), KEYS);
    let w = start_writer(r.port());
    reshard(&p1, &r, 600);
    reshard(&r, &p2, 900);
    reshard(&p2, &p1, 700);
    reshard(&r, &p1, 300);
    let last = w.finish();
    check_all(&[&p1, &r, &p2]);
    read_keys(p2.port(), KEYS);
    let mut c = ClusterClient::new(p1.port());
    assert!(!last.is_empty());
    for (k, v) in &last {
        assert_eq!(
            c.cmd(&["GET", k]),
            Value::Bulk(v.clone().into_bytes()),
            "{k}"
        );
    }
    // Each key is on one node only.
    let total: i64 = [&p1, &r, &p2].iter().map(|s| dbsize(s)).sum();
    assert_eq!(total as usize, KEYS + KEYS / 10 * 2 + last.len());
}

/// With the AOF on, every write holds the journal's order lock: a command
/// let through on a MIGRATING slot checks its slot again under it
/// (`services::cluster::Pass`), so no write lands on a key MIGRATE moved.
#[test]
fn petrel_cluster_with_aof_reshards_under_writes() {
    if !have_tool("redis-cli", &["--version"]) {
        return;
    }
    let aof = [("appendonly", "yes")];
    let p1 = node_with(Kind::Petrel, &aof);
    let p2 = node_with(Kind::Petrel, &aof);
    let p3 = node_with(Kind::Petrel, &aof);
    create(&[&p1, &p2, &p3]);
    let w = start_writer(p3.port());
    reshard(&p1, &p2, 400);
    reshard(&p2, &p1, 300);
    let last = w.finish();
    check_all(&[&p1, &p2, &p3]);
    let mut c = ClusterClient::new(p1.port());
    assert!(!last.is_empty());
    for (k, v) in &last {
        assert_eq!(
            c.cmd(&["GET", k]),
            Value::Bulk(v.clone().into_bytes()),
            "{k}"
        );
    }
    let total: i64 = [&p1, &p2, &p3].iter().map(|s| dbsize(s)).sum();
    assert_eq!(total as usize, last.len());
}

/// A master that loses a slot holding keys to a greater config epoch (and
/// keeps another slot) deletes that slot's keys, as Redis 7.0 does after
/// an UPDATE; the keys of the slot it keeps stay.
#[test]
fn a_master_losing_a_slot_with_keys_deletes_them() {
    // Two slots assigned in all: the cluster must serve without the rest.
    let partial = [("cluster-require-full-coverage", "no")];
    let owner = node_with(Kind::Petrel, &partial);
    let claimer = node_with(Kind::Petrel, &partial);
    let cport = |s: &Server| -> String {
        let nodes = text(cmd(s, &["CLUSTER", "NODES"]));
        let line = nodes
            .lines()
            .find(|l| l.contains("myself"))
            .unwrap()
            .to_string();
        let addr = line.split(' ').nth(1).unwrap().to_string();
        addr.split('@')
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string()
    };
    let port = claimer.port().to_string();
    let cp = cport(&claimer);
    assert_eq!(
        cmd(&owner, &["CLUSTER", "MEET", "127.0.0.1", &port, &cp]),
        Value::Simple(b"OK".to_vec())
    );
    // Two slots on the owner, keys in both (hash tags pick the slots).
    let (s5, s6) = (key_slot(b"{a}"), key_slot(b"{b}"));
    cmd(
        &owner,
        &["CLUSTER", "ADDSLOTS", &s5.to_string(), &s6.to_string()],
    );
    for i in 0..20 {
        assert_eq!(
            cmd(&owner, &["SET", &format!("{{a}}{i}"), "x"]),
            Value::Simple(b"OK".to_vec())
        );
        assert_eq!(
            cmd(&owner, &["SET", &format!("{{b}}{i}"), "y"]),
            Value::Simple(b"OK".to_vec())
        );
    }
    let oid = myid(&owner);
    let cid = myid(&claimer);
    wait_for("both know both, epochs apart", || {
        let nodes = text(cmd(&claimer, &["CLUSTER", "NODES"]));
        let epochs: Vec<&str> = nodes
            .lines()
            .map(|l| l.split(' ').nth(6).unwrap())
            .collect();
        if !nodes.contains(&oid) || epochs.len() != 2 || epochs[0] == epochs[1] {
            return Err(nodes);
        }
        if !nodes.contains(&format!("{s5} {s6}")) && !nodes.contains(&format!("{s6} {s5}")) {
            return Err(nodes);
        }
        Ok(())
    });
    cmd(&claimer, &["CLUSTER", "BUMPEPOCH"]);
    assert_eq!(
        cmd(
            &claimer,
            &["CLUSTER", "SETSLOT", &s5.to_string(), "NODE", &cid]
        ),
        Value::Simple(b"OK".to_vec())
    );
    wait_for("the owner dropped the lost slot's keys", || {
        let n = cmd(&owner, &["CLUSTER", "COUNTKEYSINSLOT", &s5.to_string()]);
        if n != Value::Int(0) {
            return Err(format!("{n:?}"));
        }
        Ok(())
    });
    assert_eq!(
        cmd(&owner, &["CLUSTER", "COUNTKEYSINSLOT", &s6.to_string()]),
        Value::Int(20)
    );
    assert!(text(cmd(&owner, &["ROLE"]).clone_first()).contains("master"));
}

trait First {
    fn clone_first(self) -> Value;
}

impl First for Value {
    fn clone_first(self) -> Value {
        match self {
            Value::Array(mut a) => a.remove(0),
            v => v,
        }
    }
}

/// CLUSTER REPLICAS / SLAVES list a master's replicas as CLUSTER NODES
/// lines; asked about a replica they answer that it is not a master.
#[test]
fn cluster_replicas_lists_the_replicas_of_a_master() {
    let m = node(Kind::Petrel);
    let r = node(Kind::Petrel);
    let cport = {
        let nodes = text(cmd(&r, &["CLUSTER", "NODES"]));
        let line = nodes
            .lines()
            .find(|l| l.contains("myself"))
            .unwrap()
            .to_string();
        let addr = line.split(' ').nth(1).unwrap().to_string();
        addr.split('@')
            .nth(1)
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string()
    };
    cmd(
        &m,
        &[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &r.port().to_string(),
            &cport,
        ],
    );
    let (mid, rid) = (myid(&m), myid(&r));
    wait_for("r knows m", || {
        let n = text(cmd(&r, &["CLUSTER", "NODES"]));
        if n.contains(&mid) && !n.contains("handshake") {
            Ok(())
        } else {
            Err(n)
        }
    });
    assert_eq!(
        cmd(&r, &["CLUSTER", "REPLICATE", &mid]),
        Value::Simple(b"OK".to_vec())
    );
    wait_for("m sees r as its replica", || {
        for sub in ["REPLICAS", "SLAVES"] {
            let v = cmd(&m, &["CLUSTER", sub, &mid]);
            let Value::Array(a) = &v else {
                return Err(format!("{v:?}"));
            };
            if a.len() != 1 {
                return Err(format!("{v:?}"));
            }
            let line = text(a[0].clone());
            let f: Vec<&str> = line.split(' ').collect();
            if f[0] != rid || f[2] != "slave" || f[3] != mid || line.ends_with('\n') {
                return Err(line);
            }
            // The same line as CLUSTER NODES shows (times aside).
            let nodes = text(cmd(&m, &["CLUSTER", "NODES"]));
            let n: Vec<&str> = nodes
                .lines()
                .find(|l| l.starts_with(&rid))
                .unwrap()
                .split(' ')
                .collect();
            if f[..4] != n[..4] || f[6..] != n[6..] {
                return Err(format!("{line} vs {nodes}"));
            }
        }
        Ok(())
    });
    assert_eq!(
        cmd(&m, &["CLUSTER", "REPLICAS", &rid]),
        Value::Error(b"ERR The specified node is not a master".to_vec())
    );
    assert_eq!(
        cmd(&m, &["CLUSTER", "REPLICAS", "nosuch"]),
        Value::Error(b"ERR Unknown node nosuch".to_vec())
    );
}

/// A randomized workload through redis-py's `RedisCluster` (which follows
/// MOVED and ASK itself) checked reply by reply against a model, while
/// `redis-cli --cluster reshard` moves slots between the masters of a
/// six-node petrel cluster (three masters, three replicas) made by
/// `redis-cli --cluster create --cluster-replicas 1`. The only errors
/// allowed are the redirections the client handles: anything else
/// raises in the script, and the test fails.
const CLUSTER_CLIENT_WORKLOAD: &str = r#"
import os, random, sys
from redis.cluster import RedisCluster
port, stop_file, seed = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)
rc = RedisCluster(host='127.0.0.1', port=port)
strings, hashes, lists = {}, {}, {}
ops = 0
while not os.path.exists(stop_file) or ops < 2000:
    k = 'rk:%d' % rng.randrange(600)
    op = rng.randrange(8)
    if op == 0:
        v = str(rng.randrange(10**6))
        assert rc.set('s' + k, v) is True
        strings['s' + k] = v
    elif op == 1:
        got = rc.get('s' + k)
        want = strings.get('s' + k)
        assert got == (want.encode() if want is not None else None), (k, got, want)
    elif op == 2:
        n = rc.incr('c' + k)
        strings['c' + k] = str(int(strings.get('c' + k, '0')) + 1)
        assert str(n) == strings['c' + k], (k, n)
    elif op == 3:
        f, v = 'f%d' % rng.randrange(5), str(rng.randrange(100))
        rc.hset('h' + k, f, v)
        hashes.setdefault('h' + k, {})[f] = v
    elif op == 4:
        got = {a.decode(): b.decode() for a, b in rc.hgetall('h' + k).items()}
        assert got == hashes.get('h' + k, {}), (k, got)
    elif op == 5:
        v = str(rng.randrange(100))
        n = rc.rpush('l' + k, v)
        lists.setdefault('l' + k, []).append(v)
        assert n == len(lists['l' + k]), (k, n)
    elif op == 6:
        got = [x.decode() for x in rc.lrange('l' + k, 0, -1)]
        assert got == lists.get('l' + k, []), (k, got)
    else:
        victim = rng.choice(['s', 'c', 'h', 'l']) + k
        n = rc.delete(victim)
        had = any(victim in m for m in (strings, hashes, lists))
        assert n == (1 if had else 0), (victim, n)
        for m in (strings, hashes, lists):
            m.pop(victim, None)
    ops += 1
# Everything the model holds is still there, once more, at the end.
for key, v in strings.items():
    assert rc.get(key) == v.encode(), key
for key, h in hashes.items():
    assert {a.decode(): b.decode() for a, b in rc.hgetall(key).items()} == h, key
for key, l in lists.items():
    assert [x.decode() for x in rc.lrange(key, 0, -1)] == l, key
print('ok', ops)
"#;

#[test]
fn redis_py_cluster_client_runs_while_slots_move_in_a_six_node_cluster() {
    if !have_tool("redis-cli", &["--version"])
        || !have_tool("python3", &["-c", "import redis.cluster"])
    {
        eprintln!("NOTICE: redis-cli or redis-py missing, test skipped");
        return;
    }
    let nodes: Vec<Server> = (0..6).map(|_| node(Kind::Petrel)).collect();
    let refs: Vec<&Server> = nodes.iter().collect();
    let addrs: Vec<String> = nodes.iter().map(|s| s.addr()).collect();
    let mut args = vec!["create"];
    args.extend(addrs.iter().map(|a| a.as_str()));
    args.extend(["--cluster-replicas", "1", "--cluster-yes"]);
    cluster_cmd(&args);
    check_all(&refs);
    let masters: Vec<&Server> = nodes
        .iter()
        .filter(|s| matches!(cmd(s, &["ROLE"]), Value::Array(r) if r.first() == Some(&Value::Bulk(b"master".to_vec()))))
        .collect();
    assert_eq!(masters.len(), 3, "three masters after create");
    wait_for("three replicas linked", || {
        let n = nodes
            .iter()
            .filter(|s| text(cmd(s, &["INFO", "replication"])).contains("master_link_status:up"))
            .count();
        if n == 3 {
            Ok(())
        } else {
            Err(format!("{n} replicas up"))
        }
    });
    let dir = TempDir::new("rpyc");
    let stop = dir.path().join("stop");
    let child = std::process::Command::new("python3")
        .args([
            "-c",
            CLUSTER_CLIENT_WORKLOAD,
            &masters[0].port().to_string(),
            stop.to_str().unwrap(),
            "7",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3");
    // redis-cli refuses to reshard until every node agrees on the last
    // move; gossip takes a moment to reach all six.
    reshard(masters[0], masters[1], 500);
    check_all(&refs);
    reshard(masters[1], masters[2], 800);
    check_all(&refs);
    reshard(masters[2], masters[0], 600);
    std::fs::write(&stop, b"").unwrap();
    let o = child.wait_with_output().unwrap();
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success() && out.starts_with("ok "), "{out}");
    eprintln!("redis-py workload: {}", out.trim());
    check_all(&refs);

    // rebalance evens the slots out again; no key is lost on the way.
    let keys = |ms: &[&Server]| ms.iter().map(|s| dbsize(s)).sum::<i64>();
    let before = keys(&masters);
    cluster_cmd(&["rebalance", &masters[0].addr(), "--cluster-yes"]);
    check_all(&refs);
    let counts: Vec<usize> = masters.iter().map(|s| owned_slots(s)).collect();
    assert!(
        counts
            .iter()
            .all(|&n| n.abs_diff(16384 / 3) <= 16384 / 3 / 50 + 1),
        "{counts:?}"
    );
    assert_eq!(keys(&masters), before);

    // add-node as a replica of a master, then del-node it.
    let extra = node(Kind::Petrel);
    let master_id = myid(masters[0]);
    cluster_cmd(&[
        "add-node",
        &extra.addr(),
        &masters[0].addr(),
        "--cluster-slave",
        "--cluster-master-id",
        &master_id,
    ]);
    let mut all: Vec<&Server> = refs.clone();
    all.push(&extra);
    all_known(&all);
    check_all(&all);
    wait_for("the added replica linked", || {
        let info = text(cmd(&extra, &["INFO", "replication"]));
        if info.contains("master_link_status:up") {
            Ok(())
        } else {
            Err(info)
        }
    });
    cluster_cmd(&["del-node", &masters[0].addr(), &myid(&extra)]);
    check_all(&refs);
}
