//! Full sync under a write load (issue 21, point 4): how much memory the
//! master needs while it sends its dataset to a new replica, how the
//! writing clients' latency looks meanwhile, and how long the sync takes.
//!
//! The master must already hold its dataset (the script populates it) and
//! the replica must be empty and not yet replicating. Then:
//! 1. `--clients` writer threads each send batches of `--pipeline`
//!    `SET key:<random below --keys> <32 bytes>` and wait for the replies
//!    (closed loop), for `--warmup` seconds;
//! 2. the master's memory is read (`/proc`), the replica is told
//!    `REPLICAOF`, and from then until the replica reports the link up and
//!    no sync in progress, every batch's latency is recorded (each request
//!    of a batch gets the batch's time) and the master's memory is sampled
//!    every 20 ms;
//! 3. the writers stop and one line is printed:
//!    `rss_before_mb rss_peak_mb rss_ratio pss_before_mb pss_peak_mb
//!    pss_ratio sync_s sets_per_s repl_buf_peak_mb p50_ms p99_ms p999_ms
//!    max_ms` (`repl_buf_peak_mb`: the largest `mem_clients_slaves` seen,
//!    sampled every 100 ms).
//!
//! RSS is the master process's; PSS is summed over the master and its
//! child processes (redis-server forks for a full sync; the child's
//! copied pages are the cost of the fork and show only there), with
//! shared pages split between them, so the sum is not double-counted.
//!
//! ```sh
//! fullsync_load --master-port 7821 --replica-port 7822 --master-pid PID \
//!     --keys 10000000 --clients 50 --pipeline 16 --warmup 2
//! ```
//! `scripts/bench-fullsync` runs it for petrel and redis-server masters.

mod load_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

struct Args {
    master_port: u16,
    replica_port: u16,
    master_pid: u32,
    keys: u64,
    clients: usize,
    pipeline: usize,
    warmup: f64,
}

fn die(msg: &str) -> ! {
    load_common::die("fullsync_load", msg)
}

fn parse_args() -> Args {
    let mut a = Args {
        master_port: 0,
        replica_port: 0,
        master_pid: 0,
        keys: 10_000_000,
        clients: 50,
        pipeline: 16,
        warmup: 2.0,
    };
    for (name, n) in load_common::numeric_options("fullsync_load") {
        match name.as_str() {
            "--master-port" => a.master_port = n as u16,
            "--replica-port" => a.replica_port = n as u16,
            "--master-pid" => a.master_pid = n as u32,
            "--keys" => a.keys = (n as u64).max(1),
            "--clients" => a.clients = (n as usize).max(1),
            "--pipeline" => a.pipeline = (n as usize).max(1),
            "--warmup" => a.warmup = n,
            other => die(&format!("unknown option {other}")),
        }
    }
    if a.master_port == 0 || a.replica_port == 0 || a.master_pid == 0 {
        die("--master-port, --replica-port and --master-pid are required");
    }
    a
}

/// One command's RESP encoding.
fn encode(args: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
    out
}

/// Sends one command and returns its reply (a status, error or bulk; the
/// bulk's body for INFO).
fn call(port: u16, args: &[&[u8]]) -> String {
    let s = TcpStream::connect(("127.0.0.1", port))
        .unwrap_or_else(|e| die(&format!("connect {port}: {e}")));
    let mut r = BufReader::new(s);
    r.get_mut().write_all(&encode(args)).unwrap();
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    if let Some(n) = line.strip_prefix('$') {
        let n: usize = n.trim().parse().unwrap_or(0);
        let mut body = vec![0u8; n + 2];
        r.read_exact(&mut body).unwrap();
        body.truncate(n);
        return String::from_utf8_lossy(&body).into_owned();
    }
    line
}

fn info_field(info: &str, name: &str) -> Option<String> {
    info.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(|v| v.trim().to_string())
}

/// A `/proc/<pid>/<file>` field in kB, as bytes.
fn proc_kb(pid: u32, file: &str, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/{file}")).unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

/// Children of `pid` (all its threads' children).
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            let text = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            out.extend(
                text.split_whitespace()
                    .filter_map(|c| c.parse::<u32>().ok()),
            );
        }
    }
    out
}

/// (RSS of `pid`, PSS of `pid` and its children).
fn memory(pid: u32) -> (u64, u64) {
    let rss = proc_kb(pid, "status", "VmRSS:");
    let mut pss = proc_kb(pid, "smaps_rollup", "Pss:");
    for c in children(pid) {
        pss += proc_kb(c, "smaps_rollup", "Pss:");
    }
    (rss, pss)
}

/// One writer connection: batches of SETs until `stop`; while `window` is
/// on, each batch's latency (microseconds) goes into `lat` once per
/// request and the requests into `done`.
fn writer(
    a: &Args,
    seed: u64,
    window: &AtomicBool,
    stop: &AtomicBool,
    lat: &Mutex<Vec<u32>>,
    done: &AtomicU64,
) {
    let mut s = TcpStream::connect(("127.0.0.1", a.master_port))
        .unwrap_or_else(|e| die(&format!("connect master: {e}")));
    s.set_nodelay(true).unwrap();
    let value = [b'v'; 32];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut batch = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut mine = Vec::new();
    while !stop.load(Relaxed) {
        batch.clear();
        for _ in 0..a.pipeline {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = format!("key:{}", x % a.keys);
            batch.extend_from_slice(&encode(&[b"SET", key.as_bytes(), &value]));
        }
        let t = Instant::now();
        s.write_all(&batch)
            .unwrap_or_else(|e| die(&format!("write: {e}")));
        // Every reply is one line (+OK or an error).
        let mut lines = 0;
        while lines < a.pipeline {
            let n = s
                .read(&mut buf)
                .unwrap_or_else(|e| die(&format!("read: {e}")));
            if n == 0 {
                die("the master closed the connection");
            }
            if buf[0] == b'-' {
                die(&String::from_utf8_lossy(&buf[..n]));
            }
            lines += buf[..n].iter().filter(|&&b| b == b'\n').count();
        }
        if window.load(Relaxed) {
            let us = t.elapsed().as_micros().min(u32::MAX as u128) as u32;
            mine.extend(std::iter::repeat_n(us, a.pipeline));
            done.fetch_add(a.pipeline as u64, Relaxed);
        }
    }
    lat.lock().unwrap().extend(mine);
}

fn pct(sorted: &[u32], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i] as f64 / 1000.0
}

fn main() {
    let a = Arc::new(parse_args());
    let window = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let lat = Arc::new(Mutex::new(Vec::new()));
    let done = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..a.clients)
        .map(|i| {
            let (a, window, stop, lat, done) = (
                a.clone(),
                window.clone(),
                stop.clone(),
                lat.clone(),
                done.clone(),
            );
            std::thread::spawn(move || writer(&a, i as u64 + 1, &window, &stop, &lat, &done))
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(a.warmup));
    let (rss0, pss0) = memory(a.master_pid);
    let (mut rss_peak, mut pss_peak) = (rss0, pss0);
    window.store(true, Relaxed);
    let t0 = Instant::now();
    let port = a.master_port.to_string();
    let reply = call(
        a.replica_port,
        &[b"REPLICAOF", b"127.0.0.1", port.as_bytes()],
    );
    if !reply.starts_with("+OK") {
        die(&format!("REPLICAOF: {reply}"));
    }
    let mut last_check = Instant::now();
    // The replica's output buffer on the master (INFO mem_clients_slaves):
    // the writes made during the sync wait there until the payload is sent.
    let mut repl_buf_peak = 0u64;
    loop {
        let (rss, pss) = memory(a.master_pid);
        rss_peak = rss_peak.max(rss);
        pss_peak = pss_peak.max(pss);
        if last_check.elapsed() >= Duration::from_millis(100) {
            last_check = Instant::now();
            let m = call(a.master_port, &[b"INFO", b"memory"]);
            let slaves = info_field(&m, "mem_clients_slaves").and_then(|v| v.parse::<u64>().ok());
            repl_buf_peak = repl_buf_peak.max(slaves.unwrap_or(0));
            let info = call(a.replica_port, &[b"INFO", b"replication"]);
            let up = info_field(&info, "master_link_status").as_deref() == Some("up");
            let syncing = info_field(&info, "master_sync_in_progress").as_deref() == Some("1");
            if up && !syncing {
                break;
            }
            if t0.elapsed() > Duration::from_secs(600) {
                die("no sync after 600 s");
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let sync_s = t0.elapsed().as_secs_f64();
    window.store(false, Relaxed);
    stop.store(true, Relaxed);
    for t in threads {
        let _ = t.join();
    }
    let mut l = std::mem::take(&mut *lat.lock().unwrap());
    l.sort_unstable();
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    println!(
        "rss_before_mb={:.1} rss_peak_mb={:.1} rss_ratio={:.3} pss_before_mb={:.1} pss_peak_mb={:.1} pss_ratio={:.3} sync_s={:.2} sets_per_s={:.0} repl_buf_peak_mb={:.1} p50_ms={:.3} p99_ms={:.3} p999_ms={:.3} max_ms={:.3}",
        mb(rss0),
        mb(rss_peak),
        rss_peak as f64 / rss0.max(1) as f64,
        mb(pss0),
        mb(pss_peak),
        pss_peak as f64 / pss0.max(1) as f64,
        sync_s,
        done.load(Relaxed) as f64 / sync_s,
        mb(repl_buf_peak),
        pct(&l, 0.50),
        pct(&l, 0.99),
        pct(&l, 0.999),
        l.last().copied().unwrap_or(0) as f64 / 1000.0,
    );
}
