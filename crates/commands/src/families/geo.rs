//! Geospatial commands (Redis 7.0 GEO* family): points are members of a
//! sorted set whose scores are Redis's 52-bit geohashes, so every sorted-set
//! command works on them and they on any sorted set.
//!
//! The math (encoding, decoding, distances, search cells, number formats)
//! is `collections::geo`, checked number for number against redis-server;
//! this module parses arguments with Redis's checks in Redis's order,
//! scans the sorted set (`collections::ZsetValue`) over the score ranges
//! of the search cells, and replies or stores as Redis does:
//! * GEOADD is ZADD of the encoded scores (NX/XX/CH, the `zadd` event);
//! * a search collects hits in scan order (cells in Redis's order, members
//!   by score within a cell), stops early with `COUNT n ANY`, sorts stably
//!   by distance for ASC/DESC (COUNT without ANY implies ASC), then takes
//!   COUNT;
//! * STORE/STOREDIST (GEORADIUS*) and GEOSEARCHSTORE replace the
//!   destination with a sorted set of the hits (geohash or distance in the
//!   unit as score), or delete it when there is none.

use collections::geo::{
    decode_score, distance, format_coord, format_distance, geohash_string, invalid_pair_error,
    score_of, texts, unit_factor, valid_lon_lat, Hit, Shape, ShapeKind, UNIT_ERROR,
};
use collections::value::zset::ScoreRange;
use collections::ZsetValue;
use resp::ReplyBuf;
use store::keyspace::Partition;
use store::Key;

use crate::base::errors::{self, ERR_WRONGTYPE};
use crate::base::parse::{eq_ic, get_double, parse_i64};
use crate::kernel::coll;
use crate::kernel::ctx::Ctx;
use crate::kernel::notify;
use crate::kernel::spec::{flag, CommandSpec, Docs, KeyPos};

macro_rules! spec {
    ($name:expr, $arity:expr, $flags:expr, $acl:expr, $keys:expr, $cx:expr, $sum:expr, $h:expr) => {
        CommandSpec {
            acl: $acl,
            keys: $keys,
            docs: Docs::new($cx, $sum),
            ..CommandSpec::new($name, $arity, $flags, $h)
        }
    };
}

pub const COMMANDS: &[CommandSpec] = &[
    spec!("geoadd", -5, flag::WRITE | flag::DENYOOM, &["write", "geo", "slow"], KeyPos::ONE,
        "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
        "Add one or more geospatial items in the geospatial index represented using a sorted set",
        geoadd),
    spec!("geodist", -4, flag::READONLY, &["read", "geo", "slow"], KeyPos::ONE,
        "O(log(N))",
        "Returns the distance between two members of a geospatial index",
        geodist),
    spec!("geohash", -2, flag::READONLY, &["read", "geo", "slow"], KeyPos::ONE,
        "O(log(N)) for each member requested, where N is the number of elements in the sorted set.",
        "Returns members of a geospatial index as standard geohash strings",
        geohash),
    spec!("geopos", -2, flag::READONLY, &["read", "geo", "slow"], KeyPos::ONE,
        "O(N) where N is the number of members requested.",
        "Returns longitude and latitude of members of a geospatial index",
        geopos),
    spec!("geosearch", -7, flag::READONLY, &["read", "geo", "slow"], KeyPos::ONE,
        "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape",
        "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
        geosearch),
    spec!("geosearchstore", -8, flag::WRITE | flag::DENYOOM, &["write", "geo", "slow"], KeyPos::range(1, 2, 1),
        "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape",
        "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
        geosearchstore),
    CommandSpec {
        getkeys: Some(georadius_keys),
        ..spec!("georadius", -6, flag::WRITE | flag::DENYOOM | flag::MOVABLEKEYS, &["write", "geo", "slow"], KeyPos::ONE,
            "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.",
            "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
            georadius)
    },
    spec!("georadius_ro", -6, flag::READONLY, &["read", "geo", "slow"], KeyPos::ONE,
        "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.",
        "A read-only variant for GEORADIUS",
        georadius_ro),
    CommandSpec {
        getkeys: Some(georadius_keys),
        ..spec!("georadiusbymember", -5, flag::WRITE | flag::DENYOOM | flag::MOVABLEKEYS, &["write", "geo", "slow"], KeyPos::ONE,
            "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.",
            "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
            georadiusbymember)
    },
    spec!("georadiusbymember_ro", -5, flag::READONLY, &["read", "geo", "slow"], KeyPos::ONE,
        "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.",
        "A read-only variant for GEORADIUSBYMEMBER",
        georadiusbymember_ro),
];

/// Keys of GEORADIUS / GEORADIUSBYMEMBER: the source, then every STORE /
/// STOREDIST destination (as COMMAND GETKEYS shows them from Redis's key
/// specs; the last one given is the one written).
fn georadius_keys(args: &[&[u8]]) -> Option<Vec<usize>> {
    if args.len() < 2 {
        return None;
    }
    let mut keys = vec![1];
    let mut i = 5;
    while i + 1 < args.len() {
        if eq_ic(args[i], "store") || eq_ic(args[i], "storedist") {
            keys.push(i + 1);
            i += 1;
        }
        i += 1;
    }
    Some(keys)
}

/// A coordinate or number as Redis's `getDoubleFromObjectOrReply`.
fn double_arg(a: &[u8], msg: &'static str) -> Result<f64, String> {
    get_double(a).ok_or_else(|| msg.to_string())
}

/// Redis's `extractLongLatOrReply`.
fn lon_lat(args: &[&[u8]]) -> Result<(f64, f64), String> {
    let lon = double_arg(args[0], errors::ERR_NOT_FLOAT)?;
    let lat = double_arg(args[1], errors::ERR_NOT_FLOAT)?;
    if !valid_lon_lat(lon, lat) {
        return Err(invalid_pair_error(lon, lat));
    }
    Ok((lon, lat))
}

fn unit(a: &[u8]) -> Result<f64, String> {
    unit_factor(a).ok_or_else(|| UNIT_ERROR.to_string())
}

/// Redis's `extractDistanceOrReply`: (radius, metres per unit).
fn radius_arg(args: &[&[u8]]) -> Result<(f64, f64), String> {
    let r = double_arg(args[0], "ERR need numeric radius")?;
    if r < 0.0 {
        return Err(texts::RADIUS_NEGATIVE.into());
    }
    Ok((r, unit(args[1])?))
}

/// Redis's `extractBoxOrReply`: (width, height, metres per unit).
fn box_arg(args: &[&[u8]]) -> Result<(f64, f64, f64), String> {
    let w = double_arg(args[0], "ERR need numeric width")?;
    let h = double_arg(args[1], "ERR need numeric height")?;
    if h < 0.0 || w < 0.0 {
        return Err(texts::BOX_NEGATIVE.into());
    }
    Ok((w, h, unit(args[2])?))
}

/// A coordinate reply: a bulk string in RESP2, a double in RESP3 (Redis's
/// `addReplyHumanLongDouble`).
fn reply_coord(out: &mut ReplyBuf, v: f64) {
    let s = format_coord(v);
    if out.is_resp3() {
        let mut b = Vec::with_capacity(s.len() + 3);
        b.push(b',');
        b.extend_from_slice(s.as_bytes());
        b.extend_from_slice(b"\r\n");
        out.raw(&b);
    } else {
        out.bulk(s.as_bytes());
    }
}

fn reply_pos(out: &mut ReplyBuf, score: f64) {
    let (lon, lat) = decode_score(score);
    out.array_len(2);
    reply_coord(out, lon);
    reply_coord(out, lat);
}

// ------------------------------------------------------------------ GEOADD

fn geoadd(ctx: &mut Ctx, args: &[&[u8]]) {
    let (mut nx, mut xx, mut ch) = (false, false, false);
    let mut i = 2;
    while i < args.len() {
        if eq_ic(args[i], "nx") {
            nx = true;
        } else if eq_ic(args[i], "xx") {
            xx = true;
        } else if eq_ic(args[i], "ch") {
            ch = true;
        } else {
            break;
        }
        i += 1;
    }
    let rest = args.len() - i;
    if !rest.is_multiple_of(3) || (nx && xx) || rest == 0 {
        return ctx.syntax_error();
    }
    let mut points = Vec::with_capacity(rest / 3);
    for c in args[i..].chunks_exact(3) {
        match lon_lat(c) {
            Ok((lon, lat)) => {
                let score = score_of(lon, lat).expect("valid coordinates encode");
                points.push((score, c[2]));
            }
            Err(e) => return ctx.error(&e),
        }
    }
    let key = args[1];
    let k = Key::new(key);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let limits = ctx.settings.limits;
    let mut p = srv.keyspace.lock(&k);
    let exists = match coll::check::<ZsetValue>(&mut p, db, &k, now) {
        Ok(e) => e,
        Err(_) => {
            drop(p);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    if !exists && xx {
        drop(p);
        return ctx.out.int(0);
    }
    if !exists {
        let v = ZsetValue::new_for(points[0].1.len(), &limits);
        p.insert(db, &k, store::CompactValue::from_zset(v), None, now);
    }
    let z = coll::write::<ZsetValue>(&mut p, db, &k, now)
        .ok()
        .flatten()
        .expect("zset checked or just created");
    let (mut added, mut updated) = (0i64, 0i64);
    for &(score, m) in &points {
        match z.score(m) {
            Some(cur) => {
                if nx {
                    continue;
                }
                if cur != score {
                    z.insert(m, score, &limits);
                    updated += 1;
                }
            }
            None => {
                if xx {
                    continue;
                }
                z.insert(m, score, &limits);
                added += 1;
            }
        }
    }
    drop(p);
    ctx.out.int(if ch { added + updated } else { added });
    if added + updated > 0 {
        ctx.notify(notify::ZSET, "zadd", key);
    }
}

// ------------------------------------------------------- GEODIST / HASH / POS

/// The zset at `args[1]` for a read: Err after replying WRONGTYPE.
fn read_zset<'a>(
    ctx: &mut Ctx,
    p: &'a mut Partition,
    k: &Key,
) -> Result<Option<&'a ZsetValue>, ()> {
    let (db, now) = (ctx.client.db, ctx.now_ms);
    coll::read::<ZsetValue>(p, db, k, now).map_err(|_| ctx.error(ERR_WRONGTYPE))
}

fn geodist(ctx: &mut Ctx, args: &[&[u8]]) {
    let mut to_meter = 1.0;
    if args.len() == 5 {
        match unit(args[4]) {
            Ok(u) => to_meter = u,
            Err(e) => return ctx.error(&e),
        }
    } else if args.len() > 5 {
        return ctx.syntax_error();
    }
    let k = Key::new(args[1]);
    let srv = ctx.srv;
    let mut p = srv.keyspace.lock(&k);
    let Ok(z) = read_zset(ctx, &mut p, &k) else {
        return;
    };
    let scores = z.and_then(|z| Some((z.score(args[2])?, z.score(args[3])?)));
    drop(p);
    match scores {
        None => ctx.out.null_bulk(),
        Some((a, b)) => {
            let (x1, y1) = decode_score(a);
            let (x2, y2) = decode_score(b);
            let d = distance(x1, y1, x2, y2) / to_meter;
            ctx.out.bulk(format_distance(d).as_bytes());
        }
    }
}

fn geohash(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let srv = ctx.srv;
    let mut p = srv.keyspace.lock(&k);
    let Ok(z) = read_zset(ctx, &mut p, &k) else {
        return;
    };
    let out = &mut *ctx.out;
    out.array_len(args.len() - 2);
    for m in &args[2..] {
        match z.and_then(|z| z.score(m)) {
            Some(s) => out.bulk(geohash_string(s)),
            None => out.null_bulk(),
        }
    }
}

fn geopos(ctx: &mut Ctx, args: &[&[u8]]) {
    let k = Key::new(args[1]);
    let srv = ctx.srv;
    let mut p = srv.keyspace.lock(&k);
    let Ok(z) = read_zset(ctx, &mut p, &k) else {
        return;
    };
    let out = &mut *ctx.out;
    out.array_len(args.len() - 2);
    for m in &args[2..] {
        match z.and_then(|z| z.score(m)) {
            Some(s) => reply_pos(out, s),
            None => out.null_array(),
        }
    }
}

// ------------------------------------------------------------------ search

/// Which command runs the search (Redis's `georadiusGeneric` flags).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// GEORADIUS[_RO]: centre and radius in fixed positions.
    RadiusCoords { store_ok: bool },
    /// GEORADIUSBYMEMBER[_RO].
    RadiusMember { store_ok: bool },
    /// GEOSEARCH / GEOSEARCHSTORE (options only; the destination first).
    Search { store: bool },
}

/// One member inside the shape.
struct Found {
    member: Vec<u8>,
    score: f64,
    hit: Hit,
}

/// Redis's `membersOfAllNeighbors`: hits in scan order, stopping once
/// `limit` (non-zero) hits are collected.
fn scan(z: &ZsetValue, shape: &Shape, limit: usize) -> Vec<Found> {
    let mut out: Vec<Found> = Vec::new();
    for (lo, hi) in shape.score_ranges() {
        if limit != 0 && out.len() >= limit {
            break;
        }
        let (start, end) = z.score_range(&ScoreRange {
            min: lo,
            max: hi,
            minex: false,
            maxex: true,
        });
        z.for_each_in(start, end, false, |m, s| {
            if let Some(hit) = shape.hit(s) {
                out.push(Found {
                    member: m.to_vec(),
                    score: s,
                    hit,
                });
                if limit != 0 && out.len() >= limit {
                    return false;
                }
            }
            true
        });
    }
    out
}

/// The parsed request.
struct Query {
    /// Centre, once known (FROMMEMBER on a missing key never is).
    center: Option<(f64, f64)>,
    kind: Option<ShapeKind>,
    conversion: f64,
    withdist: bool,
    withhash: bool,
    withcoord: bool,
    /// Some(true) = ASC, Some(false) = DESC.
    sort: Option<bool>,
    any: bool,
    count: usize,
    store: Option<Vec<u8>>,
    storedist: bool,
}

/// The centre of a member: Err(reply) when the member is not in the set.
fn member_center(z: &ZsetValue, m: &[u8]) -> Result<(f64, f64), String> {
    z.score(m)
        .map(decode_score)
        .ok_or_else(|| texts::MEMBER_NOT_FOUND.to_string())
}

/// Parses everything after the source key, in Redis's order, with the
/// source zset (None when missing) at hand for FROMMEMBER / BYMEMBER.
fn parse_query(args: &[&[u8]], v: Variant, z: Option<&ZsetValue>) -> Result<Query, String> {
    let mut q = Query {
        center: None,
        kind: None,
        conversion: 1.0,
        withdist: false,
        withhash: false,
        withcoord: false,
        sort: None,
        any: false,
        count: 0,
        store: None,
        storedist: false,
    };
    let base = match v {
        Variant::RadiusCoords { .. } => {
            q.center = Some(lon_lat(&args[2..4])?);
            let (r, c) = radius_arg(&args[4..6])?;
            q.kind = Some(ShapeKind::Radius(r));
            q.conversion = c;
            6
        }
        Variant::RadiusMember { .. } => {
            if let Some(z) = z {
                q.center = Some(member_center(z, args[2])?);
                let (r, c) = radius_arg(&args[3..5])?;
                q.kind = Some(ShapeKind::Radius(r));
                q.conversion = c;
            }
            5
        }
        Variant::Search { store } => {
            if store {
                q.store = Some(args[1].to_vec());
                3
            } else {
                2
            }
        }
    };
    let search = matches!(v, Variant::Search { .. });
    let search_store = v == Variant::Search { store: true };
    let store_ok = matches!(
        v,
        Variant::RadiusCoords { store_ok: true } | Variant::RadiusMember { store_ok: true }
    );
    let (mut frommember, mut fromloc, mut byradius, mut bybox) = (false, false, false, false);
    let rest = &args[base..];
    let mut i = 0;
    while i < rest.len() {
        let a = rest[i];
        let left = rest.len() - i - 1;
        if eq_ic(a, "withdist") {
            q.withdist = true;
        } else if eq_ic(a, "withhash") {
            q.withhash = true;
        } else if eq_ic(a, "withcoord") {
            q.withcoord = true;
        } else if eq_ic(a, "any") {
            q.any = true;
        } else if eq_ic(a, "asc") {
            q.sort = Some(true);
        } else if eq_ic(a, "desc") {
            q.sort = Some(false);
        } else if eq_ic(a, "count") && left >= 1 {
            let n = parse_i64(rest[i + 1]).ok_or(errors::ERR_NOT_INT)?;
            if n <= 0 {
                return Err(texts::COUNT_NOT_POSITIVE.into());
            }
            q.count = n as usize;
            i += 1;
        } else if (eq_ic(a, "store") || eq_ic(a, "storedist")) && left >= 1 && store_ok {
            q.store = Some(rest[i + 1].to_vec());
            q.storedist = eq_ic(a, "storedist");
            i += 1;
        } else if eq_ic(a, "storedist") && search_store {
            q.storedist = true;
        } else if eq_ic(a, "frommember") && left >= 1 && search && !fromloc {
            if let Some(z) = z {
                q.center = Some(member_center(z, rest[i + 1])?);
            }
            frommember = true;
            i += 1;
        } else if eq_ic(a, "fromlonlat") && left >= 2 && search && !frommember {
            q.center = Some(lon_lat(&rest[i + 1..i + 3])?);
            fromloc = true;
            i += 2;
        } else if eq_ic(a, "byradius") && left >= 2 && search && !bybox {
            let (r, c) = radius_arg(&rest[i + 1..i + 3])?;
            q.kind = Some(ShapeKind::Radius(r));
            q.conversion = c;
            byradius = true;
            i += 2;
        } else if eq_ic(a, "bybox") && left >= 3 && search && !byradius {
            let (w, h, c) = box_arg(&rest[i + 1..i + 4])?;
            q.kind = Some(ShapeKind::Box {
                width: w,
                height: h,
            });
            q.conversion = c;
            bybox = true;
            i += 3;
        } else {
            return Err(errors::ERR_SYNTAX.into());
        }
        i += 1;
    }
    if q.store.is_some() && (q.withdist || q.withhash || q.withcoord) {
        return Err(format!(
            "ERR {} is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
            if search_store {
                "GEOSEARCHSTORE"
            } else {
                "STORE option in GEORADIUS"
            }
        ));
    }
    let name = String::from_utf8_lossy(args[0]);
    if search && !(frommember || fromloc) {
        return Err(format!(
            "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        ));
    }
    if search && !(byradius || bybox) {
        return Err(format!(
            "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
        ));
    }
    if q.any && q.count == 0 {
        return Err(texts::ANY_WITHOUT_COUNT.into());
    }
    Ok(q)
}

fn search_generic(ctx: &mut Ctx, args: &[&[u8]], v: Variant) {
    let src_i = if v == (Variant::Search { store: true }) {
        2
    } else {
        1
    };
    let src = Key::new(args[src_i]);
    let (db, now, srv) = (ctx.client.db, ctx.now_ms, ctx.srv);
    let limits = ctx.settings.limits;
    // Lock the source and any destination named in the arguments (parsed
    // properly below); a STORE key is locked together with the source.
    let dst_name: Option<Vec<u8>> = match v {
        Variant::Search { store: true } => Some(args[1].to_vec()),
        Variant::Search { store: false } => None,
        Variant::RadiusCoords { store_ok } | Variant::RadiusMember { store_ok } => {
            if store_ok {
                georadius_keys(args).and_then(|k| k.get(1..)?.last().map(|&i| args[i].to_vec()))
            } else {
                None
            }
        }
    };
    let mut lock = vec![Key::new(args[src_i])];
    if let Some(d) = &dst_name {
        lock.push(Key::new(d));
    }
    let mut g = srv.keyspace.lock_keys(&lock);
    let z = match coll::read::<ZsetValue>(g.part(&src), db, &src, now) {
        Ok(z) => z,
        Err(_) => {
            drop(g);
            return ctx.error(ERR_WRONGTYPE);
        }
    };
    let q = match parse_query(args, v, z) {
        Ok(q) => q,
        Err(e) => {
            drop(g);
            return ctx.error(&e);
        }
    };
    let Some(z) = z else {
        drop(g);
        return match &q.store {
            Some(d) => {
                let dk = Key::new(d);
                let gone = g_remove(srv, db, &dk, now);
                ctx.out.int(0);
                if gone {
                    ctx.notify(notify::GENERIC, "del", d);
                }
            }
            None => ctx.out.array_len(0),
        };
    };
    let (lon, lat) = q.center.expect("centre parsed for an existing key");
    let shape = Shape {
        lon,
        lat,
        kind: q.kind.expect("shape parsed"),
        conversion: q.conversion,
    };
    let mut hits = scan(z, &shape, if q.any { q.count } else { 0 });
    let sort = match q.sort {
        None if q.count != 0 && !q.any => Some(true),
        s => s,
    };
    match sort {
        Some(true) => hits.sort_by(|a, b| a.hit.dist.total_cmp(&b.hit.dist)),
        Some(false) => hits.sort_by(|a, b| b.hit.dist.total_cmp(&a.hit.dist)),
        None => {}
    }
    if q.count != 0 {
        hits.truncate(q.count);
    }
    match q.store {
        None => {
            drop(g);
            let out = &mut *ctx.out;
            let opts = q.withdist as usize + q.withhash as usize + q.withcoord as usize;
            out.array_len(hits.len());
            for h in &hits {
                if opts > 0 {
                    out.array_len(opts + 1);
                }
                out.bulk(&h.member);
                if q.withdist {
                    out.bulk(format_distance(h.hit.dist / q.conversion).as_bytes());
                }
                if q.withhash {
                    out.int(h.score as i64);
                }
                if q.withcoord {
                    out.array_len(2);
                    reply_coord(out, h.hit.lon);
                    reply_coord(out, h.hit.lat);
                }
            }
        }
        Some(d) => {
            let dk = Key::new(&d);
            let n = hits.len();
            let mut pairs: Vec<(Vec<u8>, f64)> = hits
                .into_iter()
                .map(|h| {
                    let s = if q.storedist {
                        h.hit.dist / q.conversion
                    } else {
                        h.score
                    };
                    (h.member, s)
                })
                .collect();
            pairs.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
            let existed = if n == 0 {
                g.part(&dk).remove(db, &dk, now).is_some()
            } else {
                let v = ZsetValue::from_sorted(&pairs, &limits);
                coll::store_value(g.part(&dk), db, &dk, now, v);
                true
            };
            drop(g);
            ctx.out.int(n as i64);
            if n > 0 {
                let ev = if matches!(v, Variant::Search { .. }) {
                    "geosearchstore"
                } else {
                    "georadiusstore"
                };
                ctx.notify(notify::ZSET, ev, &d);
            } else if existed {
                ctx.notify(notify::GENERIC, "del", &d);
            }
        }
    }
}

/// Deletes `k` (a missing source with a destination: Redis deletes it).
fn g_remove(srv: &crate::kernel::server::Server, db: usize, k: &Key, now: u64) -> bool {
    srv.keyspace.lock(k).remove(db, k, now).is_some()
}

fn georadius(ctx: &mut Ctx, args: &[&[u8]]) {
    search_generic(ctx, args, Variant::RadiusCoords { store_ok: true })
}

fn georadius_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    search_generic(ctx, args, Variant::RadiusCoords { store_ok: false })
}

fn georadiusbymember(ctx: &mut Ctx, args: &[&[u8]]) {
    search_generic(ctx, args, Variant::RadiusMember { store_ok: true })
}

fn georadiusbymember_ro(ctx: &mut Ctx, args: &[&[u8]]) {
    search_generic(ctx, args, Variant::RadiusMember { store_ok: false })
}

fn geosearch(ctx: &mut Ctx, args: &[&[u8]]) {
    search_generic(ctx, args, Variant::Search { store: false })
}

fn geosearchstore(ctx: &mut Ctx, args: &[&[u8]]) {
    search_generic(ctx, args, Variant::Search { store: true })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn georadius_store_keys() {
        let a: Vec<&[u8]> = vec![
            b"georadius",
            b"src",
            b"1",
            b"2",
            b"3",
            b"km",
            b"STORE",
            b"a",
            b"storedist",
            b"b",
        ];
        assert_eq!(georadius_keys(&a), Some(vec![1, 7, 9]));
        let a: Vec<&[u8]> = vec![b"georadius", b"src", b"1", b"2", b"3", b"km"];
        assert_eq!(georadius_keys(&a), Some(vec![1]));
    }

    #[test]
    fn scan_stops_at_the_any_limit() {
        let lim = collections::Limits::default();
        let mut z = ZsetValue::new_for(1, &lim);
        for i in 0..50 {
            let s = score_of(13.0 + i as f64 * 0.001, 38.0).unwrap();
            z.insert(format!("m{i}").as_bytes(), s, &lim);
        }
        let shape = Shape {
            lon: 13.02,
            lat: 38.0,
            kind: ShapeKind::Radius(100.0),
            conversion: 1000.0,
        };
        assert_eq!(scan(&z, &shape, 0).len(), 50);
        assert_eq!(scan(&z, &shape, 7).len(), 7);
    }
}
