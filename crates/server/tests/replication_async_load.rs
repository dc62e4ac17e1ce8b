//! Redis 7.0's async loading: a replica with `repl-diskless-load swapdb`
//! that already follows its master's history (same replication ID) keeps
//! serving its old data while a new full sync loads, and swaps the new
//! dataset in at the end; a cut transfer leaves the old data in place.
//! A replica that starts a new history (a fresh replica) refuses clients
//! with `-LOADING` instead, also keeping its old data on a cut.
//!
//! The master's payload goes through a gate (a TCP relay in this test)
//! that forwards the start of a full sync and then holds the rest until
//! the test releases it or cuts the link: so "while the sync runs" is a
//! state the test waits for, not a moment it hopes to hit. Every case
//! runs with a Petrel replica and, as the reference, a redis-server 7.0
//! replica in the same situation, fed by a Petrel or a redis-server
//! master.
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};

/// Bytes of a gated connection forwarded after its `+FULLRESYNC` line
/// (the payload header and the first keys) before the gate holds.
const LEAD: usize = 16 * 1024;

#[derive(Default)]
struct GateState {
    /// Connections accepted so far.
    conns: usize,
    /// Connections with an index at or above this are held mid-payload.
    hold_from: usize,
    /// A connection is being held.
    held: bool,
    release: bool,
    cut: bool,
    /// New connections are closed at once (the replica retries).
    refuse: bool,
}

/// A relay from `listen` to a master, holding full syncs (see the module doc).
struct Gate {
    port: u16,
    state: Arc<(Mutex<GateState>, Condvar)>,
}

impl Gate {
    fn new(master_port: u16) -> Gate {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new((
            Mutex::new(GateState {
                hold_from: usize::MAX,
                ..Default::default()
            }),
            Condvar::new(),
        ));
        let st = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let index = {
                    let mut s = st.0.lock().unwrap();
                    if s.refuse {
                        let _ = client.shutdown(Shutdown::Both);
                        continue;
                    }
                    s.conns += 1;
                    s.conns - 1
                };
                let Ok(up) = TcpStream::connect(("127.0.0.1", master_port)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let (c2, u2) = (client.try_clone().unwrap(), up.try_clone().unwrap());
                std::thread::spawn(move || copy(c2, u2));
                let st = st.clone();
                std::thread::spawn(move || downstream(up, client, index, st));
            }
        });
        Gate { port, state }
    }

    /// Holds full syncs of the connections from the next one on.
    fn hold_next(&self) {
        let mut s = self.state.0.lock().unwrap();
        s.hold_from = s.conns;
        s.held = false;
        s.release = false;
        s.cut = false;
    }

    fn refuse(&self, on: bool) {
        self.state.0.lock().unwrap().refuse = on;
    }

    fn wait_held(&self) {
        let (m, cv) = &*self.state;
        let (g, _) = cv
            .wait_timeout_while(m.lock().unwrap(), PATIENCE, |s| !s.held)
            .unwrap();
        assert!(g.held, "no full sync reached the gate");
    }

    fn finish(&self, cut: bool) {
        let (m, cv) = &*self.state;
        let mut s = m.lock().unwrap();
        s.hold_from = usize::MAX;
        if cut {
            s.cut = true;
        } else {
            s.release = true;
        }
        cv.notify_all();
    }
}

fn copy(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = from.read(&mut buf) {
        if n == 0 || to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Both);
    let _ = from.shutdown(Shutdown::Both);
}

/// Master to replica: forwards everything, except that a gated connection
/// stops `LEAD` bytes after its `+FULLRESYNC` line until released or cut.
fn downstream(
    mut up: TcpStream,
    mut down: TcpStream,
    index: usize,
    st: Arc<(Mutex<GateState>, Condvar)>,
) {
    let gated = index >= st.0.lock().unwrap().hold_from;
    let mut seen: Vec<u8> = Vec::new();
    // Bytes still allowed through before holding (once FULLRESYNC is seen).
    let mut allowed: Option<usize> = None;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match up.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut chunk = &buf[..n];
        if gated && allowed.is_none() {
            let before = seen.len();
            seen.extend_from_slice(chunk);
            if let Some(at) = find(&seen, b"+FULLRESYNC") {
                if let Some(eol) = find(&seen[at..], b"\r\n") {
                    allowed = Some(at + eol + 2 + LEAD - before);
                }
            }
        }
        if let Some(left) = allowed.as_mut() {
            let k = (*left).min(chunk.len());
            if down.write_all(&chunk[..k]).is_err() {
                break;
            }
            *left -= k;
            chunk = &chunk[k..];
            if *left == 0 {
                let mut rest = chunk.to_vec();
                if trickle(&mut up, &mut down, &mut rest, &st) {
                    copy_rest(&mut up, &mut down);
                }
                break;
            }
            continue;
        }
        if down.write_all(chunk).is_err() {
            break;
        }
    }
    let _ = down.shutdown(Shutdown::Both);
    let _ = up.shutdown(Shutdown::Both);
}

/// Bytes of a held payload never forwarded until the gate is released,
/// so the payload cannot end while held.
const RESERVE: usize = 256 * 1024;
/// Bytes forwarded per step while held: a redis-server replica serves
/// clients only between reads of its payload (every
/// `loading-process-events-interval-bytes`), so the payload keeps
/// trickling, never past [`RESERVE`] bytes before its end.
const TRICKLE: usize = 2048;

/// Holds a gated connection: reports it held, trickles (see [`TRICKLE`])
/// until the test releases (true: the rest goes through) or cuts it
/// (false). `pending` holds bytes read and not forwarded yet.
fn trickle(
    up: &mut TcpStream,
    down: &mut TcpStream,
    pending: &mut Vec<u8>,
    st: &Arc<(Mutex<GateState>, Condvar)>,
) -> bool {
    {
        let mut s = st.0.lock().unwrap();
        s.held = true;
        st.1.notify_all();
    }
    let _ = up.set_read_timeout(Some(Duration::from_millis(10)));
    let mut buf = vec![0u8; 64 * 1024];
    let mut up_open = true;
    loop {
        {
            let s = st.0.lock().unwrap();
            if s.cut {
                return false;
            }
            if s.release {
                drop(s);
                let _ = up.set_read_timeout(None);
                return down.write_all(pending).is_ok() && up_open;
            }
        }
        if up_open {
            match up.read(&mut buf) {
                Ok(0) => up_open = false,
                Ok(n) => pending.extend_from_slice(&buf[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => up_open = false,
            }
        } else {
            std::thread::sleep(Duration::from_millis(10));
        }
        if pending.len() > RESERVE {
            let k = TRICKLE.min(pending.len() - RESERVE);
            if down.write_all(&pending[..k]).is_err() {
                return false;
            }
            pending.drain(..k);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn copy_rest(up: &mut TcpStream, down: &mut TcpStream) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n) = up.read(&mut buf) {
        if n == 0 || down.write_all(&buf[..n]).is_err() {
            break;
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn start(kind: Kind, args: &[(&str, &str)]) -> Server {
    let mut opts = Opts::new(args);
    opts = opts.arg("enable-debug-command", "yes");
    if kind == Kind::Redis {
        // Not the default 5 s wait for more replicas; a replica serves
        // clients between reads of 1 KB of payload (not 2 MB).
        opts = opts
            .arg("repl-diskless-sync-delay", "0")
            .arg("loading-process-events-interval-bytes", "1024");
    }
    Server::start_opts(kind, opts)
}

/// A master with enough data that a payload is far longer than [`LEAD`]
/// plus [`RESERVE`] plus what trickles while a test looks (~11 MB: more
/// than three minutes of trickle).
fn master(kind: Kind) -> Server {
    master_with(kind, &[])
}

fn master_with(kind: Kind, args: &[(&str, &str)]) -> Server {
    let m = start(kind, args);
    let mut c = m.raw();
    assert_eq!(
        c.cmd(&["DEBUG", "POPULATE", "100000", "key", "100"]),
        Value::simple("OK")
    );
    c.cmd(&["SET", "marker", "v1"]);
    c.cmd(&["SELECT", "3"]);
    c.cmd(&["RPUSH", "list", "a", "b", "c"]);
    m
}

fn replica(kind: Kind, old_data: bool) -> Server {
    let r = start(kind, &[("repl-diskless-load", "swapdb")]);
    if old_data {
        let mut c = r.raw();
        c.cmd(&["SET", "marker", "mine"]);
        c.cmd(&["SET", "only-mine", "x"]);
    }
    r
}

fn persistence(c: &mut RawConn) -> (String, String) {
    (
        info_field(c, "persistence", "loading").unwrap(),
        info_field(c, "persistence", "async_loading").unwrap(),
    )
}

/// SCAN's whole walk with MATCH `pattern`.
fn scan_match(c: &mut RawConn, pattern: &str) -> Vec<Value> {
    let mut cursor = "0".to_string();
    let mut found = Vec::new();
    loop {
        let Value::Array(r) = c.cmd(&["SCAN", &cursor, "MATCH", pattern, "COUNT", "10000"]) else {
            panic!("SCAN reply")
        };
        let (Value::Bulk(next), Value::Array(keys)) = (&r[0], &r[1]) else {
            panic!("SCAN reply {r:?}")
        };
        found.extend(keys.iter().cloned());
        cursor = String::from_utf8_lossy(next).into_owned();
        if cursor == "0" {
            return found;
        }
    }
}

fn follow(replica: &Server, gate: &Gate) {
    assert_eq!(
        replica
            .raw()
            .cmd(&["REPLICAOF", "127.0.0.1", &gate.port.to_string()]),
        Value::simple("OK")
    );
}

const LOADING: &str = "LOADING Redis is loading the dataset in memory";

/// Makes `replica`'s next sync from `master` a full one with the same
/// replication ID: drops its link and, while the gate refuses it a new
/// one, writes more than the backlog holds; `marker` becomes `v2`. The
/// next connection is held.
fn force_full_sync(master: &Server, gate: &Gate) {
    let mut c = master.raw();
    gate.refuse(true);
    c.cmd(&["CONFIG", "SET", "repl-backlog-size", "16384"]);
    assert_eq!(c.cmd(&["CLIENT", "KILL", "TYPE", "replica"]), Value::Int(1));
    wait_for("the master to drop its replica", || {
        info_num(&mut c, "replication", "connected_slaves") == 0
    });
    c.cmd(&["SET", "marker", "v2"]);
    let filler = "f".repeat(64 * 1024);
    for i in 0..24 {
        c.cmd(&["SET", &format!("filler:{i}"), &filler]);
    }
    gate.hold_next();
    gate.refuse(false);
}

/// How a held full sync ends.
#[derive(Clone, Copy, PartialEq)]
enum End {
    Release,
    KillMaster,
}

/// A replica already in sync with `master` gets a second full sync (same
/// replication ID): it serves the old data while the payload is held,
/// then the new data (release) or still the old (the master killed
/// mid-payload).
fn async_case(master_kind: Kind, replica_kind: Kind, end: End) {
    let mut m = master(master_kind);
    let gate = Gate::new(m.port());
    let r = replica(replica_kind, false);
    follow(&r, &gate);
    link_up(&r);
    let mut c = r.raw();
    assert_eq!(c.cmd(&["GET", "marker"]), Value::bulk("v1"));
    // A key whose TTL passes on the replica (the master does not expire
    // it, so no DEL comes): missing to clients before the load.
    let mut mc = m.raw();
    mc.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]);
    let Value::Int(n) = c.cmd(&["DBSIZE"]) else {
        panic!("DBSIZE")
    };
    mc.cmd(&["SET", "shortlived", "v", "PX", "1"]);
    wait_for("shortlived on the replica", || {
        c.cmd(&["DBSIZE"]) == Value::Int(n + 1)
    });
    wait_for("shortlived to expire", || {
        c.cmd(&["GET", "shortlived"]) == Value::NullBulk
    });
    // Database 9: a key whose TTL passes beside one without: RANDOMKEY
    // skips the expired one before the load.
    mc.cmd(&["SELECT", "9"]);
    mc.cmd(&["SET", "persist9", "v"]);
    mc.cmd(&["SET", "expiring9", "v", "PX", "1"]);
    mc.cmd(&["SELECT", "10"]);
    mc.cmd(&["SET", "only10", "v", "PX", "1"]);
    mc.cmd(&["SELECT", "0"]);
    c.cmd(&["SELECT", "9"]);
    wait_for("db 9 on the replica", || {
        c.cmd(&["DBSIZE"]) == Value::Int(2)
    });
    wait_for("expiring9 to expire", || {
        c.cmd(&["GET", "expiring9"]) == Value::NullBulk
    });
    for _ in 0..50 {
        assert_eq!(c.cmd(&["RANDOMKEY"]), Value::bulk("persist9"));
    }
    // ...without deleting it: a replica waits for its master's DEL.
    assert_eq!(c.cmd(&["DBSIZE"]), Value::Int(2));
    // A database whose keys all have a TTL, all passed: after enough
    // draws the expired key is the answer (Redis's dbRandomKey).
    c.cmd(&["SELECT", "10"]);
    wait_for("db 10 on the replica", || {
        c.cmd(&["DBSIZE"]) == Value::Int(1)
    });
    assert_eq!(c.cmd(&["RANDOMKEY"]), Value::bulk("only10"));
    c.cmd(&["SELECT", "0"]);
    let old_digest = c.cmd(&["DEBUG", "DIGEST"]);
    let old_size = c.cmd(&["DBSIZE"]);

    force_full_sync(&m, &gate);
    gate.wait_held();
    wait_for("async_loading:1", || {
        persistence(&mut c) == ("0".into(), "1".into())
    });
    // The old data is served meanwhile; writes are a replica's refusal;
    // commands flagged no-async-loading wait.
    assert_eq!(c.cmd(&["GET", "marker"]), Value::bulk("v1"));
    assert_eq!(c.cmd(&["DBSIZE"]), old_size);
    assert_eq!(c.cmd(&["DEBUG", "DIGEST"]), old_digest);
    // Expiry is suspended while loading (Redis 7.0's keyIsExpired).
    assert_eq!(c.cmd(&["GET", "shortlived"]), Value::bulk("v"));
    assert_eq!(c.cmd(&["EXISTS", "shortlived"]), Value::Int(1));
    assert_eq!(c.cmd(&["PTTL", "shortlived"]), Value::Int(0));
    assert_eq!(
        c.cmd(&["KEYS", "shortlived"]),
        Value::Array(vec![Value::bulk("shortlived")])
    );
    assert_eq!(
        scan_match(&mut c, "shortlived"),
        vec![Value::bulk("shortlived")]
    );
    c.cmd(&["SELECT", "3"]);
    assert_eq!(c.cmd(&["LLEN", "list"]), Value::Int(3));
    // RANDOMKEY returns the expired key too (one in two draws).
    c.cmd(&["SELECT", "9"]);
    let mut drawn = std::collections::BTreeSet::new();
    for _ in 0..200 {
        let Value::Bulk(k) = c.cmd(&["RANDOMKEY"]) else {
            panic!("RANDOMKEY on a database of two keys")
        };
        drawn.insert(String::from_utf8_lossy(&k).into_owned());
    }
    assert_eq!(
        drawn.into_iter().collect::<Vec<_>>(),
        vec!["expiring9".to_string(), "persist9".to_string()],
        "RANDOMKEY during the async load"
    );
    c.cmd(&["SELECT", "0"]);
    assert_eq!(
        c.cmd(&["SET", "x", "y"]),
        err("READONLY You can't write against a read only replica.")
    );
    assert_eq!(c.cmd(&["BGSAVE"]), err(LOADING));
    assert_eq!(c.cmd(&["SAVE"]), err(LOADING));
    assert_eq!(c.cmd(&["REPLICAOF", "NO", "ONE"]), err(LOADING));
    // Refused when queued, so the transaction is discarded.
    c.cmd(&["MULTI"]);
    c.cmd(&["GET", "marker"]);
    assert_eq!(c.cmd(&["BGSAVE"]), err(LOADING));
    assert_eq!(
        c.cmd(&["EXEC"]),
        err("EXECABORT Transaction discarded because of previous errors.")
    );
    c.cmd(&["MULTI"]);
    c.cmd(&["GET", "marker"]);
    assert_eq!(c.cmd(&["EXEC"]), Value::Array(vec![Value::bulk("v1")]));
    let info =
        String::from_utf8_lossy(c.cmd(&["INFO", "persistence"]).as_bytes().unwrap()).into_owned();
    for field in [
        "loading_start_time:",
        "loading_loaded_bytes:",
        "loading_eta_seconds:",
    ] {
        assert!(info.contains(field), "{field} missing in\n{info}");
    }
    assert_eq!(
        info_field(&mut c, "replication", "master_sync_in_progress").as_deref(),
        Some("1")
    );

    // Gone on both sides once the stream after the payload is applied
    // (a redis-server master's payload still holds it, expired).
    if end == End::Release {
        mc.cmd(&["DEL", "shortlived"]);
        mc.cmd(&["SELECT", "9"]);
        mc.cmd(&["DEL", "expiring9"]);
        mc.cmd(&["SELECT", "10"]);
        mc.cmd(&["DEL", "only10"]);
        mc.cmd(&["SELECT", "0"]);
    }
    match end {
        End::Release => {
            gate.finish(false);
            link_up(&r);
            assert_eq!(c.cmd(&["GET", "marker"]), Value::bulk("v2"));
            assert_eq!(persistence(&mut c), ("0".into(), "0".into()));
            // The stream after the payload applies on top, byte-exact.
            m.raw().cmd(&["SET", "marker", "v3"]);
            assert_all_in_sync(&m, &[&r], "after the async load");
            assert_eq!(c.cmd(&["GET", "marker"]), Value::bulk("v3"));
            if replica_kind == Kind::Petrel {
                assert!(r.wait_log("Swapping active DB with loaded DB", PATIENCE));
                assert!(r.wait_log("Discarding old DB in background", PATIENCE));
            }
        }
        End::KillMaster => {
            m.signal(9);
            assert!(m.wait_exit(PATIENCE).is_some());
            gate.finish(true);
            wait_for("the async load to end", || {
                persistence(&mut c) == ("0".into(), "0".into())
            });
            assert_eq!(c.cmd(&["GET", "marker"]), Value::bulk("v1"));
            assert_eq!(c.cmd(&["DBSIZE"]), old_size);
            assert_eq!(c.cmd(&["DEBUG", "DIGEST"]), old_digest);
            if replica_kind == Kind::Petrel {
                assert!(r.wait_log("Discarding temporary DB in background", PATIENCE));
            }
        }
    }
}

/// A replica with data of its own (another history) gets a full sync:
/// clients get -LOADING while it loads; a cut keeps the old data, a
/// whole payload replaces it.
fn fresh_case(master_kind: Kind, replica_kind: Kind, end: End) {
    let mut m = master(master_kind);
    let gate = Gate::new(m.port());
    let r = replica(replica_kind, true);
    let mut c = r.raw();
    let old_digest = c.cmd(&["DEBUG", "DIGEST"]);
    gate.hold_next();
    follow(&r, &gate);
    gate.wait_held();
    wait_for("loading:1", || {
        persistence(&mut c) == ("1".into(), "0".into())
    });
    assert_eq!(c.cmd(&["GET", "marker"]), err(LOADING));
    assert_eq!(c.cmd(&["DBSIZE"]), err(LOADING));
    match end {
        End::Release => {
            gate.finish(false);
            link_up(&r);
            assert_eq!(c.cmd(&["GET", "marker"]), Value::bulk("v1"));
            assert_eq!(c.cmd(&["EXISTS", "only-mine"]), Value::Int(0));
            assert_all_in_sync(&m, &[&r], "after the load");
        }
        End::KillMaster => {
            m.signal(9);
            assert!(m.wait_exit(PATIENCE).is_some());
            gate.finish(true);
            wait_for("the load to end", || {
                persistence(&mut c) == ("0".into(), "0".into())
            });
            assert_eq!(c.cmd(&["GET", "marker"]), Value::bulk("mine"));
            assert_eq!(c.cmd(&["DEBUG", "DIGEST"]), old_digest);
        }
    }
}

/// Runs `case` with redis-server in the roles `kinds` names, when it is there.
fn with_redis(kinds: &[Kind], case: impl FnOnce()) {
    if kinds.contains(&Kind::Redis) && !redis_available() {
        return;
    }
    case()
}

use Kind::{Petrel, Redis};

#[test]
fn async_load_serves_old_data_then_swaps_petrel_master() {
    async_case(Petrel, Petrel, End::Release);
}

#[test]
fn async_load_cut_keeps_old_data_petrel_master() {
    async_case(Petrel, Petrel, End::KillMaster);
}

#[test]
fn async_load_serves_old_data_then_swaps_redis_master() {
    with_redis(&[Redis], || async_case(Redis, Petrel, End::Release));
}

#[test]
fn async_load_cut_keeps_old_data_redis_master() {
    with_redis(&[Redis], || async_case(Redis, Petrel, End::KillMaster));
}

#[test]
fn fresh_replica_swapdb_refuses_with_loading() {
    fresh_case(Petrel, Petrel, End::Release);
    fresh_case(Petrel, Petrel, End::KillMaster);
}

/// The same situations with a redis-server replica: the reference the
/// Petrel cases above follow.
#[test]
fn reference_redis_replica_behaves_the_same() {
    with_redis(&[Redis], || {
        async_case(Redis, Redis, End::Release);
        async_case(Redis, Redis, End::KillMaster);
        fresh_case(Redis, Redis, End::Release);
        fresh_case(Redis, Redis, End::KillMaster);
    });
}

/// The `loading_*` fields of INFO persistence while a replica loads its
/// payload from the socket (`swapdb`, another history: `loading:1`), the
/// gate holding the payload: (loading_total_bytes, loading_loaded_bytes,
/// loading_loaded_perc, loading_rdb_used_mem, loading_eta_seconds, the
/// payload length the replica logged for a `$<len>` payload).
fn loading_progress(
    master_kind: Kind,
    replica_kind: Kind,
    master_diskless: bool,
) -> (u64, u64, String, u64, i64, Option<u64>) {
    let m = master_with(
        master_kind,
        &[(
            "repl-diskless-sync",
            if master_diskless { "yes" } else { "no" },
        )],
    );
    let gate = Gate::new(m.port());
    let r = replica(replica_kind, true);
    let mut c = r.raw();
    gate.hold_next();
    follow(&r, &gate);
    gate.wait_held();
    let mut fields = Vec::new();
    wait_for("loading progress", || {
        let info = String::from_utf8_lossy(c.cmd(&["INFO", "persistence"]).as_bytes().unwrap())
            .into_owned();
        let get = |f: &str| {
            info.lines()
                .find_map(|l| l.strip_prefix(&format!("{f}:")).map(str::to_string))
        };
        if get("loading").as_deref() != Some("1") {
            return false;
        }
        fields = [
            "loading_total_bytes",
            "loading_loaded_bytes",
            "loading_loaded_perc",
            "loading_rdb_used_mem",
            "loading_eta_seconds",
        ]
        .iter()
        .map(|f| get(f).unwrap_or_else(|| panic!("no {f} in\n{info}")))
        .collect();
        fields[1] != "0"
    });
    // The log reaches the test through a reader thread: wait for the line
    // (a `$EOF:` load never writes it, so a short wait is enough there).
    r.wait_log(
        " bytes from master to parser",
        Duration::from_secs(if master_diskless { 0 } else { 10 }),
    );
    let logged = r.log().lines().find_map(|l| {
        let (_, rest) = l.split_once("MASTER <-> REPLICA sync: receiving ")?;
        rest.strip_suffix(" bytes from master to parser")?
            .parse()
            .ok()
    });
    gate.finish(false);
    link_up(&r);
    (
        fields[0].parse().unwrap(),
        fields[1].parse().unwrap(),
        fields[2].clone(),
        fields[3].parse().unwrap(),
        fields[4].parse().unwrap(),
        logged,
    )
}

/// Checks Redis 7.0's figures: against the payload's length for `$<len>`,
/// against the RDB's `used-mem` (at most 99.99%) for `$EOF:`, whose
/// length is unknown (`loading_total_bytes:0`).
fn check_progress(
    what: &str,
    master_diskless: bool,
    got: (u64, u64, String, u64, i64, Option<u64>),
) {
    let (total, loaded, perc, used_mem, eta, logged) = got;
    if master_diskless {
        assert_eq!(logged, None, "{what}: a streamed payload");
        assert_eq!(total, 0, "{what}: loading_total_bytes");
        assert!(used_mem > 0, "{what}: loading_rdb_used_mem");
        let want = (loaded as f64 * 100.0 / used_mem as f64).min(99.99);
        assert_eq!(perc, format!("{want:.2}"), "{what}: loading_loaded_perc");
    } else {
        assert_eq!(Some(total), logged, "{what}: loading_total_bytes");
        assert!(loaded > 0 && loaded < total, "{what}: {loaded} of {total}");
        let want = loaded as f64 * 100.0 / total as f64;
        assert_eq!(perc, format!("{want:.2}"), "{what}: loading_loaded_perc");
        assert!(eta >= 0, "{what}: loading_eta_seconds {eta}");
    }
}

/// INFO persistence's loading progress during a full sync loaded from the
/// socket, for a `$<len>` payload (a master with `repl-diskless-sync no`)
/// and a `$EOF:` one; a redis-server 7.0 replica of a redis-server master
/// in the same situations is the reference.
#[test]
fn loading_progress_of_a_socket_load() {
    for diskless in [false, true] {
        let what = format!("petrel, diskless master {diskless}");
        check_progress(&what, diskless, loading_progress(Petrel, Petrel, diskless));
        if redis_available() {
            let what = format!("redis-server, diskless master {diskless}");
            check_progress(&what, diskless, loading_progress(Redis, Redis, diskless));
            let what = format!("petrel replica of redis-server, diskless master {diskless}");
            check_progress(&what, diskless, loading_progress(Redis, Petrel, diskless));
        }
    }
}
