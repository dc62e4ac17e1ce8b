//! Cluster mode's startup and the queries families share: loading or
//! creating nodes.conf, and the node's own announced addresses (see
//! `kernel::cluster` for the state and its invariants).

use crate::kernel::cluster::{conf, State};
use crate::kernel::config::Settings;
use crate::kernel::server::Server;

/// The client port cluster mode is based on: the TLS port with
/// `tls-cluster yes`, else the plaintext port (Redis: the bus port is this
/// + 10000 unless `cluster-port` is set).
fn base_port(s: &Settings) -> u16 {
    if s.tls.cluster {
        s.tls.port
    } else {
        s.port
    }
}

/// The bus port this node listens on: `cluster-port`, else the base
/// client port ([`base_port`]) + 10000.
pub fn listen_bus_port(s: &Settings) -> u16 {
    if s.cluster.port != 0 {
        s.cluster.port
    } else {
        base_port(s).wrapping_add(10000)
    }
}

/// The bus port this node announces: `cluster-announce-bus-port`, else
/// the port it listens on.
pub fn bus_port(s: &Settings) -> u16 {
    if s.cluster.announce_bus_port != 0 {
        s.cluster.announce_bus_port
    } else {
        listen_bus_port(s)
    }
}

/// The client port this node announces (the bus header's `port`): with
/// `tls-cluster yes` the TLS port (`cluster-announce-tls-port` if set),
/// else the plaintext port; `cluster-announce-port` overrides it when no
/// announced TLS port applies (Redis's deriveAnnouncedPorts).
pub fn client_port(s: &Settings) -> u16 {
    announced_ports(s).0
}

/// The plaintext client port this node announces with `tls-cluster yes`
/// (the bus header's `pport`); 0 without it.
pub fn plaintext_port(s: &Settings) -> u16 {
    announced_ports(s).1
}

/// (port, pport) as Redis 7.0 derives them.
fn announced_ports(s: &Settings) -> (u16, u16) {
    let mut port = base_port(s);
    let mut pport = if s.tls.cluster { s.port } else { 0 };
    if s.tls.cluster && s.cluster.announce_tls_port != 0 {
        port = s.cluster.announce_tls_port;
        pport = s.cluster.announce_port;
    } else if s.cluster.announce_port != 0 {
        port = s.cluster.announce_port;
    }
    (port, pport)
}

/// Whether a client on a plaintext connection is shown the nodes'
/// plaintext ports: only when the cluster runs over TLS (`tls-cluster
/// yes`), whose announced ports are TLS ports (Redis's use of `pport`).
pub fn use_pport(s: &Settings, client_is_tls: bool) -> bool {
    s.tls.cluster && !client_is_tls
}

/// Puts the announced ports, hostname and (if set) address into the
/// node's own entry. True if anything changed.
pub fn refresh_myself(st: &mut State, s: &Settings) -> bool {
    let me = st.me;
    let n = &mut st.nodes[me];
    let before = n.clone();
    let (port, pport) = announced_ports(s);
    n.port = port;
    n.pport = pport;
    n.cport = bus_port(s);
    n.hostname = s.cluster.announce_hostname.clone();
    if !s.cluster.announce_ip.is_empty() {
        n.ip = s.cluster.announce_ip.clone();
    }
    *n != before
}

/// Cluster mode at startup: loads `cluster-config-file` (relative to the
/// working directory, `dir`), or creates a node alone in its cluster with a
/// new id; either way the file is written back with the current ports. A
/// corrupt file is an error that stops the server, as in Redis.
pub fn load_at_startup(srv: &Server) -> Result<(), String> {
    if !srv.cluster.enabled {
        return Ok(());
    }
    let settings = srv.config.get();
    if settings.cluster.port == 0 && base_port(&settings) > 55535 {
        return Err("Redis port number too high. Cluster communication port is 10,000 port numbers higher than your Redis port. Your Redis port number must be 55535 or less.".into());
    }
    let path = srv.cluster.path().to_path_buf();
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return Err(format!(
                "Can't open {} in order to load the cluster configuration: {e}",
                path.display()
            ))
        }
    };
    let mut state = match text.filter(|t| !t.trim().is_empty()) {
        Some(t) => conf::parse(&t).map_err(|e| format!("Unrecoverable error: {e}"))?,
        None => {
            let st = State::new_alone(client_port(&settings), bus_port(&settings));
            crate::base::log::log(
                crate::base::log::LogLevel::Notice,
                &format!("No cluster configuration found, I'm {}", st.myself().id),
            );
            st
        }
    };
    refresh_myself(&mut state, &settings);
    srv.cluster.install(state);
    srv.cluster.save().map_err(|e| {
        format!(
            "Fatal: can't update cluster config file {}: {e}",
            path.display()
        )
    })
}

/// Why a command is not served here (Redis's redirection replies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    CrossSlot,
    /// Keys of a slot being migrated, some here and some not.
    TryAgain,
    Unbound,
    Down,
    DownReadOnly,
    Moved(u16, String),
    Ask(u16, String),
}

impl Redirect {
    /// The error reply.
    pub fn text(&self) -> String {
        match self {
            Redirect::CrossSlot => "CROSSSLOT Keys in request don't hash to the same slot".into(),
            Redirect::TryAgain => "TRYAGAIN Multiple keys request during rehashing of slot".into(),
            Redirect::Unbound => "CLUSTERDOWN Hash slot not served".into(),
            Redirect::Down => "CLUSTERDOWN The cluster is down".into(),
            Redirect::DownReadOnly => {
                "CLUSTERDOWN The cluster is down and only accepts read commands".into()
            }
            Redirect::Moved(slot, addr) => format!("MOVED {slot} {addr}"),
            Redirect::Ask(slot, addr) => format!("ASK {slot} {addr}"),
        }
    }
}

/// The endpoint a node is named by per `cluster-preferred-endpoint-type`
/// (Redis's preferred endpoint): its address, its hostname ("?" if it has
/// none), or nothing for `unknown-endpoint`.
pub fn preferred_endpoint<'a>(s: &Settings, n: &'a crate::kernel::cluster::Node) -> &'a str {
    match s.cluster.preferred_endpoint_type {
        0 => &n.ip,
        1 if !n.hostname.is_empty() => &n.hostname,
        1 => "?",
        _ => "",
    }
}

/// The `host:port` a redirection names for node `i` (`use_pport`: see
/// [`use_pport`]).
fn redirect_addr(st: &State, s: &Settings, i: usize, use_pport: bool) -> String {
    let n = &st.nodes[i];
    let port = crate::kernel::cluster::conf::client_port_of(n, use_pport);
    format!("{}:{}", preferred_endpoint(s, n), port)
}

/// Sharded Pub/Sub: its shard channels are `not_key` arguments, routed
/// by their slot like keys (Redis's getNodeByQuery).
fn is_shard_pubsub(spec: &crate::kernel::spec::CommandSpec) -> bool {
    matches!(spec.name, "spublish" | "ssubscribe" | "sunsubscribe")
}

/// The keys of one call, as the key specs find them (keys of `not_key`
/// specs left out, but for sharded Pub/Sub's channels; arguments that do
/// not fit the specs name no key, and the handler reports them).
fn call_keys<'a>(spec: &crate::kernel::spec::CommandSpec, args: &[&'a [u8]]) -> Vec<&'a [u8]> {
    let channels = is_shard_pubsub(spec);
    match crate::kernel::keyspecs::call_keys(spec, args) {
        Ok(v) => v
            .into_iter()
            .filter(|(_, f)| channels || !f.contains(&"not_key"))
            .filter_map(|(i, _)| args.get(i).copied())
            .collect(),
        Err(_) => Vec::new(),
    }
}

thread_local! {
    /// Passes held by this thread's running command.
    static MY_PASSES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A command let through on a MIGRATING slot because its keys are here,
/// until it has run (dropping it ends it). Redis checks and runs a command
/// in one step; here another worker's MIGRATE could move the keys between
/// the check and the command, which would then write a key the target
/// already has. So the check takes the pass while it holds the key's
/// partition, and MIGRATE, holding its keys' partitions, waits until no
/// other command holds one ([`others_passing`]): a command checked later
/// waits for MIGRATE's partition, finds its key gone, and is sent ASK.
pub struct Pass<'a>(&'a std::sync::atomic::AtomicU64);

impl<'a> Pass<'a> {
    fn new(c: &'a std::sync::atomic::AtomicU64) -> Pass<'a> {
        c.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        MY_PASSES.with(|m| m.set(m.get() + 1));
        Pass(c)
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        MY_PASSES.with(|m| m.set(m.get() - 1));
    }
}

/// Does this thread's running command hold a [`Pass`]?
pub fn holds_pass() -> bool {
    MY_PASSES.with(|m| m.get() > 0)
}

/// Commands of other threads let through on a MIGRATING slot and not
/// finished (see [`Pass`]).
pub fn others_passing(srv: &Server) -> u64 {
    let all = srv.cluster.passes.load(std::sync::atomic::Ordering::SeqCst);
    all.saturating_sub(MY_PASSES.with(|m| m.get()))
}

/// Redis's slot check (getNodeByQuery) for the calls `calls` (one command,
/// or EXEC's queue) of a client that sent ASKING (`asking`) or READONLY:
/// Ok when this node serves them all. Redirections name the nodes'
/// plaintext ports when `use_pport` (see [`use_pport`]).
#[allow(clippy::too_many_arguments)]
pub fn check_calls(
    srv: &Server,
    s: &Settings,
    calls: &[(&crate::kernel::spec::CommandSpec, Vec<&[u8]>)],
    writes: bool,
    asking: bool,
    readonly: bool,
    now_ms: u64,
    use_pport: bool,
) -> Result<(), Redirect> {
    check_calls_pass(srv, s, calls, writes, asking, readonly, now_ms, use_pport).map(drop)
}

/// [`check_calls`], with the [`Pass`] the caller holds until the command
/// has run when it is let through on a MIGRATING slot.
#[allow(clippy::too_many_arguments)]
pub fn check_calls_pass<'a>(
    srv: &'a Server,
    s: &Settings,
    calls: &[(&crate::kernel::spec::CommandSpec, Vec<&[u8]>)],
    writes: bool,
    asking: bool,
    readonly: bool,
    now_ms: u64,
    use_pport: bool,
) -> Result<Option<Pass<'a>>, Redirect> {
    let mut pass: Option<Pass<'a>> = None;
    use crate::kernel::cluster::flags;
    let st = srv.cluster.read();
    let mut first: Option<(&[u8], u16)> = None;
    let mut owner = None;
    let (mut multiple, mut migrating, mut importing) = (false, false, false);
    let (mut missing, mut existing) = (0usize, 0usize);
    for (spec, args) in calls {
        for key in call_keys(spec, args) {
            let slot = store::slot::key_slot(key);
            match first {
                None => {
                    first = Some((key, slot));
                    let Some(o) = st.owner_of(slot) else {
                        return Err(Redirect::Unbound);
                    };
                    owner = Some(o);
                    if o == st.me && st.migrating.contains_key(&slot) {
                        migrating = true;
                    } else if st.importing.contains_key(&slot) {
                        importing = true;
                    }
                }
                Some((k, s0)) => {
                    if s0 != slot {
                        return Err(Redirect::CrossSlot);
                    }
                    if k != key {
                        multiple = true;
                    }
                }
            }
            // A shard channel is served by the slot's owner until the
            // migration ends, whether or not it "exists" (Redis 7.0).
            if (migrating || importing) && !is_shard_pubsub(spec) {
                let k = store::object::Key::new(key);
                let here = {
                    let g = srv.keyspace.lock(&k);
                    let here = g
                        .db(0)
                        .and_then(|d| d.find(&k))
                        .is_some_and(|e| !e.is_expired(now_ms));
                    // Taken under the partition's lock (see `Pass`).
                    if here && migrating && pass.is_none() {
                        pass = Some(Pass::new(&srv.cluster.passes));
                    }
                    here
                };
                if here {
                    existing += 1;
                } else {
                    missing += 1;
                }
            }
        }
    }
    let (Some(owner), Some((_, slot))) = (owner, first) else {
        return Ok(None);
    };
    if !srv
        .cluster
        .is_ok_cached(&st, s.cluster.require_full_coverage)
    {
        // Sharded Pub/Sub has its own rule (Redis 7.0's getNodeByQuery).
        let shard_pubsub = calls.iter().all(|(spec, _)| is_shard_pubsub(spec));
        if shard_pubsub {
            if !s.cluster.allow_pubsubshard_when_down {
                return Err(Redirect::Down);
            }
        } else if !s.cluster.allow_reads_when_down {
            return Err(Redirect::Down);
        } else if writes {
            return Err(Redirect::DownReadOnly);
        }
    }
    if migrating && missing > 0 {
        if existing > 0 {
            return Err(Redirect::TryAgain);
        }
        let to = st.migrating.get(&slot).and_then(|id| st.find(id));
        return match to {
            Some(i) => Err(Redirect::Ask(slot, redirect_addr(&st, s, i, use_pport))),
            // A target forgotten since: Redis would have cleared the mark.
            None => Err(Redirect::TryAgain),
        };
    }
    if importing && asking {
        if multiple && missing > 0 {
            return Err(Redirect::TryAgain);
        }
        return Ok(None);
    }
    let me = st.myself();
    if readonly
        && !writes
        && me.flags & flags::SLAVE != 0
        && me.master.as_deref() == Some(st.nodes[owner].id.as_str())
    {
        return Ok(None);
    }
    if owner != st.me {
        return Err(Redirect::Moved(
            slot,
            redirect_addr(&st, s, owner, use_pport),
        ));
    }
    Ok(pass)
}

/// Redis's delKeysInSlot, for slots this node lost while holding keys in
/// them (an UPDATE or a claim at a greater config epoch gave them to
/// another master, and this node stays a master): deletes their keys, in
/// batches that each hold the slot's partition for a moment, each key
/// journaled as `DEL` (`UNLINK` with `lazyfree-lazy-server-del`) so
/// replicas and the AOF drop it too, with its `del` keyspace event and
/// WATCHes touched. Slots this node owns again by the time it runs are
/// left alone. Returns the number of keys deleted.
pub fn del_keys_in_slots(srv: &Server, slots: &[u16]) -> usize {
    let lost: Vec<u16> = {
        let st = srv.cluster.read();
        slots
            .iter()
            .copied()
            .filter(|&s| st.owner_of(s) != Some(st.me))
            .collect()
    };
    let settings = srv.settings();
    let (lazy, flags) = (
        settings.lazyfree_lazy_server_del,
        settings.notify_keyspace_events,
    );
    let mut none = resp::ReplyBuf::new(resp::Protocol::Resp2);
    let mut total = 0;
    for slot in lost {
        loop {
            let n = crate::services::journal::shared_section(srv, || {
                let now = crate::base::clock::unix_time_ms();
                let keys = srv.keyspace.keys_in_slot(0, slot, now, 256);
                let mut gone = Vec::with_capacity(keys.len());
                {
                    let mut g = srv
                        .keyspace
                        .lock_partition(srv.keyspace.partition_of_slot(slot));
                    for k in &keys {
                        if let Some(e) = g.remove(0, &store::object::Key::new(k), now) {
                            gone.push(e);
                        }
                    }
                }
                for e in &gone {
                    let key = e.key();
                    crate::services::journal::deleted(srv, 0, &key, lazy);
                    if srv.watches.any() {
                        srv.watches.touch(Some(0), &key);
                    }
                    srv.notify_keyspace_event(
                        flags,
                        crate::kernel::notify::Event {
                            class: crate::kernel::notify::GENERIC,
                            name: "del",
                            key: &key,
                            db: 0,
                        },
                        0,
                        &mut none,
                    );
                }
                let n = gone.len();
                srv.lazyfree.free_entries(gone, lazy);
                n
            });
            if n == 0 {
                break;
            }
            total += n;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Redis 7.0's announced ports (deriveAnnouncedPorts), case by case.
    #[test]
    fn announced_ports_follow_tls_cluster() {
        let mut s = Settings {
            port: 7000,
            ..Settings::default()
        };
        s.tls.port = 7100;
        assert_eq!(announced_ports(&s), (7000, 0));
        assert_eq!((listen_bus_port(&s), bus_port(&s)), (17000, 17000));
        s.tls.cluster = true;
        assert_eq!(announced_ports(&s), (7100, 7000));
        assert_eq!(listen_bus_port(&s), 17100);
        s.cluster.announce_port = 8000;
        assert_eq!(announced_ports(&s), (8000, 7000));
        s.cluster.announce_tls_port = 8100;
        assert_eq!(announced_ports(&s), (8100, 8000));
        s.cluster.port = 9000;
        s.cluster.announce_bus_port = 9100;
        assert_eq!((listen_bus_port(&s), bus_port(&s)), (9000, 9100));
        s.tls.cluster = false;
        assert_eq!(announced_ports(&s), (8000, 0));
        assert!(!use_pport(&s, false));
        s.tls.cluster = true;
        assert!(use_pport(&s, false) && !use_pport(&s, true));
    }
}
