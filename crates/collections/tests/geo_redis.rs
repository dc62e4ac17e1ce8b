//! `collections::geo` against redis-server 7.0: random points (uniform,
//! near the poles, across the antimeridian, in dense clusters) are added
//! with GEOADD; scores, GEOPOS, GEOHASH, GEODIST and GEOSEARCH results
//! (BYRADIUS and BYBOX at several sizes, unsorted scan order, ASC, DESC,
//! COUNT, COUNT ANY, FROMMEMBER) must be identical as printed strings.
//! The search side uses [`Shape::score_ranges`] over a sorted list of
//! (score, member), as the command layer will over a sorted set.

mod common;

use collections::geo::search::{Shape, ShapeKind};
use collections::geo::*;
use common::{Redis, V};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn b(s: impl ToString) -> Vec<u8> {
    s.to_string().into_bytes()
}

/// Members sorted as a sorted set orders them: score, then member bytes.
struct Zset {
    items: Vec<(f64, Vec<u8>)>,
    by_member: std::collections::HashMap<Vec<u8>, f64>,
}

impl Zset {
    fn score(&self, m: &[u8]) -> Option<f64> {
        self.by_member.get(m).copied()
    }
}

fn random_point(rng: &mut StdRng) -> (f64, f64) {
    match rng.gen_range(0..6) {
        0 => (
            rng.gen_range(-180.0..=180.0),
            rng.gen_range(LAT_MIN..=LAT_MAX),
        ),
        1 => (
            rng.gen_range(-180.0..=180.0),
            rng.gen_range(80.0..=LAT_MAX) * if rng.gen_bool(0.5) { 1.0 } else { -1.0 },
        ),
        2 => (
            if rng.gen_bool(0.5) {
                rng.gen_range(179.0..=180.0)
            } else {
                rng.gen_range(-180.0..=-179.0)
            },
            rng.gen_range(-60.0..=60.0),
        ),
        3 => (rng.gen_range(13.0..13.5), rng.gen_range(38.0..38.3)),
        4 => (rng.gen_range(-0.5..0.5), rng.gen_range(-0.5..0.5)),
        _ => {
            // Six-decimal inputs as clients often send.
            let lon: f64 = rng.gen_range(-180.0..=180.0);
            let lat: f64 = rng.gen_range(-85.0..=85.0);
            (
                format!("{lon:.6}").parse().unwrap(),
                format!("{lat:.6}").parse().unwrap(),
            )
        }
    }
}

fn random_center(rng: &mut StdRng) -> (f64, f64) {
    match rng.gen_range(0..5) {
        0 => (rng.gen_range(-180.0..=180.0), rng.gen_range(-85.0..=85.0)),
        1 => (
            rng.gen_range(-180.0..=180.0),
            rng.gen_range(75.0..=85.05) * if rng.gen_bool(0.5) { 1.0 } else { -1.0 },
        ),
        2 => (
            if rng.gen_bool(0.5) { 179.9 } else { -179.9 },
            rng.gen_range(-50.0..50.0),
        ),
        3 => (rng.gen_range(13.0..13.5), rng.gen_range(38.0..38.3)),
        _ => (rng.gen_range(-0.5..0.5), rng.gen_range(-0.5..0.5)),
    }
}

fn coord_v(lon: f64, lat: f64) -> V {
    V::Arr(vec![V::bulk(format_coord(lon)), V::bulk(format_coord(lat))])
}

struct Search {
    shape: Shape,
    unit: &'static str,
    order: Option<bool>,
    count: Option<(usize, bool)>,
}

fn run_search(z: &Zset, q: &Search) -> V {
    let mut hits: Vec<(Vec<u8>, f64, Hit)> = Vec::new();
    let limit = q.count.filter(|c| c.1).map(|c| c.0).unwrap_or(0);
    'outer: for (lo, hi) in q.shape.score_ranges() {
        if limit != 0 && hits.len() >= limit {
            break;
        }
        let start = z.items.partition_point(|e| e.0 < lo);
        for (score, m) in &z.items[start..] {
            if *score >= hi {
                break;
            }
            if let Some(h) = q.shape.hit(*score) {
                hits.push((m.clone(), *score, h));
                if limit != 0 && hits.len() >= limit {
                    break 'outer;
                }
            }
        }
    }
    // Redis: COUNT without ANY and without ASC/DESC sorts ascending.
    let order = match (q.order, q.count) {
        (None, Some((_, false))) => Some(true),
        (o, _) => o,
    };
    match order {
        Some(true) => hits.sort_by(|a, b| a.2.dist.partial_cmp(&b.2.dist).unwrap()),
        Some(false) => hits.sort_by(|a, b| b.2.dist.partial_cmp(&a.2.dist).unwrap()),
        None => {}
    }
    if let Some((n, _)) = q.count {
        hits.truncate(n);
    }
    V::Arr(
        hits.iter()
            .map(|(m, score, h)| {
                V::Arr(vec![
                    V::Bulk(m.clone()),
                    V::bulk(format_distance(h.dist / q.shape.conversion)),
                    V::Int(*score as i64),
                    coord_v(h.lon, h.lat),
                ])
            })
            .collect(),
    )
}

fn search_args(key: &[u8], q: &Search, from_member: Option<&[u8]>) -> Vec<Vec<u8>> {
    let mut a = vec![b("GEOSEARCH"), key.to_vec()];
    match from_member {
        Some(m) => {
            a.push(b("FROMMEMBER"));
            a.push(m.to_vec());
        }
        None => {
            a.push(b("FROMLONLAT"));
            a.push(b(format!("{:.17}", q.shape.lon)));
            a.push(b(format!("{:.17}", q.shape.lat)));
        }
    }
    match q.shape.kind {
        ShapeKind::Radius(r) => {
            a.push(b("BYRADIUS"));
            a.push(b(r));
        }
        ShapeKind::Box { width, height } => {
            a.push(b("BYBOX"));
            a.push(b(width));
            a.push(b(height));
        }
    }
    a.push(b(q.unit));
    match q.order {
        Some(true) => a.push(b("ASC")),
        Some(false) => a.push(b("DESC")),
        None => {}
    }
    if let Some((n, any)) = q.count {
        a.push(b("COUNT"));
        a.push(b(n));
        if any {
            a.push(b("ANY"));
        }
    }
    a.extend([b("WITHDIST"), b("WITHHASH"), b("WITHCOORD")]);
    a
}

fn diff(points: usize, searches: usize, seed: u64) {
    let Some(mut r) = Redis::start() else {
        return;
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let key = b"geo".to_vec();
    let mut pts = Vec::new();
    let mut cmds = Vec::new();
    let mut cmd = vec![b("GEOADD"), key.clone()];
    for i in 0..points {
        let (lon, lat) = random_point(&mut rng);
        pts.push((format!("m{i}").into_bytes(), lon, lat));
        cmd.extend([
            b(format!("{lon:.17}")),
            b(format!("{lat:.17}")),
            b(format!("m{i}")),
        ]);
        if cmd.len() > 3000 {
            cmds.push(std::mem::replace(&mut cmd, vec![b("GEOADD"), key.clone()]));
        }
    }
    cmds.push(cmd);
    r.pipeline(&cmds);

    // Scores.
    let all = r.cmd(&[b("ZRANGE"), key.clone(), b("0"), b("-1"), b("WITHSCORES")]);
    let a = all.arr();
    let mut items: Vec<(f64, Vec<u8>)> = a
        .chunks(2)
        .map(|c| (c[1].text().parse::<f64>().unwrap(), c[0].bytes().to_vec()))
        .collect();
    assert_eq!(items.len(), points);
    let by_member: std::collections::HashMap<Vec<u8>, f64> =
        items.iter().map(|(s, m)| (m.clone(), *s)).collect();
    for (m, lon, lat) in &pts {
        // The text we sent parses back to the same double.
        let want = score_of(*lon, *lat).unwrap();
        assert_eq!(by_member[m], want, "score of {lon} {lat}");
    }
    items.sort_by(|x, y| x.0.partial_cmp(&y.0).unwrap().then(x.1.cmp(&y.1)));
    let z = Zset { items, by_member };

    // GEOPOS and GEOHASH, in batches.
    for chunk in pts.chunks(500) {
        let mut pos = vec![b("GEOPOS"), key.clone()];
        let mut gh = vec![b("GEOHASH"), key.clone()];
        for (m, _, _) in chunk {
            pos.push(m.clone());
            gh.push(m.clone());
        }
        let got = r.cmd(&pos);
        let want = V::Arr(
            chunk
                .iter()
                .map(|(m, _, _)| {
                    let (lon, lat) = decode_score(z.score(m).unwrap());
                    coord_v(lon, lat)
                })
                .collect(),
        );
        assert_eq!(got, want, "GEOPOS");
        let got = r.cmd(&gh);
        let want = V::Arr(
            chunk
                .iter()
                .map(|(m, _, _)| V::Bulk(geohash_string(z.score(m).unwrap()).to_vec()))
                .collect(),
        );
        assert_eq!(got, want, "GEOHASH");
    }

    // GEODIST on random pairs and units.
    let units = ["m", "km", "mi", "ft"];
    let mut batch = Vec::new();
    let mut want = Vec::new();
    for _ in 0..2000 {
        let i = rng.gen_range(0..points);
        let j = if rng.gen_bool(0.05) {
            i
        } else {
            rng.gen_range(0..points)
        };
        let u = units[rng.gen_range(0..4)];
        let (p1, p2) = (&pts[i].0, &pts[j].0);
        batch.push(vec![
            b("GEODIST"),
            key.clone(),
            p1.clone(),
            p2.clone(),
            b(u),
        ]);
        let (x1, y1) = decode_score(z.score(p1).unwrap());
        let (x2, y2) = decode_score(z.score(p2).unwrap());
        let d = distance(x1, y1, x2, y2) / unit_factor(u.as_bytes()).unwrap();
        want.push(V::bulk(format_distance(d)));
    }
    let got = r.pipeline(&batch);
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{:?}", batch[k]);
    }

    // Searches.
    let sizes_km = [0.05, 1.0, 10.0, 100.0, 500.0, 2000.0, 6000.0];
    for n in 0..searches {
        let (lon, lat) = random_center(&mut rng);
        let size = sizes_km[rng.gen_range(0..sizes_km.len())] * rng.gen_range(0.5..1.5);
        let (unit, conv) =
            [("km", 1000.0), ("m", 1.0), ("mi", 1609.34), ("ft", 0.3048)][rng.gen_range(0..4)];
        let in_unit = size * 1000.0 / conv;
        // Round to what the argument will carry.
        let in_unit: f64 = format!("{in_unit:.3}").parse().unwrap();
        let kind = if rng.gen_bool(0.5) {
            ShapeKind::Radius(in_unit)
        } else {
            let h: f64 = format!("{:.3}", in_unit * rng.gen_range(0.3..2.0))
                .parse()
                .unwrap();
            ShapeKind::Box {
                width: in_unit,
                height: h,
            }
        };
        let from_member = rng
            .gen_bool(0.2)
            .then(|| pts[rng.gen_range(0..points)].0.clone());
        let (clon, clat) = match &from_member {
            Some(m) => decode_score(z.score(m).unwrap()),
            None => (lon, lat),
        };
        let q = Search {
            shape: Shape {
                lon: clon,
                lat: clat,
                kind,
                conversion: conv,
            },
            unit,
            order: [None, Some(true), Some(false)][rng.gen_range(0..3)],
            count: rng
                .gen_bool(0.3)
                .then(|| (rng.gen_range(1..20), rng.gen_bool(0.5))),
        };
        let args = search_args(&key, &q, from_member.as_deref());
        let got = r.cmd(&args);
        let mine = run_search(&z, &q);
        if got != mine {
            let g = got.arr().len();
            let m = mine.arr().len();
            panic!(
                "search {n} differs ({g} vs {m} results): {:?}\nredis: {:?}\npetrel: {:?}",
                args.iter()
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect::<Vec<_>>(),
                &got.arr()[..g.min(5)],
                &mine.arr()[..m.min(5)]
            );
        }
    }
}

#[test]
fn geo_matches_redis() {
    diff(20_000, 600, 1);
}

#[test]
fn geo_dense_matches_redis() {
    diff(3_000, 600, 2);
}

#[test]
fn geo_errors_match_redis() {
    let Some(mut r) = Redis::start() else {
        return;
    };
    for (lon, lat) in [
        (200.0, 10.0),
        (10.0, 86.0),
        (-180.5, -85.1),
        (0.1234567, 85.06),
    ] {
        let got = r.cmd(&[b("GEOADD"), b("g"), b(lon), b(lat), b("m")]);
        assert!(!valid_lon_lat(lon, lat));
        assert_eq!(got, V::Err(invalid_pair_error(lon, lat)));
    }
    r.cmd(&[
        b("GEOADD"),
        b("g"),
        b("1"),
        b("1"),
        b("a"),
        b("2"),
        b("2"),
        b("b"),
    ]);
    let got = r.cmd(&[b("GEODIST"), b("g"), b("a"), b("b"), b("yd")]);
    assert_eq!(got, V::Err(UNIT_ERROR.to_string()));
    // Edge coordinates round-trip and print as Redis prints them.
    for (lon, lat) in [
        (-180.0, LAT_MAX),
        (180.0, LAT_MIN),
        (0.0, 0.0),
        (-0.0, -0.0),
    ] {
        r.cmd(&[b("GEOADD"), b("e"), b(lon), b(lat), b("x")]);
        let got = r.cmd(&[b("GEOPOS"), b("e"), b("x")]);
        let (x, y) = decode_score(score_of(lon, lat).unwrap());
        assert_eq!(got, V::Arr(vec![coord_v(x, y)]));
        let got = r.cmd(&[b("GEOHASH"), b("e"), b("x")]);
        assert_eq!(
            got,
            V::Arr(vec![V::Bulk(
                geohash_string(score_of(lon, lat).unwrap()).to_vec()
            )])
        );
    }
    // A score that is not a geohash still decodes (ZADD then GEOPOS).
    for s in ["-1", "4503599627370496", "1e18", "12.5"] {
        r.cmd(&[b("ZADD"), b("z"), b(s), b("w")]);
        let got = r.cmd(&[b("GEOPOS"), b("z"), b("w")]);
        let (x, y) = decode_score(s.parse().unwrap());
        assert_eq!(got, V::Arr(vec![coord_v(x, y)]), "score {s}");
        let got = r.cmd(&[b("GEOHASH"), b("z"), b("w")]);
        assert_eq!(
            got,
            V::Arr(vec![V::Bulk(geohash_string(s.parse().unwrap()).to_vec())]),
            "score {s}"
        );
    }
}

/// The size: `cargo test --release -p collections --test geo_redis
/// -- --ignored geo_100k`.
#[test]
#[ignore]
fn geo_100k_matches_redis() {
    diff(100_000, 4000, 3);
}
