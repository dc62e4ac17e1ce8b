//! Cluster failover (issue 22) between real processes: a replica elected
//! when its master dies (petrel only, and mixed with redis-server 7.0 on
//! both sides of the election), the old master coming back as a replica,
//! and CLUSTER FAILOVER (default, FORCE, TAKEOVER) with Redis's errors.
//! Tests that need redis-server or redis-cli skip without them unless
//! PETREL_REQUIRE_REDIS=1. Waits are deadlines, not timing claims.

mod common;
use common::cluster::*;
use common::*;

/// Short enough to keep the tests short, long enough for a busy machine.
const NODE_TIMEOUT: &str = "2000";

/// A cluster-mode server with its own free bus port.
fn node(kind: Kind) -> Server {
    let cport = free_port().to_string();
    Server::start_opts(
        kind,
        Opts::new(&[
            ("cluster-enabled", "yes"),
            ("cluster-port", &cport),
            ("cluster-node-timeout", NODE_TIMEOUT),
        ]),
    )
}

fn err(v: Value) -> String {
    match v {
        Value::Error(e) => String::from_utf8_lossy(&e).into_owned(),
        other => panic!("not an error: {other:?}"),
    }
}

fn row(table: &[Vec<String>], id: &str) -> Result<Vec<String>, String> {
    table
        .iter()
        .find(|r| r[0] == id)
        .cloned()
        .ok_or_else(|| format!("{id} unknown: {table:?}"))
}

fn have_tools() -> bool {
    let ok = std::process::Command::new("redis-cli")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("PETREL_REQUIRE_REDIS").as_deref() == Ok("1") {
            panic!("redis-cli is required");
        }
        eprintln!("SKIPPED: redis-cli not available");
    }
    ok
}

/// `redis-cli --cluster create` of `nodes` (with `replicas` per master).
fn create(nodes: &[&Server], replicas: usize) {
    let mut args = vec!["--cluster".to_string(), "create".to_string()];
    args.extend(nodes.iter().map(|s| s.addr()));
    args.extend([
        "--cluster-replicas".into(),
        replicas.to_string(),
        "--cluster-yes".into(),
    ]);
    let (ok, out) = redis_cli(&args);
    assert!(ok, "create failed:\n{out}");
    assert!(out.contains("[OK] All 16384 slots covered."), "{out}");
}

/// Every node in `nodes` answers cluster_state:ok and each replica's
/// replication link is up.
fn healthy(nodes: &[&Server]) -> Result<(), String> {
    for s in nodes {
        let info = query(s, &["CLUSTER", "INFO"])?;
        if !info.contains("cluster_state:ok") {
            return Err(info);
        }
        let repl = query(s, &["INFO", "replication"])?;
        if repl.contains("role:slave") && !repl.contains("master_link_status:up") {
            return Err(repl);
        }
    }
    Ok(())
}

/// Every node of `views` sees `master` as a master (not failing) owning
/// `slots`, and each of `replicas` as its replica.
fn roles_agreed(
    views: &[&Server],
    master: &str,
    slots: &str,
    replicas: &[&str],
) -> Result<(), String> {
    for s in views {
        let table = nodes_table(s)?;
        let m = row(&table, master)?;
        let flags: Vec<&str> = m[2].split(',').collect();
        if !flags.contains(&"master") || flags.contains(&"fail") || m[8..].join(" ") != slots {
            return Err(format!(
                "{} sees master {m:?}, want slots {slots}",
                s.port()
            ));
        }
        for r in replicas {
            let r = row(&table, r)?;
            if !r[2].split(',').any(|f| f == "slave") || r[3] != master {
                return Err(format!(
                    "{} sees {r:?}, want a replica of {master}",
                    s.port()
                ));
            }
        }
    }
    Ok(())
}

/// Writes keys that `master` owns (skipping MOVED ones), and waits for
/// one replica to have them (WAIT 1).
fn write_keys(master: &Server, n: usize) -> Vec<(String, String)> {
    let mut c = master.raw();
    let mut keys = Vec::new();
    let mut i = 0;
    while keys.len() < n {
        let (k, v) = (format!("fo:{i}"), format!("value-{i}"));
        i += 1;
        match c.cmd(&["SET", &k, &v]) {
            Value::Simple(_) => keys.push((k, v)),
            Value::Error(e) if e.starts_with(b"MOVED") => {}
            other => panic!("SET {k}: {other:?}"),
        }
    }
    assert_eq!(c.cmd(&["WAIT", "1", "10000"]), Value::Int(1));
    keys
}

fn assert_keys(s: &Server, keys: &[(String, String)]) {
    let mut c = s.raw();
    for (k, v) in keys {
        assert_eq!(
            c.cmd(&["GET", k]),
            Value::Bulk(v.as_bytes().to_vec()),
            "{k}"
        );
    }
}

/// The master of replica `r` as `s` sees it, and its slots.
fn master_of(s: &Server, r: &str) -> (String, String) {
    let table = nodes_table(s).unwrap();
    let m = row(&table, r).unwrap()[3].clone();
    let slots = row(&table, &m).unwrap()[8..].join(" ");
    (m, slots)
}

fn kill9(s: &mut Server) {
    s.signal(libc::SIGKILL);
    s.wait_exit(Duration::from_secs(10)).expect("killed");
}

/// The node `victim` (killed) shown failed by every node of `views`.
fn seen_failed(views: &[&Server], victim: &str) -> Result<(), String> {
    for s in views {
        let r = row(&nodes_table(s)?, victim)?;
        if !r[2].contains("fail") || r[2].contains("fail?") {
            return Err(format!("{} sees {r:?}", s.port()));
        }
    }
    Ok(())
}

/// Six petrel nodes (three masters, three replicas): a master killed
/// with -9 is replaced by its replica, elected by the other masters; the
/// slots are served again with the keys written before, every node
/// agrees; the old master, restarted, comes back as the new master's
/// replica.
#[test]
fn a_replica_is_elected_when_its_master_dies_and_the_old_master_rejoins_as_replica() {
    if !have_tools() {
        return;
    }
    let mut nodes: Vec<Server> = (0..6).map(|_| node(Kind::Petrel)).collect();
    create(&nodes.iter().collect::<Vec<_>>(), 1);
    wait_for("cluster up, replicas linked", || {
        healthy(&nodes.iter().collect::<Vec<_>>())?;
        for s in &nodes {
            let t = nodes_table(s)?;
            if t.len() != 6 || t.iter().filter(|r| r[2].ends_with("slave")).count() != 3 {
                return Err(format!("{t:?}"));
            }
        }
        Ok(())
    });
    // A replica, its master and that master's slots.
    let ri = nodes
        .iter()
        .position(|s| text(cmd(s, &["INFO", "replication"])).contains("role:slave"))
        .unwrap();
    let rid = myid(&nodes[ri]);
    let (mid, slots) = master_of(&nodes[ri], &rid);
    let mi = nodes.iter().position(|s| myid(s) == mid).unwrap();
    let keys = write_keys(&nodes[mi], 50);
    let (mport, mcport) = (nodes[mi].port(), bus_port(&nodes[mi]));
    kill9(&mut nodes[mi]);
    let alive: Vec<&Server> = (0..6).filter(|&i| i != mi).map(|i| &nodes[i]).collect();
    wait_for("the replica elected, slots served again", || {
        seen_failed(&alive, &mid)?;
        roles_agreed(&alive, &rid, &slots, &[])?;
        healthy(&alive)
    });
    let info = text(cmd(&nodes[ri], &["INFO", "replication"]));
    assert!(info.contains("role:master"), "{info}");
    assert!(
        nodes[ri]
            .log()
            .contains("Failover election won: I'm the new master."),
        "{}",
        nodes[ri].log()
    );
    assert_keys(&nodes[ri], &keys);
    // Every remaining node lists the same roles and slot owners.
    let summary = |s: &Server| -> Result<Vec<String>, String> {
        let mut v: Vec<String> = nodes_table(s)?
            .into_iter()
            .map(|r| {
                let flags = r[2].replace("myself,", "");
                format!("{} {} {} {}", r[0], flags, r[3], r[8..].join(" "))
            })
            .collect();
        v.sort();
        Ok(v)
    };
    wait_for("CLUSTER NODES agreed", || {
        let first = summary(alive[0])?;
        for s in &alive[1..] {
            let theirs = summary(s)?;
            if theirs != first {
                return Err(format!("{theirs:?} != {first:?}"));
            }
        }
        Ok(())
    });
    // The old master comes back (same port, bus port and nodes.conf).
    let dir = nodes[mi].dir().to_path_buf();
    let back = Server::start_opts(
        Kind::Petrel,
        Opts::new(&[
            ("cluster-enabled", "yes"),
            ("cluster-port", &mcport.to_string()),
            ("cluster-node-timeout", NODE_TIMEOUT),
            ("port", &mport.to_string()),
            ("dir", &dir.display().to_string()),
        ]),
    );
    assert_eq!(myid(&back), mid);
    let mut all = alive.clone();
    all.push(&back);
    wait_for("the old master is a replica of the new one", || {
        roles_agreed(&all, &rid, &slots, &[&mid])?;
        healthy(&all)
    });
    assert_keys(&nodes[ri], &keys);
    // Its data came from the new master.
    let mut c = back.raw();
    c.cmd(&["READONLY"]);
    for (k, v) in &keys {
        assert_eq!(
            c.cmd(&["GET", k]),
            Value::Bulk(v.as_bytes().to_vec()),
            "{k}"
        );
    }
}

/// Three masters (`victim_kind` and one of each kind) and a replica of
/// `replica_kind` of the victim: killing the victim gets the replica
/// elected by the other two masters, one petrel and one redis-server.
fn mixed_election(victim_kind: Kind, replica_kind: Kind) {
    let victim = node(victim_kind);
    let p = node(Kind::Petrel);
    let r = node(Kind::Redis);
    create(&[&victim, &p, &r], 0);
    let mut victim = victim;
    let replica = node(replica_kind);
    let vid = myid(&victim);
    let rid = myid(&replica);
    assert_eq!(
        cmd(
            &replica,
            &[
                "CLUSTER",
                "MEET",
                "127.0.0.1",
                &victim.port().to_string(),
                &bus_port(&victim).to_string()
            ]
        ),
        Value::Simple(b"OK".to_vec())
    );
    let all = [&victim, &p, &r, &replica];
    wait_for("the new node known by all", || {
        for s in all {
            let t = nodes_table(s)?;
            if t.len() != 4 || t.iter().any(|r| r[2].contains("handshake")) {
                return Err(format!("{t:?}"));
            }
        }
        Ok(())
    });
    assert_eq!(
        cmd(&replica, &["CLUSTER", "REPLICATE", &vid]),
        Value::Simple(b"OK".to_vec())
    );
    let slots = row(&nodes_table(&victim).unwrap(), &vid).unwrap()[8..].join(" ");
    wait_for("the replica linked", || {
        roles_agreed(&all, &vid, &slots, &[&rid])?;
        healthy(&all)
    });
    let keys = write_keys(&victim, 30);
    kill9(&mut victim);
    let alive = [&p, &r, &replica];
    wait_for("the replica elected", || {
        seen_failed(&alive, &vid)?;
        roles_agreed(&alive, &rid, &slots, &[])?;
        healthy(&alive)
    });
    assert_keys(&replica, &keys);
}

#[test]
fn a_petrel_replica_of_a_redis_master_is_elected_by_redis_and_petrel_masters() {
    if !have_tools() || !redis_available() {
        return;
    }
    mixed_election(Kind::Redis, Kind::Petrel);
}

#[test]
fn a_redis_replica_of_a_petrel_master_is_elected_by_redis_and_petrel_masters() {
    if !have_tools() || !redis_available() {
        return;
    }
    mixed_election(Kind::Petrel, Kind::Redis);
}

/// Which CLUSTER FAILOVER runs at each of the three steps.
type Steps = [&'static str; 3];

/// A master of `master_kind` and its replica of `replica_kind` (beside
/// two other masters) trade places three times by CLUSTER FAILOVER with
/// the options `steps` gives, run on whichever is the replica; the keys
/// written before stay, every node follows.
fn manual_failovers(master_kind: Kind, replica_kind: Kind, steps: Steps) {
    let m = node(master_kind);
    let a = node(Kind::Petrel);
    let b = node(if redis_available() {
        Kind::Redis
    } else {
        Kind::Petrel
    });
    create(&[&m, &a, &b], 0);
    let r = node(replica_kind);
    let all = [&m, &a, &b, &r];
    let (mid, rid) = (myid(&m), myid(&r));
    cmd(
        &r,
        &[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &m.port().to_string(),
            &bus_port(&m).to_string(),
        ],
    );
    wait_for("the new node known by all", || {
        for s in all {
            let t = nodes_table(s)?;
            if t.len() != 4 || t.iter().any(|r| r[2].contains("handshake")) {
                return Err(format!("{t:?}"));
            }
        }
        Ok(())
    });
    assert_eq!(
        cmd(&r, &["CLUSTER", "REPLICATE", &mid]),
        Value::Simple(b"OK".to_vec())
    );
    let slots = row(&nodes_table(&m).unwrap(), &mid).unwrap()[8..].join(" ");
    wait_for("the replica linked", || {
        roles_agreed(&all, &mid, &slots, &[&rid])?;
        healthy(&all)
    });
    assert_eq!(
        err(cmd(&m, &["CLUSTER", "FAILOVER"])),
        "ERR You should send CLUSTER FAILOVER to a replica"
    );
    assert_eq!(
        err(cmd(&r, &["CLUSTER", "FAILOVER", "NOW"])),
        "ERR syntax error"
    );
    let keys = write_keys(&m, 30);
    let (mut master, mut replica) = ((&m, &mid), (&r, &rid));
    for opt in steps {
        let mut args = vec!["CLUSTER", "FAILOVER"];
        if !opt.is_empty() {
            args.push(opt);
        }
        assert_eq!(
            cmd(replica.0, &args),
            Value::Simple(b"OK".to_vec()),
            "{opt}"
        );
        std::mem::swap(&mut master, &mut replica);
        wait_for(&format!("CLUSTER FAILOVER {opt}: roles traded"), || {
            roles_agreed(&all, master.1, &slots, &[replica.1])?;
            healthy(&all)
        });
        let info = text(cmd(master.0, &["INFO", "replication"]));
        assert!(info.contains("role:master"), "{info}");
        assert_keys(master.0, &keys);
        // The demoted master continued from the new one by partial
        // resync (the promotion kept the old replication ID as replid2).
        if master.0.kind == Kind::Petrel {
            let stats = text(cmd(master.0, &["INFO", "stats"]));
            let partial: u64 = stats
                .lines()
                .find_map(|l| l.strip_prefix("sync_partial_ok:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            assert!(partial > 0, "{opt}: {stats}");
        }
        // The default mode went through the paused master's offset.
        if opt.is_empty() && master.0.kind == Kind::Petrel {
            let log = master.0.log();
            let want = "All master replication stream processed, manual failover can start.";
            assert!(log.contains(want), "{log}");
        }
        if opt.is_empty() && replica.0.kind == Kind::Petrel {
            let log = replica.0.log();
            let want = format!("Manual failover requested by replica {}.", master.1);
            assert!(log.contains(&want), "{log}");
        }
    }
}

#[test]
fn cluster_failover_default_force_and_takeover_on_a_petrel_replica() {
    if !have_tools() {
        return;
    }
    manual_failovers(Kind::Petrel, Kind::Petrel, ["", "FORCE", "TAKEOVER"]);
}

/// The default mode both ways between petrel and redis-server (the
/// master pauses and sends its offset, the replica reaches it), then a
/// TAKEOVER by the redis replica.
#[test]
fn cluster_failover_between_a_petrel_master_and_a_redis_replica() {
    if !have_tools() || !redis_available() {
        return;
    }
    manual_failovers(Kind::Petrel, Kind::Redis, ["", "", "TAKEOVER"]);
}

/// `m` takes every slot; `r` meets it and becomes its replica.
fn master_and_replica(m: &Server, r: &Server) {
    assert_eq!(
        cmd(m, &["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]),
        Value::Simple(b"OK".to_vec())
    );
    cmd(
        r,
        &[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &m.port().to_string(),
            &bus_port(m).to_string(),
        ],
    );
    let mid = myid(m);
    wait_for("the replica to know its master", || {
        let t = nodes_table(r)?;
        row(&t, &mid).map(|_| ())
    });
    assert_eq!(
        cmd(r, &["CLUSTER", "REPLICATE", &mid]),
        Value::Simple(b"OK".to_vec())
    );
}

/// CLUSTER FAILOVER's errors, petrel against redis-server: on a master,
/// with a bad option or too many arguments, and on a replica whose master
/// is down without FORCE.
#[test]
fn cluster_failover_errors_match_redis() {
    let kinds: &[Kind] = if redis_available() {
        &[Kind::Petrel, Kind::Redis]
    } else {
        &[Kind::Petrel]
    };
    let mut seen: Vec<Vec<String>> = Vec::new();
    for &k in kinds {
        let mut m = node(k);
        let r = node(k);
        master_and_replica(&m, &r);
        let mut errs = vec![
            err(cmd(&m, &["CLUSTER", "FAILOVER"])),
            err(cmd(&m, &["CLUSTER", "FAILOVER", "FORCE"])),
            err(cmd(&r, &["CLUSTER", "FAILOVER", "SOON"])),
            err(cmd(&r, &["CLUSTER", "FAILOVER", "FORCE", "NOW"])),
        ];
        kill9(&mut m);
        let mut down = String::new();
        wait_for("the master seen down", || {
            match cmd(&r, &["CLUSTER", "FAILOVER"]) {
                Value::Error(e) => {
                    down = String::from_utf8_lossy(&e).into_owned();
                    Ok(())
                }
                other => Err(format!("{other:?}")),
            }
        });
        errs.push(down);
        seen.push(errs);
    }
    assert_eq!(
        seen[0][0],
        "ERR You should send CLUSTER FAILOVER to a replica"
    );
    assert_eq!(seen[0][2], "ERR syntax error");
    assert_eq!(
        seen[0][4],
        "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE"
    );
    if seen.len() == 2 {
        assert_eq!(seen[0], seen[1], "petrel vs redis-server");
    }
}

/// Replica migration: masters A (two replicas), B (one replica) and C;
/// B's replica dies, and one of A's replicas moves to B (A keeps more
/// than cluster-migration-barrier 1), replicating from it.
#[test]
fn a_spare_replica_migrates_to_an_orphaned_master() {
    if !have_tools() {
        return;
    }
    let (a, b, c) = (node(Kind::Petrel), node(Kind::Petrel), node(Kind::Petrel));
    create(&[&a, &b, &c], 0);
    let a1 = node(Kind::Petrel);
    let a2 = node(Kind::Petrel);
    let mut b1 = node(Kind::Petrel);
    let (aid, bid) = (myid(&a), myid(&b));
    for s in [&a1, &a2, &b1] {
        cmd(
            s,
            &[
                "CLUSTER",
                "MEET",
                "127.0.0.1",
                &a.port().to_string(),
                &bus_port(&a).to_string(),
            ],
        );
    }
    let all = [&a, &b, &c, &a1, &a2, &b1];
    wait_for("the new nodes known by all", || {
        for s in all {
            let t = nodes_table(s)?;
            if t.len() != 6 || t.iter().any(|r| r[2].contains("handshake")) {
                return Err(format!("{t:?}"));
            }
        }
        Ok(())
    });
    for (s, m) in [(&a1, &aid), (&a2, &aid), (&b1, &bid)] {
        assert_eq!(
            cmd(s, &["CLUSTER", "REPLICATE", m]),
            Value::Simple(b"OK".to_vec())
        );
    }
    let (a1id, a2id, b1id) = (myid(&a1), myid(&a2), myid(&b1));
    let aslots = row(&nodes_table(&a).unwrap(), &aid).unwrap()[8..].join(" ");
    let bslots = row(&nodes_table(&b).unwrap(), &bid).unwrap()[8..].join(" ");
    wait_for("replicas linked", || {
        roles_agreed(&all, &aid, &aslots, &[&a1id, &a2id])?;
        roles_agreed(&all, &bid, &bslots, &[&b1id])?;
        healthy(&all)
    });
    kill9(&mut b1);
    let alive = [&a, &b, &c, &a1, &a2];
    // The one of A's replicas with the smaller id moves.
    let (moved, stays) = if a1id < a2id {
        (&a1id, &a2id)
    } else {
        (&a2id, &a1id)
    };
    wait_for("a replica of A migrated to B", || {
        roles_agreed(&alive, &bid, &bslots, &[moved])?;
        roles_agreed(&alive, &aid, &aslots, &[stays])?;
        healthy(&alive)
    });
    let mover = if moved == &a1id { &a1 } else { &a2 };
    assert!(
        mover
            .log()
            .contains(&format!("Migrating to orphaned master {bid}")),
        "{}",
        mover.log()
    );
}

/// cluster-replica-no-failover: the replica shows `nofailover` to every
/// node and starts no election when its master dies; CLUSTER FAILOVER
/// FORCE still promotes it.
#[test]
fn a_nofailover_replica_waits_for_a_manual_failover() {
    if !have_tools() {
        return;
    }
    let (mut m, a, b) = (node(Kind::Petrel), node(Kind::Petrel), node(Kind::Petrel));
    create(&[&m, &a, &b], 0);
    let r = node(Kind::Petrel);
    assert_eq!(
        cmd(&r, &["CONFIG", "SET", "cluster-replica-no-failover", "yes"]),
        Value::Simple(b"OK".to_vec())
    );
    let (mid, rid) = (myid(&m), myid(&r));
    cmd(
        &r,
        &[
            "CLUSTER",
            "MEET",
            "127.0.0.1",
            &m.port().to_string(),
            &bus_port(&m).to_string(),
        ],
    );
    let all = [&m, &a, &b, &r];
    wait_for("the new node known by all", || {
        for s in all {
            let t = nodes_table(s)?;
            if t.len() != 4 || t.iter().any(|r| r[2].contains("handshake")) {
                return Err(format!("{t:?}"));
            }
        }
        Ok(())
    });
    assert_eq!(
        cmd(&r, &["CLUSTER", "REPLICATE", &mid]),
        Value::Simple(b"OK".to_vec())
    );
    let slots = row(&nodes_table(&m).unwrap(), &mid).unwrap()[8..].join(" ");
    wait_for("the replica linked and flagged nofailover", || {
        roles_agreed(&all, &mid, &slots, &[&rid])?;
        for s in all {
            let flags = row(&nodes_table(s)?, &rid)?[2].clone();
            if !flags.ends_with("slave,nofailover") {
                return Err(format!("{} sees {flags}", s.port()));
            }
        }
        healthy(&all)
    });
    let keys = write_keys(&m, 20);
    kill9(&mut m);
    let alive = [&a, &b, &r];
    wait_for("the master failed", || seen_failed(&alive, &mid));
    // Longer than an election would take (node timeout, 0.5-1 s delay).
    std::thread::sleep(Duration::from_secs(5));
    let info = text(cmd(&r, &["INFO", "replication"]));
    assert!(info.contains("role:slave"), "{info}");
    assert!(
        !r.log().contains("Starting a failover election"),
        "{}",
        r.log()
    );
    assert_eq!(
        cmd(&r, &["CLUSTER", "FAILOVER", "FORCE"]),
        Value::Simple(b"OK".to_vec())
    );
    wait_for("promoted by CLUSTER FAILOVER FORCE", || {
        roles_agreed(&alive, &rid, &slots, &[])?;
        healthy(&alive)
    });
    assert_keys(&r, &keys);
}

/// A master with all slots and a replica (both `kind`) whose replication
/// link is kept down (the master asks for a password the replica does not
/// have) and behind (a PUBLISH went into the stream after it dropped):
/// CLUSTER FAILOVER on the replica then holds the master in its write
/// pause, the replica never reaching the master's offset. Returns what a
/// write on the master got after CLIENT UNPAUSE (within a second), and
/// then after CLUSTER RESET on the master.
fn held_manual_failover(kind: Kind) -> Option<(Reply, Reply)> {
    if kind == Kind::Redis && !redis_available() {
        return None;
    }
    let m = node(kind);
    let r = node(kind);
    master_and_replica(&m, &r);
    wait_for("the replica linked", || healthy(&[&m, &r]));
    let mut admin = m.raw();
    admin.cmd(&["CONFIG", "SET", "requirepass", "secret"]);
    admin.cmd(&["CLIENT", "KILL", "TYPE", "replica"]);
    // Moves the stream's offset, and leaves no key (for CLUSTER RESET).
    admin.cmd(&["SET", "x", "1"]);
    admin.cmd(&["DEL", "x"]);
    assert_eq!(
        cmd(&r, &["CLUSTER", "FAILOVER"]),
        Value::Simple(b"OK".to_vec())
    );
    let rid = myid(&r);
    assert!(
        m.wait_log(
            &format!("Manual failover requested by replica {rid}"),
            Duration::from_secs(30)
        ),
        "{}",
        m.log()
    );
    assert_eq!(
        admin.cmd(&["CLIENT", "UNPAUSE"]),
        Value::Simple(b"OK".to_vec())
    );
    let mut w = m.raw();
    w.cmd(&["AUTH", "secret"]);
    w.send_cmd(&["SET", "k", "v"]);
    let after_unpause = w.read_reply_within(Duration::from_secs(1));
    admin.cmd(&["CLUSTER", "RESET"]);
    let after_reset = w.read_reply_within(Duration::from_secs(30));
    Some((after_unpause, after_reset))
}

/// A manual failover's write pause on the master is its own: CLIENT
/// UNPAUSE leaves it (a write waits), CLUSTER RESET ends it (the write is
/// answered), on petrel as on redis-server.
#[test]
fn a_manual_failovers_pause_outlives_client_unpause_not_cluster_reset() {
    let petrel = held_manual_failover(Kind::Petrel).unwrap();
    assert!(matches!(petrel.0, Reply::Timeout), "{:?}", petrel.0);
    assert!(matches!(petrel.1, Reply::Value(_)), "{:?}", petrel.1);
    if let Some(redis) = held_manual_failover(Kind::Redis) {
        assert!(matches!(redis.0, Reply::Timeout), "{:?}", redis.0);
        assert_eq!(format!("{:?}", petrel.1), format!("{:?}", redis.1));
    }
}
