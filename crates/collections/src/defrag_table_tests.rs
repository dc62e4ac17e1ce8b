use super::*;
use crate::defrag::testing;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::hash::BuildHasher;

type Entry = (Vec<u8>, Vec<u64>);

struct Map {
    t: DefragTable<Entry>,
    s: std::collections::hash_map::RandomState,
}

impl Map {
    fn new() -> Map {
        Map {
            t: DefragTable::new(),
            s: Default::default(),
        }
    }
    fn hash(&self, k: &[u8]) -> u64 {
        self.s.hash_one(k)
    }
    fn add(&mut self, k: &[u8], v: u64) {
        let h = self.hash(k);
        let s = &self.s;
        match self.t.entry(h, |e| e.0 == k, |e| s.hash_one(&e.0)) {
            hashbrown17::hash_table::Entry::Occupied(mut o) => o.get_mut().1.push(v),
            hashbrown17::hash_table::Entry::Vacant(e) => {
                e.insert((k.to_vec(), vec![v]));
            }
        }
    }
    fn remove(&mut self, k: &[u8]) {
        let h = self.hash(k);
        if let Ok(o) = self.t.find_entry(h, |e| e.0 == k) {
            o.remove();
        }
    }
    fn model(&self) -> BTreeMap<Vec<u8>, Vec<u64>> {
        self.t.iter().cloned().collect()
    }
    /// Every element still found through its hash.
    fn check_lookups(&self) {
        for (k, v) in self.t.iter() {
            let found = self.t.find(self.hash(k), |e| &e.0 == k).expect("found");
            assert_eq!(&found.1, v);
        }
    }
    /// One whole pass: the table, then every bucket; returns the element
    /// blocks offered.
    fn pass(&mut self, d: &mut Defrag, step: usize) -> usize {
        let s = &self.s;
        self.t.defrag_table(d, |e| s.hash_one(&e.0));
        let mut offered = 0;
        let mut cur = Some(0);
        while let Some(from) = cur {
            cur = self.t.defrag_buckets(from, step, |e| {
                d.vec(&mut e.0);
                d.vec(&mut e.1);
                offered += 2;
            });
        }
        offered
    }
}

#[test]
fn the_bucket_array_moves_through_the_mover_and_keeps_its_layout() {
    let mut m = Map::new();
    for i in 0..100u64 {
        m.add(format!("ch{i}").as_bytes(), i);
    }
    let before = m.model();
    let (p0, l0) = m.t.allocator().block().expect("a block");
    assert_eq!(l0.size(), m.t.allocation_size());
    let mut d = testing::all();
    let moves0 = testing::moves_on_this_thread();
    let offered = m.pass(&mut d, 7);
    assert_eq!(offered, 200);
    let (p1, l1) = m.t.allocator().block().expect("a block");
    assert_ne!(p0, p1, "the array moved");
    assert_eq!(l0, l1, "same layout");
    assert_eq!(d.hits, 201, "the array and every element block");
    assert_eq!(d.misses, 0);
    assert_eq!(testing::moves_on_this_thread() - moves0, 201);
    assert_eq!(m.model(), before);
    m.check_lookups();
    // An empty table has no block: nothing is offered.
    let mut e = Map::new();
    let mut d = testing::all();
    assert!(!e.t.defrag_table(&mut d, |_| 0));
    assert_eq!((d.hits, d.misses), (0, 0));
}

#[test]
fn an_array_above_max_size_is_a_miss() {
    let mut m = Map::new();
    for i in 0..1000u64 {
        m.add(format!("ch{i}").as_bytes(), i);
    }
    let (p0, _) = m.t.allocator().block().unwrap();
    let mut d = testing::all_up_to(4096);
    let s = &m.s;
    assert!(!m.t.defrag_table(&mut d, |e| s.hash_one(&e.0)));
    assert_eq!((d.hits, d.misses), (0, 1));
    assert_eq!(m.t.allocator().block().unwrap().0, p0);
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, u64),
    Remove(u8),
    Step(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (any::<u8>(), any::<u64>()).prop_map(|(k, v)| Op::Add(k % 64, v)),
        1 => any::<u8>().prop_map(|k| Op::Remove(k % 64)),
        2 => (1usize..20).prop_map(Op::Step),
    ]
}

proptest! {
    /// Passes in steps interleaved with insertions and removals: the table
    /// equals a model throughout and every lookup works; a pass with no
    /// change in between offers every block.
    #[test]
    fn steps_interleaved_with_changes_match_a_model(ops in prop::collection::vec(op(), 1..300)) {
        let mut m = Map::new();
        let mut model: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
        let mut d = testing::all();
        let mut cur: Option<usize> = None;
        for o in ops {
            match o {
                Op::Add(k, v) => {
                    let k = format!("channel-{k}").into_bytes();
                    m.add(&k, v);
                    model.entry(k).or_default().push(v);
                }
                Op::Remove(k) => {
                    let k = format!("channel-{k}").into_bytes();
                    m.remove(&k);
                    model.remove(&k);
                }
                Op::Step(n) => {
                    let from = match cur {
                        Some(c) => c,
                        None => {
                            let s = &m.s;
                            m.t.defrag_table(&mut d, |e| s.hash_one(&e.0));
                            0
                        }
                    };
                    cur = m.t.defrag_buckets(from, n, |e| {
                        d.vec(&mut e.0);
                        d.vec(&mut e.1);
                    });
                }
            }
            prop_assert_eq!(&m.model(), &model);
        }
        m.check_lookups();
        let hits0 = d.hits;
        let moves0 = testing::moves_on_this_thread();
        let offered = m.pass(&mut d, 5);
        prop_assert_eq!(offered, 2 * model.len());
        let table = usize::from(!model.is_empty() || m.t.allocator().block().is_some());
        prop_assert_eq!(d.hits - hits0, (offered + table) as u64);
        prop_assert_eq!(testing::moves_on_this_thread() - moves0, (offered + table) as u64);
        prop_assert_eq!(d.misses, 0);
        prop_assert_eq!(&m.model(), &model);
        m.check_lookups();
    }
}

fn always(_: *const u8) -> bool {
    true
}
unsafe fn no_block(_: *const u8, _: Layout) -> *mut u8 {
    std::ptr::null_mut()
}
unsafe fn no_move(_: *mut u8, _: Layout) -> *mut u8 {
    std::ptr::null_mut()
}
unsafe fn free(p: *mut u8, layout: Layout) {
    // SAFETY: the caller's contract.
    unsafe { std::alloc::dealloc(p, layout) }
}

/// A mover whose allocation fails: the table keeps its array (allocated
/// meanwhile by the global allocator and freed the same way), counts a
/// miss and reads back unchanged.
#[test]
fn a_failed_replacement_keeps_the_old_array() {
    let mut m = Map::new();
    for i in 0..50u64 {
        m.add(format!("ch{i}").as_bytes(), i);
    }
    let before = m.model();
    let (p0, l0) = m.t.allocator().block().unwrap();
    let mut d = Defrag::with_mover(Mover {
        should_move: always,
        move_block: no_move,
        alloc: no_block,
        free,
        max_size: usize::MAX,
    });
    let s = &m.s;
    assert!(!m.t.defrag_table(&mut d, |e| s.hash_one(&e.0)));
    assert_eq!((d.hits, d.misses), (0, 1));
    assert_eq!(m.t.allocator().block(), Some((p0, l0)));
    assert_eq!(m.model(), before);
    m.check_lookups();
    // The table still grows and shrinks normally.
    for i in 50..500u64 {
        m.add(format!("ch{i}").as_bytes(), i);
    }
    assert_eq!(m.t.len(), 500);
    assert_eq!(
        m.t.allocator().block().unwrap().1.size(),
        m.t.allocation_size()
    );
}
