//! One bus connection: a non-blocking TCP stream, the bytes read but not
//! yet a whole message, and the bytes queued to send.
//!
//! Invariants: `rbuf` never holds a whole message after [`Link::read`]
//! returns (whole ones are handed out); a link that saw an I/O error, a
//! bad frame, or end of stream is `dead` and is dropped by the bus.
//! An outbound link (`inbound == false`) belongs to the node it was opened
//! for (`node`); an inbound one learns its node from the first message.

use std::io::{ErrorKind, Read, Write};

use mio::net::TcpStream;

use super::codec;

pub struct Link {
    pub stream: TcpStream,
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
    pub fn new(stream: TcpStream, inbound: bool, node: Option<String>, now: u64) -> Link {
        Link {
            stream,
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
                Err(_) => {
                    self.dead = true;
                    break;
                }
            }
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

    /// Sends queued bytes until the socket would block.
    pub fn flush(&mut self) {
        if self.connecting {
            return;
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
                Err(_) => {
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
        match self.stream.take_error() {
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
