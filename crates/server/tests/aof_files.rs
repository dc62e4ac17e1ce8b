//! The AOF directory: interoperability with redis-server 7.0 in both
//! directions (redis-check-aof, DEBUG DIGEST after loading), restarts,
//! rewrites, the 6.x upgrade, truncated and corrupt files, CONFIG SET
//! appendonly at runtime, INFO persistence.

#[path = "common/aof.rs"]
mod aof_util;
mod common;

use std::path::Path;

use aof_util::*;
use common::*;

const DEBUG_ON: (&str, &str) = ("enable-debug-command", "yes");

fn digest(srv: &Server) -> Vec<u8> {
    srv.raw()
        .cmd(&["DEBUG", "DIGEST"])
        .as_bytes()
        .expect("digest")
        .to_vec()
}

/// A dataset of every type, with TTLs, in two databases, through a mix of
/// commands whose journal forms are rewritten.
fn populate(srv: &Server, tag: &str) {
    let mut c = srv.raw();
    let k = |s: &str| format!("{tag}:{s}");
    for i in 0..300 {
        c.cmd(&["SET", &k(&format!("s{i}")), &format!("v{i}")]);
    }
    c.cmd(&["SET", &k("ttl"), "x", "EX", "1000"]);
    c.cmd(&["INCRBYFLOAT", &k("f"), "1.25"]);
    for i in 0..200 {
        c.cmd(&["RPUSH", &k("list"), &format!("e{i}")]);
        c.cmd(&["SADD", &k("set"), &format!("m{i}")]);
        c.cmd(&["SADD", &k("iset"), &i.to_string()]);
        c.cmd(&["ZADD", &k("z"), &format!("{}.5", i), &format!("m{i}")]);
        c.cmd(&["HSET", &k("h"), &format!("f{i}"), &format!("{i}")]);
    }
    c.cmd(&["RPUSH", &k("small"), "a", "b", "c"]);
    c.cmd(&["HSET", &k("hs"), "a", "1"]);
    c.cmd(&["ZADD", &k("zs"), "1", "a", "2", "b"]);
    c.cmd(&["HINCRBYFLOAT", &k("hs"), "x", "0.5"]);
    c.cmd(&["PEXPIRE", &k("list"), "5000000"]);
    c.cmd(&["SPOP", &k("set"), "3"]);
    c.cmd(&["PFADD", &k("hll"), "a", "b", "c"]);
    c.cmd(&["SELECT", "5"]);
    c.cmd(&["SET", &k("db5"), "five"]);
    c.cmd(&["LPUSH", &k("db5l"), "1", "2"]);
    c.cmd(&["MULTI"]);
    c.cmd(&["INCR", &k("ctr")]);
    c.cmd(&["INCR", &k("ctr")]);
    c.cmd(&["EXEC"]);
    c.cmd(&[
        "EVAL",
        "redis.call('set', KEYS[1], 'lua'); return redis.call('incr', KEYS[2])",
        "2",
        &k("lua1"),
        &k("lua2"),
    ]);
}

/// A fresh server of `kind` whose `dir` holds a copy of `aof`.
fn start_on_copy(kind: Kind, aof: &Path, extra: &[(&str, &str)]) -> (TempDir, Server) {
    let dir = TempDir::new("aofcopy");
    copy_dir(aof, &dir.join("appendonlydir"));
    let d = dir.path().display().to_string();
    let mut args = vec![("appendonly", "yes"), DEBUG_ON, ("dir", d.as_str())];
    args.extend_from_slice(extra);
    let srv = Server::start_opts(kind, Opts::new(&args));
    wait_loaded(&srv);
    (dir, srv)
}

fn check_aof(manifest: &Path) {
    let out = std::process::Command::new("redis-check-aof")
        .arg(manifest)
        .output()
        .expect("redis-check-aof");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "redis-check-aof failed:\n{text}");
    assert!(text.contains("is valid"), "{text}");
}

fn petrel_to_redis(preamble: &str) {
    if !redis_available() {
        return;
    }
    let petrel = Server::start(&[
        ("appendonly", "yes"),
        ("aof-use-rdb-preamble", preamble),
        DEBUG_ON,
    ]);
    populate(&petrel, "a");
    let mut c = petrel.raw();
    c.cmd(&["BGREWRITEAOF"]);
    populate(&petrel, "b");
    wait_rewrite(|| info_text(&petrel));
    let want = digest(&petrel);
    let dir = aof_dir(petrel.dir());
    let base = &manifest_files(&dir)[0].0;
    assert!(
        base.ends_with(if preamble == "yes" {
            ".base.rdb"
        } else {
            ".base.aof"
        }),
        "{base}"
    );
    check_aof(&dir.join("appendonly.aof.manifest"));
    let (_d, redis) = start_on_copy(Kind::Redis, &dir, &[]);
    assert_eq!(digest(&redis), want, "redis-server loaded another dataset");
    // And Petrel itself, from a copy.
    let (_d2, again) = start_on_copy(Kind::Petrel, &dir, &[]);
    assert_eq!(digest(&again), want);
}

#[test]
fn petrel_aof_with_rdb_preamble_loads_in_redis() {
    petrel_to_redis("yes");
}

#[test]
fn petrel_aof_without_preamble_loads_in_redis() {
    petrel_to_redis("no");
}

#[test]
fn redis_aof_loads_in_petrel() {
    for preamble in ["yes", "no"] {
        let Some(redis) = RefRedis::start_with(Opts::new(&[
            ("appendonly", "yes"),
            ("aof-use-rdb-preamble", preamble),
            DEBUG_ON,
        ])) else {
            return;
        };
        populate(&redis, "a");
        redis.raw().cmd(&["BGREWRITEAOF"]);
        assert!(wait_until(Duration::from_secs(10), || {
            let info = redis.raw().cmd(&["INFO", "persistence"]);
            let t = String::from_utf8_lossy(info.as_bytes().unwrap()).into_owned();
            t.contains("aof_rewrite_in_progress:0")
                && t.contains("aof_rewrite_scheduled:0")
                && t.contains("aof_rewrites:1")
        }));
        std::thread::sleep(Duration::from_millis(200));
        populate(&redis, "b");
        // Under `everysec` Redis postpones its write(2) (up to 2 s) while a
        // background fsync runs, replies sent all the same: wait until its
        // AOF buffer is in the file before copying the directory.
        assert!(wait_until(Duration::from_secs(10), || {
            let info = redis.raw().cmd(&["INFO", "persistence"]);
            let t = String::from_utf8_lossy(info.as_bytes().unwrap()).into_owned();
            t.contains("aof_buffer_length:0\r")
        }));
        let (d, petrel) = start_on_copy(Kind::Petrel, &aof_dir(redis.dir()), &[]);
        if digest(&redis) != digest(&petrel) && std::env::var("AOF_DEBUG").is_ok() {
            let _ = std::process::Command::new("cp")
                .args(["-r", &d.path().display().to_string(), "/tmp/aof_debug2"])
                .status();
            eprintln!("{}", petrel.log());
        }
        assert_same(&redis, &petrel, &format!("preamble {preamble}"));
    }
}

#[test]
fn restart_rewrite_and_history() {
    let petrel = Server::start(&[("appendonly", "yes"), DEBUG_ON]);
    populate(&petrel, "a");
    let mut c = petrel.raw();
    assert_eq!(
        c.cmd(&["BGREWRITEAOF"]),
        Value::Simple("Background append only file rewriting started".into())
    );
    populate(&petrel, "b");
    wait_rewrite(|| info_text(&petrel));
    assert_eq!(
        c.cmd(&["BGREWRITEAOF"]),
        Value::Simple("Background append only file rewriting started".into())
    );
    c.cmd(&["SET", "after", "rewrite"]);
    wait_rewrite(|| info_text(&petrel));
    let dir = aof_dir(petrel.dir());
    let files = manifest_files(&dir);
    assert_eq!(
        files,
        vec![
            ("appendonly.aof.3.base.rdb".to_string(), "b".to_string()),
            ("appendonly.aof.3.incr.aof".to_string(), "i".to_string())
        ]
    );
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    assert_eq!(
        on_disk,
        [
            "appendonly.aof.3.base.rdb",
            "appendonly.aof.3.incr.aof",
            "appendonly.aof.manifest"
        ]
    );
    let info =
        String::from_utf8_lossy(c.cmd(&["INFO", "persistence"]).as_bytes().unwrap()).into_owned();
    for f in [
        "aof_enabled:1",
        "aof_rewrites:2",
        "aof_last_bgrewrite_status:ok",
        "aof_last_write_status:ok",
        "aof_rewrite_in_progress:0",
    ] {
        assert!(info.contains(f), "{f} in\n{info}");
    }
    assert!(
        info.lines()
            .any(|l| l.starts_with("aof_current_size:") && l != "aof_current_size:0"),
        "{info}"
    );
    let want = digest(&petrel);
    // DEBUG LOADAOF reloads the same dataset.
    assert_eq!(c.cmd(&["DEBUG", "LOADAOF"]), Value::Simple("OK".into()));
    assert_eq!(digest(&petrel), want);
    let (d, again) = start_on_copy(Kind::Petrel, &dir, &[]);
    assert_eq!(digest(&again), want);
    // The restarted server appends to the same incremental file.
    again.raw().cmd(&["SET", "more", "1"]);
    let cmds = incr_commands(&d.join("appendonlydir"));
    assert_eq!(show(cmds.last().unwrap()), "SET more 1");
}

#[test]
fn config_set_appendonly_at_runtime() {
    let petrel = Server::start(&[DEBUG_ON]);
    let mut c = petrel.raw();
    populate(&petrel, "a");
    assert!(!aof_dir(petrel.dir()).exists());
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "yes"]),
        Value::Simple("OK".into())
    );
    c.cmd(&["SET", "later", "1"]);
    // The base is written in the background (see aof_enable.rs).
    wait_rewrite(|| {
        String::from_utf8_lossy(c.cmd(&["INFO", "persistence"]).as_bytes().unwrap()).into_owned()
    });
    let dir = aof_dir(petrel.dir());
    let files = manifest_files(&dir);
    assert_eq!(files[0].1, "b");
    assert_eq!(
        incr_commands(&dir)
            .iter()
            .map(|c| show(c))
            .collect::<Vec<_>>(),
        ["SELECT 0", "SET later 1"]
    );
    let want = digest(&petrel);
    let (_d, again) = start_on_copy(Kind::Petrel, &dir, &[]);
    assert_eq!(digest(&again), want);
    // Off again: nothing more is appended.
    assert_eq!(
        c.cmd(&["CONFIG", "SET", "appendonly", "no"]),
        Value::Simple("OK".into())
    );
    c.cmd(&["SET", "not", "journaled"]);
    assert_eq!(incr_commands(&dir).len(), 2);
}

/// A directory with one incremental file holding `tail` after two commands.
fn dir_with_incr(tail: &[u8]) -> TempDir {
    let dir = TempDir::new("aofload");
    let aof = dir.join("appendonlydir");
    std::fs::create_dir_all(&aof).unwrap();
    std::fs::write(
        aof.join("appendonly.aof.manifest"),
        "file appendonly.aof.1.incr.aof seq 1 type i\n",
    )
    .unwrap();
    let mut body =
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n".to_vec();
    body.extend_from_slice(tail);
    std::fs::write(aof.join("appendonly.aof.1.incr.aof"), body).unwrap();
    dir
}

fn start_in(dir: &TempDir, extra: &[(&str, &str)]) -> Server {
    let d = dir.path().display().to_string();
    let mut args = vec![("appendonly", "yes"), DEBUG_ON, ("dir", d.as_str())];
    args.extend_from_slice(extra);
    let srv = Server::start_with(Opts::new(&args));
    wait_loaded(&srv);
    srv
}

fn dbsize(srv: &Server) -> Value {
    srv.raw().cmd(&["DBSIZE"])
}

#[test]
fn truncated_last_file_is_cut_back() {
    let tail = b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$5\r\nhel";
    let dir = dir_with_incr(tail);
    let incr = dir.join("appendonlydir").join("appendonly.aof.1.incr.aof");
    let full = std::fs::metadata(&incr).unwrap().len();
    let srv = start_in(&dir, &[]);
    assert_eq!(dbsize(&srv), Value::Int(1));
    assert!(srv.log().contains("aof-load-truncated"), "{}", srv.log());
    assert_eq!(
        std::fs::metadata(&incr).unwrap().len(),
        full - tail.len() as u64
    );
    // Appending continues on a clean command boundary.
    srv.raw().cmd(&["SET", "c", "3"]);
    let cmds = parse_aof(&std::fs::read(&incr).unwrap());
    assert_eq!(show(cmds.last().unwrap()), "SET c 3");
}

#[test]
fn truncated_file_refused_without_aof_load_truncated() {
    let dir = dir_with_incr(b"*3\r\n$3\r\nSET\r\n$1\r\nb");
    let d = dir.path().display().to_string();
    let (code, log) = petrel_startup_failure(
        None,
        &[
            "--appendonly",
            "yes",
            "--aof-load-truncated",
            "no",
            "--dir",
            &d,
        ],
    );
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains(
            "Unexpected end of file reading the append only file appendonly.aof.1.incr.aof"
        ),
        "{log}"
    );
}

#[test]
fn transaction_cut_in_the_middle_is_dropped() {
    let tail = b"*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1\r\n3\r\n";
    let dir = dir_with_incr(tail);
    let srv = start_in(&dir, &[]);
    assert_eq!(dbsize(&srv), Value::Int(1));
    let mut c = srv.raw();
    assert_eq!(c.cmd(&["EXISTS", "b", "c"]), Value::Int(0));
    // A whole transaction loads.
    drop(srv);
    let mut whole = tail.to_vec();
    whole.extend_from_slice(b"*1\r\n$4\r\nEXEC\r\n");
    let dir = dir_with_incr(&whole);
    let srv = start_in(&dir, &[]);
    assert_eq!(dbsize(&srv), Value::Int(3));
}

#[test]
fn corruption_names_file_and_offset() {
    let dir = dir_with_incr(b"garbage\r\n*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n");
    let d = dir.path().display().to_string();
    let (code, log) = petrel_startup_failure(None, &["--appendonly", "yes", "--dir", &d]);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains(
            "Bad file format reading the append only file appendonly.aof.1.incr.aof at offset 50"
        ),
        "{log}"
    );
}

#[test]
fn unknown_command_fails_the_load() {
    let dir = dir_with_incr(b"*1\r\n$7\r\nNOSUCHC\r\n");
    let d = dir.path().display().to_string();
    let (code, log) = petrel_startup_failure(None, &["--appendonly", "yes", "--dir", &d]);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains("Unknown command 'NOSUCHC' reading the append only file"),
        "{log}"
    );
}

#[test]
fn old_single_file_is_upgraded() {
    let dir = TempDir::new("aofold");
    std::fs::write(
        dir.join("appendonly.aof"),
        b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$3\r\nold\r\n$1\r\n1\r\n",
    )
    .unwrap();
    let srv = start_in(&dir, &[]);
    let mut c = srv.raw();
    assert_eq!(c.cmd(&["GET", "old"]), Value::Bulk(b"1".to_vec()));
    assert!(!dir.join("appendonly.aof").exists());
    let aof = dir.join("appendonlydir");
    let files = manifest_files(&aof);
    assert_eq!(files[0], ("appendonly.aof".to_string(), "b".to_string()));
    assert_eq!(files[1].1, "i");
    c.cmd(&["SET", "new", "2"]);
    let want = digest(&srv);
    drop(c);
    drop(srv);
    let again = start_in(&dir, &[]);
    assert_eq!(digest(&again), want);
    if redis_available() {
        check_aof(&aof.join("appendonly.aof.manifest"));
    }
}

fn info_text(s: &Server) -> String {
    String::from_utf8_lossy(s.raw().cmd(&["INFO", "persistence"]).as_bytes().unwrap()).into_owned()
}

/// BGREWRITEAOF is forkless and in the background: writers go on during
/// the walk (overwriting, deleting and growing keys the walk has not
/// reached yet), and the rewritten AOF still loads, into Petrel and into
/// redis-server, as the dataset the writers left.
#[test]
fn background_rewrite_under_concurrent_writes() {
    let petrel = Server::start(&[("appendonly", "yes"), DEBUG_ON]);
    let mut c = petrel.raw();
    c.cmd(&["DEBUG", "POPULATE", "100000", "k", "32"]);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..3u64)
        .map(|w| {
            let mut c = petrel.raw();
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut n = 0u64;
                let mut x = 0x9e37_79b9_7f4a_7c15u64 ^ w;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || n < 3000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let k = format!("k:{}", x % 100_000);
                    match n % 4 {
                        0 => c.cmd(&["SET", &k, &format!("w{w}-{n}")]),
                        1 => c.cmd(&["DEL", &k]),
                        2 => c.cmd(&["RPUSH", &format!("l:{}", x % 97), &n.to_string()]),
                        _ => c.cmd(&["APPEND", &k, "+"]),
                    };
                    n += 1;
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(
        c.cmd(&["BGREWRITEAOF"]),
        Value::Simple("Background append only file rewriting started".into())
    );
    // A second one while the first runs is refused, as Redis.
    let second = c.cmd(&["BGREWRITEAOF"]);
    assert!(
        second == Value::Simple("Background append only file rewriting started".into())
            || matches!(&second, Value::Error(e) if String::from_utf8_lossy(e).contains("already in progress")),
        "{second:?}"
    );
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
    wait_rewrite(|| info_text(&petrel));
    let info = info_text(&petrel);
    assert!(info.contains("aof_last_bgrewrite_status:ok"), "{info}");
    let want = digest(&petrel);
    let dir = aof_dir(petrel.dir());
    let files = manifest_files(&dir);
    assert_eq!(files[0].1, "b", "{files:?}");
    assert!(files[1..].iter().all(|f| f.1 == "i"), "{files:?}");
    check_aof(&dir.join("appendonly.aof.manifest"));
    for kind in [Kind::Petrel, Kind::Redis] {
        if kind == Kind::Redis && !redis_available() {
            continue;
        }
        let (_d, other) = start_on_copy(kind, &dir, &[]);
        // redis-server answers -LOADING while it reads the 3 MB base.
        assert!(wait_until(Duration::from_secs(30), || info_text(&other)
            .contains("loading:0")));
        if digest(&other) != want {
            if std::env::var("AOF_DEBUG").is_ok() {
                let _ = std::process::Command::new("cp")
                    .args(["-r", &dir.display().to_string(), "/tmp/aof_debug3"])
                    .status();
            }
            assert_same(&petrel, &other, &format!("{kind:?}"));
        }
    }
}

/// `aof-timestamp-enabled yes`: `#TS:` lines in the incremental file, which
/// redis-check-aof accepts and both servers skip when loading.
#[test]
fn timestamp_annotations() {
    let petrel = Server::start(&[("appendonly", "yes"), DEBUG_ON]);
    let mut c = petrel.raw();
    c.cmd(&["CONFIG", "SET", "aof-timestamp-enabled", "yes"]);
    c.cmd(&["SET", "a", "1"]);
    c.cmd(&["SET", "b", "2"]);
    let dir = aof_dir(petrel.dir());
    let incr = manifest_files(&dir)
        .into_iter()
        .find(|f| f.1 == "i")
        .unwrap()
        .0;
    let text = String::from_utf8_lossy(&std::fs::read(dir.join(incr)).unwrap()).into_owned();
    assert!(text.starts_with("#TS:"), "{text}");
    check_aof(&dir.join("appendonly.aof.manifest"));
    let want = digest(&petrel);
    for kind in [Kind::Petrel, Kind::Redis] {
        if kind == Kind::Redis && !redis_available() {
            continue;
        }
        let (_d, other) = start_on_copy(kind, &dir, &[]);
        assert_eq!(digest(&other), want, "{kind:?}");
    }
}

/// The loader replays every command whatever the default user may do, as
/// Redis's loader client has no user: a default user limited to `a*` keys
/// and without `@write` still gets the whole file loaded.
#[test]
fn loading_ignores_acl_rules() {
    let tail = b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$1\r\n2\r\n*1\r\n$5\r\nMULTI\r\n*3\r\n$3\r\nSET\r\n$1\r\nc\r\n$1\r\n3\r\n*1\r\n$4\r\nEXEC\r\n";
    let dir = dir_with_incr(tail);
    let acl = dir.join("users.acl");
    std::fs::write(&acl, "user default on nopass ~a* +@read\n").unwrap();
    let acl = acl.display().to_string();
    let srv = start_in(&dir, &[("aclfile", acl.as_str())]);
    assert_eq!(dbsize(&srv), Value::Int(3));
    let mut c = srv.raw();
    assert_eq!(c.cmd(&["GET", "a"]), Value::Bulk(b"1".to_vec()));
    // The rules do hold for clients.
    assert!(matches!(c.cmd(&["GET", "b"]), Value::Error(e) if e.starts_with(b"NOPERM")));
}

/// FCALL (function engine, then every partition) against SAVE and a
/// rewrite written while the server waits (partitions, then the function
/// libraries): the locks are taken in one order, so neither side hangs.
/// Found by the command fuzzer as a server-wide hang.
#[test]
fn fcall_beside_save_and_rewrite_never_hangs() {
    let dir = TempDir::new("fcallsave");
    let d = dir.path().display().to_string();
    // A command-format base is written while the server waits, by the
    // cron's automatic rewrite as soon as the file grows at all.
    let srv = Server::start_with(Opts::new(&[
        ("dir", d.as_str()),
        ("threads", "2"),
        ("save", ""),
        ("appendonly", "yes"),
        ("aof-use-rdb-preamble", "no"),
        ("auto-aof-rewrite-percentage", "1"),
        ("auto-aof-rewrite-min-size", "1"),
    ]));
    let mut c = srv.raw();
    let lib = "#!lua name=cnt\nredis.register_function('bump', function(keys) return redis.call('incr', keys[1]) end)";
    assert_eq!(
        c.cmd(&["FUNCTION", "LOAD", lib]),
        Value::Bulk(b"cnt".to_vec())
    );
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let caller = {
        let mut f = srv.raw();
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut n = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                assert!(matches!(f.cmd(&["FCALL", "bump", "1", "k"]), Value::Int(_)));
                n += 1;
            }
            n
        })
    };
    let mut admin = srv.raw();
    for _ in 0..30 {
        assert_eq!(admin.cmd(&["SAVE"]), Value::Simple(b"OK".to_vec()));
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let info = info_text(&srv);
    assert!(
        !info.contains("aof_rewrites:0\r\n"),
        "no automatic rewrite ran"
    );
    let calls = caller.join().unwrap();
    assert!(calls > 0);
    assert_eq!(
        c.cmd(&["GET", "k"]),
        Value::Bulk(calls.to_string().into_bytes())
    );
}

/// The AOF loads while clients are served, as in Redis: the listeners are
/// open first, commands get `-LOADING` (those flagged `loading`, INFO
/// among them, run), INFO shows `loading:1` and the progress fields; once
/// loaded, the dataset is whole. The base file is a FIFO fed in two
/// steps, so the test looks at the server while it loads.
#[test]
fn clients_get_loading_while_the_aof_loads() {
    let dir = TempDir::new("aofloading");
    let aof = dir.join("appendonlydir");
    std::fs::create_dir_all(&aof).unwrap();
    std::fs::write(
        aof.join("appendonly.aof.manifest"),
        "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n",
    )
    .unwrap();
    std::fs::write(aof.join("appendonly.aof.1.incr.aof"), b"").unwrap();
    let mut data = Vec::new();
    for i in 0..2000 {
        let (k, v) = (format!("key:{i}"), format!("v{i}"));
        data.extend_from_slice(
            format!(
                "*3\r\n$3\r\nSET\r\n${}\r\n{k}\r\n${}\r\n{v}\r\n",
                k.len(),
                v.len()
            )
            .as_bytes(),
        );
    }
    // The base (only read; the incremental file is opened for appending).
    let fifo = aof.join("appendonly.aof.1.base.aof");
    let feeder = HalfFedFifo::new(fifo, data);
    let d = dir.path().display().to_string();
    let srv = Server::start_with(Opts::new(&[
        ("appendonly", "yes"),
        DEBUG_ON,
        ("dir", d.as_str()),
    ]));
    let loading = Value::Error(b"LOADING Redis is loading the dataset in memory".to_vec());
    let mut r = srv.raw();
    assert_eq!(r.cmd(&["GET", "key:1"]), loading);
    assert_eq!(r.cmd(&["SET", "x", "1"]), loading);
    assert_eq!(r.cmd(&["PING"]), loading);
    let info = info_text(&srv);
    assert!(info.contains("loading:1\r\n"), "{info}");
    for f in [
        "loading_start_time:",
        "loading_total_bytes:",
        "loading_rdb_used_mem:",
        "loading_loaded_bytes:",
        "loading_loaded_perc:",
        "loading_eta_seconds:",
    ] {
        assert!(info.contains(f), "{f}\n{info}");
    }
    // SELECT is flagged `loading` in Redis 7.0.
    assert_eq!(r.cmd(&["SELECT", "0"]), Value::Simple(b"OK".to_vec()));
    feeder.finish();
    wait_loaded(&srv);
    assert_eq!(r.cmd(&["DBSIZE"]), Value::Int(2000));
    assert_eq!(r.cmd(&["GET", "key:1999"]), Value::Bulk(b"v1999".to_vec()));
    // The AOF is open for appending after the load.
    assert_eq!(r.cmd(&["SET", "after", "1"]), Value::Simple(b"OK".to_vec()));
    assert!(info_text(&srv).contains("aof_enabled:1"));
}

/// DEBUG LOADAOF with `appendonly no` has no file to load: an error, and the
/// dataset stays (redis-server 7.0.15 exits the process there).
#[test]
fn debug_loadaof_without_an_aof_is_an_error() {
    let s = Server::start(&[("enable-debug-command", "yes")]);
    let mut c = s.raw();
    assert_eq!(c.cmd(&["SET", "k", "v"]), Value::Simple("OK".into()));
    let r = c.cmd(&["DEBUG", "LOADAOF"]);
    assert!(
        matches!(&r, Value::Error(e) if e.starts_with(b"ERR DEBUG LOADAOF needs appendonly yes")),
        "{r:?}"
    );
    assert_eq!(c.cmd(&["GET", "k"]), Value::Bulk(b"v".to_vec()));
}
