use super::*;

#[test]
fn nodes_conf_round_trips() {
    let mut st = State::new_alone(7000, 17000);
    st.nodes.push(Node {
        id: "a".repeat(40),
        ip: "127.0.0.1".into(),
        port: 7001,
        cport: 17001,
        hostname: "h-1.example".into(),
        flags: flags::MASTER,
        master: None,
        ping_sent: 0,
        pong_received: 1700000000000,
        config_epoch: 3,
        connected: false,
        ..Node::default()
    });
    for s in 0..100 {
        st.owner[s] = 0;
    }
    st.owner[200] = 0;
    for s in 5000..16384 {
        st.owner[s] = 1;
    }
    st.migrating.insert(5, "a".repeat(40));
    st.importing.insert(6000, "a".repeat(40));
    st.current_epoch = 3;
    st.last_vote_epoch = 2;
    let text = conf::file_text(&st);
    let me = &st.nodes[0].id;
    assert_eq!(
        text,
        format!(
            "{me} :7000@17000 myself,master - 0 0 0 connected 0-99 200 [5->-{a}] [6000-<-{a}]\n\
             {a} 127.0.0.1:7001@17001,h-1.example master - 0 1700000000000 3 disconnected 5000-16383\n\
             vars currentEpoch 3 lastVoteEpoch 2\n",
            a = "a".repeat(40)
        )
    );
    let back = conf::parse(&text).unwrap();
    assert_eq!(back.nodes[0].id, *me);
    assert_eq!(back.me, 0);
    assert_eq!(back.owner, st.owner);
    assert_eq!(back.migrating, st.migrating);
    assert_eq!(back.importing, st.importing);
    assert_eq!(back.current_epoch, 3);
    assert_eq!(back.last_vote_epoch, 2);
    assert_eq!(
        conf::file_text(&back).replace("disconnected", "connected"),
        text.replace("disconnected", "connected")
    );
}

#[test]
fn corrupt_nodes_conf_is_an_error() {
    let id = "b".repeat(40);
    for bad in [
        "x :1@2 myself,master - 0 0 0 connected\n".to_string(),
        format!("{id} :1@2 myself,master - 0 0 0 connected 16384\n"),
        format!("{id} :1 myself,master - 0 0 0 connected\n"),
        format!("{id} :1@2 myself,bogus - 0 0 0 connected\n"),
        format!("{id} :1@2 master - 0 0 0 connected\n"),
        format!("{id} :1@2 myself,master - 0 0 0 connected 5-3\n"),
        format!("{id} :1@2 myself,master - 0 0 0 connected\nvars currentEpoch x\n"),
        format!("{id} :1@2 myself,master - 0 0\n"),
    ] {
        assert!(conf::parse(&bad).is_err(), "{bad}");
    }
}

#[test]
fn bump_epoch_follows_redis_rule() {
    let mut st = State::new_alone(1, 2);
    assert!(st.bump_epoch());
    assert_eq!((st.current_epoch, st.myself().config_epoch), (1, 1));
    assert!(!st.bump_epoch());
    st.current_epoch = 5;
    assert!(st.bump_epoch());
    assert_eq!((st.current_epoch, st.myself().config_epoch), (6, 6));
}

#[test]
fn state_follows_coverage() {
    let mut st = State::new_alone(1, 2);
    assert!(!st.is_ok(true));
    for s in 0..SLOTS {
        st.owner[s] = 0;
    }
    assert!(st.is_ok(true));
    st.owner[7] = NO_OWNER;
    assert!(!st.is_ok(true));
    assert!(st.is_ok(false));
    assert_eq!(st.ranges_of(0), vec![(0, 6), (8, 16383)]);
}

/// A plaintext client of a `tls-cluster` node sees a node's plaintext
/// port when it is known; nodes.conf keeps the announced (TLS) port.
#[test]
fn plaintext_clients_see_pport_when_known() {
    let mut st = State::new_alone(7100, 17100);
    st.nodes[0].ip = "127.0.0.1".into();
    st.nodes[0].pport = 7000;
    let line = |st: &State, p| conf::node_line_for(st, 0, p);
    assert!(line(&st, true).contains(" 127.0.0.1:7000@17100 "));
    assert!(line(&st, false).contains(" 127.0.0.1:7100@17100 "));
    assert!(conf::file_text(&st).contains(" 127.0.0.1:7100@17100 "));
    st.nodes[0].pport = 0;
    assert!(line(&st, true).contains(" 127.0.0.1:7100@17100 "));
}

/// The slot check's cached `cluster_state` follows every change made
/// through a write guard (`update_unsaved`, `write`), never an old answer.
#[test]
fn cached_cluster_state_follows_changes() {
    let c = Cluster::new(true, std::path::PathBuf::new());
    let mut st = State::new_alone(7000, 17000);
    for s in 0..16384 {
        st.owner[s] = 0;
    }
    c.install(st);
    assert!(c.is_ok_cached(&c.read(), true));
    assert!(c.is_ok_cached(&c.read(), true), "served from the cache");
    c.update_unsaved(|st| st.owner[42] = NO_OWNER);
    assert!(!c.is_ok_cached(&c.read(), true), "a slot without owner");
    assert!(c.is_ok_cached(&c.read(), false), "coverage not required");
    c.write().owner[42] = 0;
    assert!(c.is_ok_cached(&c.read(), true));
    c.write().nodes[0].flags |= flags::FAIL;
    assert!(!c.is_ok_cached(&c.read(), false), "the only master failed");
}
