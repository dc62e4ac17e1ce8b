//! Latency of single inserts while a table grows from empty to N entries
//! (default 20M), for dash and for hashbrown (not pre-sized).
//!
//! cargo run --release -p dash --example growth_latency [-- MILLIONS [cpu]]
//! cargo run --release -p dash --example growth_latency -- MILLIONS repeat R
//!
//! With `cpu` each insert is timed with the thread's CPU-time clock
//! (`CLOCK_THREAD_CPUTIME_ID`, x86_64 Linux) instead of wall time, so time
//! the thread spent preempted by other processes is not counted: on a shared
//! machine the wall-clock maximum is a scheduler figure, not a table figure.
//! The clock is a real system call (~0.3-1 us per read), which inflates the
//! small percentiles; read the maximum.
//!
//! With `repeat R` each table grows R times, each time in a fresh process
//! (so every run starts from the same empty heap and pays the same page
//! faults), and each insert is reported by its *fastest* time over the R
//! runs. The table and the keys are deterministic, so insert #i does the
//! same work in every run: a split is slow in all of them, while a stall of
//! the machine (a preempted vCPU, a host interrupt) lands on a different
//! insert each time and drops out of the minimum. The maximum of these
//! minimums is the slowest insert the table itself causes; the raw maximum
//! of every run is printed as well.
mod common;
use common::*;
use std::time::Instant;

/// Nanoseconds of CPU time used by this thread.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn thread_cpu_ns() -> u64 {
    let mut ts = [0i64; 2]; // struct timespec { tv_sec, tv_nsec }
    let ret: i64;
    // SAFETY: clock_gettime(CLOCK_THREAD_CPUTIME_ID = 3, &ts) is system call
    // 228 on x86_64 Linux; it writes one timespec to `ts`, which is live and
    // large enough, and clobbers only rcx and r11 (declared).
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") 228i64 => ret,
            in("rdi") 3i64,
            in("rsi") ts.as_mut_ptr(),
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    assert_eq!(ret, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    ts[0] as u64 * 1_000_000_000 + ts[1] as u64
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn thread_cpu_ns() -> u64 {
    panic!("the cpu mode needs x86_64 Linux")
}

/// Times `f` in wall-clock or thread-CPU nanoseconds.
#[inline(always)]
fn timed(cpu: bool, f: impl FnOnce()) -> u32 {
    let ns = if cpu {
        let t0 = thread_cpu_ns();
        f();
        thread_cpu_ns() - t0
    } else {
        let t0 = Instant::now();
        f();
        t0.elapsed().as_nanos() as u64
    };
    ns.min(u32::MAX as u64) as u32
}

/// Prints the distribution of `ns`, with the growth's total seconds if known.
fn report(name: &str, mut ns: Vec<u32>, total: Option<f64>) {
    ns.sort_unstable();
    let n = ns.len();
    let q = |p: f64| ns[((n as f64 * p) as usize).min(n - 1)];
    let total = total.map_or(String::new(), |t| format!(" total_s={t:.2}"));
    println!(
        "{name}: inserts={n}{total} mean_ns={:.0} p50_ns={} p99_ns={} p99.99_ns={} max_us={:.1}",
        ns.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        q(0.5),
        q(0.99),
        q(0.9999),
        ns[n - 1] as f64 / 1000.0
    );
}

/// One growth of dash from empty to `n` entries: each insert's time, the
/// total seconds, and a summary of the inserts over 50 us.
fn grow_dash(n: u64, cpu: bool) -> (Vec<u32>, f64, String) {
    let mut ns: Vec<u32> = vec![0; n as usize];
    let mut slow: Vec<(u32, u64, bool, bool)> = Vec::new();
    let mut t = new_dash();
    let start = Instant::now();
    for i in 0..n {
        let k = key(i);
        let h = hash_key(&k);
        let (segs, gd) = (t.segment_count(), t.global_depth());
        ns[i as usize] = timed(cpu, || {
            t.insert(h, (k, [i, i]), |e| e.0 == k);
        });
        if ns[i as usize] > 50_000 {
            slow.push((
                ns[i as usize],
                i,
                t.segment_count() != segs,
                t.global_depth() != gd,
            ));
        }
    }
    let total = start.elapsed().as_secs_f64();
    slow.sort_unstable_by(|a, b| b.cmp(a));
    let mut out = format!(
        "dash inserts > 50 us: {} ({} of them split a segment, {} doubled the directory); slowest:",
        slow.len(),
        slow.iter().filter(|s| s.2).count(),
        slow.iter().filter(|s| s.3).count()
    );
    for (ns, i, split, dbl) in slow.iter().take(8) {
        out += &format!(
            "\n  insert #{i}: {:.1} us split={split} doubling={dbl}",
            *ns as f64 / 1000.0
        );
    }
    (ns, total, out)
}

/// One growth of hashbrown (not pre-sized) from empty to `n` entries.
fn grow_hashbrown(n: u64, cpu: bool) -> (Vec<u32>, f64) {
    let mut ns: Vec<u32> = vec![0; n as usize];
    let mut t: hashbrown::HashMap<Key, [u64; 2], BuildPass> = hashbrown::HashMap::default();
    let start = Instant::now();
    for i in 0..n {
        let k = key(i);
        ns[i as usize] = timed(cpu, || {
            t.insert(k, [i, i]);
        });
    }
    (ns, start.elapsed().as_secs_f64())
}

/// Runs `runs` growths of `table`, each in a child process, and reports
/// every insert by its fastest time (see the module docs).
fn repeated(millions: u64, table: &str, runs: usize) {
    let exe = std::env::current_exe().expect("own path");
    let mut all: Vec<Vec<u32>> = Vec::new();
    for r in 0..runs {
        let out = std::process::Command::new(&exe)
            .args([&millions.to_string(), "child", table])
            .stderr(std::process::Stdio::inherit())
            .output()
            .expect("run a child growth");
        assert!(out.status.success(), "child run failed");
        let ns: Vec<u32> = out
            .stdout
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let max = ns.iter().max().copied().unwrap_or(0);
        println!("{table} run {}: max_us={:.1}", r + 1, max as f64 / 1000.0);
        all.push(ns);
    }
    let n = all[0].len();
    let fastest: Vec<u32> = (0..n)
        .map(|i| all.iter().map(|run| run[i]).min().unwrap())
        .collect();
    // The five slowest by their fastest run: a partial selection, not a
    // sort of every index.
    let mut order: Vec<usize> = (0..n).collect();
    let top = 5.min(n);
    if top < n {
        order.select_nth_unstable_by_key(top, |&i| std::cmp::Reverse(fastest[i]));
    }
    order.truncate(top);
    order.sort_unstable_by_key(|&i| std::cmp::Reverse(fastest[i]));
    report(&format!("{table} fastest-of-{runs}"), fastest, None);
    println!("{table} slowest inserts by their fastest run (us in each run):");
    for &i in &order {
        let each: Vec<String> = all
            .iter()
            .map(|run| format!("{:.1}", run[i] as f64 / 1000.0))
            .collect();
        println!("  insert #{i}: {}", each.join(", "));
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let millions: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(20);
    let n = millions * 1_000_000;
    match args.get(1).map(String::as_str) {
        Some("child") => {
            // One wall-clock growth; timings to stdout, little-endian u32.
            let ns = match args.get(2).map(String::as_str) {
                Some("hashbrown") => grow_hashbrown(n, false).0,
                _ => grow_dash(n, false).0,
            };
            let bytes: Vec<u8> = ns.iter().flat_map(|x| x.to_le_bytes()).collect();
            std::io::Write::write_all(&mut std::io::stdout(), &bytes).expect("write timings");
        }
        Some("repeat") => {
            let runs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
            println!("clock: wall, each insert's fastest of {runs} runs");
            repeated(millions, "dash", runs);
            repeated(millions, "hashbrown", runs);
        }
        mode => {
            let cpu = mode == Some("cpu");
            println!("clock: {}", if cpu { "thread CPU time" } else { "wall" });
            let (ns, total, slow) = grow_dash(n, cpu);
            report("dash", ns, Some(total));
            println!("{slow}");
            let (ns, total) = grow_hashbrown(n, cpu);
            report("hashbrown", ns, Some(total));
        }
    }
}
