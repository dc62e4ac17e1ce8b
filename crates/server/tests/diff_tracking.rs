//! Client-side caching (CLIENT TRACKING), differential: the same sessions
//! of several connections run against petrel (two worker threads, so
//! consecutive connections live on different workers) and redis-server
//! 7.0; every reply and every push or redirected message must match.
//!
//! Script lines: `<conn> <command...>` sends a command on connection
//! `<conn>` and reads its reply, together with any push that arrives
//! before it; `<conn> @pushes` reads whatever arrives on that connection
//! within 300 ms (pushes, RESP2 `message`s); `@sleep <ms>`; `<conn> @close`.
//! `{id:N}` in a command is connection N's client id; in replies, client
//! ids are replaced by `id:N` before comparing.

mod common;
use common::*;

const PUSH_WAIT: Duration = Duration::from_millis(300);

struct Side {
    conns: Vec<Option<RawConn>>,
    ids: Vec<i64>,
}

impl Side {
    fn open(srv: &Server, n: usize) -> Side {
        let mut conns = Vec::new();
        let mut ids = Vec::new();
        for _ in 0..n {
            let mut c = srv.raw();
            match c.cmd(&["CLIENT", "ID"]) {
                Value::Int(id) => ids.push(id),
                other => panic!("CLIENT ID: {other}"),
            }
            conns.push(Some(c));
        }
        Side { conns, ids }
    }

    /// Client ids where replies carry them (CLIENT ID/GETREDIR replies,
    /// TRACKINGINFO's `redirect`, `tracking-redir-broken`) become `id:N`.
    fn id_of(&self, v: Value) -> Value {
        match v {
            Value::Int(x) => match self.ids.iter().position(|&id| id == x) {
                Some(i) => Value::Bulk(format!("id:{i}").into_bytes()),
                None => Value::Int(x),
            },
            other => other,
        }
    }

    fn norm(&self, v: Value) -> Value {
        let seq = |a: Vec<Value>| {
            let mut out: Vec<Value> = Vec::with_capacity(a.len());
            for x in a {
                let after_id_label = matches!(out.last(), Some(Value::Bulk(b))
                    if b == b"redirect" || b == b"tracking-redir-broken");
                out.push(if after_id_label {
                    self.id_of(x)
                } else {
                    self.norm(x)
                });
            }
            out
        };
        match v {
            Value::Array(a) => Value::Array(seq(a)),
            Value::Push(a) => Value::Push(seq(a)),
            Value::Map(m) => Value::Map(
                m.into_iter()
                    .map(|(k, v)| {
                        let v = if k == Value::Bulk(b"redirect".to_vec()) {
                            self.id_of(v)
                        } else {
                            self.norm(v)
                        };
                        (k, v)
                    })
                    .collect(),
            ),
            other => other,
        }
    }

    fn conn(&mut self, i: usize) -> &mut RawConn {
        self.conns[i]
            .as_mut()
            .expect("connection closed by the script")
    }

    /// Runs one step; returns what it observed, as text.
    fn step(&mut self, conn: Option<usize>, words: &[String]) -> String {
        match (conn, words[0].as_str()) {
            (None, "@sleep") => {
                std::thread::sleep(Duration::from_millis(words[1].parse().unwrap()));
                String::new()
            }
            (Some(i), "@close") => {
                self.conns[i] = None;
                std::thread::sleep(Duration::from_millis(100));
                String::new()
            }
            (Some(i), "@pushes") => {
                let mut got = Vec::new();
                while let Reply::Value(v) = self.conn(i).read_reply_within(PUSH_WAIT) {
                    got.push(format!("{}", self.norm(v)));
                }
                got.join(" | ")
            }
            (Some(i), _) => {
                let args: Vec<String> = words
                    .iter()
                    .map(|w| {
                        let mut w = w.clone();
                        for (n, id) in self.ids.iter().enumerate() {
                            w = w.replace(&format!("{{id:{n}}}"), &id.to_string());
                        }
                        w
                    })
                    .collect();
                let returns_id = args.len() == 2
                    && args[0].eq_ignore_ascii_case("client")
                    && (args[1].eq_ignore_ascii_case("id")
                        || args[1].eq_ignore_ascii_case("getredir"));
                self.conn(i).send_cmd(&args);
                let mut seen = Vec::new();
                loop {
                    let got = self.conn(i).try_read_reply();
                    match got {
                        Reply::Value(v @ Value::Push(_)) => {
                            seen.push(format!("push {}", self.norm(v)))
                        }
                        Reply::Value(v) => {
                            let v = if returns_id {
                                self.id_of(v)
                            } else {
                                self.norm(v)
                            };
                            seen.push(format!("{v}"));
                            break;
                        }
                        other => {
                            seen.push(format!("{other}"));
                            break;
                        }
                    }
                }
                seen.join(" then ")
            }
            _ => panic!("bad step {words:?}"),
        }
    }
}

/// Runs `script` (module docs) on `conns` connections to each server.
fn run(name: &str, conns: usize, script: &str, petrel_args: &[(&str, &str)]) {
    let Some(redis) = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")])) else {
        return;
    };
    let mut pargs = vec![("enable-debug-command", "yes")];
    pargs.extend_from_slice(petrel_args);
    let petrel = TestServer::start(&pargs);
    let mut p = Side::open(&petrel, conns);
    let mut r = Side::open(&redis, conns);
    let mut failures = Vec::new();
    for (ln, line) in script.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (line, compare) = match line.split_once(" # ") {
            Some((l, m)) => (l.trim(), m.trim() != "any"),
            None => (line, true),
        };
        let words: Vec<String> = script::split_args(line)
            .expect("quoting")
            .into_iter()
            .map(|w| String::from_utf8(w).unwrap())
            .collect();
        let (conn, rest) = match words[0].parse::<usize>() {
            Ok(i) => (Some(i), &words[1..]),
            Err(_) => (None, &words[..]),
        };
        let a = p.step(conn, rest);
        let b = r.step(conn, rest);
        if compare && a != b {
            failures.push(format!(
                "line {}: {line}\n  petrel: {a}\n  redis:  {b}",
                ln + 1
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{name}: {} mismatches\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn resp3_default_mode_and_errors() {
    run(
        "resp3_default_mode",
        2,
        r#"
        0 HELLO 3 # any
        0 CLIENT TRACKING on
        0 CLIENT TRACKINGINFO
        0 CLIENT GETREDIR
        0 GET k
        0 SET k 1
        0 GET k
        1 SET k 2
        0 @pushes
        0 GET k
        0 MGET k k2 k3
        1 MSET k 1 k2 2
        0 @pushes
        1 DEL k3
        0 @pushes
        0 MULTI
        0 SET k 3
        0 GET k
        0 EXEC
        0 GET k
        0 FLUSHDB
        0 GET k
        1 FLUSHALL
        0 @pushes
        0 GET k
        1 SWAPDB 0 1
        0 @pushes
        1 SET k x
        0 @pushes
        0 SELECT 1
        0 GET k
        1 SET k y
        0 @pushes
        0 TYPE t1
        0 EXISTS t2
        0 STRLEN t3
        0 HGET h f
        0 LRANGE l 0 -1
        1 MSET t1 1 t2 2 t3 3
        1 HSET h f v
        1 RPUSH l a
        0 @pushes
        0 CLIENT TRACKING on BCAST PREFIX x
        0 CLIENT TRACKING on PREFIX x
        0 CLIENT TRACKING on OPTIN
        0 CLIENT CACHING yes
        0 CLIENT TRACKING off
        0 CLIENT CACHING yes
        0 CLIENT TRACKINGINFO
        0 CLIENT GETREDIR
        0 CLIENT TRACKING maybe
        0 CLIENT TRACKING on foo
        0 CLIENT TRACKING on REDIRECT x
        0 CLIENT TRACKING on REDIRECT 987654
        0 CLIENT TRACKING on OPTIN OPTOUT
        0 CLIENT TRACKING on BCAST OPTOUT
        0 CLIENT TRACKING on REDIRECT {id:1} REDIRECT {id:1}
        0 CLIENT CACHING
        0 INFO clients # any
        "#,
        &[],
    );
}

#[test]
fn optin_optout_noloop() {
    run(
        "optin_optout_noloop",
        2,
        r#"
        0 HELLO 3 # any
        0 CLIENT TRACKING on NOLOOP
        0 CLIENT TRACKINGINFO
        0 GET n
        0 SET n 1
        1 SET n 2
        0 @pushes
        0 CLIENT TRACKING off
        0 CLIENT TRACKING on OPTIN
        0 GET o1
        0 CLIENT CACHING yes
        0 CLIENT TRACKINGINFO
        0 GET o2
        0 GET o3
        1 MSET o1 1 o2 2 o3 3
        0 @pushes
        0 CLIENT CACHING yes
        0 CLIENT ID
        0 GET o4
        0 CLIENT CACHING yes
        0 PING
        0 GET o5
        0 CLIENT CACHING yes
        0 MULTI
        0 GET o6
        0 GET o7
        0 EXEC
        0 GET o8
        1 MSET o4 1 o5 2 o6 3 o7 1 o8 1
        0 @pushes
        0 CLIENT CACHING no
        0 CLIENT CACHING maybe
        0 CLIENT TRACKING on OPTOUT
        0 CLIENT TRACKING off
        0 CLIENT TRACKING on OPTOUT
        0 GET p1
        0 CLIENT CACHING no
        0 CLIENT TRACKINGINFO
        0 GET p2
        0 GET p3
        1 MSET p1 1 p2 2 p3 3
        0 @pushes
        0 RESET
        0 CLIENT TRACKINGINFO
        0 INFO clients # any
        "#,
        &[],
    );
}

#[test]
fn bcast_prefixes() {
    run(
        "bcast_prefixes",
        2,
        r#"
        0 HELLO 3 # any
        0 CLIENT TRACKING on BCAST PREFIX ab PREFIX a
        0 CLIENT TRACKING on BCAST PREFIX ab PREFIX cd
        0 CLIENT TRACKING on BCAST PREFIX abc
        0 CLIENT TRACKING on BCAST PREFIX d PREFIX d
        0 CLIENT TRACKING on BCAST PREFIX x
        0 CLIENT TRACKING on
        0 CLIENT TRACKINGINFO
        1 SET xb 1
        0 @pushes
        1 SET zz 1
        0 @pushes
        1 MSET xz 1 cd 2 abq 3
        0 @pushes
        1 DEL xz cd
        0 @pushes
        0 SET xself 1
        0 @pushes
        0 CLIENT TRACKING off
        0 CLIENT TRACKING on BCAST PREFIX a NOLOOP
        0 SET a1 1
        1 SET a2 1
        0 @pushes
        0 CLIENT TRACKING off
        0 CLIENT TRACKING on BCAST
        0 CLIENT TRACKINGINFO
        1 SET anything 1
        0 @pushes
        1 FLUSHALL
        0 @pushes
        "#,
        &[],
    );
}

#[test]
fn resp2_redirect_and_broken_redirect() {
    run(
        "resp2_redirect",
        4,
        r#"
        2 SUBSCRIBE __redis__:invalidate
        0 CLIENT TRACKING on REDIRECT {id:2}
        0 CLIENT GETREDIR
        0 CLIENT TRACKINGINFO
        0 GET k
        0 MGET k k2
        1 MSET k 1 k2 2
        2 @pushes
        0 GET k
        1 FLUSHALL
        2 @pushes
        0 @pushes
        0 GET k
        1 SET k 2
        2 @pushes
        0 GET k
        2 @close
        1 SET k 3
        0 @pushes
        0 CLIENT TRACKINGINFO
        3 HELLO 3 # any
        3 CLIENT TRACKING on REDIRECT {id:1}
        3 GET q
        1 SET q 1
        1 @pushes
        3 GET q
        1 @close
        0 SET q 2
        3 @pushes
        3 GET q
        0 SET q 3
        3 @pushes
        3 CLIENT TRACKINGINFO
        3 CLIENT TRACKING on
        3 CLIENT TRACKINGINFO
        "#,
        &[],
    );
}

#[test]
fn expiry_invalidates() {
    run(
        "expiry",
        2,
        r#"
        0 HELLO 3 # any
        0 CLIENT TRACKING on
        1 SET e 1 PX 200
        0 GET e
        @sleep 600
        0 @pushes
        1 DEBUG SET-ACTIVE-EXPIRE 0
        1 SET h 1 PX 100
        0 GET h
        @sleep 300
        1 GET h
        0 @pushes
        0 GET h
        1 SET h 2
        0 @pushes
        1 DEBUG SET-ACTIVE-EXPIRE 1
        "#,
        &[],
    );
}

#[test]
fn table_limit_evicts_with_invalidations() {
    // Which keys are dropped is random in Redis: compare the counts only.
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let petrel = TestServer::start(&[]);
    let mut counts = Vec::new();
    for srv in [&petrel, &redis] {
        let mut a = srv.raw();
        let mut b = srv.raw();
        a.cmd(&["HELLO", "3"]);
        assert_eq!(
            b.cmd(&["CONFIG", "SET", "tracking-table-max-keys", "2"]),
            Value::Simple(b"OK".to_vec())
        );
        a.cmd(&["CLIENT", "TRACKING", "on"]);
        a.cmd(&["MGET", "m1", "m2", "m3", "m4", "m5"]);
        b.cmd(&["PING"]);
        let mut pushes = 0;
        while let Reply::Value(v) = a.read_reply_within(PUSH_WAIT) {
            assert!(matches!(v, Value::Push(_)), "{v}");
            pushes += 1;
        }
        let info = match b.cmd(&["INFO", "stats"]) {
            Value::Bulk(t) => String::from_utf8(t).unwrap(),
            other => panic!("{other}"),
        };
        let keys = info
            .lines()
            .find_map(|l| l.strip_prefix("tracking_total_keys:"))
            .unwrap()
            .to_string();
        counts.push((pushes, keys));
    }
    assert_eq!(
        counts[0], counts[1],
        "petrel vs redis (pushes, tracked keys)"
    );
    assert_eq!(counts[0], (3, "2".to_string()));
}
