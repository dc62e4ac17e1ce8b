use super::*;
use proptest::prelude::*;

/// A MEET redis-server 7.0.15 sent (captured by the end-to-end test
/// `codec_roundtrips_a_redis_meet` with PETREL_WRITE_BUS_FIXTURE): node
/// 6c1d09f8…, client port 43179, bus port 39973, owning slots 5 and
/// 16383, announcing hostname `redis-a.example`, cluster state fail.
const REDIS_MEET: &[u8] = include_bytes!("testdata/redis-7.0.15-meet.bin");

#[test]
fn redis_meet_decodes_and_encodes_back_byte_for_byte() {
    let m = decode(REDIS_MEET).unwrap();
    assert_eq!(encode(&m), REDIS_MEET);
    let h = &m.header;
    assert_eq!(h.ver, 1);
    assert_eq!(h.mtype, mtype::MEET);
    assert_eq!(h.port, 43179);
    assert_eq!(h.cport, 39973);
    assert_eq!(h.pport, 0);
    assert_eq!(&field_text(&h.sender)[..8], "6c1d09f8");
    assert!(is_null_id(&h.slaveof));
    assert_eq!(field_text(&h.myip), "");
    assert_eq!(h.flags, wflags::MYSELF | wflags::MASTER);
    assert_eq!(h.state, 1);
    assert_eq!(h.mflags, [mflags0::EXT_DATA, 0, 0]);
    assert_eq!(h.current_epoch, 0);
    assert_eq!(h.config_epoch, 0);
    let owned: Vec<usize> = (0..16384).filter(|&s| slot_bit(&h.myslots, s)).collect();
    assert_eq!(owned, vec![5, 16383]);
    assert_eq!(h.extensions, 1);
    match &m.body {
        Body::Ping { gossip, exts } => {
            assert!(gossip.is_empty());
            assert_eq!(exts, &vec![Ext::hostname("redis-a.example")]);
        }
        other => panic!("{other:?}"),
    }
    // What petrel writes for the same fields is the same message.
    let mut h2 = h.clone();
    h2.count = 0;
    let again = encode(&Message {
        header: h2,
        body: Body::Ping {
            gossip: vec![],
            exts: vec![Ext::hostname("redis-a.example")],
        },
    });
    assert_eq!(again, REDIS_MEET);
}

#[test]
fn every_truncation_or_bad_length_is_an_error() {
    for n in 0..REDIS_MEET.len() {
        assert!(decode(&REDIS_MEET[..n]).is_err(), "{n}");
    }
    let mut longer = REDIS_MEET.to_vec();
    longer.extend_from_slice(&[0; 8]);
    assert!(decode(&longer).is_err());
    let n = longer.len() as u32;
    longer[4..8].copy_from_slice(&n.to_be_bytes());
    assert!(decode(&longer).is_err(), "bytes after the last extension");
    let mut bad = REDIS_MEET.to_vec();
    bad[0] = b'X';
    assert!(decode(&bad).is_err());
    assert!(frame_len(&bad).is_err());
    let mut v2 = REDIS_MEET.to_vec();
    v2[9] = 2;
    assert!(decode(&v2).is_err(), "version 2");
}

fn arb_id() -> impl Strategy<Value = [u8; ID_LEN]> {
    proptest::array::uniform32(any::<u8>()).prop_map(|a| {
        let mut id = [0u8; ID_LEN];
        for (i, b) in id.iter_mut().enumerate() {
            *b = b"0123456789abcdef"[(a[i % 32] as usize + i) % 16];
        }
        id
    })
}

fn arb_header() -> impl Strategy<Value = Header> {
    (
        any::<(u16, u16, u64, u64, u64)>(),
        arb_id(),
        proptest::collection::vec(0usize..16384, 0..20),
        any::<(u16, u16, u16, u8, u8)>(),
    )
        .prop_map(
            |((port, count, ce, cfe, off), id, slots, (pp, cp, fl, st, mf))| {
                let mut h = Header {
                    port,
                    count,
                    current_epoch: ce,
                    config_epoch: cfe,
                    offset: off,
                    sender: id,
                    pport: pp,
                    cport: cp,
                    flags: fl,
                    state: st,
                    mflags: [mf, 0, 0],
                    ..Header::default()
                };
                for s in slots {
                    set_slot_bit(&mut h.myslots, s);
                }
                h.myip = field("10.0.0.1");
                h
            },
        )
}

fn arb_body(ty: u16) -> BoxedStrategy<Body> {
    match ty {
        mtype::PING | mtype::PONG | mtype::MEET => (
            proptest::collection::vec((arb_id(), any::<(u32, u32, u16, u16, u16)>()), 0..5),
            proptest::collection::vec("[a-z.]{0,30}", 0..2),
        )
            .prop_map(|(g, hosts)| Body::Ping {
                gossip: g
                    .into_iter()
                    .map(|(id, (ps, pr, port, cport, flags))| Gossip {
                        nodename: id,
                        ping_sent: ps,
                        pong_received: pr,
                        ip: field("127.0.0.1"),
                        port,
                        cport,
                        flags,
                        pport: 0,
                        notused1: 0,
                    })
                    .collect(),
                exts: hosts.iter().map(|h| Ext::hostname(h)).collect(),
            })
            .boxed(),
        mtype::FAIL => arb_id()
            .prop_map(|nodename| Body::Fail { nodename })
            .boxed(),
        mtype::PUBLISH | mtype::PUBLISHSHARD => (
            proptest::collection::vec(any::<u8>(), 0..40),
            proptest::collection::vec(any::<u8>(), 0..40),
        )
            .prop_map(|(channel, message)| Body::Publish { channel, message })
            .boxed(),
        mtype::UPDATE => (any::<u64>(), arb_id(), 0usize..16384)
            .prop_map(|(config_epoch, nodename, s)| {
                let mut slots = Box::new([0u8; SLOT_BYTES]);
                set_slot_bit(&mut slots, s);
                Body::Update {
                    config_epoch,
                    nodename,
                    slots,
                }
            })
            .boxed(),
        _ => Just(Body::Raw(vec![])).boxed(),
    }
}

fn arb_message() -> impl Strategy<Value = Message> {
    (0u16..11, arb_header()).prop_flat_map(|(ty, mut h)| {
        h.mtype = ty;
        arb_body(ty).prop_map(move |body| {
            let mut header = h.clone();
            if let Body::Ping { gossip, exts } = &body {
                header.count = gossip.len() as u16;
                header.extensions = exts.len() as u16;
            }
            Message { header, body }
        })
    })
}

proptest! {
    /// encode then decode is the identity, and the length is announced.
    #[test]
    fn messages_roundtrip(m in arb_message()) {
        let b = encode(&m);
        prop_assert_eq!(frame_len(&b).unwrap(), Some(b.len()));
        let d = decode(&b).unwrap();
        prop_assert_eq!(&d, &m);
        prop_assert_eq!(encode(&d), b);
    }

    /// Any corruption of a real message is decoded or refused, never a
    /// panic.
    #[test]
    fn corrupted_messages_never_panic(edits in proptest::collection::vec((0usize..2280, any::<u8>()), 1..8)) {
        let mut b = REDIS_MEET.to_vec();
        for (at, v) in edits {
            b[at % REDIS_MEET.len()] = v;
        }
        let _ = decode(&b);
    }
}
