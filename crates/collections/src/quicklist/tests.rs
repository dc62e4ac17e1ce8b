//! Model tests of [`Quicklist`] against a `Vec`, at compress depths 0, 1
//! and 2 with small nodes (so most nodes are interior), and with packed
//! thresholds small enough that many elements go into plain nodes (the
//! threshold also changes in the middle of a run, as `DEBUG
//! QUICKLIST-PACKED-THRESHOLD` may).

use super::*;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    PushBack(Vec<u8>),
    PushFront(Vec<u8>),
    PopBack,
    PopFront,
    Insert(usize, Vec<u8>),
    Set(isize, Vec<u8>),
    Remove(isize),
    RemoveRange(usize, usize),
    Trim(usize, usize),
    Lrem(Vec<u8>, i64),
    InsertPivot(Vec<u8>, Vec<u8>, bool),
    PopN(bool, usize),
    /// Change the packed threshold (this thread only).
    Threshold(usize),
}

fn elem() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => (0i64..20).prop_map(|v| v.to_string().into_bytes()),
        2 => proptest::collection::vec(b'a'..b'd', 0..4),
        2 => (0u32..6, 8usize..40).prop_map(|(k, n)| format!("item:{k}").repeat(n / 8).into_bytes()),
        1 => (0usize..3).prop_map(|k| vec![b'x'; [100, 3000, 9000][k]]),
        // Large for the small thresholds below, compressible or not.
        2 => (0usize..6, any::<u8>()).prop_map(|(k, b)| {
            let n = [40, 47, 48, 64, 200, 700][k];
            if b % 2 == 0 {
                vec![b'a' + b % 26; n]
            } else {
                (0..n).map(|i| (i as u8).wrapping_mul(b).wrapping_add(i as u8 >> 3)).collect()
            }
        }),
        1 => (0u64..40).prop_map(|i| i.to_string().repeat(30).into_bytes()),
    ]
}

/// Thresholds: tiny (almost everything plain), around the element sizes,
/// and Redis's default (no plain node).
fn threshold() -> impl Strategy<Value = usize> {
    prop_oneof![
        Just(1usize),
        Just(3),
        Just(48),
        Just(64),
        Just(200),
        Just(DEFAULT_PACKED_THRESHOLD)
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => elem().prop_map(Op::PushBack),
        4 => elem().prop_map(Op::PushFront),
        1 => Just(Op::PopBack),
        1 => Just(Op::PopFront),
        3 => (any::<usize>(), elem()).prop_map(|(i, e)| Op::Insert(i, e)),
        2 => (-50isize..50, elem()).prop_map(|(i, e)| Op::Set(i, e)),
        1 => (-50isize..50).prop_map(Op::Remove),
        1 => (0usize..60, 0usize..30).prop_map(|(a, b)| Op::RemoveRange(a, b)),
        1 => (0usize..10, 0usize..200).prop_map(|(a, b)| Op::Trim(a, b)),
        1 => (elem(), -3i64..3).prop_map(|(e, c)| Op::Lrem(e, c)),
        2 => (elem(), elem(), any::<bool>()).prop_map(|(p, e, a)| Op::InsertPivot(p, e, a)),
        1 => (any::<bool>(), 0usize..40).prop_map(|(h, n)| Op::PopN(h, n)),
        1 => threshold().prop_map(Op::Threshold),
    ]
}

fn norm(len: usize, i: isize) -> Option<usize> {
    let j = if i < 0 { len as isize + i } else { i };
    (j >= 0 && (j as usize) < len).then_some(j as usize)
}

fn from(q: &Quicklist, k: usize) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    q.for_each_from(k, |x| {
        v.push(x.to_vec());
        true
    });
    v
}

fn rev_from(q: &Quicklist, k: usize) -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    q.for_each_rev_from(k, |x| {
        v.push(x.to_vec());
        true
    });
    v
}

/// Per element, whether it sits in a plain node.
fn containers(q: &Quicklist) -> Vec<bool> {
    q.nodes
        .iter()
        .flat_map(|n| std::iter::repeat_n(n.is_plain(), n.len()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]
    /// Every operation against a `Vec` of (element, stored plain): the
    /// elements and their order match, and an element is in a plain node
    /// exactly when it was at least the threshold in force when it was
    /// stored.
    #[test]
    fn model(fill in prop_oneof![Just(-1i32), Just(-2), Just(1), Just(3), Just(5)],
             depth in 0u32..3,
             start in threshold(),
             ops in proptest::collection::vec(op(), 1..300)) {
        set_test_threshold(Some(start));
        let mut q = Quicklist::new(fill);
        q.set_compress_depth(depth);
        let mut m: Vec<(Vec<u8>, bool)> = Vec::new();
        let stored = |e: Vec<u8>| { let p = e.len() >= packed_threshold(); (e, p) };
        let bytes = |v: &[(Vec<u8>, bool)]| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        for o in ops {
            let desc: String = format!("{o:?}").chars().take(60).collect();
            match o {
                Op::PushBack(e) => { q.push_back(&e); m.push(stored(e)); }
                Op::PushFront(e) => { q.push_front(&e); m.insert(0, stored(e)); }
                Op::PopBack => prop_assert_eq!(q.pop_back(), m.pop().map(|x| x.0)),
                Op::PopFront => prop_assert_eq!(q.pop_front(), if m.is_empty() { None } else { Some(m.remove(0).0) }),
                Op::Insert(i, e) => { let i = i % (m.len() + 1); q.insert(i, &e); m.insert(i, stored(e)); }
                Op::Set(i, e) => {
                    let r = q.set(i, &e);
                    match norm(m.len(), i) { Some(j) => { prop_assert!(r); m[j] = stored(e); } None => prop_assert!(!r) }
                }
                Op::Remove(i) => {
                    let want = norm(m.len(), i).map(|j| m.remove(j).0);
                    prop_assert_eq!(q.remove(i), want);
                }
                Op::RemoveRange(a, n) => {
                    let e = (a + n).min(m.len());
                    let want = e.saturating_sub(a);
                    if a < m.len() { m.drain(a..e); }
                    prop_assert_eq!(q.remove_range(a, n), want);
                }
                Op::Trim(a, b) => {
                    q.trim(a, b);
                    let b = b.min(m.len());
                    m = if a < b { m[a..b].to_vec() } else { Vec::new() };
                }
                Op::Lrem(e, c) => {
                    let limit = if c == 0 { usize::MAX } else { c.unsigned_abs() as usize };
                    let mut hits: Vec<usize> = m.iter().enumerate().filter(|(_, x)| x.0 == e).map(|(i, _)| i).collect();
                    if c < 0 { hits.reverse(); }
                    hits.truncate(limit);
                    hits.sort_unstable();
                    for &h in hits.iter().rev() { m.remove(h); }
                    prop_assert_eq!(q.remove_value(&e, c), hits.len());
                }
                Op::InsertPivot(p, e, after) => {
                    let at = m.iter().position(|x| x.0 == p);
                    prop_assert_eq!(q.insert_at_pivot(&Needle::new(&p), &e, after), at.is_some());
                    if let Some(i) = at { m.insert(if after { i + 1 } else { i }, stored(e)) }
                }
                Op::PopN(head, n) => {
                    let k = n.min(m.len());
                    if head {
                        let want: Vec<Vec<u8>> = m.drain(..k).map(|x| x.0).collect();
                        prop_assert_eq!(q.pop_front_n(n), want);
                    } else {
                        let want: Vec<Vec<u8>> = m.drain(m.len() - k..).rev().map(|x| x.0).collect();
                        prop_assert_eq!(q.pop_back_n(n), want);
                    }
                }
                Op::Threshold(t) => set_test_threshold(Some(t)),
            }
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| q.check())).is_err() {
                panic!("invariant broken after {desc}");
            }
            prop_assert_eq!(q.len(), m.len());
            prop_assert_eq!(containers(&q), m.iter().map(|x| x.1).collect::<Vec<_>>(), "after {}", desc);
        }
        let m = bytes(&m);
        prop_assert_eq!(&q.to_vecs(), &m);
        prop_assert_eq!(rev_from(&q, usize::MAX), m.iter().rev().cloned().collect::<Vec<_>>());
        for (i, x) in m.iter().enumerate() {
            prop_assert_eq!(&q.get_vec(i as isize).unwrap(), x);
            prop_assert_eq!(&q.get_vec(i as isize - m.len() as isize).unwrap(), x);
        }
        prop_assert_eq!(q.get_vec(m.len() as isize), None);
        for k in 0..=m.len() + 1 {
            let from = from(&q, k);
            prop_assert_eq!(&from[..], &m[k.min(m.len())..]);
            let rv = rev_from(&q, k);
            let upto = (k + 1).min(m.len());
            prop_assert_eq!(rv, m[..upto].iter().rev().cloned().collect::<Vec<_>>());
        }
        set_test_threshold(None);
    }
}

/// Plain nodes hold exactly one element, never take a neighbour's, are
/// compressed in the interior when that pays (and marked when it does
/// not), and come back uncompressed at the ends.
#[test]
fn plain_nodes() {
    set_test_threshold(Some(100));
    let mut q = Quicklist::new(-2);
    q.set_compress_depth(1);
    let big = |c: u8| vec![c; 500];
    let mut x = 88172645463325252u64;
    let noise: Vec<u8> = (0..300)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    q.push_back(b"a");
    q.push_back(&big(b'x'));
    q.push_back(b"b");
    q.push_back(&noise);
    q.push_back(b"c");
    q.check();
    let kinds: Vec<(bool, bool, usize)> = q
        .nodes
        .iter()
        .map(|n| (n.is_plain(), n.is_compressed(), n.len()))
        .collect();
    assert_eq!(
        kinds,
        [
            (false, false, 1),
            (true, true, 1),
            (false, false, 1),
            (true, false, 1),
            (false, false, 1)
        ]
    );
    assert!(matches!(q.nodes[3], Node::Plain { stuck: true, .. }));
    assert_eq!(q.stats().plain_nodes, 2);
    assert_eq!(q.stats().uncompressed_bytes, 10 + 500 + 10 + 300 + 10);
    // Reads see through compression; the plain element is bytes.
    assert_eq!(q.get_vec(1).unwrap(), big(b'x'));
    assert_eq!(q.get_vec(3).unwrap(), noise);
    // A small element next to a plain node gets a packed node.
    q.insert(2, b"z");
    q.check();
    assert_eq!(q.nodes.iter().filter(|n| n.is_plain()).count(), 2);
    // LSET: large into a packed node splits it, small over a plain node
    // makes it packed.
    q.set(2, &big(b'y'));
    q.set(1, b"small");
    q.check();
    assert_eq!(
        q.to_vecs(),
        [
            b"a".to_vec(),
            b"small".to_vec(),
            big(b'y'),
            b"b".to_vec(),
            noise.clone(),
            b"c".to_vec()
        ]
    );
    assert_eq!(containers(&q), [false, false, true, false, true, false]);
    // Popping brings the plain nodes to the ends, uncompressed.
    assert_eq!(q.pop_front().unwrap(), b"a");
    assert_eq!(q.pop_front().unwrap(), b"small");
    q.check();
    assert!(matches!(q.nodes[0], Node::Plain { stuck: false, .. }));
    assert_eq!(q.pop_front().unwrap(), big(b'y'));
    assert_eq!(q.remove_value(&noise, 0), 1);
    q.check();
    assert_eq!(q.to_vecs(), [b"b".to_vec(), b"c".to_vec()]);
    // The threshold changing later leaves existing plain nodes alone.
    q.push_back(&big(b'w'));
    set_test_threshold(Some(DEFAULT_PACKED_THRESHOLD));
    q.push_back(&big(b'v'));
    q.check();
    assert_eq!(containers(&q), [false, false, true, false]);
    set_test_threshold(None);
}

/// The process-wide threshold follows Redis's rules.
#[test]
fn threshold_rules() {
    assert!(!set_packed_threshold(MAX_PACKED_THRESHOLD + 1));
    assert!(!set_packed_threshold(1 << 32));
    assert_eq!(PACKED_THRESHOLD.load(Relaxed), DEFAULT_PACKED_THRESHOLD);
    // (Thresholds above every element other tests use: they see no change.)
    assert!(set_packed_threshold(MAX_PACKED_THRESHOLD));
    assert_eq!(packed_threshold(), MAX_PACKED_THRESHOLD as usize);
    assert!(set_packed_threshold(0));
    assert_eq!(packed_threshold(), DEFAULT_PACKED_THRESHOLD);
    // The thread-local override hides the global from this test only.
    set_test_threshold(Some(7));
    assert_eq!(packed_threshold(), 7);
    set_test_threshold(None);
    assert_eq!(packed_threshold(), DEFAULT_PACKED_THRESHOLD);
}

#[test]
fn node_sizes() {
    let mut q = Quicklist::new(-2);
    for i in 0..100_000 {
        q.push_back((i % 100).to_string().as_bytes());
    }
    q.check();
    // 2-byte entries, 8 KiB nodes: ~4000 per node.
    assert!(q.node_count() < 30, "{}", q.node_count());
    let mut p = Quicklist::new(128);
    for i in 0..1000 {
        p.push_front(i.to_string().as_bytes());
    }
    assert_eq!(p.node_count(), 8);
    assert_eq!(p.get_with(0, |v| v == LpValue::Int(999)), Some(true));
    assert_eq!(p.get_with(-1, |v| v == LpValue::Int(0)), Some(true));
}

/// Interior nodes of a long list of `item:N` compress; the edges do not;
/// reads, early stops and memory accounting see through it.
#[test]
fn compressed_list() {
    for depth in [0u32, 1, 2, 3] {
        let mut q = Quicklist::new(-2);
        q.set_compress_depth(depth);
        let mut plain = Quicklist::new(-2);
        plain.set_compress_depth(u16::MAX as u32);
        for i in 0..50_000 {
            let s = format!("item:{i}");
            q.push_back(s.as_bytes());
            plain.push_back(s.as_bytes());
        }
        q.check();
        let st = q.stats();
        let d = q.effective_depth();
        assert_eq!(
            d,
            if depth == 0 {
                AUTO_DEPTH
            } else {
                depth as usize
            }
        );
        assert_eq!(q.compress_depth(), depth);
        assert_eq!(st.compressed_nodes, st.nodes - 2 * d, "{st:?}");
        assert_eq!(st.uncompressed_bytes, plain.stats().uncompressed_bytes);
        assert!(
            q.heap_bytes() * 4 < plain.heap_bytes() * 3,
            "{} vs {}",
            q.heap_bytes(),
            plain.heap_bytes()
        );
        assert_eq!(q.get_vec(25_000).unwrap(), b"item:25000");
        let mut seen = Vec::new();
        q.for_each_from(20_000, |v| {
            seen.push(v.to_vec());
            seen.len() < 3
        });
        assert_eq!(seen, [&b"item:20000"[..], b"item:20001", b"item:20002"]);
        // Popping everything walks every node across the depth boundary.
        for i in 0..25_000 {
            assert_eq!(q.pop_front().unwrap(), format!("item:{i}").into_bytes());
            assert_eq!(
                q.pop_back().unwrap(),
                format!("item:{}", 49_999 - i).into_bytes()
            );
            if i % 997 == 0 {
                q.check();
            }
        }
        assert!(q.is_empty());
        assert_eq!(
            q.heap_bytes(),
            q.nodes.capacity() * std::mem::size_of::<Node>()
        );
    }
}

/// Nodes whose listpack does not compress (random bytes) stay plain and
/// are marked, and a later change makes them candidates again.
#[test]
fn incompressible_nodes_stay_plain() {
    let mut q = Quicklist::new(4);
    q.set_compress_depth(1);
    let mut x = 1u64;
    for _ in 0..40 {
        let e: Vec<u8> = (0..30)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect();
        q.push_back(&e);
    }
    q.check();
    assert_eq!(q.stats().compressed_nodes, 0);
    assert!(matches!(q.nodes[3], Node::Stuck(_)));
    for i in 4..8 {
        q.set(i, &[b'z'; 30]);
    }
    q.check();
    assert!(q.nodes[1].is_compressed());
}

#[test]
fn node_is_32_bytes() {
    assert_eq!(std::mem::size_of::<Node>(), 32);
}

/// `from_nodes` keeps interior compressed nodes, decompresses the ends,
/// compresses plain interior nodes and splits nodes over the fill limit.
#[test]
fn from_nodes_settles_and_splits() {
    let elems: Vec<Vec<u8>> = (0..400)
        .map(|i| format!("element:{}", i % 37).into_bytes())
        .collect();
    for depth in [0u32, 1, 2] {
        // Nodes of 20 elements, every other one compressed.
        let mut nodes = Vec::new();
        for (k, chunk) in elems.chunks(20).enumerate() {
            let mut lp = Listpack::new();
            for e in chunk {
                lp.push_back(e);
            }
            let mut n = Node::Raw(lp);
            if k % 2 == 1 {
                n.compress();
                assert!(n.is_compressed());
            }
            nodes.push(n);
        }
        // One node far over a fill of 10 elements.
        let mut big = Listpack::new();
        for e in &elems {
            big.push_back(e);
        }
        nodes.push(Node::Raw(big));
        nodes.push(Node::Raw(Listpack::new()));
        let q = Quicklist::from_nodes(10, depth, nodes);
        q.check();
        let mut want = elems.clone();
        want.extend(elems.iter().cloned());
        assert_eq!(q.to_vecs(), want);
        assert_eq!(q.compress_depth(), depth);
    }
}
