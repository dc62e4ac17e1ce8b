//! Differential test of command introspection (issue 3): for every command
//! and subcommand petrel implements that Redis 7.0 also has, `COMMAND INFO`
//! must be identical to redis-server's and `COMMAND DOCS` identical except
//! the `summary` and `complexity` prose (which must be present and
//! non-empty), over RESP2 and RESP3. `COMMAND COUNT` and `COMMAND LIST
//! FILTERBY` must behave as Redis's would for petrel's set of commands, and
//! `COMMAND GETKEYSANDFLAGS` must agree with the key specs.
//!
//! Intentional differences, each with its reason:
//! * [`PETREL_ONLY`]: subcommands Redis 7.0 does not have.
//! * [`WITHSCORE`]: ZRANK/ZREVRANK accept Redis 7.2's `WITHSCORE`, so their
//!   arity is -3 (Redis 7.0: 3) and their docs carry the 7.2 argument and
//!   history entry on top of Redis 7.0's.
//! * Container commands (CLIENT, CONFIG, ...) list only the subcommands
//!   petrel implements; each listed one is compared on its own.

mod common;
use common::*;

/// Implemented by petrel, absent from Redis 7.0: CLIENT NO-TOUCH and CLIENT
/// SETINFO come from Redis 7.2 (clients send SETINFO on connect); MEMORY
/// TOPKEYS is petrel's own.
const PETREL_ONLY: &[&str] = &["client|no-touch", "client|setinfo", "memory|topkeys"];

/// Commands with Redis 7.2's `WITHSCORE` argument (see module docs).
const WITHSCORE: &[&str] = &["zrank", "zrevrank"];

fn text(v: &Value) -> String {
    match v {
        Value::Bulk(b) | Value::Simple(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("not a string: {other:?}"),
    }
}

fn items(v: &Value) -> &[Value] {
    match v {
        Value::Array(a) | Value::Set(a) => a,
        other => panic!("not an array: {other:?}"),
    }
}

/// A RESP3 map or a RESP2 flat pair list as pairs.
fn pairs(v: &Value) -> Vec<(Value, Value)> {
    match v {
        Value::Map(kv) => kv.clone(),
        Value::Array(a) => a.chunks(2).map(|c| (c[0].clone(), c[1].clone())).collect(),
        other => panic!("not a map: {other:?}"),
    }
}

/// Rebuilds a map of the same kind as `like` from pairs.
fn same_kind_map(like: &Value, kv: Vec<(Value, Value)>) -> Value {
    match like {
        Value::Map(_) => Value::Map(kv),
        _ => Value::Array(kv.into_iter().flat_map(|(k, v)| [k, v]).collect()),
    }
}

/// The first place where `a` and `b` differ, as "path: a vs b".
fn first_diff(path: &str, a: &Value, b: &Value) -> Option<String> {
    use Value::*;
    let seq = |x: &[Value], y: &[Value]| {
        for (i, (u, v)) in x.iter().zip(y).enumerate() {
            if let Some(d) = first_diff(&format!("{path}[{i}]"), u, v) {
                return Some(d);
            }
        }
        (x.len() != y.len()).then(|| format!("{path}: lengths {} vs {}", x.len(), y.len()))
    };
    match (a, b) {
        (Array(x), Array(y)) | (Set(x), Set(y)) => seq(x, y),
        (Map(x), Map(y)) => {
            let flat = |m: &[(Value, Value)]| -> Vec<Value> {
                m.iter().flat_map(|(k, v)| [k.clone(), v.clone()]).collect()
            };
            seq(&flat(x), &flat(y))
        }
        _ if a == b => None,
        _ => Some(format!("{path}: petrel {a} vs redis {b}")),
    }
}

fn is_null(v: &Value) -> bool {
    matches!(v, Value::Null | Value::NullBulk | Value::NullArray)
}

struct Pair {
    petrel: RawConn,
    redis: RawConn,
}

impl Pair {
    fn both(&mut self, args: &[&str]) -> (Value, Value) {
        (self.petrel.cmd(args), self.redis.cmd(args))
    }
}

/// Every full name petrel lists: top-level commands and their subcommands
/// (plain `COMMAND LIST` names both, as Redis 7.0's does).
fn petrel_names(c: &mut RawConn) -> Vec<String> {
    let mut names = sorted_names(&c.cmd(&["COMMAND", "LIST"]));
    let mut expected = Vec::new();
    for top in names.iter().filter(|n| !n.contains('|')) {
        expected.push(top.clone());
        let info = c.cmd(&["COMMAND", "INFO", top]);
        let info = &items(&info)[0];
        for sub in items(&items(info)[9]) {
            expected.push(text(&items(sub)[0]));
        }
    }
    expected.sort();
    assert_eq!(
        names, expected,
        "COMMAND LIST vs the subcommands of COMMAND INFO"
    );
    names.dedup();
    names
}

/// A `COMMAND INFO` entry with its subcommand list (element 9) cut down to
/// the subcommands both servers have, sorted by name (Redis lists them in
/// dictionary order).
fn info_common_subs(info: &Value, keep: &dyn Fn(&str) -> bool) -> Value {
    let mut fields = items(info).to_vec();
    let mut subs: Vec<Value> = items(&fields[9])
        .iter()
        .filter(|s| keep(&text(&items(s)[0])))
        .cloned()
        .collect();
    subs.sort_by_key(|s| text(&items(s)[0]));
    fields[9] = match &fields[9] {
        Value::Set(_) => Value::Set(subs),
        _ => Value::Array(subs),
    };
    Value::Array(fields)
}

/// A `COMMAND DOCS` doc map without summary and complexity (checked
/// non-empty on petrel's side), subcommands cut down to common ones.
fn docs_without_prose(
    name: &str,
    doc: &Value,
    petrel: bool,
    keep: &dyn Fn(&str) -> bool,
    problems: &mut Vec<String>,
) -> Value {
    let mut out = Vec::new();
    for (k, v) in pairs(doc) {
        match text(&k).as_str() {
            "summary" | "complexity" => {
                if petrel && text(&v).trim().is_empty() {
                    problems.push(format!("{name}: empty {}", text(&k)));
                }
                // Keep the field's presence, not its text.
                out.push((k, Value::Bulk(b"<prose>".to_vec())));
            }
            "subcommands" => {
                let mut subs: Vec<(Value, Value)> = pairs(&v)
                    .into_iter()
                    .filter(|(n, _)| keep(&text(n)))
                    .map(|(n, d)| {
                        let d = docs_without_prose(&text(&n), &d, petrel, keep, problems);
                        (n, d)
                    })
                    .collect();
                subs.sort_by_key(|(n, _)| text(n));
                out.push((k, same_kind_map(&v, subs)));
            }
            _ => out.push((k, v)),
        }
    }
    same_kind_map(doc, out)
}

/// Redis 7.0's docs of ZRANK/ZREVRANK as petrel documents them: plus the
/// optional `WITHSCORE` argument and its history entry from Redis 7.2.
fn with_withscore(doc: &Value) -> Value {
    let resp3 = matches!(doc, Value::Map(_));
    let map = |kv: Vec<(&str, Value)>| {
        let kv = kv
            .into_iter()
            .map(|(k, v)| (Value::Bulk(k.as_bytes().to_vec()), v))
            .collect();
        same_kind_map(doc, kv)
    };
    let bulk = |s: &str| Value::Bulk(s.as_bytes().to_vec());
    let flags = vec![Value::Simple(b"optional".to_vec())];
    let withscore = map(vec![
        ("name", bulk("withscore")),
        ("type", bulk("pure-token")),
        ("token", bulk("WITHSCORE")),
        ("since", bulk("7.2.0")),
        (
            "flags",
            if resp3 {
                Value::Set(flags)
            } else {
                Value::Array(flags)
            },
        ),
    ]);
    let history = vec![Value::Array(vec![
        bulk("7.2.0"),
        bulk("Added the optional `WITHSCORE` argument."),
    ])];
    let mut out = Vec::new();
    for (k, v) in pairs(doc) {
        if text(&k) == "arguments" {
            let history = if resp3 {
                Value::Set(history.clone())
            } else {
                Value::Array(history.clone())
            };
            out.push((bulk("history"), history));
            let mut args = items(&v).to_vec();
            args.push(withscore.clone());
            out.push((k, Value::Array(args)));
        } else {
            out.push((k, v));
        }
    }
    same_kind_map(doc, out)
}

fn connect(petrel: &TestServer, redis: &TestServer, resp3: bool) -> Pair {
    let mut pair = Pair {
        petrel: petrel.raw(),
        redis: redis.raw(),
    };
    if resp3 {
        pair.both(&["HELLO", "3"]);
    }
    pair
}

fn check_info_and_docs(pair: &mut Pair, names: &[String], problems: &mut Vec<String>) -> usize {
    let mut matched = 0;
    // Subcommands both servers have.
    let common = |n: &str| names.iter().any(|m| m == n) && !PETREL_ONLY.contains(&n);
    for name in names {
        let (p, r) = pair.both(&["COMMAND", "INFO", name]);
        let (p, r) = (&items(&p)[0], &items(&r)[0]);
        if is_null(r) {
            if !PETREL_ONLY.contains(&name.as_str()) {
                problems.push(format!(
                    "{name}: not in redis 7.0 and not listed in PETREL_ONLY"
                ));
            }
            continue;
        }
        let mut p = info_common_subs(p, &common);
        let r = info_common_subs(r, &common);
        if WITHSCORE.contains(&name.as_str()) {
            let mut fields = items(&p).to_vec();
            assert_eq!(fields[1], Value::Int(-3), "{name} arity");
            fields[1] = Value::Int(3);
            p = Value::Array(fields);
        }
        let info_ok = p == r;
        if !info_ok {
            problems.push(format!(
                "COMMAND INFO {name}: {}",
                first_diff("", &p, &r).unwrap()
            ));
        }
        let (pd, rd) = pair.both(&["COMMAND", "DOCS", name]);
        let (pd, rd) = (pairs(&pd), pairs(&rd));
        assert_eq!(pd.len(), 1, "COMMAND DOCS {name} on petrel: {pd:?}");
        assert_eq!(rd.len(), 1, "COMMAND DOCS {name} on redis: {rd:?}");
        let pdoc = docs_without_prose(name, &pd[0].1, true, &common, problems);
        let mut rdoc = docs_without_prose(name, &rd[0].1, false, &common, problems);
        if WITHSCORE.contains(&name.as_str()) {
            rdoc = with_withscore(&rdoc);
        }
        let docs_ok = pdoc == rdoc && pd[0].0 == rd[0].0;
        if !docs_ok {
            let d = first_diff("", &pdoc, &rdoc).unwrap_or_else(|| "name".into());
            problems.push(format!("COMMAND DOCS {name}: {d}"));
        }
        matched += (info_ok && docs_ok) as usize;
    }
    matched
}

fn sorted_names(v: &Value) -> Vec<String> {
    let mut n: Vec<String> = items(v).iter().map(text).collect();
    n.sort();
    n
}

fn check_count_and_list(pair: &mut Pair, names: &[String], problems: &mut Vec<String>) {
    let ours = |v: &Value| -> Vec<String> {
        sorted_names(v)
            .into_iter()
            .filter(|n| names.contains(n) && !PETREL_ONLY.contains(&n.as_str()))
            .collect()
    };
    // COUNT is the number of top-level commands; LIST names subcommands too.
    let (pc, rc) = pair.both(&["COMMAND", "COUNT"]);
    let (pl, rl) = pair.both(&["COMMAND", "LIST"]);
    let tops = |l: &Value| items(l).iter().filter(|n| !text(n).contains('|')).count();
    assert_eq!(pc, Value::Int(tops(&pl) as i64), "petrel COUNT vs LIST");
    assert_eq!(rc, Value::Int(tops(&rl) as i64), "redis COUNT vs LIST");
    let with_subs = |v: &Value| sorted_names(v).iter().any(|n| n.contains('|'));
    assert!(
        with_subs(&pl) && with_subs(&rl),
        "plain LIST names subcommands"
    );
    let mut plain = sorted_names(&pl);
    plain.retain(|n| !PETREL_ONLY.contains(&n.as_str()));
    if plain != ours(&rl) {
        problems.push(format!(
            "COMMAND LIST: petrel {plain:?}\n  redis (ours) {:?}",
            ours(&rl)
        ));
    }
    let mut filters: Vec<Vec<String>> = Vec::new();
    for cat in items(&pair.redis.cmd(&["ACL", "CAT"])) {
        filters.push(vec!["ACLCAT".into(), text(cat)]);
    }
    for pat in [
        "*",
        "z*",
        "client|*",
        "*|*",
        "*range*",
        "get?",
        "[sz]add",
        "CONFIG|G*",
        "nosuch*",
    ] {
        filters.push(vec!["PATTERN".into(), pat.into()]);
    }
    filters.push(vec!["MODULE".into(), "nosuch".into()]);
    filters.push(vec!["ACLCAT".into(), "nosuchcat".into()]);
    for f in &filters {
        let args = ["COMMAND", "LIST", "FILTERBY", &f[0], &f[1]];
        let (p, r) = pair.both(&args);
        if matches!(r, Value::Error(_)) || matches!(p, Value::Error(_)) {
            if p != r {
                problems.push(format!("{args:?}: petrel {p} redis {r}"));
            }
            continue;
        }
        let (mut p_all, r_ours) = (sorted_names(&p), ours(&r));
        p_all.retain(|n| !PETREL_ONLY.contains(&n.as_str()));
        if p_all != r_ours {
            problems.push(format!(
                "{args:?}:\n  petrel {p_all:?}\n  redis  {r_ours:?}"
            ));
        }
    }
    for bad in [
        &["COMMAND", "LIST", "FILTERBY", "NOSUCH", "x"][..],
        &["COMMAND", "LIST", "FILTERBY", "PATTERN"][..],
        &["COMMAND", "LIST", "FOO"][..],
    ] {
        let (p, r) = pair.both(bad);
        if p != r {
            problems.push(format!("{bad:?}: petrel {p} redis {r}"));
        }
    }
}

#[test]
fn command_info_and_docs_match_redis() {
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let petrel = TestServer::start(&[]);
    let mut problems = Vec::new();
    for resp3 in [false, true] {
        let mut pair = connect(&petrel, &redis, resp3);
        let names = petrel_names(&mut pair.petrel);
        let matched = check_info_and_docs(&mut pair, &names, &mut problems);
        eprintln!(
            "RESP{}: {matched} of the {} commands Redis 7.0 also has match COMMAND INFO \
             and DOCS (petrel-only: {})",
            if resp3 { 3 } else { 2 },
            names.len() - PETREL_ONLY.len(),
            PETREL_ONLY.len()
        );
        check_count_and_list(&mut pair, &names, &mut problems);
    }
    assert!(
        problems.is_empty(),
        "{} differences:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// GETKEYS / GETKEYSANDFLAGS follow the key specs as Redis's do.
#[test]
fn command_getkeys_match_redis() {
    diff_text(
        "command_getkeys",
        r#"
COMMAND GETKEYSANDFLAGS set k v
COMMAND GETKEYSANDFLAGS set k v get
COMMAND GETKEYSANDFLAGS get k
COMMAND GETKEYSANDFLAGS getdel k
COMMAND GETKEYSANDFLAGS getex k ex 10
COMMAND GETKEYSANDFLAGS del a b c
COMMAND GETKEYSANDFLAGS unlink a b c
COMMAND GETKEYSANDFLAGS exists a b
COMMAND GETKEYSANDFLAGS mset a 1 b 2
COMMAND GETKEYSANDFLAGS msetnx a 1 b 2
COMMAND GETKEYSANDFLAGS mget a b
COMMAND GETKEYSANDFLAGS rename a b
COMMAND GETKEYSANDFLAGS renamenx a b
COMMAND GETKEYSANDFLAGS copy a b
COMMAND GETKEYSANDFLAGS move a 1
COMMAND GETKEYSANDFLAGS expire a 10
COMMAND GETKEYSANDFLAGS ttl a
COMMAND GETKEYSANDFLAGS touch a b
COMMAND GETKEYSANDFLAGS append a b
COMMAND GETKEYSANDFLAGS incr a
COMMAND GETKEYSANDFLAGS lmove a b left right
COMMAND GETKEYSANDFLAGS blmove a b left right 0
COMMAND GETKEYSANDFLAGS rpoplpush a b
COMMAND GETKEYSANDFLAGS blpop a b 0
COMMAND GETKEYSANDFLAGS lmpop 2 a b left
COMMAND GETKEYSANDFLAGS blmpop 0 2 a b left
COMMAND GETKEYSANDFLAGS smove a b m
COMMAND GETKEYSANDFLAGS sunionstore d a b
COMMAND GETKEYSANDFLAGS sintercard 2 a b
COMMAND GETKEYSANDFLAGS zunionstore d 2 a b
COMMAND GETKEYSANDFLAGS zinter 2 a b
COMMAND GETKEYSANDFLAGS zrangestore d s 0 -1
COMMAND GETKEYSANDFLAGS zmpop 2 a b min
COMMAND GETKEYSANDFLAGS bzmpop 0 2 a b min
COMMAND GETKEYSANDFLAGS bzpopmin a b 0
COMMAND GETKEYSANDFLAGS sort k
COMMAND GETKEYSANDFLAGS sort k store d
COMMAND GETKEYSANDFLAGS sort_ro k
COMMAND GETKEYSANDFLAGS bitop and d a b
COMMAND GETKEYSANDFLAGS bitfield k get u8 0
COMMAND GETKEYSANDFLAGS pfmerge d a b
COMMAND GETKEYSANDFLAGS pfcount a b
COMMAND GETKEYSANDFLAGS hset h f v
COMMAND GETKEYSANDFLAGS object encoding k
COMMAND GETKEYSANDFLAGS memory usage k
COMMAND GETKEYSANDFLAGS watch a b
COMMAND GETKEYS zunionstore d 2 a b weights 1 2
COMMAND GETKEYS sort k by w* get o* store d
COMMAND GETKEYS lmpop 3 a b
"#,
    );
}
