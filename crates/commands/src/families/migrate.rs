//! MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE]
//! [AUTH password] [AUTH2 username password] [KEYS key...], as Redis 7.0:
//! the keys' DUMP payloads go to the target as RESTORE (RESTORE-ASKING in
//! cluster mode) with their remaining TTL and REPLACE when asked, pipelined
//! after AUTH and (when the target's database is not known to be the one
//! wanted) SELECT, over a cached connection (`services::migrate`). Each key
//! the target accepted is deleted here unless COPY, and the deletions are
//! journaled as one `DEL` of those keys (Redis rewrites MIGRATE as DEL).
//!
//! # Waiting on the network
//! The command runs on its worker thread and waits for the target's
//! replies there (blocking socket calls, bounded by `timeout` per step, as
//! Redis's synchronous MIGRATE). It holds the partition locks of its keys
//! from the lookup to the deletions, so what was sent is what is deleted
//! (no write can slip in between, as none can in Redis while it blocks).
//! Meanwhile the other workers keep serving every other partition, and
//! this worker's other clients wait, as all of Redis's clients do. One
//! exception: with the journal on (AOF or replicas), every write holds the
//! journal's order lock for its run (`kernel::journal`), so a MIGRATE's
//! round trip also holds back other writers (and the readers queued behind
//! them) until it ends, which is what Redis does to every client. Releasing
//! the locks during the round trip would need a check that nothing changed
//! the keys before deleting them, and a locked retry when something did.
//!
//! # Keys moved between a command's slot check and its run
//! Redis checks a command's slot and runs it in one step. Here a command
//! let through on a MIGRATING slot because its keys were present could
//! run after a MIGRATE on another worker moved them, and write a key the
//! target already has. Such a command holds a `services::cluster::Pass`
//! from its check to its end: with the journal off, MIGRATE (holding its
//! partitions) first waits, up to its timeout, for other threads' passes
//! to end; with the journal on, the command checks its slot again once it
//! holds the journal's order lock (which MIGRATE holds for its run).
//!
//! Invariants: a key is deleted only after the target replied `+OK` to its
//! RESTORE; an error from the target (AUTH, SELECT or a RESTORE) makes the
//! next MIGRATE on that connection select its database again.

use std::time::Duration;

use store::Key;

use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::journal::encode_command;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};
use crate::services::migrate::{self, IoFail, Target};

/// What MIGRATE's options asked for.
struct Options<'a> {
    copy: bool,
    replace: bool,
    /// AUTH password, or AUTH2 username password.
    auth: Option<(Option<&'a [u8]>, &'a [u8])>,
    /// The keys' argument range.
    first_key: usize,
    num_keys: usize,
}

const KEYS_NEED_EMPTY: &str =
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string";

/// Parses the options after the timeout, in Redis's order of checks.
fn options<'a>(args: &[&'a [u8]]) -> Result<Options<'a>, &'static str> {
    let mut o = Options {
        copy: false,
        replace: false,
        auth: None,
        first_key: 3,
        num_keys: 1,
    };
    let mut j = 6;
    while j < args.len() {
        let more = args.len() - 1 - j;
        let a = args[j];
        if eq_ic(a, "copy") {
            o.copy = true;
        } else if eq_ic(a, "replace") {
            o.replace = true;
        } else if eq_ic(a, "auth") {
            if more < 1 {
                return Err(crate::base::errors::ERR_SYNTAX);
            }
            o.auth = Some((None, args[j + 1]));
            j += 1;
        } else if eq_ic(a, "auth2") {
            if more < 2 {
                return Err(crate::base::errors::ERR_SYNTAX);
            }
            o.auth = Some((Some(args[j + 1]), args[j + 2]));
            j += 2;
        } else if eq_ic(a, "keys") {
            if !args[3].is_empty() {
                return Err(KEYS_NEED_EMPTY);
            }
            o.first_key = j + 1;
            o.num_keys = args.len() - j - 1;
            break;
        } else {
            return Err(crate::base::errors::ERR_SYNTAX);
        }
        j += 1;
    }
    Ok(o)
}

/// Redis's migrateGetKeys: the key argument, or with KEYS every argument
/// after KEYS (no key at all when the key argument is not empty then);
/// AUTH's and AUTH2's arguments are skipped, whatever they say.
fn migrate_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    let mut i = 6;
    while i < args.len() {
        if eq_ic(args[i], "keys") {
            if !args[3].is_empty() {
                return None;
            }
            return Some((i + 1..args.len()).collect());
        } else if eq_ic(args[i], "auth") {
            i += 1;
        } else if eq_ic(args[i], "auth2") {
            i += 2;
        }
        i += 1;
    }
    if args.len() > 3 {
        Some(vec![3])
    } else {
        None
    }
}

/// MONITOR and SLOWLOG do not show AUTH's password nor AUTH2's username
/// and password.
fn redact(args: &[&[u8]]) -> Vec<usize> {
    let mut hide = Vec::new();
    let mut j = 6;
    while j < args.len() {
        if eq_ic(args[j], "auth") && j + 1 < args.len() {
            hide.push(j + 1);
            j += 1;
        } else if eq_ic(args[j], "auth2") && j + 2 < args.len() {
            hide.extend([j + 1, j + 2]);
            j += 2;
        } else if eq_ic(args[j], "keys") {
            break;
        }
        j += 1;
    }
    hide
}

const IOERR_CONNECT: &str = "IOERR error or timeout connecting to the client";

fn ioerr(f: IoFail) -> &'static str {
    if f.writing {
        "IOERR error or timeout writing to target instance"
    } else {
        "IOERR error or timeout reading to target instance"
    }
}

/// One key to send: its argument index, remaining TTL (0: none) and payload.
struct Outgoing {
    arg: usize,
    ttl: u64,
    payload: Vec<u8>,
}

/// The pipelined request: AUTH, SELECT when needed, one RESTORE per key.
fn request(
    o: &Options,
    args: &[&[u8]],
    keys: &[Outgoing],
    select: Option<i64>,
    cluster: bool,
) -> Vec<u8> {
    let mut b = Vec::with_capacity(keys.iter().map(|k| k.payload.len() + 64).sum());
    if let Some((user, pass)) = o.auth {
        match user {
            Some(u) => encode_command(&mut b, &[&b"AUTH"[..], u, pass]),
            None => encode_command(&mut b, &[&b"AUTH"[..], pass]),
        }
    }
    if let Some(db) = select {
        encode_command(&mut b, &[&b"SELECT"[..], db.to_string().as_bytes()]);
    }
    let name: &[u8] = if cluster {
        b"RESTORE-ASKING"
    } else {
        b"RESTORE"
    };
    for k in keys {
        let ttl = k.ttl.to_string();
        let mut argv: Vec<&[u8]> = vec![name, args[k.arg], ttl.as_bytes(), &k.payload];
        if o.replace {
            argv.push(b"REPLACE");
        }
        encode_command(&mut b, &argv);
    }
    b
}

/// How one attempt over a socket ended.
enum Attempt {
    /// The replies read: for each key sent, whether the target accepted
    /// it; the target's first error; and the socket error that stopped the
    /// reading early, if one did.
    Replied {
        accepted: Vec<bool>,
        error: Option<Vec<u8>>,
        broken: Option<IoFail>,
    },
    /// Nothing was processed: the socket failed before any key's reply.
    Failed(IoFail),
}

/// Sends the request and reads AUTH's, SELECT's and each RESTORE's reply.
fn exchange(
    t: &mut Target,
    req: &[u8],
    auth: bool,
    select: bool,
    n: usize,
    timeout: Duration,
) -> Attempt {
    if let Err(f) = t.send(req, timeout) {
        return Attempt::Failed(f);
    }
    let mut auth_reply = Vec::new();
    if auth {
        match t.line(timeout) {
            Ok(l) => auth_reply = l,
            Err(f) => return Attempt::Failed(f),
        }
    }
    let mut select_reply = Vec::new();
    if select {
        match t.line(timeout) {
            Ok(l) => select_reply = l,
            Err(f) => return Attempt::Failed(f),
        }
    }
    let mut accepted = Vec::with_capacity(n);
    let mut error: Option<Vec<u8>> = None;
    for _ in 0..n {
        let l = match t.line(timeout) {
            Ok(l) => l,
            Err(f) if accepted.is_empty() => return Attempt::Failed(f),
            Err(f) => {
                return Attempt::Replied {
                    accepted,
                    error,
                    broken: Some(f),
                }
            }
        };
        // An AUTH or SELECT error counts against every key (its RESTORE
        // went to the wrong place or unauthenticated), as in Redis.
        let bad = [&auth_reply, &select_reply, &l]
            .into_iter()
            .find(|r| r.first() == Some(&b'-'));
        match bad {
            Some(r) => {
                if error.is_none() {
                    error = Some(r[1..].to_vec());
                }
                accepted.push(false);
            }
            None => accepted.push(true),
        }
    }
    Attempt::Replied {
        accepted,
        error,
        broken: None,
    }
}

fn migrate_cmd(ctx: &mut Ctx, args: &[&[u8]]) {
    let o = match options(args) {
        Ok(o) => o,
        Err(e) => return ctx.error(e),
    };
    let Some(timeout) = ctx.parse_i64(args[5]) else {
        return;
    };
    let Some(dbid) = ctx.parse_i64(args[4]) else {
        return;
    };
    let timeout = Duration::from_millis(if timeout <= 0 { 1000 } else { timeout as u64 });
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let cluster = srv.cluster.enabled;
    let names = &args[o.first_key..o.first_key + o.num_keys];
    let keys: Vec<Key> = names.iter().map(|a| Key::new(a)).collect();
    // The keys' partitions stay locked until the deletions (module doc).
    let mut g = srv.keyspace.lock_keys(&keys);
    if cluster && !srv.journal.enabled() {
        // Commands let through on a MIGRATING slot finish first (see
        // `services::cluster::Pass`; with the journal on they check again
        // under its order lock instead, which this command holds).
        let end = std::time::Instant::now() + timeout;
        while crate::services::cluster::others_passing(srv) > 0 && std::time::Instant::now() < end {
            drop(g);
            std::thread::sleep(Duration::from_micros(50));
            g = srv.keyspace.lock_keys(&keys);
        }
    }
    let present: Vec<usize> = (0..keys.len())
        .filter(|&i| g.part(&keys[i]).get_read(db, &keys[i], now).is_some())
        .collect();
    if present.is_empty() {
        drop(g);
        return ctx.out.simple("NOKEY");
    }
    let opts = crate::services::snapshot::write_options(ctx.settings);
    let mut outgoing = Vec::with_capacity(present.len());
    let clock = crate::base::clock::unix_time_ms();
    for i in present {
        let Some(e) = g.part(&keys[i]).get_read_notouch(db, &keys[i], now) else {
            continue;
        };
        let ttl = match e.expire_at() {
            // Expired since the lookup: not sent.
            Some(t) if t < clock => continue,
            Some(t) => (t - clock).max(1),
            None => 0,
        };
        outgoing.push(Outgoing {
            arg: o.first_key + i,
            ttl,
            payload: rdb::dump(e.value(), &opts),
        });
    }
    let (host, port) = (args[1], args[2]);
    let mut may_retry = true;
    let (mut t, cached, replies) = loop {
        let (mut t, cached) = match migrate::checkout(host, port, timeout, ctx.settings) {
            Ok(c) => c,
            Err(migrate::ConnectFail::Connecting) => {
                drop(g);
                return ctx.error(IOERR_CONNECT);
            }
            // Found out when writing, as Redis does (see ConnectFail).
            Err(migrate::ConnectFail::Refused) => {
                if may_retry {
                    may_retry = false;
                    continue;
                }
                drop(g);
                return ctx.error(ioerr(IoFail {
                    writing: true,
                    timed_out: false,
                }));
            }
        };
        let select = (t.last_db != Some(dbid)).then_some(dbid);
        let req = request(&o, args, &outgoing, select, cluster);
        let r = exchange(
            &mut t,
            &req,
            o.auth.is_some(),
            select.is_some(),
            outgoing.len(),
            timeout,
        );
        match r {
            // A cached socket the target closed meanwhile: one more try on
            // a new connection, unless the timeout passed.
            Attempt::Failed(f) => {
                migrate::discard(host, port, t, cached);
                if may_retry && !f.timed_out {
                    may_retry = false;
                    continue;
                }
                drop(g);
                return ctx.error(ioerr(f));
            }
            Attempt::Replied {
                accepted,
                error,
                broken,
            } => break (t, cached, (accepted, error, broken)),
        }
    };
    let (accepted, error, broken) = replies;
    let mut deleted = Vec::new();
    let mut garbage = Vec::new();
    if !o.copy {
        for (k, ok) in outgoing.iter().zip(&accepted) {
            if !ok {
                continue;
            }
            let key = Key::new(args[k.arg]);
            if let Some(e) = g.part(&key).remove(db, &key, now) {
                garbage.push(e);
                deleted.push(k.arg);
            }
        }
    }
    drop(g);
    srv.lazyfree
        .free_entries(garbage, ctx.settings.lazyfree_lazy_server_del);
    for &i in &deleted {
        ctx.notify(notify::GENERIC, "del", args[i]);
    }
    if deleted.is_empty() {
        ctx.propagate_none();
    } else {
        ctx.propagate_as(|| {
            let mut del = vec![b"DEL".to_vec()];
            del.extend(deleted.iter().map(|&i| args[i].to_vec()));
            vec![del]
        });
    }
    if error.is_some() {
        t.last_db = None;
    }
    if broken.is_some() {
        migrate::discard(host, port, t, cached);
    } else {
        if error.is_none() {
            t.last_db = Some(dbid);
        }
        migrate::checkin(host, port, t, cached);
    }
    match (error, broken) {
        (Some(e), _) => {
            let mut msg = b"ERR Target instance replied with error: ".to_vec();
            msg.extend_from_slice(&e);
            ctx.error_bytes(&msg);
        }
        (None, Some(f)) => ctx.error(ioerr(f)),
        (None, None) => ctx.ok(),
    }
}

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    acl: &["keyspace", "write", "slow", "dangerous"],
    keys: KeyPos::range(3, 3, 1),
    getkeys: Some(migrate_keys),
    redact: Some(redact),
    docs: Docs::new(
        "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed.",
        "Atomically transfer a key from a Redis instance to another one.",
    ),
    ..CommandSpec::new("migrate", -6, flag::WRITE, migrate_cmd)
}];

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<Vec<u8>> {
        s.split(' ')
            .map(|w| {
                if w == "''" {
                    Vec::new()
                } else {
                    w.as_bytes().to_vec()
                }
            })
            .collect()
    }

    #[test]
    fn keys_are_the_key_argument_or_those_after_keys() {
        let a = argv("MIGRATE h 1 k 0 5 COPY");
        let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
        assert_eq!(migrate_keys(&r), Some(vec![3]));
        let a = argv("MIGRATE h 1 '' 0 5 REPLACE KEYS a b c");
        let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
        assert_eq!(migrate_keys(&r), Some(vec![8, 9, 10]));
        let o = options(&r).unwrap();
        assert!(o.replace && !o.copy);
        assert_eq!((o.first_key, o.num_keys), (8, 3));
        // KEYS with a non-empty key argument: no keys (an error).
        let a = argv("MIGRATE h 1 k 0 5 KEYS a");
        let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
        assert_eq!(migrate_keys(&r), None);
        // AUTH's and AUTH2's arguments are never the KEYS option.
        let a = argv("MIGRATE h 1 '' 0 5 AUTH keys AUTH2 keys x KEYS a");
        let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
        assert_eq!(migrate_keys(&r), Some(vec![12]));
        let a = argv("MIGRATE h 1 k 0 5 KEYS a");
        let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
        assert_eq!(options(&r).err(), Some(KEYS_NEED_EMPTY));
    }

    #[test]
    fn auth_options_and_their_redaction() {
        let a = argv("MIGRATE h 1 k 0 5 AUTH pw AUTH2 u p2 COPY");
        let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
        let o = options(&r).unwrap();
        assert_eq!(o.auth, Some((Some(&b"u"[..]), &b"p2"[..])));
        assert!(o.copy);
        assert_eq!(redact(&r), vec![7, 9, 10]);
        for bad in [
            "MIGRATE h 1 k 0 5 AUTH",
            "MIGRATE h 1 k 0 5 AUTH2 u",
            "MIGRATE h 1 k 0 5 NOPE",
        ] {
            let a = argv(bad);
            let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
            assert_eq!(
                options(&r).err(),
                Some(crate::base::errors::ERR_SYNTAX),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_request_pipelines_auth_select_and_restores() {
        let a = argv("MIGRATE h 1 '' 3 5 REPLACE AUTH2 u p KEYS a");
        let r: Vec<&[u8]> = a.iter().map(|v| v.as_slice()).collect();
        let o = options(&r).unwrap();
        let keys = [Outgoing {
            arg: 11,
            ttl: 7,
            payload: b"P".to_vec(),
        }];
        let req = request(&o, &r, &keys, Some(3), true);
        assert_eq!(
            req,
            b"*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$1\r\np\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n\
              *5\r\n$14\r\nRESTORE-ASKING\r\n$1\r\na\r\n$1\r\n7\r\n$1\r\nP\r\n$7\r\nREPLACE\r\n"
                .to_vec()
        );
        let o = Options {
            replace: false,
            auth: None,
            ..o
        };
        let req = request(&o, &r, &keys, None, false);
        assert_eq!(
            req,
            b"*4\r\n$7\r\nRESTORE\r\n$1\r\na\r\n$1\r\n7\r\n$1\r\nP\r\n".to_vec()
        );
    }
}
