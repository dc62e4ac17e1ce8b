//! Writing RDB files (version 10, as Redis 7.0 writes them), one record at
//! a time to any [`std::io::Write`].
//!
//! A file is, in this order (what the caller calls):
//! 1. `REDIS0010` ([`Writer::new`]);
//! 2. aux fields ([`Writer::aux`], [`Writer::aux_int`]): Redis 7.0 writes
//!    `redis-ver`, `redis-bits`, `ctime`, `used-mem`, then
//!    `repl-stream-db`, `repl-id`, `repl-offset` when it has replication
//!    info, then `aof-base`;
//! 3. functions ([`Writer::function`], `FUNCTION2` records) if any;
//! 4. per non-empty database: [`Writer::select_db`] (`SELECTDB`), then
//!    [`Writer::resize_db`] (`RESIZEDB` with the key and expire counts),
//!    then its keys ([`Writer::entry`]): `EXPIRETIME_MS` when the key has a
//!    TTL, `IDLE` (seconds) under an LRU policy or `FREQ` under an LFU
//!    policy (the caller says which by filling [`EntryMeta`]), type, key,
//!    value;
//! 5. [`Writer::finish`]: `EOF` and the CRC64 of every byte before it
//!    (little-endian), or eight zero bytes with `rdbchecksum no`.
//!
//! The writer buffers up to 64 KiB, keeps the running CRC over what it
//! hands to the inner writer and counts every byte ([`Writer::bytes_written`]).
//! Values are written by [`value`]; the primitives are in [`encode`].

pub mod encode;
pub mod value;

use std::io::{self, Write};

use store::CompactValue;

use crate::crc64::crc64;
use crate::types;
pub use encode::Sink;
use encode::{write_len, write_ms_time, write_string};

/// Settings that change the bytes written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// `rdbcompression`: LZF-compress strings longer than 20 bytes when it
    /// pays.
    pub compression: bool,
    /// `rdbchecksum`: write the CRC64 (else eight zero bytes).
    pub checksum: bool,
    /// A packed list node holding a single element at least this long is
    /// written as a plain node (plain nodes in memory are always written
    /// plain: this only matters for elements stored while the process's
    /// packed threshold was higher).
    pub packed_threshold: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: true,
            checksum: true,
            packed_threshold: 1 << 30,
        }
    }
}

/// What precedes a key's type byte.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EntryMeta {
    /// Absolute expiry, unix milliseconds (`EXPIRETIME_MS`).
    pub expire_ms: Option<i64>,
    /// Idle time in seconds (`IDLE`; Redis writes it under LRU policies).
    pub idle_secs: Option<u64>,
    /// LFU counter (`FREQ`; Redis writes it under LFU policies).
    pub freq: Option<u8>,
}

const BUF_CAP: usize = 64 * 1024;

/// The buffered, checksummed output.
struct Out<W> {
    w: W,
    buf: Vec<u8>,
    crc: u64,
    checksum: bool,
    /// Bytes handed to `w`.
    flushed: u64,
}

impl<W: Write> Out<W> {
    fn emit(&mut self, b: &[u8]) -> io::Result<()> {
        if self.checksum {
            self.crc = crc64(self.crc, b);
        }
        self.w.write_all(b)?;
        self.flushed += b.len() as u64;
        Ok(())
    }

    fn flush_buf(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let buf = std::mem::take(&mut self.buf);
            let r = self.emit(&buf);
            self.buf = buf;
            self.buf.clear();
            r?;
        }
        Ok(())
    }
}

impl<W: Write> Sink for Out<W> {
    #[inline]
    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        if self.buf.len() + b.len() <= BUF_CAP {
            self.buf.extend_from_slice(b);
            return Ok(());
        }
        self.flush_buf()?;
        if b.len() >= BUF_CAP {
            self.emit(b)
        } else {
            self.buf.extend_from_slice(b);
            Ok(())
        }
    }
}

/// One key record (`EXPIRETIME_MS`, `IDLE`, `FREQ` as `meta` says, type,
/// key, value) into any sink, exactly as [`Writer::entry`] writes it.
pub fn write_entry<S: Sink + ?Sized>(
    s: &mut S,
    key: &[u8],
    value: &CompactValue,
    meta: EntryMeta,
    opts: &WriteOptions,
    scratch: &mut Vec<u8>,
) -> io::Result<()> {
    if let Some(t) = meta.expire_ms {
        s.put_u8(types::OP_EXPIRETIME_MS)?;
        write_ms_time(s, t)?;
    }
    if let Some(idle) = meta.idle_secs {
        s.put_u8(types::OP_IDLE)?;
        write_len(s, idle)?;
    }
    if let Some(f) = meta.freq {
        s.put(&[types::OP_FREQ, f])?;
    }
    s.put_u8(value::value_type(value))?;
    write_string(s, key, opts.compression)?;
    value::write_value(s, value, opts, scratch)
}

/// A `SELECTDB` record into any sink (as [`Writer::select_db`]).
pub fn write_select_db<S: Sink + ?Sized>(s: &mut S, db: u32) -> io::Result<()> {
    s.put_u8(types::OP_SELECTDB)?;
    write_len(s, db as u64)
}

/// An RDB file being written.
pub struct Writer<W: Write> {
    out: Out<W>,
    opts: WriteOptions,
    scratch: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Starts a file: writes the `REDIS0010` header.
    pub fn new(w: W, opts: WriteOptions) -> io::Result<Writer<W>> {
        let mut wr = Writer {
            out: Out {
                w,
                buf: Vec::with_capacity(BUF_CAP),
                crc: 0,
                checksum: opts.checksum,
                flushed: 0,
            },
            opts,
            scratch: Vec::new(),
        };
        wr.out
            .put(format!("REDIS{:04}", types::RDB_VERSION).as_bytes())?;
        Ok(wr)
    }

    pub fn options(&self) -> &WriteOptions {
        &self.opts
    }

    /// Bytes written so far (including those still buffered).
    pub fn bytes_written(&self) -> u64 {
        self.out.flushed + self.out.buf.len() as u64
    }

    /// An aux field (`AUX`, key, value; both strings by the usual rule, so
    /// a numeric value is integer-encoded as Redis writes it).
    pub fn aux(&mut self, key: &[u8], value: &[u8]) -> io::Result<()> {
        self.out.put_u8(types::OP_AUX)?;
        write_string(&mut self.out, key, self.opts.compression)?;
        write_string(&mut self.out, value, self.opts.compression)
    }

    /// An aux field with an integer value (`redis-bits`, `ctime`,
    /// `used-mem`, `aof-base`...).
    pub fn aux_int(&mut self, key: &[u8], value: i64) -> io::Result<()> {
        self.aux(key, value.to_string().as_bytes())
    }

    /// A function library (`FUNCTION2` and its code).
    pub fn function(&mut self, code: &[u8]) -> io::Result<()> {
        self.out.put_u8(types::OP_FUNCTION2)?;
        write_string(&mut self.out, code, self.opts.compression)
    }

    /// `SELECTDB db`: the keys that follow belong to `db`.
    pub fn select_db(&mut self, db: u32) -> io::Result<()> {
        self.out.put_u8(types::OP_SELECTDB)?;
        write_len(&mut self.out, db as u64)
    }

    /// `RESIZEDB`: how many keys, and how many with a TTL, the database has
    /// (a sizing hint for the loader).
    pub fn resize_db(&mut self, db_size: u64, expires_size: u64) -> io::Result<()> {
        self.out.put_u8(types::OP_RESIZEDB)?;
        write_len(&mut self.out, db_size)?;
        write_len(&mut self.out, expires_size)
    }

    /// One key with its value and metadata.
    pub fn entry(&mut self, key: &[u8], value: &CompactValue, meta: EntryMeta) -> io::Result<()> {
        write_entry(
            &mut self.out,
            key,
            value,
            meta,
            &self.opts,
            &mut self.scratch,
        )
    }

    /// Records encoded elsewhere with [`write_entry`] (and
    /// [`write_select_db`]), appended as they are: a snapshot's sink
    /// encodes entries on the threads that meet them and one writer puts
    /// the pieces in the file, with the running CRC.
    pub fn raw(&mut self, records: &[u8]) -> io::Result<()> {
        self.out.put(records)
    }

    /// Ends the file: `EOF`, then the checksum; flushes the inner writer.
    /// Returns it with the total number of bytes written.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        self.out.put_u8(types::OP_EOF)?;
        self.out.flush_buf()?;
        let sum = if self.opts.checksum { self.out.crc } else { 0 };
        self.out.w.write_all(&sum.to_le_bytes())?;
        self.out.w.flush()?;
        let total = self.out.flushed + 8;
        Ok((self.out.w, total))
    }
}
