//! Distances (Redis's haversine on a sphere of radius
//! [`EARTH_RADIUS_M`]), units, and the number formats Redis prints.

/// Redis's Earth radius in metres (quadratic mean radius of WGS-84).
pub const EARTH_RADIUS_M: f64 = 6372797.560856;

const D_R: f64 = std::f64::consts::PI / 180.0;

#[inline]
fn deg_rad(a: f64) -> f64 {
    a * D_R
}

#[inline]
pub(crate) fn rad_deg(a: f64) -> f64 {
    a / D_R
}

/// Distance between two latitudes on one meridian (`geohashGetLatDistance`).
pub fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// Haversine distance in metres (`geohashGetDistance`), with Redis's
/// shortcut when the longitudes are (practically) equal.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = deg_rad(lon1);
    let lon2r = deg_rad(lon2);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = deg_rad(lat1);
    let lat2r = deg_rad(lat2);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// Metres per unit for a unit argument (`m`, `km`, `ft`, `mi`, any case);
/// `None` otherwise (reply [`UNIT_ERROR`]).
pub fn unit_factor(unit: &[u8]) -> Option<f64> {
    match unit.to_ascii_lowercase().as_slice() {
        b"m" => Some(1.0),
        b"km" => Some(1000.0),
        b"ft" => Some(0.3048),
        b"mi" => Some(1609.34),
        _ => None,
    }
}

/// The error for an unknown unit.
pub const UNIT_ERROR: &str = "ERR unsupported unit provided. please use M, KM, FT, MI";

/// A distance as Redis prints it (GEODIST, WITHDIST): four decimals,
/// rounded the way Redis's `fixedpoint_d2string` does (the value times
/// 10^4 rounded half-to-even by `llrint`).
pub fn format_distance(d: f64) -> String {
    if d == 0.0 {
        return "0.0000".to_string();
    }
    let v = (d * 10000.0).round_ties_even();
    // llrint of an out-of-range value is LLONG_MIN on x86-64.
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    let sv: i64 = if v.is_nan() || !(-TWO63..TWO63).contains(&v) {
        i64::MIN
    } else {
        v as i64
    };
    let neg = sv < 0;
    let u = sv.unsigned_abs();
    format!(
        "{}{}.{:04}",
        if neg { "-" } else { "" },
        u / 10000,
        u % 10000
    )
}

/// A coordinate as Redis prints it (GEOPOS, WITHCOORD): `%.17Lf` with the
/// trailing zeros (and a trailing dot) removed, `-0` printed as `0`.
pub fn format_coord(v: f64) -> String {
    let mut s = format!("{v:.17}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // redis-server 7.0.15: GEODIST Palermo Catania in m/km/mi/ft.
        let (plon, plat) = crate::geo::decode_score(3479099956230698.0);
        let (clon, clat) = crate::geo::decode_score(3479447370796909.0);
        let d = distance(plon, plat, clon, clat);
        assert_eq!(format_distance(d), "166274.1516");
        assert_eq!(format_distance(d / 1000.0), "166.2742");
        assert_eq!(format_distance(d / 1609.34), "103.3182");
        assert_eq!(format_distance(d / 0.3048), "545518.8700");
        assert_eq!(format_distance(0.0), "0.0000");
        assert_eq!(format_distance(0.00004), "0.0000");
        assert_eq!(format_coord(plon), "13.36138933897018433");
        assert_eq!(format_coord(plat), "38.11555639549629859");
        assert_eq!(format_coord(180.0), "180");
        assert_eq!(format_coord(-0.0), "0");
        assert_eq!(format_coord(85.05112878), "85.0511287799999991");
    }

    #[test]
    fn units() {
        assert_eq!(unit_factor(b"KM"), Some(1000.0));
        assert_eq!(unit_factor(b"Mi"), Some(1609.34));
        assert_eq!(unit_factor(b"yd"), None);
    }

    #[test]
    fn same_longitude_shortcut() {
        assert_eq!(distance(10.0, 1.0, 10.0, 2.0), lat_distance(1.0, 2.0));
    }
}
