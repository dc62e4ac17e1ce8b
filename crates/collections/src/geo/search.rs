//! Search areas for GEOSEARCH / GEORADIUS (Redis 7.0's
//! `geohashCalculateAreasByShapeWGS84` and `membersOfAllNeighbors`) and the
//! per-candidate shape test (`geoAppendIfWithinShape`).
//!
//! Use: [`Shape::score_ranges`] lists the sorted-set score ranges
//! `[min, max)` to scan, in Redis's order; each member found (in score
//! order within a range, as the sorted set yields them) goes through
//! [`Shape::hit`]. Keeping the hits in scan order and sorting them stably
//! by distance for ASC/DESC gives Redis's order (glibc's `qsort` is a
//! stable merge sort for these sizes). With `COUNT n ANY` Redis stops as
//! soon as `n` hits are collected, both between and within ranges; `COUNT
//! n` without ANY and without ASC/DESC sorts ascending.

use super::dist::{distance, lat_distance, rad_deg, EARTH_RADIUS_M};
use super::hash::{
    decode, decode_score, encode_wgs84, neighbors, Area, HashBits, LAT_RANGE, LONG_RANGE,
};

/// Mercator half-width used by the step estimate.
const MERCATOR_MAX: f64 = 20037726.37;

/// The search shape in the command's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShapeKind {
    /// BYRADIUS r.
    Radius(f64),
    /// BYBOX width height.
    Box { width: f64, height: f64 },
}

/// A search: centre (lon, lat), shape, and metres per unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub lon: f64,
    pub lat: f64,
    pub kind: ShapeKind,
    pub conversion: f64,
}

/// A member inside the shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub lon: f64,
    pub lat: f64,
    /// Distance from the centre in metres (divide by `conversion` to print).
    pub dist: f64,
}

/// The centre cell and its neighbours, some excluded (zero), as Redis
/// computes them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Areas {
    pub center: HashBits,
    pub area: Area,
    /// In Redis's scan order: centre, N, S, E, W, NE, NW, SE, SW.
    pub cells: [HashBits; 9],
}

/// Redis's `geohashEstimateStepsByRadius`.
pub fn estimate_steps(range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return 26;
    }
    let mut r = range_m;
    let mut step: i32 = 1;
    while r < MERCATOR_MAX {
        r *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

impl Shape {
    /// Radius (circle) or half diagonal (box) in metres.
    fn radius_m(&self) -> f64 {
        let r = match self.kind {
            ShapeKind::Radius(r) => r,
            ShapeKind::Box { width, height } => {
                ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
            }
        };
        r * self.conversion
    }

    /// Redis's `geohashBoundingBox`: [min_lon, min_lat, max_lon, max_lat].
    pub fn bounding_box(&self) -> [f64; 4] {
        let (h, w) = match self.kind {
            ShapeKind::Radius(r) => (r, r),
            ShapeKind::Box { width, height } => (height / 2.0, width / 2.0),
        };
        let height = self.conversion * h;
        let width = self.conversion * w;
        let lat_delta = rad_deg(height / EARTH_RADIUS_M);
        let long_delta_top =
            rad_deg(width / EARTH_RADIUS_M / (self.lat + lat_delta).to_radians_redis().cos());
        let long_delta_bottom =
            rad_deg(width / EARTH_RADIUS_M / (self.lat - lat_delta).to_radians_redis().cos());
        let south = self.lat < 0.0;
        let d = if south {
            long_delta_bottom
        } else {
            long_delta_top
        };
        [
            self.lon - d,
            self.lat - lat_delta,
            self.lon + d,
            self.lat + lat_delta,
        ]
    }

    /// The centre cell and neighbours to scan (`None` when the centre is
    /// not a valid coordinate).
    pub fn areas(&self) -> Option<Areas> {
        let b = self.bounding_box();
        let (min_lon, min_lat, max_lon, max_lat) = (b[0], b[1], b[2], b[3]);
        let mut steps = estimate_steps(self.radius_m(), self.lat);
        let mut hash = encode_wgs84(self.lon, self.lat, steps)?;
        let mut nb = neighbors(hash);
        let mut area = decode(LONG_RANGE, LAT_RANGE, hash);
        let dec = |h| decode(LONG_RANGE, LAT_RANGE, h);
        let decrease = dec(nb.north).latitude.max < max_lat
            || dec(nb.south).latitude.min > min_lat
            || dec(nb.east).longitude.max < max_lon
            || dec(nb.west).longitude.min > min_lon;
        if steps > 1 && decrease {
            steps -= 1;
            hash = encode_wgs84(self.lon, self.lat, steps)?;
            nb = neighbors(hash);
            area = decode(LONG_RANGE, LAT_RANGE, hash);
        }
        let zero = HashBits::default();
        if steps >= 2 {
            if area.latitude.min < min_lat {
                nb.south = zero;
                nb.south_west = zero;
                nb.south_east = zero;
            }
            if area.latitude.max > max_lat {
                nb.north = zero;
                nb.north_east = zero;
                nb.north_west = zero;
            }
            if area.longitude.min < min_lon {
                nb.west = zero;
                nb.south_west = zero;
                nb.north_west = zero;
            }
            if area.longitude.max > max_lon {
                nb.east = zero;
                nb.south_east = zero;
                nb.north_east = zero;
            }
        }
        Some(Areas {
            center: hash,
            area,
            cells: [
                hash,
                nb.north,
                nb.south,
                nb.east,
                nb.west,
                nb.north_east,
                nb.north_west,
                nb.south_east,
                nb.south_west,
            ],
        })
    }

    /// The score ranges `[min, max)` to scan, in order: excluded cells and
    /// a cell equal to the previously scanned one (index > 0) are skipped,
    /// as `membersOfAllNeighbors` does.
    pub fn score_ranges(&self) -> Vec<(f64, f64)> {
        let Some(a) = self.areas() else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(9);
        let mut last: usize = 0;
        for i in 0..9 {
            let c = a.cells[i];
            if c.is_zero() {
                continue;
            }
            if last != 0 && c == a.cells[last] {
                continue;
            }
            let min = c.align52();
            let max = HashBits {
                bits: c.bits + 1,
                step: c.step,
            }
            .align52();
            out.push((min as f64, max as f64));
            last = i;
        }
        out
    }

    /// Is the member with this score inside the shape? Its decoded
    /// position and distance (metres) if so.
    pub fn hit(&self, score: f64) -> Option<Hit> {
        let (lon, lat) = decode_score(score);
        let dist = match self.kind {
            ShapeKind::Radius(r) => {
                let d = distance(self.lon, self.lat, lon, lat);
                if d > r * self.conversion {
                    return None;
                }
                d
            }
            ShapeKind::Box { width, height } => {
                let (w, h) = (width * self.conversion, height * self.conversion);
                if lat_distance(lat, self.lat) > h / 2.0 {
                    return None;
                }
                if distance(lon, lat, self.lon, lat) > w / 2.0 {
                    return None;
                }
                distance(self.lon, self.lat, lon, lat)
            }
        };
        Some(Hit { lon, lat, dist })
    }
}

/// `deg_rad` with Redis's constant (`x * (PI / 180)`), which can differ in
/// the last bit from `f64::to_radians`.
trait RedisRadians {
    fn to_radians_redis(self) -> f64;
}

impl RedisRadians for f64 {
    fn to_radians_redis(self) -> f64 {
        self * (std::f64::consts::PI / 180.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps() {
        assert_eq!(estimate_steps(0.0, 0.0), 26);
        assert_eq!(estimate_steps(1.0, 0.0), 24);
        assert_eq!(estimate_steps(200_000.0, 0.0), 6);
        assert_eq!(estimate_steps(200_000.0, 70.0), 5);
        assert_eq!(estimate_steps(200_000.0, -85.0), 4);
        assert_eq!(estimate_steps(1e9, 0.0), 1);
    }

    #[test]
    fn finds_palermo_and_catania() {
        let pal = crate::geo::score_of(13.361389, 38.115556).unwrap();
        let cat = crate::geo::score_of(15.087269, 37.502669).unwrap();
        let s = Shape {
            lon: 15.0,
            lat: 37.0,
            kind: ShapeKind::Radius(200.0),
            conversion: 1000.0,
        };
        let ranges = s.score_ranges();
        for sc in [pal, cat] {
            assert!(ranges.iter().any(|&(lo, hi)| sc >= lo && sc < hi));
        }
        let h = s.hit(cat).unwrap();
        assert_eq!(crate::geo::format_distance(h.dist / 1000.0), "56.4413");
        assert_eq!(
            crate::geo::format_distance(s.hit(pal).unwrap().dist / 1000.0),
            "190.4424"
        );
        let small = Shape {
            kind: ShapeKind::Radius(100.0),
            ..s
        };
        assert!(small.hit(pal).is_none());
        let b = Shape {
            kind: ShapeKind::Box {
                width: 400.0,
                height: 400.0,
            },
            ..s
        };
        assert!(b.hit(pal).is_some() && b.hit(cat).is_some());
    }

    #[test]
    fn invalid_centre_has_no_ranges() {
        let s = Shape {
            lon: 0.0,
            lat: 89.0,
            kind: ShapeKind::Radius(1.0),
            conversion: 1.0,
        };
        assert!(s.score_ranges().is_empty());
    }
}
