//! What a received bus message does, as Redis 7.0 does it: the handshake
//! (a node met under a random id takes its real id from its first
//! answer), learning nodes and failure reports from gossip sections,
//! roles and slot ownership from headers (a slot goes to the claimer with
//! the greater config epoch; a stale claimer gets an UPDATE), the config
//! epoch collision rule, FAIL and UPDATE; and the messages this node
//! sends (PING/PONG/MEET with gossip, FAIL, UPDATE).
//!
//! Invariants: a node never changes `myself`'s flags from what it is told
//! about itself; a handshake node is either renamed to the id its answer
//! carries or, when that id is already known, removed.

use commands::kernel::cluster::{failover, flags, Node, State, NO_OWNER, SLOTS};

use super::codec::{self, mtype, wflags, Body, Gossip, Header, Message};
use super::{now_ms, Bus};

/// Petrel's node flags and the bus's, bit for bit.
const FLAG_MAP: [(u16, u16); 9] = [
    (flags::MASTER, wflags::MASTER),
    (flags::SLAVE, wflags::SLAVE),
    (flags::PFAIL, wflags::PFAIL),
    (flags::FAIL, wflags::FAIL),
    (flags::MYSELF, wflags::MYSELF),
    (flags::HANDSHAKE, wflags::HANDSHAKE),
    (flags::NOADDR, wflags::NOADDR),
    (flags::MEET, wflags::MEET),
    (flags::NOFAILOVER, wflags::NOFAILOVER),
];

/// Petrel's node flags to the bus's.
pub fn to_wire(f: u16) -> u16 {
    FLAG_MAP
        .iter()
        .filter(|(p, _)| f & p != 0)
        .fold(0, |a, (_, w)| a | w)
}

/// The bus's node flags to Petrel's (bits Petrel does not keep dropped).
pub fn from_wire(w: u16) -> u16 {
    FLAG_MAP
        .iter()
        .filter(|(_, b)| w & b != 0)
        .fold(0, |a, (p, _)| a | p)
}

/// The slots node `i` owns, as a bitmap.
fn slot_bitmap(st: &State, i: usize) -> Box<[u8; codec::SLOT_BYTES]> {
    let mut b = Box::new([0u8; codec::SLOT_BYTES]);
    for s in 0..SLOTS {
        if st.owner[s] == i as u32 {
            codec::set_slot_bit(&mut b, s);
        }
    }
    b
}

impl Bus {
    /// The header every message of this node starts with.
    pub(super) fn header(&self, st: &State, ty: u16) -> Header {
        let s = self.srv.settings();
        let me = st.myself();
        // A replica announces its master's slots and epoch.
        let master = me
            .master
            .as_deref()
            .and_then(|m| st.find(m))
            .filter(|_| me.flags & flags::SLAVE != 0);
        let shown = master.unwrap_or(st.me);
        let mut h = Header {
            mtype: ty,
            port: me.port,
            cport: me.cport,
            pport: me.pport,
            current_epoch: st.current_epoch,
            config_epoch: st.nodes[shown].config_epoch,
            sender: codec::field(&me.id),
            myslots: slot_bitmap(st, shown),
            flags: to_wire(me.flags),
            state: if st.is_ok(s.cluster.require_full_coverage) {
                0
            } else {
                1
            },
            ..Header::default()
        };
        if let Some(m) = master {
            h.slaveof = codec::field(&st.nodes[m].id);
        }
        if !s.cluster.announce_ip.is_empty() {
            h.myip = codec::field(&s.cluster.announce_ip);
        }
        h.mflags[0] |= codec::mflags0::EXT_DATA;
        h.offset = self.my_repl_offset(st);
        // A master paused for a replica's manual failover says so.
        if st.nodes[st.me].is_master() && st.mf.end != 0 {
            h.mflags[0] |= codec::mflags0::PAUSED;
        }
        h
    }

    /// A PING, PONG or MEET with a gossip section (Redis's choice: a tenth
    /// of the nodes, at least 3, at random, then every node in PFAIL) and
    /// the hostname extension when one is announced.
    pub(super) fn ping_message(&mut self, st: &State, ty: u16) -> Vec<u8> {
        let n = st.nodes.len();
        let fresh = n.saturating_sub(2);
        let wanted = (n / 10).max(3).min(fresh);
        let mut order: Vec<usize> = (0..n).collect();
        for i in (1..order.len()).rev() {
            let j = (self.random() % (i as u64 + 1)) as usize;
            order.swap(i, j);
        }
        let mut picked = Vec::new();
        for &i in &order {
            if picked.len() >= wanted {
                break;
            }
            let node = &st.nodes[i];
            if i == st.me
                || node.flags & (flags::PFAIL | flags::HANDSHAKE | flags::NOADDR) != 0
                || (!node.connected && !st.owner.contains(&(i as u32)))
            {
                continue;
            }
            picked.push(i);
        }
        for (i, node) in st.nodes.iter().enumerate() {
            if node.flags & flags::PFAIL != 0
                && node.flags & (flags::HANDSHAKE | flags::NOADDR) == 0
                && i != st.me
            {
                picked.push(i);
            }
        }
        let gossip = picked
            .into_iter()
            .map(|i| {
                let node = &st.nodes[i];
                Gossip {
                    nodename: codec::field(&node.id),
                    ping_sent: (node.ping_sent / 1000) as u32,
                    pong_received: (node.pong_received / 1000) as u32,
                    ip: codec::field(&node.ip),
                    port: node.port,
                    cport: node.cport,
                    flags: to_wire(node.flags),
                    pport: node.pport,
                    notused1: 0,
                }
            })
            .collect();
        let mut exts = Vec::new();
        let hostname = self.srv.settings().cluster.announce_hostname.clone();
        if !hostname.is_empty() {
            exts.push(codec::Ext::hostname(&hostname));
        }
        codec::encode(&Message {
            header: self.header(st, ty),
            body: Body::Ping { gossip, exts },
        })
    }

    /// Sends a PING/MEET on link `t`; a PING starts the node's wait for
    /// its PONG.
    pub(super) fn send_ping(&mut self, st: &mut State, t: usize, ty: u16) {
        let msg = self.ping_message(st, ty);
        self.send(t, &msg);
        if ty == mtype::PING {
            let node = self.links.get(&t).and_then(|l| l.node.clone());
            if let Some(i) = node.and_then(|id| st.find(&id)) {
                if st.nodes[i].ping_sent == 0 {
                    st.nodes[i].ping_sent = now_ms();
                }
            }
        }
    }

    /// Sends `msg` to every node with a link that is not in handshake.
    pub(super) fn broadcast(&mut self, st: &State, msg: &[u8]) {
        let targets: Vec<usize> = st
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| *i != st.me && n.flags & (flags::HANDSHAKE | flags::NOADDR) == 0)
            .filter_map(|(_, n)| self.outbound(&n.id))
            .collect();
        for t in targets {
            self.send(t, msg);
        }
    }

    /// PUBLISH goes to every node, SPUBLISH to the nodes of this node's
    /// shard (its master and that master's replicas).
    pub(super) fn relay_publish(
        &mut self,
        st: &State,
        channel: &[u8],
        message: &[u8],
        shard: bool,
    ) {
        let ty = if shard {
            mtype::PUBLISHSHARD
        } else {
            mtype::PUBLISH
        };
        let m = codec::encode(&Message {
            header: self.header(st, ty),
            body: Body::Publish {
                channel: channel.to_vec(),
                message: message.to_vec(),
            },
        });
        if !shard {
            return self.broadcast(st, &m);
        }
        let me = st.myself();
        let master = match &me.master {
            Some(m) if me.flags & flags::SLAVE != 0 => m.clone(),
            _ => me.id.clone(),
        };
        let targets: Vec<usize> = st
            .nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| {
                *i != st.me
                    && n.flags & (flags::HANDSHAKE | flags::NOADDR) == 0
                    && (n.id == master || n.master.as_deref() == Some(master.as_str()))
            })
            .filter_map(|(_, n)| self.outbound(&n.id))
            .collect();
        for t in targets {
            self.send(t, &m);
        }
    }

    /// The address a message's sender is at: the ip it announces, else
    /// the link's peer address.
    fn sender_ip(&self, t: usize, h: &Header) -> String {
        let announced = codec::field_text(&h.myip);
        if !announced.is_empty() {
            return announced;
        }
        self.links
            .get(&t)
            .and_then(|l| l.stream.peer_addr().ok())
            .map(|a| a.ip().to_canonical().to_string())
            .unwrap_or_default()
    }

    /// Handles one received message on link `t`.
    pub(super) fn process(&mut self, st: &mut State, t: usize, raw: &[u8]) {
        let msg = match codec::decode(raw) {
            Ok(m) => m,
            Err(e) => {
                crate::warning!("Dropping a cluster bus link: {e}");
                if let Some(l) = self.links.get_mut(&t) {
                    l.dead = true;
                }
                return;
            }
        };
        let h = &msg.header;
        if let Some(c) = self.srv.cluster.stats[1].get(h.mtype as usize) {
            c.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let now = now_ms();
        let Some(link) = self.links.get(&t) else {
            return;
        };
        let inbound = link.inbound;
        let link_node = link.node.clone().and_then(|id| st.find(&id));
        let sender_id = codec::field_text(&h.sender);
        let mut sender = match link_node {
            Some(i) if !inbound && st.nodes[i].flags & flags::HANDSHAKE == 0 => Some(i),
            _ => st.find(&sender_id),
        };
        if sender == Some(st.me) {
            sender = None;
        }
        if let Some(s) = sender {
            st.nodes[s].data_received = now;
            if inbound && link_node.is_none() {
                if let Some(l) = self.links.get_mut(&t) {
                    l.node = Some(st.nodes[s].id.clone());
                }
            }
            if st.nodes[s].flags & flags::HANDSHAKE == 0 {
                if h.current_epoch > st.current_epoch {
                    st.current_epoch = h.current_epoch;
                    self.save = true;
                }
                if h.config_epoch > st.nodes[s].config_epoch {
                    st.nodes[s].config_epoch = h.config_epoch;
                    self.save = true;
                }
                self.note_offset(st, s, h);
            }
        }
        let ty = h.mtype;
        if ty == mtype::PING || ty == mtype::MEET {
            self.learn_my_ip(st, t, ty);
            if sender.is_none() && ty == mtype::MEET {
                let ip = self.sender_ip(t, h);
                st.nodes.push(Node {
                    id: commands::kernel::cluster::new_node_id(),
                    ip,
                    port: h.port,
                    pport: h.pport,
                    cport: h.cport,
                    flags: flags::HANDSHAKE,
                    ctime: now,
                    ..Node::default()
                });
                self.save = true;
            }
            self.send_ping(st, t, mtype::PONG);
        }
        match ty {
            mtype::PING | mtype::PONG | mtype::MEET => self.process_ping(st, t, &msg, sender),
            mtype::FAIL => {
                if let (Some(_), Body::Fail { nodename }) = (sender, &msg.body) {
                    self.process_fail(st, &sender_id, nodename);
                }
            }
            mtype::UPDATE => {
                let Body::Update {
                    config_epoch,
                    nodename,
                    slots,
                } = &msg.body
                else {
                    return;
                };
                if sender.is_none() {
                    return;
                }
                let Some(n) = st.find(&codec::field_text(nodename)) else {
                    return;
                };
                if st.nodes[n].config_epoch >= *config_epoch {
                    return;
                }
                if st.nodes[n].flags & flags::SLAVE != 0 {
                    set_master(st, n);
                }
                st.nodes[n].config_epoch = *config_epoch;
                self.update_slots(st, n, *config_epoch, slots);
                self.save = true;
            }
            mtype::FAILOVER_AUTH_REQUEST | mtype::FAILOVER_AUTH_ACK | mtype::MFSTART => {
                if let Some(s) = sender {
                    self.process_failover_message(st, t, s, h);
                }
            }
            mtype::PUBLISH | mtype::PUBLISHSHARD => {
                if sender.is_none() {
                    return;
                }
                if let Body::Publish { channel, message } = &msg.body {
                    // Delivered here only (client id 0 is no client).
                    let mut none = resp::ReplyBuf::new(resp::Protocol::Resp2);
                    self.srv
                        .publish(channel, message, ty == mtype::PUBLISHSHARD, 0, &mut none);
                }
            }
            _ => {}
        }
    }

    /// Redis learns its own address from the local end of a link that a
    /// MEET (or, while it has none, a PING) arrived on, unless one is
    /// announced.
    fn learn_my_ip(&mut self, st: &mut State, t: usize, ty: u16) {
        let me = st.me;
        if !(ty == mtype::MEET || st.nodes[me].ip.is_empty())
            || !self.srv.settings().cluster.announce_ip.is_empty()
        {
            return;
        }
        let Some(ip) = self
            .links
            .get(&t)
            .and_then(|l| l.stream.local_addr().ok())
            .map(|a| a.ip().to_canonical().to_string())
        else {
            return;
        };
        if st.nodes[me].ip != ip {
            crate::notice!("IP address for this node updated to {ip}");
            st.nodes[me].ip = ip;
            self.save = true;
        }
    }

    fn process_ping(&mut self, st: &mut State, t: usize, msg: &Message, mut sender: Option<usize>) {
        let h = &msg.header;
        let now = now_ms();
        let sender_id = codec::field_text(&h.sender);
        let inbound = self.links.get(&t).is_some_and(|l| l.inbound);
        if !inbound {
            let Some(ln) = self
                .links
                .get(&t)
                .and_then(|l| l.node.clone())
                .and_then(|id| st.find(&id))
            else {
                return;
            };
            if st.nodes[ln].flags & flags::HANDSHAKE != 0 {
                if let Some(s) = st.find(&sender_id).filter(|&s| s != ln) {
                    // Met a node already known: keep the known entry,
                    // at the address that answered.
                    if s != st.me {
                        let ip = st.nodes[ln].ip.clone();
                        self.update_address(st, s, &ip, (h.port, h.pport), h.cport);
                    }
                    let id = st.nodes[ln].id.clone();
                    st.remove_node(ln);
                    self.drop_links_of(&id);
                    self.save = true;
                    return;
                }
                if !valid_id(&sender_id) {
                    return;
                }
                crate::verbose!("Handshake with node {} completed.", st.nodes[ln].id.clone());
                let n = &mut st.nodes[ln];
                n.id = sender_id.clone();
                n.flags &= !flags::HANDSHAKE;
                n.flags |= from_wire(h.flags) & (flags::MASTER | flags::SLAVE);
                if let Some(l) = self.links.get_mut(&t) {
                    l.node = Some(sender_id.clone());
                }
                sender = Some(ln);
                self.save = true;
            } else if st.nodes[ln].id != sender_id {
                // Another node answers at this address now.
                let n = &mut st.nodes[ln];
                n.flags |= flags::NOADDR;
                n.ip.clear();
                n.port = 0;
                n.pport = 0;
                n.cport = 0;
                if let Some(l) = self.links.get_mut(&t) {
                    l.dead = true;
                }
                self.save = true;
                return;
            }
        }
        if let Some(s) = sender {
            let n = &mut st.nodes[s];
            if h.flags & wflags::NOFAILOVER != 0 {
                n.flags |= flags::NOFAILOVER;
            } else {
                n.flags &= !flags::NOFAILOVER;
            }
        }
        if let (Some(s), mtype::PING) = (sender, h.mtype) {
            if inbound && st.nodes[s].flags & flags::HANDSHAKE == 0 {
                let ip = self.sender_ip(t, h);
                self.update_address(st, s, &ip, (h.port, h.pport), h.cport);
            }
        }
        if !inbound && h.mtype == mtype::PONG {
            if let Some(s) = sender {
                let n = &mut st.nodes[s];
                n.pong_received = now;
                n.ping_sent = 0;
                if n.flags & flags::PFAIL != 0 {
                    n.flags &= !flags::PFAIL;
                } else if n.flags & flags::FAIL != 0 {
                    self.clear_failure_if_needed(st, s);
                }
            }
        }
        let Some(s) = sender else {
            return;
        };
        if st.nodes[s].flags & flags::HANDSHAKE != 0 {
            return;
        }
        // Role.
        if codec::is_null_id(&h.slaveof) {
            if st.nodes[s].flags & flags::SLAVE != 0 {
                set_master(st, s);
                self.save = true;
            }
        } else {
            let master_id = codec::field_text(&h.slaveof);
            if st.nodes[s].flags & flags::MASTER != 0 {
                // A master turned replica loses its slots.
                for o in st.owner.iter_mut() {
                    if *o == s as u32 {
                        *o = NO_OWNER;
                    }
                }
                let n = &mut st.nodes[s];
                n.flags = (n.flags & !flags::MASTER) | flags::SLAVE;
                self.save = true;
            }
            let known = st.find(&master_id).map(|m| {
                // A master with replicas may get one by migration later.
                st.nodes[m].migrate_to = true;
                st.nodes[m].id.clone()
            });
            if st.nodes[s].master != known {
                st.nodes[s].master = known;
                self.save = true;
            }
        }
        // Slots, by config epoch.
        if st.nodes[s].flags & flags::MASTER != 0 {
            let dirty = (0..SLOTS)
                .any(|slot| (st.owner[slot] == s as u32) != codec::slot_bit(&h.myslots, slot));
            if dirty {
                self.update_slots(st, s, h.config_epoch, &h.myslots);
                // A claim older than a slot's owner: tell the sender.
                let stale = (0..SLOTS).find_map(|slot| {
                    let o = st.owner[slot];
                    (codec::slot_bit(&h.myslots, slot)
                        && o != NO_OWNER
                        && o != s as u32
                        && st.nodes[o as usize].config_epoch > h.config_epoch)
                        .then_some(o as usize)
                });
                if let Some(o) = stale {
                    let m = codec::encode(&Message {
                        header: self.header(st, mtype::UPDATE),
                        body: Body::Update {
                            config_epoch: st.nodes[o].config_epoch,
                            nodename: codec::field(&st.nodes[o].id),
                            slots: slot_bitmap(st, o),
                        },
                    });
                    self.send(t, &m);
                }
            }
        }
        self.epoch_collision(st, s);
        if let Body::Ping { gossip, exts } = &msg.body {
            self.process_gossip(st, s, gossip);
            for e in exts {
                if e.etype == codec::ext::HOSTNAME {
                    let name = e.text();
                    if st.nodes[s].hostname != name {
                        st.nodes[s].hostname = name;
                        self.save = true;
                    }
                }
            }
            // No hostname extension: the node announces none.
            if !exts.iter().any(|e| e.etype == codec::ext::HOSTNAME)
                && !st.nodes[s].hostname.is_empty()
            {
                st.nodes[s].hostname.clear();
                self.save = true;
            }
        }
    }

    /// Moves node `s` to a new address (its links are reopened there);
    /// `ports` are its announced client port and plaintext port (`pport`).
    fn update_address(
        &mut self,
        st: &mut State,
        s: usize,
        ip: &str,
        (port, pport): (u16, u16),
        cport: u16,
    ) {
        let n = &mut st.nodes[s];
        if n.ip == ip && n.port == port && n.pport == pport && n.cport == cport {
            return;
        }
        n.ip = ip.to_string();
        n.port = port;
        n.pport = pport;
        n.cport = cport;
        n.flags &= !flags::NOADDR;
        let id = n.id.clone();
        if let Some(l) = self.outbound(&id) {
            if let Some(l) = self.links.get_mut(&l) {
                l.dead = true;
            }
        }
        crate::notice!("Address updated for node {id}, now {ip}:{port}");
        self.save = true;
    }

    /// Redis's clusterUpdateSlotsConfigWith: `sender` (a master at
    /// `epoch`) takes every slot of `slots` that is unowned or owned at a
    /// smaller config epoch (not a slot this node is importing).
    fn update_slots(
        &mut self,
        st: &mut State,
        sender: usize,
        epoch: u64,
        slots: &[u8; codec::SLOT_BYTES],
    ) {
        if sender == st.me {
            return;
        }
        // The master whose slots matter here: this node, or its master.
        let me = st.me;
        let curmaster = if st.nodes[me].is_master() {
            Some(me)
        } else {
            failover::my_master(st)
        };
        let sender_slots = (0..SLOTS).filter(|&s| codec::slot_bit(slots, s)).count();
        let mut migrated = 0;
        for slot in 0..SLOTS {
            if !codec::slot_bit(slots, slot) {
                continue;
            }
            let o = st.owner[slot];
            if o == sender as u32 || st.importing.contains_key(&(slot as u16)) {
                continue;
            }
            if o == NO_OWNER || st.nodes[o as usize].config_epoch < epoch {
                if o == me as u32 && self.srv.keyspace.count_in_slot(0, slot as u16) > 0 {
                    crate::warning!(
                        "Slot {slot} with keys given to node {} (a greater config epoch)",
                        st.nodes[sender].id
                    );
                    self.lost_slots.push(slot as u16);
                }
                if curmaster.is_some_and(|c| o == c as u32) {
                    migrated += 1;
                }
                st.owner[slot] = sender as u32;
                st.migrating.remove(&(slot as u16));
                self.save = true;
            }
        }
        // Our master (or this master) lost its last slots to `sender`:
        // follow `sender` (with cluster-allow-replica-migration, or when
        // all of `sender`'s slots were ours). A replica whose master became
        // a replica follows that master's master.
        let allow = self.srv.settings().cluster.allow_replica_migration;
        let my_master_master = failover::my_master(st)
            .and_then(|m| st.nodes[m].master.as_deref())
            .and_then(|mm| st.find(mm))
            .filter(|&mm| mm != me);
        let follow = curmaster.is_some_and(|c| {
            migrated > 0 && !st.owner.contains(&(c as u32)) && (allow || sender_slots == migrated)
        });
        let my_master_is_replica =
            failover::my_master(st).is_some_and(|m| st.nodes[m].flags & flags::SLAVE != 0);
        if follow {
            crate::warning!(
                "Configuration change detected. Reconfiguring myself as a replica of {}",
                st.nodes[sender].id
            );
            self.set_my_master(st, sender);
        } else if let Some(mm) = my_master_master.filter(|_| my_master_is_replica) {
            self.set_my_master(st, mm);
        }
    }

    /// Two masters with one config epoch: the one with the smaller id
    /// takes a new epoch.
    fn epoch_collision(&mut self, st: &mut State, s: usize) {
        let me = st.me;
        let (a, b) = (&st.nodes[s], &st.nodes[me]);
        if a.config_epoch != b.config_epoch
            || !a.is_master()
            || !b.is_master()
            || a.id.as_str() <= b.id.as_str()
        {
            return;
        }
        st.current_epoch += 1;
        st.nodes[me].config_epoch = st.current_epoch;
        self.save = true;
        crate::warning!(
            "WARNING: configEpoch collision with node {}. configEpoch set to {}",
            st.nodes[s].id,
            st.current_epoch
        );
    }

    fn process_gossip(&mut self, st: &mut State, sender: usize, gossip: &[Gossip]) {
        let now = now_ms();
        let validity = self.srv.settings().cluster.node_timeout_ms * 2;
        let sender_master = st.nodes[sender].is_master();
        let sender_id = st.nodes[sender].id.clone();
        for g in gossip {
            let id = codec::field_text(&g.nodename);
            let gf = from_wire(g.flags);
            let ip = codec::field_text(&g.ip);
            match st.find(&id) {
                Some(n) => {
                    if sender_master && n != st.me {
                        let reports = &mut st.nodes[n].fail_reports;
                        if gf & (flags::FAIL | flags::PFAIL) != 0 {
                            match reports.iter_mut().find(|(r, _)| *r == sender_id) {
                                Some(r) => r.1 = now,
                                None => reports.push((sender_id.clone(), now)),
                            }
                            self.mark_failing_if_needed(st, n);
                        } else {
                            reports.retain(|(r, _)| *r != sender_id);
                        }
                    }
                    let node = &mut st.nodes[n];
                    node.fail_reports
                        .retain(|(_, t)| now.saturating_sub(*t) <= validity);
                    if gf & (flags::PFAIL | flags::FAIL) == 0
                        && node.ping_sent == 0
                        && node.fail_reports.is_empty()
                    {
                        let pong = g.pong_received as u64 * 1000;
                        if pong <= now + 500 && pong > node.pong_received {
                            node.pong_received = pong;
                        }
                    }
                    if node.flags & (flags::FAIL | flags::PFAIL) != 0
                        && gf & (flags::NOADDR | flags::FAIL | flags::PFAIL) == 0
                        && (node.ip != ip
                            || node.port != g.port
                            || node.pport != g.pport
                            || node.cport != g.cport)
                        && n != st.me
                    {
                        self.update_address(st, n, &ip, (g.port, g.pport), g.cport);
                    }
                }
                None => {
                    let banned = st.blacklist.get(&id).is_some_and(|&until| until > now);
                    if gf & flags::NOADDR == 0 && !banned && valid_id(&id) {
                        st.nodes.push(Node {
                            id,
                            ip,
                            port: g.port,
                            pport: g.pport,
                            cport: g.cport,
                            flags: gf & !(flags::MYSELF | flags::MEET | flags::HANDSHAKE),
                            ctime: now,
                            ..Node::default()
                        });
                        self.save = true;
                    }
                }
            }
        }
    }
}

/// Node `i` becomes a master (its master link forgotten); a former
/// replica may get replicas by migration.
fn set_master(st: &mut State, i: usize) {
    let was_replica = st.nodes[i].flags & flags::SLAVE != 0;
    let me = st.me;
    let n = &mut st.nodes[i];
    n.flags = (n.flags & !flags::SLAVE) | flags::MASTER;
    n.master = None;
    if was_replica && i != me {
        n.migrate_to = true;
    }
}

fn valid_id(s: &str) -> bool {
    s.len() == codec::ID_LEN && s.bytes().all(|b| b.is_ascii_hexdigit())
}
