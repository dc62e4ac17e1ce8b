//! `LATENCY LATEST | HISTORY | RESET | HISTOGRAM | DOCTOR | GRAPH | HELP`.
//!
//! Events come from [`crate::kernel::slowlog::LatencyMonitor`] (the dispatcher adds
//! `command` / `fast-command` samples over `latency-monitor-threshold`);
//! histograms from the per-command [`crate::kernel::stats::CommandStats`].

use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;

use crate::kernel::ctx::Ctx;
use crate::kernel::slowlog::LatencyEvent;
use crate::kernel::spec::{flag, CommandSpec, Docs};
use crate::kernel::stats::CommandStats;
use crate::kernel::table::CommandEntry;

const F: u32 = flag::ADMIN | flag::NOSCRIPT | flag::LOADING | flag::STALE;

const SUBS: &[CommandSpec] = &[
    CommandSpec {
        docs: Docs::new(
            "O(N) where N is the number of commands with latency information being retrieved.",
            "Return the cumulative distribution of latencies of a subset of commands or all.",
        ),
        ..CommandSpec::new("histogram", -2, F, latency_histogram)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Return a human readable latency analysis report."),
        ..CommandSpec::new("doctor", 2, F, latency_doctor)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Return the latest latency samples for all events."),
        ..CommandSpec::new("latest", 2, F, latency_latest)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Return timestamp-latency samples for the event."),
        ..CommandSpec::new("history", 3, F, latency_history)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Return a latency graph for the event."),
        ..CommandSpec::new("graph", 3, F, latency_graph)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Reset latency data for one or more events."),
        ..CommandSpec::new("reset", -2, F, latency_reset)
    },
    CommandSpec {
        docs: Docs::new("O(1)", "Show helpful text about the different subcommands."),
        ..CommandSpec::new("help", 2, flag::LOADING | flag::STALE, latency_help)
    },
];

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    docs: Docs::new(
        "Depends on subcommand.",
        "A container for latency diagnostics commands",
    ),
    handler: None,
    subcommands: SUBS,
    ..CommandSpec::new("latency", -2, 0, latency_help)
}];

const HELP: &[&str] = &[
    "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return a human readable latency analysis report.",
    "GRAPH <event>",
    "    Return an ASCII latency graph for the <event> class.",
    "HISTORY <event>",
    "    Return time-latency samples for the <event> class.",
    "LATEST",
    "    Return the latest latency samples for all events.",
    "RESET [<event> ...]",
    "    Reset latency data of one or more <event> classes.",
    "    (default: reset all data for all event classes)",
    "HISTOGRAM [COMMAND ...]",
    "    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
    "    If no commands are specified then all histograms are replied.",
    "HELP",
    "    Prints this help.",
];

fn latency_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    ctx.reply_help(HELP);
}

fn latency_latest(ctx: &mut Ctx, _args: &[&[u8]]) {
    let events = ctx.srv.latency.snapshot();
    let events: Vec<(String, LatencyEvent)> = events
        .into_iter()
        .filter(|(_, e)| !e.samples.is_empty())
        .collect();
    ctx.out.array_len(events.len());
    for (name, e) in events {
        let (t, ms) = *e.samples.back().expect("non-empty");
        ctx.out.array_len(4);
        ctx.out.bulk(name.as_bytes());
        ctx.out.int(t);
        ctx.out.int(ms as i64);
        ctx.out.int(e.max as i64);
    }
}

fn latency_history(ctx: &mut Ctx, args: &[&[u8]]) {
    let name = String::from_utf8_lossy(args[2]);
    let Some(e) = ctx.srv.latency.get(&name) else {
        return ctx.out.array_len(0);
    };
    ctx.out.array_len(e.samples.len());
    for &(t, ms) in &e.samples {
        ctx.out.array_len(2);
        ctx.out.int(t);
        ctx.out.int(ms as i64);
    }
}

fn latency_reset(ctx: &mut Ctx, args: &[&[u8]]) {
    let names: Vec<String> = args[2..]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let n = ctx.srv.latency.reset(&names);
    ctx.out.int(n as i64);
}

/// Cumulative histogram like Redis's: (bucket bound in µs, calls so far),
/// only for buckets where the count grows. Bucket `i` of the per-command
/// histogram holds durations in [2^i, 2^(i+1)) ns; everything under 1024 ns
/// folds into the first (1 µs) bucket as in Redis.
pub fn cumulative_usec(st: &CommandStats) -> Vec<(u64, u64)> {
    let mut folded = [0u64; 64];
    for (i, b) in st.histogram_ns.iter().enumerate() {
        folded[i.max(9)] += b.load(Relaxed);
    }
    let mut out = Vec::new();
    let mut acc = 0u64;
    for (i, &n) in folded.iter().enumerate().skip(9) {
        if n == 0 {
            continue;
        }
        acc += n;
        let v: u64 = 1u64 << (i + 1).min(63);
        // Highest value equivalent to `v` at 2 significant digits, as HdrHistogram reports.
        let highest = v + v / 128 - 1;
        out.push((highest / 1000, acc));
    }
    out
}

fn reply_histogram(ctx: &mut Ctx, e: &CommandEntry) {
    let buckets = cumulative_usec(&e.snapshot());
    ctx.out.bulk(e.full_name.as_bytes());
    ctx.out.map_len(2);
    ctx.out.bulk(b"calls");
    ctx.out.int(e.snapshot().calls.load(Relaxed) as i64);
    ctx.out.bulk(b"histogram_usec");
    ctx.out.map_len(buckets.len());
    for (b, n) in buckets {
        ctx.out.int(b as i64);
        ctx.out.int(n as i64);
    }
}

fn has_histogram(e: &CommandEntry) -> bool {
    e.snapshot()
        .histogram_ns
        .iter()
        .any(|b| b.load(Relaxed) > 0)
}

fn latency_histogram(ctx: &mut Ctx, args: &[&[u8]]) {
    let srv = ctx.srv;
    let mut list: Vec<&CommandEntry> = Vec::new();
    if args.len() == 2 {
        list.extend(srv.table.entries.iter().filter(|e| has_histogram(e)));
    } else {
        for a in &args[2..] {
            let Some(e) = std::str::from_utf8(a)
                .ok()
                .and_then(|n| srv.table.by_full_name(n))
            else {
                continue;
            };
            if has_histogram(e) {
                list.push(e);
            }
            let mut subs: Vec<usize> = e.subs.values().copied().collect();
            subs.sort_unstable();
            for i in subs {
                let s = srv.table.get(i);
                if has_histogram(s) {
                    list.push(s);
                }
            }
        }
    }
    ctx.out.map_len(list.len());
    for e in list {
        reply_histogram(ctx, e);
    }
}

fn latency_graph(ctx: &mut Ctx, args: &[&[u8]]) {
    let name = String::from_utf8_lossy(args[2]).into_owned();
    let e = match ctx.srv.latency.get(&name) {
        Some(e) if !e.samples.is_empty() => e,
        _ => return ctx.error_with_arg("ERR No samples available for event '", args[2], "'"),
    };
    let text = graph_text(&name, &e, crate::base::clock::unix_time_ms() / 1000);
    ctx.out.verbatim(b"txt", text.as_bytes());
}

/// An ASCII chart of the samples like Redis's sparkline graph: 4 rows, one
/// column per sample (oldest left, 80 columns per band), filled with `|`
/// under a `_`/`o`/`#` top, then a blank line and each sample's age
/// written vertically.
pub fn graph_text(name: &str, e: &LatencyEvent, now_s: u64) -> String {
    const ROWS: usize = 4;
    const COLUMNS: usize = 80;
    const FILL: &[u8] = b"_o#";
    let high = e.samples.iter().map(|s| s.1).max().unwrap_or(0);
    let low = e.samples.iter().map(|s| s.1).min().unwrap_or(0);
    let mut t = format!(
        "{name} - high {high} ms, low {low} ms (all time high {} ms)\n",
        e.max
    );
    t.push_str(&"-".repeat(80));
    t.push('\n');
    let steps = FILL.len() * ROWS;
    let cols: Vec<(usize, String)> = e
        .samples
        .iter()
        .map(|&(ts, ms)| {
            let step = if high == low {
                0
            } else {
                (((ms - low) as f64 * steps as f64) / (high - low) as f64) as usize
            };
            (
                step.min(steps - 1),
                age_label(now_s.saturating_sub(ts as u64)),
            )
        })
        .collect();
    for band in cols.chunks(COLUMNS) {
        for row in (0..ROWS).rev() {
            for &(step, _) in band {
                let level = step / FILL.len();
                t.push(if level == row {
                    FILL[step % FILL.len()] as char
                } else if level > row {
                    '|'
                } else {
                    ' '
                });
            }
            t.push('\n');
        }
        t.push_str(&" ".repeat(band.len()));
        t.push('\n');
        let height = band.iter().map(|(_, l)| l.len()).max().unwrap_or(0);
        for r in 0..height {
            for (_, l) in band {
                t.push(l.as_bytes().get(r).map_or(' ', |&b| b as char));
            }
            t.push('\n');
        }
    }
    t
}

fn age_label(secs: u64) -> String {
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m", secs / 60)
    } else if secs < 86400 {
        format!("{}h", secs / 3600)
    } else {
        format!("{}d", secs / 86400)
    }
}

fn latency_doctor(ctx: &mut Ctx, _args: &[&[u8]]) {
    let text = doctor_text(
        (ctx.now_ms / 1000) as i64,
        ctx.settings.latency_monitor_threshold,
        ctx.settings.slowlog_log_slower_than,
        &ctx.srv.latency.snapshot(),
    );
    ctx.out.verbatim(b"txt", text.as_bytes());
}

/// The LATENCY DOCTOR report.
pub fn doctor_text(
    now_s: i64,
    threshold_ms: u64,
    slowlog_us: i64,
    events: &[(String, LatencyEvent)],
) -> String {
    if threshold_ms == 0 {
        return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/topics/latency-monitor.\n".into();
    }
    let events: Vec<&(String, LatencyEvent)> = events
        .iter()
        .filter(|(_, e)| !e.samples.is_empty())
        .collect();
    if events.is_empty() {
        return "Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n".into();
    }
    let mut t = String::from(
        "Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n",
    );
    for (i, (name, e)) in events.iter().enumerate() {
        let n = e.samples.len() as f64;
        let avg = e.samples.iter().map(|s| s.1 as f64).sum::<f64>() / n;
        let mad = e
            .samples
            .iter()
            .map(|s| (s.1 as f64 - avg).abs())
            .sum::<f64>()
            / n;
        // Seconds between spikes: time since the oldest sample (at least 1)
        // over the number of samples, as Redis computes it.
        let first = e.samples.front().map_or(0, |s| s.0);
        let period = (now_s - first).max(1) as f64 / n;
        let _ = writeln!(
            t,
            "{}. {name}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2} sec). Worst all time event {}ms.",
            i + 1,
            e.samples.len(),
            avg as u64,
            mad as u64,
            period,
            e.max
        );
    }
    t.push_str("\nI have a few advices for you:\n\n");
    if slowlog_us < 0 || slowlog_us as u64 >= threshold_ms * 1000 {
        let _ = writeln!(
            t,
            "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than {}'.",
            threshold_ms * 1000
        );
    }
    t.push_str("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n");
    t.push_str("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n");
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_match_redis_bounds() {
        let st = CommandStats::default();
        st.record(500, true); // < 1024 ns -> 1 us bucket
        st.record(20_000, true); // 16384..32768 -> 33 us
        st.record(30_000, true);
        st.record(300_000, true); // 262144..524288 -> 528 us
        assert_eq!(cumulative_usec(&st), vec![(1, 1), (33, 3), (528, 4)]);
    }

    #[test]
    fn graph_like_redis() {
        let mut e = LatencyEvent::default();
        e.samples.extend([(100, 50), (102, 20), (103, 30)]);
        e.max = 50;
        assert_eq!(
            graph_text("command", &e, 104),
            format!(
                "command - high 50 ms, low 20 ms (all time high 50 ms)\n{}\n#  \n|  \n| o\n|_|\n   \n421\nsss\n",
                "-".repeat(80)
            )
        );
    }

    #[test]
    fn doctor_texts() {
        assert!(doctor_text(100, 0, 10000, &[]).starts_with("I'm sorry, Dave"));
        assert!(doctor_text(100, 1, 10000, &[]).starts_with("Dave, no latency spike"));
        let mut e = LatencyEvent::default();
        e.samples.push_back((100, 50));
        e.max = 50;
        let t = doctor_text(100, 1, 10000, &[("command".into(), e)]);
        assert!(t.contains("1. command: 1 latency spikes (average 50ms, mean deviation 0ms, period 1.00 sec). Worst all time event 50ms."));
        assert!(t.contains("'CONFIG SET slowlog-log-slower-than 1000'"));
    }
}
