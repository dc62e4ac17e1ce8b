//! Differential tests: lists holding plain quicklist nodes (elements of at
//! least `DEBUG QUICKLIST-PACKED-THRESHOLD` bytes, alone in their node)
//! against redis-server 7.0: every list command, SORT and the blocking pops
//! on lists mixing plain and packed nodes, compressed (`list-compress-depth`)
//! or not; the threshold's argument rules; and `DEBUG QUICKLIST`'s node
//! containers, encodings and sizes next to Redis's.

mod common;
use common::*;

/// xorshift64*, so a failing script is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// An element: small integers and words (packed), or 100..400 bytes
/// (plain at a threshold of 100), repetitive (LZF pays) or random letters
/// (it does not), sometimes the empty string.
fn element(r: &mut Rng) -> String {
    match r.below(10) {
        0..=2 => (r.below(30) as i64 - 5).to_string(),
        3 | 4 => ["a", "b", "item", "zz", ""][r.below(5) as usize].to_string(),
        5 | 6 => {
            let c = (b'A' + r.below(4) as u8) as char;
            c.to_string().repeat(100 + r.below(300) as usize)
        }
        7 => (0..100 + r.below(300))
            .map(|_| (b'a' + r.below(26) as u8) as char)
            .collect(),
        _ => format!("{}:{}", "x".repeat(95), r.below(8)),
    }
}

/// A random run of list commands on `l1`/`l2` (and SORT/LMOVE targets),
/// with the whole lists read back every few steps.
fn script(name: &str, threshold: &str, seed: u64, steps: usize) -> Script {
    let mut r = Rng(seed);
    let mut s = Script::new(name).cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", threshold]);
    let mut seen: Vec<String> = vec!["a".into()];
    let keys = ["l1", "l2"];
    for step in 0..steps {
        let k = *r.pick(&keys);
        let e = element(&mut r);
        seen.push(e.clone());
        let old = r.pick(&seen).clone();
        let idx = (r.below(24) as i64 - 12).to_string();
        let cmd: Vec<String> = match r.below(22) {
            0..=3 => {
                let mut c = vec![
                    if r.below(2) == 0 { "LPUSH" } else { "RPUSH" }.into(),
                    k.into(),
                    e,
                ];
                for _ in 0..r.below(4) {
                    let x = element(&mut r);
                    seen.push(x.clone());
                    c.push(x);
                }
                c
            }
            4 => vec!["LPUSHX".into(), k.into(), e],
            5 | 6 => vec![
                "LINSERT".into(),
                k.into(),
                if r.below(2) == 0 { "BEFORE" } else { "AFTER" }.into(),
                old,
                e,
            ],
            7 | 8 => vec!["LSET".into(), k.into(), idx, e],
            9 => vec![
                "LREM".into(),
                k.into(),
                (r.below(5) as i64 - 2).to_string(),
                old,
            ],
            10 => vec!["LTRIM".into(), k.into(), "1".into(), "-2".into()],
            11 => vec!["LINDEX".into(), k.into(), idx],
            12 => vec![
                "LPOS".into(),
                k.into(),
                old,
                "RANK".into(),
                ["1", "2", "-1"][r.below(3) as usize].into(),
                "COUNT".into(),
                r.below(3).to_string(),
            ],
            13 => {
                let mut c = vec![
                    if r.below(2) == 0 { "LPOP" } else { "RPOP" }.into(),
                    k.into(),
                ];
                if r.below(2) == 0 {
                    c.push((1 + r.below(3)).to_string());
                }
                c
            }
            14 => vec![
                "LMOVE".into(),
                k.into(),
                keys[(k == "l1") as usize].into(),
                (*r.pick(&["LEFT", "RIGHT"])).into(),
                (*r.pick(&["LEFT", "RIGHT"])).into(),
            ],
            15 => vec!["RPOPLPUSH".into(), k.into(), k.into()],
            16 => vec![
                "LMPOP".into(),
                "2".into(),
                "l1".into(),
                "l2".into(),
                (*r.pick(&["LEFT", "RIGHT"])).into(),
                "COUNT".into(),
                (1 + r.below(3)).to_string(),
            ],
            17 => vec![
                (*r.pick(&["BLPOP", "BRPOP"])).into(),
                k.into(),
                "nokey".into(),
                "0.01".into(),
            ],
            18 => vec![
                "BLMOVE".into(),
                k.into(),
                "moved".into(),
                (*r.pick(&["LEFT", "RIGHT"])).into(),
                (*r.pick(&["LEFT", "RIGHT"])).into(),
                "0.01".into(),
            ],
            19 => vec![
                "SORT".into(),
                k.into(),
                "BY".into(),
                "nosort".into(),
                "STORE".into(),
                "sorted".into(),
            ],
            20 => vec!["SORT".into(), k.into(), "ALPHA".into()],
            _ => vec!["LRANGE".into(), k.into(), idx, "-3".into()],
        };
        s = s.cmd(&cmd);
        if step % 8 == 7 {
            for k in ["l1", "l2", "moved", "sorted"] {
                s = s.cmd(&["LRANGE", k, "0", "-1"]);
            }
        }
    }
    for k in ["l1", "l2", "moved", "sorted"] {
        s = s
            .cmd(&["LRANGE", k, "0", "-1"])
            .cmd(&["LLEN", k])
            .cmd(&["OBJECT", "ENCODING", k]);
    }
    s
}

fn run(threshold: &str, depth: &str, fill: &str, seed: u64) {
    let name = format!("plain_nodes_t{threshold}_d{depth}_f{fill}");
    diff_with(
        &script(&name, threshold, seed, 300),
        &DiffOpts::new(&[
            ("enable-debug-command", "yes"),
            ("list-compress-depth", depth),
            ("list-max-listpack-size", fill),
        ]),
    );
}

#[test]
fn plain_nodes_uncompressed() {
    run("100", "0", "-2", 1);
    run("100", "0", "3", 2);
}

#[test]
fn plain_nodes_compressed() {
    run("100", "1", "-1", 3);
    run("100", "2", "2", 4);
}

/// Threshold 1: every non-empty element is plain.
#[test]
fn every_element_plain() {
    run("1", "1", "-2", 5);
}

#[test]
fn packed_threshold_arguments() {
    diff_text_with(
        "packed_threshold_arguments",
        r#"
DEBUG QUICKLIST-PACKED-THRESHOLD 5gb
DEBUG QUICKLIST-PACKED-THRESHOLD -1
DEBUG QUICKLIST-PACKED-THRESHOLD abc
DEBUG QUICKLIST-PACKED-THRESHOLD 1.5mb
DEBUG QUICKLIST-PACKED-THRESHOLD " 1"
DEBUG QUICKLIST-PACKED-THRESHOLD 4293918721
DEBUG QUICKLIST-PACKED-THRESHOLD 4294967296kb
DEBUG QUICKLIST-PACKED-THRESHOLD 4293918720
DEBUG QUICKLIST-PACKED-THRESHOLD 17179869185gb
DEBUG QUICKLIST-PACKED-THRESHOLD kb
DEBUG QUICKLIST-PACKED-THRESHOLD 1KB
DEBUG QUICKLIST-PACKED-THRESHOLD 0
DEBUG QUICKLIST-PACKED-THRESHOLD
DEBUG QUICKLIST-PACKED-THRESHOLD 1 2
DEBUG quicklist-packed-threshold 10b
RPUSH l aaaaaaaaaaaa b
DEBUG QUICKLIST nokey
SET s v
DEBUG QUICKLIST s
DEBUG QUICKLIST l
DEBUG QUICKLIST l 1
DEBUG QUICKLIST l x
DEBUG QUICKLIST l 1 2
DEBUG QUICKLIST
LRANGE l 0 -1
OBJECT ENCODING l
"#,
        &DiffOpts::new(&[("enable-debug-command", "yes")]),
    );
}

/// `(container, encoding, size, count)` of every node in the `DEBUG
/// QUICKLIST` dumps of a log.
fn node_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("{container : "))
        .map(|l| l.split(", recompress").next().unwrap().to_string())
        .collect()
}

/// The same pushes give the same nodes in Petrel and Redis: packed nodes
/// around plain ones, the interior ones compressed when LZF pays (the
/// random element stays raw), and a plain node uncompressed again once it
/// is at an end.
#[test]
fn node_containers_match_redis() {
    let args = [
        ("enable-debug-command", "yes"),
        ("list-compress-depth", "1"),
    ];
    let Some(redis) = RefRedis::start_with(Opts::new(&args)) else {
        return;
    };
    let petrel = TestServer::start(&args);
    let mut x = 7u64;
    let noise: String = (0..300)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (b'a' + (x >> 59) as u8 % 26) as char
        })
        .collect();
    let big = "x".repeat(200);
    let steps: Vec<Vec<&str>> = vec![
        vec!["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "100"],
        vec!["RPUSH", "l", "a", "b", "c"],
        vec!["RPUSH", "l", &big, "d", &noise, "e"],
        vec!["RPUSH", "l", &big, "f"],
        vec!["DEBUG", "QUICKLIST", "l"],
        vec!["LPOP", "l", "3"],
        vec!["DEBUG", "QUICKLIST", "l", "1"],
    ];
    let mut logs = Vec::new();
    for s in [&petrel, &redis] {
        let mut c = s.raw();
        for step in &steps {
            c.cmd(step);
        }
        // Redis's stdout is block-buffered when piped: SHUTDOWN flushes it.
        if s.kind == common::Kind::Redis {
            c.send_cmd(&["SHUTDOWN", "NOSAVE"]);
            c.closed_within(Duration::from_secs(5));
        }
        assert!(wait_until(Duration::from_secs(5), || node_lines(&s.log())
            .len()
            >= 12));
        logs.push(node_lines(&s.log()));
    }
    assert_eq!(logs[0], logs[1], "petrel (left) vs redis (right)");
    assert_eq!(
        &logs[0][..7],
        [
            "PACKED, encoding: RAW, size: 16, count: 3",
            "PLAIN, encoding: LZF, size: 200, count: 1",
            "PACKED, encoding: RAW, size: 10, count: 1",
            "PLAIN, encoding: RAW, size: 300, count: 1",
            "PACKED, encoding: RAW, size: 10, count: 1",
            "PLAIN, encoding: LZF, size: 200, count: 1",
            "PACKED, encoding: RAW, size: 10, count: 1",
        ]
    );
    // After LPOP 3 the first plain node is the head: uncompressed.
    assert_eq!(logs[0][7], "PLAIN, encoding: RAW, size: 200, count: 1");
    assert!(petrel.log().contains("{ entry : xxxxxxxx"));
}
