//! `repl-diskless-load` (Redis 7.0): a replica loads its master's full
//! sync payload straight from the socket instead of a temporary file.
//!
//! * `disabled`: never (the payload goes to a file, `replica`).
//! * `on-empty-db`: only when the dataset is empty, so a cut transfer
//!   loses nothing (the half-loaded keys are flushed).
//! * `swapdb`: always; the old dataset is taken aside
//!   (`Keyspace::take_all`) while the new one loads and put back if the
//!   transfer or the load fails, freed once the load succeeded. Clients
//!   get `-LOADING` meanwhile (Redis 7.0's async loading, which serves
//!   the old data when the master's replication ID is unchanged, is not
//!   built). If a snapshot runs and the dataset cannot be taken aside,
//!   the payload goes to a file as with `disabled`.
//!
//! Invariant: [`Payload`] never yields a byte past the payload (the
//! `$<len>` count, or the `$EOF:<mark>` mark), so the stream that follows
//! stays in the link's buffer.

use std::io::{self, Write};
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
/// `repl-stream-db` of the payload.
pub(super) fn load(
    srv: &Server,
    gen: u64,
    link: &mut Link,
    timeout: Duration,
    head: &str,
    settings: &Settings,
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
    let _held = srv.keyspace.hold_all();
    srv.persistence.abort();
    let backup = if settings.repl.diskless_load == DisklessLoad::Swapdb {
        let b = srv.keyspace.take_all();
        if b.is_none() {
            notice("MASTER <-> REPLICA sync: a snapshot runs, the old data is flushed instead of kept aside");
        }
        b
    } else {
        None
    };
    if backup.is_none() {
        notice("MASTER <-> REPLICA sync: Flushing old data");
        drop(srv.keyspace.flush_all());
    }
    notice("MASTER <-> REPLICA sync: Loading DB in memory");
    let mut payload = Payload {
        srv,
        gen,
        link,
        end,
        timeout,
        last_data: Instant::now(),
        last_newline: Instant::now(),
    };
    let res = super::super::snapshot::load::load_reader(srv, settings, &mut payload)
        .map_err(|e| e.to_string())
        .and_then(|rep| {
            payload.finish().map_err(|e| e.to_string())?;
            Ok(rep)
        });
    match res {
        Ok(rep) => {
            if let Some(old) = backup {
                notice("MASTER <-> REPLICA sync: Discarding the old data kept aside");
                drop(old);
            }
            Ok(rep.repl_stream_db.unwrap_or(0))
        }
        Err(e) => {
            log(
                LogLevel::Warning,
                &format!("Failed trying to load the MASTER synchronization DB from socket: {e}"),
            );
            match backup {
                Some(old) => {
                    notice("MASTER <-> REPLICA sync: Restoring the old data kept aside");
                    if let Err(old) = srv.keyspace.restore_all(old) {
                        drop(old);
                        drop(srv.keyspace.flush_all());
                    }
                }
                None => drop(srv.keyspace.flush_all()),
            }
            Err("Failed trying to load the MASTER synchronization DB from socket, check server logs.".into())
        }
    }
}
