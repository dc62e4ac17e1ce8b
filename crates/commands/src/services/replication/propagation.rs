//! What a replica (its master's stream) and the AOF loader (the file's
//! commands) do when a propagated command goes wrong, as Redis 7.0 does.
//!
//! * **An error reply** to a propagated command means the dataset has
//!   diverged from the one that produced the stream. It is logged as
//!   `== CRITICAL == This replica is sending an error to its master: ...`
//!   (the AOF loader: `This server is sending an error to its
//!   AOF-loading-client`), counted in INFO's `unexpected_error_replies`,
//!   and with `propagation-error-behavior panic` (or `panic-on-replicas`,
//!   for a read-only replica's master stream) the server stops at once
//!   rather than go on with diverged data.
//! * **A write the replica cannot persist** (a failed background save
//!   under `stop-writes-on-bgsave-error`, a failing AOF) would be refused
//!   with `-MISCONF` to a client; from the master it cannot be refused
//!   without diverging, so the replica stops
//!   (`replica-ignore-disk-write-errors no`, the default) or applies it
//!   and logs a warning at most every 10 seconds (`yes`).
//!
//! Stopping logs the reason and exits with status 1, as Redis's
//! `serverPanic` ends the process. The setting's values are
//! `kernel::config::params::replication::PROPAGATION_ERROR_NAMES`.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::base::log::{log, LogLevel};
use crate::kernel::config::Settings;
use crate::kernel::server::Server;

const PANIC: u8 = 1;
const PANIC_ON_REPLICAS: u8 = 2;

/// Who applies a propagated stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applier {
    /// A replica applying its master's stream.
    Replica,
    /// The AOF loader replaying the file.
    AofLoader,
}

impl Applier {
    /// (this server as it names itself, the client it answers).
    fn names(self) -> (&'static str, &'static str) {
        match self {
            Applier::Replica => ("replica", "master"),
            Applier::AofLoader => ("server", "AOF-loading-client"),
        }
    }
}

/// Ends the process after logging `msg` (Redis's `serverPanic`).
fn stop(msg: &str) -> ! {
    log(
        LogLevel::Warning,
        "------------------------------------------------",
    );
    log(LogLevel::Warning, &format!("Guru Meditation: {msg}"));
    std::process::exit(1)
}

/// The error line of `reply` (one RESP reply), without `-` and CRLF.
fn error_of(reply: &[u8]) -> Option<&[u8]> {
    let rest = reply.strip_prefix(b"-")?;
    let end = rest
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// After a propagated command `cmd` (its full name) ran and answered
/// `reply`: an error reply is logged and counted, and stops the server
/// when `propagation-error-behavior` says so (module docs).
pub fn after_reply(srv: &Server, settings: &Settings, who: Applier, cmd: &str, reply: &[u8]) {
    let Some(err) = error_of(reply) else {
        return;
    };
    let (from, to) = who.names();
    let err = &err[..err.len().min(4096)];
    log(
        LogLevel::Warning,
        &format!(
            "== CRITICAL == This {from} is sending an error to its {to}: '{}' after processing the command '{cmd}'",
            String::from_utf8_lossy(err)
        ),
    );
    srv.stats.unexpected_error_replies.fetch_add(1, Relaxed);
    let behavior = settings.repl.propagation_error;
    let stops = match who {
        Applier::Replica => {
            settings.repl.read_only && (behavior == PANIC || behavior == PANIC_ON_REPLICAS)
        }
        Applier::AofLoader => behavior == PANIC,
    };
    if stops {
        stop(&format!(
            "This {from} panicked sending an error to its {to} after processing the command '{cmd}'"
        ));
    }
}

/// Before this replica applies a write from its master: when its disk
/// writes fail, stop (`replica-ignore-disk-write-errors no`) or go on
/// with a warning every 10 seconds (module docs).
pub fn before_master_write(srv: &Server, settings: &Settings) {
    let failing = crate::services::snapshot::writes_refused(srv, settings)
        || crate::services::aof::write_error(srv).is_some();
    if !failing {
        return;
    }
    if !settings.repl.ignore_disk_write_errors {
        stop("Replica was unable to write command to disk.");
    }
    static LAST_LOG_MS: AtomicU64 = AtomicU64::new(0);
    let now = crate::base::clock::unix_time_ms();
    let last = LAST_LOG_MS.load(Relaxed);
    if now >= last + 10_000
        && LAST_LOG_MS
            .compare_exchange(last, now, Relaxed, Relaxed)
            .is_ok()
    {
        log(
            LogLevel::Warning,
            "Replica is applying a command even though it is unable to write to disk.",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_of_takes_the_error_line_only() {
        assert_eq!(error_of(b"-ERR no\r\n"), Some(&b"ERR no"[..]));
        assert_eq!(
            error_of(b"-WRONGTYPE x\r\n-ERR y\r\n"),
            Some(&b"WRONGTYPE x"[..])
        );
        assert_eq!(error_of(b"+OK\r\n"), None);
        assert_eq!(error_of(b""), None);
    }
}
