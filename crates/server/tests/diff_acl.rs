//! ACL against redis-server 7.0: every ACL subcommand and rule, the
//! descriptions (ACL LIST / GETUSER), the errors, `-NOPERM` texts, ACL LOG
//! contents, AUTH/HELLO with users, and `acl-pubsub-default`.
//!
//! Redis 7.0 lists the single-command rules of a description (`+get
//! +set`) in the order of its command hash table, which is seeded at
//! random per process: those runs of rules are compared as sets. ACL LOG
//! entries are compared without `age-seconds` and `client-info`.
//!
//! Every rule here names commands both servers have; a category rule's
//! description can differ where petrel lacks commands of that category
//! (streams, geo...), so the descriptions use categories petrel has whole.

mod common;
use common::script::split_args;
use common::*;
use resp::Value;

/// The words of a description with every run of single-command rules
/// (`+get`, `-client|list`, `+select|0`) sorted.
fn sort_rules(s: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(s)
        .replace('(', "( ")
        .replace(')', " )");
    let words: Vec<&str> = text.split(' ').collect();
    let single = |w: &str| {
        (w.starts_with('+') || w.starts_with('-')) && !w[1..].starts_with('@') && w.len() > 1
    };
    let mut out: Vec<&str> = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    for w in words {
        if single(w) {
            run.push(w);
        } else {
            run.sort_unstable();
            out.append(&mut run);
            out.push(w);
        }
    }
    run.sort_unstable();
    out.append(&mut run);
    out.join(" ").into_bytes()
}

/// A reply with descriptions normalized (see [`sort_rules`]) and ACL LOG's
/// `age-seconds` / `client-info` values blanked.
fn acl_norm(v: &Value) -> Value {
    fn blank_after(items: &[Value]) -> Vec<Value> {
        let mut out = Vec::new();
        let mut blank = false;
        for it in items {
            if blank {
                out.push(Value::Null);
                blank = false;
                continue;
            }
            if let Value::Bulk(b) = it {
                blank = b == b"age-seconds" || b == b"client-info";
            }
            out.push(acl_norm(it));
        }
        out
    }
    match v {
        Value::Bulk(b) => Value::Bulk(sort_rules(b)),
        Value::Array(items) => Value::Array(blank_after(items)),
        Value::Set(items) => Value::Set(items.iter().map(acl_norm).collect()),
        Value::Map(pairs) => Value::Map(
            pairs
                .iter()
                .map(|(k, val)| {
                    let blank =
                        matches!(k, Value::Bulk(b) if b == b"age-seconds" || b == b"client-info");
                    (acl_norm(k), if blank { Value::Null } else { acl_norm(val) })
                })
                .collect(),
        ),
        Value::Double(_) => Value::Null,
        other => other.clone(),
    }
}

fn acl_compare(p: &Reply, r: &Reply) -> Result<(), String> {
    match (p, r) {
        (Reply::Value(a), Reply::Value(b)) if acl_norm(a) == acl_norm(b) => Ok(()),
        _ => Err("replies differ (descriptions compared with single-command rules as sets, ACL LOG without times and client info)".into()),
    }
}

/// A text script whose `ACL LIST`, `ACL GETUSER` and `ACL LOG` lines are
/// compared with [`acl_compare`], `ACL CAT <category>` lines unordered.
fn acl_script(name: &str, text: &str) -> Script {
    let mut s = Script::new(name);
    for line in text.lines() {
        let t = line.trim();
        let upper = t.to_ascii_uppercase();
        if upper.starts_with("ACL LIST")
            || upper.starts_with("ACL GETUSER")
            || upper.starts_with("ACL LOG")
        {
            let args = split_args(t).expect("quoting");
            s = s.check(&args, acl_compare);
        } else if upper.starts_with("ACL CAT ") {
            let args = split_args(t).expect("quoting");
            s = s.cmd_mode(&args, Mode::Unordered);
        } else {
            s = s.text(line);
        }
    }
    s
}

#[test]
fn acl_rules_and_descriptions() {
    diff(&acl_script(
        "acl_rules_and_descriptions",
        r##"
ACL LIST
ACL SETUSER alice
ACL LIST
ACL GETUSER alice
ACL SETUSER alice on >p1 >p2 >p1 ~k* %R~r* %W~w* %RW~x* &ch* +get +set
ACL LIST
ACL GETUSER alice
ACL SETUSER alice <p2 #0b14d501a594442a01c6859541bcb3e8164d183d32937b851835442f69d5c94e !0b14d501a594442a01c6859541bcb3e8164d183d32937b851835442f69d5c94e
ACL GETUSER alice
ACL SETUSER alice nopass
ACL GETUSER alice
ACL SETUSER alice >again resetpass
ACL GETUSER alice
ACL SETUSER alice off skip-sanitize-payload
ACL GETUSER alice
ACL SETUSER alice sanitize-payload on
ACL GETUSER alice
ACL SETUSER bob on nopass -@all +@string -incr +client|list +select|0 +SELECT|1 +select|0
ACL LIST
ACL SETUSER bob +@all -@dangerous +config|get -client|kill
ACL LIST
ACL SETUSER bob allcommands -get -set
ACL LIST
ACL SETUSER bob nocommands +@hash +@list -lpush
ACL LIST
ACL SETUSER bob +config -config|set
ACL LIST
ACL SETUSER bob -config +config|get +config|rewrite
ACL LIST
ACL SETUSER bob +@connection +@transaction -@connection
ACL LIST
ACL SETUSER carol on allkeys allchannels +@all
ACL LIST
ACL SETUSER carol resetkeys %R~a* %W~a* %r~b %wr~c ~d ~d %R~d
ACL GETUSER carol
ACL SETUSER carol resetchannels &x &y* &x
ACL GETUSER carol
ACL SETUSER carol %R~ ~ %W
ACL GETUSER carol
ACL SETUSER dave on (+get ~a*) "(+set %W~b* &c)" (nocommands) ( +hget  ~h* )
ACL LIST
ACL GETUSER dave
ACL SETUSER dave clearselectors
ACL LIST
ACL SETUSER dave (+get ~a*) reset
ACL LIST
ACL GETUSER dave
ACL SETUSER default resetpass >secret
ACL LIST
ACL SETUSER default nopass
ACL SETUSER empty "" on ""
ACL LIST
ACL USERS
ACL DELUSER alice bob nosuch
ACL USERS
ACL DELUSER nosuch
ACL LIST
"##,
    ));
}

#[test]
fn acl_setuser_errors() {
    diff(&acl_script(
        "acl_setuser_errors",
        r##"
ACL SETUSER "a b"
ACL SETUSER "a\x00b" on
ACL SETUSER x bogus
ACL SETUSER x +nocmd
ACL SETUSER x -nocmd
ACL SETUSER x +@nocat
ACL SETUSER x -@nocat
ACL SETUSER x + 
ACL SETUSER x -
ACL SETUSER x +@
ACL SETUSER x ~* ~a
ACL SETUSER x allkeys %R~a
ACL SETUSER x &* &a
ACL SETUSER x allchannels &a
ACL SETUSER x <nopw
ACL SETUSER x !0b14d501a594442a01c6859541bcb3e8164d183d32937b851835442f69d5c94e
ACL SETUSER x #abc
ACL SETUSER x #0B14D501A594442A01C6859541BCB3E8164D183D32937B851835442F69D5C94E
ACL SETUSER x !abc
ACL SETUSER x +client|list|x
ACL SETUSER x +config|get|maxmemory
ACL SETUSER x +get|
ACL SETUSER x +client|
ACL SETUSER x +client|nosub
ACL SETUSER x -select|0
ACL SETUSER x (+get
ACL SETUSER x on (+get ~a
ACL SETUSER x (bogus)
ACL SETUSER x (on)
ACL SETUSER x %~a
ACL SETUSER x %X~a
ACL SETUSER x %RR~a
ACL SETUSER x %
ACL SETUSER x "~a b"
ACL SETUSER x "&a b"
ACL SETUSER x on >ok bogus
ACL SETUSER x "bog\xffus\xfe"
ACL SETUSER x "bog\x00us"
ACL SETUSER x "(+get\xff"
ACL LIST
ACL SETUSER
ACL GETUSER
ACL GETUSER a b
ACL DELUSER
ACL DELUSER default
ACL DELUSER x default
ACL NOSUB
ACL
"##,
    ));
}

#[test]
fn acl_subcommands() {
    let mut s = acl_script(
        "acl_subcommands",
        r##"
ACL HELP
ACL WHOAMI
ACL WHOAMI x
ACL USERS x
ACL LIST x
ACL CAT
ACL CAT nocat
ACL CAT a b
ACL GENPASS 0
ACL GENPASS 4097
ACL GENPASS abc
ACL GENPASS 1 2
ACL LOG
ACL LOG abc
ACL LOG 1 2
ACL LOG -5
ACL LOG RESET
ACL LOAD
ACL SAVE
ACL LOAD x
ACL GETUSER nosuch
ACL DRYRUN nosuch get a
ACL DRYRUN default nocmd
ACL DRYRUN default get
ACL DRYRUN default get a b
ACL DRYRUN default client
ACL DRYRUN default client nosub
ACL DRYRUN default client list
ACL DRYRUN default get a
ACL DRYRUN
ACL DRYRUN default
"##,
    );
    for bits in ["1", "3", "4", "5", "128", "255", "256", "4096"] {
        s = s.check(&["ACL", "GENPASS", bits], |p, r| match (p, r) {
            (Reply::Value(Value::Bulk(a)), Reply::Value(Value::Bulk(b)))
                if a.len() == b.len() && a.iter().all(|c| c.is_ascii_hexdigit()) =>
            {
                Ok(())
            }
            _ => Err("GENPASS lengths differ".into()),
        });
    }
    diff(&s);
}

#[test]
fn acl_pubsub_default() {
    diff(&acl_script(
        "acl_pubsub_default",
        r##"
CONFIG GET acl-pubsub-default
CONFIG SET acl-pubsub-default bogus
ACL SETUSER a on
CONFIG SET acl-pubsub-default allchannels
CONFIG GET acl-pubsub-default
ACL SETUSER b on (+get)
ACL SETUSER a reset
ACL SETUSER c on &x
ACL LIST
CONFIG SET acl-pubsub-default resetchannels
ACL SETUSER b reset
ACL LIST
CONFIG GET acllog-max-len
CONFIG SET acllog-max-len -1
CONFIG SET acllog-max-len 2
CONFIG GET aclfile
CONFIG SET aclfile /tmp/x
"##,
    ));
}

#[test]
fn acl_denials_and_log() {
    diff(&acl_script(
        "acl_denials_and_log",
        r##"
SET kx 1
RPUSH klist 3 1 2
ACL SETUSER u on >pw ~k* %R~r* %W~w* &ch* +@all -set -client|kill +select|0 -select -debug
ACL SETUSER s on >pw +@all ~k* &ch* (+get ~s*) (+publish &p*)
AUTH u wrong
AUTH nosuch pw
AUTH u pw
ACL WHOAMI
SET k v
GET kx
GET other
GET r1
SET r1 v
SET w1 v
GET w1
HLEN w1
LPUSH w1 a
MSET k1 v k2 v other v
COPY kx w2
COPY kx other
PUBLISH ch1 m
PUBLISH other m
SPUBLISH ch1 m
SPUBLISH zz m
CLIENT KILL ID 999999
CLIENT ID                                  # type
SELECT 0
SORT klist
SORT klist BY nosort
SORT klist BY w_*
SORT klist GET #
SORT klist STORE k2
SORT klist STORE zz
EVAL "return redis.call('get','zz')" 0
EVAL "return redis.call('set','k1','v')" 0
EVAL "return redis.call('publish','zz','v')" 0
EVAL "return redis.acl_check_cmd('set','k1','v')" 0
EVAL "return redis.acl_check_cmd('get','k1')" 0
EVAL "return redis.acl_check_cmd('get','zz')" 0
EVAL "return redis.acl_check_cmd('client','list')" 0
EVAL "return redis.acl_check_cmd('nocmd')" 0
MULTI
GET k1
GET zz
SET k1 v
EXEC
MULTI
GET k1
EXEC
AUTH s pw
GET s1
SET s1 v
GET k1
PUBLISH p1 m
PUBLISH ch2 m
PUBLISH zz m
SUBSCRIBE ch1 zz
@reconnect
ACL LOG
ACL LOG 2
ACL LOG 0
ACL LOG RESET
ACL LOG
"##,
    ));
}

#[test]
fn acl_log_grouping_and_length() {
    diff(&acl_script(
        "acl_log_grouping_and_length",
        r##"
ACL SETUSER u on nopass +get ~k*
AUTH u x
GET a
GET a
GET b
GET a
SET k v
AUTH u2 x
AUTH u2 x
AUTH u x
MULTI
GET a
DISCARD
@reconnect
ACL LOG
CONFIG SET acllog-max-len 2
AUTH u x
GET c
@reconnect
ACL LOG
ACL LOG 1
"##,
    ));
}

#[test]
fn auth_hello_and_requirepass() {
    diff(&acl_script(
        "auth_hello_and_requirepass",
        r##"
AUTH x
AUTH a b c
AUTH default anything
ACL SETUSER u on >pw +@all ~*
AUTH u pw
ACL WHOAMI
HELLO 2 AUTH u wrong
HELLO 2 AUTH nosuch x
HELLO 2 AUTH u pw SETNAME n                # type
ACL WHOAMI
RESET
ACL WHOAMI
CONFIG SET requirepass secret
ACL GETUSER default
ACL LIST
CONFIG GET requirepass
PING
AUTH secret
PING
ACL WHOAMI
AUTH default secret
AUTH wrong
@reconnect
PING
HELLO 2
HELLO 2 AUTH default wrong
HELLO 2 AUTH default secret                # type
PING
RESET
PING
ACL SETUSER default resetpass >other
CONFIG GET requirepass
AUTH other
ACL SETUSER default nopass
CONFIG SET requirepass ""
ACL GETUSER default
ACL SETUSER default off
@reconnect
PING
AUTH u pw
PING
ACL SETUSER default on
@reconnect
PING
ACL LOG
"##,
    ));
}

/// The persistence commands: DUMP reads its key (`RO access`), RESTORE
/// only writes it (`OW update`: `%W~` is enough, `%R~` is not), SAVE and
/// BGSAVE are `@admin @slow @dangerous`, LASTSAVE `@admin @fast
/// @dangerous`, as in Redis 7.0; DRYRUN and the real calls agree.
#[test]
fn acl_persistence_commands() {
    diff(&acl_script(
        "acl_persistence_commands",
        r##"
SET r1 v
SET w1 v
ACL SETUSER u on >pw ~k* %R~r* %W~w* +@all
ACL SETUSER ro on >pw %R~* +@all
ACL SETUSER wo on >pw %W~* +@all
ACL SETUSER noadm on >pw ~* +@all -@admin
ACL SETUSER nodanger on >pw ~* +@all -@dangerous
ACL SETUSER ks on >pw ~* +@keyspace
ACL SETUSER sub on >pw ~* -@all +bgsave|schedule +dump
ACL DRYRUN u dump r1
ACL DRYRUN u dump w1
ACL DRYRUN u dump k1
ACL DRYRUN u restore w9 0 x
ACL DRYRUN u restore r9 0 x
ACL DRYRUN u restore k9 0 x REPLACE
ACL DRYRUN ro dump a
ACL DRYRUN ro restore a 0 x
ACL DRYRUN wo dump a
ACL DRYRUN wo restore a 0 x
ACL DRYRUN noadm save
ACL DRYRUN noadm bgsave
ACL DRYRUN noadm bgsave schedule
ACL DRYRUN noadm lastsave
ACL DRYRUN noadm dump a
ACL DRYRUN nodanger save
ACL DRYRUN nodanger bgsave
ACL DRYRUN nodanger lastsave
ACL DRYRUN nodanger restore a 0 x
ACL DRYRUN nodanger dump a
ACL DRYRUN ks dump a
ACL DRYRUN ks restore a 0 x
ACL DRYRUN ks save
ACL DRYRUN sub bgsave
ACL DRYRUN sub bgsave schedule
ACL DRYRUN sub save
ACL DRYRUN sub dump a
ACL GETUSER sub
AUTH wo pw
RESTORE a 0 xx
DUMP a
AUTH ro pw
RESTORE a 0 xx
DUMP nosuch
AUTH u pw
DUMP w1
DUMP k1
RESTORE r9 0 xx
RESTORE w9 0 xx
AUTH noadm pw
SAVE
BGSAVE
LASTSAVE
AUTH nodanger pw
SAVE
RESTORE a 0 xx
MULTI
DUMP nosuch
RESTORE a 0 xx
EXEC
@reconnect
ACL LOG
"##,
    ));
}

/// ACL CAT of every category names the same commands, among those both
/// servers have (petrel lacks streams, geo, cluster, replication... and
/// has three commands of its own).
#[test]
fn acl_cat_categories() {
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let petrel = TestServer::start(&[]);
    let (mut p, mut r) = (petrel.raw(), redis.raw());
    let names = |v: Value| -> Vec<Vec<u8>> {
        match v {
            Value::Array(items) => items
                .into_iter()
                .map(|i| match i {
                    Value::Bulk(b) => b,
                    other => panic!("not a name: {other}"),
                })
                .collect(),
            other => panic!("not a list: {other}"),
        }
    };
    let plist = names(p.cmd(&["COMMAND", "LIST"]));
    let rlist = names(r.cmd(&["COMMAND", "LIST"]));
    let both = |n: &Vec<u8>| plist.contains(n) && rlist.contains(n);
    let cats = names(r.cmd(&["ACL", "CAT"]));
    assert_eq!(names(p.cmd(&["ACL", "CAT"])), cats);
    let mut compared = 0;
    for cat in &cats {
        let mut pc: Vec<Vec<u8>> = names(p.cmd(&[b"ACL".as_slice(), b"CAT", cat]))
            .into_iter()
            .filter(both)
            .collect();
        let mut rc: Vec<Vec<u8>> = names(r.cmd(&[b"ACL".as_slice(), b"CAT", cat]))
            .into_iter()
            .filter(both)
            .collect();
        pc.sort();
        rc.sort();
        assert_eq!(pc, rc, "ACL CAT {}", String::from_utf8_lossy(cat));
        compared += usize::from(!pc.is_empty());
    }
    // Every category but geo and stream (petrel has none of their commands yet).
    assert!(compared >= cats.len() - 2, "{compared} categories compared");
}

/// An unknown category is echoed as Redis's `%.128s` does: a C string,
/// so it ends at the first NUL (found by the differential fuzzer).
#[test]
fn acl_cat_unknown_category_text() {
    diff_text(
        "acl_cat_unknown_category_text",
        r#"
ACL CAT ab
ACL CAT "\r\n\x00xyz"
ACL CAT "a\x00"
"#,
    );
}
