//! Geospatial math of Redis 7.0, as pure functions over sorted-set scores
//! (no store access; the command layer keeps members in a sorted set).
//!
//! * [`hash`]: the 52-bit geohash (interleaved bits on the Web Mercator
//!   latitude range), score encoding/decoding, neighbours, the GEOHASH
//!   string;
//! * [`dist`]: the haversine distance with Redis's Earth radius, units,
//!   and the printed forms of distances (`fixedpoint_d2string`, 4 digits)
//!   and coordinates (`%.17Lf`, trailing zeros trimmed);
//! * [`search`]: GEOSEARCH/GEORADIUS areas: the score ranges to scan and
//!   the shape test of each candidate.
//!
//! Everything is checked number-for-number (as printed strings) against
//! redis-server 7.0.15 in `tests/geo_redis.rs`.

pub mod dist;
pub mod hash;
pub mod search;

pub use dist::{
    distance, format_coord, format_distance, lat_distance, unit_factor, EARTH_RADIUS_M, UNIT_ERROR,
};
pub use hash::{
    decode_score, encode_wgs84, geohash_string, invalid_pair_error, score_of, valid_lon_lat,
    HashBits, LAT_MAX, LAT_MIN, LONG_MAX, LONG_MIN,
};
pub use search::{estimate_steps, Hit, Shape, ShapeKind};

/// Argument error texts of the geo commands (seen on redis-server 7.0.15),
/// for the command layer. The invalid-pair text is
/// [`invalid_pair_error`], the unit text [`UNIT_ERROR`].
pub mod texts {
    pub const RADIUS_NEGATIVE: &str = "ERR radius cannot be negative";
    pub const BOX_NEGATIVE: &str = "ERR height or width cannot be negative";
    pub const MEMBER_NOT_FOUND: &str = "ERR could not decode requested zset member";
    pub const COUNT_NOT_POSITIVE: &str = "ERR COUNT must be > 0";
    pub const ANY_WITHOUT_COUNT: &str = "ERR the ANY argument requires COUNT argument";
}
