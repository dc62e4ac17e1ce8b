//! Telling a service supervisor what the server is doing, as Redis's
//! `supervised` setting does: under systemd (`Type=notify` units, as
//! Debian's redis-server unit), status lines and `READY=1` /
//! `STOPPING=1` datagrams to `$NOTIFY_SOCKET`; under upstart
//! (`expect stop`), the process stops itself (SIGSTOP) once started.
//!
//! Invariants: the mode is settled once at startup ([`detect`], then
//! [`start`]); [`notify`] sends nothing unless systemd supervision was
//! started. Nothing here knows commands or servers.

use std::sync::OnceLock;

use crate::base::log::{log, LogLevel};

/// `supervised` values, in [`Mode`] order.
pub const MODE_NAMES: &[&str] = &["no", "upstart", "systemd", "auto"];

/// A supervision mode (`auto` resolved by [`detect`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    No,
    Upstart,
    Systemd,
}

/// The notify socket's address once systemd supervision has started.
static SYSTEMD: OnceLock<String> = OnceLock::new();

/// The mode `setting` (an index of [`MODE_NAMES`]) asks for, `auto`
/// resolved from the environment (`UPSTART_JOB`, then `NOTIFY_SOCKET`),
/// and No when the supervisor it names is not there. Pure: call it
/// before daemonizing (a supervised server does not daemonize).
pub fn detect(setting: usize) -> Mode {
    let has = |v: &str| std::env::var_os(v).is_some_and(|s| !s.is_empty());
    match setting {
        1 if has("UPSTART_JOB") => Mode::Upstart,
        2 if has("NOTIFY_SOCKET") => Mode::Systemd,
        3 if has("UPSTART_JOB") => Mode::Upstart,
        3 if has("NOTIFY_SOCKET") => Mode::Systemd,
        _ => Mode::No,
    }
}

/// Starts supervision (logging ready): logs what Redis logs for
/// `setting` resolved to `mode`; upstart: stops the process until the
/// supervisor continues it; systemd: a first status line.
pub fn start(setting: usize, mode: Mode) {
    match (setting, mode) {
        (3, Mode::Upstart) => log(LogLevel::Verbose, "Upstart supervision detected."),
        (3, Mode::Systemd) => log(LogLevel::Verbose, "Systemd supervision detected."),
        (1, Mode::No) => log(
            LogLevel::Warning,
            "upstart supervision requested, but UPSTART_JOB not found!",
        ),
        (2, Mode::No) => log(
            LogLevel::Warning,
            "systemd supervision requested or auto-detected, but NOTIFY_SOCKET not found!",
        ),
        _ => {}
    }
    match mode {
        Mode::No => {}
        Mode::Upstart => {
            log(
                LogLevel::Notice,
                "supervised by upstart, will stop to signal readiness.",
            );
            // SAFETY: raise(3) on this process; upstart continues it.
            unsafe {
                libc::raise(libc::SIGSTOP);
            }
            // Not inherited by what this process may start.
            std::env::remove_var("UPSTART_JOB");
        }
        Mode::Systemd => {
            let addr = std::env::var("NOTIFY_SOCKET").unwrap_or_default();
            let _ = SYSTEMD.set(addr);
            notify("STATUS=Petrel is loading...\n");
            log(
                LogLevel::Notice,
                "Supervised by systemd. Please make sure you set appropriate values for TimeoutStartSec and TimeoutStopSec in your service unit.",
            );
        }
    }
}

/// Sends `msg` (sd_notify lines) to systemd, when supervised by it.
pub fn notify(msg: &str) {
    let Some(addr) = SYSTEMD.get() else {
        return;
    };
    if let Err(e) = send(addr, msg.as_bytes()) {
        log(
            LogLevel::Warning,
            &format!("Can't notify systemd at '{addr}': {e}"),
        );
    }
}

/// One datagram to the notify socket: a path, or `@name` in Linux's
/// abstract namespace.
fn send(addr: &str, msg: &[u8]) -> std::io::Result<usize> {
    let sock = std::os::unix::net::UnixDatagram::unbound()?;
    match addr.strip_prefix('@') {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            let a = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes())?;
            sock.send_to_addr(msg, &a)
        }
        None => sock.send_to(msg, addr),
    }
}
