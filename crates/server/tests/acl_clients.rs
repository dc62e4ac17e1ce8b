//! ACL with several connections and files, against redis-server 7.0:
//! which user changes close which connections, CLIENT KILL USER, CLIENT
//! LIST `user=`, ACL files written by one server and loaded by the other,
//! the config file's `user` lines and `aclfile` (and Redis's refusal of
//! both), `rename-command`, and the INFO counters.

mod common;
use common::*;

fn ok() -> Value {
    Value::Simple(b"OK".to_vec())
}

/// What a connection answers to PING now: "PONG", "closed", or the error.
fn state(c: &mut RawConn) -> String {
    match c.try_cmd(&["PING"]) {
        Reply::Value(Value::Simple(s)) => String::from_utf8_lossy(&s).into_owned(),
        Reply::Value(Value::Array(a)) => format!("subscribed {}", a.len()),
        Reply::Value(Value::Push(a)) => format!("subscribed {}", a.len()),
        Reply::Value(Value::Error(e)) => String::from_utf8_lossy(&e).into_owned(),
        Reply::Closed => "closed".into(),
        other => format!("{other}"),
    }
}

/// For each change, a plain and a subscribed connection of the user, then
/// the change: which of them survive, on both servers.
#[test]
fn which_changes_close_connections() {
    let Some(redis) = RefRedis::start() else {
        return;
    };
    let petrel = TestServer::start(&[]);
    let changes: &[&[&str]] = &[
        &["off"],
        &["resetpass"],
        &["<pw"],
        &[">other"],
        &["-@all"],
        &["resetkeys"],
        &["nopass"],
        &["reset"],
        &["resetchannels"],
        &["resetchannels", "&chan"],
        &["resetchannels", "&ch*"],
        &["resetchannels", "&other"],
        &["(&chan)"],
    ];
    let mut outcomes: Vec<Vec<String>> = Vec::new();
    for srv in [&petrel, &redis] {
        let mut admin = srv.raw();
        let mut seen = Vec::new();
        for change in changes {
            admin.cmd(&["ACL", "DELUSER", "u"]);
            let mut set = vec!["ACL", "SETUSER", "u", "on", ">pw", "~*", "&chan", "+@all"];
            assert_eq!(admin.cmd(&set), ok());
            let mut plain = srv.raw();
            assert_eq!(plain.cmd(&["AUTH", "u", "pw"]), ok());
            let mut sub = srv.raw();
            assert_eq!(sub.cmd(&["AUTH", "u", "pw"]), ok());
            sub.cmd(&["SUBSCRIBE", "chan"]);
            let mut psub = srv.raw();
            assert_eq!(psub.cmd(&["AUTH", "u", "pw"]), ok());
            set.truncate(3);
            set.extend_from_slice(change);
            admin.cmd(&set);
            seen.push(format!(
                "{change:?}: plain {}, subscriber {}, reply {}",
                state(&mut plain),
                state(&mut sub),
                state(&mut psub)
            ));
        }
        // DELUSER closes every connection of the user, the caller's own
        // after the reply.
        admin.cmd(&["ACL", "SETUSER", "v", "on", "nopass", "+@all", "~*"]);
        let mut other = srv.raw();
        other.cmd(&["AUTH", "v", "x"]);
        let mut me = srv.raw();
        me.cmd(&["AUTH", "v", "x"]);
        seen.push(format!(
            "deluser by self: {}",
            me.cmd(&["ACL", "DELUSER", "v"])
        ));
        seen.push(format!("self after: {}", state(&mut me)));
        seen.push(format!("other after: {}", state(&mut other)));
        // CLIENT KILL USER.
        admin.cmd(&["ACL", "SETUSER", "w", "on", "nopass", "+@all", "~*"]);
        let mut w1 = srv.raw();
        w1.cmd(&["AUTH", "w", "x"]);
        let mut w2 = srv.raw();
        w2.cmd(&["AUTH", "w", "x"]);
        seen.push(format!(
            "kill user: {}",
            admin.cmd(&["CLIENT", "KILL", "USER", "w"])
        ));
        seen.push(format!("w1 {} w2 {}", state(&mut w1), state(&mut w2)));
        seen.push(format!(
            "{}",
            admin.cmd(&["CLIENT", "KILL", "USER", "nosuch"])
        ));
        seen.push(format!("{}", admin.cmd(&["CLIENT", "KILL", "USER", "w"])));
        outcomes.push(seen);
    }
    assert_eq!(outcomes[0], outcomes[1], "petrel (left) vs redis (right)");
}

#[test]
fn client_list_shows_the_user() {
    let mut s = TestServer::start(&[]);
    let mut a = s.raw();
    a.cmd(&["ACL", "SETUSER", "alice", "on", ">pw", "+@all", "~*"]);
    a.cmd(&["AUTH", "alice", "pw"]);
    let list = a.cmd(&["CLIENT", "INFO"]);
    assert!(format!("{list}").contains(" user=alice "), "{list}");
    assert_eq!(a.cmd(&["ACL", "WHOAMI"]), Value::Bulk(b"alice".to_vec()));
    a.cmd(&["RESET"]);
    let list = a.cmd(&["CLIENT", "INFO"]);
    assert!(format!("{list}").contains(" user=default "), "{list}");
    s.assert_alive();
}

/// The ACL LIST of a server, with single-command rules sorted (their
/// order is random in Redis 7.0).
fn acl_list(c: &mut RawConn) -> Vec<String> {
    match c.cmd(&["ACL", "LIST"]) {
        Value::Array(items) => items
            .into_iter()
            .map(|i| {
                let Value::Bulk(b) = i else { panic!("{i}") };
                let mut words: Vec<String> = String::from_utf8_lossy(&b)
                    .split(' ')
                    .map(String::from)
                    .collect();
                words.sort();
                words.join(" ")
            })
            .collect(),
        other => panic!("{other}"),
    }
}

const FILE_USERS: &[&[&str]] = &[
    &[
        "alice",
        "on",
        ">a1",
        ">a2",
        "~k*",
        "%R~r*",
        "&ch*",
        "-@all",
        "+get",
        "+set",
        "+client|list",
        "+select|0",
    ],
    &[
        "bob",
        "off",
        "nopass",
        "allkeys",
        "allchannels",
        "+@all",
        "-flushall",
        "(+get ~x*)",
        "(%W~w* +@string &p*)",
    ],
    &[
        "carol",
        "on",
        "#0b14d501a594442a01c6859541bcb3e8164d183d32937b851835442f69d5c94e",
        "resetchannels",
        "+@read",
        "-@dangerous",
    ],
];

/// An ACL file saved by one server loads in the other (at startup and
/// with ACL LOAD) with the same ACL LIST, both ways.
#[test]
fn acl_file_written_by_one_server_loads_in_the_other() {
    if !redis_available() {
        return;
    }
    let dir = TempDir::new("aclfile");
    for (writer, reader) in [(Kind::Petrel, Kind::Redis), (Kind::Redis, Kind::Petrel)] {
        let file = dir.join(&format!("{writer:?}.acl"));
        std::fs::write(&file, "").unwrap();
        let path = file.to_str().unwrap();
        let w = Server::start_opts(writer, Opts::new(&[("aclfile", path)]));
        let mut wc = w.raw();
        for u in FILE_USERS {
            let mut cmd = vec!["ACL", "SETUSER"];
            cmd.extend_from_slice(u);
            assert_eq!(wc.cmd(&cmd), ok(), "{writer:?} {cmd:?}");
        }
        assert_eq!(wc.cmd(&["ACL", "SAVE"]), ok());
        let written = acl_list(&mut wc);
        // At startup.
        let r = Server::start_opts(reader, Opts::new(&[("aclfile", path)]));
        let mut rc = r.raw();
        assert_eq!(
            acl_list(&mut rc),
            written,
            "{reader:?} loading {writer:?}'s file"
        );
        // With ACL LOAD, after changes.
        rc.cmd(&["ACL", "SETUSER", "dave", "on"]);
        rc.cmd(&["ACL", "DELUSER", "alice"]);
        assert_eq!(rc.cmd(&["ACL", "LOAD"]), ok());
        assert_eq!(acl_list(&mut rc), written, "{reader:?} ACL LOAD");
        // Saved again by the reader, loaded again by the writer.
        let path2 = dir.join(&format!("{reader:?}-again.acl"));
        std::fs::write(&path2, "").unwrap();
        let r2 = Server::start_opts(reader, Opts::new(&[("aclfile", path2.to_str().unwrap())]));
        let mut r2c = r2.raw();
        std::fs::copy(&file, &path2).unwrap();
        assert_eq!(r2c.cmd(&["ACL", "LOAD"]), ok());
        assert_eq!(r2c.cmd(&["ACL", "SAVE"]), ok());
        let w2 = Server::start_opts(writer, Opts::new(&[("aclfile", path2.to_str().unwrap())]));
        assert_eq!(
            acl_list(&mut w2.raw()),
            written,
            "round trip through {reader:?}"
        );
    }
}

/// ACL LOAD errors (every line's, all or nothing), a missing file, and the
/// connections ACL LOAD closes, on both servers.
#[test]
fn acl_load_errors_and_effects() {
    if !redis_available() {
        return;
    }
    let dir = TempDir::new("aclload");
    let mut outcomes: Vec<Vec<String>> = Vec::new();
    for kind in [Kind::Petrel, Kind::Redis] {
        let file = dir.join(&format!("{kind:?}.acl"));
        let path = file.to_str().unwrap().to_string();
        std::fs::write(
            &file,
            "user default on nopass ~* &* +@all\nuser a on >pa ~* +@all\n",
        )
        .unwrap();
        let srv = Server::start_opts(kind, Opts::new(&[("aclfile", &path)]));
        let mut admin = srv.raw();
        let mut seen = Vec::new();
        let mut a = srv.raw();
        seen.push(format!("{}", a.cmd(&["AUTH", "a", "pa"])));
        seen.push(format!("{}", admin.cmd(&["ACL", "LOAD"])));
        seen.push(format!("a after load: {}", state(&mut a)));
        let bad = "user default on nopass ~* &* +@all\nuser a on >pa ~* +@all\n#comment\n  \nfoo bar\nuser b on +nocmd +@nocat bogus \"unbal\nuser c (+get\nuser a on\nuser d on\nuser\nuser e on #abc nope\n";
        std::fs::write(&file, bad).unwrap();
        let err = admin.cmd(&["ACL", "LOAD"]);
        seen.push(format!("{err}").replace(&path, "FILE"));
        seen.push(format!("{}", admin.cmd(&["ACL", "USERS"])));
        std::fs::write(
            &file,
            "user default on nopass ~* &* +@all\nuser \"q q\" on\n",
        )
        .unwrap();
        seen.push(format!("{}", admin.cmd(&["ACL", "LOAD"])).replace(&path, "FILE"));
        std::fs::write(&file, "user x on\n").unwrap();
        seen.push(format!("{}", admin.cmd(&["ACL", "LOAD"])));
        seen.push(format!("{:?}", acl_list(&mut admin)));
        std::fs::remove_file(&file).unwrap();
        seen.push(format!("{}", admin.cmd(&["ACL", "LOAD"])).replace(&path, "FILE"));
        seen.push(format!("{}", admin.cmd(&["ACL", "SAVE"])));
        seen.push(std::fs::read_to_string(&file).unwrap());
        outcomes.push(seen);
    }
    assert_eq!(outcomes[0], outcomes[1], "petrel (left) vs redis (right)");
}

/// `user` lines in the config file; `aclfile` with `user` lines refused;
/// bad user lines refused at startup.
#[test]
fn config_file_users() {
    if !redis_available() {
        return;
    }
    let conf =
        "user alice on >pw ~k* +get\nuser default on nopass ~* &* +@all -flushall\nuser bob off\n";
    let mut lists = Vec::new();
    for kind in [Kind::Petrel, Kind::Redis] {
        let srv = Server::start_opts(kind, Opts::default().config(conf));
        let mut c = srv.raw();
        lists.push(acl_list(&mut c));
        assert_eq!(c.cmd(&["AUTH", "alice", "pw"]), ok());
        assert_eq!(c.cmd(&["GET", "k1"]), Value::NullBulk);
    }
    assert_eq!(lists[0], lists[1]);
    let (code, out) = petrel_startup_failure(Some("user a on\naclfile /tmp/none.acl\n"), &[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("please define either an ACL file or declare users directly in your redis.conf, but not both"), "{out}");
    let (code, out) = petrel_startup_failure(Some("user a on bogus\n"), &[]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("Error in user declaration 'a': Syntax error"),
        "{out}"
    );
    let (code, out) = petrel_startup_failure(Some("user a on\nuser a off\n"), &[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("Duplicate user found"), "{out}");
    let (code, out) = petrel_startup_failure(Some("user a on +nocmd\n"), &[]);
    assert_eq!(code, Some(1));
    assert!(out.contains("Error loading ACL rule '+nocmd' for the user named 'a': Unknown command or category name in ACL"), "{out}");
    let (code, out) = petrel_startup_failure(Some("user\n"), &[]);
    assert_eq!(code, Some(1));
    assert!(
        out.contains("Bad directive or wrong number of arguments"),
        "{out}"
    );
    let (code, out) = petrel_startup_failure(None, &["--aclfile", "/nonexistent/x.acl"]);
    assert_eq!(code, Some(1));
    assert!(out.contains("Aborting Redis startup because of ACL errors: Error loading ACLs, opening file '/nonexistent/x.acl': No such file or directory"), "{out}");
}

/// `rename-command`: the new name runs the command, the old one is
/// unknown, `""` removes it; COMMAND and ACL rules keep the original name.
#[test]
fn rename_command() {
    if !redis_available() {
        return;
    }
    let conf = "rename-command get myget\nrename-command flushall \"\"\n";
    let mut seen: Vec<Vec<String>> = Vec::new();
    for kind in [Kind::Petrel, Kind::Redis] {
        let srv = Server::start_opts(kind, Opts::default().config(conf));
        let mut c = srv.raw();
        let mut s = Vec::new();
        c.cmd(&["SET", "a", "1"]);
        for cmd in [
            &["GET", "a"][..],
            &["MYGET", "a"],
            &["FLUSHALL"],
            &["ACL", "SETUSER", "u", "+myget"],
            &["ACL", "SETUSER", "u", "+get"],
            &["ACL", "DRYRUN", "u", "myget", "a"],
            &["COMMAND", "GETKEYS", "myget", "a"],
        ] {
            s.push(format!("{cmd:?}: {}", c.cmd(cmd)));
        }
        let info = c.cmd(&["COMMAND", "INFO", "myget", "get", "flushall"]);
        s.push(format!("{info}"));
        let count = c.cmd(&["COMMAND", "COUNT"]);
        let stats = format!("{}", c.cmd(&["INFO", "commandstats"]));
        s.push(format!(
            "cmdstat_get counted: {}",
            stats.contains("cmdstat_get:calls=1,")
        ));
        seen.push(s);
        if kind == Kind::Petrel {
            // One fewer command than without the rename (FLUSHALL gone).
            let plain = TestServer::start(&[]);
            let Value::Int(all) = plain.raw().cmd(&["COMMAND", "COUNT"]) else {
                panic!()
            };
            assert_eq!(count, Value::Int(all - 1));
        }
    }
    assert_eq!(seen[0], seen[1], "petrel (left) vs redis (right)");
    for (conf, why) in [
        (
            "rename-command nocmd x\n",
            "No such command in rename-command",
        ),
        (
            "rename-command get set\n",
            "Target command name already exists",
        ),
        (
            "rename-command get\n",
            "Bad directive or wrong number of arguments",
        ),
    ] {
        let (code, out) = petrel_startup_failure(Some(conf), &[]);
        assert_eq!(code, Some(1), "{conf}");
        assert!(out.contains(why), "{conf}: {out}");
    }
}

/// INFO stats `acl_access_denied_*` (Redis 7.2's fields; 7.0.15 has none).
#[test]
fn info_acl_counters() {
    let s = TestServer::start(&[]);
    let mut c = s.raw();
    c.cmd(&[
        "ACL",
        "SETUSER",
        "u",
        "on",
        "nopass",
        "+get",
        "+publish",
        "~k*",
        "resetchannels",
    ]);
    let mut a = s.raw();
    a.cmd(&["AUTH", "u", "any"]);
    a.cmd(&["AUTH", "nosuch", "bad"]);
    let mut u = s.raw();
    u.cmd(&["AUTH", "u", "x"]);
    u.cmd(&["SET", "k", "v"]);
    u.cmd(&["GET", "x"]);
    u.cmd(&["GET", "y"]);
    u.cmd(&["PUBLISH", "c", "m"]);
    let Value::Bulk(info) = c.cmd(&["INFO", "stats"]) else {
        panic!()
    };
    let info = String::from_utf8_lossy(&info);
    for line in [
        "acl_access_denied_auth:1\r\n",
        "acl_access_denied_cmd:1\r\n",
        "acl_access_denied_key:2\r\n",
        "acl_access_denied_channel:1\r\n",
    ] {
        assert!(info.contains(line), "{line} in {info}");
    }
}

/// CONFIG REWRITE writes the users as `user` lines in place of the old
/// ones (and keeps `rename-command`), as Redis does.
#[test]
fn config_rewrite_writes_users() {
    if !redis_available() {
        return;
    }
    let conf = "# comment\nuser old on nopass +@all\nrename-command keys mykeys\n";
    let mut files = Vec::new();
    for kind in [Kind::Petrel, Kind::Redis] {
        let srv = Server::start_opts(kind, Opts::default().config(conf));
        let mut c = srv.raw();
        c.cmd(&[
            "ACL",
            "SETUSER",
            "new",
            "on",
            ">p",
            "~k*",
            "+get",
            "(+set ~s*)",
        ]);
        assert_eq!(c.cmd(&["CONFIG", "REWRITE"]), ok());
        let text = std::fs::read_to_string(srv.config_path().unwrap()).unwrap();
        let kept: Vec<String> = text
            .lines()
            .filter(|l| {
                l.starts_with("user ") || l.starts_with("rename-command") || l.starts_with('#')
            })
            .map(|l| {
                let mut w: Vec<&str> = l.split(' ').collect();
                w.sort_unstable();
                w.join(" ")
            })
            .collect();
        files.push(kept);
    }
    assert_eq!(files[0], files[1], "petrel (left) vs redis (right)");
}
