//! Writing an AOF base file: the dataset at one instant as an RDB file
//! (`aof-use-rdb-preamble yes`, Redis's default: the `aof-base` aux field
//! set, function libraries first), or as commands (`no`).
//!
//! The caller holds the journal's order lock exclusively and every
//! partition, so the base is exactly the state at the journal's cut (the
//! incremental file opened at the same moment holds everything after).
//! This walk blocks the server for its length; the forkless snapshot of
//! Persistence I (`store::keyspace::snapshot`) will replace it.

use std::io::{self, BufWriter, Write};
use std::path::Path;

use crate::kernel::journal::encode_command;
use crate::kernel::server::Server;

/// Writes the base to `path` (created, fsynced) and returns its size.
pub fn write(srv: &Server, path: &Path, rdb_preamble: bool, now_ms: u64) -> io::Result<u64> {
    let f = std::fs::File::create(path)?;
    let size = if rdb_preamble {
        write_rdb(srv, BufWriter::with_capacity(1 << 16, f), now_ms)?
    } else {
        write_commands(srv, BufWriter::with_capacity(1 << 16, f), now_ms)?
    };
    std::fs::File::open(path)?.sync_all()?;
    Ok(size)
}

fn write_rdb<W: Write>(srv: &Server, w: W, now_ms: u64) -> io::Result<u64> {
    let settings = srv.settings();
    let opts = rdb::WriteOptions {
        compression: true,
        checksum: true,
        ..Default::default()
    };
    let mut wr = rdb::Writer::new(w, opts)?;
    wr.aux(b"redis-ver", crate::REDIS_VERSION.as_bytes())?;
    wr.aux_int(b"redis-bits", 64)?;
    wr.aux_int(b"ctime", (now_ms / 1000) as i64)?;
    wr.aux_int(b"used-mem", crate::kernel::memprobe::used_memory() as i64)?;
    wr.aux_int(b"aof-base", 1)?;
    {
        let engine = srv.scripting.functions.lock();
        for code in engine.dump_codes() {
            wr.function(code)?;
        }
    }
    let mut err = None;
    for db in 0..settings.databases {
        let info = srv.keyspace.db_info(db);
        if info.keys == 0 {
            continue;
        }
        wr.select_db(db as u32)?;
        wr.resize_db(info.keys as u64, info.expires as u64)?;
        srv.keyspace.for_each_key(db, now_ms, |e| {
            if err.is_some() {
                return;
            }
            let meta = rdb::EntryMeta {
                expire_ms: e.expire_at().map(|t| t as i64),
                ..Default::default()
            };
            if let Err(x) = wr.entry(&e.key(), e.value(), meta) {
                err = Some(x);
            }
        });
        if let Some(e) = err.take() {
            return Err(e);
        }
    }
    let (_, n) = wr.finish()?;
    Ok(n)
}

/// Counts bytes passed to the inner writer.
struct Counting<W> {
    w: W,
    n: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.w.write(b)?;
        self.n += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// The base as commands: `FUNCTION LOAD` per library, then per database a
/// `SELECT` and one `RESTORE key 0 payload ABSTTL` per key (the value in
/// DUMP form, its absolute TTL when it has one), which redis-server and
/// Petrel both replay.
fn write_commands<W: Write>(srv: &Server, w: W, now_ms: u64) -> io::Result<u64> {
    let settings = srv.settings();
    let mut out = Counting { w, n: 0 };
    let mut buf = Vec::with_capacity(1 << 16);
    {
        let engine = srv.scripting.functions.lock();
        for code in engine.dump_codes() {
            encode_command(&mut buf, &[b"FUNCTION".as_slice(), b"LOAD", code]);
        }
    }
    let mut err = None;
    for db in 0..settings.databases {
        if srv.keyspace.db_info(db).keys == 0 {
            continue;
        }
        let n = db.to_string();
        encode_command(&mut buf, &[b"SELECT".as_slice(), n.as_bytes()]);
        srv.keyspace.for_each_key(db, now_ms, |e| {
            if err.is_some() {
                return;
            }
            let payload = rdb::dump(e.value(), &rdb::WriteOptions::default());
            let ttl = e.expire_at().unwrap_or(0).to_string();
            let key = e.key();
            encode_command(
                &mut buf,
                &[
                    b"RESTORE".as_slice(),
                    &key,
                    ttl.as_bytes(),
                    &payload,
                    b"ABSTTL",
                ],
            );
            if buf.len() >= 1 << 16 {
                if let Err(x) = out.write_all(&buf) {
                    err = Some(x);
                }
                buf.clear();
            }
        });
        if let Some(e) = err.take() {
            return Err(e);
        }
    }
    out.write_all(&buf)?;
    out.flush()?;
    Ok(out.n)
}
