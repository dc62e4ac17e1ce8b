//! CLUSTER and the cluster connection commands (READONLY, READWRITE,
//! ASKING), on `kernel::cluster`'s state. Every change to the
//! configuration is saved to nodes.conf before the reply
//! (`Cluster::change`). Outside cluster mode each answers, as Redis does,
//! that cluster support is disabled.

use crate::base::parse::parse_i64;
use crate::kernel::cluster::{State, NO_OWNER, SLOTS};
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs};

const DISABLED: &str = "ERR This instance has cluster support disabled";

/// False (after replying) outside cluster mode.
fn enabled(ctx: &mut Ctx) -> bool {
    if !ctx.srv.cluster.enabled {
        ctx.error(DISABLED);
        return false;
    }
    true
}

/// Puts the announced port, bus port and hostname (which CONFIG SET may
/// have changed) into the node's own entry before it is shown; like Redis,
/// this alone does not rewrite nodes.conf.
fn refresh(ctx: &mut Ctx) {
    let settings = ctx.settings;
    ctx.srv
        .cluster
        .update_unsaved(|st| crate::services::cluster::refresh_myself(st, settings));
}

/// Redis's getSlotOrReply.
fn slot_arg(a: &[u8]) -> Result<u16, String> {
    match parse_i64(a) {
        Some(n) if (0..SLOTS as i64).contains(&n) => Ok(n as u16),
        _ => Err("ERR Invalid or out of range slot".into()),
    }
}

/// Runs a change and replies OK, or the error (a failed save included).
fn change_ok(ctx: &mut Ctx, f: impl FnOnce(&mut State) -> Result<bool, String>) {
    match ctx.srv.cluster.change(|st| f(st).map(|c| ((), c))) {
        Ok(()) => ctx.ok(),
        Err(e) if e.starts_with("ERR ") => ctx.error(&e),
        Err(e) => ctx.error(&format!("ERR error saving the cluster node config: {e}")),
    }
}

/// Keys this node holds (only database 0 exists in cluster mode).
fn db_keys(ctx: &Ctx) -> usize {
    ctx.srv.keyspace.dbsize(0)
}

/// Checks and applies ADDSLOTS/DELSLOTS(RANGE) over `ranges`, as Redis:
/// every slot free (or assigned, for DEL) and named once, else nothing
/// changes.
fn assign(ctx: &mut Ctx, ranges: Vec<(u16, u16)>, del: bool) {
    change_ok(ctx, |st| {
        let mut seen = vec![false; SLOTS];
        for &(a, b) in &ranges {
            for s in a..=b {
                let owned = st.owner[s as usize] != NO_OWNER;
                if del && !owned {
                    return Err(format!("ERR Slot {s} is already unassigned"));
                }
                if !del && owned {
                    return Err(format!("ERR Slot {s} is already busy"));
                }
                if std::mem::replace(&mut seen[s as usize], true) {
                    return Err(format!("ERR Slot {s} specified multiple times"));
                }
            }
        }
        let me = st.me as u32;
        for (s, &hit) in seen.iter().enumerate() {
            if hit {
                if del {
                    st.owner[s] = NO_OWNER;
                } else {
                    st.owner[s] = me;
                    // Now the owner: no longer importing it.
                    st.importing.remove(&(s as u16));
                }
            }
        }
        Ok(true)
    })
}

fn addslots_or_del(ctx: &mut Ctx, args: &[&[u8]], del: bool) {
    if !enabled(ctx) {
        return;
    }
    let mut ranges = Vec::new();
    for a in &args[2..] {
        match slot_arg(a) {
            Ok(s) => ranges.push((s, s)),
            Err(e) => return ctx.error(&e),
        }
    }
    assign(ctx, ranges, del);
}

fn addslots(ctx: &mut Ctx, args: &[&[u8]]) {
    addslots_or_del(ctx, args, false)
}

fn delslots(ctx: &mut Ctx, args: &[&[u8]]) {
    addslots_or_del(ctx, args, true)
}

fn slotsrange(ctx: &mut Ctx, args: &[&[u8]], del: bool) {
    if !enabled(ctx) {
        return;
    }
    if args.len() % 2 == 1 {
        let sub = String::from_utf8_lossy(args[1]).to_ascii_lowercase();
        return ctx.error(&crate::base::errors::wrong_arity(&format!("cluster|{sub}")));
    }
    let mut ranges = Vec::new();
    for p in args[2..].chunks(2) {
        let (a, b) = match (slot_arg(p[0]), slot_arg(p[1])) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => return ctx.error(&e),
        };
        if a > b {
            return ctx.error(&format!(
                "ERR start slot number {a} is greater than end slot number {b}"
            ));
        }
        ranges.push((a, b));
    }
    assign(ctx, ranges, del);
}

fn addslotsrange(ctx: &mut Ctx, args: &[&[u8]]) {
    slotsrange(ctx, args, false)
}

fn delslotsrange(ctx: &mut Ctx, args: &[&[u8]]) {
    slotsrange(ctx, args, true)
}

fn flushslots(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    if db_keys(ctx) != 0 {
        return ctx.error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
    }
    change_ok(ctx, |st| {
        let me = st.me as u32;
        for o in st.owner.iter_mut().filter(|o| **o == me) {
            *o = NO_OWNER;
        }
        Ok(true)
    })
}

/// CLUSTER MEET ip port [cport]: starts a handshake the cluster bus
/// carries on (a MEET, then PING/PONG until the node's id is known).
fn meet(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    if args.len() > 5 {
        return ctx.error(&crate::base::errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "CLUSTER",
        ));
    }
    let text = |a: &[u8]| String::from_utf8_lossy(a).into_owned();
    let Some(port) = parse_i64(args[3]) else {
        return ctx.error(&format!(
            "ERR Invalid TCP base port specified: {}",
            text(args[3])
        ));
    };
    let cport = match args.get(4) {
        Some(a) => match parse_i64(a) {
            Some(c) => c,
            None => return ctx.error(&format!("ERR Invalid TCP bus port specified: {}", text(a))),
        },
        None => port.wrapping_add(10000),
    };
    let ip = text(args[2]);
    let now = ctx.now_ms;
    let r = ctx
        .srv
        .cluster
        .update_unsaved(|st| st.start_handshake(&ip, port, cport, now));
    if r {
        ctx.ok()
    } else {
        ctx.error(&format!(
            "ERR Invalid node address specified: {ip}:{}",
            text(args[3])
        ))
    }
}

/// CLUSTER REPLICATE id: this node (an empty master, or a replica)
/// becomes a replica of master `id` and replicates from it.
fn replicate(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let id = String::from_utf8_lossy(args[2]).into_owned();
    let keys = db_keys(ctx);
    let r = ctx.srv.cluster.change(|st| {
        use crate::kernel::cluster::flags;
        let Some(i) = st.find(&id) else {
            return Err(format!("ERR Unknown node {id}"));
        };
        if i == st.me {
            return Err("ERR Can't replicate myself".into());
        }
        if st.nodes[i].flags & flags::SLAVE != 0 {
            return Err("ERR I can only replicate a master, not a replica.".into());
        }
        let me = st.me;
        if st.nodes[me].is_master() && (st.owner.contains(&(me as u32)) || keys != 0) {
            return Err(
                "ERR To set a master the node must be empty and without assigned slots.".into(),
            );
        }
        let target = (st.nodes[i].ip.clone(), st.nodes[i].port);
        let n = &mut st.nodes[me];
        n.flags = (n.flags & !flags::MASTER) | flags::SLAVE;
        n.master = Some(id.clone());
        st.migrating.clear();
        st.importing.clear();
        Ok((target, true))
    });
    match r {
        Ok(target) => {
            crate::services::replication::replica::replicaof(ctx.srv, Some(target));
            ctx.ok()
        }
        Err(e) if e.starts_with("ERR ") => ctx.error(&e),
        Err(e) => ctx.error(&format!("ERR error saving the cluster node config: {e}")),
    }
}

/// CLUSTER FAILOVER [FORCE|TAKEOVER], on a replica: the checks and the
/// start are `kernel::cluster::failover::failover_command`; the bus does
/// the rest (MFSTART, the election). TAKEOVER promotes at once.
fn failover(ctx: &mut Ctx, args: &[&[u8]]) {
    use crate::kernel::cluster::failover::{failover_command, Mode};
    if !enabled(ctx) {
        return;
    }
    let mode = match args {
        [_, _] => Mode::Default,
        [_, _, a] if a.eq_ignore_ascii_case(b"force") => Mode::Force,
        [_, _, a] if a.eq_ignore_ascii_case(b"takeover") => Mode::Takeover,
        [_, _, _] => return ctx.syntax_error(),
        _ => {
            return ctx.error(&crate::base::errors::unknown_subcommand_or_arity(
                &String::from_utf8_lossy(args[1]),
                "CLUSTER",
            ))
        }
    };
    let now = ctx.now_ms;
    let r = ctx
        .srv
        .cluster
        .change(|st| failover_command(st, mode, now).map(|s| (s, mode == Mode::Takeover)));
    match r {
        Ok(started) => {
            for line in &started.log {
                crate::base::log::log(crate::base::log::LogLevel::Warning, line);
            }
            if started.promoted {
                crate::services::replication::replica::unset_master(ctx.srv);
            }
            ctx.srv.cluster.wake_bus();
            ctx.ok()
        }
        Err(e) if e.starts_with("ERR ") => ctx.error(&e),
        Err(e) => ctx.error(&format!("ERR error saving the cluster node config: {e}")),
    }
}

fn myid(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let id = ctx.srv.cluster.read().myself().id.clone();
    ctx.out.bulk(id.as_bytes());
}

fn nodes(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    refresh(ctx);
    let use_pport = crate::services::cluster::use_pport(ctx.settings, ctx.client.is_tls);
    let text = crate::kernel::cluster::conf::nodes_text(&ctx.srv.cluster.read(), use_pport);
    ctx.out.verbatim(b"txt", text.as_bytes());
}

fn info(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let full = ctx.settings.cluster.require_full_coverage;
    let st = ctx.srv.cluster.read();
    use crate::kernel::cluster::flags;
    let mut text = format!(
        "cluster_state:{}\r\ncluster_slots_assigned:{}\r\ncluster_slots_ok:{}\r\n\
         cluster_slots_pfail:{}\r\ncluster_slots_fail:{}\r\ncluster_known_nodes:{}\r\n\
         cluster_size:{}\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{}\r\n",
        if st.is_ok(full) { "ok" } else { "fail" },
        st.slots_assigned(),
        st.slots_assigned() - st.slots_flagged(flags::PFAIL | flags::FAIL),
        st.slots_flagged(flags::PFAIL),
        st.slots_flagged(flags::FAIL),
        st.nodes.len(),
        st.size(),
        st.current_epoch,
        st.my_epoch(),
    );
    // Message counters of the bus, by type (those not zero), then totals.
    for (dir, word) in [(0, "sent"), (1, "received")] {
        let mut total = 0;
        for (t, name) in crate::kernel::cluster::MESSAGE_NAMES.iter().enumerate() {
            let n = ctx.srv.cluster.stats[dir][t].load(std::sync::atomic::Ordering::Relaxed);
            if n != 0 {
                text.push_str(&format!("cluster_stats_messages_{name}_{word}:{n}\r\n"));
            }
            total += n;
        }
        text.push_str(&format!("cluster_stats_messages_{word}:{total}\r\n"));
    }
    text.push_str(&format!(
        "total_cluster_links_buffer_limit_exceeded:{}\r\n",
        ctx.srv
            .cluster
            .links_buffer_limit_exceeded
            .load(std::sync::atomic::Ordering::Relaxed)
    ));
    drop(st);
    ctx.out.verbatim(b"txt", text.as_bytes());
}

/// One node of CLUSTER SLOTS: endpoint, port, id, and a map of the other
/// known endpoints.
fn slots_node(ctx: &mut Ctx, n: &crate::kernel::cluster::Node) {
    // CLUSTER SLOTS: "?" for a hostname not set, null for unknown-endpoint.
    let ep: Option<&str> = match ctx.settings.cluster.preferred_endpoint_type {
        0 => Some(&n.ip),
        1 if !n.hostname.is_empty() => Some(&n.hostname),
        1 => Some("?"),
        _ => None,
    };
    let mut extra: Vec<(&str, &str)> = Vec::new();
    if ctx.settings.cluster.preferred_endpoint_type != 0 {
        extra.push(("ip", &n.ip));
    }
    if ctx.settings.cluster.preferred_endpoint_type != 1 && !n.hostname.is_empty() {
        extra.push(("hostname", &n.hostname));
    }
    ctx.out.array_len(4);
    match ep {
        Some(e) => ctx.out.bulk(e.as_bytes()),
        None => ctx.out.null(),
    }
    let use_pport = crate::services::cluster::use_pport(ctx.settings, ctx.client.is_tls);
    ctx.out
        .int(crate::kernel::cluster::conf::client_port_of(n, use_pport) as i64);
    ctx.out.bulk(n.id.as_bytes());
    ctx.out.map_len(extra.len());
    for (k, v) in extra {
        ctx.out.bulk(k.as_bytes());
        ctx.out.bulk(v.as_bytes());
    }
}

/// Replicas of node `i` not flagged failed.
fn replicas_of(st: &State, i: usize) -> Vec<usize> {
    use crate::kernel::cluster::flags;
    let id = &st.nodes[i].id;
    (0..st.nodes.len())
        .filter(|&r| {
            let n = &st.nodes[r];
            n.flags & flags::SLAVE != 0 && n.master.as_deref() == Some(id)
        })
        .collect()
}

fn slots(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    refresh(ctx);
    let st = ctx.srv.cluster.read().clone();
    use crate::kernel::cluster::flags;
    let mut rows = Vec::new();
    for i in 0..st.nodes.len() {
        if !st.nodes[i].is_master() {
            continue;
        }
        for r in st.ranges_of(i) {
            rows.push((i, r));
        }
    }
    ctx.out.array_len(rows.len());
    for (i, (a, b)) in rows {
        let reps: Vec<usize> = replicas_of(&st, i)
            .into_iter()
            .filter(|&r| st.nodes[r].flags & flags::FAIL == 0)
            .collect();
        ctx.out.array_len(3 + reps.len());
        ctx.out.int(a as i64);
        ctx.out.int(b as i64);
        slots_node(ctx, &st.nodes[i]);
        for r in reps {
            slots_node(ctx, &st.nodes[r]);
        }
    }
}

/// One node of CLUSTER SHARDS.
fn shard_node(ctx: &mut Ctx, n: &crate::kernel::cluster::Node) {
    use crate::kernel::cluster::flags;
    let ep = crate::services::cluster::preferred_endpoint(ctx.settings, n).to_string();
    let with_host = !n.hostname.is_empty();
    // With `tls-cluster yes` the announced port is the TLS one and `pport`
    // the plaintext one (each shown when known), whoever asks.
    let (port, tls_port) = if ctx.settings.tls.cluster {
        (n.pport, n.port)
    } else {
        (n.port, 0)
    };
    ctx.out
        .map_len(6 + (port != 0) as usize + (tls_port != 0) as usize + with_host as usize);
    ctx.out.bulk(b"id");
    ctx.out.bulk(n.id.as_bytes());
    if port != 0 {
        ctx.out.bulk(b"port");
        ctx.out.int(port as i64);
    }
    if tls_port != 0 {
        ctx.out.bulk(b"tls-port");
        ctx.out.int(tls_port as i64);
    }
    ctx.out.bulk(b"ip");
    ctx.out.bulk(n.ip.as_bytes());
    ctx.out.bulk(b"endpoint");
    ctx.out.bulk(ep.as_bytes());
    if with_host {
        ctx.out.bulk(b"hostname");
        ctx.out.bulk(n.hostname.as_bytes());
    }
    ctx.out.bulk(b"role");
    ctx.out.bulk(if n.is_master() {
        &b"master"[..]
    } else {
        b"replica"
    });
    ctx.out.bulk(b"replication-offset");
    ctx.out.int(0);
    ctx.out.bulk(b"health");
    ctx.out.bulk(if n.flags & flags::FAIL != 0 {
        &b"fail"[..]
    } else if n.is_master() {
        &b"online"[..]
    } else {
        &b"loading"[..]
    });
}

fn shards(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    refresh(ctx);
    let st = ctx.srv.cluster.read().clone();
    let masters: Vec<usize> = (0..st.nodes.len())
        .filter(|&i| st.nodes[i].is_master())
        .collect();
    ctx.out.array_len(masters.len());
    for i in masters {
        ctx.out.map_len(2);
        ctx.out.bulk(b"slots");
        let ranges = st.ranges_of(i);
        ctx.out.array_len(ranges.len() * 2);
        for (a, b) in ranges {
            ctx.out.int(a as i64);
            ctx.out.int(b as i64);
        }
        ctx.out.bulk(b"nodes");
        let reps = replicas_of(&st, i);
        ctx.out.array_len(1 + reps.len());
        shard_node(ctx, &st.nodes[i]);
        for r in reps {
            shard_node(ctx, &st.nodes[r]);
        }
    }
}

fn keyslot(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    ctx.out.int(store::slot::key_slot(args[2]) as i64);
}

fn countkeysinslot(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let Some(slot) = ctx.parse_i64(args[2]) else {
        return;
    };
    if !(0..SLOTS as i64).contains(&slot) {
        return ctx.error("ERR Invalid slot");
    }
    let n = ctx.srv.keyspace.count_in_slot(0, slot as u16);
    ctx.out.int(n as i64);
}

fn getkeysinslot(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let Some(slot) = ctx.parse_i64(args[2]) else {
        return;
    };
    let Some(max) = ctx.parse_i64(args[3]) else {
        return;
    };
    if !(0..SLOTS as i64).contains(&slot) || max < 0 {
        return ctx.error("ERR Invalid slot or number of keys");
    }
    let keys = ctx
        .srv
        .keyspace
        .keys_in_slot(0, slot as u16, ctx.now_ms, max as usize);
    ctx.bulk_array(&keys);
}

fn bumpepoch(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let r = ctx.srv.cluster.change(|st| {
        let bumped = st.bump_epoch();
        Ok(((bumped, st.myself().config_epoch), bumped))
    });
    match r {
        Ok((true, e)) => ctx.out.simple(format!("BUMPED {e}")),
        Ok((false, e)) => ctx.out.simple(format!("STILL {e}")),
        Err(e) => ctx.error(&format!("ERR error saving the cluster node config: {e}")),
    }
}

fn set_config_epoch(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let Some(epoch) = ctx.parse_i64(args[2]) else {
        return;
    };
    if epoch < 0 {
        return ctx.error(&format!("ERR Invalid config epoch specified: {epoch}"));
    }
    change_ok(ctx, |st| {
        if st.nodes.len() > 1 {
            return Err("ERR The user can assign a config epoch only when the node does not know any other node.".into());
        }
        if st.myself().config_epoch != 0 {
            return Err("ERR Node config epoch is already non-zero".into());
        }
        let me = st.me;
        st.nodes[me].config_epoch = epoch as u64;
        st.current_epoch = st.current_epoch.max(epoch as u64);
        Ok(true)
    })
}

fn saveconfig(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    match ctx.srv.cluster.save() {
        Ok(()) => ctx.ok(),
        Err(e) => ctx.error(&format!("ERR error saving the cluster node config: {e}")),
    }
}

fn reset(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    if args.len() > 3 {
        return ctx.error(&crate::base::errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "CLUSTER",
        ));
    }
    let hard = match args.get(2) {
        None => false,
        Some(a) if args.len() == 3 && a.eq_ignore_ascii_case(b"hard") => true,
        Some(a) if args.len() == 3 && a.eq_ignore_ascii_case(b"soft") => false,
        Some(_) => return ctx.syntax_error(),
    };
    let is_master = ctx.srv.cluster.read().myself().is_master();
    if is_master && db_keys(ctx) != 0 {
        return ctx.error("ERR CLUSTER RESET can't be called with master nodes containing keys");
    }
    // A manual failover in progress ends (Redis's resetManualFailover):
    // on the master side, its write pause is lifted.
    let srv = ctx.srv;
    let end_failover = |st: &mut crate::kernel::cluster::State| {
        st.mf = crate::kernel::cluster::failover::ManualFailover {
            broadcast_pong: st.mf.broadcast_pong,
            ..Default::default()
        };
        use crate::kernel::server::{Pause, PausePurpose};
        srv.set_pause_for(PausePurpose::ClusterFailover, Pause::default());
        srv.cluster
            .mf_pausing
            .store(false, std::sync::atomic::Ordering::Relaxed);
    };
    change_ok(ctx, |st| {
        use crate::kernel::cluster::flags;
        end_failover(st);
        st.migrating.clear();
        st.importing.clear();
        for o in st.owner.iter_mut() {
            *o = NO_OWNER;
        }
        let me = st.nodes[st.me].clone();
        st.nodes = vec![me];
        st.me = 0;
        let n = &mut st.nodes[0];
        n.flags = (n.flags & !flags::SLAVE) | flags::MASTER;
        n.master = None;
        if hard {
            st.current_epoch = 0;
            st.last_vote_epoch = 0;
            st.nodes[0].config_epoch = 0;
            st.nodes[0].id = crate::kernel::cluster::new_node_id();
        }
        Ok(true)
    })
}

fn count_failure_reports(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let id = String::from_utf8_lossy(args[2]).into_owned();
    if ctx.srv.cluster.read().find(&id).is_none() {
        return ctx.error(&format!("ERR Unknown node {id}"));
    }
    // Reports older than twice the node timeout no longer count.
    let validity = ctx.settings.cluster.node_timeout_ms.saturating_mul(2);
    let now = ctx.now_ms;
    let st = ctx.srv.cluster.read();
    let n = st
        .find(&id)
        .map(|i| {
            st.nodes[i]
                .fail_reports
                .iter()
                .filter(|(_, t)| now.saturating_sub(*t) <= validity)
                .count()
        })
        .unwrap_or(0);
    drop(st);
    ctx.out.int(n as i64);
}

fn links(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let links = ctx.srv.cluster.links();
    ctx.out.array_len(links.len());
    for l in links {
        ctx.out.map_len(6);
        ctx.out.bulk(b"direction");
        ctx.out.bulk(if l.outbound { &b"to"[..] } else { b"from" });
        ctx.out.bulk(b"node");
        ctx.out.bulk(l.node.as_bytes());
        ctx.out.bulk(b"create-time");
        ctx.out.int(l.ctime as i64);
        ctx.out.bulk(b"events");
        ctx.out.bulk(l.events.as_bytes());
        ctx.out.bulk(b"send-buffer-allocated");
        ctx.out.int(l.buf_alloc as i64);
        ctx.out.bulk(b"send-buffer-used");
        ctx.out.int(l.buf_used as i64);
    }
}

fn forget(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    let id = String::from_utf8_lossy(args[2]).into_owned();
    let now = ctx.now_ms;
    change_ok(ctx, |st| {
        let Some(i) = st.find(&id) else {
            return Err(format!("ERR Unknown node {id}"));
        };
        if i == st.me {
            return Err("ERR I tried hard but I can't forget myself...".into());
        }
        if st.myself().master.as_deref() == Some(id.as_str()) {
            return Err("ERR Can't forget my master!".into());
        }
        st.remove_node(i);
        // Not re-added from gossip for a minute (Redis's blacklist).
        st.blacklist.retain(|_, until| *until > now);
        st.blacklist.insert(id.clone(), now + 60_000);
        Ok(true)
    })
}

fn setslot(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    if !ctx.srv.cluster.read().myself().is_master() {
        return ctx.error("ERR Please use SETSLOT only with masters.");
    }
    let slot = match slot_arg(args[2]) {
        Ok(s) => s,
        Err(e) => return ctx.error(&e),
    };
    let action = args[3].to_ascii_lowercase();
    let id = args
        .get(4)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .unwrap_or_default();
    let keys = ctx.srv.keyspace.count_in_slot(0, slot);
    change_ok(ctx, |st| {
        let mine = st.owner[slot as usize] == st.me as u32;
        let target = |st: &State, unknown: &str| -> Result<usize, String> {
            let i = st.find(&id).ok_or_else(|| format!("ERR {unknown} {id}"))?;
            if !st.nodes[i].is_master() {
                return Err("ERR Target node is not a master".into());
            }
            Ok(i)
        };
        match (action.as_slice(), args.len()) {
            (b"migrating", 5) => {
                if !mine {
                    return Err(format!("ERR I'm not the owner of hash slot {slot}"));
                }
                let i = target(st, "I don't know about node")?;
                st.migrating.insert(slot, st.nodes[i].id.clone());
            }
            (b"importing", 5) => {
                if mine {
                    return Err(format!("ERR I'm already the owner of hash slot {slot}"));
                }
                let i = target(st, "I don't know about node")?;
                st.importing.insert(slot, st.nodes[i].id.clone());
            }
            (b"stable", 4) => {
                st.migrating.remove(&slot);
                st.importing.remove(&slot);
            }
            (b"node", 5) => {
                let i = target(st, "Unknown node")?;
                if mine && i != st.me && keys != 0 {
                    return Err(format!("ERR Can't assign hashslot {slot} to a different node while I still hold keys for this hash slot."));
                }
                if keys == 0 {
                    st.migrating.remove(&slot);
                }
                st.owner[slot as usize] = i as u32;
                if i == st.me && st.importing.remove(&slot).is_some() {
                    // The import is done: claim the slot with a new epoch.
                    st.bump_epoch();
                }
            }
            _ => {
                return Err(
                    "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP"
                        .into(),
                )
            }
        }
        Ok(true)
    })
}

/// CLUSTER REPLICAS / SLAVES node-id: the CLUSTER NODES lines of a
/// master's replicas.
fn replicas(ctx: &mut Ctx, args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    refresh(ctx);
    let id = String::from_utf8_lossy(args[2]).into_owned();
    let st = ctx.srv.cluster.read();
    let lines = match st.find(&id) {
        None => Err(format!("ERR Unknown node {id}")),
        Some(i) if !st.nodes[i].is_master() => {
            Err("ERR The specified node is not a master".to_string())
        }
        Some(i) => Ok(replicas_of(&st, i)
            .into_iter()
            .map(|r| crate::kernel::cluster::conf::node_line(&st, r))
            .collect::<Vec<String>>()),
    };
    drop(st);
    match lines {
        Ok(l) => ctx.bulk_array(&l),
        Err(e) => ctx.error(&e),
    }
}

/// CLUSTER HELP: Redis 7.0's text.
fn help(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    ctx.reply_help(HELP);
}

const HELP: &[&str] = &[
    "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "ADDSLOTS <slot> [<slot> ...]",
    "    Assign slots to current node.",
    "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Assign slots which are between <start-slot> and <end-slot> to current node.",
    "BUMPEPOCH",
    "    Advance the cluster config epoch.",
    "COUNT-FAILURE-REPORTS <node-id>",
    "    Return number of failure reports for <node-id>.",
    "COUNTKEYSINSLOT <slot>",
    "    Return the number of keys in <slot>.",
    "DELSLOTS <slot> [<slot> ...]",
    "    Delete slots information from current node.",
    "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
    "    Delete slots information which are between <start-slot> and <end-slot> from current node.",
    "FAILOVER [FORCE|TAKEOVER]",
    "    Promote current replica node to being a master.",
    "FORGET <node-id>",
    "    Remove a node from the cluster.",
    "GETKEYSINSLOT <slot> <count>",
    "    Return key names stored by current node in a slot.",
    "FLUSHSLOTS",
    "    Delete current node own slots information.",
    "INFO",
    "    Return information about the cluster.",
    "KEYSLOT <key>",
    "    Return the hash slot for <key>.",
    "MEET <ip> <port> [<bus-port>]",
    "    Connect nodes into a working cluster.",
    "MYID",
    "    Return the node id.",
    "NODES",
    "    Return cluster configuration seen by node. Output format:",
    "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
    "REPLICATE <node-id>",
    "    Configure current node as replica to <node-id>.",
    "RESET [HARD|SOFT]",
    "    Reset current node (default: soft).",
    "SET-CONFIG-EPOCH <epoch>",
    "    Set config epoch of current node.",
    "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
    "    Set slot state.",
    "REPLICAS <node-id>",
    "    Return <node-id> replicas.",
    "SAVECONFIG",
    "    Force saving cluster configuration on disk.",
    "SLOTS",
    "    Return information about slots range mappings. Each range is made of:",
    "    start, end, master and replicas IP addresses, ports and ids",
    "SHARDS",
    "    Return information about slot range mappings and the nodes associated with them.",
    "LINKS",
    "    Return information about all network links between this node and its peers.",
    "    Output format is an array where each array element is a map containing attributes of a link",
    "HELP",
    "    Prints this help.",
];

/// READONLY / READWRITE: whether this connection reads from a replica.
fn readonly(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    ctx.client.cluster_readonly = true;
    ctx.ok();
}

fn readwrite(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    ctx.client.cluster_readonly = false;
    ctx.ok();
}

/// ASKING: the next command may touch a slot this node is importing.
fn asking(ctx: &mut Ctx, _args: &[&[u8]]) {
    if !enabled(ctx) {
        return;
    }
    ctx.client.cluster_asking = true;
    ctx.ok();
}

const ADMIN: u32 = flag::ADMIN | flag::STALE | flag::NO_ASYNC_LOADING;
const INFO: u32 = flag::STALE;

macro_rules! sub {
    ($name:expr, $arity:expr, $flags:expr, $h:expr, $cx:expr, $sum:expr) => {
        CommandSpec {
            docs: Docs::new($cx, $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

const SUBS: &[CommandSpec] = &[
    sub!("addslots", -3, ADMIN, addslots, "O(N) where N is the total number of hash slot arguments", "Assign new hash slots to receiving node"),
    sub!("addslotsrange", -4, ADMIN, addslotsrange, "O(N) where N is the total number of the slots between the start slot and end slot arguments.", "Assign new hash slots to receiving node"),
    sub!("bumpepoch", 2, ADMIN, bumpepoch, "O(1)", "Advance the cluster config epoch"),
    sub!("count-failure-reports", 3, flag::ADMIN | flag::STALE, count_failure_reports, "O(N) where N is the number of failure reports", "Return the number of failure reports active for a given node"),
    sub!("countkeysinslot", 3, INFO, countkeysinslot, "O(1)", "Return the number of local keys in the specified hash slot"),
    sub!("delslots", -3, ADMIN, delslots, "O(N) where N is the total number of hash slot arguments", "Set hash slots as unbound in receiving node"),
    sub!("delslotsrange", -4, ADMIN, delslotsrange, "O(N) where N is the total number of the slots between the start slot and end slot arguments.", "Set hash slots as unbound in receiving node"),
    sub!("flushslots", 2, ADMIN, flushslots, "O(1)", "Delete a node's own slots information"),
    sub!("failover", -2, ADMIN, failover, "O(1)", "Forces a replica to perform a manual failover of its master."),
    sub!("forget", 3, ADMIN, forget, "O(1)", "Remove a node from the nodes table"),
    sub!("getkeysinslot", 4, INFO, getkeysinslot, "O(log(N)) where N is the number of requested keys", "Return local key names in the specified hash slot"),
    sub!("help", 2, flag::LOADING | flag::STALE, help, "O(1)", "Show helpful text about the different subcommands"),
    sub!("info", 2, INFO, info, "O(1)", "Provides info about Redis Cluster node state"),
    sub!("keyslot", 3, INFO, keyslot, "O(N) where N is the number of bytes in the key", "Returns the hash slot of the specified key"),
    sub!("links", 2, INFO, links, "O(N) where N is the total number of Cluster nodes", "Returns a list of all TCP links to and from peer nodes in cluster"),
    sub!("meet", -4, ADMIN, meet, "O(1)", "Force a node cluster to handshake with another node"),
    sub!("myid", 2, INFO, myid, "O(1)", "Return the node id"),
    sub!("nodes", 2, INFO, nodes, "O(N) where N is the total number of Cluster nodes", "Get Cluster config for the node"),
    sub!("replicate", 3, ADMIN, replicate, "O(1)", "Reconfigure a node as a replica of the specified master node"),
    sub!("replicas", 3, flag::ADMIN | flag::STALE, replicas, "O(1)", "List replica nodes of the specified master node"),
    sub!("reset", -2, flag::ADMIN | flag::NOSCRIPT | flag::STALE, reset, "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect.", "Reset a Redis Cluster node"),
    sub!("saveconfig", 2, ADMIN, saveconfig, "O(1)", "Forces the node to save cluster state on disk"),
    sub!("set-config-epoch", 3, ADMIN, set_config_epoch, "O(1)", "Set the configuration epoch in a new node"),
    sub!("setslot", -4, ADMIN, setslot, "O(1)", "Bind a hash slot to a specific node"),
    sub!("shards", 2, INFO, shards, "O(N) where N is the total number of cluster nodes", "Get array of cluster slots to node mappings"),
    sub!("slaves", 3, flag::ADMIN | flag::STALE, replicas, "O(1)", "List replica nodes of the specified master node"),
    sub!("slots", 2, INFO, slots, "O(N) where N is the total number of Cluster nodes", "Get array of Cluster slot to node mappings"),
];

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec {
        docs: Docs::new("Depends on subcommand.", "A container for cluster commands"),
        handler: None,
        subcommands: SUBS,
        ..CommandSpec::new("cluster", -2, 0, info)
    },
    CommandSpec {
        acl: &["connection", "fast"],
        docs: Docs::new(
            "O(1)",
            "Enables read queries for a connection to a cluster replica node",
        ),
        ..CommandSpec::new(
            "readonly",
            1,
            flag::FAST | flag::LOADING | flag::STALE,
            readonly,
        )
    },
    CommandSpec {
        acl: &["connection", "fast"],
        docs: Docs::new(
            "O(1)",
            "Disables read queries for a connection to a cluster replica node",
        ),
        ..CommandSpec::new(
            "readwrite",
            1,
            flag::FAST | flag::LOADING | flag::STALE,
            readwrite,
        )
    },
    CommandSpec {
        acl: &["connection", "fast"],
        docs: Docs::new("O(1)", "Sent by cluster clients after an -ASK redirect"),
        ..CommandSpec::new("asking", 1, flag::FAST, asking)
    },
];
