//! LOLWUT: the server's version, with a piece of generative computer art
//! for some versions, as redis-server 7.0 answers it.
//!
//! `LOLWUT [VERSION v] [arg ...]` picks the piece from a version string:
//! `"<v as a 32-bit unsigned>.0.0"` with `VERSION v` (so -4294967291 and
//! 4294967301 both mean 5), the server's own [`crate::REDIS_VERSION`]
//! otherwise. A version of the 5 line (or 4.9) draws Georg Nees's
//! *Schotter* in Unicode Braille ([`schotter`]); one of the 6 line (or 5.9)
//! draws a skyline of 8-bit-game skyscrapers in ANSI colours
//! ([`skyline`]); any other answers only `Redis ver. <version>\n`. The
//! arguments after `VERSION v` (or after the command name when there is no
//! `VERSION`) go to the piece; a piece ignores those it does not take.
//!
//! Both drawings are random (each call draws anew), but their geometry is
//! not: for given arguments the number of lines and the width of each line
//! are fixed, and the rows of Schotter's squares that are not displaced
//! (the first two) come out the same as Redis's. Every size argument is
//! clamped to the bounds Redis uses, so the canvas and the reply stay
//! bounded (at most a 2000 x 399204 pixel canvas, kept one bit a pixel).
//!
//! The reply is a verbatim string of format `txt` (a bulk string in RESP2).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::base::errors;
use crate::base::parse::{eq_ic, parse_i64};
use crate::kernel::ctx::Ctx;
use crate::kernel::spec::{flag, CommandSpec, Docs};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec {
    acl: &["read", "fast"],
    // Redis 7.0 documents no complexity for LOLWUT.
    docs: Docs::new(
        "",
        "Show the server version along with a piece of generative art",
    ),
    ..CommandSpec::new("lolwut", -1, flag::READONLY | flag::FAST, lolwut)
}];

/// What LOLWUT draws for a version string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    /// Georg Nees's Schotter (versions 5.x but 5.9, and 4.9).
    Schotter,
    /// The skyline (versions 6.x but 6.9, and 5.9).
    Skyline,
    /// Nothing: only the version line.
    Plain,
}

/// The piece of `version`, judged on its first three characters as Redis
/// does ("5." not followed by '9', and so on).
fn piece_for(version: &str) -> Piece {
    let b = version.as_bytes();
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    match (at(0), at(1), at(2)) {
        (b'5', b'.', b'9') => Piece::Skyline,
        (b'5', b'.', _) | (b'4', b'.', b'9') => Piece::Schotter,
        (b'6', b'.', c) if c != b'9' => Piece::Skyline,
        _ => Piece::Plain,
    }
}

/// The version string `VERSION v` stands for: `v` cut to an unsigned
/// 32-bit number, then ".0.0".
fn version_of(v: i64) -> String {
    format!("{}.0.0", v as u32)
}

fn lolwut(ctx: &mut Ctx, args: &[&[u8]]) {
    let (version, rest) = if args.len() >= 3 && eq_ic(args[1], "version") {
        match parse_i64(args[2]) {
            Some(v) => (version_of(v), &args[3..]),
            None => return ctx.error(errors::ERR_NOT_INT),
        }
    } else {
        (crate::REDIS_VERSION.to_string(), &args[1..])
    };
    let text = match piece_for(&version) {
        Piece::Schotter => {
            let Some([cols, per_row, per_col]) = int_args(rest, [66, 8, 12]) else {
                return ctx.error(errors::ERR_NOT_INT);
            };
            schotter(
                cols.clamp(1, 1000) as i32,
                per_row.clamp(1, 200) as i32,
                per_col.clamp(1, 200) as i32,
                &mut Rand::new(),
            )
        }
        Piece::Skyline => {
            let Some([cols, rows]) = int_args(rest, [80, 20]) else {
                return ctx.error(errors::ERR_NOT_INT);
            };
            skyline(
                cols.clamp(1, 1000) as i32,
                rows.clamp(1, 1000) as i32,
                &mut Rand::new(),
            )
        }
        Piece::Plain => format!("Redis ver. {}\n", crate::REDIS_VERSION).into_bytes(),
    };
    ctx.out.verbatim(b"txt", &text);
}

/// The first `N` arguments as integers (Redis's strict `string2ll`), each
/// one absent keeping its default; arguments after them are ignored.
/// `None` when one of them is not an integer.
fn int_args<const N: usize>(args: &[&[u8]], defaults: [i64; N]) -> Option<[i64; N]> {
    let mut out = defaults;
    for (slot, a) in out.iter_mut().zip(args) {
        *slot = parse_i64(a)?;
    }
    Some(out)
}

/// A small pseudo-random generator standing in for C's `rand()`
/// (splitmix64, seeded from the clock and a per-process counter).
struct Rand(u64);

/// C's `RAND_MAX` with glibc: `rand()` answers 0..=RAND_MAX.
const RAND_MAX: i32 = i32::MAX;

impl Rand {
    fn new() -> Rand {
        static CALLS: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let n = CALLS.fetch_add(1, Relaxed);
        Rand(nanos ^ n.wrapping_mul(0xA076_1D64_78BD_642F))
    }

    #[cfg(test)]
    fn seeded(seed: u64) -> Rand {
        Rand(seed)
    }

    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// 0..=RAND_MAX, like C's `rand()`.
    fn rand(&mut self) -> i32 {
        (self.next_u64() >> 33) as i32
    }

    /// `rand()` scaled to 0.0..=1.0 in single precision.
    fn unit(&mut self) -> f32 {
        self.rand() as f32 / RAND_MAX as f32
    }
}

// ---------------------------------------------------------------------------
// Schotter (VERSION 5)
// ---------------------------------------------------------------------------

/// A black and white canvas, one bit a pixel. Pixels outside it read as
/// unset and are not drawn.
struct BitCanvas {
    width: i32,
    height: i32,
    words: Vec<u64>,
}

impl BitCanvas {
    fn new(width: i32, height: i32) -> BitCanvas {
        let pixels = width.max(0) as usize * height.max(0) as usize;
        BitCanvas {
            width,
            height,
            words: vec![0; pixels.div_ceil(64)],
        }
    }

    fn index(&self, x: i32, y: i32) -> Option<usize> {
        (x >= 0 && y >= 0 && x < self.width && y < self.height)
            .then(|| y as usize * self.width as usize + x as usize)
    }

    fn set(&mut self, x: i32, y: i32) {
        if let Some(i) = self.index(x, y) {
            self.words[i / 64] |= 1 << (i % 64);
        }
    }

    /// A straight line from (x1, y1) to (x2, y2), ends included
    /// (Bresenham's algorithm).
    fn line(&mut self, mut x1: i32, mut y1: i32, x2: i32, y2: i32) {
        let dx = (x2 - x1).abs();
        let dy = (y2 - y1).abs();
        let sx = if x1 < x2 { 1 } else { -1 };
        let sy = if y1 < y2 { 1 } else { -1 };
        let mut err = dx - dy;
        loop {
            self.set(x1, y1);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// The outline of a square of side `side` centred on (x, y), turned by
    /// `angle` radians. The corners are computed in double precision from
    /// single-precision side and angle, as Redis's C does.
    fn square(&mut self, x: i32, y: i32, side: f32, angle: f32) {
        use std::f64::consts::PI;
        /// The √2 Redis divides by, cut after ten decimals: kept so that
        /// sizes on a rounding edge round as they do there.
        #[allow(clippy::approx_constant)]
        const ROOT_2: f64 = 1.4142135623;
        // Half the diagonal, rounded to whole pixels.
        let radius = ((side as f64 / ROOT_2) as f32 as f64).round() as f32;
        let mut angle = (angle as f64 + PI / 4.0) as f32;
        let mut corners = [(0i32, 0i32); 4];
        for c in &mut corners {
            let a = angle as f64;
            *c = (
                (a.sin() * radius as f64 + x as f64).round() as i32,
                (a.cos() * radius as f64 + y as f64).round() as i32,
            );
            angle = (angle as f64 + PI / 2.0) as f32;
        }
        for j in 0..4 {
            let (a, b) = (corners[j], corners[(j + 1) % 4]);
            self.line(a.0, a.1, b.0, b.1);
        }
    }
}

/// The canvas size of Schotter for these (already clamped) arguments:
/// two pixels a column, a 2-pixel margin when there is room, and as many
/// pixel rows as the squares need.
fn schotter_size(cols: i32, per_row: i32, per_col: i32) -> (i32, i32, i32, f32) {
    let width = cols * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_col as f32 + (padding * 2) as f32) as i32;
    (width, height, padding, side)
}

/// Georg Nees's "Schotter" (1968): a grid of `per_row` x `per_col` squares
/// on a canvas `cols` characters wide, each row below the second turned
/// and shifted a little more at random; then the credit line.
fn schotter(cols: i32, per_row: i32, per_col: i32, rng: &mut Rand) -> Vec<u8> {
    let (width, height, padding, side) = schotter_size(cols, per_row, per_col);
    let mut canvas = BitCanvas::new(width, height);
    for row in 0..per_col {
        for col in 0..per_row {
            let mut sx = (col as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut sy = (row as f32 * side + side / 2.0 + padding as f32) as i32;
            let mut angle = 0.0f32;
            if row > 1 {
                let mut r = [0.0f32; 3];
                for v in &mut r {
                    *v = rng.unit() / per_col as f32 * row as f32;
                }
                for v in &mut r {
                    if rng.rand() % 2 != 0 {
                        *v = -*v;
                    }
                }
                angle = r[0];
                sx = (sx as f32 + r[1] * side / 3.0) as i32;
                sy = (sy as f32 + r[2] * side / 3.0) as i32;
            }
            canvas.square(sx, sy, side, angle);
        }
    }
    let mut out = braille(&canvas);
    out.extend_from_slice(b"\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ");
    out.extend_from_slice(crate::REDIS_VERSION.as_bytes());
    out.push(b'\n');
    out
}

/// The canvas as text, a Unicode Braille character (2 x 4 dots) per 2 x 4
/// pixels; every line ends with a newline but one whose pixel row is the
/// canvas's last (a height of 4n+1).
fn braille(canvas: &BitCanvas) -> Vec<u8> {
    let (width, height) = (canvas.width.max(0) as usize, canvas.height.max(0) as usize);
    let lines = height.div_ceil(4);
    let mut out = Vec::with_capacity(lines * (width / 2 * 3 + 1) + 96);
    for y in (0..height).step_by(4) {
        // Where each of the four pixel rows starts (None below the canvas).
        let rows: [Option<usize>; 4] =
            std::array::from_fn(|dy| (y + dy < height).then(|| (y + dy) * width));
        let lit = |x: usize, dy: usize| {
            rows[dy].is_some_and(|start| {
                let i = start + x;
                canvas.words[i / 64] & (1 << (i % 64)) != 0
            })
        };
        // The width is even: x + 1 is always on the canvas.
        for x in (0..width).step_by(2) {
            // The dots in the bit order of the Braille block (U+2800).
            let bits = lit(x, 0) as u8
                | (lit(x, 1) as u8) << 1
                | (lit(x, 2) as u8) << 2
                | (lit(x + 1, 0) as u8) << 3
                | (lit(x + 1, 1) as u8) << 4
                | (lit(x + 1, 2) as u8) << 5
                | (lit(x, 3) as u8) << 6
                | (lit(x + 1, 3) as u8) << 7;
            // U+2800 + bits in UTF-8.
            out.extend_from_slice(&[0xE2, 0xA0 | (bits >> 6), 0x80 | (bits & 0x3F)]);
        }
        if y + 1 != height {
            out.push(b'\n');
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Skyline (VERSION 6)
// ---------------------------------------------------------------------------

/// Sky (the background colour).
const WHITE: u8 = 3;

/// A canvas of four colours: 0 black, 1 dark gray, 2 light gray, 3 white.
struct ColorCanvas {
    width: i32,
    height: i32,
    pixels: Vec<u8>,
}

impl ColorCanvas {
    fn index(&self, x: i32, y: i32) -> Option<usize> {
        (x >= 0 && y >= 0 && x < self.width && y < self.height)
            .then(|| y as usize * self.width as usize + x as usize)
    }

    fn set(&mut self, x: i32, y: i32, color: u8) {
        if let Some(i) = self.index(x, y) {
            self.pixels[i] = color;
        }
    }

    fn get(&self, x: i32, y: i32) -> u8 {
        self.index(x, y).map_or(0, |i| self.pixels[i])
    }
}

/// One building: its left edge, size, colour and whether it has windows.
struct Building {
    left: i32,
    width: i32,
    height: i32,
    color: u8,
    windows: bool,
}

/// Draws `b` standing on the canvas's bottom row. Its top row is two
/// pixels narrower on each side; windows, two pixels wide and one tall,
/// in a random gray, sit on every other row and every other pair of
/// columns, away from the walls, roof and ground.
fn building(canvas: &mut ColorCanvas, b: &Building, rng: &mut Rand) {
    let bottom = canvas.height - 1;
    let top = bottom - b.height + 1;
    let right = b.left + b.width;
    let mut y = bottom;
    while y >= top {
        for x in b.left..right {
            if y == top && (x <= b.left + 1 || x >= right - 2) {
                continue;
            }
            let mut color = b.color;
            if b.windows && x > b.left + 1 && x < right - 2 && y > top + 1 && y < bottom - 1 {
                let wx = x - (b.left + 1);
                let wy = y - (top + 1);
                if (wx / 2) % 2 != 0 && wy % 2 != 0 {
                    loop {
                        color = 1 + (rng.rand() % 2) as u8;
                        if color != b.color {
                            break;
                        }
                    }
                    // The second pixel of a window takes the first's colour.
                    if wx % 2 != 0 {
                        color = canvas.get(x - 1, y);
                    }
                }
            }
            canvas.set(x, y, color);
        }
        y -= 1;
    }
}

/// A city skyline after the parallax backgrounds of 8-bit games (after an
/// image of the game Plaguemon by hikikomori): two layers of plain gray
/// buildings, the lighter ones behind, then black buildings with windows
/// in front; then the credit lines.
fn skyline(cols: i32, rows: i32, rng: &mut Rand) -> Vec<u8> {
    let mut canvas = ColorCanvas {
        width: cols,
        height: rows,
        pixels: vec![WHITE; cols as usize * rows as usize],
    };
    let h = rows;
    for color in [2u8, 1] {
        let mut offset = -10;
        while offset < cols {
            offset += rng.rand() % 8;
            let width = 10 + rng.rand() % 9;
            let height = if color == 2 {
                h / 2 + (rng.rand() % h) / 2
            } else {
                h / 2 + (rng.rand() % h) / 3
            };
            let b = Building {
                left: offset,
                width,
                height,
                color,
                windows: false,
            };
            building(&mut canvas, &b, rng);
            offset += if color == 2 { width / 2 } else { width + 1 };
        }
    }
    let mut offset = -10;
    while offset < cols {
        offset += rng.rand() % 8;
        let mut width = 5 + rng.rand() % 14;
        if width % 4 != 0 {
            width += width % 3;
        }
        let height = h / 3 + (rng.rand() % h) / 2;
        let b = Building {
            left: offset,
            width,
            height,
            color: 0,
            windows: true,
        };
        building(&mut canvas, &b, rng);
        offset += width + 5;
    }
    let mut out = ansi(&canvas);
    out.extend_from_slice(
        b"\nDedicated to the 8 bit game developers of past and present.\n\
          Original 8 bit image from Plaguemon by hikikomori. Redis ver. ",
    );
    out.extend_from_slice(crate::REDIS_VERSION.as_bytes());
    out.push(b'\n');
    out
}

/// The canvas as text: a space a pixel, coloured (foreground and
/// background) with an ANSI escape and reset after it; a newline between
/// rows.
fn ansi(canvas: &ColorCanvas) -> Vec<u8> {
    let mut out = Vec::with_capacity(canvas.pixels.len() * 20 + 160);
    for y in 0..canvas.height {
        for x in 0..canvas.width {
            let code: &[u8] = match canvas.get(x, y) {
                1 => b"0;90;100m",
                2 => b"0;37;47m",
                3 => b"0;97;107m",
                _ => b"0;30;40m",
            };
            out.extend_from_slice(b"\x1b[");
            out.extend_from_slice(code);
            out.extend_from_slice(b" \x1b[0m");
        }
        if y != canvas.height - 1 {
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(b: &[u8]) -> &str {
        std::str::from_utf8(b).unwrap()
    }

    /// The drawing part of a Schotter reply (without the credit line).
    fn drawing(out: &[u8]) -> &str {
        let t = text(out);
        let credit = "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. ";
        &t[..t.find(credit).expect("credit line")]
    }

    #[test]
    fn versions_pick_pieces_as_redis_does() {
        assert_eq!(piece_for(crate::REDIS_VERSION), Piece::Plain);
        assert_eq!(piece_for("7.0.15"), Piece::Plain);
        assert_eq!(piece_for("5.0.0"), Piece::Schotter);
        assert_eq!(piece_for("5."), Piece::Schotter);
        assert_eq!(piece_for("4.9.0"), Piece::Schotter);
        assert_eq!(piece_for("4.0.0"), Piece::Plain);
        assert_eq!(piece_for("5.9.0"), Piece::Skyline);
        assert_eq!(piece_for("6.2.0"), Piece::Skyline);
        assert_eq!(piece_for("6.9.0"), Piece::Plain);
        assert_eq!(piece_for("55.0.0"), Piece::Plain);
        assert_eq!(piece_for(""), Piece::Plain);
        assert_eq!(version_of(5), "5.0.0");
        assert_eq!(version_of(4294967301), "5.0.0");
        assert_eq!(version_of(-4294967291), "5.0.0");
        assert_eq!(version_of(-4294967290), "6.0.0");
        assert_eq!(version_of(-1), "4294967295.0.0");
        assert_eq!(version_of(i64::MAX), "4294967295.0.0");
        assert_eq!(version_of(i64::MIN), "0.0.0");
    }

    #[test]
    fn int_args_keep_defaults_and_reject_non_integers() {
        assert_eq!(int_args(&[], [66, 8, 12]), Some([66, 8, 12]));
        assert_eq!(int_args(&[b"3"], [66, 8, 12]), Some([3, 8, 12]));
        assert_eq!(
            int_args(&[b"3", b"-4", b"5", b"junk"], [66, 8, 12]),
            Some([3, -4, 5])
        );
        assert_eq!(int_args(&[b"3", b"x"], [66, 8, 12]), None);
        assert_eq!(int_args(&[b"05"], [80, 20]), None);
        assert_eq!(int_args(&[b"-0"], [80, 20]), None);
    }

    /// Redis 7.0.15's replies for arguments that leave nothing to chance.
    #[test]
    fn schotter_small_canvases_match_redis() {
        let mut rng = Rand::seeded(1);
        assert_eq!(drawing(&schotter(1, 1, 1, &mut rng)), "⠋\n");
        assert_eq!(drawing(&schotter(4, 1, 1, &mut rng)), "⠀⡤⠤⡄\n⠀⠧⠤⠇\n");
        // LOLWUT VERSION 5 0: one column, 8 x 12 squares of no size; a
        // displaced square could leave a dot out, none does with this seed
        // (nor mostly on Redis).
        assert_eq!(drawing(&schotter(1, 8, 12, &mut rng)), "⠿\n");
        // No pixel row at all.
        assert_eq!(drawing(&schotter(1, 200, 1, &mut rng)), "");
    }

    #[test]
    fn schotter_geometry() {
        for &(cols, per_row, per_col) in &[
            (66, 8, 12),
            (10, 3, 7),
            (7, 9, 13),
            (1, 1, 200),
            (2, 1, 1),
            (3, 1, 1),
            (1000, 200, 200),
            (1000, 7, 1),
        ] {
            let (_, height, _, _) = schotter_size(cols, per_row, per_col);
            let out = schotter(cols, per_row, per_col, &mut Rand::seeded(7));
            let t = text(&out);
            assert!(t.ends_with("plotter on paper, 1968. Redis ver. 7.0.15\n"));
            let d = drawing(&out);
            let lines: Vec<&str> = d.lines().collect();
            assert_eq!(
                lines.len(),
                (height as usize).div_ceil(4),
                "{cols} {per_row} {per_col}"
            );
            for l in &lines {
                assert_eq!(l.chars().count(), cols as usize);
                assert!(l.chars().all(|c| ('\u{2800}'..='\u{28FF}').contains(&c)));
            }
            // A blank line before the credit unless the last pixel row
            // ends a line of its own.
            assert_eq!(d.ends_with('\n'), height % 4 != 1 && height > 0);
        }
        // Redis's line counts (the drawing plus the credit line).
        assert_eq!((schotter_size(66, 8, 12).1 as usize).div_ceil(4), 49);
        assert_eq!(schotter_size(10, 3, 7).1, 41);
        assert_eq!((schotter_size(1000, 200, 200).1 as usize).div_ceil(4), 500);
        assert_eq!((schotter_size(1000, 8, 12).1 as usize).div_ceil(4), 750);
        assert_eq!(schotter_size(1000, 1, 200).1, 399204);
    }

    #[test]
    fn skyline_geometry() {
        for &(cols, rows) in &[(80, 20), (1, 1), (3, 2), (17, 40), (200, 5)] {
            let out = skyline(cols, rows, &mut Rand::seeded(3));
            let t = text(&out);
            let credit = "\nDedicated to the 8 bit game developers of past and present.\n\
                          Original 8 bit image from Plaguemon by hikikomori. Redis ver. 7.0.15\n";
            assert!(t.ends_with(credit));
            let d = &t[..t.len() - credit.len()];
            let lines: Vec<&str> = d.split('\n').collect();
            assert_eq!(lines.len(), rows as usize);
            for l in &lines {
                let cells: Vec<&str> = l.split_inclusive("\x1b[0m").collect();
                assert_eq!(cells.len(), cols as usize);
                for c in cells {
                    assert!(
                        [
                            "\x1b[0;30;40m \x1b[0m",
                            "\x1b[0;90;100m \x1b[0m",
                            "\x1b[0;37;47m \x1b[0m",
                            "\x1b[0;97;107m \x1b[0m"
                        ]
                        .contains(&c),
                        "{c:?}"
                    );
                }
            }
        }
        // One row: every building is too low to show, all sky.
        let one = skyline(5, 1, &mut Rand::seeded(9));
        assert!(text(&one).starts_with(&"\x1b[0;97;107m \x1b[0m".repeat(5)));
    }

    #[test]
    fn skyline_top_row_is_sky() {
        // With 20 rows the tallest building is 19 rows high.
        for seed in 0..50 {
            let out = skyline(80, 20, &mut Rand::seeded(seed));
            let first = text(&out).split('\n').next().unwrap();
            assert_eq!(first, "\x1b[0;97;107m \x1b[0m".repeat(80));
        }
    }
}
