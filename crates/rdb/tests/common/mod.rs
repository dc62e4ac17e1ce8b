//! Shared by the integration tests: a reference `redis-server` in a
//! temporary directory ([`Redis`]), a plain model of Petrel values
//! ([`Model`]) and helpers to read whole files.
//!
//! Like `crates/server/tests/common`, a missing `redis-server` skips the
//! interop tests with a loud notice, unless `PETREL_REQUIRE_REDIS=1` makes
//! it a failure.
#![allow(dead_code)]

pub mod gen;
pub mod old;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use collections::value::hash::lp_bytes;
use collections::{HashValue, SetValue};
use rdb::{Item, KeyEntry, ReadOptions, Reader};
use store::{CompactValue, Kind};

/// The reference server binary: `$PETREL_REDIS_SERVER` or `redis-server`.
pub fn redis_server_bin() -> String {
    std::env::var("PETREL_REDIS_SERVER").unwrap_or_else(|_| "redis-server".into())
}

/// Whether redis-server can run; a loud notice when not (a panic when
/// `PETREL_REQUIRE_REDIS=1`).
pub fn redis_available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let required = std::env::var("PETREL_REQUIRE_REDIS").as_deref() == Ok("1");
    let ok = *AVAILABLE.get_or_init(|| {
        let ok = Command::new(redis_server_bin())
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok && !required {
            let _ = std::io::stderr().write_all(
                b"\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\
                  !!! REDIS-SERVER NOT FOUND: RDB interop tests skipped        !!!\n\
                  !!! install redis-server 7.0 (apt-get install redis-server)  !!!\n\
                  !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n\n",
            );
        }
        ok
    });
    if !ok && required {
        panic!(
            "{} not found and PETREL_REQUIRE_REDIS=1",
            redis_server_bin()
        );
    }
    ok
}

/// A temporary directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "petrel-rdb-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A redis-server we started (killed on drop) and a connection to it.
pub struct Redis {
    child: Child,
    pub port: u16,
    pub con: redis::Connection,
    pub dir: PathBuf,
}

/// Whether the server behind `con` is the process `pid`.
fn serves_pid(con: &mut redis::Connection, pid: u32) -> bool {
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(con)
        .unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .and_then(|v| v.trim().parse::<u32>().ok())
        == Some(pid)
}

impl Redis {
    /// Starts redis-server in `dir` (its `dump.rdb` is loaded if present)
    /// with extra `--name value` settings; `None` when redis-server is not
    /// installed.
    pub fn start(dir: &Path, extra: &[(&str, &str)]) -> Option<Redis> {
        if !redis_available() {
            return None;
        }
        for _ in 0..5 {
            let port = {
                let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
                l.local_addr().unwrap().port()
            };
            let mut args: Vec<String> = vec![
                "--port".into(),
                port.to_string(),
                "--bind".into(),
                "127.0.0.1".into(),
                "--save".into(),
                "".into(),
                "--daemonize".into(),
                "no".into(),
                "--appendonly".into(),
                "no".into(),
                "--dir".into(),
                dir.display().to_string(),
                "--dbfilename".into(),
                "dump.rdb".into(),
                "--enable-debug-command".into(),
                "yes".into(),
            ];
            for (k, v) in extra {
                args.push(format!("--{k}"));
                args.push(v.to_string());
            }
            let log = std::fs::File::create(dir.join(format!("redis-{port}.log"))).unwrap();
            let mut child = Command::new(redis_server_bin())
                .args(&args)
                .stdin(Stdio::null())
                .stdout(log.try_clone().unwrap())
                .stderr(log)
                .spawn()
                .expect("spawn redis-server");
            let end = Instant::now() + Duration::from_secs(30);
            loop {
                if let Ok(Some(_)) = child.try_wait() {
                    break; // exited (port taken?): retry with another port
                }
                if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    let client = redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap();
                    if let Ok(mut con) = client.get_connection() {
                        // Wait until the data set is loaded (-LOADING).
                        loop {
                            match redis::cmd("PING").query::<String>(&mut con) {
                                // Another test's server on a port that was
                                // free a moment ago: retry elsewhere.
                                Ok(_) if !serves_pid(&mut con, child.id()) => {
                                    let _ = child.kill();
                                    break;
                                }
                                Ok(_) => {
                                    return Some(Redis {
                                        child,
                                        port,
                                        con,
                                        dir: dir.to_path_buf(),
                                    })
                                }
                                Err(_) if matches!(child.try_wait(), Ok(Some(_))) => break,
                                Err(_) if Instant::now() < end => {
                                    std::thread::sleep(Duration::from_millis(20))
                                }
                                Err(e) => panic!("redis-server never loaded: {e}"),
                            }
                        }
                    }
                }
                if Instant::now() > end {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("redis-server did not start on port {port}");
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.wait();
        }
        panic!(
            "could not start redis-server: see the logs in {}",
            dir.display()
        );
    }

    /// The server's log.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join(format!("redis-{}.log", self.port)))
            .unwrap_or_default()
    }

    /// Runs a command whose arguments are byte strings.
    pub fn cmd<T: redis::FromRedisValue>(&mut self, args: &[&[u8]]) -> T {
        let mut c = redis::cmd(std::str::from_utf8(args[0]).unwrap());
        for a in &args[1..] {
            c.arg(*a);
        }
        c.query(&mut self.con)
            .unwrap_or_else(|e| panic!("{:?}: {e}", String::from_utf8_lossy(&args.concat())))
    }

    /// A command given as text words.
    pub fn run<T: redis::FromRedisValue>(&mut self, words: &str) -> T {
        let parts: Vec<&[u8]> = words.split_whitespace().map(|w| w.as_bytes()).collect();
        self.cmd(&parts)
    }

    pub fn select(&mut self, db: u32) {
        let _: () = self.cmd(&[b"SELECT", db.to_string().as_bytes()]);
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `redis-check-rdb` on a file; `Err(output)` when it complains.
pub fn check_rdb(path: &Path) -> Result<(), String> {
    let out = Command::new("redis-check-rdb")
        .arg(path)
        .output()
        .expect("run redis-check-rdb");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        Ok(())
    } else {
        Err(text)
    }
}

/// A Petrel value as plain data, for comparisons.
#[derive(Clone, Debug, PartialEq)]
pub enum Model {
    Str(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(BTreeSet<Vec<u8>>),
    Hash(BTreeMap<Vec<u8>, Vec<u8>>),
    /// (member, score bits) in rank order.
    Zset(Vec<(Vec<u8>, u64)>),
    /// The stream's RDB form (its DUMP body): nodes, IDs, groups, PELs
    /// and consumers all compared at once.
    Stream(Vec<u8>),
}

pub fn model(v: &CompactValue) -> Model {
    let mut buf = [0u8; 20];
    let mut buf2 = [0u8; 20];
    match v.kind() {
        Kind::String => Model::Str(v.string().unwrap().to_vec()),
        Kind::List => Model::List(v.as_list().unwrap().to_vecs()),
        Kind::Set => {
            let s: &SetValue = v.as_set().unwrap();
            Model::Set(s.iter().map(|m| lp_bytes(m, &mut buf).to_vec()).collect())
        }
        Kind::Hash => {
            let h = v.as_hash().unwrap();
            let h: &HashValue = &h;
            Model::Hash(
                h.iter()
                    .map(|(f, x)| {
                        (
                            lp_bytes(f, &mut buf).to_vec(),
                            lp_bytes(x, &mut buf2).to_vec(),
                        )
                    })
                    .collect(),
            )
        }
        Kind::ZSet => Model::Zset(
            v.as_zset()
                .unwrap()
                .to_pairs()
                .into_iter()
                .map(|(m, s)| (m, s.to_bits()))
                .collect(),
        ),
        Kind::Stream => Model::Stream(rdb::dump(v, &rdb::WriteOptions::default())),
    }
}

/// Everything in a file: aux fields, key entries, stored checksum.
#[derive(Debug)]
pub struct Loaded {
    pub version: u16,
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
    pub entries: Vec<KeyEntry>,
    pub resize: Vec<(u64, u64)>,
    pub checksum: Option<u64>,
}

pub fn load_all(bytes: &[u8], opts: ReadOptions) -> rdb::Result<Loaded> {
    let mut r = Reader::new(bytes, opts)?;
    let mut l = Loaded {
        version: r.version(),
        aux: Vec::new(),
        entries: Vec::new(),
        resize: Vec::new(),
        checksum: None,
    };
    loop {
        match r.read_item()? {
            Item::Aux { key, value } => l.aux.push((key, value)),
            Item::Entry(e) => l.entries.push(e),
            Item::ResizeDb {
                db_size,
                expires_size,
            } => l.resize.push((db_size, expires_size)),
            Item::Eof { checksum } => {
                l.checksum = checksum;
                return Ok(l);
            }
            Item::SelectDb(_) | Item::SlotInfo { .. } | Item::Function { .. } => {}
        }
    }
}

/// Writes `entries` (grouped by database, in order) as a version 10 file
/// with Redis-like aux fields.
pub fn write_all(entries: &[KeyEntry], opts: rdb::WriteOptions) -> Vec<u8> {
    let mut w = rdb::Writer::new(Vec::new(), opts).unwrap();
    w.aux(b"redis-ver", b"7.0.15").unwrap();
    w.aux_int(b"redis-bits", 64).unwrap();
    w.aux_int(b"ctime", 1_700_000_000).unwrap();
    w.aux_int(b"used-mem", 1_000_000).unwrap();
    w.aux_int(b"aof-base", 0).unwrap();
    let mut dbs: BTreeMap<u32, Vec<&KeyEntry>> = BTreeMap::new();
    for e in entries {
        dbs.entry(e.db).or_default().push(e);
    }
    for (db, es) in dbs {
        w.select_db(db).unwrap();
        let expires = es.iter().filter(|e| e.expire_ms.is_some()).count();
        w.resize_db(es.len() as u64, expires as u64).unwrap();
        for e in es {
            w.entry(
                &e.key,
                &e.value,
                rdb::EntryMeta {
                    expire_ms: e.expire_ms,
                    idle_secs: e.idle_secs,
                    freq: e.freq,
                },
            )
            .unwrap();
        }
    }
    let (out, n) = w.finish().unwrap();
    assert_eq!(n as usize, out.len());
    out
}
