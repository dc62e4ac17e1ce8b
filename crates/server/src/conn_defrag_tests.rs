//! `Conn::defrag` with the testing mover (every block moves): every
//! long-lived block is offered once, through the mover, and no byte, index
//! or name changes.

use super::*;
use collections::defrag::testing;
use std::collections::HashSet;
use std::sync::Arc;

fn conn() -> Conn {
    let (a, _b) = mio::net::UnixStream::pair().expect("socket pair");
    let shared = Arc::new(ClientShared::new(1, String::new(), String::new(), -1, 0, 0));
    Conn::new(Stream::Unix(a), Token(1), Client::new(shared, true, true))
}

type Names = [HashSet<Vec<u8>>; 3];

fn names(c: &Conn) -> Names {
    let p = &c.client.pubsub;
    [
        p.channels.clone(),
        p.patterns.clone(),
        p.shard_channels.clone(),
    ]
}

/// Where the client's channel names live (ordered, so comparable).
fn channel_addrs(c: &Conn) -> std::collections::BTreeSet<usize> {
    let p = &c.client.pubsub;
    p.channels.iter().map(|n| n.as_ptr() as usize).collect()
}

#[test]
fn every_buffer_moves_and_no_byte_changes() {
    let mut c = conn();
    c.rbuf = b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n".to_vec();
    c.rlen = c.rbuf.len() - 3;
    c.rpos = 14;
    c.args = vec![(8, 12), (20, 24)];
    c.out.raw(b"+PONG\r\n$5\r\nhello\r\n");
    c.wpos = 7;
    c.client.tx.watched = (0..5)
        .map(|i| (i, format!("key:{i}").into_bytes(), Some(i as u64)))
        .collect();
    let p = &mut c.client.pubsub;
    p.channels.insert(b"news".to_vec());
    p.channels.insert(b"sport".to_vec());
    p.patterns.insert(b"n*".to_vec());
    p.shard_channels.insert(b"s1".to_vec());
    let (rbuf, args, out, watched, subs) = (
        c.rbuf.clone(),
        c.args.clone(),
        c.out.as_bytes().to_vec(),
        c.client.tx.watched.clone(),
        names(&c),
    );
    let (rbuf_at, out_at) = (c.rbuf.as_ptr(), c.out.as_bytes().as_ptr());
    let mut d = testing::all();
    let moves0 = testing::moves_on_this_thread();
    c.defrag(&mut d);
    // rbuf, args, out; 5 watched keys and their vector; 4 names.
    assert_eq!(d.hits, 3 + 6 + 4);
    assert_eq!(d.misses, 0);
    assert_eq!(testing::moves_on_this_thread() - moves0, 13);
    assert_ne!(c.rbuf.as_ptr(), rbuf_at, "the query buffer moved");
    assert_ne!(c.out.as_bytes().as_ptr(), out_at, "the reply buffer moved");
    assert_eq!(c.rbuf, rbuf);
    assert_eq!((c.rpos, c.rlen, c.wpos), (14, rbuf.len() - 3, 7));
    assert_eq!(c.args, args);
    assert_eq!(c.out.as_bytes(), &out[..]);
    assert_eq!(c.pending_output(), out.len() - 7);
    assert_eq!(c.client.tx.watched, watched);
    assert_eq!(names(&c), subs);
}

#[test]
fn big_name_lists_and_empty_buffers_are_not_offered() {
    let mut c = conn();
    c.client.tx.watched = (0..=DEFRAG_NAMES_MAX)
        .map(|i| (0, format!("key:{i}").into_bytes(), None))
        .collect();
    for i in 0..=DEFRAG_NAMES_MAX {
        c.client
            .pubsub
            .channels
            .insert(format!("ch{i}").into_bytes());
    }
    let before = (c.client.tx.watched.clone(), names(&c));
    let mut d = testing::all();
    c.defrag(&mut d);
    // Only the argument ranges (room for 8) own a block.
    assert_eq!((d.hits, d.misses), (1, 0));
    assert_eq!((c.client.tx.watched.clone(), names(&c)), before);
}

/// A pass that moves nothing leaves every name in place and counts each
/// offered block once as a miss (the sets are not taken apart).
#[test]
fn a_pass_that_moves_nothing_counts_every_block_as_a_miss() {
    let mut c = conn();
    c.rbuf = b"*1\r\n$4\r\nPING\r\n".to_vec();
    c.out.raw(b"+PONG\r\n");
    c.client.tx.watched = vec![(0, b"k".to_vec(), None)];
    let p = &mut c.client.pubsub;
    p.channels.insert(b"news".to_vec());
    p.channels.insert(b"sport".to_vec());
    p.patterns.insert(b"n*".to_vec());
    let at = channel_addrs(&c);
    let before = names(&c);
    let moves0 = testing::moves_on_this_thread();
    let mut d = testing::all_up_to(0);
    c.defrag(&mut d);
    // rbuf, args, out; 1 watched key and its vector; 3 names.
    assert_eq!((d.hits, d.misses), (0, 3 + 2 + 3));
    assert_eq!(testing::moves_on_this_thread(), moves0);
    assert_eq!(names(&c), before);
    let now = channel_addrs(&c);
    assert_eq!(now, at);
}
