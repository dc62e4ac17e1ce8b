//! Point-in-time consistency of BGSAVE under concurrent writers.
//!
//! Several clients write as fast as they can while a background save runs:
//! multi-key commands across partitions (MSET, RENAME, COPY), collections,
//! MOVE to another database, keys with TTLs that expire while the save
//! runs, and a client doing FLUSHDB and SWAPDB. Every operation is a
//! deterministic function of (writer, sequence number) and runs in a
//! MULTI/EXEC with an INCR of the writer's counter, so it is either wholly
//! before the cut or wholly after it. The file is then read with the `rdb`
//! crate: each writer's counter in the file says how many of its
//! operations the cut saw, a model replays exactly those, and the file's
//! databases must equal the model's, key by key (values, TTLs). A TTL that
//! ends between the BGSAVE request and its reply may or may not have
//! passed at the cut; only those keys are not judged.
//!
//! `PETREL_CONSISTENCY_KEYS` (default 300000) sets the size of the static
//! ballast that makes the walk long enough to overlap many writes; the
//! benchmark in docs/BENCHMARKS.md runs the same check at larger sizes.

mod common;
use common::rdbdata::*;
use common::*;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

use collections::value::hash::lp_bytes;
use store::{CompactValue, Kind};

/// A value as plain data.
#[derive(Clone, Debug, PartialEq)]
enum V {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(BTreeSet<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    Zset(BTreeMap<Vec<u8>, u64>),
}

fn plain(v: &CompactValue) -> V {
    let mut b1 = [0u8; 20];
    let mut b2 = [0u8; 20];
    match v.kind() {
        Kind::String => V::Str(v.string().unwrap().to_vec()),
        Kind::List => V::List(v.as_list().unwrap().to_vecs()),
        Kind::Set => V::Set(
            v.as_set()
                .unwrap()
                .iter()
                .map(|m| lp_bytes(m, &mut b1).to_vec())
                .collect(),
        ),
        Kind::Hash => V::Hash(
            v.as_hash()
                .unwrap()
                .iter()
                .map(|(f, x)| (lp_bytes(f, &mut b1).to_vec(), lp_bytes(x, &mut b2).to_vec()))
                .collect(),
        ),
        Kind::ZSet => V::Zset(
            v.as_zset()
                .unwrap()
                .to_pairs()
                .into_iter()
                .map(|(m, s)| (m, s.to_bits()))
                .collect(),
        ),
        Kind::Stream => panic!("no streams in this test"),
    }
}

/// (db, key) -> (value, expire ms)
type Data = BTreeMap<(u32, Vec<u8>), (V, Option<u64>)>;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

const WRITERS: u64 = 4;
/// Database of the FLUSHDB/SWAPDB writer's counter; its data is in 12, 13.
const GLOBAL_CTR_DB: u32 = 14;
const BALLAST_DB: u32 = 15;

/// One operation: the commands to run inside MULTI (after which the
/// counter is incremented), and its effect on the model.
struct Op {
    cmds: Vec<Vec<Vec<u8>>>,
}

fn b(s: impl AsRef<str>) -> Vec<u8> {
    s.as_ref().as_bytes().to_vec()
}

/// Writer `w`'s operation `j`. Its keys live in databases `w` and `w + 8`;
/// keys `e*` get TTLs ending during the test (`base` = test start, ms).
fn writer_op(w: u64, j: u64, base: u64, m: &mut Data) -> Op {
    let r = splitmix(w << 40 | j);
    let pick = |k: u64, n: u64| (splitmix(r ^ k) % n) as usize;
    let (da, db) = (w as u32, w as u32 + 8);
    let n = |x: usize| b(format!("w{w}:n{x}"));
    let (a, c) = (pick(1, 400), pick(2, 400));
    let (col, x) = (pick(3, 40), pick(4, 30));
    let mut cmds: Vec<Vec<Vec<u8>>> = Vec::new();
    let get_str = |m: &Data, db: u32, k: &[u8]| match m.get(&(db, k.to_vec())) {
        Some((V::Str(s), e)) => Some((s.clone(), *e)),
        _ => None,
    };
    match r % 20 {
        0 | 1 => {
            let v = b(format!("v{j}"));
            cmds.push(vec![b("SET"), n(a), v.clone()]);
            m.insert((da, n(a)), (V::Str(v), None));
        }
        2 | 3 => {
            let add = b(format!("+{j}"));
            cmds.push(vec![b("APPEND"), n(a), add.clone()]);
            let (mut s, e) = get_str(m, da, &n(a)).unwrap_or_default();
            s.extend_from_slice(&add);
            m.insert((da, n(a)), (V::Str(s), e));
        }
        4 => {
            cmds.push(vec![b("DEL"), n(a)]);
            m.remove(&(da, n(a)));
        }
        5 => {
            if a != c {
                cmds.push(vec![b("RENAME"), n(a), n(c)]);
                if let Some(v) = m.remove(&(da, n(a))) {
                    m.insert((da, n(c)), v);
                }
            }
        }
        6 => {
            let (va, vc) = (b(format!("m{j}")), b(format!("M{j}")));
            cmds.push(vec![b("MSET"), n(a), va.clone(), n(c), vc.clone()]);
            m.insert((da, n(a)), (V::Str(va), None));
            m.insert((da, n(c)), (V::Str(vc), None));
        }
        7 => {
            let k = b(format!("w{w}:h{col}"));
            let (f, v) = (b(format!("f{x}")), b(format!("v{j}")));
            cmds.push(vec![b("HSET"), k.clone(), f.clone(), v.clone()]);
            let e = m
                .entry((da, k))
                .or_insert_with(|| (V::Hash(BTreeMap::new()), None));
            if let V::Hash(h) = &mut e.0 {
                h.insert(f, v);
            }
        }
        8 => {
            let k = b(format!("w{w}:s{col}"));
            let mem = b(format!("m{x}"));
            cmds.push(vec![b("SADD"), k.clone(), mem.clone()]);
            let e = m
                .entry((da, k))
                .or_insert_with(|| (V::Set(BTreeSet::new()), None));
            if let V::Set(s) = &mut e.0 {
                s.insert(mem);
            }
        }
        9 => {
            let k = b(format!("w{w}:s{col}"));
            let mem = b(format!("m{x}"));
            cmds.push(vec![b("SREM"), k.clone(), mem.clone()]);
            if let Some((V::Set(s), _)) = m.get_mut(&(da, k.clone())) {
                s.remove(&mem);
                if s.is_empty() {
                    m.remove(&(da, k));
                }
            }
        }
        10 => {
            let k = b(format!("w{w}:l{col}"));
            let v = b(format!("e{j}"));
            cmds.push(vec![b("RPUSH"), k.clone(), v.clone()]);
            let e = m
                .entry((da, k))
                .or_insert_with(|| (V::List(Vec::new()), None));
            if let V::List(l) = &mut e.0 {
                l.push(v);
            }
        }
        11 => {
            let k = b(format!("w{w}:l{col}"));
            cmds.push(vec![b("LPOP"), k.clone()]);
            if let Some((V::List(l), _)) = m.get_mut(&(da, k.clone())) {
                l.remove(0);
                if l.is_empty() {
                    m.remove(&(da, k));
                }
            }
        }
        12 => {
            let k = b(format!("w{w}:z{col}"));
            let mem = b(format!("m{x}"));
            let score = j as f64 / 3.0;
            cmds.push(vec![
                b("ZADD"),
                k.clone(),
                b(format!("{score}")),
                mem.clone(),
            ]);
            let e = m
                .entry((da, k))
                .or_insert_with(|| (V::Zset(BTreeMap::new()), None));
            if let V::Zset(z) = &mut e.0 {
                z.insert(mem, score.to_bits());
            }
        }
        13 | 14 => {
            // A key that expires while the test runs (maybe during the walk).
            let k = b(format!("w{w}:e{}", pick(5, 300)));
            let t = base + 150 + (splitmix(r ^ 6) % 4000);
            let v = b(format!("x{j}"));
            cmds.push(vec![
                b("SET"),
                k.clone(),
                v.clone(),
                b("PXAT"),
                b(t.to_string()),
            ]);
            m.insert((da, k), (V::Str(v), Some(t)));
        }
        15 => {
            // MOVE to the writer's second database when free there.
            cmds.push(vec![b("MOVE"), n(a), b(db.to_string())]);
            if !m.contains_key(&(db, n(a))) {
                if let Some(v) = m.remove(&(da, n(a))) {
                    m.insert((db, n(a)), v);
                }
            }
        }
        16 => {
            if a != c {
                cmds.push(vec![b("COPY"), n(a), n(c), b("REPLACE")]);
                if let Some(v) = m.get(&(da, n(a))).cloned() {
                    m.insert((da, n(c)), v);
                }
            }
        }
        17 => {
            // A far TTL on an existing key (never reached in the test).
            let t = base + 100_000_000 + j;
            cmds.push(vec![b("PEXPIREAT"), n(a), b(t.to_string())]);
            if let Some(e) = m.get_mut(&(da, n(a))) {
                e.1 = Some(t);
            }
        }
        _ => {
            // Writes in the second database.
            let k = n(a);
            cmds.push(vec![b("SELECT"), b(db.to_string())]);
            if r.is_multiple_of(3) {
                cmds.push(vec![b("DEL"), k.clone()]);
                m.remove(&(db, k));
            } else {
                let v = b(format!("b{j}"));
                cmds.push(vec![b("SET"), k.clone(), v.clone()]);
                m.insert((db, k), (V::Str(v), None));
            }
            cmds.push(vec![b("SELECT"), b(da.to_string())]);
        }
    }
    Op { cmds }
}

/// The FLUSHDB/SWAPDB writer's operation `j` on databases 12 and 13.
fn global_op(j: u64, m: &mut Data) -> Op {
    let r = splitmix(0xF1u64 << 40 | j);
    let d = 12 + (r % 2) as u32;
    let mut cmds = vec![vec![b("SELECT"), b(d.to_string())]];
    match (r >> 8) % 40 {
        0 => {
            cmds.push(vec![b("FLUSHDB")]);
            m.retain(|(db, _), _| *db != d);
        }
        1..=4 => {
            cmds.push(vec![b("SWAPDB"), b("12"), b("13")]);
            let moved: Vec<_> = std::mem::take(m).into_iter().collect();
            for ((db, k), v) in moved {
                let db = match db {
                    12 => 13,
                    13 => 12,
                    x => x,
                };
                m.insert((db, k), v);
            }
        }
        x => {
            let k = b(format!("g{}", splitmix(r) % 500));
            let v = b(format!("g{j}:{x}"));
            cmds.push(vec![b("SET"), k.clone(), v.clone()]);
            m.insert((d, k), (V::Str(v), None));
        }
    }
    cmds.push(vec![b("SELECT"), b(GLOBAL_CTR_DB.to_string())]);
    Op { cmds }
}

/// Runs ops in MULTI/EXEC blocks until `stop`, each with its counter.
fn run_writer(
    port: u16,
    home_db: u32,
    ctr: Vec<u8>,
    mut op: impl FnMut(u64) -> Op,
    stop: Arc<AtomicBool>,
) -> u64 {
    let mut c = RawConn::tcp(port);
    assert_eq!(
        c.cmd(&[b"SELECT".to_vec(), b(home_db.to_string())]),
        Value::simple("OK")
    );
    let mut j = 0;
    while !stop.load(Relaxed) {
        let o = op(j);
        c.send_cmd(&[b"MULTI"]);
        for cmd in &o.cmds {
            c.send_cmd(cmd);
        }
        c.send_cmd(&[b"INCR".to_vec(), ctr.clone()]);
        c.send_cmd(&[b"EXEC"]);
        assert_eq!(c.read_reply(), Value::simple("OK"));
        for _ in 0..o.cmds.len() + 1 {
            let r = c.read_reply();
            assert_eq!(r, Value::simple("QUEUED"), "writer {home_db} op {j}");
        }
        match c.read_reply() {
            Value::Array(items) => {
                let Some(Value::Int(n)) = items.last() else {
                    panic!("EXEC reply {items:?}")
                };
                assert_eq!(*n as u64, j + 1);
            }
            other => panic!("EXEC: {other}"),
        }
        j += 1;
    }
    j
}

fn read_file(path: &std::path::Path) -> Data {
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len();
    let mut r = rdb::Reader::new(
        f,
        rdb::ReadOptions {
            input_len: Some(len),
            ..Default::default()
        },
    )
    .unwrap();
    let mut out = Data::new();
    loop {
        match r.read_item().unwrap() {
            rdb::Item::Entry(e) => {
                let prev = out.insert(
                    (e.db, e.key.clone()),
                    (plain(&e.value), e.expire_ms.map(|t| t as u64)),
                );
                assert!(prev.is_none(), "key written twice: {:?}", e.key);
            }
            rdb::Item::Eof { .. } => return out,
            _ => {}
        }
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn counter(file: &Data, db: u32, key: &[u8]) -> u64 {
    match file.get(&(db, key.to_vec())) {
        Some((V::Str(s), _)) => std::str::from_utf8(s).unwrap().parse().unwrap(),
        None => 0,
        other => panic!("counter {other:?}"),
    }
}

/// Compares the model with the file in `dbs`; TTLs ending in
/// [`lo`, `hi`] (the cut is somewhere in there) are not judged.
fn compare(what: &str, model: &Data, file: &Data, dbs: &[u32], skip: &[u8], lo: u64, hi: u64) {
    let mut diffs = Vec::new();
    let judged = |e: &Option<u64>| e.is_none_or(|t| t <= lo || t > hi);
    for ((db, k), (v, e)) in model.iter().filter(|((db, _), _)| dbs.contains(db)) {
        if !judged(e) {
            continue;
        }
        let expired = e.is_some_and(|t| t <= lo);
        match file.get(&(*db, k.clone())) {
            Some(got) if expired => {
                diffs.push(format!("{db} {k:?}: expired at the cut, written {got:?}"))
            }
            None if !expired => diffs.push(format!("{db} {k:?}: missing, want {v:?} {e:?}")),
            Some((gv, ge)) if (gv, ge) != (v, e) => {
                diffs.push(format!("{db} {k:?}: got {gv:?} {ge:?}, want {v:?} {e:?}"))
            }
            _ => {}
        }
    }
    for ((db, k), (v, e)) in file.iter().filter(|((db, _), _)| dbs.contains(db)) {
        if k.as_slice() != skip && !model.contains_key(&(*db, k.clone())) {
            diffs.push(format!("{db} {k:?}: not in the model: {v:?} {e:?}"));
        }
    }
    assert!(
        diffs.is_empty(),
        "{what}: {} differences, e.g.:\n{}",
        diffs.len(),
        diffs
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn bgsave_is_a_point_in_time_copy_under_concurrent_writes() {
    let ballast: usize = std::env::var("PETREL_CONSISTENCY_KEYS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300_000);
    let dir = TempDir::new("consistency");
    let s = TestServer::start_with(Opts::new(&[
        ("dir", &dir.path().display().to_string()),
        ("enable-debug-command", "yes"),
        ("save", ""),
    ]));
    let mut c = s.client();
    let _: () = rcmd(&["SELECT", &BALLAST_DB.to_string()])
        .query(&mut c)
        .unwrap();
    let _: () = rcmd(&["DEBUG", "POPULATE", &ballast.to_string(), "ballast", "64"])
        .query(&mut c)
        .unwrap();
    let base = now_ms();
    let stop = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    for w in 0..WRITERS {
        let stop = stop.clone();
        let port = s.port();
        threads.push(std::thread::spawn(move || {
            let mut scratch = Data::new();
            run_writer(
                port,
                w as u32,
                b(format!("w{w}:ctr")),
                |j| writer_op(w, j, base, &mut scratch),
                stop,
            )
        }));
    }
    {
        let stop = stop.clone();
        let port = s.port();
        threads.push(std::thread::spawn(move || {
            let mut scratch = Data::new();
            run_writer(
                port,
                GLOBAL_CTR_DB,
                b("g:ctr"),
                |j| global_op(j, &mut scratch),
                stop,
            )
        }));
    }
    // Let the writers build a dataset, then save while they go on.
    std::thread::sleep(Duration::from_millis(700));
    let lo = now_ms();
    let r: String = rcmd(&["BGSAVE"]).query(&mut c).unwrap();
    let hi = now_ms();
    assert_eq!(r, "Background saving started");
    wait_bgsave(&mut c, Duration::from_secs(120));
    // Writes go on a little after the save, then stop.
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Relaxed);
    let done: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_status"),
        "ok"
    );
    check_rdb(&dir.join("dump.rdb"));
    let file = read_file(&dir.join("dump.rdb"));
    eprintln!(
        "ops per writer {done:?}; keys in file {}; BGSAVE replied in {} ms",
        file.len(),
        hi - lo
    );
    // Every writer's operations up to its counter in the file, no more.
    for w in 0..WRITERS {
        let ctr = b(format!("w{w}:ctr"));
        let n = counter(&file, w as u32, &ctr);
        assert!(
            n > 0 && n < done[w as usize],
            "writer {w}: {n} of {} ops at the cut",
            done[w as usize]
        );
        let mut m = Data::new();
        for j in 0..n {
            writer_op(w, j, base, &mut m);
        }
        compare(
            &format!("writer {w}"),
            &m,
            &file,
            &[w as u32, w as u32 + 8],
            &ctr,
            lo,
            hi,
        );
    }
    let n = counter(&file, GLOBAL_CTR_DB, b"g:ctr");
    assert!(
        n > 0 && n < done[WRITERS as usize],
        "FLUSHDB/SWAPDB writer: {n} ops at the cut"
    );
    let mut m = Data::new();
    for j in 0..n {
        global_op(j, &mut m);
    }
    compare("FLUSHDB/SWAPDB writer", &m, &file, &[12, 13], b"", lo, hi);
    let ballast_in_file = file.keys().filter(|(db, _)| *db == BALLAST_DB).count();
    assert_eq!(ballast_in_file, ballast);
}
