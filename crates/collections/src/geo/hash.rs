//! Redis's 52-bit geohash: interleaved longitude/latitude bits stored as a
//! sorted-set score.
//!
//! Facts (Redis 7.0 `geohash.c`, checked against redis-server 7.0.15 in
//! `tests/geo_redis.rs`):
//! * coordinates are valid for longitude in [-180, 180] and latitude in
//!   [-85.05112878, 85.05112878] (the Web Mercator limits);
//! * a coordinate's offset in its range, scaled by 2^step and truncated to
//!   an integer, gives `step` bits per axis; latitude bits take the even
//!   positions and longitude bits the odd ones (longitude's top bit is the
//!   hash's top bit); the score is the 52-bit hash (step 26) as a double;
//! * decoding gives the cell's centre, clamped to the valid ranges;
//! * the GEOHASH string re-encodes the decoded centre on the standard
//!   latitude range [-90, 90] and prints 11 base-32 characters, the last one
//!   always `0` (52 bits only cover 10.4 characters).

/// Longitude limits.
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;
/// Latitude limits (EPSG:900913 / Web Mercator).
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;
/// Bits per axis of the stored hash.
pub const STEP_MAX: u8 = 26;

/// A coordinate range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

/// The ranges geohashes are computed on.
pub const LONG_RANGE: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
pub const LAT_RANGE: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// A hash of `step` bits per axis (`bits` holds `2 * step` bits).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HashBits {
    pub bits: u64,
    pub step: u8,
}

impl HashBits {
    /// Redis's `HASHISZERO`: no bits and no step (an excluded neighbour).
    pub fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The hash moved to 52-bit precision (`geohashAlign52Bits`).
    pub fn align52(&self) -> u64 {
        self.bits << (52 - 2 * self.step as u32)
    }
}

/// A decoded cell.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    pub hash: HashBits,
    pub longitude: Range,
    pub latitude: Range,
}

/// Spread the low 32 bits of `v` to the even bit positions.
fn spread(v: u32) -> u64 {
    let mut x = v as u64;
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// Gather the even bit positions of `x` into 32 bits.
fn squash(x: u64) -> u32 {
    let mut x = x & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF;
    x as u32
}

/// Latitude bits at even positions, longitude bits at odd positions.
pub fn interleave(lat: u32, lon: u32) -> u64 {
    spread(lat) | (spread(lon) << 1)
}

/// Inverse of [`interleave`]: (lat, lon).
pub fn deinterleave(bits: u64) -> (u32, u32) {
    (squash(bits), squash(bits >> 1))
}

/// True if Redis accepts the pair (GEOADD, FROMLONLAT).
pub fn valid_lon_lat(lon: f64, lat: f64) -> bool {
    (LONG_MIN..=LONG_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat)
}

/// GEOADD's error for an invalid pair, as Redis prints it (`%f,%f`).
pub fn invalid_pair_error(lon: f64, lat: f64) -> String {
    format!("ERR invalid longitude,latitude pair {lon:.6},{lat:.6}")
}

/// Redis's `geohashEncode`: `None` outside the valid limits or the given
/// ranges (NaN included).
pub fn encode(
    long_range: Range,
    lat_range: Range,
    lon: f64,
    lat: f64,
    step: u8,
) -> Option<HashBits> {
    if !valid_lon_lat(lon, lat) {
        return None;
    }
    if !(lat_range.min..=lat_range.max).contains(&lat)
        || !(long_range.min..=long_range.max).contains(&lon)
    {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_off = (lat - lat_range.min) / (lat_range.max - lat_range.min) * scale;
    let lon_off = (lon - long_range.min) / (long_range.max - long_range.min) * scale;
    // C's conversion of a double to uint32_t (values are in [0, 2^step]).
    Some(HashBits {
        bits: interleave(lat_off as u32, lon_off as u32),
        step,
    })
}

/// [`encode`] on Redis's WGS84 ranges.
pub fn encode_wgs84(lon: f64, lat: f64, step: u8) -> Option<HashBits> {
    encode(LONG_RANGE, LAT_RANGE, lon, lat, step)
}

/// The sorted-set score of a valid pair (`None` if invalid).
pub fn score_of(lon: f64, lat: f64) -> Option<f64> {
    encode_wgs84(lon, lat, STEP_MAX).map(|h| h.align52() as f64)
}

/// Redis's `geohashDecode`: the cell of `hash`.
pub fn decode(long_range: Range, lat_range: Range, hash: HashBits) -> Area {
    let (ilat, ilon) = deinterleave(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let div = (1u64 << hash.step) as f64;
    Area {
        hash,
        latitude: Range {
            min: lat_range.min + (ilat as f64 / div) * lat_scale,
            max: lat_range.min + ((ilat as f64 + 1.0) / div) * lat_scale,
        },
        longitude: Range {
            min: long_range.min + (ilon as f64 / div) * long_scale,
            max: long_range.min + ((ilon as f64 + 1.0) / div) * long_scale,
        },
    }
}

/// The centre of a cell, clamped to the valid ranges: (lon, lat).
pub fn area_center(a: &Area) -> (f64, f64) {
    let lon = ((a.longitude.min + a.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((a.latitude.min + a.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// The (lon, lat) a score stands for (Redis's `decodeGeohash`). Any score
/// decodes, as in Redis: the double is converted to 64 bits the way the C
/// cast does on x86-64 (so a score that is not a 52-bit hash gives some
/// clamped coordinate rather than an error).
pub fn decode_score(score: f64) -> (f64, f64) {
    let bits = if score.is_nan() {
        1u64 << 63
    } else if score >= 18_446_744_073_709_551_616f64 {
        // 2^64 and up (inf included): C's code converts x - 2^63, which
        // is out of range too (the "indefinite" 2^63), then flips the top
        // bit back: 0. A Rust cast would saturate to u64::MAX.
        0
    } else if score >= 9_223_372_036_854_775_808f64 {
        score as u64
    } else {
        score as i64 as u64
    };
    let a = decode(
        LONG_RANGE,
        LAT_RANGE,
        HashBits {
            bits,
            step: STEP_MAX,
        },
    );
    area_center(&a)
}

const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

/// GEOHASH's 11-character string of a stored score.
pub fn geohash_string(score: f64) -> [u8; 11] {
    let (lon, lat) = decode_score(score);
    let std_lat = Range {
        min: -90.0,
        max: 90.0,
    };
    // The decoded centre is always within the limits.
    let bits = encode(LONG_RANGE, std_lat, lon, lat, STEP_MAX).map_or(0, |h| h.bits);
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        let idx = (bits >> (52 - (i + 1) * 5)) & 0x1f;
        *c = ALPHABET[idx as usize];
    }
    out
}

fn move_x(h: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let shift = 64 - 2 * h.step as u32;
    let mut x = h.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let y = h.bits & 0x5555_5555_5555_5555;
    let zz = 0x5555_5555_5555_5555u64 >> shift;
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaa_aaaa_aaaa_aaaau64 >> shift;
    h.bits = x | y;
}

fn move_y(h: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let shift = 64 - 2 * h.step as u32;
    let x = h.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let mut y = h.bits & 0x5555_5555_5555_5555;
    let zz = 0xaaaa_aaaa_aaaa_aaaau64 >> shift;
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555_5555_5555_5555u64 >> shift;
    h.bits = x | y;
}

/// The eight neighbours of a cell (wrapping at the range edges, as Redis).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Neighbors {
    pub north: HashBits,
    pub east: HashBits,
    pub west: HashBits,
    pub south: HashBits,
    pub north_east: HashBits,
    pub south_east: HashBits,
    pub north_west: HashBits,
    pub south_west: HashBits,
}

/// Redis's `geohashNeighbors`.
pub fn neighbors(h: HashBits) -> Neighbors {
    let at = |dx: i8, dy: i8| {
        let mut n = h;
        move_x(&mut n, dx);
        move_y(&mut n, dy);
        n
    };
    Neighbors {
        east: at(1, 0),
        west: at(-1, 0),
        south: at(0, -1),
        north: at(0, 1),
        north_west: at(-1, 1),
        south_west: at(-1, -1),
        north_east: at(1, 1),
        south_east: at(1, -1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Scores that are not 52-bit hashes decode as C's cast on x86-64
    /// makes them: 2^64 and up (inf too) as 0, as redis-server 7.0
    /// answers (GEOHASH of a member scored inf is "00bh0hbj200").
    #[test]
    fn scores_past_u64_decode_as_zero() {
        for s in [f64::INFINITY, 1.8446744073709552e19, 2e19, 1e300] {
            assert_eq!(decode_score(s), decode_score(0.0), "{s}");
        }
        assert_eq!(&geohash_string(f64::INFINITY), b"00bh0hbj200");
        assert_ne!(decode_score(1e19), decode_score(0.0));
    }

    #[test]
    fn interleave_roundtrip() {
        for &(a, b) in &[
            (0u32, 0u32),
            (1, 0),
            (0, 1),
            (0x3ff_ffff, 0x155_5555),
            (u32::MAX, 7),
        ] {
            let v = interleave(a, b);
            assert_eq!(deinterleave(v), (a, b));
        }
        assert_eq!(interleave(1, 0), 1);
        assert_eq!(interleave(0, 1), 2);
    }

    #[test]
    fn known_scores() {
        // From redis-server 7.0.15 (GEOADD then ZSCORE / GEOHASH).
        let s = score_of(13.361389, 38.115556).unwrap();
        assert_eq!(s, 3479099956230698.0);
        assert_eq!(&geohash_string(s), b"sqc8b49rny0");
        assert_eq!(&geohash_string(score_of(0.0, 0.0).unwrap()), b"s0000000000");
        assert!(score_of(180.1, 0.0).is_none());
        assert!(score_of(0.0, 85.06).is_none());
        assert!(score_of(f64::NAN, 0.0).is_none());
        assert_eq!(
            invalid_pair_error(200.0, 10.0),
            "ERR invalid longitude,latitude pair 200.000000,10.000000"
        );
    }

    #[test]
    fn neighbours_wrap() {
        let h = encode_wgs84(179.99, 0.0, 3).unwrap();
        let n = neighbors(h);
        let e = decode(LONG_RANGE, LAT_RANGE, n.east);
        assert_eq!(e.longitude.min, -180.0, "east of the last column wraps");
        let w = decode(LONG_RANGE, LAT_RANGE, n.west);
        assert!(w.longitude.max <= decode(LONG_RANGE, LAT_RANGE, h).longitude.min);
    }
}
