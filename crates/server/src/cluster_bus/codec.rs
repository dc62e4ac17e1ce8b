//! Redis 7.0's cluster bus messages, byte for byte: a fixed 2256-byte
//! header, then a body by message type. Every integer is big-endian.
//!
//! Header layout (offsets in bytes): `RCmb` signature 0, totlen u32 4,
//! version u16 8 (always 1), client port u16 10, type u16 12, count u16 14,
//! currentEpoch u64 16, configEpoch u64 24, replication offset u64 32,
//! sender id [40] 40, slot bitmap [2048] 80 (slot s is bit `s & 7` of byte
//! `s / 8`), replicaof id [40] 2128 (zeros for a master), announced ip [46]
//! 2168, extension count u16 2214, unused [30] 2216, secondary (TLS) port
//! u16 2246, bus port u16 2248, flags u16 2250, cluster state u8 2252,
//! message flags [3] 2253; body at 2256.
//!
//! Bodies: PING/PONG/MEET carry `count` gossip entries of 104 bytes (id
//! [40], ping-sent s u32, pong-received s u32, ip [46], port u16, bus port
//! u16, flags u16, secondary port u16, unused u16), then `extensions` ping
//! extensions (length u32 counting its 8-byte head, type u16, unused u16,
//! data padded to 8 bytes). FAIL: a node id [40]. PUBLISH/PUBLISHSHARD:
//! channel length u32, message length u32, channel, message. UPDATE:
//! configEpoch u64, node id [40], slot bitmap [2048]. FAILOVER_AUTH_*,
//! MFSTART: no body.
//!
//! Invariants: [`decode`] accepts only a whole message whose `totlen` is
//! its length and whose body fits it exactly; it never panics on input.
//! [`encode`] of a decoded message gives back the same bytes (padding and
//! unused fields are kept).

pub const HEADER_LEN: usize = 2256;
pub const GOSSIP_LEN: usize = 104;
pub const ID_LEN: usize = 40;
pub const IP_LEN: usize = 46;
pub const SLOT_BYTES: usize = 2048;
/// Largest message accepted (Redis has no limit; this bounds a buffer a
/// peer can make us hold).
pub const MAX_LEN: usize = 512 << 20;

/// Message types.
pub mod mtype {
    pub const PING: u16 = 0;
    pub const PONG: u16 = 1;
    pub const MEET: u16 = 2;
    pub const FAIL: u16 = 3;
    pub const PUBLISH: u16 = 4;
    pub const FAILOVER_AUTH_REQUEST: u16 = 5;
    pub const FAILOVER_AUTH_ACK: u16 = 6;
    pub const UPDATE: u16 = 7;
    pub const MFSTART: u16 = 8;
    pub const MODULE: u16 = 9;
    pub const PUBLISHSHARD: u16 = 10;
}

/// Node flags as the bus carries them (Redis's own numbering).
pub mod wflags {
    pub const MASTER: u16 = 1;
    pub const SLAVE: u16 = 2;
    pub const PFAIL: u16 = 4;
    pub const FAIL: u16 = 8;
    pub const MYSELF: u16 = 16;
    pub const HANDSHAKE: u16 = 32;
    pub const NOADDR: u16 = 64;
    pub const MEET: u16 = 128;
    pub const MIGRATE_TO: u16 = 256;
    pub const NOFAILOVER: u16 = 512;
}

/// `mflags[0]` bits.
pub mod mflags0 {
    pub const PAUSED: u8 = 1;
    pub const FORCEACK: u8 = 2;
    /// The sender understands ping extensions.
    pub const EXT_DATA: u8 = 4;
}

/// Ping extension types (7.0 sends only the hostname; the others are
/// those of later versions, read so their messages are understood).
pub mod ext {
    pub const HOSTNAME: u16 = 0;
    pub const HUMAN_NODENAME: u16 = 1;
    pub const FORGOTTEN_NODE: u16 = 2;
    pub const SHARDID: u16 = 3;
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub ver: u16,
    pub port: u16,
    pub mtype: u16,
    pub count: u16,
    pub current_epoch: u64,
    pub config_epoch: u64,
    pub offset: u64,
    pub sender: [u8; ID_LEN],
    pub myslots: Box<[u8; SLOT_BYTES]>,
    pub slaveof: [u8; ID_LEN],
    pub myip: [u8; IP_LEN],
    pub extensions: u16,
    pub notused1: [u8; 30],
    pub pport: u16,
    pub cport: u16,
    pub flags: u16,
    pub state: u8,
    pub mflags: [u8; 3],
}

impl Default for Header {
    fn default() -> Header {
        Header {
            ver: 1,
            port: 0,
            mtype: 0,
            count: 0,
            current_epoch: 0,
            config_epoch: 0,
            offset: 0,
            sender: [0; ID_LEN],
            myslots: Box::new([0; SLOT_BYTES]),
            slaveof: [0; ID_LEN],
            myip: [0; IP_LEN],
            extensions: 0,
            notused1: [0; 30],
            pport: 0,
            cport: 0,
            flags: 0,
            state: 0,
            mflags: [0; 3],
        }
    }
}

/// One node described in a gossip section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gossip {
    pub nodename: [u8; ID_LEN],
    pub ping_sent: u32,
    pub pong_received: u32,
    pub ip: [u8; IP_LEN],
    pub port: u16,
    pub cport: u16,
    pub flags: u16,
    pub pport: u16,
    pub notused1: u16,
}

/// A ping extension. `pad` holds the bytes after the data up to the
/// 8-byte boundary (zeros from a sane sender), kept to re-encode exactly.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ext {
    pub etype: u16,
    pub unused: u16,
    /// The data (for a hostname: the name without its NUL).
    pub data: Vec<u8>,
    pub pad: Vec<u8>,
}

impl Ext {
    /// A hostname extension as 7.0 writes it: the name, a NUL, zeros up to
    /// a multiple of 8.
    pub fn hostname(name: &str) -> Ext {
        let used = name.len() + 1;
        let padded = used.div_ceil(8) * 8;
        let pad = vec![0u8; padded - name.len()];
        Ext {
            etype: ext::HOSTNAME,
            unused: 0,
            data: name.as_bytes().to_vec(),
            pad,
        }
    }

    /// Its whole length on the wire.
    pub fn wire_len(&self) -> usize {
        8 + self.data.len() + self.pad.len()
    }

    /// A string extension's text (hostname, human node name).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.data).into_owned()
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// PING, PONG, MEET.
    Ping {
        gossip: Vec<Gossip>,
        exts: Vec<Ext>,
    },
    Fail {
        nodename: [u8; ID_LEN],
    },
    /// PUBLISH and PUBLISHSHARD.
    Publish {
        channel: Vec<u8>,
        message: Vec<u8>,
    },
    Update {
        config_epoch: u64,
        nodename: [u8; ID_LEN],
        slots: Box<[u8; SLOT_BYTES]>,
    },
    /// FAILOVER_AUTH_REQUEST/ACK, MFSTART, MODULE and unknown types: the
    /// body bytes as they came.
    Raw(Vec<u8>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub header: Header,
    pub body: Body,
}

/// A fixed-size byte field from a string (truncated, NUL padded).
pub fn field<const N: usize>(s: &str) -> [u8; N] {
    let mut a = [0u8; N];
    let b = s.as_bytes();
    let n = b.len().min(N);
    a[..n].copy_from_slice(&b[..n]);
    a
}

/// A NUL-terminated byte field as text.
pub fn field_text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// Whether a node-id field is all zeros (no node).
pub fn is_null_id(b: &[u8; ID_LEN]) -> bool {
    b.iter().all(|&c| c == 0)
}

pub fn slot_bit(bitmap: &[u8; SLOT_BYTES], slot: usize) -> bool {
    bitmap[slot / 8] & (1 << (slot & 7)) != 0
}

pub fn set_slot_bit(bitmap: &mut [u8; SLOT_BYTES], slot: usize) {
    bitmap[slot / 8] |= 1 << (slot & 7);
}

struct Rd<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.b.len() - self.at < n {
            return Err("truncated message".into());
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        Ok(u16::from_be_bytes(self.arr()?))
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.arr()?))
    }
    fn rest(&self) -> usize {
        self.b.len() - self.at
    }
}

/// The total length a message announces, from its first 8 bytes: None
/// until 8 bytes are there, Err for a bad signature or length.
pub fn frame_len(b: &[u8]) -> Result<Option<usize>, String> {
    if b.len() < 8 {
        return Ok(None);
    }
    if &b[..4] != b"RCmb" {
        return Err("bad signature".into());
    }
    let n = u32::from_be_bytes([b[4], b[5], b[6], b[7]]) as usize;
    if !(HEADER_LEN..=MAX_LEN).contains(&n) {
        return Err(format!("bad message length {n}"));
    }
    Ok(Some(n))
}

fn decode_header(r: &mut Rd) -> Result<Header, String> {
    if r.take(4)? != b"RCmb" {
        return Err("bad signature".into());
    }
    let _totlen = r.u32()?;
    Ok(Header {
        ver: r.u16()?,
        port: r.u16()?,
        mtype: r.u16()?,
        count: r.u16()?,
        current_epoch: r.u64()?,
        config_epoch: r.u64()?,
        offset: r.u64()?,
        sender: r.arr()?,
        myslots: Box::new(r.arr()?),
        slaveof: r.arr()?,
        myip: r.arr()?,
        extensions: r.u16()?,
        notused1: r.arr()?,
        pport: r.u16()?,
        cport: r.u16()?,
        flags: r.u16()?,
        state: r.u8()?,
        mflags: r.arr()?,
    })
}

/// Decodes one whole message (`b` is exactly `totlen` bytes).
pub fn decode(b: &[u8]) -> Result<Message, String> {
    match frame_len(b)? {
        Some(n) if n == b.len() => {}
        _ => return Err("message length does not match its totlen".into()),
    }
    let mut r = Rd { b, at: 0 };
    let header = decode_header(&mut r)?;
    if header.ver != 1 {
        return Err(format!("unsupported bus version {}", header.ver));
    }
    let body = match header.mtype {
        mtype::PING | mtype::PONG | mtype::MEET => {
            let mut gossip = Vec::with_capacity(header.count as usize);
            for _ in 0..header.count {
                gossip.push(Gossip {
                    nodename: r.arr()?,
                    ping_sent: r.u32()?,
                    pong_received: r.u32()?,
                    ip: r.arr()?,
                    port: r.u16()?,
                    cport: r.u16()?,
                    flags: r.u16()?,
                    pport: r.u16()?,
                    notused1: r.u16()?,
                });
            }
            let mut exts = Vec::new();
            for _ in 0..header.extensions {
                let len = r.u32()? as usize;
                let etype = r.u16()?;
                let unused = r.u16()?;
                if len < 8 || len - 8 > r.rest() {
                    return Err("bad ping extension length".into());
                }
                let all = r.take(len - 8)?;
                let data_len = match etype {
                    ext::HOSTNAME | ext::HUMAN_NODENAME => all
                        .iter()
                        .position(|&c| c == 0)
                        .ok_or("ping extension string without its NUL")?,
                    ext::FORGOTTEN_NODE if all.len() >= ID_LEN + 8 => ID_LEN + 8,
                    ext::SHARDID if all.len() >= ID_LEN => ID_LEN,
                    ext::FORGOTTEN_NODE | ext::SHARDID => return Err("short ping extension".into()),
                    _ => all.len(),
                };
                exts.push(Ext {
                    etype,
                    unused,
                    data: all[..data_len].to_vec(),
                    pad: all[data_len..].to_vec(),
                });
            }
            Body::Ping { gossip, exts }
        }
        mtype::FAIL => Body::Fail { nodename: r.arr()? },
        mtype::PUBLISH | mtype::PUBLISHSHARD => {
            let clen = r.u32()? as usize;
            let mlen = r.u32()? as usize;
            if clen.checked_add(mlen) != Some(r.rest()) {
                return Err("bad publish lengths".into());
            }
            Body::Publish {
                channel: r.take(clen)?.to_vec(),
                message: r.take(mlen)?.to_vec(),
            }
        }
        mtype::UPDATE => Body::Update {
            config_epoch: r.u64()?,
            nodename: r.arr()?,
            slots: Box::new(r.arr()?),
        },
        _ => Body::Raw(r.take(r.rest())?.to_vec()),
    };
    if r.rest() != 0 {
        return Err("message longer than its body".into());
    }
    Ok(Message { header, body })
}

/// Encodes a message; `count`, `extensions` and `totlen` are taken from
/// the body (a PING body's entries), not from the header fields.
pub fn encode(m: &Message) -> Vec<u8> {
    let h = &m.header;
    let mut count = h.count;
    let mut extensions = h.extensions;
    if let Body::Ping { gossip, exts } = &m.body {
        count = gossip.len() as u16;
        extensions = exts.len() as u16;
    }
    let mut b = Vec::with_capacity(HEADER_LEN + 256);
    b.extend_from_slice(b"RCmb");
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&h.ver.to_be_bytes());
    b.extend_from_slice(&h.port.to_be_bytes());
    b.extend_from_slice(&h.mtype.to_be_bytes());
    b.extend_from_slice(&count.to_be_bytes());
    b.extend_from_slice(&h.current_epoch.to_be_bytes());
    b.extend_from_slice(&h.config_epoch.to_be_bytes());
    b.extend_from_slice(&h.offset.to_be_bytes());
    b.extend_from_slice(&h.sender);
    b.extend_from_slice(&h.myslots[..]);
    b.extend_from_slice(&h.slaveof);
    b.extend_from_slice(&h.myip);
    b.extend_from_slice(&extensions.to_be_bytes());
    b.extend_from_slice(&h.notused1);
    b.extend_from_slice(&h.pport.to_be_bytes());
    b.extend_from_slice(&h.cport.to_be_bytes());
    b.extend_from_slice(&h.flags.to_be_bytes());
    b.push(h.state);
    b.extend_from_slice(&h.mflags);
    debug_assert_eq!(b.len(), HEADER_LEN);
    match &m.body {
        Body::Ping { gossip, exts } => {
            for g in gossip {
                b.extend_from_slice(&g.nodename);
                b.extend_from_slice(&g.ping_sent.to_be_bytes());
                b.extend_from_slice(&g.pong_received.to_be_bytes());
                b.extend_from_slice(&g.ip);
                b.extend_from_slice(&g.port.to_be_bytes());
                b.extend_from_slice(&g.cport.to_be_bytes());
                b.extend_from_slice(&g.flags.to_be_bytes());
                b.extend_from_slice(&g.pport.to_be_bytes());
                b.extend_from_slice(&g.notused1.to_be_bytes());
            }
            for e in exts {
                b.extend_from_slice(&(e.wire_len() as u32).to_be_bytes());
                b.extend_from_slice(&e.etype.to_be_bytes());
                b.extend_from_slice(&e.unused.to_be_bytes());
                b.extend_from_slice(&e.data);
                b.extend_from_slice(&e.pad);
            }
        }
        Body::Fail { nodename } => b.extend_from_slice(nodename),
        Body::Publish { channel, message } => {
            b.extend_from_slice(&(channel.len() as u32).to_be_bytes());
            b.extend_from_slice(&(message.len() as u32).to_be_bytes());
            b.extend_from_slice(channel);
            b.extend_from_slice(message);
        }
        Body::Update {
            config_epoch,
            nodename,
            slots,
        } => {
            b.extend_from_slice(&config_epoch.to_be_bytes());
            b.extend_from_slice(nodename);
            b.extend_from_slice(&slots[..]);
        }
        Body::Raw(r) => b.extend_from_slice(r),
    }
    let n = (b.len() as u32).to_be_bytes();
    b[4..8].copy_from_slice(&n);
    b
}

#[cfg(test)]
#[path = "codec_tests.rs"]
mod tests;
