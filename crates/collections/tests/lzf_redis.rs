//! LZF compatibility with redis-server 7.0, both ways, through DUMP and
//! RESTORE of a compressed list (skipped when `redis-server` is not on the
//! PATH):
//! * every LZF node in Redis's DUMP decodes with our decompressor into a
//!   valid listpack, and the nodes together hold the list;
//! * a DUMP payload built from our compressed nodes (copied as they are)
//!   RESTOREs in Redis to the same list;
//! * with `DEBUG QUICKLIST-PACKED-THRESHOLD` at 200 bytes on both sides,
//!   the same elements go into plain nodes (RDB container 1) in Redis's
//!   DUMP and in our quicklist, compressed in the interior when LZF pays.

use collections::quicklist::{lzf, Container};
use collections::{Listpack, Quicklist};
mod common;

use common::{Redis, V};

fn start_redis() -> Option<Redis> {
    Redis::start_with(&[
        "--enable-debug-command",
        "yes",
        "--list-compress-depth",
        "1",
        "--list-max-listpack-size",
        "64",
    ])
}

fn rdb_len(b: &[u8], i: &mut usize) -> (usize, bool) {
    let c = b[*i];
    *i += 1;
    match c >> 6 {
        0 => ((c & 63) as usize, false),
        1 => {
            *i += 1;
            ((((c & 63) as usize) << 8) | b[*i - 1] as usize, false)
        }
        2 => {
            assert_eq!(c, 0x80, "32-bit length");
            *i += 4;
            (
                u32::from_be_bytes(b[*i - 4..*i].try_into().unwrap()) as usize,
                false,
            )
        }
        _ => ((c & 63) as usize, true),
    }
}

fn put_len(out: &mut Vec<u8>, n: usize) {
    if n < 64 {
        out.push(n as u8);
    } else if n < 16384 {
        out.extend_from_slice(&[0x40 | (n >> 8) as u8, n as u8]);
    } else {
        out.push(0x80);
        out.extend_from_slice(&(n as u32).to_be_bytes());
    }
}

/// The packed threshold both sides use.
const THRESHOLD: usize = 200;

fn elements() -> Vec<Vec<u8>> {
    let mut x = 7u64;
    (0..3000u32)
        .map(|i| match i % 7 {
            // Large: plain nodes, compressible or not.
            _ if i % 97 == 5 => "large".repeat(40 + i as usize % 30).into_bytes(),
            _ if i % 97 == 50 => (0..THRESHOLD as u32 + i % 100)
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (x >> 56) as u8
                })
                .collect(),
            0 => format!("item:{i}").into_bytes(),
            1 => i.to_string().into_bytes(),
            2 => format!("{}", i as i64 * -1_000_003).into_bytes(),
            3 => "abc".repeat(1 + i as usize % 40).into_bytes(),
            _ => (0..(i % 23))
                .map(|_| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    (x >> 59) as u8 + b'a'
                })
                .collect(),
        })
        .collect()
}

#[test]
fn lzf_nodes_round_trip_through_redis() {
    let Some(mut c) = start_redis() else {
        eprintln!("redis-server not found: skipped");
        return;
    };
    collections::quicklist::set_packed_threshold(THRESHOLD as u64);
    c.cmd::<&[u8]>(&[
        b"DEBUG",
        b"QUICKLIST-PACKED-THRESHOLD",
        THRESHOLD.to_string().as_bytes(),
    ]);
    let elems = elements();
    let large = elems.iter().filter(|e| e.len() >= THRESHOLD).count();
    let mut args: Vec<&[u8]> = vec![b"RPUSH", b"l"];
    args.extend(elems.iter().map(|e| e.as_slice()));
    c.cmd(&args);

    // Redis -> us.
    let V::Bulk(dump) = c.cmd::<&[u8]>(&[b"DUMP", b"l"]) else {
        panic!("DUMP")
    };
    assert_eq!(dump[0], 18, "quicklist v2 object");
    let mut i = 1;
    let (nodes, _) = rdb_len(&dump, &mut i);
    let (mut got, mut lzf_nodes, mut plain_nodes, mut plain_lzf) = (Vec::new(), 0, 0, 0);
    for _ in 0..nodes {
        let (container, _) = rdb_len(&dump, &mut i);
        assert!(container == 1 || container == 2, "container {container}");
        let (n, special) = rdb_len(&dump, &mut i);
        let lp = if special {
            assert_eq!(n, 3, "LZF string");
            let (clen, _) = rdb_len(&dump, &mut i);
            let (ulen, _) = rdb_len(&dump, &mut i);
            let mut out = Vec::new();
            lzf::decompress(&dump[i..i + clen], ulen, &mut out).expect("redis LZF decodes");
            i += clen;
            lzf_nodes += 1;
            out
        } else {
            i += n;
            dump[i - n..i].to_vec()
        };
        if container == 1 {
            assert!(lp.len() >= THRESHOLD);
            plain_nodes += 1;
            plain_lzf += special as usize;
            got.push(lp);
            continue;
        }
        let lp = Listpack::from_bytes(lp).expect("valid listpack");
        got.extend(lp.iter().map(|v| v.to_vec()));
    }
    assert!(lzf_nodes > 10, "{lzf_nodes} compressed nodes of {nodes}");
    assert_eq!(plain_nodes, large);
    assert!(
        plain_lzf > 5,
        "{plain_lzf} compressed plain nodes in Redis's DUMP"
    );
    assert_eq!(got, elems);
    let footer = dump[i..i + 2].to_vec();

    // Us -> Redis.
    let mut q = Quicklist::new(64);
    q.set_compress_depth(1);
    for e in &elems {
        q.push_back(e);
    }
    let mut p = vec![18u8];
    put_len(&mut p, q.node_count());
    let (mut ours, mut our_plain, mut our_plain_lzf, mut buf) = (0, 0, 0, Vec::new());
    for n in q.nodes() {
        put_len(&mut p, n.container() as usize);
        if n.container() == Container::Plain {
            our_plain += 1;
            our_plain_lzf += n.is_compressed() as usize;
        }
        match n.lzf() {
            Some((data, raw_len)) => {
                p.push(0xC3);
                put_len(&mut p, data.len());
                put_len(&mut p, raw_len);
                p.extend_from_slice(data);
                ours += 1;
            }
            None => n.with_bytes(&mut buf, |b| {
                put_len(&mut p, b.len());
                p.extend_from_slice(b);
            }),
        }
    }
    assert!(ours > 10);
    assert_eq!(our_plain, large);
    assert!(our_plain_lzf > 5, "{our_plain_lzf} compressed plain nodes");
    p.extend_from_slice(&footer);
    p.extend_from_slice(&[0; 8]);
    c.cmd::<&[u8]>(&[b"DEBUG", b"SET-SKIP-CHECKSUM-VALIDATION", b"1"]);
    let V::Status(ok) = c.cmd::<&[u8]>(&[b"RESTORE", b"l2", b"0", &p]) else {
        panic!("RESTORE")
    };
    assert_eq!(ok, "OK");
    let V::Arr(back) = c.cmd::<&[u8]>(&[b"LRANGE", b"l2", b"0", b"-1"]) else {
        panic!("LRANGE")
    };
    let back: Vec<Vec<u8>> = back
        .into_iter()
        .map(|r| match r {
            V::Bulk(b) => b,
            _ => panic!("element"),
        })
        .collect();
    assert_eq!(back, elems);
    let V::Int(n) = c.cmd::<&[u8]>(&[b"LLEN", b"l2"]) else {
        panic!("LLEN")
    };
    assert_eq!(n as usize, elems.len());
}
