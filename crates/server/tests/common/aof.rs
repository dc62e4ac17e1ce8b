//! Helpers shared by the AOF tests (included with `#[path]`).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Parses an AOF (commands only) into argument vectors; panics on garbage.
pub fn parse_aof(d: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    let line = |i: &mut usize| -> Vec<u8> {
        let j = d[*i..].windows(2).position(|w| w == b"\r\n").unwrap() + *i;
        let l = d[*i..j].to_vec();
        *i = j + 2;
        l
    };
    while i < d.len() {
        if d[i] == b'#' {
            line(&mut i);
            continue;
        }
        let l = line(&mut i);
        assert_eq!(l[0], b'*', "at {i}");
        let n: usize = std::str::from_utf8(&l[1..]).unwrap().parse().unwrap();
        let mut argv = Vec::new();
        for _ in 0..n {
            let l = line(&mut i);
            let len: usize = std::str::from_utf8(&l[1..]).unwrap().parse().unwrap();
            argv.push(d[i..i + len].to_vec());
            i += len + 2;
        }
        out.push(argv);
    }
    out
}

/// (name, type) of the files a manifest lists, in order.
pub fn manifest_files(dir: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(dir.join("appendonly.aof.manifest")).unwrap();
    text.lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[1].to_string(), w[5].to_string())
        })
        .collect()
}

/// The commands of every incremental file in `dir` (an AOF directory).
pub fn incr_commands(dir: &Path) -> Vec<Vec<Vec<u8>>> {
    let mut all = Vec::new();
    for (name, t) in manifest_files(dir) {
        if t == "i" {
            all.extend(parse_aof(&std::fs::read(dir.join(name)).unwrap()));
        }
    }
    all
}

pub fn aof_dir(server_dir: &Path) -> PathBuf {
    server_dir.join("appendonlydir")
}

/// Copies the files of one directory into another (created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Text of a command for messages.
pub fn show(c: &[Vec<u8>]) -> String {
    c.iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Asserts both servers hold the same dataset; on a difference, names
/// the keys whose values differ.
pub fn assert_same(a: &crate::common::Server, b: &crate::common::Server, what: &str) {
    let digest = |s: &crate::common::Server| s.raw().cmd(&["DEBUG", "DIGEST"]);
    if digest(a) == digest(b) {
        return;
    }
    let mut diffs = Vec::new();
    for db in 0..16 {
        let (mut ca, mut cb) = (a.raw(), b.raw());
        ca.cmd(&["SELECT", &db.to_string()]);
        cb.cmd(&["SELECT", &db.to_string()]);
        let keys = |c: &mut crate::common::RawConn| -> Vec<Vec<u8>> {
            match c.cmd(&["KEYS", "*"]) {
                crate::common::Value::Array(v) => v
                    .into_iter()
                    .filter_map(|k| k.as_bytes().map(|b| b.to_vec()))
                    .collect(),
                _ => vec![],
            }
        };
        let mut all = keys(&mut ca);
        all.extend(keys(&mut cb));
        all.sort();
        all.dedup();
        for k in all {
            let da = ca.cmd(&[b"DEBUG".as_slice(), b"DIGEST-VALUE", &k]);
            let db_ = cb.cmd(&[b"DEBUG".as_slice(), b"DIGEST-VALUE", &k]);
            if da != db_ {
                diffs.push(format!("db{db} {}", String::from_utf8_lossy(&k)));
            }
        }
    }
    panic!("{what}: datasets differ; keys: {diffs:?}");
}

/// Waits (up to 30 s) until the server `info` reads from has no AOF rewrite
/// running or scheduled (BGREWRITEAOF replies before its base is written).
pub fn wait_rewrite(mut info: impl FnMut() -> String) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let t = info();
        if t.contains("aof_rewrite_in_progress:0") && t.contains("aof_rewrite_scheduled:0") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the AOF rewrite did not end:\n{t}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Waits (up to 60 s) until `srv` finished loading its dataset: both
/// servers accept clients while they load (answering -LOADING, and
/// DEBUG DIGEST on a partial dataset).
pub fn wait_loaded(srv: &crate::common::Server) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let mut c = srv.raw();
        let t = match c.cmd(&["INFO", "persistence"]) {
            crate::common::Value::Bulk(b) => String::from_utf8_lossy(&b).into_owned(),
            // A user without INFO (ACL tests): DBSIZE answers -LOADING
            // until the load is over.
            other => format!("{other:?} / {:?}", c.cmd(&["DBSIZE"])),
        };
        if t.contains("\r\nloading:0\r\n") || t.contains("/ Int(") {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the server did not finish loading:\n{t}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Starts a `kind` server with `appendonly yes` on a copy of the AOF
/// directory `aof` and waits until it has loaded it; None for redis-server
/// when it is not installed (the caller skips that side). The copy lives as
/// long as the returned directory.
pub fn start_on_aof_copy(
    kind: crate::common::Kind,
    aof: &Path,
    tag: &str,
) -> Option<(crate::common::TempDir, crate::common::Server)> {
    use crate::common::{redis_available, Kind, Opts, Server, TempDir};
    if kind == Kind::Redis && !redis_available() {
        return None;
    }
    let copy = TempDir::new(tag);
    copy_dir(aof, &copy.join("appendonlydir"));
    let d = copy.path().display().to_string();
    let srv = Server::start_opts(
        kind,
        Opts::new(&[
            ("appendonly", "yes"),
            ("enable-debug-command", "yes"),
            ("dir", &d),
        ]),
    );
    wait_loaded(&srv);
    Some((copy, srv))
}
