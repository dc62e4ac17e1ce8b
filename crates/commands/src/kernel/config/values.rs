//! Parsing and formatting of setting values with Redis's rules and error
//! texts: booleans, memory units, bounded integers, enumerations, and the
//! composite values (`client-output-buffer-limit`, the latency percentiles).

use super::settings::{OutputLimit, Settings};

pub fn parse_bool(v: &str) -> Result<bool, String> {
    match v.to_ascii_lowercase().as_str() {
        "yes" => Ok(true),
        "no" => Ok(false),
        _ => Err("argument must be 'yes' or 'no'".into()),
    }
}

pub fn fmt_bool(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

/// Parses Redis memory units: `1k` = 1000, `1kb` = 1024, `1m`, `1mb`, `1g`, `1gb` (case-insensitive).
pub fn parse_memory(v: &str) -> Option<u64> {
    let l = v.to_ascii_lowercase();
    let (num, mul): (&str, u64) = if let Some(n) = l.strip_suffix("gb") {
        (n, 1 << 30)
    } else if let Some(n) = l.strip_suffix("mb") {
        (n, 1 << 20)
    } else if let Some(n) = l.strip_suffix("kb") {
        (n, 1 << 10)
    } else if let Some(n) = l.strip_suffix('g') {
        (n, 1_000_000_000)
    } else if let Some(n) = l.strip_suffix('m') {
        (n, 1_000_000)
    } else if let Some(n) = l.strip_suffix('k') {
        (n, 1000)
    } else if let Some(n) = l.strip_suffix('b') {
        (n, 1)
    } else {
        (l.as_str(), 1)
    };
    if !num.bytes().all(|b| b.is_ascii_digit()) || num.len() >= 128 {
        return None;
    }
    // Redis's memtoull reads no digits as 0: `CONFIG SET maxmemory ""` and
    // `1kb`'s bare `kb` are accepted (found by the differential fuzzer).
    if num.is_empty() {
        return Some(0);
    }
    // And as memtoull: strtoull saturates at u64::MAX (ERANGE is not an
    // error), the unit multiplies with wrap-around, more than 127 digits
    // are refused.
    Some(num.parse::<u64>().unwrap_or(u64::MAX).wrapping_mul(mul))
}

/// Formats memory as Redis's CONFIG GET does (plain bytes).
pub fn fmt_memory(v: u64) -> String {
    v.to_string()
}

pub fn int_in(v: &str, min: i64, max: i64) -> Result<i64, String> {
    // Redis's string2ll: no '+' sign (Rust's parse would take "+1").
    let n: i64 = crate::base::parse::parse_i64(v.as_bytes())
        .ok_or_else(|| "argument couldn't be parsed into an integer".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

pub fn memory_in(v: &str, min: u64, max: u64) -> Result<u64, String> {
    let n = parse_memory(v).ok_or_else(|| "argument must be a memory value".to_string())?;
    if n < min || n > max {
        return Err(format!(
            "argument must be between {min} and {max} inclusive"
        ));
    }
    Ok(n)
}

pub fn enum_of(v: &str, names: &[&str]) -> Result<usize, String> {
    names
        .iter()
        .position(|n| n.eq_ignore_ascii_case(v))
        .ok_or_else(|| {
            format!(
                "argument(s) must be one of the following: {}",
                names.join(", ")
            )
        })
}

pub const ENABLEMENT: &[&str] = &["no", "yes", "local"];

pub fn fmt_output_limits(s: &Settings) -> String {
    let f = |n: &str, l: &OutputLimit| format!("{n} {} {} {}", l.hard, l.soft, l.soft_seconds);
    format!(
        "{} {} {}",
        f("normal", &s.output_normal),
        f("slave", &s.output_replica),
        f("pubsub", &s.output_pubsub)
    )
}

pub fn set_output_limits(s: &mut Settings, v: &str) -> Result<(), String> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.is_empty() || !parts.len().is_multiple_of(4) {
        return Err("Wrong number of arguments in buffer limit configuration.".into());
    }
    let mut staged = (s.output_normal, s.output_replica, s.output_pubsub);
    for c in parts.chunks(4) {
        let hard = parse_memory(c[1])
            .ok_or("Error in hard, soft or soft_seconds setting in buffer limit configuration.")?;
        let soft = parse_memory(c[2])
            .ok_or("Error in hard, soft or soft_seconds setting in buffer limit configuration.")?;
        let secs: u64 = c[3].parse().map_err(|_| {
            "Error in hard, soft or soft_seconds setting in buffer limit configuration."
        })?;
        let l = OutputLimit {
            hard,
            soft,
            soft_seconds: secs,
        };
        match c[0].to_ascii_lowercase().as_str() {
            "normal" => staged.0 = l,
            "slave" | "replica" => staged.1 = l,
            "pubsub" => staged.2 = l,
            _ => {
                return Err("Invalid client class specified in buffer limit configuration.".into())
            }
        }
    }
    (s.output_normal, s.output_replica, s.output_pubsub) = staged;
    Ok(())
}

pub fn fmt_percentiles(v: &[f64]) -> String {
    v.iter()
        .map(|p| crate::base::parse::fmt_g(*p))
        .collect::<Vec<_>>()
        .join(" ")
}

pub const PERCENTILES_ERR: &str =
    "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]";

pub fn set_percentiles(s: &mut Settings, v: &str) -> Result<(), String> {
    let mut out = Vec::new();
    for t in v.split_whitespace() {
        // Redis's string2d: strtod, no NaN, under 128 characters.
        let p = (t.len() < 128)
            .then(|| crate::base::parse::get_double(t.as_bytes()))
            .flatten()
            .ok_or_else(|| "Invalid latency-tracking-info-percentiles parameters".to_string())?;
        if !(0.0..=100.0).contains(&p) {
            return Err(PERCENTILES_ERR.into());
        }
        out.push(p);
    }
    s.latency_tracking_info_percentiles = out;
    Ok(())
}

pub fn default_threads() -> String {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .to_string()
}

pub fn count_limit(v: &str) -> Result<usize, String> {
    Ok(int_in(v, 0, i64::MAX)? as usize)
}

pub fn bytes_limit(v: &str) -> Result<usize, String> {
    Ok(memory_in(v, 0, i64::MAX as u64)? as usize)
}

/// How two values of a setting compare (for [`only_default`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Same {
    /// yes/no, any case.
    Bool,
    /// Integers by value.
    Int,
    /// Memory amounts with units (`64mb` = `67108864`).
    Mem,
    /// A word, any case.
    Word,
    /// Words separated by blanks, exact.
    Words,
    /// Integers by value, which Redis takes only in `lo..=hi`.
    IntIn(i64, i64),
    /// One of these words, any case (Redis's enum settings).
    OneOf(&'static [&'static str]),
}

impl Same {
    fn eq(self, a: &str, b: &str) -> bool {
        match self {
            Same::Bool => parse_bool(a).ok().is_some_and(|x| parse_bool(b) == Ok(x)),
            Same::Int => a
                .trim()
                .parse::<i64>()
                .ok()
                .is_some_and(|x| b.trim().parse::<i64>() == Ok(x)),
            Same::Mem => parse_memory(a.trim()).is_some_and(|x| parse_memory(b.trim()) == Some(x)),
            Same::IntIn(..) => Same::Int.eq(a, b),
            Same::Word | Same::OneOf(_) => a.trim().eq_ignore_ascii_case(b.trim()),
            Same::Words => a.split_whitespace().eq(b.split_whitespace()),
        }
    }
}

/// The setter of a setting whose `feature` Petrel does not have: accepts
/// the default (which changes nothing), refuses anything else naming the
/// setting and the feature.
pub fn only_default(
    name: &str,
    feature: &str,
    same: Same,
    default: &str,
    v: &str,
) -> Result<(), String> {
    if same.eq(v, default) {
        return Ok(());
    }
    // A value Redis could not even parse gets Redis's parse error first
    // (found by the differential fuzzer: a 5 KiB number for
    // active-expire-effort).
    match same {
        Same::Bool => {
            parse_bool(v)?;
        }
        Same::Int => {
            int_in(v, i64::MIN, i64::MAX)?;
        }
        Same::Mem => {
            memory_in(v, 0, u64::MAX)?;
        }
        Same::IntIn(lo, hi) => {
            int_in(v, lo, hi)?;
        }
        Same::OneOf(names) => {
            enum_of(v, names)?;
        }
        Same::Word | Same::Words => {}
    }
    let shown = if default.is_empty() { "\"\"" } else { default };
    Err(format!(
        "'{name}' is set to '{v}', but Petrel does not support {feature} yet: only the default ({shown}) is accepted"
    ))
}

/// `save`: pairs of seconds (>= 1) and changes (>= 0), or nothing.
pub fn parse_save_points(v: &str) -> Result<Vec<super::settings::SavePoint>, String> {
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.len() % 2 == 1 {
        return Err("Invalid save parameters".into());
    }
    words
        .chunks(2)
        .map(|c| {
            let seconds = c[0].parse::<i64>().ok().filter(|&x| x >= 1);
            let changes = c[1].parse::<i64>().ok().filter(|&x| x >= 0);
            match (seconds, changes) {
                (Some(seconds), Some(changes)) => Ok(super::settings::SavePoint {
                    seconds: seconds as u64,
                    changes: changes as u64,
                }),
                _ => Err("Invalid save parameters".into()),
            }
        })
        .collect()
}

/// `save` as CONFIG GET prints it.
pub fn fmt_save_points(v: &[super::settings::SavePoint]) -> String {
    v.iter()
        .map(|p| format!("{} {}", p.seconds, p.changes))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `shutdown-on-sigterm`/`shutdown-on-sigint` flags.
pub fn parse_shutdown_flags(v: &str) -> Result<super::settings::ShutdownFlags, String> {
    let mut f = super::settings::ShutdownFlags::default();
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.is_empty() {
        return Err(
            "argument(s) must be one of the following: default, save, nosave, now, force".into(),
        );
    }
    for w in &words {
        match w.to_ascii_lowercase().as_str() {
            "default" if words.len() == 1 => {}
            "save" => f.save = true,
            "nosave" => f.nosave = true,
            "now" => f.now = true,
            "force" => f.force = true,
            _ => {
                return Err(
                    "argument(s) must be one of the following: default, save, nosave, now, force"
                        .into(),
                )
            }
        }
    }
    if f.save && f.nosave {
        return Err(
            "argument(s) must be one of the following: default, save, nosave, now, force".into(),
        );
    }
    Ok(f)
}

pub fn fmt_shutdown_flags(f: super::settings::ShutdownFlags) -> String {
    let mut w = Vec::new();
    if f.save {
        w.push("save");
    }
    if f.nosave {
        w.push("nosave");
    }
    if f.now {
        w.push("now");
    }
    if f.force {
        w.push("force");
    }
    if w.is_empty() {
        "default".into()
    } else {
        w.join(" ")
    }
}
