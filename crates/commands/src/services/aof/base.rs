//! Writing an AOF base file: the dataset at one instant as an RDB file
//! (`aof-use-rdb-preamble yes`, Redis's default: the `aof-base` aux field
//! set, function libraries first), or as commands (`no`): the ones Redis
//! 7.0's rewrite writes (`SET`, `RPUSH`, `SADD`, `ZADD`, `HMSET` in
//! batches of 64 elements, `PEXPIREAT`; streams as `XADD` per entry,
//! `XSETID`, `XGROUP CREATE`, `XCLAIM` / `XGROUP CREATECONSUMER`).
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
/// `functions` is the function libraries' code, taken by the caller
/// before the partitions (the engine is locked before partitions, as FCALL
/// does).
pub fn write(
    srv: &Server,
    path: &Path,
    rdb_preamble: bool,
    now_ms: u64,
    functions: &[Vec<u8>],
) -> io::Result<u64> {
    let f = std::fs::File::create(path)?;
    let size = if rdb_preamble {
        write_rdb(srv, BufWriter::with_capacity(1 << 16, f), now_ms, functions)?
    } else {
        write_commands(srv, BufWriter::with_capacity(1 << 16, f), now_ms, functions)?
    };
    std::fs::File::open(path)?.sync_all()?;
    Ok(size)
}

fn write_rdb<W: Write>(srv: &Server, w: W, now_ms: u64, functions: &[Vec<u8>]) -> io::Result<u64> {
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
    for code in functions {
        wr.function(code)?;
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

/// Redis's `AOF_REWRITE_ITEMS_PER_CMD`: elements per command in a base.
const ITEMS_PER_CMD: usize = 64;

fn lp_bytes(v: collections::LpValue<'_>) -> Vec<u8> {
    match v {
        collections::LpValue::Str(s) => s.to_vec(),
        collections::LpValue::Int(i) => i.to_string().into_bytes(),
    }
}

/// Appends the commands that rebuild one key, as Redis 7.0's rewrite
/// writes them: `SET`, or `RPUSH`/`SADD`/`ZADD`/`HMSET` with at most 64
/// elements each, then `PEXPIREAT` when it has a TTL.
fn key_commands(buf: &mut Vec<u8>, key: &[u8], v: &store::CompactValue, expire: Option<u64>) {
    use store::Kind;
    let mut batch = |name: &[u8], items: Vec<Vec<u8>>, per: usize| {
        for chunk in items.chunks(ITEMS_PER_CMD * per) {
            let mut argv: Vec<&[u8]> = vec![name, key];
            argv.extend(chunk.iter().map(|a| a.as_slice()));
            encode_command(buf, &argv);
        }
    };
    match v.kind() {
        Kind::String => {
            if let Some(s) = v.string() {
                batch(b"SET", vec![s.to_vec()], 1);
            }
        }
        Kind::List => {
            let mut items = Vec::new();
            if let Some(l) = v.as_list() {
                l.for_each(|e| items.push(lp_bytes(e)));
            }
            batch(b"RPUSH", items, 1);
        }
        Kind::Set => {
            let mut items = Vec::new();
            if let Some(s) = v.as_set() {
                for m in s.iter() {
                    items.push(match m {
                        collections::value::set::Member::Int(i) => i.to_string().into_bytes(),
                        collections::value::set::Member::Str(b) => b.to_vec(),
                    });
                }
            }
            batch(b"SADD", items, 1);
        }
        Kind::ZSet => {
            let mut items = Vec::new();
            if let Some(z) = v.as_zset() {
                z.for_each_in(0, z.len(), false, |m, score| {
                    items.push(resp::format_double_like_redis(score).to_vec());
                    items.push(m.to_vec());
                    true
                });
            }
            batch(b"ZADD", items, 2);
        }
        Kind::Hash => {
            let mut items = Vec::new();
            if let Some(h) = v.as_hash() {
                let h: &collections::HashValue = &h;
                for (f, val) in h.iter() {
                    items.push(lp_bytes(f));
                    items.push(lp_bytes(val));
                }
            }
            batch(b"HMSET", items, 2);
        }
        Kind::Stream => {
            if let Some(st) = v.as_stream() {
                stream_commands(buf, key, st);
            }
        }
    }
    if let Some(t) = expire {
        let t = t.to_string();
        encode_command(buf, &[b"PEXPIREAT".as_slice(), key, t.as_bytes()]);
    }
}

/// Appends the commands that rebuild a stream, as Redis 7.0's rewrite
/// writes them: one `XADD key id field value...` per entry (`XADD key
/// MAXLEN 0 0-1 x y` for an empty stream), `XSETID key last ENTRIESADDED n
/// MAXDELETEDID id`, then per group `XGROUP CREATE key group id ENTRIESREAD
/// n` and per consumer either an `XCLAIM key group consumer 0 id TIME ms
/// RETRYCOUNT n JUSTID FORCE` per pending entry or, with none pending,
/// `XGROUP CREATECONSUMER key group consumer`.
fn stream_commands(buf: &mut Vec<u8>, key: &[u8], st: &collections::stream::Stream) {
    let b = |s: &str| s.as_bytes().to_vec();
    let mut emit = |argv: Vec<Vec<u8>>| {
        let refs: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
        encode_command(buf, &refs);
    };
    if st.is_empty() {
        emit(vec![
            b("XADD"),
            key.to_vec(),
            b("MAXLEN"),
            b("0"),
            b("0-1"),
            b("x"),
            b("y"),
        ]);
    } else {
        let (min, max) = (
            collections::stream::StreamId::MIN,
            collections::stream::StreamId::MAX,
        );
        for e in st.range(min, max, false) {
            let mut argv = vec![b("XADD"), key.to_vec(), e.id.to_bytes()];
            for (f, val) in e.fields() {
                argv.push(f.to_vec());
                argv.push(val.to_vec());
            }
            emit(argv);
        }
    }
    emit(vec![
        b("XSETID"),
        key.to_vec(),
        st.last_id().to_bytes(),
        b("ENTRIESADDED"),
        st.entries_added().to_string().into_bytes(),
        b("MAXDELETEDID"),
        st.max_deleted_id().to_bytes(),
    ]);
    for g in st.groups() {
        let read = g.entries_read().map_or(-1, |n| n as i64);
        emit(vec![
            b("XGROUP"),
            b("CREATE"),
            key.to_vec(),
            g.name().to_vec(),
            g.last_id().to_bytes(),
            b("ENTRIESREAD"),
            read.to_string().into_bytes(),
        ]);
        for c in g.consumers() {
            if c.pending() == 0 {
                emit(vec![
                    b("XGROUP"),
                    b("CREATECONSUMER"),
                    key.to_vec(),
                    g.name().to_vec(),
                    c.name().to_vec(),
                ]);
                continue;
            }
            for id in c.pending_ids() {
                let Some(n) = g.nack(id) else { continue };
                emit(vec![
                    b("XCLAIM"),
                    key.to_vec(),
                    g.name().to_vec(),
                    c.name().to_vec(),
                    b("0"),
                    id.to_bytes(),
                    b("TIME"),
                    n.delivery_time.to_string().into_bytes(),
                    b("RETRYCOUNT"),
                    n.delivery_count.to_string().into_bytes(),
                    b("JUSTID"),
                    b("FORCE"),
                ]);
            }
        }
    }
}

/// The base as commands (`aof-use-rdb-preamble no`): `FUNCTION LOAD` per
/// library, then per database a `SELECT` and each key's commands.
fn write_commands<W: Write>(
    srv: &Server,
    w: W,
    now_ms: u64,
    functions: &[Vec<u8>],
) -> io::Result<u64> {
    let settings = srv.settings();
    let mut out = Counting { w, n: 0 };
    let mut buf = Vec::with_capacity(1 << 16);
    for code in functions {
        encode_command(&mut buf, &[b"FUNCTION".as_slice(), b"LOAD", code]);
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
            key_commands(&mut buf, &e.key(), e.value(), e.expire_at());
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
