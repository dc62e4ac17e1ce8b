//! Blocking XREAD / XREADGROUP with several waiters, compared with
//! redis-server 7.0: timeouts, one XADD serving every XREAD waiter whose
//! ID it passes, XREADGROUP waiters of one group served first come first
//! served (each entry to one of them), XREAD and XREADGROUP waiters on one
//! key, a BLPOP waiter on a key that became a stream not hiding the XREAD
//! waiters behind it, and the writer on another connection (petrel runs
//! two worker threads, so waiters and writer sit on different threads).
//! Each observation is what a waiter received within a short poll.

mod common;
use std::time::Duration;

use common::*;

const POLL: Duration = Duration::from_millis(200);

/// A scenario: waiters' commands (registered in this order), then writer
/// steps; after each step every waiter is polled.
struct Scenario {
    name: &'static str,
    setup: &'static [&'static [&'static str]],
    waiters: &'static [&'static [&'static str]],
    steps: &'static [&'static [&'static str]],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "timeout",
        setup: &[&["XADD", "s", "1-0", "f", "v"]],
        waiters: &[
            &["XREAD", "BLOCK", "50", "STREAMS", "s", "$"],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "BLOCK",
                "50",
                "STREAMS",
                "s",
                ">",
            ],
        ],
        steps: &[&["PING"]],
    },
    Scenario {
        name: "one xadd serves every xread",
        setup: &[&["XADD", "s", "1-0", "f", "v"]],
        waiters: &[
            &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
            &["XREAD", "BLOCK", "0", "STREAMS", "s", "0-0"],
            &[
                "XREAD", "COUNT", "1", "BLOCK", "0", "STREAMS", "other", "s", "$", "$",
            ],
            &["XREAD", "BLOCK", "0", "STREAMS", "s", "5-0"],
        ],
        steps: &[
            &["XADD", "s", "2-0", "f", "v2"],
            &["XADD", "s", "3-0", "f", "v3"],
            &["XADD", "s", "6-0", "f", "v6"],
        ],
    },
    Scenario {
        name: "group waiters first come first served",
        setup: &[
            &["XADD", "s", "1-0", "f", "v"],
            &["XGROUP", "CREATE", "s", "g", "$"],
        ],
        waiters: &[
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "a",
                "COUNT",
                "1",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "b",
                "COUNT",
                "1",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "c",
                "COUNT",
                "1",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
        ],
        steps: &[
            &["MULTI"],
            &["XADD", "s", "10-0", "f", "v10"],
            &["XADD", "s", "11-0", "f", "v11"],
            &["EXEC"],
            &["XPENDING", "s", "g"],
            &["XADD", "s", "12-0", "f", "v12"],
            &["XINFO", "GROUPS", "s"],
        ],
    },
    Scenario {
        name: "xread and xreadgroup on one key",
        setup: &[&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]],
        waiters: &[
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "a",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
            &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "b",
                "NOACK",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
        ],
        steps: &[
            &["XADD", "s", "5-0", "f", "v5"],
            &["XADD", "s", "6-0", "f", "v6"],
            &["XPENDING", "s", "g"],
        ],
    },
    Scenario {
        name: "blpop waiter in front of an xread waiter",
        setup: &[],
        waiters: &[
            &["BLPOP", "s", "0"],
            &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
        ],
        steps: &[
            &["XADD", "s", "1-0", "f", "v"],
            &["DEL", "s"],
            &["RPUSH", "s", "x"],
        ],
    },
    Scenario {
        name: "group destroyed with several waiters",
        setup: &[
            &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
            &["XGROUP", "CREATE", "s", "h", "$"],
        ],
        waiters: &[
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "a",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
            &[
                "XREADGROUP",
                "GROUP",
                "h",
                "b",
                "BLOCK",
                "0",
                "STREAMS",
                "s",
                ">",
            ],
            &["XREAD", "BLOCK", "0", "STREAMS", "s", "$"],
        ],
        steps: &[
            &["XGROUP", "DESTROY", "s", "g"],
            &["XADD", "s", "1-0", "f", "v"],
        ],
    },
];

fn observe(port: u16, resp3: bool) -> Vec<String> {
    let mut out = Vec::new();
    for sc in SCENARIOS {
        let mut writer = RawConn::tcp(port);
        if resp3 {
            writer.cmd(&["HELLO", "3"]);
        }
        writer.cmd(&["FLUSHALL"]);
        for s in sc.setup {
            writer.cmd(s);
        }
        let mut waiters: Vec<RawConn> = Vec::new();
        for w in sc.waiters {
            let mut c = RawConn::tcp(port);
            if resp3 {
                c.cmd(&["HELLO", "3"]);
            }
            c.send_cmd(w);
            // Registration order is the serving order.
            std::thread::sleep(Duration::from_millis(30));
            waiters.push(c);
        }
        for step in sc.steps {
            let r = writer.cmd(step);
            out.push(format!("{}: {} -> {r}", sc.name, step.join(" ")));
            for (i, w) in waiters.iter_mut().enumerate() {
                out.push(format!(
                    "{}:   waiter {i}: {}",
                    sc.name,
                    w.read_reply_within(POLL)
                ));
            }
        }
        for w in waiters.iter_mut() {
            // Still blocked ones end with the connection.
            w.send_cmd(&["PING"]);
        }
    }
    out
}

fn compare(resp3: bool) {
    let p = TestServer::start(&[("threads", "2")]);
    let Some(r) = RefRedis::start() else {
        eprintln!("{}", observe(p.port(), resp3).join("\n"));
        return;
    };
    let (pp, rp) = (p.port(), r.port());
    let petrel = std::thread::spawn(move || observe(pp, resp3));
    let want = observe(rp, resp3);
    let got = petrel.join().expect("petrel observations");
    let diffs: Vec<String> = got
        .iter()
        .zip(want.iter())
        .filter(|(g, w)| g != w)
        .map(|(g, w)| format!("  petrel: {g}\n  redis:  {w}"))
        .collect();
    assert!(
        diffs.is_empty() && got.len() == want.len(),
        "{} observations differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn stream_waiters_resp2() {
    compare(false);
}

#[test]
fn stream_waiters_resp3() {
    compare(true);
}
