use super::*;
use crate::kernel::cluster::Node;

const TIMEOUT: u64 = 15000;

fn id(c: char) -> String {
    c.to_string().repeat(40)
}

/// Node 0 (myself) a master with slots 0..100 at epoch 1; node 1 ('a') a
/// master with 100..200 at epoch 2, flagged FAIL; node 2 ('b') its
/// replica; node 3 ('c') another replica of 'a'.
fn cluster() -> State {
    let mut st = State::new_alone(7000, 17000);
    st.nodes[0].config_epoch = 1;
    let node = |c: char, fl: u16, master: Option<char>, epoch: u64| Node {
        id: id(c),
        ip: "127.0.0.1".into(),
        port: 7001,
        cport: 17001,
        flags: fl,
        master: master.map(id),
        config_epoch: epoch,
        ..Node::default()
    };
    st.nodes
        .push(node('a', flags::MASTER | flags::FAIL, None, 2));
    st.nodes.push(node('b', flags::SLAVE, Some('a'), 2));
    st.nodes.push(node('c', flags::SLAVE, Some('a'), 2));
    for s in 0..100 {
        st.owner[s] = 0;
    }
    for s in 100..200 {
        st.owner[s] = 1;
    }
    st.current_epoch = 3;
    st
}

fn bitmap(range: std::ops::Range<usize>) -> Vec<u8> {
    let mut b = vec![0u8; 2048];
    for s in range {
        b[s / 8] |= 1 << (s & 7);
    }
    b
}

fn req(slots: &[u8], current_epoch: u64, config_epoch: u64, force_ack: bool) -> AuthRequest<'_> {
    AuthRequest {
        current_epoch,
        config_epoch,
        slots,
        force_ack,
    }
}

#[test]
fn a_vote_is_granted_once_per_epoch_and_per_master_timeout() {
    let mut st = cluster();
    let slots = bitmap(100..200);
    assert_eq!(
        vote(&mut st, 2, &req(&slots, 3, 2, false), 1_000_000, TIMEOUT),
        Ok(())
    );
    assert_eq!(st.last_vote_epoch, 3);
    assert_eq!(st.nodes[1].voted_time, 1_000_000);
    // Same epoch: denied.
    let e = vote(&mut st, 3, &req(&slots, 3, 2, false), 1_000_001, TIMEOUT).unwrap_err();
    assert!(e.unwrap().contains("already voted for epoch 3"));
    // A new epoch, but too soon for the same master.
    st.current_epoch = 4;
    let e = vote(&mut st, 3, &req(&slots, 4, 2, false), 1_000_002, TIMEOUT).unwrap_err();
    assert!(e.unwrap().contains("can't vote about this master before"));
    assert_eq!(st.last_vote_epoch, 3);
    // After twice the node timeout: granted.
    let later = 1_000_000 + 2 * TIMEOUT;
    assert_eq!(
        vote(&mut st, 3, &req(&slots, 4, 2, false), later, TIMEOUT),
        Ok(())
    );
    assert_eq!(st.last_vote_epoch, 4);
}

#[test]
fn votes_are_denied_under_redis_rules() {
    let slots = bitmap(100..200);
    let denied = |st: &mut State, who: usize, r: AuthRequest| {
        vote(st, who, &r, 1_000_000, TIMEOUT)
            .unwrap_err()
            .unwrap_or_default()
    };
    // An older current epoch.
    let mut st = cluster();
    assert!(denied(&mut st, 2, req(&slots, 2, 2, false)).contains("reqEpoch (2) < curEpoch(3)"));
    // The master is up (no FAIL) and no FORCEACK; with FORCEACK it is granted.
    let mut st = cluster();
    st.nodes[1].flags &= !flags::FAIL;
    assert!(denied(&mut st, 2, req(&slots, 3, 2, false)).contains("its master is up"));
    assert_eq!(
        vote(&mut st, 2, &req(&slots, 3, 2, true), 1_000_000, TIMEOUT),
        Ok(())
    );
    // A master asks.
    let mut st = cluster();
    assert!(denied(&mut st, 1, req(&slots, 3, 2, false)).contains("it is a master node"));
    // Its master is unknown.
    let mut st = cluster();
    st.nodes[2].master = Some(id('z'));
    assert!(denied(&mut st, 2, req(&slots, 3, 2, false)).contains("I don't know its master"));
    // It claims a slot held at a newer epoch (ours: slots 0..100 at 1, so
    // claim them at epoch 0).
    let mut st = cluster();
    let mine = bitmap(0..100);
    assert!(denied(&mut st, 2, req(&mine, 3, 0, false)).contains("slot 0 epoch (1) > reqEpoch (0)"));
    assert_eq!(st.last_vote_epoch, 0);
    // A replica, or a master without slots, does not vote (nor logs).
    let mut st = cluster();
    st.owner
        .iter_mut()
        .filter(|o| **o == 0)
        .for_each(|o| *o = NO_OWNER);
    assert_eq!(
        vote(&mut st, 2, &req(&slots, 3, 2, false), 1, TIMEOUT),
        Err(None)
    );
}

#[test]
fn rank_counts_siblings_with_a_greater_offset() {
    let mut st = cluster();
    // Make myself (node 0) a third replica of 'a' for this test.
    st.nodes[0].flags = flags::MYSELF | flags::SLAVE;
    st.nodes[0].master = Some(id('a'));
    st.nodes[2].repl_offset = 100;
    st.nodes[3].repl_offset = 50;
    assert_eq!(replica_rank(&st, 200), 0);
    assert_eq!(replica_rank(&st, 100), 0, "an equal offset does not count");
    assert_eq!(replica_rank(&st, 75), 1);
    assert_eq!(replica_rank(&st, 10), 2);
    // A sibling that may not fail over does not count.
    st.nodes[2].flags |= flags::NOFAILOVER;
    assert_eq!(replica_rank(&st, 10), 1);
}

#[test]
fn the_promoted_replica_takes_its_masters_slots() {
    let mut st = cluster();
    st.nodes[0].flags = flags::MYSELF | flags::SLAVE;
    st.nodes[0].master = Some(id('a'));
    assert_eq!(replace_master(&mut st), Some(1));
    assert!(st.nodes[0].is_master() && st.nodes[0].master.is_none());
    assert_eq!(num_slots(&st, 0), 200);
    assert_eq!(num_slots(&st, 1), 0);
    // Once a master: nothing to replace.
    assert_eq!(replace_master(&mut st), None);
}

#[test]
fn cluster_failover_checks_match_redis() {
    let mut st = cluster();
    let e = |r: Result<Started, String>| r.err().unwrap();
    assert_eq!(
        e(failover_command(&mut st, Mode::Default, 0)),
        "ERR You should send CLUSTER FAILOVER to a replica"
    );
    st.nodes[0].flags = flags::MYSELF | flags::SLAVE;
    st.nodes[0].master = Some(id('z'));
    assert_eq!(
        e(failover_command(&mut st, Mode::Force, 0)),
        "ERR I'm a replica but my master is unknown to me"
    );
    st.nodes[0].master = Some(id('a'));
    assert_eq!(
        e(failover_command(&mut st, Mode::Default, 0)),
        "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE"
    );
    assert_eq!(st.mf, ManualFailover::default());
    let s = failover_command(&mut st, Mode::Force, 10).unwrap();
    assert!(!s.promoted);
    assert_eq!(st.mf.end, 10 + MF_TIMEOUT_MS);
    assert!(st.mf.can_start);
    // A failed master's replica may still take over.
    let s = failover_command(&mut st, Mode::Takeover, 20).unwrap();
    assert!(s.promoted);
    assert!(st.nodes[0].is_master());
    assert_eq!(st.nodes[0].config_epoch, 4);
    assert_eq!(st.current_epoch, 4);
    assert_eq!(num_slots(&st, 0), 200);
    assert_eq!(st.mf.end, 0);
    assert!(st.mf.broadcast_pong);
}

#[test]
fn the_default_mode_needs_a_linked_master_and_asks_it() {
    let mut st = cluster();
    st.nodes[0].flags = flags::MYSELF | flags::SLAVE;
    st.nodes[0].master = Some(id('a'));
    st.nodes[1].flags &= !flags::FAIL;
    assert!(failover_command(&mut st, Mode::Default, 0).is_err());
    st.nodes[1].connected = true;
    failover_command(&mut st, Mode::Default, 0).unwrap();
    assert!(st.mf.send_mfstart && !st.mf.can_start);
}

/// Masters 'a' (two replicas: 'b', myself) and 'd' (had replica 'e',
/// now failed): after the delay, the replica with the smallest id of the
/// masters with the most replicas migrates to 'd'.
#[test]
fn a_spare_replica_migrates_to_an_orphaned_master() {
    let mut st = State::new_alone(7000, 17000);
    st.nodes[0].id = id('c');
    st.nodes[0].flags = flags::MYSELF | flags::SLAVE;
    st.nodes[0].master = Some(id('a'));
    let node = |c: char, fl: u16, master: Option<char>| Node {
        id: id(c),
        flags: fl,
        master: master.map(id),
        ..Node::default()
    };
    st.nodes.push(node('a', flags::MASTER, None));
    st.nodes.push(node('b', flags::SLAVE, Some('a')));
    st.nodes.push(node('d', flags::MASTER, None));
    st.nodes
        .push(node('e', flags::SLAVE | flags::FAIL, Some('d')));
    st.nodes[3].migrate_to = true;
    for s in 0..100 {
        st.owner[s] = 1;
    }
    for s in 100..200 {
        st.owner[s] = 3;
    }
    // 'b' has the smaller id: not us.
    assert_eq!(migration_target(&mut st, 1000, 1, true), None);
    assert_eq!(st.nodes[3].orphaned_time, 1000);
    st.nodes[2].id = id('f');
    assert_eq!(
        migration_target(&mut st, 2000, 1, true),
        None,
        "not yet orphaned long enough"
    );
    assert_eq!(
        migration_target(&mut st, 1000 + MIGRATION_DELAY_MS + 1, 1, true),
        Some(3)
    );
    // The barrier: our master must keep more than `barrier` replicas.
    assert_eq!(migration_target(&mut st, 1_000_000, 2, true), None);
    // Not while the cluster is down.
    assert_eq!(migration_target(&mut st, 1_000_000, 1, false), None);
    // The orphan got a working replica back: nothing to do.
    st.nodes[4].flags &= !flags::FAIL;
    assert_eq!(migration_target(&mut st, 1_000_000, 1, true), None);
}
