//! Crash rounds for the AOF (used by the `aof_crash` test and the
//! `aof_crash` example): clients append to their own lists at full speed
//! and log every acknowledged element; the server is killed with SIGKILL
//! mid-load and restarted on the same directory; then every list is
//! checked against what its client saw acknowledged.
//!
//! With `appendfsync always` every acknowledged element must be there;
//! with `everysec` nothing acknowledged more than two seconds before the
//! kill may be missing (a SIGKILL leaves the page cache alone, so in
//! practice nothing is lost either way); no restart may fail to load.
//! Plain std: no test harness, so the example can include it too.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Config {
    pub bin: PathBuf,
    pub dir: PathBuf,
    pub port: u16,
    pub fsync: String,
    pub clients: usize,
    pub pipeline: usize,
    /// Time under load before the kill.
    pub run: Duration,
    pub threads: usize,
    /// Send BGREWRITEAOF after this long under load (the kill may land
    /// while the background rewrite runs, or after it switched files).
    pub rewrite_after: Option<Duration>,
}

#[derive(Debug, Default, Clone)]
pub struct Outcome {
    /// Elements acknowledged to clients.
    pub acked: u64,
    /// Elements present after the restart.
    pub present: u64,
    /// Acknowledged elements missing after the restart.
    pub lost_acked: u64,
    /// Of those, acknowledged more than 2 s before the kill.
    pub lost_old: u64,
    /// Present but never acknowledged (written, reply not received).
    pub unacked_present: u64,
    /// Time the restart took until it answered PING.
    pub restart: Duration,
    /// The restart's log said it cut a truncated tail.
    pub truncated: bool,
}

pub fn spawn(cfg: &Config) -> Child {
    Command::new(&cfg.bin)
        .args([
            "--port",
            &cfg.port.to_string(),
            "--dir",
            &cfg.dir.display().to_string(),
            "--appendonly",
            "yes",
            "--appendfsync",
            &cfg.fsync,
            "--threads",
            &cfg.threads.to_string(),
            "--save",
            "",
            "--logfile",
            &cfg.dir.join("petrel.log").display().to_string(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn petrel")
}

/// Waits until the server answers PING (or exits: Err with its log).
pub fn wait_ready(cfg: &Config, child: &mut Child) -> Result<Duration, String> {
    let start = Instant::now();
    loop {
        if let Ok(Some(st)) = child.try_wait() {
            return Err(format!(
                "petrel exited ({st}) while starting:\n{}",
                log(&cfg.dir)
            ));
        }
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", cfg.port)) {
            if s.write_all(b"PING\r\n").is_ok() {
                let mut r = BufReader::new(s);
                let mut l = String::new();
                if r.read_line(&mut l).is_ok() && l.starts_with("+PONG") {
                    return Ok(start.elapsed());
                }
            }
        }
        if start.elapsed() > Duration::from_secs(60) {
            return Err(format!("petrel not ready after 60 s:\n{}", log(&cfg.dir)));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

pub fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("petrel.log")).unwrap_or_default()
}

fn cmd(args: &[&[u8]]) -> Vec<u8> {
    let mut b = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        b.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        b.extend_from_slice(a);
        b.extend_from_slice(b"\r\n");
    }
    b
}

/// One client: appends 0, 1, 2... to `key`, `pipeline` at a time, until
/// the connection fails; returns when each element was acknowledged.
fn client(port: u16, key: String, pipeline: usize, stop: Arc<AtomicBool>) -> Vec<Instant> {
    let mut acks = Vec::new();
    let Ok(s) = TcpStream::connect(("127.0.0.1", port)) else {
        return acks;
    };
    let _ = s.set_nodelay(true);
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    let mut next = 0u64;
    let mut line = String::new();
    while !stop.load(Ordering::Relaxed) {
        let mut batch = Vec::new();
        for i in 0..pipeline as u64 {
            batch.extend(cmd(&[
                b"RPUSH",
                key.as_bytes(),
                (next + i).to_string().as_bytes(),
            ]));
        }
        if w.write_all(&batch).is_err() {
            return acks;
        }
        for _ in 0..pipeline {
            line.clear();
            match r.read_line(&mut line) {
                Ok(n) if n > 0 && line.starts_with(':') => {
                    let len: u64 = line[1..].trim().parse().unwrap();
                    assert_eq!(len, next + 1, "{key}: RPUSH answered {len}");
                    acks.push(Instant::now());
                    next += 1;
                }
                _ => return acks,
            }
        }
    }
    acks
}

fn read_reply(r: &mut BufReader<TcpStream>) -> Vec<Vec<u8>> {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    match line.as_bytes()[0] {
        b':' | b'+' => vec![line[1..].trim().as_bytes().to_vec()],
        b'*' => {
            let n: i64 = line[1..].trim().parse().unwrap();
            let mut v = Vec::new();
            for _ in 0..n.max(0) {
                line.clear();
                r.read_line(&mut line).unwrap();
                let len: usize = line[1..].trim().parse().unwrap();
                let mut b = vec![0u8; len + 2];
                std::io::Read::read_exact(r, &mut b).unwrap();
                b.truncate(len);
                v.push(b);
            }
            v
        }
        _ => panic!("unexpected reply {line}"),
    }
}

/// One round under `cfg` (the server must not be running). `round` names
/// the keys so rounds on one directory do not mix.
pub fn round(cfg: &Config, round: usize) -> Result<Outcome, String> {
    let mut child = spawn(cfg);
    wait_ready(cfg, &mut child)?;
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..cfg.clients)
        .map(|c| {
            let (port, stop, p) = (cfg.port, stop.clone(), cfg.pipeline);
            let key = format!("log:{round}:{c}");
            std::thread::spawn(move || client(port, key, p, stop))
        })
        .collect();
    match cfg.rewrite_after {
        Some(t) if t < cfg.run => {
            std::thread::sleep(t);
            let mut s = TcpStream::connect(("127.0.0.1", cfg.port)).unwrap();
            s.write_all(&cmd(&[b"BGREWRITEAOF"])).unwrap();
            std::thread::sleep(cfg.run - t);
        }
        _ => std::thread::sleep(cfg.run),
    }
    child.kill().expect("SIGKILL");
    let killed = Instant::now();
    let _ = child.wait();
    stop.store(true, Ordering::Relaxed);
    let acks: Vec<Vec<Instant>> = handles.into_iter().map(|h| h.join().unwrap()).collect();

    let mut child = spawn(cfg);
    let restart = wait_ready(cfg, &mut child)?;
    // A rewrite the kill interrupted leaves no temporary file behind.
    if let Ok(rd) = std::fs::read_dir(cfg.dir.join("appendonlydir")) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with("temp-") {
                let _ = child.kill();
                return Err(format!("{:?} left after the restart", e.file_name()));
            }
        }
    }
    let mut out = Outcome {
        restart,
        truncated: log(&cfg.dir).contains("aof-load-truncated"),
        ..Default::default()
    };
    let s = TcpStream::connect(("127.0.0.1", cfg.port)).unwrap();
    let mut w = s.try_clone().unwrap();
    let mut r = BufReader::new(s);
    for (c, a) in acks.iter().enumerate() {
        let key = format!("log:{round}:{c}");
        w.write_all(&cmd(&[b"LRANGE", key.as_bytes(), b"0", b"-1"]))
            .unwrap();
        let items = read_reply(&mut r);
        for (i, it) in items.iter().enumerate() {
            if *it != i.to_string().into_bytes() {
                return Err(format!(
                    "{key}: element {i} is {:?}",
                    String::from_utf8_lossy(it)
                ));
            }
        }
        let n = items.len() as u64;
        let acked = a.len() as u64;
        out.acked += acked;
        out.present += n;
        if n < acked {
            out.lost_acked += acked - n;
            out.lost_old += a[n as usize..]
                .iter()
                .filter(|t| killed.duration_since(**t) > Duration::from_secs(2))
                .count() as u64;
        } else {
            out.unacked_present += n - acked;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    Ok(out)
}
