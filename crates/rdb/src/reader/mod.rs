//! Reading RDB files as a stream of [`Item`]s pulled one at a time from any
//! [`std::io::Read`], so a loader can report progress
//! ([`Reader::offset`]) and answer clients between items.
//!
//! The file: `REDIS` + four-digit version, then records until `EOF`:
//! `AUX` key value, `SELECTDB` db, `RESIZEDB` sizes, `SLOT_INFO` (v12),
//! `FUNCTION2` code, `MODULE_AUX` (refused), and keys: optional
//! `EXPIRETIME` (seconds, i32 LE) / `EXPIRETIME_MS` (i64 LE), `IDLE`
//! (length, seconds) and `FREQ` (one byte), then the value type, the key
//! and the value. Versions 5 and later end with the CRC64 of every byte
//! before it (little-endian); zero means "not computed" and is not checked.
//!
//! The metadata opcodes apply to the next key, wherever it comes, as in
//! Redis. A key whose collection is empty is skipped (Redis logs and skips
//! such keys); [`Reader::empty_keys_skipped`] counts them.
//!
//! Not the reader's business (the loader decides, as Redis's loader does):
//! dropping keys that are already expired, refusing a database number at
//! or above `databases`, refusing a key that appears twice.

pub mod blocks;
pub mod ctx;
pub mod decode;
pub mod hash;
pub mod input;
pub mod list;
pub mod set;
pub mod stream;
pub mod value;
pub mod zset;

use std::io::Read;

use collections::Limits;
use store::CompactValue;

use crate::error::{Error, ErrorKind, Result};
use crate::types::{self, *};
use ctx::Ctx;
use decode::{read_len, read_string};
use input::Input;

/// How to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadOptions {
    /// Encoding thresholds for the values built (the server's config).
    pub limits: Limits,
    /// Check the CRC64 at the end (Redis's `rdbchecksum`); a stored zero
    /// is never checked.
    pub verify_checksum: bool,
    /// Hand `FUNCTION2` records out as [`Item::Function`]; when false (the
    /// default, Petrel has no functions yet) they are refused.
    pub allow_functions: bool,
    /// The input's total length when known (a file's size): long reads are
    /// then checked against it before anything is allocated.
    pub input_len: Option<u64>,
}

impl Default for ReadOptions {
    fn default() -> Self {
        ReadOptions {
            limits: Limits::default(),
            verify_checksum: true,
            allow_functions: false,
            input_len: None,
        }
    }
}

/// One key as stored in the file.
#[derive(Debug)]
pub struct KeyEntry {
    pub db: u32,
    pub key: Vec<u8>,
    pub value: CompactValue,
    /// Absolute expiry in unix milliseconds.
    pub expire_ms: Option<i64>,
    /// `IDLE`: seconds since last access.
    pub idle_secs: Option<u64>,
    /// `FREQ`: the LFU counter.
    pub freq: Option<u8>,
}

/// One record of the file.
#[derive(Debug)]
pub enum Item {
    Aux {
        key: Vec<u8>,
        value: Vec<u8>,
    },
    SelectDb(u32),
    ResizeDb {
        db_size: u64,
        expires_size: u64,
    },
    /// Version 12: key counts of one cluster slot (a hint).
    SlotInfo {
        slot: u64,
        slot_size: u64,
        expires_slot_size: u64,
    },
    Entry(KeyEntry),
    /// A function library's code (only with `allow_functions`).
    Function {
        code: Vec<u8>,
    },
    /// The end. `checksum` is the stored CRC64, `None` before version 5 or
    /// when the file stores zero (saved with `rdbchecksum no`).
    Eof {
        checksum: Option<u64>,
    },
}

/// Metadata waiting for the next key.
#[derive(Default)]
struct Pending {
    expire_ms: Option<i64>,
    idle_secs: Option<u64>,
    freq: Option<u8>,
}

/// A file being read.
pub struct Reader<R> {
    inp: Input<R>,
    version: u16,
    opts: ReadOptions,
    cx: Ctx,
    db: u32,
    pending: Pending,
    empty_skipped: u64,
    /// After EOF or an error: nothing more to read.
    finished: bool,
}

impl<R: Read> Reader<R> {
    /// Reads and checks the header (`REDIS` + version 1..=12).
    pub fn new(r: R, opts: ReadOptions) -> Result<Reader<R>> {
        let mut inp = Input::new(r, opts.input_len, opts.verify_checksum);
        let magic: [u8; 5] = inp.array("the \"REDIS\" signature")?;
        if &magic != b"REDIS" {
            return Err(Error::new(ErrorKind::Signature, 0));
        }
        let v: [u8; 4] = inp.array("a four-digit version")?;
        let version = std::str::from_utf8(&v)
            .ok()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<u32>().ok())
            .ok_or_else(|| Error::corrupt(5, "version is not four digits"))?;
        if version < 1 || version > types::MAX_READ_VERSION as u32 {
            return Err(Error::new(ErrorKind::Version(version), 5));
        }
        Ok(Reader {
            inp,
            version: version as u16,
            cx: Ctx::new(opts.limits),
            opts,
            db: 0,
            pending: Pending::default(),
            empty_skipped: 0,
            finished: false,
        })
    }

    pub fn version(&self) -> u16 {
        self.version
    }

    /// Bytes consumed so far (for progress reports).
    pub fn offset(&self) -> u64 {
        self.inp.offset()
    }

    /// Keys skipped because their collection was empty.
    pub fn empty_keys_skipped(&self) -> u64 {
        self.empty_skipped
    }

    /// The next record. After `Eof` or an error, every call fails.
    pub fn read_item(&mut self) -> Result<Item> {
        if self.finished {
            return Err(Error::corrupt(
                self.offset(),
                "read past the end of the file",
            ));
        }
        let r = self.read_item_inner();
        if matches!(r, Ok(Item::Eof { .. }) | Err(_)) {
            self.finished = true;
        }
        r
    }

    fn read_item_inner(&mut self) -> Result<Item> {
        loop {
            let at = self.inp.offset();
            let t = self.inp.u8("a record type or opcode")?;
            match t {
                OP_EXPIRETIME => {
                    let s = i32::from_le_bytes(self.inp.array("an expire time")?);
                    self.pending.expire_ms = Some(s as i64 * 1000);
                }
                OP_EXPIRETIME_MS => {
                    let ms = i64::from_le_bytes(self.inp.array("an expire time")?);
                    self.pending.expire_ms = Some(ms);
                }
                OP_FREQ => self.pending.freq = Some(self.inp.u8("an LFU counter")?),
                OP_IDLE => self.pending.idle_secs = Some(read_len(&mut self.inp)?),
                OP_EOF => return self.eof(),
                OP_SELECTDB => {
                    let db = read_len(&mut self.inp)?;
                    self.db = u32::try_from(db).map_err(|_| {
                        Error::corrupt(at, format!("database number {db} too large"))
                    })?;
                    return Ok(Item::SelectDb(self.db));
                }
                OP_RESIZEDB => {
                    let db_size = read_len(&mut self.inp)?;
                    let expires_size = read_len(&mut self.inp)?;
                    return Ok(Item::ResizeDb {
                        db_size,
                        expires_size,
                    });
                }
                OP_SLOT_INFO => {
                    let slot = read_len(&mut self.inp)?;
                    let slot_size = read_len(&mut self.inp)?;
                    let expires_slot_size = read_len(&mut self.inp)?;
                    return Ok(Item::SlotInfo {
                        slot,
                        slot_size,
                        expires_slot_size,
                    });
                }
                OP_AUX => {
                    let key = read_string(&mut self.inp)?;
                    let value = read_string(&mut self.inp)?;
                    return Ok(Item::Aux { key, value });
                }
                OP_FUNCTION2 => {
                    if !self.opts.allow_functions {
                        return Err(unsupported_op(
                            at,
                            t,
                            "function libraries (FUNCTION2) cannot be loaded: Petrel has no functions yet",
                        ));
                    }
                    // Function loading goes here when Petrel has functions:
                    // the record is the library's code, compiled and
                    // registered by the loader.
                    let code = read_string(&mut self.inp)?;
                    return Ok(Item::Function { code });
                }
                OP_FUNCTION_PRE_GA => {
                    return Err(unsupported_op(
                        at,
                        t,
                        "pre-release function format (FUNCTION_PRE_GA) not supported",
                    ))
                }
                OP_MODULE_AUX => {
                    let id = read_len(&mut self.inp)?;
                    let (name, _) = types::module_name(id);
                    return Err(unsupported_op(
                        at,
                        t,
                        &format!("module aux data for module '{name}' cannot be loaded: Petrel has no modules"),
                    ));
                }
                t if value::is_value_type(t) => {
                    let key = read_string(&mut self.inp)?;
                    let v = value::read_value(&mut self.inp, t, at, &mut self.cx)
                        .map_err(|e| e.with_key(&key))?;
                    let meta = std::mem::take(&mut self.pending);
                    match v {
                        Some(value) => {
                            return Ok(Item::Entry(KeyEntry {
                                db: self.db,
                                key,
                                value,
                                expire_ms: meta.expire_ms,
                                idle_secs: meta.idle_secs,
                                freq: meta.freq,
                            }))
                        }
                        None => self.empty_skipped += 1,
                    }
                }
                t => {
                    return Err(Error::corrupt(
                        at,
                        format!("unknown record type {t} (expected a value type or an opcode)"),
                    ))
                }
            }
        }
    }

    fn eof(&mut self) -> Result<Item> {
        if self.version < 5 {
            return Ok(Item::Eof { checksum: None });
        }
        let computed = self.inp.crc();
        let at = self.inp.offset();
        let stored = u64::from_le_bytes(self.inp.array("the 8-byte checksum")?);
        if stored == 0 {
            return Ok(Item::Eof { checksum: None });
        }
        if self.opts.verify_checksum && stored != computed {
            return Err(Error::new(ErrorKind::Checksum { stored, computed }, at));
        }
        Ok(Item::Eof {
            checksum: Some(stored),
        })
    }
}

fn unsupported_op(at: u64, op: u8, what: &str) -> Error {
    Error::new(
        ErrorKind::Unsupported {
            code: op,
            what: format!("opcode {op}: {what}"),
        },
        at,
    )
}

/// Items until `Eof` (included); stops after an error.
impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Item>;

    fn next(&mut self) -> Option<Result<Item>> {
        if self.finished {
            return None;
        }
        Some(self.read_item())
    }
}
