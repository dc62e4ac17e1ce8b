//! The replica's connection to its master: a socket with a read buffer
//! ([`Link`]) and the check that a link thread still serves the current
//! REPLICAOF ([`current`]). Shared by the link thread (`replica`) and the
//! diskless loader (`diskless_load`).
//!
//! Invariant: a link thread whose generation is no longer current stops
//! touching the dataset and the replication state.

use std::io::{Read, Write};
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use crate::kernel::server::Server;

use super::socket::Socket;

/// Does the link thread of generation `gen` still serve the current
/// REPLICAOF?
pub(super) fn current(srv: &Server, gen: u64) -> bool {
    srv.replication.replica.generation.load(Relaxed) == gen
}

/// A socket with a read buffer.
pub(super) struct Link {
    pub(super) sock: Socket,
    pub(super) buf: Vec<u8>,
    pub(super) peer: String,
    pub(super) local: String,
}

impl Link {
    pub(super) fn fill(&mut self) -> Result<bool, String> {
        let mut chunk = [0u8; 16 * 1024];
        match self.sock.read(&mut chunk) {
            Ok(0) => Err("connection closed by the master".into()),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(true)
            }
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut
                    || e.kind() == std::io::ErrorKind::Interrupted =>
            {
                Ok(false)
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// One line without its CRLF, waiting up to `timeout`.
    pub(super) fn line(&mut self, timeout: Duration) -> Result<String, String> {
        let end = Instant::now() + timeout;
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let l: Vec<u8> = self.buf.drain(..=i).collect();
                let l = &l[..l.len() - 1];
                let l = l.strip_suffix(b"\r").unwrap_or(l);
                return Ok(String::from_utf8_lossy(l).into_owned());
            }
            if Instant::now() > end {
                return Err("timeout reading from the master".into());
            }
            self.fill()?;
        }
    }

    /// A reply line, skipping the master's newline keepalives.
    pub(super) fn reply(&mut self, timeout: Duration) -> Result<String, String> {
        loop {
            let l = self.line(timeout)?;
            if !l.is_empty() {
                return Ok(l);
            }
        }
    }

    pub(super) fn send(&mut self, argv: &[&[u8]]) -> Result<(), String> {
        let mut b = Vec::new();
        crate::kernel::journal::encode_command(&mut b, argv);
        self.sock.write_all(&b).map_err(|e| e.to_string())
    }
}
