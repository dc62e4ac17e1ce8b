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

/// The keys of one call, as the key specs find them (keys of `not_key`
/// specs left out; arguments that do not fit the specs name no key, and
/// the handler reports them).
fn call_keys<'a>(spec: &crate::kernel::spec::CommandSpec, args: &[&'a [u8]]) -> Vec<&'a [u8]> {
    match crate::kernel::keyspecs::call_keys(spec, args) {
        Ok(v) => v
            .into_iter()
            .filter(|(_, f)| !f.contains(&"not_key"))
            .filter_map(|(i, _)| args.get(i).copied())
            .collect(),
        Err(_) => Vec::new(),
    }
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
            if migrating || importing {
                let k = store::object::Key::new(key);
                let here = {
                    let g = srv.keyspace.lock(&k);
                    g.db(0)
                        .and_then(|d| d.find(&k))
                        .is_some_and(|e| !e.is_expired(now_ms))
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
        return Ok(());
    };
    if !st.is_ok(s.cluster.require_full_coverage) {
        if !s.cluster.allow_reads_when_down {
            return Err(Redirect::Down);
        }
        if writes {
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
        return Ok(());
    }
    let me = st.myself();
    if readonly
        && !writes
        && me.flags & flags::SLAVE != 0
        && me.master.as_deref() == Some(st.nodes[owner].id.as_str())
    {
        return Ok(());
    }
    if owner != st.me {
        return Err(Redirect::Moved(
            slot,
            redirect_addr(&st, s, owner, use_pport),
        ));
    }
    Ok(())
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
