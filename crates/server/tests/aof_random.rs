//! Journal correctness under a randomized concurrent workload: several
//! clients on two worker threads run every kind of write (TTLs relative and
//! absolute, short TTLs that expire lazily and actively, eviction, MULTI/
//! EXEC, scripts, blocking pops served by other clients, random pops);
//! then the AOF, loaded into a fresh Petrel and into redis-server 7.0,
//! must give the original's DEBUG DIGEST.

#[path = "common/aof.rs"]
mod aof_util;
mod common;

use aof_util::*;
use common::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

const KEYS: u64 = 24;

fn key(r: &mut Rng, kind: &str) -> String {
    format!("{kind}:{}", r.below(KEYS))
}

/// One random command (or a MULTI/EXEC or script) on `c`.
fn random_op(r: &mut Rng, c: &mut RawConn) {
    let v = r.below(1000).to_string();
    let long_ttl = (100_000 + r.below(100_000)).to_string();
    let short = (1 + r.below(30)).to_string();
    let s = key(r, "s");
    let l = key(r, "l");
    let h = key(r, "h");
    let st = key(r, "set");
    let z = key(r, "z");
    let cmd: Vec<String> = match r.below(46) {
        0 => vec!["SET".into(), s, v],
        1 => vec!["SET".into(), s, v, "EX".into(), long_ttl],
        2 => vec!["SET".into(), s, v, "PX".into(), short],
        3 => vec!["SETEX".into(), s, "1000".into(), v],
        4 => vec!["INCRBYFLOAT".into(), key(r, "f"), "1.5".into()],
        5 => vec!["INCR".into(), key(r, "n")],
        6 => vec!["APPEND".into(), s, v],
        7 => vec!["GETDEL".into(), s],
        8 => vec!["GETEX".into(), s, "PX".into(), long_ttl],
        9 => vec!["GETEX".into(), s, "PERSIST".into()],
        10 => vec!["EXPIRE".into(), s, long_ttl],
        11 => vec!["PEXPIRE".into(), s, short],
        12 => vec!["DEL".into(), s],
        13 => vec!["RPUSH".into(), l, v.clone(), v],
        14 => vec!["LPOP".into(), l],
        15 => vec!["LMOVE".into(), l, key(r, "l"), "LEFT".into(), "RIGHT".into()],
        16 => vec!["BLPOP".into(), l, key(r, "l"), "0.02".into()],
        17 => vec!["BLMOVE".into(), l, key(r, "l"), "RIGHT".into(), "LEFT".into(), "0.02".into()],
        18 => vec!["LMPOP".into(), "2".into(), l, key(r, "l"), "LEFT".into(), "COUNT".into(), "2".into()],
        19 => vec!["HSET".into(), h, format!("f{}", r.below(8)), v],
        20 => vec!["HINCRBYFLOAT".into(), h, "fl".into(), "0.25".into()],
        21 => vec!["HDEL".into(), h, format!("f{}", r.below(8))],
        22 => vec!["SADD".into(), st, v, r.below(50).to_string()],
        23 => vec!["SPOP".into(), st],
        24 => vec!["SPOP".into(), st, (1 + r.below(4)).to_string()],
        25 => vec!["SREM".into(), st, v],
        26 => vec!["SMOVE".into(), st, key(r, "set"), r.below(50).to_string()],
        27 => vec!["ZADD".into(), z, v.clone(), v],
        28 => vec!["ZINCRBY".into(), z, "2.5".into(), r.below(1000).to_string()],
        29 => vec!["ZPOPMIN".into(), z],
        30 => vec!["BZPOPMAX".into(), z, "0.02".into()],
        31 => vec!["ZMPOP".into(), "1".into(), z, "MIN".into(), "COUNT".into(), "2".into()],
        32 => vec!["SUNIONSTORE".into(), key(r, "set"), st, key(r, "set")],
        33 => vec!["ZUNIONSTORE".into(), key(r, "z"), "2".into(), z, key(r, "z")],
        34 => vec!["RENAME".into(), s, key(r, "s")],
        35 => vec!["COPY".into(), s, key(r, "s"), "REPLACE".into()],
        36 => vec!["PERSIST".into(), s],
        37 => vec!["GET".into(), s],
        38 => vec!["EXISTS".into(), s, l, h],
        39 => vec!["PFADD".into(), key(r, "hll"), v],
        40 => vec!["PFCOUNT".into(), key(r, "hll")],
        41 => vec!["SETRANGE".into(), s, "2".into(), v],
        42 => {
            c.cmd(&["MULTI"]);
            c.cmd(&["SET", &s, &v, "PX", &long_ttl]);
            c.cmd(&["INCRBYFLOAT", &key(r, "f"), "2"]);
            c.cmd(&["SPOP", &st]);
            c.cmd(&["RPUSH", &l, &v]);
            c.cmd(&["EXEC"]);
            return;
        }
        43 => vec![
            "EVAL".into(),
            "redis.call('set', KEYS[1], ARGV[1], 'px', 300000); redis.call('incrbyfloat', KEYS[2], 1.25); redis.call('spop', KEYS[3]); return redis.call('rpush', KEYS[4], ARGV[1])".into(),
            "4".into(),
            s,
            key(r, "f"),
            st,
            l,
            v,
        ],
        44 => vec!["SELECT".into(), r.pick(&["0", "0", "3"]).into()],
        _ => vec!["SET".into(), s, v, "PXAT".into(), "1".into()],
    };
    c.cmd(&cmd);
}

/// Runs `clients` threads of `ops` random operations each.
fn workload(srv: &Server, clients: u64, ops: usize, seed: u64) {
    std::thread::scope(|sc| {
        for t in 0..clients {
            let port = srv.port();
            sc.spawn(move || {
                let mut r = Rng(seed ^ (t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                let mut c = RawConn::tcp(port);
                for _ in 0..ops {
                    random_op(&mut r, &mut c);
                }
            });
        }
    });
}

/// Touches every key of the universe in both databases used, so keys
/// whose TTL passed are gone (and journaled) before digests are compared.
fn collect_expired(srv: &Server) {
    let mut c = srv.raw();
    for db in ["0", "3"] {
        c.cmd(&["SELECT", db]);
        for kind in ["s", "l", "h", "set", "z", "f", "n", "hll"] {
            for i in 0..KEYS {
                c.cmd(&["EXISTS", &format!("{kind}:{i}")]);
            }
        }
    }
}

fn digest(srv: &Server) -> Value {
    srv.raw().cmd(&["DEBUG", "DIGEST"])
}

fn used_memory(srv: &Server) -> u64 {
    let info = srv.raw().cmd(&["INFO", "memory"]);
    let text = String::from_utf8_lossy(info.as_bytes().unwrap()).into_owned();
    text.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn check_round(seed: u64, preamble: &str) {
    let petrel = Server::start(&[
        ("appendonly", "yes"),
        ("aof-use-rdb-preamble", preamble),
        ("enable-debug-command", "yes"),
        ("maxmemory-policy", "allkeys-random"),
    ]);
    workload(&petrel, 4, 600, seed);
    // A rewrite in the middle: the rest goes to the new incremental file.
    petrel.raw().cmd(&["BGREWRITEAOF"]);
    // Eviction: a limit a little above what is used now.
    let used = used_memory(&petrel);
    petrel.raw().cmd(&[
        "CONFIG",
        "SET",
        "maxmemory",
        &(used + 64 * 1024).to_string(),
    ]);
    workload(&petrel, 4, 600, seed.rotate_left(17));
    petrel.raw().cmd(&["CONFIG", "SET", "maxmemory", "0"]);
    std::thread::sleep(Duration::from_millis(60));
    collect_expired(&petrel);
    let info = petrel.raw().cmd(&["INFO", "stats"]);
    let stats = String::from_utf8_lossy(info.as_bytes().unwrap()).into_owned();
    wait_rewrite(|| {
        String::from_utf8_lossy(
            petrel
                .raw()
                .cmd(&["INFO", "persistence"])
                .as_bytes()
                .unwrap(),
        )
        .into_owned()
    });
    let want = digest(&petrel);
    let dir = aof_dir(petrel.dir());
    for kind in [Kind::Petrel, Kind::Redis] {
        if kind == Kind::Redis && !redis_available() {
            continue;
        }
        let copy = TempDir::new("aofrand");
        copy_dir(&dir, &copy.join("appendonlydir"));
        let d = copy.path().display().to_string();
        let srv = Server::start_opts(
            kind,
            Opts::new(&[
                ("appendonly", "yes"),
                ("enable-debug-command", "yes"),
                ("dir", &d),
            ]),
        );
        if digest(&srv) != want {
            if std::env::var("AOF_DEBUG").is_ok() {
                let _ = std::process::Command::new("cp")
                    .args(["-r", &dir.display().to_string(), "/tmp/aof_debug"])
                    .status();
            }
            assert_same(
                &petrel,
                &srv,
                &format!("seed {seed} preamble {preamble} {kind:?}"),
            );
        }
        assert_eq!(
            digest(&srv),
            want,
            "seed {seed} preamble {preamble}: {kind:?} loaded another dataset\n{}",
            stats
                .lines()
                .filter(|l| l.starts_with("evicted_keys") || l.starts_with("expired_keys"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}

#[test]
fn random_workload_round_trips_through_the_aof() {
    for (i, seed) in [0x5eed_1234_u64, 0xfeed_beef_0042].into_iter().enumerate() {
        check_round(seed, if i % 2 == 0 { "yes" } else { "no" });
    }
}
