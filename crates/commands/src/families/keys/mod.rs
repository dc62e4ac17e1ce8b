//! Generic key commands: DEL, UNLINK, EXISTS, TYPE, RENAME, RENAMENX, COPY,
//! MOVE, KEYS, SCAN, RANDOMKEY, TOUCH, OBJECT, DBSIZE, SWAPDB, FLUSHDB,
//! FLUSHALL; and the keyspace's DEBUG subcommands (POPULATE, OBJECT,
//! SET-ACTIVE-EXPIRE).
//!
//! Multi-key commands lock their partitions in ascending order through
//! `Keyspace::lock_keys`; whole-keyspace commands go partition by partition
//! (KEYS, SCAN, DBSIZE) or lock everything (FLUSHALL, SWAPDB).

pub mod expire;
pub mod sort;

use store::Key;

use crate::base::errors;
use crate::base::errors::ERR_SYNTAX;
use crate::base::parse::eq_ic;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, DebugSub, Docs, KeyPos};
use crate::services::scan::{self, ScanArgs};

macro_rules! cmd {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $keys:expr, $cx:expr, $sum:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: $keys,
            docs: Docs::new($cx, $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

const OBJECT_SUBS: &[CommandSpec] = &[
    cmd!(
        "object|encoding",
        3,
        flag::READONLY,
        &["keyspace", "read", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Returns the internal encoding of a Redis object.",
        object_encoding
    ),
    cmd!(
        "object|freq",
        3,
        flag::READONLY,
        &["keyspace", "read", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Returns the logarithmic access frequency counter of a Redis object.",
        object_freq
    ),
    cmd!(
        "object|idletime",
        3,
        flag::READONLY,
        &["keyspace", "read", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Returns the time since the last access to a Redis object.",
        object_idletime
    ),
    cmd!(
        "object|refcount",
        3,
        flag::READONLY,
        &["keyspace", "read", "slow"],
        KeyPos::range(2, 2, 1),
        "O(1)",
        "Returns the reference count of a value of a key.",
        object_refcount
    ),
    cmd!(
        "object|help",
        2,
        flag::LOADING | flag::STALE,
        &["keyspace", "slow"],
        KeyPos::NONE,
        "O(1)",
        "Returns helpful text about the different subcommands.",
        object_help
    ),
];

pub const COMMANDS: &[CommandSpec] = &[
    cmd!("del", -2, flag::WRITE, &["keyspace", "write", "slow"], KeyPos::ALL, "O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).", "Deletes one or more keys.", del),
    cmd!("unlink", -2, flag::WRITE | flag::FAST, &["keyspace", "write", "fast"], KeyPos::ALL, "O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.", "Asynchronously deletes one or more keys.", unlink),
    cmd!("exists", -2, flag::READONLY | flag::FAST, &["keyspace", "read", "fast"], KeyPos::ALL, "O(N) where N is the number of keys to check.", "Determines whether one or more keys exist.", exists),
    cmd!("type", 2, flag::READONLY | flag::FAST, &["keyspace", "read", "fast"], KeyPos::ONE, "O(1)", "Determines the type of value stored at a key.", type_cmd),
    cmd!("rename", 3, flag::WRITE, &["keyspace", "write", "slow"], KeyPos::range(1, 2, 1), "O(1)", "Renames a key and overwrites the destination.", rename),
    cmd!("renamenx", 3, flag::WRITE | flag::FAST, &["keyspace", "write", "fast"], KeyPos::range(1, 2, 1), "O(1)", "Renames a key only when the target key name doesn't exist.", renamenx),
    cmd!("copy", -3, flag::WRITE | flag::DENYOOM, &["keyspace", "write", "slow"], KeyPos::range(1, 2, 1), "O(N) worst case for collections, where N is the number of nested items. O(1) for string values.", "Copies the value of a key to a new key.", copy),
    cmd!("move", 3, flag::WRITE | flag::FAST, &["keyspace", "write", "fast"], KeyPos::ONE, "O(1)", "Moves a key to another database.", move_cmd),
    cmd!("keys", 2, flag::READONLY, &["keyspace", "read", "slow", "dangerous"], KeyPos::NONE, "O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.", "Returns all key names that match a pattern.", keys),
    cmd!("scan", -2, flag::READONLY, &["keyspace", "read", "slow"], KeyPos::NONE, "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.", "Iterates over the key names in the database.", scan),
    cmd!("randomkey", 1, flag::READONLY, &["keyspace", "read", "slow"], KeyPos::NONE, "O(1)", "Returns a random key name from the database.", randomkey),
    cmd!("touch", -2, flag::READONLY | flag::FAST, &["keyspace", "read", "fast"], KeyPos::ALL, "O(N) where N is the number of keys that will be touched.", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", touch),
    CommandSpec {
        handler: None,
        subcommands: OBJECT_SUBS,
        ..cmd!("object", -2, 0, &["slow"], KeyPos::NONE, "Depends on subcommand.", "A container for object introspection commands.", object_help)
    },
    cmd!("dbsize", 1, flag::READONLY | flag::FAST, &["keyspace", "read", "fast"], KeyPos::NONE, "O(1)", "Returns the number of keys in the database.", dbsize),
    CommandSpec {
        docs: Docs::new("O(N) where N is the count of clients watching or blocking on keys from both databases.", "Swaps two Redis databases."),
        ..cmd!("swapdb", 3, flag::WRITE | flag::FAST | flag::WHOLE_KEYSPACE, &["keyspace", "write", "fast", "dangerous"], KeyPos::NONE, "", "", swapdb)
    },
    CommandSpec {
        docs: Docs::new("O(N) where N is the number of keys in the selected database", "Remove all keys from the current database."),
        ..cmd!("flushdb", -1, flag::WRITE | flag::WHOLE_KEYSPACE, &["keyspace", "write", "slow", "dangerous"], KeyPos::NONE, "", "", flushdb)
    },
    CommandSpec {
        docs: Docs::new("O(N) where N is the total number of keys in all databases", "Removes all keys from all databases."),
        ..cmd!("flushall", -1, flag::WRITE | flag::WHOLE_KEYSPACE, &["keyspace", "write", "slow", "dangerous"], KeyPos::NONE, "", "", flushall)
    },
];

/// DEBUG subcommands backed by the keyspace.
pub const DEBUG: &[DebugSub] = &[
    DebugSub {
        name: "POPULATE",
        arity: -3,
        help: &[
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>. If <prefix> is specified then",
            "    it is used instead of the 'key' prefix. These are not propagated to",
            "    replicas. Cluster slots are not respected so keys not belonging to the",
            "    current node can be created in cluster mode.",
        ],
        handler: debug_populate,
    },
    DebugSub {
        name: "OBJECT",
        arity: 3,
        help: &[
            "OBJECT <key>",
            "    Show low level info about `key` and associated value.",
        ],
        handler: debug_object,
    },
    DebugSub {
        name: "SET-ACTIVE-EXPIRE",
        arity: 3,
        help: &[
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background when they are not",
            "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
            "    default.",
        ],
        handler: debug_set_active_expire,
    },
];

/// Fires a keyspace event in a given database.
pub(crate) fn notify_db(ctx: &mut Ctx, class: u32, event: &str, key: &[u8], db: usize) {
    ctx.modified(db, key);
    let flags = ctx.settings.notify_keyspace_events;
    if flags == 0 {
        return;
    }
    let ev = notify::Event {
        class,
        name: event,
        key,
        db,
    };
    ctx.srv
        .notify_keyspace_event(flags, ev, ctx.client.id, ctx.out);
}

fn del(ctx: &mut Ctx, args: &[&[u8]]) {
    let lazy = ctx.settings.lazyfree_lazy_user_del;
    del_generic(ctx, args, lazy);
}

fn unlink(ctx: &mut Ctx, args: &[&[u8]]) {
    del_generic(ctx, args, true);
}

/// DEL and UNLINK: remove the keys under their partitions' locks, then free
/// the values (large ones on the lazyfree thread when `lazy`).
fn del_generic(ctx: &mut Ctx, args: &[&[u8]], lazy: bool) {
    let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut deleted = Vec::new();
    let mut garbage = Vec::new();
    {
        let mut g = srv.keyspace.lock_keys(&keys);
        for (i, k) in keys.iter().enumerate() {
            if let Some(e) = g.part(k).remove(db, k, now) {
                deleted.push(i + 1);
                garbage.push(e);
            }
        }
    }
    srv.lazyfree.free_entries(garbage, lazy);
    for &i in &deleted {
        ctx.notify(notify::GENERIC, "del", args[i]);
    }
    ctx.out.int(deleted.len() as i64);
}

fn exists(ctx: &mut Ctx, args: &[&[u8]]) {
    let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    let n = keys
        .iter()
        .filter(|k| g.part(k).get_read_notouch(db, k, now).is_some())
        .count();
    drop(g);
    ctx.out.int(n as i64);
}

fn touch(ctx: &mut Ctx, args: &[&[u8]]) {
    let keys: Vec<Key> = args[1..].iter().map(|a| Key::new(a)).collect();
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    let n = keys
        .iter()
        .filter(|k| g.part(k).get_read(db, k, now).is_some())
        .count();
    drop(g);
    ctx.out.int(n as i64);
}

fn type_cmd(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let name = p
        .get_read_notouch(db, &k, now)
        .map_or("none", |e| e.value().kind().name());
    drop(p);
    ctx.out.simple(name);
}

fn rename_generic(ctx: &mut Ctx, args: &[&[u8]], nx: bool) {
    let keys = [Key::new(args[1]), Key::new(args[2])];
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    let (src, dst) = (&keys[0], &keys[1]);
    if !g.part(src).exists(db, src, now) {
        drop(g);
        return ctx.error(errors::ERR_NO_SUCH_KEY);
    }
    if args[1] == args[2] {
        drop(g);
        return if nx { ctx.out.int(0) } else { ctx.ok() };
    }
    if nx && g.part(dst).exists(db, dst, now) {
        drop(g);
        return ctx.out.int(0);
    }
    let e = g.part(src).remove(db, src, now).expect("checked above");
    let ttl = e.expire_at();
    let v = e.into_value();
    let old = g.part(dst).insert(db, dst, v, ttl, now);
    drop(g);
    drop(old);
    ctx.notify(notify::GENERIC, "rename_from", args[1]);
    ctx.notify(notify::GENERIC, "rename_to", args[2]);
    if nx {
        ctx.out.int(1)
    } else {
        ctx.ok()
    }
}

fn rename(ctx: &mut Ctx, args: &[&[u8]]) {
    rename_generic(ctx, args, false)
}

fn renamenx(ctx: &mut Ctx, args: &[&[u8]]) {
    rename_generic(ctx, args, true)
}

fn copy(ctx: &mut Ctx, args: &[&[u8]]) {
    let srcdb = ctx.client.db;
    let mut dstdb = srcdb;
    let mut replace = false;
    let mut j = 3;
    while j < args.len() {
        if eq_ic(args[j], "replace") {
            replace = true;
        } else if eq_ic(args[j], "db") && j + 1 < args.len() {
            let Some(v) = ctx.parse_i64(args[j + 1]) else {
                return;
            };
            // Redis reads the index as an int first.
            if v < i32::MIN as i64 || v > i32::MAX as i64 {
                return ctx.error(errors::ERR_OUT_OF_RANGE_I32);
            }
            if v < 0 || v >= ctx.srv.keyspace.databases() as i64 {
                return ctx.error(errors::ERR_DB_INDEX);
            }
            dstdb = v as usize;
            j += 1;
        } else {
            return ctx.error(ERR_SYNTAX);
        }
        j += 1;
    }
    if srcdb == dstdb && args[1] == args[2] {
        return ctx.error(errors::ERR_SOURCE_DESTINATION_OBJECTS_SAME);
    }
    let keys = [Key::new(args[1]), Key::new(args[2])];
    let (now, srv) = (ctx.now_ms, ctx.srv);
    let mut g = srv.keyspace.lock_keys(&keys);
    let (src, dst) = (&keys[0], &keys[1]);
    let Some(e) = g.part(src).get_read(srcdb, src, now) else {
        drop(g);
        return ctx.out.int(0);
    };
    let ttl = e.expire_at();
    let mut v = e.clone_value();
    // Redis's COPY duplicates a string object: an integer becomes one of
    // its own, never a shared one (OBJECT REFCOUNT 1).
    v.unshare_int();
    if g.part(dst).exists(dstdb, dst, now) && !replace {
        drop(g);
        return ctx.out.int(0);
    }
    let old = g.part(dst).insert(dstdb, dst, v, ttl, now);
    drop(g);
    drop(old);
    notify_db(ctx, notify::GENERIC, "copy_to", args[2], dstdb);
    ctx.out.int(1);
}

fn move_cmd(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.settings.cluster.enabled {
        return ctx.error("ERR MOVE is not allowed in cluster mode");
    }
    let Some(v) = ctx.parse_i64(args[2]) else {
        return;
    };
    if v < i32::MIN as i64 || v > i32::MAX as i64 {
        return ctx.error(errors::ERR_OUT_OF_RANGE_I32);
    }
    if v < 0 || v >= ctx.srv.keyspace.databases() as i64 {
        return ctx.error(errors::ERR_DB_INDEX);
    }
    let (src, dst) = (ctx.client.db, v as usize);
    if src == dst {
        return ctx.error(errors::ERR_SOURCE_DESTINATION_OBJECTS_SAME);
    }
    let k = Key::new(args[1]);
    let (now, srv) = (ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    if !p.exists(src, &k, now) || p.exists(dst, &k, now) {
        drop(p);
        return ctx.out.int(0);
    }
    p.move_entry(src, dst, &k, now);
    drop(p);
    notify_db(ctx, notify::GENERIC, "move_from", args[1], src);
    notify_db(ctx, notify::GENERIC, "move_to", args[1], dst);
    ctx.out.int(1);
}

fn keys(ctx: &mut Ctx, args: &[&[u8]]) {
    let pat = args[1];
    let all = pat == b"*";
    let mut out: Vec<Vec<u8>> = Vec::new();
    ctx.srv
        .keyspace
        .for_each_key(ctx.client.db, ctx.now_ms, |e| {
            let k = e.key();
            if all || crate::base::glob::glob_match(pat, &k, false) {
                out.push(k.to_vec());
            }
        });
    ctx.bulk_array(&out);
}

fn scan(ctx: &mut Ctx, args: &[&[u8]]) {
    let cursor = match scan::parse_cursor(args[1]) {
        Ok(c) => c,
        Err(e) => return ctx.error(e),
    };
    let opts = match ScanArgs::parse(args, 2, true) {
        Ok(o) => o,
        Err(e) => return ctx.error(e),
    };
    let mut out: Vec<Vec<u8>> = Vec::new();
    let next = ctx
        .srv
        .keyspace
        .scan(ctx.client.db, cursor, opts.count, ctx.now_ms, |e| {
            if let Some(t) = opts.typ {
                if !t.eq_ignore_ascii_case(e.value().kind().name().as_bytes()) {
                    return;
                }
            }
            let k = e.key();
            if opts.matches(&k) {
                out.push(k.to_vec());
            }
        });
    scan::reply_cursor(ctx.out, next);
    ctx.bulk_array(&out);
}

fn randomkey(ctx: &mut Ctx, _args: &[&[u8]]) {
    match ctx.srv.keyspace.random_key(ctx.client.db, ctx.now_ms) {
        Some(k) => ctx.out.bulk(&k),
        None => ctx.out.null_bulk(),
    }
}

fn dbsize(ctx: &mut Ctx, _args: &[&[u8]]) {
    let n = ctx.srv.keyspace.dbsize(ctx.client.db);
    ctx.out.int(n as i64);
}

fn swapdb(ctx: &mut Ctx, args: &[&[u8]]) {
    if ctx.settings.cluster.enabled {
        return ctx.error("ERR SWAPDB is not allowed in cluster mode");
    }
    let parse = |a: &[u8]| {
        crate::base::parse::parse_i64(a).filter(|v| *v >= i32::MIN as i64 && *v <= i32::MAX as i64)
    };
    let Some(a) = parse(args[1]) else {
        return ctx.error(errors::ERR_INVALID_FIRST_DB_INDEX);
    };
    let Some(b) = parse(args[2]) else {
        return ctx.error(errors::ERR_INVALID_SECOND_DB_INDEX);
    };
    let n = ctx.srv.keyspace.databases() as i64;
    if a < 0 || a >= n || b < 0 || b >= n {
        return ctx.error(errors::ERR_DB_INDEX);
    }
    let (a, b) = (a as usize, b as usize);
    // Like Redis, a watched key is touched when it exists in either database.
    let watched: Vec<_> = [a, b]
        .iter()
        .flat_map(|&d| ctx.srv.watches.keys_in_db(Some(d)))
        .collect();
    let now = ctx.now_ms;
    let changed: Vec<_> = watched
        .into_iter()
        .filter(|(_, key)| {
            let k = Key::new(key);
            let mut p = ctx.srv.keyspace.lock(&k);
            p.exists(a, &k, now) || p.exists(b, &k, now)
        })
        .collect();
    ctx.srv.keyspace.swap_db(a, b);
    for (d, key) in changed {
        ctx.modified(d, &key);
    }
    // Every key with blocked clients in either database may now have data
    // (dispatch serves them after the command).
    if ctx.srv.blocking.any() {
        for d in [a, b] {
            let keys = ctx.srv.blocking.keys_in_db(d);
            ctx.client.ready_keys.extend(keys);
        }
    }
    ctx.ok();
}

/// FLUSHDB/FLUSHALL option: Some(async) or None on a syntax error.
fn flush_mode(args: &[&[u8]], lazy_default: bool) -> Option<bool> {
    match args.len() {
        1 => Some(lazy_default),
        2 if eq_ic(args[1], "async") => Some(true),
        2 if eq_ic(args[1], "sync") => Some(false),
        _ => None,
    }
}

fn flushdb(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(lazy) = flush_mode(args, ctx.settings.lazyfree_lazy_user_flush) else {
        return ctx.syntax_error();
    };
    let doomed = watched_existing(ctx, Some(ctx.client.db));
    let dbs = ctx.srv.keyspace.flush_db(ctx.client.db);
    ctx.srv.lazyfree.free_dbs(dbs, lazy);
    crate::services::tracking::flushed(ctx.srv, ctx.client);
    for (d, key) in doomed {
        ctx.modified(d, &key);
    }
    wake_flushed(ctx, Some(ctx.client.db));
    ctx.ok();
}

/// Hands the keys with blocked clients in the flushed databases to
/// dispatch, which serves them after the command: a blocked XREADGROUP
/// whose stream was flushed is answered, as in Redis (`-UNBLOCKED`);
/// list and sorted-set waiters find nothing and keep waiting.
fn wake_flushed(ctx: &mut Ctx, db: Option<usize>) {
    if !ctx.srv.blocking.any() {
        return;
    }
    let dbs: Vec<usize> = match db {
        Some(d) => vec![d],
        None => (0..ctx.srv.keyspace.databases()).collect(),
    };
    for d in dbs {
        let keys = ctx.srv.blocking.keys_in_db(d);
        ctx.client.ready_keys.extend(keys);
    }
}

fn flushall(ctx: &mut Ctx, args: &[&[u8]]) {
    let Some(lazy) = flush_mode(args, ctx.settings.lazyfree_lazy_user_flush) else {
        return ctx.syntax_error();
    };
    let doomed = watched_existing(ctx, None);
    // Redis stops a running background save first (its file is stale).
    ctx.srv.persistence.abort();
    let dbs = ctx.srv.keyspace.flush_all();
    ctx.srv.lazyfree.free_dbs(dbs, lazy);
    // With save points, the empty dataset is saved at once.
    crate::services::snapshot::after_flushall(ctx.srv, ctx.settings);
    crate::services::tracking::flushed(ctx.srv, ctx.client);
    for (d, key) in doomed {
        ctx.modified(d, &key);
    }
    wake_flushed(ctx, None);
    ctx.ok();
}

/// The watched keys of `db` (all when None) that exist now: a flush touches
/// only those, as in Redis (watching a missing key survives FLUSHALL).
fn watched_existing(ctx: &Ctx, db: Option<usize>) -> Vec<crate::kernel::watches::WatchKey> {
    let now = ctx.now_ms;
    ctx.srv
        .watches
        .keys_in_db(db)
        .into_iter()
        .filter(|(d, key)| {
            let k = Key::new(key);
            ctx.srv.keyspace.lock(&k).exists(*d, &k, now)
        })
        .collect()
}

// ------------------------------------------------------------------ OBJECT

fn lfu_policy(ctx: &Ctx) -> bool {
    ctx.srv.eviction.is_lfu()
}

fn object_encoding(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let enc = p
        .get_read_notouch(db, &k, now)
        .map(|e| e.value().encoding_name());
    drop(p);
    match enc {
        Some(e) => ctx.out.bulk(e.as_bytes()),
        None => ctx.out.null_bulk(),
    }
}

fn object_freq(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let b = p
        .get_read_notouch(db, &k, now)
        .map(|e| e.value().evict_byte());
    drop(p);
    let Some(b) = b else {
        return ctx.out.null_bulk();
    };
    if !lfu_policy(ctx) {
        return ctx.error(errors::ERR_NOT_LFU_NO_FREQ);
    }
    ctx.out.int(b as i64);
}

fn object_idletime(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let b = p
        .get_read_notouch(db, &k, now)
        .map(|e| e.value().evict_byte());
    drop(p);
    let Some(b) = b else {
        return ctx.out.null_bulk();
    };
    if lfu_policy(ctx) {
        return ctx.error(errors::ERR_LFU_NO_IDLETIME);
    }
    ctx.out.int((srv.keyspace.idle_ms(b, now) / 1000) as i64);
}

fn object_refcount(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let rc = p.get_read_notouch(db, &k, now).map(|e| {
        // Redis shares the integers 0..9999 (refcount INT_MAX).
        if e.value().is_shared_int() {
            i32::MAX as i64
        } else {
            1
        }
    });
    drop(p);
    match rc {
        Some(n) => ctx.out.int(n),
        None => ctx.out.null_bulk(),
    }
}

fn object_help(ctx: &mut Ctx, _args: &[&[u8]]) {
    let lines = [
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Prints this help.",
    ];
    ctx.reply_help(&lines);
}

// ------------------------------------------------------------------- DEBUG

fn positive(ctx: &mut Ctx, arg: &[u8]) -> Option<u64> {
    match crate::base::parse::parse_i64(arg) {
        Some(v) if v >= 0 => Some(v as u64),
        // Redis's getPositiveLongFromObjectOrReply: one message for a
        // negative number and for a text that is no number.
        _ => {
            ctx.error(errors::ERR_VALUE_OUT_OF_RANGE_MUST_POSITIVE);
            None
        }
    }
}

fn debug_populate(ctx: &mut Ctx, args: &[&[u8]]) {
    if args.len() > 5 {
        // The subcommand as the client wrote it, as Redis does.
        return ctx.error(&errors::unknown_subcommand_or_arity(
            &String::from_utf8_lossy(args[1]),
            "DEBUG",
        ));
    }
    let Some(count) = positive(ctx, args[2]) else {
        return;
    };
    let prefix: &[u8] = args.get(3).copied().unwrap_or(b"key");
    let size = match args.get(4) {
        Some(a) => match positive(ctx, a) {
            Some(v) => v as usize,
            None => return,
        },
        None => 0,
    };
    ctx.srv
        .keyspace
        .populate(ctx.client.db, count, prefix, size, ctx.now_ms);
    ctx.ok();
}

fn debug_object(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[2]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let mut p = srv.keyspace.lock(&k);
    let Some(e) = p.get_read_notouch(db, &k, now) else {
        drop(p);
        return ctx.error(errors::ERR_NO_SUCH_KEY);
    };
    let v = e.value();
    let len = v.str_len();
    let ser = if v.is_int() {
        if len <= 3 {
            2
        } else if len <= 5 {
            3
        } else {
            5
        }
    } else {
        len + if len < 64 {
            1
        } else if len < 16384 {
            2
        } else {
            5
        }
    };
    let lru = v.evict_byte();
    let list = v.as_list().map_or(String::new(), |l| l.debug_fields());
    let s = format!(
        "Value at:{:p} refcount:1 encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}{} petrel_encoding:{} key_inline:{} heap_bytes:{}",
        e as *const _,
        v.encoding_name(),
        ser,
        lru,
        ctx.srv.keyspace.idle_ms(lru, now) / 1000,
        list,
        v.internal_encoding(),
        e.key_inline() as u8,
        e.heap_size()
    );
    drop(p);
    ctx.out.simple(s);
}

fn debug_set_active_expire(ctx: &mut Ctx, args: &[&[u8]]) {
    let on = std::str::from_utf8(args[2])
        .ok()
        .and_then(|s| s.trim().parse::<i64>().ok())
        .unwrap_or(0)
        != 0;
    ctx.srv.keyspace.set_active_expire(on);
    ctx.ok();
}
