//! The registry's defrag stage against a model: steps interleaved with
//! subscriptions and unsubscriptions change nothing a client sees, and a
//! pass offers (with the testing mover: moves) every block.

use super::*;
use collections::defrag::testing;
use proptest::prelude::*;
use std::collections::BTreeMap;

type Model = [BTreeMap<Vec<u8>, Vec<u64>>; 3];

const SCOPES: [Scope; 3] = [Scope::Channels, Scope::Patterns, Scope::Shard];

fn clients(n: u64) -> Vec<Arc<ClientShared>> {
    (0..n)
        .map(|id| {
            Arc::new(ClientShared::new(
                id,
                String::new(),
                String::new(),
                -1,
                0,
                0,
            ))
        })
        .collect()
}

/// The registry as (name -> subscriber ids in order), per map.
fn snapshot(ps: &PubSub) -> Model {
    let one = |m: &RwLock<SubscriberMap>| {
        m.read()
            .iter()
            .map(|(k, v)| (k.to_vec(), v.iter().map(|s| s.client_id).collect()))
            .collect()
    };
    [
        one(&ps.channels),
        one(&ps.patterns),
        one(&ps.shard_channels),
    ]
}

/// Blocks the registry owns: per map its bucket array (if any), and two
/// per name (the name's buffer and the subscriber vector).
fn blocks(ps: &PubSub) -> u64 {
    [&ps.channels, &ps.patterns, &ps.shard_channels]
        .iter()
        .map(|m| {
            let m = m.read();
            2 * m.len() as u64 + u64::from(m.has_block())
        })
        .sum()
}

fn name(scope: usize, k: u8) -> Vec<u8> {
    match scope {
        1 => format!("news.*{k}").into_bytes(),
        _ => format!("channel:{k}").into_bytes(),
    }
}

#[derive(Debug, Clone)]
enum Op {
    Sub(usize, u8, u64),
    Unsub(usize, u8, u64),
    Step(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..3, 0u8..80, 0u64..6).prop_map(|(s, k, c)| Op::Sub(s, k, c)),
        2 => (0usize..3, 0u8..80, 0u64..6).prop_map(|(s, k, c)| Op::Unsub(s, k, c)),
        3 => (1usize..40).prop_map(Op::Step),
    ]
}

/// Runs a whole pass from the start in steps of `buckets`; returns the
/// number of steps.
fn whole_pass(ps: &PubSub, buckets: usize, d: &mut Defrag) -> usize {
    let mut cur = PubSubDefragCursor::default();
    let mut steps = 1;
    while !ps.defrag_step(&mut cur, buckets, d) {
        steps += 1;
    }
    steps
}

#[test]
fn a_pass_moves_every_block_and_publish_still_finds_everyone() {
    let ps = PubSub::default();
    let cs = clients(4);
    for i in 0..300u32 {
        let c = &cs[(i % 3) as usize];
        ps.subscribe(
            Scope::Channels,
            format!("ch{i}").as_bytes(),
            Subscriber::new(c),
        );
        if i % 2 == 0 {
            let half = format!("ch{}", i / 2);
            ps.subscribe(Scope::Channels, half.as_bytes(), Subscriber::new(&cs[3]));
        }
        if i % 3 == 0 {
            ps.subscribe(
                Scope::Patterns,
                format!("p{i}*").as_bytes(),
                Subscriber::new(c),
            );
            ps.subscribe(Scope::Shard, format!("s{i}").as_bytes(), Subscriber::new(c));
        }
    }
    let before = snapshot(&ps);
    let n = blocks(&ps);
    let mut d = testing::all();
    let moves0 = testing::moves_on_this_thread();
    let steps = whole_pass(&ps, 16, &mut d);
    assert!(steps > 3, "bounded steps: {steps}");
    assert_eq!(d.hits, n, "every block moved");
    assert_eq!(d.misses, 0);
    assert_eq!(
        testing::moves_on_this_thread() - moves0,
        n,
        "through the mover"
    );
    assert_eq!(snapshot(&ps), before);
    assert_eq!(ps.num_sub(b"ch10", false), 2);
    assert_eq!(ps.num_sub(b"s9", true), 1);
    assert_eq!(ps.num_patterns(), 100);
    let mut names = ps.channel_names(Some(b"ch29?"), false);
    names.sort();
    assert_eq!(
        names,
        vec![
            b"ch290".to_vec(),
            b"ch291".to_vec(),
            b"ch292".to_vec(),
            b"ch293".to_vec(),
            b"ch294".to_vec(),
            b"ch295".to_vec(),
            b"ch296".to_vec(),
            b"ch297".to_vec(),
            b"ch298".to_vec(),
            b"ch299".to_vec()
        ]
    );
}

proptest! {
    /// Defrag steps interleaved with random (un)subscriptions: the registry
    /// equals a model after every operation; a pass that runs with no change
    /// in between moves every block through the mover.
    #[test]
    fn steps_interleaved_with_subscriptions_match_a_model(ops in prop::collection::vec(op(), 1..400)) {
        let ps = PubSub::default();
        let cs = clients(6);
        let mut model: Model = Default::default();
        let mut d = testing::all();
        let mut cur = PubSubDefragCursor::default();
        for o in ops {
            match o {
                Op::Sub(s, k, c) => {
                    let n = name(s, k);
                    let subs = model[s].entry(n.clone()).or_default();
                    // A client subscribes to a name once (its own set says
                    // whether it already is).
                    if !subs.contains(&c) {
                        subs.push(c);
                        ps.subscribe(SCOPES[s], &n, Subscriber::new(&cs[c as usize]));
                    }
                }
                Op::Unsub(s, k, c) => {
                    let n = name(s, k);
                    ps.unsubscribe(SCOPES[s], &n, c);
                    if let Some(v) = model[s].get_mut(&n) {
                        v.retain(|&x| x != c);
                        if v.is_empty() {
                            model[s].remove(&n);
                        }
                    }
                }
                Op::Step(b) => {
                    ps.defrag_step(&mut cur, b, &mut d);
                }
            }
            prop_assert_eq!(&snapshot(&ps), &model);
        }
        for (s, m) in model.iter().enumerate() {
            for (n, ids) in m {
                if s == 1 {
                    continue;
                }
                prop_assert_eq!(ps.num_sub(n, s == 2), ids.len());
            }
        }
        prop_assert_eq!(ps.num_patterns(), model[1].len());
        let n = blocks(&ps);
        let (h0, m0) = (d.hits, d.misses);
        let moves0 = testing::moves_on_this_thread();
        whole_pass(&ps, 7, &mut d);
        prop_assert_eq!(d.hits - h0, n);
        prop_assert_eq!(d.misses - m0, 0);
        prop_assert_eq!(testing::moves_on_this_thread() - moves0, n);
        prop_assert_eq!(&snapshot(&ps), &model);
    }
}
