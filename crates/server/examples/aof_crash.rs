//! AOF crash rounds, many times: clients append to their own lists at full
//! speed (pipelined), the server is killed with SIGKILL after a random
//! time, restarted on the same directory (which keeps growing across
//! rounds, so later restarts load larger files and often cut a truncated
//! tail), and every list is checked against what its client saw
//! acknowledged. See `tests/common/crash.rs` for the rules.
//!
//! ```sh
//! cargo build --release -p server --bin petrel --example aof_crash
//! target/release/examples/aof_crash [--rounds 20] [--clients 16] [--pipeline 8] \
//!     [--fsync always,everysec] [--threads 2] [--bin target/release/petrel] \
//!     [--rewrite yes|no]
//! ```
//! With `--rewrite yes` (the default) every other round sends BGREWRITEAOF
//! at a random moment of the load, so kills also land during the
//! background rewrite and just after its switch of files.
//! ```
//! ```
//! Prints one line per round and a summary per policy; exits non-zero if
//! any acknowledged write was lost under `always`, any write acknowledged
//! more than 2 s before the kill under `everysec`, or any restart failed.

#[path = "../tests/common/crash.rs"]
mod crash;

use std::time::Duration;

fn arg(args: &[String], name: &str, default: &str) -> String {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| default.to_string())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = arg(&args, "--rounds", "20").parse().unwrap();
    let clients: usize = arg(&args, "--clients", "16").parse().unwrap();
    let pipeline: usize = arg(&args, "--pipeline", "8").parse().unwrap();
    let threads: usize = arg(&args, "--threads", "2").parse().unwrap();
    let bin = arg(&args, "--bin", "target/release/petrel");
    let rewrite = arg(&args, "--rewrite", "yes") == "yes";
    let mut failed = false;
    for fsync in arg(&args, "--fsync", "always,everysec").split(',') {
        let dir =
            std::env::temp_dir().join(format!("petrel-aof-crash-{fsync}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut total = crash::Outcome::default();
        let mut truncated = 0;
        let mut slowest = Duration::ZERO;
        let mut seed = std::process::id() as u64 | 1;
        for r in 0..rounds {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let cfg = crash::Config {
                bin: bin.clone().into(),
                dir: dir.clone(),
                port,
                fsync: fsync.to_string(),
                clients,
                pipeline,
                run: Duration::from_millis(300 + seed % 1700),
                threads,
                // Every other round a BGREWRITEAOF at a random moment
                // before the kill.
                rewrite_after: (rewrite && r % 2 == 1)
                    .then(|| Duration::from_millis(100 + (seed >> 20) % 1500)),
            };
            match crash::round(&cfg, r) {
                Ok(o) => {
                    println!(
                        "{fsync:8} round {r:3}: run {:5} ms, acked {:8}, present {:8}, lost acked {}, lost >2s {}, present unacked {}, restart {:6.1} ms{}",
                        cfg.run.as_millis(),
                        o.acked,
                        o.present,
                        o.lost_acked,
                        o.lost_old,
                        o.unacked_present,
                        o.restart.as_secs_f64() * 1000.0,
                        if o.truncated { ", truncated tail cut" } else { "" }
                    );
                    if let Some(t) = cfg.rewrite_after {
                        println!(
                            "{fsync:8} round {r:3}: (BGREWRITEAOF sent at {} ms)",
                            t.as_millis()
                        );
                    }
                    let bad = if fsync == "always" {
                        o.lost_acked > 0
                    } else {
                        o.lost_old > 0
                    };
                    failed |= bad;
                    total.acked += o.acked;
                    total.present += o.present;
                    total.lost_acked += o.lost_acked;
                    total.lost_old += o.lost_old;
                    total.unacked_present += o.unacked_present;
                    truncated += o.truncated as usize;
                    slowest = slowest.max(o.restart);
                }
                Err(e) => {
                    println!("{fsync:8} round {r:3}: FAILED: {e}");
                    failed = true;
                    break;
                }
            }
        }
        let size: u64 = std::fs::read_dir(dir.join("appendonlydir"))
            .map(|d| {
                d.filter_map(|e| e.ok()?.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0);
        println!(
            "{fsync}: {rounds} rounds, {} writes acknowledged, {} lost (acked), {} lost older than 2 s, {} present but unacknowledged, {truncated} restarts cut a truncated tail, slowest restart {:.1} ms, final AOF {:.1} MiB",
            total.acked,
            total.lost_acked,
            total.lost_old,
            total.unacked_present,
            slowest.as_secs_f64() * 1000.0,
            size as f64 / (1 << 20) as f64
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    if failed {
        std::process::exit(1);
    }
}
