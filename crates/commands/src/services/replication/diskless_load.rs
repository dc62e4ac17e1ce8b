//! `repl-diskless-load` (Redis 7.0): a replica loads its master's full
//! sync payload straight from the socket instead of a temporary file.
//!
//! * `disabled`: never (the payload goes to a file, `replica`).
//! * `on-empty-db`: only when the dataset is empty, so a cut transfer
//!   loses nothing (the half-loaded keys are flushed). Clients get
//!   `-LOADING` (INFO `loading:1`) meanwhile.
//! * `swapdb`: always. The payload loads into a separate keyspace
//!   (`Keyspace::empty_like`) while the served one stays untouched; once
//!   the payload is loaded whole, every database of every partition is
//!   swapped in at once (`Keyspace::swap_all_with`, under all partition
//!   locks) and the old tables are freed on the lazy-free thread. A cut
//!   transfer or a failed load drops the half-loaded keyspace and the old
//!   data simply stays. Whether clients are served meanwhile is Redis
//!   7.0's rule:
//!   - *async loading* when the `+FULLRESYNC` replication ID equals this
//!     server's own (it already follows that master's history, so its
//!     data is an earlier point of the same dataset): clients keep the
//!     old data; only `no_async_loading` commands (SAVE, BGSAVE,
//!     REPLICAOF, SYNC, ...) get `-LOADING`; INFO shows `loading:0`,
//!     `async_loading:1` and the `loading_*` progress fields;
//!   - otherwise (a new master, or a fresh replica) clients get
//!     `-LOADING` as with `on-empty-db` (`loading:1`), and the old data
//!     is back (untouched) if the load fails.
//!
//!   The replica does not expire keys itself (it waits for its master's
//!   `DEL`s). During an async load Redis 7.0 suspends expiry for every
//!   lookup (`keyIsExpired` answers "not expired" while loading), so
//!   clients' commands then run with expired keys visible
//!   (`runtime::dispatch`, `Keyspace::with_expired_visible`): lookups
//!   (GET, EXISTS, PTTL 0), KEYS, SCAN and RANDOMKEY see a key of the old
//!   data whose TTL has passed, as redis-server does.
//! * INFO's `loading_total_bytes` is the payload's length for a `$<len>`
//!   payload and 0 for `$EOF:` (Redis's figures; the percentage is then
//!   against the RDB's `used-mem`).
//!
//! Invariants: [`Payload`] never yields a byte past the payload (the
//! `$<len>` count, or the `$EOF:<mark>` mark), so the stream that follows
//! stays in the link's buffer and is applied after the swap, from the
//! offset the `+FULLRESYNC` named; the served keyspace changes only at
//! the swap (never half-loaded under `swapdb`); `loading.async_mode` is
//! set before the load is marked active and cleared after the swap.

use std::io::{self, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use crate::base::log::{log, LogLevel};
use crate::kernel::config::{DisklessLoad, Settings};
use crate::kernel::server::Server;

use super::master_link::{current, Link};

fn notice(msg: &str) {
    log(LogLevel::Notice, msg);
}

/// Does this full sync load from the socket?
pub(super) fn wanted(srv: &Server, s: &Settings) -> bool {
    match s.repl.diskless_load {
        DisklessLoad::Disabled => false,
        DisklessLoad::OnEmptyDb => {
            (0..srv.keyspace.databases()).all(|db| srv.keyspace.dbsize(db) == 0)
        }
        DisklessLoad::Swapdb => true,
    }
}

/// How the payload ends.
enum End {
    /// `$<len>`: bytes left.
    Len(u64),
    /// `$EOF:<mark>`.
    Mark(Vec<u8>),
}

/// The payload as a reader over the link (see the module doc).
struct Payload<'a> {
    srv: &'a Server,
    gen: u64,
    link: &'a mut Link,
    end: End,
    timeout: Duration,
    last_data: Instant,
    last_newline: Instant,
}

impl Payload<'_> {
    /// Bytes of `link.buf` certainly in the payload, and whether the end
    /// is in the buffer.
    fn available(&self) -> (usize, bool) {
        match &self.end {
            End::Len(left) => {
                let n = (self.link.buf.len() as u64).min(*left) as usize;
                (n, *left == n as u64)
            }
            End::Mark(mark) => {
                if let Some(i) = self
                    .link
                    .buf
                    .windows(mark.len())
                    .position(|w| w == mark.as_slice())
                {
                    (i, true)
                } else {
                    // A mark may be starting at the end of the buffer.
                    (self.link.buf.len().saturating_sub(mark.len() - 1), false)
                }
            }
        }
    }

    /// Consumes the end mark once the payload was read whole.
    fn finish(&mut self) -> io::Result<()> {
        loop {
            let (n, at_end) = self.available();
            if at_end && n == 0 {
                if let End::Mark(mark) = &self.end {
                    let len = mark.len();
                    self.link.buf.drain(..len);
                }
                return Ok(());
            }
            if n > 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "bytes after the end of the RDB payload",
                ));
            }
            self.fill()?;
        }
    }

    fn fill(&mut self) -> io::Result<()> {
        if !current(self.srv, self.gen) {
            return Err(io::Error::other("REPLICAOF changed during the load"));
        }
        // The master must not time the replica out while it loads.
        if self.last_newline.elapsed() >= Duration::from_secs(1) {
            self.last_newline = Instant::now();
            let _ = self.link.sock.write_all(b"\n");
        }
        match self.link.fill() {
            Ok(true) => {
                self.last_data = Instant::now();
                Ok(())
            }
            Ok(false) if self.last_data.elapsed() > self.timeout => Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "timeout receiving the RDB from the master",
            )),
            Ok(false) => Ok(()),
            Err(e) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, e)),
        }
    }
}

impl io::Read for Payload<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            let (n, at_end) = self.available();
            if n > 0 {
                let k = n.min(buf.len());
                buf[..k].copy_from_slice(&self.link.buf[..k]);
                self.link.buf.drain(..k);
                if let End::Len(left) = &mut self.end {
                    *left -= k as u64;
                }
                return Ok(k);
            }
            if at_end {
                return Ok(0);
            }
            self.fill()?;
        }
    }
}

/// Loads the payload announced by `head` from the socket; returns the
/// `repl-stream-db` of the payload. `same_history`: the `+FULLRESYNC`
/// replication ID is this server's own (swapdb then loads async).
pub(super) fn load(
    srv: &Server,
    gen: u64,
    link: &mut Link,
    timeout: Duration,
    head: &str,
    settings: &Settings,
    same_history: bool,
) -> Result<u32, String> {
    let end = if let Some(mark) = head.strip_prefix("$EOF:") {
        notice("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to parser");
        End::Mark(mark.as_bytes().to_vec())
    } else if let Some(len) = head.strip_prefix('$') {
        let len: u64 = len
            .parse()
            .map_err(|_| format!("bad payload length '{head}'"))?;
        notice(&format!(
            "MASTER <-> REPLICA sync: receiving {len} bytes from master to parser"
        ));
        End::Len(len)
    } else {
        return Err(format!("bad payload header '{head}'"));
    };
    if let End::Mark(m) = &end {
        if m.is_empty() {
            return Err(format!("bad payload header '{head}'"));
        }
    }
    // A background save would race the new dataset (Redis kills its
    // RDB child here too).
    srv.persistence.abort();
    let payload = Payload {
        srv,
        gen,
        link,
        end,
        timeout,
        last_data: Instant::now(),
        last_newline: Instant::now(),
    };
    if settings.repl.diskless_load == DisklessLoad::Swapdb {
        swapdb(srv, settings, payload, same_history)
    } else {
        in_place(srv, settings, payload)
    }
}

/// `on-empty-db`: flushes and loads into the served keyspace, clients
/// refused meanwhile.
fn in_place(srv: &Server, settings: &Settings, mut payload: Payload<'_>) -> Result<u32, String> {
    let _held = srv.keyspace.hold_all();
    notice("MASTER <-> REPLICA sync: Flushing old data");
    srv.lazyfree
        .free_dbs(srv.keyspace.flush_all(), settings.repl.lazy_flush);
    notice("MASTER <-> REPLICA sync: Loading DB in memory");
    match read_payload(srv, settings, &srv.keyspace, &mut payload) {
        Ok(db) => Ok(db),
        Err(e) => {
            failed(&e);
            drop(srv.keyspace.flush_all());
            Err(FAILED.into())
        }
    }
}

/// `swapdb`: loads into a keyspace of its own, swaps it in at the end
/// (see the module doc).
fn swapdb(
    srv: &Server,
    settings: &Settings,
    mut payload: Payload<'_>,
    async_loading: bool,
) -> Result<u32, String> {
    let temp = srv.keyspace.empty_like();
    /// Clears the async flag however the load ends.
    struct AsyncMode<'a>(&'a Server);
    impl Drop for AsyncMode<'_> {
        fn drop(&mut self) {
            self.0.persistence.loading.async_mode.store(false, Relaxed);
        }
    }
    let _async = async_loading.then(|| {
        srv.persistence.loading.async_mode.store(true, Relaxed);
        AsyncMode(srv)
    });
    notice("MASTER <-> REPLICA sync: Loading DB in memory");
    let res = read_payload(srv, settings, &temp, &mut payload);
    match res {
        Ok(db) => {
            notice("MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
            // Nothing may save a mix of the two datasets.
            srv.persistence.abort();
            let old = srv
                .keyspace
                .swap_all_with(&temp)
                .map_err(|()| "the loaded keyspace does not fit".to_string())?;
            srv.lazyfree.free_dbs(old, true);
            notice("MASTER <-> REPLICA sync: Discarding old DB in background");
            Ok(db)
        }
        Err(e) => {
            failed(&e);
            let half = temp.flush_all();
            srv.lazyfree.free_dbs(half, true);
            notice("MASTER <-> REPLICA sync: Discarding temporary DB in background");
            Err(FAILED.into())
        }
    }
}

const FAILED: &str =
    "Failed trying to load the MASTER synchronization DB from socket, check server logs.";

fn failed(e: &str) {
    log(
        LogLevel::Warning,
        &format!("Failed trying to load the MASTER synchronization DB from socket: {e}"),
    );
}

/// Reads the whole payload into `ks`; returns its `repl-stream-db`.
fn read_payload(
    srv: &Server,
    settings: &Settings,
    ks: &store::Keyspace,
    payload: &mut Payload<'_>,
) -> Result<u32, String> {
    let total = match payload.end {
        End::Len(len) => Some(len),
        End::Mark(_) => None,
    };
    let rep =
        super::super::snapshot::load::load_reader_into(srv, settings, ks, &mut *payload, total)
            .map_err(|e| e.to_string())?;
    payload.finish().map_err(|e| e.to_string())?;
    Ok(rep.repl_stream_db.unwrap_or(0))
}
