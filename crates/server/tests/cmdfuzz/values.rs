//! The values the command generator draws from: the seeded random
//! source, pools of keys, numbers at their edges, ranges, patterns, Lua
//! code, and the settings CONFIG SET may change during a run.

/// splitmix64: small, seedable, good enough for input generation.
#[derive(Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// True with probability 1/n.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }
    pub fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Keys shared by every connection, so commands of different types meet
/// on the same keys (WRONGTYPE paths, blocked clients served by others).
/// `{t}` keys share a hash slot.
pub const KEYS: &[&str] = &[
    "k0", "k1", "k2", "k3", "k4", "k5", "{t}a", "{t}b", "{t}c", "list", "zs", "h",
];

/// Settings CONFIG SET may change during a run: none closes connections,
/// locks clients out, blocks them or moves files.
pub const CONFIG_SAFE: &[&str] = &[
    "hash-max-listpack-entries",
    "hash-max-listpack-value",
    "hash-max-ziplist-entries",
    "set-max-intset-entries",
    "set-max-listpack-entries",
    "zset-max-listpack-entries",
    "zset-max-listpack-value",
    "zset-max-ziplist-value",
    "list-max-listpack-size",
    "list-max-ziplist-size",
    "list-compress-depth",
    "stream-node-max-entries",
    "stream-node-max-bytes",
    "hll-sparse-max-bytes",
    "notify-keyspace-events",
    "slowlog-log-slower-than",
    "slowlog-max-len",
    "latency-monitor-threshold",
    "latency-tracking",
    "hz",
    "activerehashing",
    "lazyfree-lazy-user-del",
    "lazyfree-lazy-user-flush",
    "lazyfree-lazy-expire",
    "lazyfree-lazy-server-del",
    "lazyfree-lazy-eviction",
    "tracking-table-max-keys",
    "maxmemory-policy",
    "maxmemory-samples",
    "lfu-log-factor",
    "lfu-decay-time",
    "active-expire-effort",
    "nosuch-setting",
];

/// DEBUG subcommands that may run (the others sleep, panic, pause the
/// cron, or are unknown to this list).
pub const DEBUG_SAFE: &[&str] = &[
    "OBJECT",
    "DIGEST",
    "DIGEST-VALUE",
    "PROTOCOL",
    "CHANGE-REPL-ID",
    "CONFIG-REWRITE-FORCE-ALL",
    "ERROR",
    "LOG",
    "POPULATE",
    "SET-ACTIVE-EXPIRE",
    "QUICKLIST-PACKED-THRESHOLD",
    "LISTPACK",
    "QUICKLIST",
    "STRINGMATCH-LEN",
    "SDSLEN",
    "HTSTATS",
    "HTSTATS-KEY",
    "JMAP",
    "STRUCTSIZE",
    "REPLYBUFFER",
    "HELP",
];

/// Lua scripts for EVAL and SCRIPT LOAD: valid ones that call commands on
/// the keys, ones that fail at run time, and syntax errors. None loops.
pub const SCRIPTS: &[&str] = &[
    "return 1",
    "return redis.call('GET', KEYS[1])",
    "return redis.call('SET', KEYS[1], ARGV[1])",
    "return redis.pcall('INCR', KEYS[1])",
    "return redis.call('LPUSH', KEYS[1], ARGV[1])",
    "return redis.call('ZADD', KEYS[1], ARGV[1], 'm')",
    "return redis.call('HSET', KEYS[1], 'f', ARGV[1])",
    "return {1, 2, {3, 'x'}, redis.call('TYPE', KEYS[1])}",
    "return redis.status_reply('FINE')",
    "return redis.error_reply('ERR from script')",
    "return redis.call('NOSUCHCOMMAND')",
    "return redis.call('BLPOP', KEYS[1], 0)",
    "return redis.call('EVAL', 'return 1', 0)",
    "return #KEYS + #ARGV",
    "local t = {} for i = 1, 100 do t[i] = i end return t",
    "return 3.99",
    "return true",
    "return false",
    "return nil",
    "return {err = 'My Error'}",
    "redis.setresp(3) return redis.call('HGETALL', KEYS[1])",
    "return redis.sha1hex(ARGV[1] or '')",
    "return cjson.encode({a = 1, b = {1, 2}})",
    "return redis.call('SCAN', 0, 'COUNT', 5)",
    "error('boom')",
    "return (",
    "#!lua flags=no-writes\nreturn redis.call('GET', KEYS[1])",
    "#!lua flags=no-writes\nreturn redis.call('SET', KEYS[1], 'x')",
    "#!lua\nreturn redis.call('DEL', KEYS[1])",
    "#!python\nreturn 1",
    "return redis.call('SELECT', 1)",
    "local i = 0 while i < 1000 do i = i + 1 end return i",
];

/// Function libraries for FUNCTION LOAD.
pub const LIBRARIES: &[&str] = &[
    "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return keys[1] end)",
    "#!lua name=lib2\nredis.register_function{function_name='f2', callback=function(keys, args) return redis.call('INCR', keys[1]) end, flags={'no-writes'}}",
    "#!lua name=lib3\nredis.register_function('f3', function(keys, args) return redis.call('LPUSH', keys[1], 'x') end)\nredis.register_function('f4', function() return redis.error_reply('ERR f4') end)",
    "#!lua name=lib1\nredis.register_function('f1', function(keys, args) return 2 end)",
    "#!lua name=bad\nreturn (",
    "#!lua name=bad2\nredis.call('SET', 'x', 1)",
    "#!lua\nredis.register_function('f5', function() return 1 end)",
    "return 1",
];

pub const FUNCTIONS: &[&str] = &["f1", "f2", "f3", "f4", "f5", "nosuch"];

pub const INTS: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "5",
    "10",
    "100",
    "1000",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "007",
    "-0",
    "+1",
    " 1",
    "1 ",
    "0x10",
    "1e3",
    "1.5",
    "",
    "abc",
];

pub const FLOATS: &[&str] = &[
    "0",
    "1",
    "-1",
    "0.5",
    "-0",
    "-0.0",
    "1.5",
    "3.14159",
    "1e10",
    "-1e-10",
    "inf",
    "-inf",
    "+inf",
    "INF",
    "nan",
    "NaN",
    "1e308",
    "1e309",
    "-1e309",
    "4.9e-324",
    "1.7976931348623157e308",
    "9007199254740993",
    ".5",
    "5.",
    "1e",
    "",
    "abc",
    "0x1p3",
];

/// Score range ends (ZRANGEBYSCORE, ZCOUNT...).
pub const SCORE_RANGES: &[&str] = &[
    "-inf", "+inf", "inf", "0", "1", "(1", "(0", "-1", "(-inf", "(+inf", "1.5", "(", "((1", "nan",
    "abc", "100",
];

/// Lex range ends (ZRANGEBYLEX...).
pub const LEX_RANGES: &[&str] = &[
    "-", "+", "[a", "(a", "[m", "(z", "[", "(", "a", "", "[\u{0}", "[\u{ff}",
];

/// Index ends (LRANGE, GETRANGE, ZRANGE, BITCOUNT...).
pub const INDEXES: &[&str] = &[
    "0",
    "1",
    "-1",
    "-2",
    "2",
    "5",
    "-100",
    "100",
    "9223372036854775807",
    "-9223372036854775808",
    "x",
];

pub const PATTERNS: &[&str] = &[
    "*",
    "k*",
    "?",
    "k[0-3]",
    "[a-z]*",
    "{t}*",
    "*a*b*c*d*e*f*g*h*i*j*k*l*m*n*o*p*q*r*s*t*u*v*w*x*y*z*",
    "\\",
    "[",
    "[^a]",
    "[a-",
    "nomatch",
    "__keyspace@0__:*",
    "",
];

pub const CHANNELS: &[&str] = &["ch1", "ch2", "news.*", "__redis__:invalidate", "*", ""];

pub const TYPES: &[&str] = &[
    "string", "list", "set", "zset", "hash", "stream", "none", "nosuch",
];

pub const BITFIELD_TYPES: &[&str] = &[
    "u1", "i8", "u8", "i16", "u32", "i64", "u63", "u64", "i65", "x8", "i0",
];

pub fn rng_pick(rng: &mut Rng, v: &[&'static str]) -> &'static str {
    v[rng.below(v.len())]
}

/// `numkeys key... arg...` for EVAL and FCALL.
pub fn numkeys_and_args(rng: &mut Rng) -> Vec<Vec<u8>> {
    let n = rng.below(3);
    let mut v = Vec::new();
    let shown = if rng.one_in(8) {
        rng.pick(&["-1", "5", "x", "99999999999"]).to_string()
    } else {
        n.to_string()
    };
    v.push(shown.into_bytes());
    for _ in 0..n {
        v.push(key(rng));
    }
    for _ in 0..rng.below(3) {
        v.push(if rng.one_in(2) {
            rng.pick(INTS).as_bytes().to_vec()
        } else {
            value(rng)
        });
    }
    v
}

pub fn config_value(rng: &mut Rng, p: &str) -> &'static str {
    match p {
        "notify-keyspace-events" => rng_pick(rng, &["KEA", "", "Kx", "E$", "AKEm", "z?"]),
        "activerehashing"
        | "lazyfree-lazy-user-del"
        | "lazyfree-lazy-user-flush"
        | "lazyfree-lazy-expire"
        | "lazyfree-lazy-server-del"
        | "lazyfree-lazy-eviction"
        | "latency-tracking" => rng_pick(rng, &["yes", "no", "maybe"]),
        "maxmemory-policy" => rng_pick(
            rng,
            &[
                "noeviction",
                "allkeys-lru",
                "allkeys-lfu",
                "volatile-ttl",
                "x",
            ],
        ),
        "hz" => rng_pick(rng, &["1", "10", "100", "500", "0", "x"]),
        "list-max-listpack-size" | "list-max-ziplist-size" => {
            rng_pick(rng, &["-2", "-1", "-5", "-6", "1", "4", "128", "0"])
        }
        "list-compress-depth" => rng_pick(rng, &["0", "1", "2", "-1"]),
        "tracking-table-max-keys" => rng_pick(rng, &["0", "1", "10", "1000000"]),
        "hll-sparse-max-bytes" => rng_pick(rng, &["0", "100", "3000", "20000"]),
        _ => rng_pick(
            rng,
            &[
                "0", "1", "2", "3", "64", "128", "512", "-1", "x", "1000000", "1gb",
            ],
        ),
    }
}

/// A command word in upper, lower or mixed case.
pub fn word_case(rng: &mut Rng, w: &str) -> Vec<u8> {
    match rng.below(8) {
        0 => w.to_ascii_lowercase().into_bytes(),
        1 => w
            .bytes()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 0 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect(),
        _ => w.to_ascii_uppercase().into_bytes(),
    }
}

pub fn token_case(rng: &mut Rng, t: &str) -> Vec<u8> {
    if rng.one_in(6) {
        t.to_ascii_lowercase().into_bytes()
    } else {
        t.as_bytes().to_vec()
    }
}

pub fn key(rng: &mut Rng) -> Vec<u8> {
    match rng.below(60) {
        0 => Vec::new(),
        1 => binary(rng, 8),
        2 => format!("long{}", "k".repeat(300)).into_bytes(),
        _ => rng.pick(KEYS).as_bytes().to_vec(),
    }
}

pub fn offset(rng: &mut Rng) -> Vec<u8> {
    rng.pick(&[
        "0",
        "1",
        "7",
        "8",
        "100",
        "#0",
        "#3",
        "-1",
        "4294967295",
        "4294967296",
        "x",
    ])
    .as_bytes()
    .to_vec()
}

pub fn binary(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next() as u8).collect()
}

/// A large value: mostly 1-8 KB, sometimes 100 KB, rarely 256 KB. Lists
/// and sets of them make replies of megabytes, which the connections
/// read back whole: larger values only slow the run down.
pub fn big(rng: &mut Rng) -> Vec<u8> {
    let n = match rng.below(200) {
        0 => 256 << 10,
        1..=4 => 100_000,
        _ => 1000 + rng.below(7_000),
    };
    let c = b"abcxyz019"[rng.below(9)];
    vec![c; n]
}

/// A member, field, element or string value.
pub fn value(rng: &mut Rng) -> Vec<u8> {
    match rng.below(24) {
        0 => Vec::new(),
        1 => {
            let n = 1 + rng.below(16);
            binary(rng, n)
        }
        2 => big(rng),
        3 => b"\r\n\0".to_vec(),
        4 => "héllo wörld".as_bytes().to_vec(),
        5..=8 => rng.pick(INTS).as_bytes().to_vec(),
        9 => rng.pick(FLOATS).as_bytes().to_vec(),
        10 => "x".repeat(65).into_bytes(),
        _ => rng
            .pick(&[
                "a", "b", "c", "m", "f", "v", "1", "2", "hello", "{t}a", "k0",
            ])
            .as_bytes()
            .to_vec(),
    }
}

/// A short timeout for a blocking command (never 0: that would wait
/// forever), sometimes an invalid one.
pub fn timeout(rng: &mut Rng, millis: bool) -> Vec<u8> {
    let v = if millis {
        rng.pick(&["1", "10", "50", "100", "-1", "x"])
    } else {
        rng.pick(&["0.01", "0.05", "0.1", "0.001", "0.2", "-1", "x", "1e-3"])
    };
    v.as_bytes().to_vec()
}
