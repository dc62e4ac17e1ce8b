//! Logging in Redis's format (`pid:M 22 Nov 2026 03:57:10.123 * text`), to
//! stdout or `logfile`, filtered by `loglevel` (which CONFIG SET may change at
//! any time, so the level is an atomic). Every layer logs through here; the
//! binary calls [`init`] once at startup.

use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

use parking_lot::Mutex;

/// Redis's log levels, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Verbose,
    Notice,
    Warning,
}

impl LogLevel {
    /// Redis 7.0's levels ("nothing" only arrived in 7.2).
    pub const NAMES: &'static [&'static str] = &["debug", "verbose", "notice", "warning"];
    pub fn from_index(i: usize) -> LogLevel {
        [
            LogLevel::Debug,
            LogLevel::Verbose,
            LogLevel::Notice,
            LogLevel::Warning,
        ][i]
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(LogLevel::Notice as u8);
static FILE: Mutex<Option<std::fs::File>> = Mutex::new(None);

pub fn init(level: LogLevel, logfile: &str) -> std::io::Result<()> {
    LEVEL.store(level as u8, Ordering::Relaxed);
    if !logfile.is_empty() {
        let f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(logfile)?;
        *FILE.lock() = Some(f);
    }
    Ok(())
}

pub fn set_level(level: LogLevel) {
    LEVEL.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: LogLevel) -> bool {
    level as u8 >= LEVEL.load(Ordering::Relaxed)
}

pub fn log(level: LogLevel, msg: &str) {
    if !enabled(level) {
        return;
    }
    let mark = match level {
        LogLevel::Debug => '.',
        LogLevel::Verbose => '-',
        LogLevel::Notice => '*',
        _ => '#',
    };
    let line = format!(
        "{}:M {} {} {}\n",
        std::process::id(),
        timestamp(),
        mark,
        msg
    );
    let mut f = FILE.lock();
    match f.as_mut() {
        Some(file) => {
            let _ = file.write_all(line.as_bytes());
        }
        None => {
            let _ = std::io::stdout().write_all(line.as_bytes());
        }
    }
}

/// "22 Nov 2026 03:57:10.123" in UTC.
fn timestamp() -> String {
    let ms = crate::base::clock::unix_time_ms();
    let secs = (ms / 1000) as i64;
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    let (y, m, d) = civil_from_days(days);
    const MON: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{:02} {} {} {:02}:{:02}:{:02}.{:03}",
        d,
        MON[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian.
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Logs at notice level (`*`).
pub fn notice(msg: &str) {
    log(LogLevel::Notice, msg);
}

/// Logs at warning level (`#`).
pub fn warning(msg: &str) {
    log(LogLevel::Warning, msg);
}

/// Logs at verbose level (`-`).
pub fn verbose(msg: &str) {
    log(LogLevel::Verbose, msg);
}

#[cfg(test)]
mod tests {
    #[test]
    fn civil() {
        assert_eq!(super::civil_from_days(0), (1970, 1, 1));
        assert_eq!(super::civil_from_days(20_414), (2025, 11, 22));
    }
}
