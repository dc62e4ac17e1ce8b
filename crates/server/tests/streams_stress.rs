//! Consumer-group stress on petrel with two worker threads: producers XADD
//! while consumers read with blocking XREADGROUP and XACK; two consumers
//! "crash" (drop their connection with entries still pending), and the
//! survivors take those over with XAUTOCLAIM. At the end every produced
//! entry has been acknowledged exactly once (an XACK that returned 1), the
//! group's PEL is empty, and no entry was acknowledged twice or unknown.
//! Counts only: no timing assertion.

mod common;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use resp::Value;

const PRODUCERS: usize = 3;
const PER_PRODUCER: usize = 1500;
const CONSUMERS: usize = 4;
/// Consumers 0 and 1 stop (connection dropped) after this many batches,
/// leaving their last batch unacknowledged.
const CRASH_AFTER: usize = 5;

/// The entry IDs of an XREADGROUP reply (RESP2) for one stream, or of
/// XAUTOCLAIM's claimed list.
fn entry_ids(entries: &Value) -> Vec<Vec<u8>> {
    let Value::Array(es) = entries else {
        return Vec::new();
    };
    es.iter()
        .filter_map(|e| match e {
            Value::Array(pair) => match pair.first() {
                Some(Value::Bulk(id)) => Some(id.clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn read_ids(v: &Value) -> Vec<Vec<u8>> {
    match v {
        Value::Array(streams) => streams
            .iter()
            .flat_map(|s| match s {
                Value::Array(kv) if kv.len() == 2 => entry_ids(&kv[1]),
                _ => Vec::new(),
            })
            .collect(),
        _ => Vec::new(),
    }
}

#[test]
fn consumer_group_with_crashes_acks_everything_once() {
    let mut s = TestServer::start(&[("threads", "2")]);
    let port = s.port();
    let mut admin = RawConn::tcp(port);
    assert_eq!(
        admin.cmd(&["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"]),
        Value::Simple(b"OK".to_vec())
    );
    let produced: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    // id -> number of XACKs that returned 1 for it.
    let acked: Arc<Mutex<HashMap<Vec<u8>, usize>>> = Arc::default();
    let producers_done = Arc::new(AtomicBool::new(false));
    let total = PRODUCERS * PER_PRODUCER;
    let acked_count = Arc::new(AtomicUsize::new(0));
    // Entries survivors took over with XAUTOCLAIM.
    let claimed_count = Arc::new(AtomicUsize::new(0));

    let mut producers = Vec::new();
    for p in 0..PRODUCERS {
        let produced = produced.clone();
        producers.push(std::thread::spawn(move || {
            let mut c = RawConn::tcp(port);
            for i in 0..PER_PRODUCER {
                match c.cmd(&["XADD", "s", "*", "p", &p.to_string(), "i", &i.to_string()]) {
                    Value::Bulk(id) => produced.lock().unwrap().push(id),
                    v => panic!("XADD: {v}"),
                }
            }
        }));
    }

    let mut consumers = Vec::new();
    for n in 0..CONSUMERS {
        let acked = acked.clone();
        let done = producers_done.clone();
        let count = acked_count.clone();
        let claimed_count = claimed_count.clone();
        consumers.push(std::thread::spawn(move || {
            let name = format!("c{n}");
            let mut c = RawConn::tcp(port);
            let ack = |c: &mut RawConn, ids: &[Vec<u8>]| {
                for id in ids {
                    let r = c.cmd(&[b"XACK".as_slice(), b"s", b"g", id]);
                    if r == Value::Int(1) {
                        *acked.lock().unwrap().entry(id.clone()).or_default() += 1;
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                }
            };
            let deadline = Instant::now() + Duration::from_secs(120);
            let mut batches = 0;
            while Instant::now() < deadline {
                let r = c.cmd(&[
                    "XREADGROUP",
                    "GROUP",
                    "g",
                    &name,
                    "COUNT",
                    "20",
                    "BLOCK",
                    "50",
                    "STREAMS",
                    "s",
                    ">",
                ]);
                let ids = read_ids(&r);
                if !ids.is_empty() {
                    batches += 1;
                    if n < 2 && batches == CRASH_AFTER {
                        // Crash: the batch stays pending for the group.
                        return;
                    }
                    ack(&mut c, &ids);
                }
                if n >= 2 {
                    // Survivors take over entries idle for 100 ms.
                    let r = c.cmd(&[
                        "XAUTOCLAIM",
                        "s",
                        "g",
                        &name,
                        "100",
                        "0-0",
                        "COUNT",
                        "50",
                        "JUSTID",
                    ]);
                    if let Value::Array(parts) = &r {
                        if let Some(Value::Array(claimed)) = parts.get(1) {
                            let ids: Vec<Vec<u8>> = claimed
                                .iter()
                                .filter_map(|v| match v {
                                    Value::Bulk(b) => Some(b.clone()),
                                    _ => None,
                                })
                                .collect();
                            claimed_count.fetch_add(ids.len(), Ordering::SeqCst);
                            ack(&mut c, &ids);
                        }
                    }
                    if done.load(Ordering::SeqCst) && count.load(Ordering::SeqCst) >= total {
                        return;
                    }
                }
            }
        }));
    }
    for p in producers {
        p.join().unwrap();
    }
    producers_done.store(true, Ordering::SeqCst);
    for c in consumers {
        c.join().unwrap();
    }

    let produced = produced.lock().unwrap();
    let acked = acked.lock().unwrap();
    // The crashed consumers' last batches (20 entries each, when their
    // reads were full) were taken over.
    assert!(
        claimed_count.load(Ordering::SeqCst) > 0,
        "no entry was claimed from the crashed consumers"
    );
    assert_eq!(produced.len(), total);
    assert_eq!(
        admin.cmd(&["XLEN", "s"]),
        Value::Int(total as i64),
        "every XADD is in the stream"
    );
    let twice: Vec<_> = acked.iter().filter(|(_, &n)| n != 1).collect();
    assert!(twice.is_empty(), "acknowledged more than once: {twice:?}");
    let known: std::collections::HashSet<&Vec<u8>> = produced.iter().collect();
    let unknown: Vec<_> = acked.keys().filter(|id| !known.contains(id)).collect();
    assert!(
        unknown.is_empty(),
        "acknowledged but never produced: {unknown:?}"
    );
    assert_eq!(acked.len(), total, "every entry acknowledged");
    match admin.cmd(&["XPENDING", "s", "g"]) {
        Value::Array(v) => assert_eq!(v[0], Value::Int(0), "PEL empty: {v:?}"),
        v => panic!("XPENDING: {v}"),
    }
    s.assert_alive();
}
