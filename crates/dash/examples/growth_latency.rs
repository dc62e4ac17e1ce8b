//! Latency of single inserts while a table grows from empty to N entries
//! (default 20M), for dash and for hashbrown (not pre-sized).
//!
//! cargo run --release -p dash --example growth_latency [-- MILLIONS [cpu]]
//!
//! With `cpu` each insert is timed with the thread's CPU-time clock
//! (`CLOCK_THREAD_CPUTIME_ID`, x86_64 Linux) instead of wall time, so time
//! the thread spent preempted by other processes is not counted: on a shared
//! machine the wall-clock maximum is a scheduler figure, not a table figure.
//! The clock is a real system call (~0.3-1 us per read), which inflates the
//! small percentiles; read the maximum.
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

fn report(name: &str, mut ns: Vec<u32>, total: f64) {
    ns.sort_unstable();
    let n = ns.len();
    let q = |p: f64| ns[((n as f64 * p) as usize).min(n - 1)];
    println!(
        "{name}: inserts={n} total_s={total:.2} mean_ns={:.0} p50_ns={} p99_ns={} p99.99_ns={} max_us={:.1}",
        ns.iter().map(|&x| x as f64).sum::<f64>() / n as f64,
        q(0.5),
        q(0.99),
        q(0.9999),
        ns[n - 1] as f64 / 1000.0
    );
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
        * 1_000_000;
    let cpu = std::env::args().nth(2).as_deref() == Some("cpu");
    println!("clock: {}", if cpu { "thread CPU time" } else { "wall" });
    let mut ns: Vec<u32> = vec![0; n as usize];
    {
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
        report("dash", ns.clone(), total);
        slow.sort_unstable_by(|a, b| b.cmp(a));
        let splits = slow.iter().filter(|s| s.2).count();
        println!(
            "dash inserts > 50 us: {} ({} of them split a segment, {} doubled the directory); slowest:",
            slow.len(),
            splits,
            slow.iter().filter(|s| s.3).count()
        );
        for (ns, i, split, dbl) in slow.iter().take(8) {
            println!(
                "  insert #{i}: {:.1} us split={split} doubling={dbl}",
                *ns as f64 / 1000.0
            );
        }
    }
    {
        let mut t: hashbrown::HashMap<Key, [u64; 2], BuildPass> = hashbrown::HashMap::default();
        let start = Instant::now();
        for i in 0..n {
            let k = key(i);
            ns[i as usize] = timed(cpu, || {
                t.insert(k, [i, i]);
            });
        }
        let total = start.elapsed().as_secs_f64();
        report("hashbrown", ns, total);
    }
}
