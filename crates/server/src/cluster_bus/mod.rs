//! The cluster bus: Redis 7.0's node-to-node protocol on the bus port
//! (`cluster-port`, else port + 10000), run by one thread.
//!
//! * `codec`: the binary messages, byte for byte.
//! * `link`: one connection and its buffers. With `tls-cluster yes` the
//!   bus port accepts TLS only and links this node opens speak TLS
//!   (`crate::tls_bus`); whether a link is TLS is decided when it is made.
//! * `gossip`: what a received message does to the cluster state (the
//!   handshake, gossip, slot ownership by config epoch, UPDATE).
//! * `failure`: PFAIL → FAIL by the masters' reports, FAIL messages, and
//!   clearing FAIL.
//! * `failover`: replica elections (FAILOVER_AUTH_REQUEST/ACK) and
//!   manual failover (CLUSTER FAILOVER, MFSTART).
//! * `cron`: what happens every 100 ms (connecting, pinging, failure
//!   detection).
//!
//! Invariants: the bus thread is the only owner of links. Each node other
//! than this one has at most one outbound link, opened by the cron; the
//! `connected` field of a node says whether that link is established. Every change
//! to the state that Redis saves is saved (nodes.conf) before the state
//! lock is released.

pub mod codec;
mod cron;
mod failover;
mod failure;
mod gossip;
pub mod link;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use commands::kernel::cluster::State;
use commands::kernel::server::Server;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use crate::tls_bus::BusStream;
use link::Link;

/// The waker's token (PUBLISH messages to relay).
const WAKE: Token = Token(usize::MAX);

/// How often the cron runs (Redis: 10 times a second).
const CRON_MS: u64 = 100;

pub struct Bus {
    srv: Arc<Server>,
    poll: Poll,
    listeners: Vec<TcpListener>,
    links: HashMap<usize, Link>,
    next_token: usize,
    iteration: u64,
    rng: u64,
    /// The state changed in a way nodes.conf keeps: save before unlocking.
    save: bool,
    /// This node became a replica of the master at this address: start
    /// replicating (once the state is unlocked).
    replicaof: Option<(String, u16)>,
    /// Slots this node lost with keys in them while staying a master:
    /// their keys are deleted once the state is unlocked
    /// (`services::cluster::del_keys_in_slots`).
    lost_slots: Vec<u16>,
    /// This replica won an election or took over: stop replicating, as a
    /// master (once the state is unlocked).
    promote: bool,
    election: failover::Election,
}

fn now_ms() -> u64 {
    commands::base::clock::unix_time_ms()
}

/// Binds the bus port and starts the bus thread (cluster mode only).
pub fn spawn(srv: Arc<Server>) -> Result<(), String> {
    if !srv.cluster.enabled {
        return Ok(());
    }
    let s = srv.settings();
    let port = commands::services::cluster::listen_bus_port(&s);
    let mut listeners: Vec<TcpListener> =
        crate::net::bind_tcp(&s.bind, port, s.tcp_backlog as i32)?
            .into_iter()
            .map(|(l, _)| l)
            .collect();
    let poll = Poll::new().map_err(|e| e.to_string())?;
    for (i, l) in listeners.iter_mut().enumerate() {
        poll.registry()
            .register(l, Token(i), Interest::READABLE)
            .map_err(|e| e.to_string())?;
    }
    let waker = Arc::new(mio::Waker::new(poll.registry(), WAKE).map_err(|e| e.to_string())?);
    srv.cluster.set_waker(Box::new(move || drop(waker.wake())));
    let bus = Bus {
        srv,
        poll,
        next_token: listeners.len(),
        listeners,
        links: HashMap::new(),
        iteration: 0,
        rng: now_ms() ^ ((std::process::id() as u64) << 32) | 1,
        save: false,
        replicaof: None,
        lost_slots: Vec::new(),
        promote: false,
        election: Default::default(),
    };
    std::thread::Builder::new()
        .name("petrel-cluster-bus".into())
        .spawn(move || bus.run())
        .map_err(|e| e.to_string())?;
    Ok(())
}

impl Bus {
    fn run(mut self) {
        let mut events = Events::with_capacity(256);
        let mut last_cron = 0u64;
        loop {
            if self.srv.shutdown_requested.load(Relaxed) {
                return;
            }
            let now = now_ms();
            let wait = (last_cron + CRON_MS).saturating_sub(now).min(CRON_MS);
            if let Err(e) = self
                .poll
                .poll(&mut events, Some(Duration::from_millis(wait)))
            {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    crate::warning!("cluster bus poll: {e}");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            let mut links_changed = false;
            let tokens: Vec<(usize, bool, bool)> = events
                .iter()
                .map(|e| (e.token().0, e.is_readable(), e.is_writable()))
                .collect();
            for (t, readable, writable) in tokens {
                if t == WAKE.0 {
                    continue;
                }
                if t < self.listeners.len() {
                    self.accept(t);
                    continue;
                }
                let msgs = match self.links.get_mut(&t) {
                    Some(l) => {
                        if writable || l.connecting {
                            let was = l.connecting;
                            l.check_connected();
                            l.flush();
                            links_changed |= was != l.connecting || l.dead;
                        }
                        if readable {
                            l.read()
                        } else {
                            Vec::new()
                        }
                    }
                    None => continue,
                };
                if !msgs.is_empty() {
                    self.with_state(|bus, st| {
                        for m in &msgs {
                            bus.process(st, t, m);
                        }
                    });
                }
            }
            let published = self.srv.cluster.take_published();
            if !published.is_empty() {
                self.with_state(|bus, st| {
                    for (channel, message, shard) in &published {
                        bus.relay_publish(st, channel, message, *shard);
                    }
                });
            }
            links_changed |= self.reap();
            if links_changed {
                // CLUSTER NODES shows link states as they are now.
                self.with_state(|_, _| {});
            }
            let now = now_ms();
            if now >= last_cron + CRON_MS {
                last_cron = now;
                self.with_state(|bus, st| bus.cron(st));
                self.reap();
            }
        }
    }

    /// Runs `f` on the locked state, then saves nodes.conf if it asked to
    /// and refreshes the nodes' link states.
    fn with_state(&mut self, f: impl FnOnce(&mut Bus, &mut State)) {
        let srv = self.srv.clone();
        let mut st = srv.cluster.write();
        f(self, &mut st);
        self.mark_links(&mut st);
        if std::mem::take(&mut self.save) {
            if let Err(e) = srv.cluster.save_locked(&st) {
                crate::warning!("Can't update the cluster config file: {e}");
            }
        }
        drop(st);
        if std::mem::take(&mut self.promote) {
            commands::services::replication::replica::unset_master(&srv);
        }
        if let Some(master) = self.replicaof.take() {
            // A replica now: the full sync replaces the keys of lost slots.
            self.lost_slots.clear();
            commands::services::replication::replica::replicaof(&srv, Some(master));
        }
        let lost = std::mem::take(&mut self.lost_slots);
        if !lost.is_empty() {
            let n = commands::services::cluster::del_keys_in_slots(&srv, &lost);
            crate::notice!("Deleted {n} keys of {} lost slots", lost.len());
        }
    }

    /// `connected` is true for the nodes with an outbound link; CLUSTER
    /// LINKS gets the links of known nodes (each node's outbound link,
    /// then its inbound ones, in node table order).
    fn mark_links(&self, st: &mut State) {
        let mut infos = Vec::new();
        for n in st
            .nodes
            .iter()
            .filter(|n| n.flags & commands::kernel::cluster::flags::MYSELF == 0)
        {
            let mut mine: Vec<&Link> = self
                .links
                .values()
                .filter(|l| !l.dead && l.node.as_deref() == Some(n.id.as_str()))
                .collect();
            mine.sort_by_key(|l| (l.inbound, l.ctime));
            for l in mine {
                infos.push(commands::kernel::cluster::LinkInfo {
                    outbound: !l.inbound,
                    node: n.id.clone(),
                    ctime: l.ctime,
                    events: if l.pending() > 0 || l.connecting {
                        "rw"
                    } else {
                        "r"
                    },
                    buf_alloc: l.allocated(),
                    buf_used: l.pending(),
                });
            }
        }
        self.srv.cluster.set_links(infos);
        let me = st.me;
        for (i, n) in st.nodes.iter_mut().enumerate() {
            if i != me {
                n.connected = self.links.values().any(|l| {
                    !l.inbound
                        && !l.dead
                        && !l.connecting
                        && l.node.as_deref() == Some(n.id.as_str())
                });
            }
        }
    }

    fn accept(&mut self, i: usize) {
        loop {
            let r = self.listeners[i].accept();
            match r {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    crate::verbose!("Accepting cluster node connection from {peer}");
                    let stream = if self.srv.settings().tls.cluster {
                        let made = crate::tls_bus::current()
                            .ok_or_else(|| "TLS is not configured".to_string())
                            .and_then(|c| {
                                BusStream::accepted(stream, &c).map_err(|e| e.to_string())
                            });
                        match made {
                            Ok(s) => s,
                            Err(e) => {
                                crate::warning!("Error accepting cluster node connection: {e}");
                                continue;
                            }
                        }
                    } else {
                        BusStream::Plain(stream)
                    };
                    self.add_link(Link::new(stream, peer.to_string(), true, None, now_ms()));
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    crate::warning!("Error accepting cluster node: {e}");
                    return;
                }
            }
        }
    }

    fn add_link(&mut self, mut link: Link) -> usize {
        let t = self.next_token;
        self.next_token += 1;
        if self
            .poll
            .registry()
            .register(
                link.stream.tcp_mut(),
                Token(t),
                Interest::READABLE | Interest::WRITABLE,
            )
            .is_err()
        {
            link.dead = true;
        }
        self.links.insert(t, link);
        t
    }

    /// Opens the outbound link to node `id` at `ip`:`cport`.
    fn connect(&mut self, id: &str, ip: &str, cport: u16) -> Option<usize> {
        let addr: SocketAddr = match ip.parse::<std::net::IpAddr>() {
            Ok(a) => SocketAddr::new(a, cport),
            Err(_) => return None,
        };
        let stream = TcpStream::connect(addr).ok()?;
        let _ = stream.set_nodelay(true);
        let peer = format!("Node {id} at {ip}:{cport}");
        let stream = if self.srv.settings().tls.cluster {
            let c = crate::tls_bus::current()?;
            match BusStream::connecting(stream, addr.ip(), &c) {
                Ok(s) => s,
                Err(e) => {
                    crate::verbose!("Connection with {peer} failed: {e}");
                    return None;
                }
            }
        } else {
            BusStream::Plain(stream)
        };
        Some(self.add_link(Link::new(
            stream,
            peer,
            false,
            Some(id.to_string()),
            now_ms(),
        )))
    }

    /// Drops dead links; true if there were any.
    fn reap(&mut self) -> bool {
        let dead: Vec<usize> = self
            .links
            .iter()
            .filter(|(_, l)| l.dead)
            .map(|(t, _)| *t)
            .collect();
        let any = !dead.is_empty();
        for t in dead {
            if let Some(mut l) = self.links.remove(&t) {
                let _ = self.poll.registry().deregister(l.stream.tcp_mut());
            }
        }
        any
    }

    /// The outbound link of node `id`.
    fn outbound(&self, id: &str) -> Option<usize> {
        self.links
            .iter()
            .find(|(_, l)| !l.inbound && !l.dead && l.node.as_deref() == Some(id))
            .map(|(t, _)| *t)
    }

    /// Closes every link of node `id` (its outbound and inbound ones).
    fn drop_links_of(&mut self, id: &str) {
        for l in self.links.values_mut() {
            if l.node.as_deref() == Some(id) {
                l.dead = true;
            }
        }
    }

    /// Sends `msg` on link `t` and counts it.
    fn send(&mut self, t: usize, msg: &[u8]) {
        if let Some(l) = self.links.get_mut(&t) {
            l.send(msg);
            let ty = u16::from_be_bytes([msg[12], msg[13]]) as usize;
            if let Some(c) = self.srv.cluster.stats[0].get(ty) {
                c.fetch_add(1, Relaxed);
            }
        }
    }

    fn random(&mut self) -> u64 {
        // xorshift64
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }
}
