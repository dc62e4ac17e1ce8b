//! Streams: `STREAM_LISTPACKS` (15, Redis 5 to 6.2), `STREAM_LISTPACKS_2`
//! (19, what 7.0 writes) and `STREAM_LISTPACKS_3` (21, Redis 7.2: adds
//! each consumer's active time, which Petrel does not keep).
//!
//! Layout: node count, then per node its 16-byte master ID (a string) and
//! its listpack (a string, Redis's node format byte for byte); length;
//! last ID; (19, 21) first ID, max deleted ID, entries added; group count,
//! then per group: name, last delivered ID, (19, 21) entries read (2^64-1
//! for none), the global PEL (count, then 16 raw ID bytes, delivery time
//! as 8-byte little-endian ms, delivery count), the consumers (count, then
//! name, seen time, (21) active time, and the consumer's PEL: count and
//! raw IDs, each of which must be in the global PEL).
//!
//! Type 15 has no first ID, max deleted ID, entries added or entries read:
//! they are derived as Redis 7.0 does (first live entry, 0-0, the length,
//! the estimate from the group's last ID).
//!
//! Checked (Redis with deep sanitization, which Petrel always applies):
//! every node deeply ([`Stream::from_nodes`]), the length and IDs against
//! the nodes, duplicate group names, duplicate global or consumer PEL
//! entries, consumer PEL entries missing from the global PEL, global PEL
//! entries owned by no consumer, duplicate consumer names.

use std::collections::BTreeMap;
use std::io::Read;

use collections::stream::{Stream, StreamId};
use store::CompactValue;

use super::ctx::{cap_hint, Ctx};
use super::decode::{read_len, read_string};
use super::input::Input;
use crate::error::{Error, Result};
use crate::types::*;

fn read_id<R: Read>(inp: &mut Input<R>) -> Result<StreamId> {
    Ok(StreamId::new(read_len(inp)?, read_len(inp)?))
}

fn read_raw_id<R: Read>(inp: &mut Input<R>) -> Result<StreamId> {
    let b = inp.array::<16>("a stream ID")?;
    Ok(StreamId::from_be_bytes(&b).expect("16 bytes"))
}

fn read_ms<R: Read>(inp: &mut Input<R>) -> Result<i64> {
    Ok(i64::from_le_bytes(inp.array::<8>("a millisecond time")?))
}

pub fn read<R: Read>(inp: &mut Input<R>, t: u8, _cx: &mut Ctx) -> Result<Option<CompactValue>> {
    let at = inp.offset();
    let n = read_len(inp)?;
    let mut nodes = Vec::with_capacity(cap_hint(inp, n));
    for _ in 0..n {
        let kat = inp.offset();
        let key = read_string(inp)?;
        let Some(id) = StreamId::from_be_bytes(&key).filter(|_| key.len() == 16) else {
            return Err(Error::corrupt(
                kat,
                "stream node key entry is not the size of a stream ID",
            ));
        };
        let lp = read_string(inp)?;
        nodes.push((id, lp));
    }
    let length = read_len(inp)?;
    let last_id = read_id(inp)?;
    let v1 = t == STREAM_LISTPACKS;
    let mut s = if v1 {
        // Derive the 7.0 fields from the nodes: build once to find the
        // first live entry.
        let probe = Stream::from_nodes(
            nodes.clone(),
            length,
            last_id,
            StreamId::MIN,
            StreamId::MIN,
            length,
        )
        .map_err(|e| Error::corrupt(at, e.0))?;
        let first = probe.first_entry().map_or(StreamId::MIN, |e| e.id);
        Stream::from_nodes(nodes, length, last_id, first, StreamId::MIN, length)
    } else {
        let first = read_id(inp)?;
        let max_deleted = read_id(inp)?;
        let added = read_len(inp)?;
        Stream::from_nodes(nodes, length, last_id, first, max_deleted, added)
    }
    .map_err(|e| Error::corrupt(at, e.0))?;

    let groups = read_len(inp)?;
    for _ in 0..groups {
        let gat = inp.offset();
        let name = read_string(inp)?;
        let gid = read_id(inp)?;
        let entries_read = if v1 {
            s.estimate_entries_read(gid)
        } else {
            match read_len(inp)? {
                u64::MAX => None,
                r => Some(r),
            }
        };
        if s.create_group(&name, gid, entries_read).is_err() {
            return Err(Error::corrupt(
                gat,
                "Duplicated consumer group name loading stream",
            ));
        }
        // The global PEL: ID -> (delivery time, count, owned yet).
        let npel = read_len(inp)?;
        let mut pel: BTreeMap<StreamId, (i64, u64, bool)> = BTreeMap::new();
        for _ in 0..npel {
            let pat = inp.offset();
            let id = read_raw_id(inp)?;
            let time = read_ms(inp)?;
            let count = read_len(inp)?;
            if pel.insert(id, (time, count, false)).is_some() {
                return Err(Error::corrupt(
                    pat,
                    "Duplicated global PEL entry loading stream consumer group",
                ));
            }
        }
        let ncons = read_len(inp)?;
        for _ in 0..ncons {
            let cat = inp.offset();
            let cname = read_string(inp)?;
            let seen = read_ms(inp)?;
            if t == STREAM_LISTPACKS_3 {
                // Redis 7.2's active time: not kept by Petrel (7.0).
                read_ms(inp)?;
            }
            if s.group(&name).and_then(|g| g.consumer(&cname)).is_some() {
                return Err(Error::corrupt(
                    cat,
                    "Duplicated consumer name loading stream consumer group",
                ));
            }
            let m = read_len(inp)?;
            for _ in 0..m {
                let pat = inp.offset();
                let id = read_raw_id(inp)?;
                match pel.get_mut(&id) {
                    None => {
                        return Err(Error::corrupt(
                            pat,
                            "Consumer entry not found in group global PEL",
                        ))
                    }
                    Some(e) if e.2 => {
                        return Err(Error::corrupt(
                            pat,
                            "Duplicated consumer PEL entry loading a stream consumer group",
                        ))
                    }
                    Some(e) => {
                        e.2 = true;
                        s.load_pending(&name, id, &cname, e.0, e.1);
                    }
                }
            }
            s.load_consumer(&name, &cname, seen);
        }
        if pel.values().any(|e| !e.2) {
            return Err(Error::corrupt(gat, "Stream CG PEL entry without consumer"));
        }
    }
    Ok(Some(CompactValue::from_stream(s)))
}
