//! Cluster mode's state: the nodes this node knows (itself first of all),
//! who owns each of the 16384 hash slots, the slots being migrated or
//! imported, and the epochs; saved to nodes.conf (`conf`) before any reply
//! that follows a change.
//!
//! Invariants:
//! * `owner[s]` is `NO_OWNER` or an index into `nodes`; `me` indexes
//!   `nodes` and that node carries `flags::MYSELF` (and no other does).
//! * `migrating` and `importing` name slots by node id; a slot is never in
//!   both.
//! * Every change made through [`Cluster::change`] is saved to the config
//!   file before `change` returns; a change whose save fails is still
//!   applied (as Redis does) and the error is reported to the caller.
//! * `Cluster::generation` changes whenever a write guard on the state is
//!   released ([`StateWrite`]), so a value computed from the state under a
//!   read guard stays valid while the generation is unchanged: the slot
//!   check's `cluster_state` ([`Cluster::is_ok_cached`]) is computed once
//!   per change, not once per command (it walks all 16384 slots).

pub mod conf;
pub mod failover;

use std::collections::BTreeMap;
use std::path::PathBuf;

use parking_lot::{RwLock, RwLockReadGuard, RwLockWriteGuard};

pub const SLOTS: usize = 16384;
/// Length of a node id (40 hex digits).
pub const ID_LEN: usize = 40;
/// `owner` entry of an unassigned slot.
pub const NO_OWNER: u32 = u32::MAX;

/// Node flags, as CLUSTER NODES names them.
pub mod flags {
    pub const MYSELF: u16 = 1;
    pub const MASTER: u16 = 2;
    pub const SLAVE: u16 = 4;
    pub const PFAIL: u16 = 8;
    pub const FAIL: u16 = 16;
    pub const HANDSHAKE: u16 = 32;
    pub const NOADDR: u16 = 64;
    pub const NOFAILOVER: u16 = 128;
    /// A MEET is still to be sent to this (handshake) node; never shown
    /// nor saved.
    pub const MEET: u16 = 256;

    const NAMES: &[(u16, &str)] = &[
        (MYSELF, "myself"),
        (MASTER, "master"),
        (SLAVE, "slave"),
        (PFAIL, "fail?"),
        (FAIL, "fail"),
        (HANDSHAKE, "handshake"),
        (NOADDR, "noaddr"),
        (NOFAILOVER, "nofailover"),
    ];

    /// `myself,master`, or `noflags`.
    pub fn names(f: u16) -> String {
        let v: Vec<&str> = NAMES
            .iter()
            .filter(|(b, _)| f & b != 0)
            .map(|(_, n)| *n)
            .collect();
        if v.is_empty() {
            "noflags".into()
        } else {
            v.join(",")
        }
    }

    pub fn parse(s: &str) -> Option<u16> {
        let mut f = 0;
        for w in s.split(',') {
            if w == "noflags" {
                continue;
            }
            f |= NAMES.iter().find(|(_, n)| *n == w)?.0;
        }
        Some(f)
    }
}

/// One node of the cluster as this node knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Node {
    pub id: String,
    pub ip: String,
    /// The client port it announces: its TLS port when it runs
    /// `tls-cluster yes`, else its plaintext port.
    pub port: u16,
    pub cport: u16,
    /// With `tls-cluster yes`, its plaintext client port (the bus header's
    /// and gossip's `pport`); 0 when unknown or not in use. Not saved in
    /// nodes.conf (as Redis 7.0): learned again from the bus.
    pub pport: u16,
    pub hostname: String,
    pub flags: u16,
    /// The master's id, for a replica.
    pub master: Option<String>,
    pub ping_sent: u64,
    pub pong_received: u64,
    pub config_epoch: u64,
    /// A bus link to it is up.
    pub connected: bool,
    /// When this node was added (ms; a handshake that takes too long is
    /// dropped).
    pub ctime: u64,
    /// When it was flagged FAIL (ms).
    pub fail_time: u64,
    /// When anything was last received from it over the bus (ms).
    pub data_received: u64,
    /// Masters that reported it failing: (node id, when, ms).
    pub fail_reports: Vec<(String, u64)>,
    /// The replication offset its last bus message announced, and when
    /// that arrived (ms).
    pub repl_offset: u64,
    pub repl_offset_time: u64,
    /// For a master: when this node last voted for one of its replicas
    /// (ms; `failover::vote`).
    pub voted_time: u64,
    /// A master that had replicas, or was a replica once (Redis's
    /// MIGRATE_TO): a replica may migrate to it when it has none left.
    pub migrate_to: bool,
    /// Since when it is a master without working replicas (ms; 0: not).
    pub orphaned_time: u64,
}

impl Node {
    pub fn is_master(&self) -> bool {
        self.flags & flags::MASTER != 0
    }
}

/// The cluster configuration (see the module docs for its invariants).
#[derive(Clone, Debug)]
pub struct State {
    pub nodes: Vec<Node>,
    pub me: usize,
    pub owner: Vec<u32>,
    pub migrating: BTreeMap<u16, String>,
    pub importing: BTreeMap<u16, String>,
    pub current_epoch: u64,
    pub last_vote_epoch: u64,
    /// Nodes forgotten by CLUSTER FORGET, not to be re-added from gossip
    /// until the time (ms) given.
    pub blacklist: BTreeMap<String, u64>,
    /// The manual failover (CLUSTER FAILOVER) in progress, if any.
    pub mf: failover::ManualFailover,
}

/// A fresh node id: 40 random hex digits.
pub fn new_node_id() -> String {
    crate::base::text::random_hex(ID_LEN)
}

impl State {
    /// No nodes at all (the parser's start).
    fn empty() -> State {
        State {
            nodes: Vec::new(),
            me: 0,
            owner: vec![NO_OWNER; SLOTS],
            migrating: BTreeMap::new(),
            importing: BTreeMap::new(),
            current_epoch: 0,
            last_vote_epoch: 0,
            blacklist: BTreeMap::new(),
            mf: failover::ManualFailover::default(),
        }
    }

    /// A new node alone in its cluster, with a fresh id and no slots.
    pub fn new_alone(port: u16, cport: u16) -> State {
        let mut s = State::empty();
        s.nodes.push(Node {
            id: new_node_id(),
            ip: String::new(),
            port,
            cport,
            hostname: String::new(),
            flags: flags::MYSELF | flags::MASTER,
            master: None,
            ping_sent: 0,
            pong_received: 0,
            config_epoch: 0,
            connected: true,
            ..Node::default()
        });
        s
    }

    pub fn myself(&self) -> &Node {
        &self.nodes[self.me]
    }

    pub fn find(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.id == id)
    }

    /// The index of the node owning `slot`.
    pub fn owner_of(&self, slot: u16) -> Option<usize> {
        match self.owner[slot as usize] {
            NO_OWNER => None,
            i => Some(i as usize),
        }
    }

    /// The contiguous slot ranges node `i` owns, ascending.
    pub fn ranges_of(&self, i: usize) -> Vec<(u16, u16)> {
        let mut v: Vec<(u16, u16)> = Vec::new();
        for s in 0..SLOTS {
            if self.owner[s] == i as u32 {
                match v.last_mut() {
                    Some(r) if r.1 as usize + 1 == s => r.1 = s as u16,
                    _ => v.push((s as u16, s as u16)),
                }
            }
        }
        v
    }

    pub fn slots_assigned(&self) -> usize {
        self.owner.iter().filter(|&&o| o != NO_OWNER).count()
    }

    /// Slots whose owner is flagged `flag` (PFAIL or FAIL).
    pub fn slots_flagged(&self, flag: u16) -> usize {
        self.owner
            .iter()
            .filter(|&&o| o != NO_OWNER && self.nodes[o as usize].flags & flag != 0)
            .count()
    }

    /// Masters serving at least one slot.
    pub fn size(&self) -> usize {
        let mut serving = vec![false; self.nodes.len()];
        for &o in &self.owner {
            if o != NO_OWNER {
                serving[o as usize] = true;
            }
        }
        serving.iter().filter(|&&b| b).count()
    }

    /// Whether the cluster serves: every slot assigned to a node not
    /// failed (when full coverage is required), and the reachable masters
    /// serving slots a majority.
    pub fn is_ok(&self, require_full_coverage: bool) -> bool {
        if require_full_coverage
            && self
                .owner
                .iter()
                .any(|&o| o == NO_OWNER || self.nodes[o as usize].flags & flags::FAIL != 0)
        {
            return false;
        }
        let size = self.size();
        let mut serving = vec![false; self.nodes.len()];
        for &o in &self.owner {
            if o != NO_OWNER {
                serving[o as usize] = true;
            }
        }
        let reachable = serving
            .iter()
            .enumerate()
            .filter(|(i, &s)| s && self.nodes[*i].flags & (flags::FAIL | flags::PFAIL) == 0)
            .count();
        // A majority of the masters serving slots (none serving: fail).
        reachable > size / 2
    }

    /// The epoch CLUSTER INFO shows as `cluster_my_epoch`: the node's own,
    /// or its master's for a replica.
    pub fn my_epoch(&self) -> u64 {
        let me = self.myself();
        match me.master.as_deref().and_then(|m| self.find(m)) {
            Some(m) if me.flags & flags::SLAVE != 0 => self.nodes[m].config_epoch,
            _ => me.config_epoch,
        }
    }

    /// The largest epoch known: the current epoch or any node's config epoch.
    pub fn max_epoch(&self) -> u64 {
        self.nodes
            .iter()
            .map(|n| n.config_epoch)
            .fold(self.current_epoch, u64::max)
    }

    /// CLUSTER BUMPEPOCH's rule: takes a new epoch unless the node's own
    /// is already the largest and non-zero. True if it took one.
    pub fn bump_epoch(&mut self) -> bool {
        let max = self.max_epoch();
        let me = self.me;
        if self.nodes[me].config_epoch == 0 || self.nodes[me].config_epoch != max {
            self.current_epoch += 1;
            self.nodes[me].config_epoch = self.current_epoch;
            true
        } else {
            false
        }
    }

    /// Redis's clusterStartHandshake: adds a node in handshake (with a
    /// random id, to be replaced by its real one when it answers) at
    /// `ip`:`port`@`cport`, unless one is already in handshake there.
    /// False (nothing added) for an address that is not an IP or a port
    /// out of range.
    pub fn start_handshake(&mut self, ip: &str, port: i64, cport: i64, now_ms: u64) -> bool {
        let Ok(ip) = ip.parse::<std::net::IpAddr>() else {
            return false;
        };
        if !(1..=65535).contains(&port) || !(1..=65535).contains(&cport) {
            return false;
        }
        let ip = ip.to_string();
        let (port, cport) = (port as u16, cport as u16);
        let busy = self.nodes.iter().any(|n| {
            n.flags & flags::HANDSHAKE != 0 && n.ip == ip && n.port == port && n.cport == cport
        });
        if !busy {
            self.nodes.push(Node {
                id: new_node_id(),
                ip,
                port,
                cport,
                flags: flags::HANDSHAKE | flags::MEET,
                ctime: now_ms,
                ..Node::default()
            });
        }
        true
    }

    /// Removes node `i`, renumbering the slot owners.
    pub fn remove_node(&mut self, i: usize) {
        debug_assert_ne!(i, self.me);
        let id = self.nodes.remove(i).id;
        if self.me > i {
            self.me -= 1;
        }
        for o in self.owner.iter_mut() {
            if *o == i as u32 {
                *o = NO_OWNER;
            } else if *o != NO_OWNER && *o > i as u32 {
                *o -= 1;
            }
        }
        self.migrating.retain(|_, v| *v != id);
        self.importing.retain(|_, v| *v != id);
    }
}

/// Names of the bus message types, by type number, as CLUSTER INFO shows
/// them.
pub const MESSAGE_NAMES: [&str; 11] = [
    "ping",
    "pong",
    "meet",
    "fail",
    "publish",
    "auth-req",
    "auth-ack",
    "update",
    "mfstart",
    "module",
    "publishshard",
];

/// One bus link as CLUSTER LINKS shows it (the bus refreshes these).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    /// Opened by this node ("to") or by the peer ("from").
    pub outbound: bool,
    pub node: String,
    /// Creation time, ms.
    pub ctime: u64,
    /// "r", or "rw" while bytes wait to be sent.
    pub events: &'static str,
    pub buf_alloc: usize,
    pub buf_used: usize,
}

/// A message published here for the bus to relay: channel, message, and
/// whether it is a shard message (SPUBLISH).
pub type Published = (Vec<u8>, Vec<u8>, bool);

/// The node's cluster state and where it is saved.
pub struct Cluster {
    pub enabled: bool,
    path: PathBuf,
    state: RwLock<State>,
    /// Bus messages sent (`[0]`) and received (`[1]`), by type.
    pub stats: [[std::sync::atomic::AtomicU64; 11]; 2],
    /// PUBLISH/SPUBLISH messages (channel, message, shard) for the bus to
    /// relay to the other nodes.
    outbox: parking_lot::Mutex<Vec<Published>>,
    /// The bus links, as last published by the bus.
    links: parking_lot::Mutex<Vec<LinkInfo>>,
    /// Wakes the bus thread (set when it starts).
    wake: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
    /// Commands let through the slot check on a MIGRATING slot (their keys
    /// are here) that have not finished yet (`services::cluster::Pass`):
    /// MIGRATE waits for the others to finish before it moves keys.
    pub passes: std::sync::atomic::AtomicU64,
    /// A master paused for a replica's manual failover: replication sends
    /// no PING into the stream (the replica must reach its offset).
    pub mf_pausing: std::sync::atomic::AtomicBool,
    /// Links freed for holding more unsent bytes than
    /// `cluster-link-sendbuf-limit` (CLUSTER INFO's
    /// `total_cluster_links_buffer_limit_exceeded`).
    pub links_buffer_limit_exceeded: std::sync::atomic::AtomicU64,
    /// Bumped each time a write guard on `state` is released.
    generation: std::sync::atomic::AtomicU64,
    /// [`State::is_ok`]'s last answer under a read guard:
    /// `(generation + 1) << 2 | require_full_coverage << 1 | ok`, or 0.
    ok_cache: std::sync::atomic::AtomicU64,
}

/// A write guard on the cluster state that bumps the generation when it
/// is released (the fields drop after `drop` runs, so the bump happens
/// while the lock is still held).
pub struct StateWrite<'a> {
    guard: RwLockWriteGuard<'a, State>,
    generation: &'a std::sync::atomic::AtomicU64,
}

impl std::ops::Deref for StateWrite<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        &self.guard
    }
}

impl std::ops::DerefMut for StateWrite<'_> {
    fn deref_mut(&mut self) -> &mut State {
        &mut self.guard
    }
}

impl Drop for StateWrite<'_> {
    fn drop(&mut self) {
        self.generation
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
    }
}

impl Cluster {
    /// Cluster mode off: CLUSTER answers that support is disabled.
    pub fn disabled() -> Cluster {
        Cluster::new(false, PathBuf::new())
    }

    /// A cluster saved at `path`, holding a placeholder node until
    /// [`Cluster::install`] puts the loaded (or new) state in.
    pub fn new(enabled: bool, path: PathBuf) -> Cluster {
        Cluster {
            enabled,
            path,
            state: RwLock::new(State::new_alone(0, 0)),
            stats: Default::default(),
            outbox: Default::default(),
            links: Default::default(),
            wake: Default::default(),
            passes: Default::default(),
            mf_pausing: Default::default(),
            links_buffer_limit_exceeded: Default::default(),
            generation: Default::default(),
            ok_cache: Default::default(),
        }
    }

    fn state_write(&self) -> StateWrite<'_> {
        StateWrite {
            guard: self.state.write(),
            generation: &self.generation,
        }
    }

    /// [`State::is_ok`] for the state `st` read through [`Cluster::read`],
    /// computed once per generation of the state.
    pub fn is_ok_cached(
        &self,
        st: &RwLockReadGuard<'_, State>,
        require_full_coverage: bool,
    ) -> bool {
        use std::sync::atomic::Ordering::{Acquire, Relaxed};
        let key =
            ((self.generation.load(Acquire) + 1) << 2) | (u64::from(require_full_coverage) << 1);
        let cached = self.ok_cache.load(Relaxed);
        if cached & !1 == key {
            return cached & 1 == 1;
        }
        let ok = st.is_ok(require_full_coverage);
        // Stored under the read guard: no writer can have moved on.
        self.ok_cache.store(key | u64::from(ok), Relaxed);
        ok
    }

    /// Replaces the whole state (startup).
    pub fn install(&self, state: State) {
        *self.state_write() = state;
    }

    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    pub fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read()
    }

    /// The state for the cluster bus, which saves (with
    /// [`Cluster::save_locked`]) when what it changed needs it.
    pub fn write(&self) -> StateWrite<'_> {
        self.state_write()
    }

    /// Applies `f`, then saves the configuration if `f` says it changed
    /// something (`Ok(true)`). A save failure is returned as `Err` with
    /// Redis's reason text; the change stays applied.
    pub fn change<T>(
        &self,
        f: impl FnOnce(&mut State) -> Result<(T, bool), String>,
    ) -> Result<T, String> {
        let mut st = self.state_write();
        let (v, changed) = f(&mut st)?;
        if changed {
            self.save_locked(&st)?;
        }
        Ok(v)
    }

    /// Applies `f` without saving: for what Redis does not save at once
    /// either (the announced ports and hostname of the node itself).
    pub fn update_unsaved<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state_write())
    }

    /// The bus thread's waker (once, at its start).
    pub fn set_waker(&self, f: Box<dyn Fn() + Send + Sync>) {
        let _ = self.wake.set(f);
    }

    /// Wakes the bus thread (something in the state is for it to act on,
    /// e.g. a manual failover to start).
    pub fn wake_bus(&self) {
        if let Some(w) = self.wake.get() {
            w();
        }
    }

    /// Hands a published message to the bus, which relays it to the other
    /// nodes (PUBLISH to all, SPUBLISH to the node's shard). Nothing
    /// outside cluster mode.
    pub fn relay_publish(&self, channel: &[u8], message: &[u8], shard: bool) {
        if !self.enabled {
            return;
        }
        if let Some(w) = self.wake.get() {
            self.outbox
                .lock()
                .push((channel.to_vec(), message.to_vec(), shard));
            w();
        }
    }

    /// The bus's links (for CLUSTER LINKS).
    pub fn links(&self) -> Vec<LinkInfo> {
        self.links.lock().clone()
    }

    /// Replaces the list of links (the bus, whenever they change).
    pub fn set_links(&self, links: Vec<LinkInfo>) {
        *self.links.lock() = links;
    }

    /// The messages to relay, taken.
    pub fn take_published(&self) -> Vec<Published> {
        std::mem::take(&mut *self.outbox.lock())
    }

    /// Writes nodes.conf now (CLUSTER SAVECONFIG).
    pub fn save(&self) -> Result<(), String> {
        let st = self.state.read();
        self.save_locked(&st)
    }

    pub fn save_locked(&self, st: &State) -> Result<(), String> {
        conf::save_atomic(&self.path, &conf::file_text(st)).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests;
