//! One bus connection: a non-blocking stream (plain TCP, or TLS with
//! `tls-cluster yes`, see `crate::tls_bus`), the bytes read but not yet a
//! whole message, and the bytes queued to send.
//!
//! Invariants: `rbuf` never holds a whole message after [`Link::read`]
//! returns (whole ones are handed out); a link that saw an I/O error, a
//! bad frame, or end of stream is `dead` and is dropped by the bus.
//! An outbound link (`inbound == false`) belongs to the node it was opened
//! for (`node`); an inbound one learns its node from the first message.
//! A TLS link whose handshake fails is logged (Redis's words, verbose
//! level) and dead.

use std::io::{ErrorKind, Read, Write};

use super::codec;
use crate::tls_bus::BusStream;

pub struct Link {
    pub stream: BusStream,
    /// Who is at the other end, for the log: the peer's address, or the
    /// node and the address this node dialed.
    pub peer: String,
    pub inbound: bool,
    /// The node id this link talks to, once known.
    pub node: Option<String>,
    /// Creation time (ms).
    pub ctime: u64,
    /// An outbound connect not yet known to have succeeded.
    pub connecting: bool,
    pub dead: bool,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
}

impl Link {
    pub fn new(
        stream: BusStream,
        peer: String,
        inbound: bool,
        node: Option<String>,
        now: u64,
    ) -> Link {
        Link {
            stream,
            peer,
            inbound,
            node,
            ctime: now,
            connecting: !inbound,
            dead: false,
            rbuf: Vec::new(),
            wbuf: Vec::new(),
        }
    }

    /// Reads what is there; returns the whole messages received.
    pub fn read(&mut self) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    self.dead = true;
                    break;
                }
                Ok(n) => self.rbuf.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.tls_failed(&e);
                    self.dead = true;
                    break;
                }
            }
        }
        if self.stream.is_tls() && !self.dead && !self.wbuf.is_empty() {
            // What was queued while the handshake went on can go now.
            self.flush();
        }
        let mut at = 0;
        loop {
            match codec::frame_len(&self.rbuf[at..]) {
                Ok(Some(n)) if self.rbuf.len() - at >= n => {
                    out.push(self.rbuf[at..at + n].to_vec());
                    at += n;
                }
                Ok(_) => break,
                Err(_) => {
                    self.dead = true;
                    break;
                }
            }
        }
        self.rbuf.drain(..at);
        out
    }

    /// Queues a message and sends what the socket takes now.
    pub fn send(&mut self, msg: &[u8]) {
        self.wbuf.extend_from_slice(msg);
        self.flush();
    }

    /// Logs a TLS handshake that failed, as Redis does (verbose): on an
    /// accepted link "Error accepting cluster node connection", on one this
    /// node opened "Connection with Node ... failed".
    fn tls_failed(&self, e: &std::io::Error) {
        if !self.stream.handshaking() {
            return;
        }
        if self.inbound {
            crate::verbose!("Error accepting cluster node connection: {e}");
        } else {
            crate::verbose!("Connection with {} failed: {e}", self.peer);
        }
    }

    /// Sends queued bytes (and what TLS queued) until the socket would
    /// block.
    pub fn flush(&mut self) {
        if self.connecting {
            return;
        }
        match self.stream.flush_tls() {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return,
            Err(e) => {
                self.tls_failed(&e);
                self.dead = true;
                return;
            }
        }
        while !self.wbuf.is_empty() {
            match self.stream.write(&self.wbuf) {
                Ok(0) => {
                    self.dead = true;
                    return;
                }
                Ok(n) => {
                    self.wbuf.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.tls_failed(&e);
                    self.dead = true;
                    return;
                }
            }
        }
    }

    /// On writability of an outbound link still connecting: connected, or
    /// failed.
    pub fn check_connected(&mut self) {
        if !self.connecting {
            return;
        }
        match self.stream.tcp().take_error() {
            Ok(Some(_)) | Err(_) => self.dead = true,
            Ok(None) => match self.stream.peer_addr() {
                Ok(_) => {
                    self.connecting = false;
                    self.flush();
                }
                Err(e) if e.kind() == ErrorKind::NotConnected => {}
                Err(_) => self.dead = true,
            },
        }
    }

    /// Bytes queued, not yet sent.
    pub fn pending(&self) -> usize {
        self.wbuf.len()
    }

    /// Bytes the send buffer holds room for.
    pub fn allocated(&self) -> usize {
        self.wbuf.capacity()
    }
}
