//! Differential test of `collections::stream` against redis-server 7.0:
//! random sequences of stream commands run on both; every reply that does
//! not depend on the wall clock is compared, and after each step the node
//! listpacks (from `DUMP`, `rdbcompression no`) must be byte-identical to
//! [`Stream::nodes`], and XINFO STREAM / GROUPS / CONSUMERS must agree.
//!
//! A tiny command layer below turns each generated operation into the
//! Redis command and into calls of the data structure, with replies built
//! the way Redis builds them.

mod common;

use collections::stream::*;
use common::{dump_stream_nodes, Redis, V};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const KEY: &[u8] = b"s";

fn b(s: impl ToString) -> Vec<u8> {
    s.to_string().into_bytes()
}

fn entry_v(e: EntryRef<'_>) -> V {
    let mut fv = Vec::new();
    for (f, v) in e.fields() {
        fv.push(V::Bulk(f.to_vec()));
        fv.push(V::Bulk(v.to_vec()));
    }
    V::Arr(vec![V::bulk(e.id.to_string()), V::Arr(fv)])
}

fn err(e: StreamError) -> V {
    V::Err(e.message().to_string())
}

fn id_v(i: StreamId) -> V {
    V::bulk(i.to_string())
}

struct Pair {
    r: Redis,
    s: Stream,
    limits: NodeLimits,
    now: i64,
    log: Vec<String>,
    rng: StdRng,
    last_ms: u64,
}

impl Pair {
    fn check(&mut self, args: &[Vec<u8>], mine: V) {
        let got = self.r.cmd(args);
        let line = args
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        self.log.push(line.clone());
        if got != mine {
            let tail: Vec<_> = self.log.iter().rev().take(40).rev().collect();
            panic!(
                "mismatch on `{line}`\n redis: {got:?}\n petrel: {mine:?}\nlast commands:\n{}",
                tail.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
    }

    /// An ID near the stream's IDs (existing, deleted, between, or past).
    fn some_id(&mut self) -> StreamId {
        let ms = self.rng.gen_range(0..=self.last_ms + 2);
        StreamId::new(ms, self.rng.gen_range(0..4))
    }

    fn id_arg(&mut self) -> Vec<u8> {
        match self.rng.gen_range(0..10) {
            0 => b("-"),
            1 => b("+"),
            2 => {
                let i = self.some_id();
                format!("({i}").into_bytes()
            }
            3 => b(self.rng.gen_range(0..=self.last_ms + 1)),
            4 => b("(0-0"),
            5 => format!("({}-{}", u64::MAX, u64::MAX).into_bytes(),
            _ => b(self.some_id()),
        }
    }

    fn fields(&mut self) -> Vec<Vec<u8>> {
        let shape = self.rng.gen_range(0..5);
        let names: Vec<&str> = match shape {
            0 | 1 => vec!["user", "kind", "n"],
            2 => vec!["user"],
            3 => vec!["kind", "user", "n"],
            _ => vec!["x", "12", "y", "-7"],
        };
        let mut v = Vec::new();
        for n in names {
            v.push(b(n));
            v.push(match self.rng.gen_range(0..6) {
                0 => b(self.rng.gen_range(0..200)),
                1 => b(self.rng.gen_range(-100_000i64..100_000_000)),
                2 => Vec::new(),
                3 => vec![b'z'; self.rng.gen_range(60..70)],
                4 => b(format!("u{}", self.rng.gen_range(0..1000))),
                _ => b("click"),
            });
        }
        v
    }

    fn trim_args(&mut self, xtrim: bool) -> (Vec<Vec<u8>>, Option<Trim>) {
        if !xtrim && self.rng.gen_bool(0.7) {
            return (vec![], None);
        }
        let mut a = Vec::new();
        let approx = self.rng.gen_bool(0.5);
        let to = if self.rng.gen_bool(0.6) {
            let n = self.rng.gen_range(0..(self.s.len() + 5));
            a.push(b("MAXLEN"));
            if approx {
                a.push(b("~"));
            } else if self.rng.gen_bool(0.5) {
                a.push(b("="));
            }
            a.push(b(n));
            TrimTo::MaxLen(n)
        } else {
            let i = self.some_id();
            a.push(b("MINID"));
            if approx {
                a.push(b("~"));
            }
            a.push(b(i));
            TrimTo::MinId(i)
        };
        let mut limit = Trim::default_limit(approx, self.limits);
        if approx && self.rng.gen_bool(0.5) {
            limit = self.rng.gen_range(0..12);
            a.push(b("LIMIT"));
            a.push(b(limit));
        }
        (a, Some(Trim { to, approx, limit }))
    }

    fn op_xadd(&mut self) {
        let mut args = vec![b("XADD"), KEY.to_vec()];
        let (targs, trim) = self.trim_args(false);
        args.extend(targs);
        let last = self.s.last_id();
        let idarg = match self.rng.gen_range(0..12) {
            0 => format!("{}-*", last.ms).into_bytes(),
            1 => format!("{}-*", last.ms + 1).into_bytes(),
            2 => b(last),
            3 => b("0-0"),
            4 => b(last.ms + self.rng.gen_range(0..3)),
            5 => format!("{}-*", last.ms.saturating_sub(1)).into_bytes(),
            _ => b(StreamId::new(
                last.ms + self.rng.gen_range(0..2),
                self.rng.gen_range(0..3) + if self.rng.gen_bool(0.5) { last.seq } else { 0 },
            )),
        };
        args.push(idarg.clone());
        let f = self.fields();
        args.extend(f.iter().cloned());
        let mine = match parse_add_id(&idarg) {
            Err(e) => err(e),
            Ok(req) => match self.s.add(req, &f, self.now, self.limits) {
                Err(e) => err(e),
                Ok(id) => {
                    self.last_ms = self.last_ms.max(id.ms);
                    if let Some(t) = trim {
                        self.s.trim(t);
                    }
                    id_v(id)
                }
            },
        };
        self.check(&args, mine);
    }

    fn op_xdel(&mut self) {
        let n = self.rng.gen_range(1..4);
        let ids: Vec<StreamId> = (0..n).map(|_| self.some_id()).collect();
        let mut args = vec![b("XDEL"), KEY.to_vec()];
        args.extend(ids.iter().map(b));
        let mine = V::Int(self.s.delete(&ids) as i64);
        self.check(&args, mine);
    }

    fn op_xtrim(&mut self) {
        let (targs, trim) = self.trim_args(true);
        let mut args = vec![b("XTRIM"), KEY.to_vec()];
        args.extend(targs);
        let mine = V::Int(self.s.trim(trim.unwrap()) as i64);
        self.check(&args, mine);
    }

    fn op_range(&mut self) {
        let rev = self.rng.gen_bool(0.4);
        let (a1, a2) = (self.id_arg(), self.id_arg());
        let count = self
            .rng
            .gen_bool(0.5)
            .then(|| self.rng.gen_range(1..6usize));
        let mut args = vec![
            b(if rev { "XREVRANGE" } else { "XRANGE" }),
            KEY.to_vec(),
            a1.clone(),
            a2.clone(),
        ];
        if let Some(c) = count {
            args.push(b("COUNT"));
            args.push(b(c));
        }
        // XREVRANGE key end start.
        let (sa, ea) = if rev { (&a2, &a1) } else { (&a1, &a2) };
        let mine = (|| {
            let start = parse_interval(sa, Bound::Start)?;
            let end = parse_interval(ea, Bound::End)?;
            let it = self.s.range(start, end, rev).map(entry_v);
            Ok::<V, StreamError>(V::Arr(match count {
                Some(c) => it.take(c).collect(),
                None => it.collect(),
            }))
        })()
        .unwrap_or_else(err);
        self.check(&args, mine);
    }

    fn group_name(&mut self) -> Vec<u8> {
        b(["g1", "g2"][self.rng.gen_range(0..2)])
    }

    fn consumer_name(&mut self) -> Vec<u8> {
        b(["alice", "bob", "carol"][self.rng.gen_range(0..3)])
    }

    fn op_group_admin(&mut self) {
        let g = self.group_name();
        match self.rng.gen_range(0..5) {
            0 | 1 => {
                let dollar = self.rng.gen_bool(0.3);
                let id = self.some_id();
                let er = self
                    .rng
                    .gen_bool(0.3)
                    .then(|| self.rng.gen_range(0..(self.s.entries_added() + 3)));
                let setid = self.rng.gen_bool(0.4);
                let mut args = vec![
                    b("XGROUP"),
                    b(if setid { "SETID" } else { "CREATE" }),
                    KEY.to_vec(),
                    g.clone(),
                    if dollar { b("$") } else { b(id) },
                ];
                if let Some(n) = er {
                    args.push(b("ENTRIESREAD"));
                    args.push(b(n));
                }
                let target = if dollar { self.s.last_id() } else { id };
                let mine = if setid {
                    if self.s.set_group_id(&g, target, er) {
                        V::Status("OK".into())
                    } else {
                        V::Err(format!(
                            "NOGROUP No such consumer group '{}' for key name 's'",
                            String::from_utf8_lossy(&g)
                        ))
                    }
                } else {
                    match self.s.create_group(&g, target, er) {
                        Ok(()) => V::Status("OK".into()),
                        Err(e) => err(e),
                    }
                };
                self.check(&args, mine);
            }
            2 => {
                if self.s.group(&g).is_none() {
                    return;
                }
                let c = self.consumer_name();
                let args = vec![
                    b("XGROUP"),
                    b("CREATECONSUMER"),
                    KEY.to_vec(),
                    g.clone(),
                    c.clone(),
                ];
                let mine = V::Int(self.s.create_consumer(&g, &c, self.now).unwrap() as i64);
                self.check(&args, mine);
            }
            3 => {
                if self.s.group(&g).is_none() {
                    return;
                }
                let c = self.consumer_name();
                let args = vec![
                    b("XGROUP"),
                    b("DELCONSUMER"),
                    KEY.to_vec(),
                    g.clone(),
                    c.clone(),
                ];
                let mine = V::Int(self.s.delete_consumer(&g, &c).unwrap() as i64);
                self.check(&args, mine);
            }
            _ => {
                if self.rng.gen_bool(0.7) {
                    return;
                }
                let args = vec![b("XGROUP"), b("DESTROY"), KEY.to_vec(), g.clone()];
                let mine = V::Int(self.s.destroy_group(&g) as i64);
                self.check(&args, mine);
            }
        }
    }

    fn op_readgroup(&mut self) {
        let g = self.group_name();
        if self.s.group(&g).is_none() {
            return;
        }
        let c = self.consumer_name();
        let count = self.rng.gen_range(0..5usize);
        let noack = self.rng.gen_bool(0.2);
        let history = self.rng.gen_bool(0.3);
        let start = self.some_id();
        let mut args = vec![b("XREADGROUP"), b("GROUP"), g.clone(), c.clone()];
        if count > 0 {
            args.push(b("COUNT"));
            args.push(b(count));
        }
        if noack {
            args.push(b("NOACK"));
        }
        args.push(b("STREAMS"));
        args.push(KEY.to_vec());
        args.push(if history { b(start) } else { b(">") });
        let mut out = Vec::new();
        if history {
            self.s
                .read_group_history(&g, &c, start, count, self.now, |i, e| {
                    out.push(match e {
                        Some(e) => entry_v(e),
                        None => V::Arr(vec![id_v(i), V::Nil]),
                    })
                })
                .unwrap();
        } else {
            self.s
                .read_group_new(&g, &c, count, noack, self.now, |e| out.push(entry_v(e)))
                .unwrap();
        }
        let mine = if out.is_empty() && !history {
            V::Nil
        } else {
            V::Arr(vec![V::Arr(vec![V::bulk(KEY), V::Arr(out)])])
        };
        self.check(&args, mine);
    }

    fn op_ack(&mut self) {
        let g = self.group_name();
        if self.s.group(&g).is_none() {
            return;
        }
        let ids: Vec<StreamId> = (0..self.rng.gen_range(1..4))
            .map(|_| self.some_id())
            .collect();
        let mut args = vec![b("XACK"), KEY.to_vec(), g.clone()];
        args.extend(ids.iter().map(b));
        let mine = V::Int(self.s.ack(&g, &ids).unwrap() as i64);
        self.check(&args, mine);
    }

    fn op_claim(&mut self) {
        let g = self.group_name();
        if self.s.group(&g).is_none() {
            return;
        }
        let c = self.consumer_name();
        // Pending IDs are the interesting ones.
        let pending: Vec<StreamId> = self.s.group(&g).unwrap().pending().map(|p| p.0).collect();
        let mut ids = Vec::new();
        for _ in 0..self.rng.gen_range(1..4) {
            if !pending.is_empty() && self.rng.gen_bool(0.6) {
                ids.push(pending[self.rng.gen_range(0..pending.len())]);
            } else {
                ids.push(self.some_id());
            }
        }
        ids.dedup();
        let mut opts = ClaimOptions::default();
        let mut args = vec![b("XCLAIM"), KEY.to_vec(), g.clone(), c.clone(), b("0")];
        args.extend(ids.iter().map(b));
        if self.rng.gen_bool(0.3) {
            opts.force = true;
            args.push(b("FORCE"));
        }
        if self.rng.gen_bool(0.3) {
            opts.justid = true;
            args.push(b("JUSTID"));
        }
        if self.rng.gen_bool(0.2) {
            let n = self.rng.gen_range(0..9);
            opts.retry_count = Some(n);
            args.push(b("RETRYCOUNT"));
            args.push(b(n));
        }
        if self.rng.gen_bool(0.2) {
            let l = self.some_id();
            opts.last_id = Some(l);
            args.push(b("LASTID"));
            args.push(b(l));
        }
        let cl = self.s.claim(&g, &c, 0, &ids, opts, self.now).unwrap();
        let mine = V::Arr(
            cl.claimed
                .iter()
                .map(|&i| {
                    if opts.justid {
                        id_v(i)
                    } else {
                        entry_v(self.s.get(i).unwrap())
                    }
                })
                .collect(),
        );
        self.check(&args, mine);
    }

    fn op_autoclaim(&mut self) {
        let g = self.group_name();
        if self.s.group(&g).is_none() {
            return;
        }
        let c = self.consumer_name();
        let start_arg = self.id_arg();
        let count = self.rng.gen_range(1..5usize);
        let justid = self.rng.gen_bool(0.3);
        let mut args = vec![
            b("XAUTOCLAIM"),
            KEY.to_vec(),
            g.clone(),
            c.clone(),
            b("0"),
            start_arg.clone(),
            b("COUNT"),
            b(count),
        ];
        if justid {
            args.push(b("JUSTID"));
        }
        let mine = match parse_interval(&start_arg, Bound::Start) {
            Err(e) => err(e),
            Ok(start) => {
                let opts = AutoClaimOptions {
                    min_idle: 0,
                    start,
                    count,
                    justid,
                };
                let r = self.s.autoclaim(&g, &c, opts, self.now).unwrap();
                let claimed = r
                    .claimed
                    .iter()
                    .map(|&i| {
                        if justid {
                            id_v(i)
                        } else {
                            entry_v(self.s.get(i).unwrap())
                        }
                    })
                    .collect();
                V::Arr(vec![
                    id_v(r.next),
                    V::Arr(claimed),
                    V::Arr(r.deleted.iter().map(|&i| id_v(i)).collect()),
                ])
            }
        };
        self.check(&args, mine);
    }

    fn op_pending(&mut self) {
        let g = self.group_name();
        if self.s.group(&g).is_none() {
            return;
        }
        if self.rng.gen_bool(0.4) {
            let args = vec![b("XPENDING"), KEY.to_vec(), g.clone()];
            let p = self.s.pending_summary(&g).unwrap();
            let mine = match p.bounds {
                None => V::Arr(vec![V::Int(0), V::Nil, V::Nil, V::Nil]),
                Some((lo, hi)) => V::Arr(vec![
                    V::Int(p.count as i64),
                    id_v(lo),
                    id_v(hi),
                    V::Arr(
                        p.consumers
                            .iter()
                            .map(|(n, c)| V::Arr(vec![V::Bulk(n.clone()), V::bulk(c.to_string())]))
                            .collect(),
                    ),
                ]),
            };
            self.check(&args, mine);
            return;
        }
        let (a1, a2) = (self.id_arg(), self.id_arg());
        let count = self.rng.gen_range(0..6usize);
        let consumer = self.rng.gen_bool(0.4).then(|| self.consumer_name());
        let mut args = vec![b("XPENDING"), KEY.to_vec(), g.clone()];
        let huge_idle = self.rng.gen_bool(0.1);
        if huge_idle {
            args.push(b("IDLE"));
            args.push(b("100000000"));
        }
        args.extend([a1.clone(), a2.clone(), b(count)]);
        if let Some(c) = &consumer {
            args.push(c.clone());
        }
        let mine = (|| {
            let start = parse_interval(&a1, Bound::Start)?;
            let end = parse_interval(&a2, Bound::End)?;
            let q = PendingQuery {
                start,
                end,
                count,
                consumer: consumer.as_deref(),
                min_idle: if huge_idle { 100_000_000 } else { 0 },
            };
            let rows = self.s.pending_range(&g, &q, self.now).unwrap();
            Ok::<V, StreamError>(V::Arr(
                rows.iter()
                    .map(|r| {
                        V::Arr(vec![
                            id_v(r.id),
                            V::Bulk(r.consumer.clone()),
                            V::Int(-1),
                            V::Int(r.delivery_count as i64),
                        ])
                    })
                    .collect(),
            ))
        })()
        .unwrap_or_else(err);
        // Idle times depend on the clocks: blank them on both sides.
        let got = self.r.cmd(&args);
        let blank = |v: V| match v {
            V::Arr(rows) => V::Arr(
                rows.into_iter()
                    .map(|r| match r {
                        V::Arr(mut f) if f.len() == 4 => {
                            f[2] = V::Int(-1);
                            V::Arr(f)
                        }
                        o => o,
                    })
                    .collect(),
            ),
            o => o,
        };
        assert_eq!(blank(got), mine, "XPENDING {args:?}");
        self.log.push(format!("{args:?}"));
    }

    fn op_setid(&mut self) {
        let to = StreamId::new(
            self.s.last_id().ms + self.rng.gen_range(0..2),
            self.rng.gen_range(0..4),
        );
        let mut args = vec![b("XSETID"), KEY.to_vec(), b(to)];
        let ea = self
            .rng
            .gen_bool(0.3)
            .then(|| self.rng.gen_range(0..(self.s.len() + 4)));
        let md = self.rng.gen_bool(0.3).then(|| self.some_id());
        if let Some(n) = ea {
            args.push(b("ENTRIESADDED"));
            args.push(b(n));
        }
        if let Some(m) = md {
            args.push(b("MAXDELETEDID"));
            args.push(b(m));
        }
        let mine = match self.s.set_id(to, ea, md) {
            Ok(()) => V::Status("OK".into()),
            Err(e) => err(e),
        };
        self.check(&args, mine);
        self.last_ms = self.last_ms.max(self.s.last_id().ms);
    }

    /// Node bytes and XINFO against Redis.
    fn compare_state(&mut self) {
        let dump = self.r.cmd(&[b("DUMP"), KEY.to_vec()]);
        let theirs = dump_stream_nodes(dump.bytes());
        let mine: Vec<(Vec<u8>, Vec<u8>)> = self
            .s
            .nodes()
            .map(|(k, lp)| (k.to_be_bytes().to_vec(), lp.to_vec()))
            .collect();
        if theirs != mine {
            let tail: Vec<_> = self.log.iter().rev().take(30).rev().cloned().collect();
            panic!(
                "node bytes differ ({} vs {} nodes)\nlast commands:\n{}",
                theirs.len(),
                mine.len(),
                tail.join("\n")
            );
        }
        let info = self.r.cmd(&[b("XINFO"), b("STREAM"), KEY.to_vec()]);
        let a = info.arr();
        let field = |name: &str| -> V {
            let i = a.iter().position(|v| *v == V::bulk(name)).unwrap();
            a[i + 1].clone()
        };
        let s = &self.s;
        let want = [
            ("length", V::Int(s.len() as i64)),
            ("radix-tree-keys", V::Int(s.node_count() as i64)),
            ("last-generated-id", id_v(s.last_id())),
            ("max-deleted-entry-id", id_v(s.max_deleted_id())),
            ("entries-added", V::Int(s.entries_added() as i64)),
            ("recorded-first-entry-id", id_v(s.first_id())),
            ("groups", V::Int(s.groups().len() as i64)),
            ("first-entry", s.first_entry().map_or(V::Nil, entry_v)),
            ("last-entry", s.last_entry().map_or(V::Nil, entry_v)),
        ];
        for (name, v) in want {
            assert_eq!(field(name), v, "XINFO STREAM {name}\n{:?}", self.log);
        }
        let groups = self.r.cmd(&[b("XINFO"), b("GROUPS"), KEY.to_vec()]);
        let mine = V::Arr(
            s.groups_info()
                .iter()
                .map(|g| {
                    V::Arr(vec![
                        V::bulk("name"),
                        V::Bulk(g.name.clone()),
                        V::bulk("consumers"),
                        V::Int(g.consumers as i64),
                        V::bulk("pending"),
                        V::Int(g.pending as i64),
                        V::bulk("last-delivered-id"),
                        id_v(g.last_delivered_id),
                        V::bulk("entries-read"),
                        g.entries_read.map_or(V::Nil, |n| V::Int(n as i64)),
                        V::bulk("lag"),
                        g.lag.map_or(V::Nil, V::Int),
                    ])
                })
                .collect(),
        );
        if groups != mine {
            let tail: Vec<_> = self.log.iter().rev().take(40).rev().cloned().collect();
            panic!(
                "XINFO GROUPS\n redis: {groups:?}\n petrel: {mine:?}\n{}",
                tail.join("\n")
            );
        }
        for g in s.groups() {
            let got = self
                .r
                .cmd(&[b("XINFO"), b("CONSUMERS"), KEY.to_vec(), g.name().to_vec()]);
            let got: Vec<(Vec<u8>, i64)> = got
                .arr()
                .iter()
                .map(|c| (c.arr()[1].bytes().to_vec(), c.arr()[3].int()))
                .collect();
            let mine: Vec<(Vec<u8>, i64)> = g
                .consumers()
                .map(|c| (c.name().to_vec(), c.pending() as i64))
                .collect();
            assert_eq!(got, mine, "XINFO CONSUMERS\n{:?}", self.log);
        }
    }
}

fn run(seed: u64, steps: usize, limits: NodeLimits) {
    let Some(mut r) = Redis::start() else {
        return;
    };
    for (k, v) in [
        ("stream-node-max-bytes", limits.max_bytes),
        ("stream-node-max-entries", limits.max_entries),
    ] {
        assert_eq!(
            r.cmd(&[b("CONFIG"), b("SET"), b(k), b(v)]),
            V::Status("OK".into())
        );
    }
    let mut p = Pair {
        r,
        s: Stream::new(),
        limits,
        now: 1_000_000,
        log: Vec::new(),
        rng: StdRng::seed_from_u64(seed),
        last_ms: 1,
    };
    // The key exists from the start (XADD never deletes it afterwards).
    let args = vec![b("XADD"), KEY.to_vec(), b("1-1"), b("user"), b("u1")];
    let id =
        p.s.add(AddId::Explicit(StreamId::new(1, 1)), &args[3..], 0, limits);
    p.check(&args, id_v(id.unwrap()));
    for step in 0..steps {
        p.now += p.rng.gen_range(0..5);
        match p.rng.gen_range(0..100) {
            0..=29 => p.op_xadd(),
            30..=37 => p.op_xdel(),
            38..=42 => p.op_xtrim(),
            43..=55 => p.op_range(),
            56..=62 => p.op_group_admin(),
            63..=74 => p.op_readgroup(),
            75..=80 => p.op_ack(),
            81..=85 => p.op_claim(),
            86..=89 => p.op_autoclaim(),
            90..=96 => p.op_pending(),
            _ => p.op_setid(),
        }
        if step % 7 == 0 {
            p.compare_state();
        }
    }
    p.compare_state();
}

/// Extra seeds per test from `PETREL_STREAM_SEEDS` (default 0) for long
/// runs.
fn extra_seeds() -> u64 {
    std::env::var("PETREL_STREAM_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn random_ops_default_limits() {
    for seed in (0..4).chain(1000..1000 + extra_seeds()) {
        run(seed, 1500, NodeLimits::default());
    }
}

#[test]
fn random_ops_small_nodes() {
    for seed in (10..16).chain(2000..2000 + extra_seeds()) {
        run(
            seed,
            1500,
            NodeLimits {
                max_bytes: 120,
                max_entries: 4,
            },
        );
    }
}

#[test]
fn random_ops_byte_limited_nodes() {
    for seed in (20..23).chain(3000..3000 + extra_seeds()) {
        run(
            seed,
            1200,
            NodeLimits {
                max_bytes: 300,
                max_entries: 0,
            },
        );
    }
}

/// Error texts of ID edge cases, straight from redis-server.
#[test]
fn id_edge_errors_match_redis() {
    let Some(mut r) = Redis::start() else {
        return;
    };
    let mut s = Stream::new();
    let l = NodeLimits::default();
    let max = format!("{}-{}", u64::MAX, u64::MAX);
    let cases: Vec<(Vec<u8>, Result<AddId, StreamError>)> = [
        "0-0",
        "0-*",
        "0-*",
        "0-1",
        "5-18446744073709551615",
        "5-*",
        "4-*",
        "6",
        "1x",
        "18446744073709551616-0",
        "-",
        "+",
        &max,
        "*",
        "18446744073709551615-*",
    ]
    .iter()
    .map(|a| (a.as_bytes().to_vec(), parse_add_id(a.as_bytes())))
    .collect();
    for (arg, parsed) in cases {
        let args = vec![b("XADD"), KEY.to_vec(), arg.clone(), b("f"), b("v")];
        let mine = match parsed {
            Err(e) => err(e),
            Ok(req) => match s.add(req, &[b("f"), b("v")], 1, l) {
                Ok(i) => id_v(i),
                Err(e) => err(e),
            },
        };
        assert_eq!(r.cmd(&args), mine, "XADD {}", String::from_utf8_lossy(&arg));
    }
    for (a1, a2) in [
        ("(0-1", "+"),
        ("(-", "+"),
        ("-", "(+"),
        (max.as_str(), "+"),
        ("-", "(0-0"),
        ("(", "+"),
        ("((5", "+"),
        (" 5", "+"),
        ("+5", "+"),
        ("-05", "+"),
        ("1-+5", "+"),
        ("007", "(6"),
        ("1- -5", "+"),
        ("-\u{0}x", "+"),
    ] {
        let a1 = if a1 == max.as_str() {
            format!("({max}")
        } else {
            a1.to_string()
        };
        let args = vec![b("XRANGE"), KEY.to_vec(), b(&a1), b(a2)];
        let mine = (|| {
            let st = parse_interval(a1.as_bytes(), Bound::Start)?;
            let en = parse_interval(a2.as_bytes(), Bound::End)?;
            Ok::<V, StreamError>(V::Arr(s.range(st, en, false).map(entry_v).collect()))
        })()
        .unwrap_or_else(err);
        assert_eq!(r.cmd(&args), mine, "XRANGE {a1} {a2}");
    }
}

/// Memory of 1M entries with 3 small fields (the figure):
/// `cargo test --release -p collections --test stream_redis -- --ignored
/// --nocapture memory_vs_redis`.
#[test]
#[ignore]
fn memory_vs_redis() {
    let Some(mut r) = Redis::start() else {
        return;
    };
    let n = 1_000_000u64;
    let mut s = Stream::new();
    let used = |r: &mut Redis| -> i64 {
        let info = r.cmd(&[b("INFO"), b("memory")]).text();
        info.lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let before = used(&mut r);
    // Time of the data structure alone (no assertion on it).
    let t0 = std::time::Instant::now();
    let mut alone = Stream::new();
    for i in 0..n {
        let id = StreamId::new(1_700_000_000_000 + i / 700, i % 700);
        let v = i.to_string();
        let u = format!("u{}", i % 1000);
        let f: [&[u8]; 6] = [b"user", u.as_bytes(), b"kind", b"click", b"n", v.as_bytes()];
        alone
            .add(AddId::Explicit(id), &f, 0, NodeLimits::default())
            .unwrap();
    }
    let add_ns = t0.elapsed().as_nanos() as f64 / n as f64;
    let t0 = std::time::Instant::now();
    let read = alone
        .range(StreamId::MIN, StreamId::MAX, false)
        .map(|e| e.fields().count())
        .sum::<usize>();
    let range_ns = t0.elapsed().as_nanos() as f64 / n as f64;
    assert_eq!(read, 3 * n as usize);
    println!("Stream::add {add_ns:.0} ns/entry, full range read {range_ns:.0} ns/entry");
    drop(alone);
    let mut batch = Vec::new();
    for i in 0..n {
        let id = StreamId::new(1_700_000_000_000 + i / 700, i % 700);
        let f = [
            b("user"),
            b(format!("u{}", i % 1000)),
            b("kind"),
            b("click"),
            b("n"),
            b(i),
        ];
        s.add(AddId::Explicit(id), &f, 0, NodeLimits::default())
            .unwrap();
        let mut cmd = vec![b("XADD"), KEY.to_vec(), b(id)];
        cmd.extend(f.iter().cloned());
        batch.push(cmd);
        if batch.len() == 10_000 {
            r.pipeline(&batch);
            batch.clear();
        }
    }
    let after = used(&mut r);
    let mu = r
        .cmd(&[b("MEMORY"), b("USAGE"), KEY.to_vec(), b("SAMPLES"), b("0")])
        .int();
    let dump = r.cmd(&[b("DUMP"), KEY.to_vec()]);
    let theirs = dump_stream_nodes(dump.bytes());
    let same = theirs
        .iter()
        .zip(s.nodes())
        .all(|(a, m)| a.1 == m.1 && a.0 == m.0.to_be_bytes());
    println!(
        "1M entries x 3 fields: petrel heap_bytes {} ({:.2} B/entry); redis MEMORY USAGE SAMPLES 0 {} ({:.2} B/entry), used_memory delta {} ({:.2} B/entry); {} nodes, byte-identical: {}",
        s.heap_bytes(),
        s.heap_bytes() as f64 / n as f64,
        mu,
        mu as f64 / n as f64,
        after - before,
        (after - before) as f64 / n as f64,
        s.node_count(),
        same && theirs.len() == s.node_count()
    );
    assert!(same && theirs.len() == s.node_count());
    assert!((s.heap_bytes() as i64) <= mu);
}

/// Exact MINID trimming can leave a node with no live entry when its last
/// entry is a tombstone at or above the MINID; Redis keeps that node and
/// appends to it.
#[test]
fn minid_trim_leaves_empty_node_as_redis() {
    let Some(r) = Redis::start() else {
        return;
    };
    let mut p = Pair {
        r,
        s: Stream::new(),
        limits: NodeLimits::default(),
        now: 0,
        log: Vec::new(),
        rng: StdRng::seed_from_u64(0),
        last_ms: 1,
    };
    let steps: Vec<Vec<&str>> = vec![
        vec!["XADD", "s", "1-0", "a", "1"],
        vec!["XADD", "s", "2-0", "a", "2"],
        vec!["XDEL", "s", "2-0"],
        vec!["XTRIM", "s", "MINID", "2-0"],
        vec!["XADD", "s", "3-0", "a", "3"],
        vec!["XTRIM", "s", "MAXLEN", "0"],
        vec!["XADD", "s", "4-0", "a", "4"],
    ];
    for st in steps {
        let args: Vec<Vec<u8>> = st.iter().map(|s| s.as_bytes().to_vec()).collect();
        let mine = match st[0] {
            "XADD" => {
                let id = parse_strict_id(st[2].as_bytes(), 0).unwrap();
                id_v(
                    p.s.add(AddId::Explicit(id), &args[3..], 0, p.limits)
                        .unwrap(),
                )
            }
            "XDEL" => V::Int(p.s.delete(&[parse_strict_id(st[2].as_bytes(), 0).unwrap()]) as i64),
            _ => {
                let to = if st[2] == "MINID" {
                    TrimTo::MinId(parse_strict_id(st[3].as_bytes(), 0).unwrap())
                } else {
                    TrimTo::MaxLen(st[3].parse().unwrap())
                };
                V::Int(p.s.trim(Trim {
                    to,
                    approx: false,
                    limit: 0,
                }) as i64)
            }
        };
        p.check(&args, mine);
        p.compare_state();
    }
}
