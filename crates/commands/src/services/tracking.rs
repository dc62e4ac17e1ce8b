//! Client-side caching (`CLIENT TRACKING`): remembering the keys tracking
//! clients read, and invalidating them when they change. The state lives in
//! `kernel::tracking`; this is the work, called from:
//!
//! * dispatch, once after every command ([`after_command`]): invalidates
//!   the keys the command changed (`Ctx::modified`), and keys that expired
//!   meanwhile; then remembers the keys a read-only command read;
//! * each worker at the end of its event-loop pass and the cron ([`end_of_loop`]):
//!   BCAST broadcasts, and the `tracking-table-max-keys` limit, as Redis
//!   does before it sleeps;
//! * FLUSHDB/FLUSHALL ([`flushed`]), eviction ([`evicted`]), expiry
//!   ([`expired`]), and connection reset/close ([`disable`]).
//!
//! Ordering, as Redis produces it: an invalidation for another client is
//! sent (through the hub, to that client's worker) while the writing command
//! finishes, before the writer's reply leaves its buffer; workers take their
//! inbox before reading sockets, so a client that reads a key after the
//! write was acknowledged gets the invalidation first. An invalidation for
//! the writing client itself comes right after its reply (after EXEC's
//! reply in a transaction). BCAST clients get one message per prefix with
//! the keys changed since the last pass, after the replies of that pass.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use resp::{Protocol, ReplyBuf};

use crate::base::errors;
use crate::kernel::client::{cflag, Client, ClientShared};
use crate::kernel::hub::WorkerMsg;
use crate::kernel::server::Server;
use crate::kernel::spec::{flag, CommandSpec};
use crate::kernel::tracking::{encode_invalidation, encode_redir_broken, Invalidated};

/// Sends an invalidation meant for tracking client `target`, following its
/// redirection. A message for the running client `me` goes into `out`
/// when given; everything else through the hub.
fn send(
    srv: &Server,
    target: &ClientShared,
    what: Invalidated<'_>,
    me: u64,
    out: Option<&mut ReplyBuf>,
) {
    let redir = target.tracking_redir.load(Relaxed);
    let receiver: Arc<ClientShared>;
    let recv: &ClientShared = if redir != 0 {
        match srv.clients.get(redir) {
            Some(r) if !r.killed.load(Relaxed) => {
                receiver = r;
                &receiver
            }
            _ => {
                target.set_flag(cflag::TRACKING_BROKEN_REDIR, true);
                if target.resp.load(Relaxed) == 3 {
                    deliver(srv, target, encode_redir_broken(redir), me, out);
                }
                return;
            }
        }
    } else {
        target
    };
    let proto = if recv.resp.load(Relaxed) == 3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    };
    let subscribed = recv.has_flag(cflag::PUBSUB);
    if let Some(bytes) = encode_invalidation(proto, subscribed, redir != 0, what) {
        deliver(srv, recv, bytes, me, out);
    }
}

fn deliver(srv: &Server, to: &ClientShared, bytes: Vec<u8>, me: u64, out: Option<&mut ReplyBuf>) {
    match out {
        Some(out) if to.id == me => out.raw(&bytes),
        _ => {
            srv.hub.send(
                to.worker,
                WorkerMsg::Deliver {
                    client_id: to.id,
                    bytes: bytes.into(),
                },
            );
        }
    }
}

/// Is `c` a client that gets per-key (not BCAST) invalidations?
fn tracks_keys(c: &ClientShared) -> bool {
    c.has_flag(cflag::TRACKING) && !c.has_flag(cflag::TRACKING_BCAST)
}

/// `key` changed: notes it for BCAST clients (when `bcast`) and tells every
/// client that read it, except the running client `me` (0 = none) when
/// its mode is NOLOOP. The running client's own invalidation is deferred
/// into its `pending` list when `defer` is given, else written to `out`.
fn invalidate_key(
    srv: &Server,
    key: &[u8],
    bcast: bool,
    me: u64,
    defer: Option<&mut Vec<Option<Vec<u8>>>>,
    mut out: Option<&mut ReplyBuf>,
) {
    let tr = &srv.tracking;
    if bcast {
        tr.note_broadcast(key, me);
    }
    let Some(ids) = tr.take_key(key) else {
        return;
    };
    let mut defer = defer;
    for id in ids {
        let Some(t) = srv.clients.get(id) else {
            continue;
        };
        if !tracks_keys(&t) {
            continue;
        }
        if id == me {
            if t.has_flag(cflag::TRACKING_NOLOOP) {
                continue;
            }
            if let Some(d) = defer.as_deref_mut() {
                d.push(Some(key.to_vec()));
                continue;
            }
        }
        send(srv, &t, Invalidated::Keys(&[key]), me, out.as_deref_mut());
    }
}

/// Invalidates keys removed by expiry (lazily or in the active cycle) since
/// the last call; `me` is the running client, if any, for NOLOOP and the
/// order of its own messages.
pub fn expired(srv: &Server, me: Option<&mut Client>) {
    if !srv.keyspace.expired_pending() {
        return;
    }
    let keys = crate::services::expiry::drain(srv);
    let (id, mut defer) = match me {
        Some(c) => (c.id, Some(&mut c.tracking.pending)),
        None => (0, None),
    };
    for (_, key) in keys {
        invalidate_key(srv, &key, true, id, defer.as_deref_mut(), None);
    }
}

/// Dispatch's step after every command (module docs).
pub fn after_command(
    srv: &Server,
    client: &mut Client,
    spec: &CommandSpec,
    args: &[&[u8]],
    out: &mut ReplyBuf,
) {
    let tr = &srv.tracking;
    if tr.any() {
        // FLUSH*/SWAPDB report watched keys as modified; their tracking
        // effect is the flush's null invalidation (SWAPDB has none).
        if spec.flags & flag::WHOLE_KEYSPACE == 0 && !client.modified.is_empty() {
            let keys = std::mem::take(&mut client.modified);
            let me = client.id;
            for (_, k) in &keys {
                invalidate_key(srv, k, true, me, Some(&mut client.tracking.pending), None);
            }
            client.modified = keys;
        }
        expired(srv, Some(client));
        remember_reads(srv, client, spec, args);
    }
    let t = &mut client.tracking;
    if t.caching
        && !client.in_exec
        && !client.tx.in_multi()
        && spec.flags & flag::KEEPS_CACHING == 0
    {
        t.caching = false;
    }
    if !client.in_exec && !client.tracking.pending.is_empty() {
        flush_pending(srv, client, out);
    }
}

/// Remembers the keys a read-only command read, for a client tracking in
/// the default mode (OPTIN: only after CACHING yes; OPTOUT: unless CACHING no).
fn remember_reads(srv: &Server, client: &Client, spec: &CommandSpec, args: &[&[u8]]) {
    let t = &client.tracking;
    if !t.on || t.bcast || spec.flags & flag::READONLY == 0 || spec.flags & flag::PUBSUB != 0 {
        return;
    }
    if (t.optin && !t.caching) || (t.optout && t.caching) {
        return;
    }
    for i in spec.key_indexes(args).unwrap_or_default() {
        if let Some(k) = args.get(i) {
            srv.tracking.remember(k, client.id);
        }
    }
}

/// Sends the running client's own invalidations (after its reply).
fn flush_pending(srv: &Server, client: &mut Client, out: &mut ReplyBuf) {
    let pending = std::mem::take(&mut client.tracking.pending);
    if !client.shared.has_flag(cflag::TRACKING) {
        return;
    }
    for p in pending {
        match &p {
            Some(k) => send(
                srv,
                &client.shared,
                Invalidated::Keys(&[k.as_slice()]),
                client.id,
                Some(out),
            ),
            None => send(srv, &client.shared, Invalidated::All, client.id, Some(out)),
        }
    }
}

/// FLUSHDB/FLUSHALL: every tracking client gets a null invalidation (the
/// running one after its reply), and the table is emptied.
pub fn flushed(srv: &Server, client: &mut Client) {
    if srv.tracking.any() {
        for c in srv.clients.all() {
            if !c.has_flag(cflag::TRACKING) {
                continue;
            }
            if c.id == client.id {
                client.tracking.pending.push(None);
            } else {
                send(srv, &c, Invalidated::All, 0, None);
            }
        }
    }
    srv.tracking.clear_table();
}

/// An evicted key (before the running command `me`, whose own
/// invalidation goes straight into `out`, ahead of its reply).
pub fn evicted(srv: &Server, key: &[u8], me: u64, out: &mut ReplyBuf) {
    if srv.tracking.any() {
        invalidate_key(srv, key, true, me, None, Some(out));
    }
}

/// End of an event-loop pass (each worker) and of a cron tick: BCAST
/// broadcasts of the keys changed since the last pass, and the
/// `tracking-table-max-keys` limit (`max_keys` 0 = none).
pub fn end_of_loop(srv: &Server, max_keys: u64) {
    let tr = &srv.tracking;
    if !tr.any() {
        return;
    }
    for b in tr.take_broadcasts() {
        for id in b.clients {
            let Some(c) = srv.clients.get(id) else {
                continue;
            };
            if !c.has_flag(cflag::TRACKING_BCAST) {
                continue;
            }
            let noloop = c.has_flag(cflag::TRACKING_NOLOOP);
            let keys: Vec<&[u8]> = b
                .keys
                .iter()
                .filter(|(_, w)| !(noloop && *w == id))
                .map(|(k, _)| k.as_slice())
                .collect();
            if !keys.is_empty() {
                send(srv, &c, Invalidated::Keys(&keys), 0, None);
            }
        }
    }
    for (key, ids) in tr.take_over_limit(max_keys as usize) {
        for id in ids {
            if let Some(t) = srv.clients.get(id) {
                if tracks_keys(&t) {
                    send(srv, &t, Invalidated::Keys(&[key.as_slice()]), 0, None);
                }
            }
        }
    }
}

/// Options of `CLIENT TRACKING on`.
#[derive(Default, Debug)]
pub struct Options {
    pub redirect: u64,
    pub bcast: bool,
    pub optin: bool,
    pub optout: bool,
    pub noloop: bool,
    pub prefixes: Vec<Vec<u8>>,
}

/// `CLIENT TRACKING on ...`: checks the options against each other and the
/// client's current mode (Redis's checks, in its order), then enables.
pub fn enable(srv: &Server, c: &mut Client, o: Options) -> Result<(), String> {
    if !o.bcast && !o.prefixes.is_empty() {
        return Err(errors::ERR_TRACKING_PREFIX_NEEDS_BCAST.into());
    }
    let t = &c.tracking;
    if t.on && t.bcast != o.bcast {
        return Err(errors::ERR_TRACKING_SWITCH_BCAST.into());
    }
    if o.bcast && (o.optin || o.optout) {
        return Err(errors::ERR_TRACKING_OPT_BCAST.into());
    }
    if o.optin && o.optout {
        return Err(errors::ERR_TRACKING_OPTIN_AND_OPTOUT.into());
    }
    if (o.optin && t.optout) || (o.optout && t.optin) {
        return Err(errors::ERR_TRACKING_SWITCH_OPT.into());
    }
    if o.bcast {
        check_prefixes(&t.prefixes, &o.prefixes)?;
    }
    let t = &mut c.tracking;
    if !t.on {
        srv.tracking.client_on();
        // Expired keys must be invalidated from now on (the cron turns the
        // log off again when nobody needs it).
        srv.keyspace.set_track_expired(true);
    }
    t.on = true;
    t.redirect = o.redirect;
    t.bcast = o.bcast;
    t.optin = o.optin;
    t.optout = o.optout;
    t.noloop = o.noloop;
    if o.bcast {
        let mut add = o.prefixes;
        if add.is_empty() {
            add.push(Vec::new());
        }
        for p in add {
            if t.prefixes.insert(p.clone()) {
                srv.tracking.add_prefix(&p, c.id);
            }
        }
    }
    let sh = &c.shared;
    sh.tracking_redir.store(o.redirect, Relaxed);
    sh.set_flag(cflag::TRACKING_BROKEN_REDIR, false);
    sh.set_flag(cflag::TRACKING_BCAST, o.bcast);
    sh.set_flag(cflag::TRACKING_NOLOOP, o.noloop);
    sh.set_flag(cflag::TRACKING, true);
    Ok(())
}

/// Redis's rule: no two prefixes of one client may be a prefix of each
/// other (checked against the client's prefixes, then among the new ones).
fn check_prefixes(
    existing: &std::collections::BTreeSet<Vec<u8>>,
    new: &[Vec<u8>],
) -> Result<(), String> {
    let overlaps = |a: &[u8], b: &[u8]| a.starts_with(b) || b.starts_with(a);
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for (i, p) in new.iter().enumerate() {
        if let Some(e) = existing.iter().find(|e| overlaps(p, e)) {
            return Err(errors::tracking_prefix_overlaps_existing(&s(p), &s(e)));
        }
        if let Some(o) = new
            .iter()
            .enumerate()
            .find(|(j, o)| *j != i && overlaps(p, o))
        {
            return Err(errors::tracking_prefix_overlaps_provided(&s(p), &s(o.1)));
        }
    }
    Ok(())
}

/// `CLIENT TRACKING off`, RESET and disconnect: leaves tracking (the keys
/// the client read stay in the table until they change, as in Redis).
pub fn disable(srv: &Server, c: &mut Client) {
    let t = std::mem::take(&mut c.tracking);
    if !t.on {
        return;
    }
    for p in &t.prefixes {
        srv.tracking.remove_prefix(p, c.id);
    }
    srv.tracking.client_off();
    let sh = &c.shared;
    sh.tracking_redir.store(0, Relaxed);
    for f in [
        cflag::TRACKING,
        cflag::TRACKING_BCAST,
        cflag::TRACKING_NOLOOP,
        cflag::TRACKING_BROKEN_REDIR,
    ] {
        sh.set_flag(f, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_overlaps() {
        let existing: std::collections::BTreeSet<Vec<u8>> = [b"ab".to_vec()].into();
        assert!(check_prefixes(&existing, &[b"cd".to_vec()]).is_ok());
        let e = check_prefixes(&existing, &[b"abc".to_vec()]).unwrap_err();
        assert!(e.contains("'abc' overlaps with an existing prefix 'ab'"));
        let e = check_prefixes(&Default::default(), &[b"ab".to_vec(), b"a".to_vec()]).unwrap_err();
        assert!(e.contains("'ab' overlaps with another provided prefix 'a'"));
        let e = check_prefixes(&Default::default(), &[b"d".to_vec(), b"d".to_vec()]).unwrap_err();
        assert!(e.contains("'d' overlaps with another provided prefix 'd'"));
    }
}
