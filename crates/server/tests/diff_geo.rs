//! Differential tests: the geo commands (GEOADD ... GEOSEARCHSTORE,
//! GEORADIUS*) against redis-server 7.0, over RESP2 and RESP3: replies
//! (distances, coordinates and hashes as Redis prints them), every error
//! path in Redis's argument order, STORE/STOREDIST results and keyspace
//! events, and searches over random points (near the poles, across the
//! antimeridian, dense clusters) of radius and box shapes at many sizes.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn geo_add_and_read() {
    diff_text(
        "geo_add_and_read",
        r###"
GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania"
GEOADD Sicily 13.361389 38.115556 "Palermo"
GEOADD Sicily CH 13.361390 38.115556 "Palermo" 12 37 "Trapani"
GEOADD Sicily NX CH 1 1 "Palermo" 2 2 "New"
GEOADD Sicily XX CH 13.361389 38.115556 "Palermo" 3 3 "Other"
GEOADD Sicily XX NX 1 1 a
GEOADD Sicily NX
GEOADD Sicily 1 1
GEOADD Sicily 1 1 a 2
GEOADD Sicily CH CH CH
GEOADD Sicily GT 1 1 a
GEOADD Sicily x 1 a
GEOADD Sicily 1 y a
GEOADD Sicily 181 1 a
GEOADD Sicily 1 85.06 a
GEOADD Sicily -180 -85.05112878 edge 180 85.05112878 edge2
GEOADD Sicily 0x10 1 hex
GEOADD Sicily " 1" 1 sp
GEOADD Sicily 1e400 1 big
GEOADD Sicily nan 1 nan
GEOADD nokey XX 1 1 a
EXISTS nokey
ZRANGE Sicily 0 -1 WITHSCORES
OBJECT ENCODING Sicily
GEODIST Sicily Palermo Catania
GEODIST Sicily Palermo Catania km
GEODIST Sicily Palermo Catania KM
GEODIST Sicily Palermo Catania mi
GEODIST Sicily Palermo Catania ft
GEODIST Sicily Palermo Catania m
GEODIST Sicily Palermo Catania yd
GEODIST Sicily Palermo Catania km extra
GEODIST Sicily Palermo nosuch
GEODIST Sicily Palermo Palermo
GEODIST nokey a b
GEODIST nokey a b yd
GEOHASH Sicily Palermo Catania nosuch edge edge2
GEOHASH nokey a b
GEOHASH Sicily
GEOPOS Sicily Palermo Catania nosuch edge edge2 hex
GEOPOS nokey a b
GEOPOS Sicily
SET str x
GEOADD str 1 1 a
GEODIST str a b
GEOHASH str a
GEOPOS str a
GEOSEARCH str FROMLONLAT 1 1 BYRADIUS 1 km
ZADD z -1 neg 4503599627370496 huge 12.5 frac
GEOPOS z neg huge frac
GEOHASH z neg huge frac
GEODIST z neg huge
ZADD zinf inf pinf -inf ninf 1e19 big 2e19 bigger 9.3e18 mid -9.3e18 low
GEOHASH zinf pinf ninf big bigger mid low
GEOPOS zinf pinf ninf big bigger mid low
GEODIST zinf pinf bigger
CONFIG SET zset-max-listpack-entries 2
GEOADD conv 1 1 a 2 2 b 3 3 c
OBJECT ENCODING conv
"###,
    );
}

#[test]
fn geo_search() {
    diff_text(
        "geo_search",
        r###"
GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania" 12.5 37.8 "Marsala" 14.0 38.0 "Cefalu" 15.55 38.19 "Messina"
GEORADIUS Sicily 15 37 200 km
GEORADIUS Sicily 15 37 200 km WITHDIST
GEORADIUS Sicily 15 37 200 km WITHCOORD
GEORADIUS Sicily 15 37 200 km WITHDIST WITHCOORD WITHHASH
GEORADIUS Sicily 15 37 200 km WITHHASH ASC
GEORADIUS Sicily 15 37 200 km DESC
GEORADIUS Sicily 15 37 200 km COUNT 2
GEORADIUS Sicily 15 37 200 km COUNT 2 DESC
GEORADIUS Sicily 15 37 200 km COUNT 2 ANY
GEORADIUS Sicily 15 37 200 km ANY
GEORADIUS Sicily 15 37 200 km COUNT 0
GEORADIUS Sicily 15 37 200 km COUNT -1
GEORADIUS Sicily 15 37 200 km COUNT x
GEORADIUS Sicily 15 37 200 km COUNT
GEORADIUS Sicily 15 37 200 km FOO
GEORADIUS Sicily 15 37 -1 km
GEORADIUS Sicily 15 37 x km
GEORADIUS Sicily 15 37 1 yd
GEORADIUS Sicily 200 37 1 km
GEORADIUS Sicily 15 37 0 km
GEORADIUS Sicily 15 37 200000 m WITHDIST
GEORADIUS Sicily 15 37 200 mi WITHDIST
GEORADIUS Sicily 15 37 2000000 ft WITHDIST
GEORADIUS nokey 15 37 200 km
GEORADIUS nokey 15 37 -1 km
GEORADIUS_RO Sicily 15 37 200 km WITHDIST
GEORADIUS_RO Sicily 15 37 200 km STORE dst
GEORADIUSBYMEMBER Sicily Palermo 100 km WITHDIST
GEORADIUSBYMEMBER Sicily nosuch 100 km
GEORADIUSBYMEMBER Sicily Palermo -1 km
GEORADIUSBYMEMBER nokey Palermo -1 km
GEORADIUSBYMEMBER nokey Palermo 1 km STORE dst
GEORADIUSBYMEMBER_RO Sicily Palermo 300 km ASC COUNT 3 WITHCOORD
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ASC
GEOSEARCH Sicily FROMMEMBER Palermo BYRADIUS 200 km DESC WITHDIST
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 400 400 km ASC WITHCOORD WITHDIST WITHHASH
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 100 400 km
GEOSEARCH Sicily FROMMEMBER Messina BYBOX 50 50 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX -1 1 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 x km
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX x 1 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYBOX 1 1 yd
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km BYBOX 1 1 km
GEOSEARCH Sicily FROMLONLAT 15 37 FROMMEMBER Palermo BYRADIUS 1 km
GEOSEARCH Sicily FROMMEMBER Palermo FROMLONLAT 15 37 BYRADIUS 1 km
GEOSEARCH Sicily BYRADIUS 1 km
GEOSEARCH Sicily FROMLONLAT 15 37 ASC
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km STORE x
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST
GEOSEARCH Sicily FROMMEMBER nosuch BYRADIUS 200 km
GEOSEARCH nokey FROMMEMBER nosuch BYRADIUS 200 km
GEOSEARCH nokey FROMMEMBER nosuch BYRADIUS -1 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km ANY
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 1 ANY
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 200 km COUNT 10 ANY DESC
GEOSEARCH Sicily FROMLONLAT 200 37 BYRADIUS 200 km
GEOSEARCH Sicily FROMLONLAT 15 37 BYRADIUS 1 km
GEOSEARCH Sicily FROMLONLAT 15
GEOSEARCH Sicily frommember Palermo byradius 200 KM withdist
"###,
    );
}

#[test]
fn geo_store() {
    diff_text(
        "geo_store",
        r###"
GEOADD Sicily 13.361389 38.115556 "Palermo" 15.087269 37.502669 "Catania" 12.5 37.8 "Marsala"
GEORADIUS Sicily 15 37 200 km STORE dst
ZRANGE dst 0 -1 WITHSCORES
TYPE dst
GEORADIUS Sicily 15 37 200 km STOREDIST dst
ZRANGE dst 0 -1 WITHSCORES
GEORADIUS Sicily 15 37 200 km STORE a STOREDIST b
EXISTS a
ZRANGE b 0 -1 WITHSCORES
GEORADIUS Sicily 15 37 200 km STORE dst WITHDIST
GEORADIUS Sicily 15 37 200 km STORE
GEORADIUS Sicily 15 37 1 km STORE dst
EXISTS dst
GEORADIUSBYMEMBER Sicily Palermo 200 km STORE dst COUNT 1
ZRANGE dst 0 -1 WITHSCORES
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 200 km
ZRANGE dst 0 -1 WITHSCORES
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 200 km STOREDIST
ZRANGE dst 0 -1 WITHSCORES
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYBOX 200 200 mi STOREDIST COUNT 1
ZRANGE dst 0 -1 WITHSCORES
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 200 km WITHDIST
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 200 km STORE x
GEOSEARCHSTORE dst nokey FROMLONLAT 15 37 BYRADIUS 200 km
EXISTS dst
SET dst x
EXPIRE dst 100
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 200 km
TTL dst
TYPE dst
GEOSEARCHSTORE dst Sicily FROMLONLAT 15 37 BYRADIUS 1 m
EXISTS dst
SET src x
GEOSEARCHSTORE dst src FROMLONLAT 15 37 BYRADIUS 1 m
GEORADIUS src 15 37 1 km STORE dst
GEOSEARCHSTORE Sicily Sicily FROMLONLAT 15 37 BYRADIUS 100 km
ZRANGE Sicily 0 -1 WITHSCORES
COMMAND GETKEYS GEORADIUS src 1 1 1 km STORE a STOREDIST b
COMMAND GETKEYS GEOSEARCHSTORE d s FROMLONLAT 1 1 BYRADIUS 1 km
"###,
    );
}

#[test]
fn geo_notifications() {
    let script = "
GEOADD g 1 1 a 2 2 b
GEOADD g 1 1 a
GEOADD g XX 3 3 a
GEORADIUS g 1 1 500 km STORE d
GEORADIUS g 1 1 500 km STOREDIST d
GEOSEARCHSTORE d g FROMLONLAT 1 1 BYRADIUS 500 km
GEOSEARCHSTORE d g FROMLONLAT 50 50 BYRADIUS 1 km
GEOSEARCHSTORE d g FROMLONLAT 50 50 BYRADIUS 1 km
GEORADIUS nokey 1 1 1 km STORE g
";
    let cmds: Vec<Vec<&str>> = script
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    let cmds: Vec<&[&str]> = cmds.iter().map(|c| c.as_slice()).collect();
    diff_events(&cmds);
}

/// xorshift64*: deterministic points without a dev-dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (self.next() >> 11) as f64 / (1u64 << 53) as f64 * (hi - lo)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn point(r: &mut Rng) -> (f64, f64) {
    let sign = |r: &mut Rng| if r.below(2) == 0 { 1.0 } else { -1.0 };
    match r.below(5) {
        0 => (r.range(-180.0, 180.0), r.range(-85.05, 85.05)),
        1 => (r.range(-180.0, 180.0), r.range(80.0, 85.05) * sign(r)),
        2 => (r.range(179.0, 180.0) * sign(r), r.range(-60.0, 60.0)),
        3 => (r.range(13.0, 13.5), r.range(38.0, 38.3)),
        _ => (r.range(-0.5, 0.5), r.range(-0.5, 0.5)),
    }
}

fn center(r: &mut Rng) -> (f64, f64) {
    let sign = |r: &mut Rng| if r.below(2) == 0 { 1.0 } else { -1.0 };
    match r.below(5) {
        0 => (r.range(-180.0, 180.0), r.range(-85.0, 85.0)),
        1 => (r.range(-180.0, 180.0), r.range(75.0, 85.05) * sign(r)),
        2 => (179.95 * sign(r), r.range(-50.0, 50.0)),
        3 => (r.range(13.0, 13.5), r.range(38.0, 38.3)),
        _ => (r.range(-0.5, 0.5), r.range(-0.5, 0.5)),
    }
}

/// `points` random points, then `searches` random GEOSEARCH / GEORADIUS
/// queries (radius and box, 50 m to 6000 km, every unit, sorted or not,
/// COUNT with and without ANY, from a point or a member) on both servers:
/// every reply must be identical.
fn random_searches(name: &str, points: usize, searches: usize, seed: u64, max_km: f64) {
    let mut r = Rng(seed);
    let mut s = Script::new(name);
    let mut add: Vec<String> = vec!["GEOADD".into(), "g".into()];
    for i in 0..points {
        let (lon, lat) = point(&mut r);
        add.push(format!("{lon:.6}"));
        add.push(format!("{lat:.6}"));
        add.push(format!("m{i}"));
        if add.len() > 3000 || i + 1 == points {
            s = s.cmd(&add);
            add.truncate(2);
        }
    }
    s = s.cmd(&["ZCARD", "g"]);
    let units = [("m", 1.0), ("km", 1000.0), ("mi", 1609.34), ("ft", 0.3048)];
    let sizes_km: Vec<f64> = [0.05, 1.0, 10.0, 100.0, 500.0, 2000.0, 6000.0]
        .into_iter()
        .filter(|&k| k <= max_km)
        .collect();
    for _ in 0..searches {
        let (lon, lat) = center(&mut r);
        let (unit, conv) = units[r.below(4) as usize];
        let size = sizes_km[r.below(sizes_km.len() as u64) as usize] * r.range(0.5, 1.5);
        let v = format!("{:.3}", size * 1000.0 / conv);
        let mut a: Vec<String> = Vec::new();
        let from_member = r.below(5) == 0;
        let member = format!("m{}", r.below(points as u64));
        match r.below(3) {
            0 => {
                // GEORADIUS / GEORADIUSBYMEMBER.
                if from_member {
                    a.extend(["GEORADIUSBYMEMBER".into(), "g".into(), member]);
                } else {
                    a.extend([
                        "GEORADIUS".into(),
                        "g".into(),
                        format!("{lon:.6}"),
                        format!("{lat:.6}"),
                    ]);
                }
                a.extend([v.clone(), unit.into()]);
            }
            k => {
                a.extend(["GEOSEARCH".into(), "g".into()]);
                if from_member {
                    a.extend(["FROMMEMBER".into(), member]);
                } else {
                    a.extend([
                        "FROMLONLAT".into(),
                        format!("{lon:.6}"),
                        format!("{lat:.6}"),
                    ]);
                }
                if k == 1 {
                    a.extend(["BYRADIUS".into(), v.clone(), unit.into()]);
                } else {
                    let h = format!("{:.3}", size * 1000.0 / conv * r.range(0.3, 2.0));
                    a.extend(["BYBOX".into(), v.clone(), h, unit.into()]);
                }
            }
        }
        match r.below(3) {
            0 => a.push("ASC".into()),
            1 => a.push("DESC".into()),
            _ => {}
        }
        if r.below(3) == 0 {
            a.push("COUNT".into());
            a.push((1 + r.below(20)).to_string());
            if r.below(2) == 0 {
                a.push("ANY".into());
            }
        }
        a.extend(["WITHDIST".into(), "WITHHASH".into(), "WITHCOORD".into()]);
        s = s.cmd(&a);
    }
    diff(&s);
}

#[test]
fn geo_random_searches() {
    random_searches(
        "geo_random_searches",
        3_000,
        300,
        0x9e37_79b9_7f4a_7c15,
        6000.0,
    );
}

/// The issue's size: `cargo test --release -p server --test diff_geo --
/// --ignored geo_random_100k`. Radii and box sides up to 3000 km; wider ones
/// return tens of thousands of members, whose reply can take redis-server
/// longer than the harness's 3 s read timeout on a loaded machine (the
/// 3000-point run above covers the large sizes).
#[test]
#[ignore]
fn geo_random_100k() {
    random_searches(
        "geo_random_100k",
        100_000,
        500,
        0x2545_f491_4f6c_dd1d,
        2000.0,
    );
}
