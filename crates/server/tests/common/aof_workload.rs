//! The random write workload of the AOF round-trip test (included with
//! `#[path]`): one generator per client, each step one command (or a
//! MULTI/EXEC block, a script, a function call) over a small key universe
//! of every type, in databases 0 and 3. Blocking commands use short
//! timeouts so other clients' pushes serve some of them.
//!
//! Invariant: every command the generator sends goes through `Gen::send`,
//! which records its name (`parent|sub` for container commands), so the
//! test can check that each write command Petrel's `COMMAND` lists was
//! really sent at least once.

#![allow(dead_code)]

use crate::common::{RawConn, Value};
use std::collections::BTreeSet;

pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len() as u64) as usize]
    }
}

/// Keys per kind (`kind:0` .. `kind:{KEYS-1}`).
pub const KEYS: u64 = 16;

/// The key kinds; a kind names the type its commands mostly create.
pub const KINDS: &[&str] = &["s", "l", "h", "set", "z", "f", "n", "hll", "bm", "x", "g"];

/// Commands whose first argument names a subcommand (recorded as `a|b`).
const CONTAINERS: &[&str] = &["xgroup", "function"];

/// The function library FCALL uses (loaded by `Gen::setup`).
pub const LIBRARY: &str = "#!lua name=aofmix\n\
redis.register_function('wmix', function(keys, args)\n\
  redis.call('set', keys[1], args[1], 'px', 300000)\n\
  redis.call('spop', keys[2])\n\
  redis.call('incrbyfloat', keys[3], 0.5)\n\
  return redis.call('zincrby', keys[4], 1.5, args[1])\n\
end)";

macro_rules! v {
    ($($e:expr),* $(,)?) => { vec![$($e.to_string()),*] };
}

pub struct Gen {
    pub r: Rng,
    pub c: RawConn,
    /// Names of the commands sent, lower case.
    pub seen: BTreeSet<String>,
}

impl Gen {
    pub fn new(seed: u64, c: RawConn) -> Gen {
        Gen {
            r: Rng(seed | 1),
            c,
            seen: BTreeSet::new(),
        }
    }

    fn key(&mut self, kind: &str) -> String {
        format!("{kind}:{}", self.r.below(KEYS))
    }

    pub fn send<A: AsRef<[u8]>>(&mut self, args: &[A]) -> Value {
        let mut name = String::from_utf8_lossy(args[0].as_ref()).to_ascii_lowercase();
        if CONTAINERS.contains(&name.as_str()) && args.len() > 1 {
            let sub = String::from_utf8_lossy(args[1].as_ref()).to_ascii_lowercase();
            name = format!("{name}|{sub}");
        }
        self.seen.insert(name);
        self.c.cmd(args)
    }

    /// Loads the function library; keeps its FUNCTION DUMP for RESTORE.
    pub fn setup(&mut self) {
        self.send(&["FUNCTION", "LOAD", "REPLACE", LIBRARY]);
    }

    /// The id of the first (or last) entry of stream `x`, if any.
    fn stream_id(&mut self, x: &str, last: bool) -> Option<String> {
        let reply = if last {
            self.c.cmd(&["XREVRANGE", x, "+", "-", "COUNT", "1"])
        } else {
            self.c.cmd(&["XRANGE", x, "-", "+", "COUNT", "1"])
        };
        match reply {
            Value::Array(v) => match v.first() {
                Some(Value::Array(e)) => e
                    .first()
                    .and_then(|id| id.as_bytes())
                    .map(|b| String::from_utf8_lossy(b).into_owned()),
                _ => None,
            },
            _ => None,
        }
    }

    /// The first or the last entry's id (at random), if any.
    fn edge_id(&mut self, x: &str) -> Option<String> {
        let last = self.r.below(2) == 0;
        self.stream_id(x, last)
    }

    /// The id of the oldest pending entry of group `g1` of `x`, if any.
    fn pending_id(&mut self, x: &str) -> Option<String> {
        match self.c.cmd(&["XPENDING", x, "g1", "-", "+", "1"]) {
            Value::Array(v) => match v.first() {
                Some(Value::Array(e)) => e
                    .first()
                    .and_then(|id| id.as_bytes())
                    .map(|b| String::from_utf8_lossy(b).into_owned()),
                _ => None,
            },
            _ => None,
        }
    }

    /// One random step.
    pub fn step(&mut self) {
        match self.r.below(4000) {
            0..=9 => {
                let which = self.r.below(5);
                self.rare(which);
            }
            _ => self.common(),
        }
    }

    /// Whole-database and function-library operations (each also run
    /// once per workload by `rare` with every `which`).
    pub fn rare(&mut self, which: u64) {
        match which {
            0 => {
                let how = self.r.pick(&["SYNC", "ASYNC"]);
                self.send(&["FLUSHDB", how]);
            }
            1 => {
                self.send(&["SWAPDB", "0", "3"]);
            }
            2 => {
                let how = self.r.pick(&["SYNC", "ASYNC"]);
                self.send(&["FUNCTION", "FLUSH", how]);
                self.setup();
            }
            3 => {
                self.send(&["FUNCTION", "DELETE", "aofmix"]);
                self.setup();
            }
            _ => {
                if let Some(p) = self.c.cmd(&["FUNCTION", "DUMP"]).as_bytes() {
                    let p = p.to_vec();
                    self.send(&[b"FUNCTION".as_slice(), b"RESTORE", p.as_slice(), b"REPLACE"]);
                }
            }
        }
    }

    fn common(&mut self) {
        match self.r.below(11) {
            0 => self.strings(),
            1 => self.keys(),
            2 => self.lists(),
            3 => self.hashes(),
            4 => self.sets(),
            5 => self.zsets(),
            6 => self.bits_hll(),
            7 => self.streams(),
            8 => self.geo(),
            9 => self.blocking(),
            _ => self.atomic(),
        }
    }

    fn strings(&mut self) {
        let v = self.r.below(1000).to_string();
        let long_ttl = (100_000 + self.r.below(100_000)).to_string();
        let short = (1 + self.r.below(30)).to_string();
        let s = self.key("s");
        let abs_ms = (now_ms() + 200_000 + self.r.below(100_000)).to_string();
        let abs_s = (now_ms() / 1000 + 200 + self.r.below(100)).to_string();
        let cmd: Vec<String> = match self.r.below(30) {
            0 => v!["SET", s, v],
            1 => v!["SET", s, v, "EX", long_ttl],
            2 => v!["SET", s, v, "PX", short],
            3 => v!["SET", s, v, "NX", "GET"],
            4 => v!["SET", s, v, "XX", "KEEPTTL"],
            5 => v!["SET", s, v, "EXAT", abs_s, "GET"],
            6 => v!["SET", s, v, "PXAT", abs_ms],
            7 => v!["SET", s, v, "PXAT", "1"],
            8 => v!["SETEX", s, "1000", v],
            9 => v!["PSETEX", s, short, v],
            10 => v!["SETNX", s, v],
            11 => v!["GETSET", s, v],
            12 => v!["MSET", s, v, self.key("s"), v],
            13 => v!["MSETNX", s, v, self.key("s"), v],
            14 => v!["INCRBYFLOAT", self.key("f"), "1.5"],
            15 => v!["INCR", self.key("n")],
            16 => v!["DECR", self.key("n")],
            17 => v!["INCRBY", self.key("n"), "7"],
            18 => v!["DECRBY", self.key("n"), "3"],
            19 => v!["APPEND", s, v],
            20 => v!["SETRANGE", s, self.r.below(8), v],
            21 => v!["GETDEL", s],
            22 => v!["GETEX", s, "PX", long_ttl],
            23 => v!["GETEX", s, "EX", "1000"],
            24 => v!["GETEX", s, "EXAT", abs_s],
            25 => v!["GETEX", s, "PXAT", abs_ms],
            26 => v!["GETEX", s, "PERSIST"],
            27 => v!["GET", s],
            28 => v!["INCRBYFLOAT", self.key("f"), "-0.25"],
            _ => v!["SET", self.key("f"), "10.5", "PX", long_ttl],
        };
        self.send(&cmd);
    }

    fn keys(&mut self) {
        let kind = self.r.pick(KINDS);
        let k = self.key(kind);
        let k2 = self.key(kind);
        let long_ttl = (100_000 + self.r.below(100_000)).to_string();
        let short = (1 + self.r.below(30)).to_string();
        let abs_ms = (now_ms() + 200_000 + self.r.below(100_000)).to_string();
        let abs_s = (now_ms() / 1000 + 200 + self.r.below(100)).to_string();
        let cond = self.r.pick(&["NX", "XX", "GT", "LT"]);
        let cmd: Vec<String> = match self.r.below(22) {
            0 => v!["EXPIRE", k, long_ttl],
            1 => v!["EXPIRE", k, "500", cond],
            2 => v!["PEXPIRE", k, short],
            3 => v!["PEXPIRE", k, long_ttl, cond],
            4 => v!["EXPIREAT", k, abs_s],
            5 => v!["PEXPIREAT", k, abs_ms, cond],
            6 => v!["PEXPIREAT", k, "1"],
            7 => v!["PERSIST", k],
            8 => v!["DEL", k, k2],
            9 => v!["UNLINK", k],
            10 => v!["RENAME", k, k2],
            11 => v!["RENAMENX", k, k2],
            12 => v!["COPY", k, k2, "REPLACE"],
            13 => v!["COPY", k, k2, "DB", self.r.pick(&["0", "3"])],
            14 => v!["MOVE", k, self.r.pick(&["0", "3"])],
            15 => v!["SELECT", self.r.pick(&["0", "0", "3"])],
            16 => v!["EXISTS", k, k2],
            17..=19 => {
                if let Some(p) = self.c.cmd(&["DUMP", &k]).as_bytes() {
                    let p = p.to_vec();
                    let ttl = self.r.pick(&["0", "0", "200000"]);
                    let mut args: Vec<Vec<u8>> =
                        vec![b"RESTORE".to_vec(), k2.into(), ttl.into(), p];
                    let opts: &[&[&str]] = &[
                        &["REPLACE"],
                        &[],
                        &["REPLACE", "IDLETIME", "100"],
                        &["REPLACE", "FREQ", "5"],
                    ];
                    let o = opts[self.r.below(opts.len() as u64) as usize];
                    args.extend(o.iter().map(|a| a.as_bytes().to_vec()));
                    if ttl != "0" && self.r.below(2) == 0 {
                        args[2] = abs_ms.into_bytes();
                        args.push(b"ABSTTL".to_vec());
                    }
                    self.send(&args);
                }
                return;
            }
            20 => {
                let src = self.r.pick(&["l", "set", "z"]);
                let src = self.key(src);
                let dst = self.key("l");
                match self.r.below(4) {
                    0 => v!["SORT", src, "STORE", dst],
                    1 => v!["SORT", src, "ALPHA", "DESC", "LIMIT", "0", "5", "STORE", dst],
                    2 => v!["SORT", src, "BY", "nosort", "STORE", dst],
                    _ => v!["SORT", src, "BY", "nosort", "DESC", "LIMIT", "1", "3", "STORE", dst],
                }
            }
            _ => v!["TOUCH", k],
        };
        self.send(&cmd);
    }

    fn lists(&mut self) {
        let v = self.r.below(60).to_string();
        let l = self.key("l");
        let l2 = self.key("l");
        let side = self.r.pick(&["LEFT", "RIGHT"]);
        let side2 = self.r.pick(&["LEFT", "RIGHT"]);
        let cmd: Vec<String> = match self.r.below(18) {
            0 | 1 => v!["RPUSH", l, v, self.r.below(60)],
            2 => v!["LPUSH", l, v, self.r.below(60), self.r.below(60)],
            3 => v!["LPUSHX", l, v],
            4 => v!["RPUSHX", l, v],
            5 => v!["LPOP", l],
            6 => v!["RPOP", l, self.r.below(3) + 1],
            7 => v!["LMOVE", l, l2, side, side2],
            8 => v!["RPOPLPUSH", l, l2],
            9 => v!["LMPOP", "2", l, l2, side, "COUNT", "2"],
            10 => v![
                "LINSERT",
                l,
                self.r.pick(&["BEFORE", "AFTER"]),
                v,
                self.r.below(60)
            ],
            11 => v!["LSET", l, self.r.below(5) as i64 - 2, v],
            12 => v!["LTRIM", l, self.r.below(3), (self.r.below(8) as i64) - 2],
            13 => v!["LREM", l, self.r.below(5) as i64 - 2, v],
            14 => v!["LMPOP", "1", l, side],
            15 => v!["LINDEX", l, "0"],
            16 => v!["LPOP", l, "2"],
            _ => v!["RPUSH", l, v, v, v],
        };
        self.send(&cmd);
    }

    fn hashes(&mut self) {
        let v = self.r.below(1000).to_string();
        let h = self.key("h");
        let f = format!("f{}", self.r.below(8));
        let cmd: Vec<String> = match self.r.below(8) {
            0 | 1 => v!["HSET", h, f, v, format!("f{}", self.r.below(8)), v],
            2 => v!["HMSET", h, f, v],
            3 => v!["HSETNX", h, f, v],
            4 => v!["HINCRBY", h, "cnt", "3"],
            5 => v!["HINCRBYFLOAT", h, "fl", "0.25"],
            6 => v!["HDEL", h, f, format!("f{}", self.r.below(8))],
            _ => v!["HGETALL", h],
        };
        self.send(&cmd);
    }

    fn sets(&mut self) {
        let v = self.r.below(50).to_string();
        let st = self.key("set");
        let st2 = self.key("set");
        let dst = self.key("set");
        let cmd: Vec<String> = match self.r.below(10) {
            0 | 1 => v![
                "SADD",
                st,
                v,
                self.r.below(50),
                format!("m{}", self.r.below(20))
            ],
            2 => v!["SPOP", st],
            3 => v!["SPOP", st, 1 + self.r.below(4)],
            4 => v!["SREM", st, v, self.r.below(50)],
            5 => v!["SMOVE", st, st2, v],
            6 => v!["SUNIONSTORE", dst, st, st2],
            7 => v!["SINTERSTORE", dst, st, st2],
            8 => v!["SDIFFSTORE", dst, st, st2],
            _ => v!["SMEMBERS", st],
        };
        self.send(&cmd);
    }

    fn zsets(&mut self) {
        let v = self.r.below(100).to_string();
        let z = self.key("z");
        let z2 = self.key("z");
        let dst = self.key("z");
        let score = format!("{}.{}", self.r.below(500), self.r.below(4) * 25);
        let cmd: Vec<String> = match self.r.below(20) {
            0 | 1 => v![
                "ZADD",
                z,
                score,
                v,
                self.r.below(500),
                format!("m{}", self.r.below(30))
            ],
            2 => {
                let a = self.r.pick(&["NX", "XX", "GT", "LT", "CH"]);
                let b = self.r.pick(&["CH", "GT", "LT"]);
                v!["ZADD", z, a, b, score, v]
            }
            3 => v![
                "ZADD",
                z,
                self.r.pick(&["XX", "NX", "GT"]),
                "INCR",
                "2.5",
                v
            ],
            4 => v!["ZINCRBY", z, "2.5", v],
            5 => v!["ZREM", z, v, format!("m{}", self.r.below(30))],
            6 => v!["ZPOPMIN", z],
            7 => v!["ZPOPMAX", z, "2"],
            8 => v![
                "ZMPOP",
                "2",
                z,
                z2,
                self.r.pick(&["MIN", "MAX"]),
                "COUNT",
                "2"
            ],
            9 => v!["ZUNIONSTORE", dst, "2", z, z2, "WEIGHTS", "1", "0.5"],
            10 => v![
                "ZINTERSTORE",
                dst,
                "2",
                z,
                z2,
                "AGGREGATE",
                self.r.pick(&["MIN", "MAX", "SUM"])
            ],
            11 => v!["ZDIFFSTORE", dst, "2", z, z2],
            12 => v!["ZRANGESTORE", dst, z, "0", self.r.below(6) as i64 - 1],
            13 => v![
                "ZRANGESTORE",
                dst,
                z,
                "(100",
                "+inf",
                "BYSCORE",
                "LIMIT",
                "1",
                "4"
            ],
            14 => v!["ZRANGESTORE", dst, z, "[9", "-", "BYLEX", "REV"],
            15 => v!["ZREMRANGEBYRANK", z, "0", self.r.below(3)],
            16 => v![
                "ZREMRANGEBYSCORE",
                z,
                self.r.below(300),
                format!("({}", 200 + self.r.below(300))
            ],
            17 => v![
                "ZREMRANGEBYLEX",
                z,
                format!("[{}", self.r.below(10)),
                format!("({}", self.r.below(10))
            ],
            18 => v!["ZUNIONSTORE", dst, "1", self.key("set")],
            _ => v!["ZSCORE", z, v],
        };
        self.send(&cmd);
    }

    fn bits_hll(&mut self) {
        let bm = self.key("bm");
        let hll = self.key("hll");
        let cmd: Vec<String> = match self.r.below(12) {
            0 | 1 => v!["SETBIT", bm, self.r.below(2000), self.r.below(2)],
            2 => v![
                "BITFIELD",
                bm,
                "SET",
                "u8",
                format!("#{}", self.r.below(40)),
                self.r.below(256),
                "OVERFLOW",
                self.r.pick(&["WRAP", "SAT", "FAIL"]),
                "INCRBY",
                "i5",
                self.r.below(300),
                self.r.below(40) as i64 - 20,
                "GET",
                "u4",
                "0"
            ],
            3 => v![
                "BITOP",
                self.r.pick(&["AND", "OR", "XOR"]),
                self.key("bm"),
                bm,
                self.key("bm")
            ],
            4 => v!["BITOP", "NOT", self.key("bm"), bm],
            5 | 6 => v![
                "PFADD",
                hll,
                self.r.below(300),
                format!("e{}", self.r.below(100))
            ],
            7 => v!["PFMERGE", self.key("hll"), hll, self.key("hll")],
            8 => v!["PFCOUNT", hll],
            9 => v!["PFCOUNT", hll, self.key("hll")],
            10 => v!["PFDEBUG", self.r.pick(&["TODENSE", "GETREG"]), hll],
            _ => v!["BITCOUNT", bm],
        };
        self.send(&cmd);
    }

    fn streams(&mut self) {
        let x = self.key("x");
        let v = self.r.below(1000).to_string();
        let cmd: Vec<String> = match self.r.below(22) {
            0..=2 => v!["XADD", x, "*", "f", v],
            3 => v!["XADD", x, "MAXLEN", "~", "20", "*", "f", v, "g", v],
            4 => v!["XADD", x, "MAXLEN", "12", "*", "f", v],
            5 => v!["XADD", x, "NOMKSTREAM", "*", "f", v],
            6 => v!["XTRIM", x, "MAXLEN", self.r.pick(&["=", "~"]), 8],
            7 => match self.stream_id(&x, false) {
                Some(id) => v!["XTRIM", x, "MINID", id],
                None => v!["XTRIM", x, "MAXLEN", "100"],
            },
            8 => match self.edge_id(&x) {
                Some(id) => v!["XDEL", x, id],
                None => v!["XDEL", x, "1-1"],
            },
            9 => v!["XGROUP", "CREATE", x, "g1", "0", "MKSTREAM"],
            10 => v![
                "XGROUP",
                "CREATE",
                x,
                "g2",
                "$",
                "MKSTREAM",
                "ENTRIESREAD",
                "0"
            ],
            11 => v!["XGROUP", "SETID", x, "g1", self.r.pick(&["0", "$"])],
            12 => v![
                "XGROUP",
                "CREATECONSUMER",
                x,
                "g1",
                format!("c{}", self.r.below(3))
            ],
            13 => v![
                "XGROUP",
                "DELCONSUMER",
                x,
                self.r.pick(&["g1", "g2"]),
                format!("c{}", self.r.below(3))
            ],
            14 => v!["XGROUP", "DESTROY", x, "g2"],
            15 | 16 => {
                let mut a = v![
                    "XREADGROUP",
                    "GROUP",
                    self.r.pick(&["g1", "g2"]),
                    format!("c{}", self.r.below(3)),
                    "COUNT",
                    2
                ];
                if self.r.below(3) == 0 {
                    a.push("NOACK".into());
                }
                a.extend(v!["STREAMS", x, ">"]);
                a
            }
            17 => match self.pending_id(&x) {
                Some(id) => v!["XACK", x, "g1", id],
                None => v!["XACK", x, "g1", "0-1"],
            },
            18 => {
                let id = self.pending_id(&x).or_else(|| self.stream_id(&x, false));
                let id = id.unwrap_or_else(|| "0-1".into());
                let mut a = v!["XCLAIM", x, "g1", format!("c{}", self.r.below(3)), "0", id];
                match self.r.below(3) {
                    0 => a.push("JUSTID".into()),
                    1 => a.push("FORCE".into()),
                    _ => a.extend(v!["RETRYCOUNT", "7"]),
                }
                a
            }
            19 => {
                let mut a = v![
                    "XAUTOCLAIM",
                    x,
                    "g1",
                    format!("c{}", self.r.below(3)),
                    "0",
                    "0-0",
                    "COUNT",
                    "2"
                ];
                if self.r.below(2) == 0 {
                    a.push("JUSTID".into());
                }
                a
            }
            20 => match self.stream_id(&x, true) {
                Some(id) => {
                    if self.r.below(2) == 0 {
                        v!["XSETID", x, id, "ENTRIESADDED", "1000", "MAXDELETEDID", id]
                    } else {
                        v!["XSETID", x, id]
                    }
                }
                None => v!["XSETID", x, "5-5"],
            },
            _ => v!["XLEN", x],
        };
        self.send(&cmd);
    }

    fn geo(&mut self) {
        let g = self.key("g");
        let kind = self.r.pick(&["g", "z"]);
        let dst = self.key(kind);
        let lon = format!("{}.{}", self.r.below(340) as i64 - 170, self.r.below(1000));
        let lat = format!("{}.{}", self.r.below(160) as i64 - 80, self.r.below(1000));
        let m = format!("m{}", self.r.below(30));
        let cmd: Vec<String> = match self.r.below(8) {
            0..=2 => v!["GEOADD", g, lon, lat, m],
            3 => v!["GEOADD", g, self.r.pick(&["NX", "XX", "CH"]), lon, lat, m],
            4 => v![
                "GEOSEARCHSTORE",
                dst,
                g,
                "FROMLONLAT",
                lon,
                lat,
                "BYBOX",
                "20000",
                "15000",
                "km",
                "ASC",
                "COUNT",
                "5"
            ],
            5 => v![
                "GEOSEARCHSTORE",
                dst,
                g,
                "FROMMEMBER",
                m,
                "BYRADIUS",
                "5000",
                "km",
                "DESC",
                "STOREDIST"
            ],
            6 => v![
                "GEORADIUS",
                g,
                lon,
                lat,
                "6000",
                "km",
                "COUNT",
                "4",
                "STORE",
                dst
            ],
            _ => v![
                "GEORADIUSBYMEMBER",
                g,
                m,
                "8000",
                "km",
                "ASC",
                "STOREDIST",
                dst
            ],
        };
        self.send(&cmd);
    }

    /// Blocking pops with short timeouts; other clients' pushes serve some.
    fn blocking(&mut self) {
        let l = self.key("l");
        let l2 = self.key("l");
        let z = self.key("z");
        let z2 = self.key("z");
        let t = "0.02";
        let cmd: Vec<String> = match self.r.below(9) {
            0 => v!["BLPOP", l, l2, t],
            1 => v!["BRPOP", l, l2, t],
            2 => v!["BRPOPLPUSH", l, l2, t],
            3 => v!["BLMOVE", l, l2, "RIGHT", "LEFT", t],
            4 => v![
                "BLMPOP",
                t,
                "2",
                l,
                l2,
                self.r.pick(&["LEFT", "RIGHT"]),
                "COUNT",
                "2"
            ],
            5 => v!["BZPOPMIN", z, z2, t],
            6 => v!["BZPOPMAX", z, t],
            7 => v![
                "BZMPOP",
                t,
                "2",
                z,
                z2,
                self.r.pick(&["MIN", "MAX"]),
                "COUNT",
                "2"
            ],
            _ => v![
                "XREADGROUP",
                "GROUP",
                "g1",
                "c1",
                "COUNT",
                "1",
                "BLOCK",
                "20",
                "STREAMS",
                self.key("x"),
                ">"
            ],
        };
        self.send(&cmd);
    }

    /// MULTI/EXEC blocks, EVAL and FCALL.
    fn atomic(&mut self) {
        let v = self.r.below(1000).to_string();
        let long_ttl = (100_000 + self.r.below(100_000)).to_string();
        let s = self.key("s");
        let f = self.key("f");
        let st = self.key("set");
        let l = self.key("l");
        let z = self.key("z");
        match self.r.below(4) {
            0 => {
                self.send(&["MULTI"]);
                self.send(&["SET", &s, &v, "PX", &long_ttl]);
                self.send(&["INCRBYFLOAT", &f, "2"]);
                self.send(&["SPOP", &st]);
                self.send(&["RPUSH", &l, &v]);
                self.send(&["ZPOPMIN", &z]);
                self.send(&["EXEC"]);
            }
            1 => {
                self.send(&[
                    "EVAL",
                    "redis.call('set', KEYS[1], ARGV[1], 'px', 300000); \
                     redis.call('incrbyfloat', KEYS[2], 1.25); redis.call('spop', KEYS[3]); \
                     return redis.call('rpush', KEYS[4], ARGV[1])",
                    "4",
                    &s,
                    &f,
                    &st,
                    &l,
                    &v,
                ]);
            }
            2 => {
                let h = self.key("h");
                self.send(&[
                    "EVAL",
                    "redis.call('zadd', KEYS[1], 5, ARGV[1]); redis.call('zpopmax', KEYS[1]); \
                     redis.call('hincrbyfloat', KEYS[2], 'x', 0.1); \
                     return redis.call('srandmember', KEYS[3])",
                    "3",
                    &z,
                    &h,
                    &st,
                    &v,
                ]);
            }
            _ => {
                self.send(&["FCALL", "wmix", "4", &s, &st, &f, &z, &v]);
            }
        }
    }
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The write commands of a `COMMAND` reply: `name` for commands, and
/// `parent|sub` for subcommands, whose flags include `write`.
pub fn write_commands(reply: &Value) -> BTreeSet<String> {
    fn text(v: &Value) -> String {
        match v {
            Value::Bulk(b) | Value::Simple(b) => String::from_utf8_lossy(b).to_ascii_lowercase(),
            _ => String::new(),
        }
    }
    fn is_write(doc: &[Value]) -> bool {
        match doc.get(2) {
            Some(Value::Array(f)) | Some(Value::Set(f)) => f.iter().any(|x| text(x) == "write"),
            _ => false,
        }
    }
    let mut out = BTreeSet::new();
    let Value::Array(all) = reply else {
        panic!("COMMAND reply: {reply:?}")
    };
    for c in all {
        let Value::Array(doc) = c else { continue };
        if is_write(doc) {
            out.insert(text(&doc[0]));
        }
        if let Some(Value::Array(subs)) = doc.get(9) {
            for s in subs {
                if let Value::Array(sd) = s {
                    if is_write(sd) {
                        out.insert(text(&sd[0]));
                    }
                }
            }
        }
    }
    out
}

/// `clients` generators on `port`, `ops` steps each (the first client sets
/// up and runs the rare whole-database operations, once each, at fixed
/// points of its run); returns every key any of them wrote.
pub fn run_clients(port: u16, clients: u64, ops: usize, seed: u64) -> BTreeSet<String> {
    let seen = std::sync::Mutex::new(BTreeSet::new());
    std::thread::scope(|sc| {
        for t in 0..clients {
            let seen = &seen;
            sc.spawn(move || {
                let mut g = Gen::new(
                    seed ^ (t + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                    RawConn::tcp(port),
                );
                if t == 0 {
                    g.setup();
                }
                for i in 0..ops {
                    if t == 0 && i > 0 && i % (ops / 6).max(1) == 0 {
                        g.rare((i / (ops / 6).max(1)) as u64 - 1);
                    }
                    g.step();
                }
                seen.lock().unwrap().extend(g.seen);
            });
        }
    });
    seen.into_inner().unwrap()
}
