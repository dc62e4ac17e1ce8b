//! Differential tests: LOLWUT against redis-server 7.0.
//! Script syntax: see tests/common/script.rs.
//!
//! LOLWUT VERSION 5 and 6 draw at random, so a drawing is compared
//! exactly only where nothing is left to chance (Schotter with at most two
//! rows of squares: only rows from the third on are displaced; the skyline
//! one pixel row high: all sky). Elsewhere [`same_geometry`] compares what
//! is fixed: the reply type, the number of lines, each line's width in
//! characters (or coloured cells), the blank line before the credit and
//! the credit lines themselves.

mod common;
use common::*;

/// The four cells of the skyline: a space coloured (foreground and
/// background) with an ANSI escape, reset after it.
const CELLS: [&str; 4] = [
    "\x1b[0;30;40m \x1b[0m",
    "\x1b[0;90;100m \x1b[0m",
    "\x1b[0;37;47m \x1b[0m",
    "\x1b[0;97;107m \x1b[0m",
];

/// A LOLWUT reply's text and how it came: a RESP2 bulk string or a RESP3
/// verbatim string of format `txt`.
fn art(r: &Reply) -> Result<(&'static str, String), String> {
    let (kind, data) = match r {
        Reply::Value(Value::Bulk(b)) => ("bulk", b),
        Reply::Value(Value::Verbatim {
            format: [b't', b'x', b't'],
            data,
        }) => ("verbatim txt", data),
        other => return Err(format!("not a bulk or txt verbatim string: {other:?}")),
    };
    let text = String::from_utf8(data.clone()).map_err(|_| "not UTF-8".to_string())?;
    Ok((kind, text))
}

/// `text` with every Braille character (U+2800..U+28FF) written as '⣿'
/// and every skyline cell as '#': what stays is the geometry (lines and
/// their widths) and every other character (the credit lines).
fn outline(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if c == '\x1b' {
            let cell = CELLS
                .iter()
                .find(|cell| rest.starts_with(**cell))
                .ok_or_else(|| format!("unknown escape: {:?}", &rest[..rest.len().min(24)]))?;
            out.push('#');
            rest = &rest[cell.len()..];
        } else {
            out.push(if ('\u{2800}'..='\u{28FF}').contains(&c) {
                '⣿'
            } else {
                c
            });
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(out)
}

/// Both replies are drawings of the same geometry (see the module doc);
/// errors must be identical.
fn same_geometry(p: &Reply, r: &Reply) -> Result<(), String> {
    if let (Reply::Value(Value::Error(_)), _) | (_, Reply::Value(Value::Error(_))) = (p, r) {
        return if p == r {
            Ok(())
        } else {
            Err(format!("petrel {p:?} vs redis {r:?}"))
        };
    }
    let ((pk, pt), (rk, rt)) = (art(p)?, art(r)?);
    if pk != rk {
        return Err(format!("petrel answers a {pk}, redis a {rk}"));
    }
    let (po, ro) = (outline(&pt)?, outline(&rt)?);
    if po == ro {
        return Ok(());
    }
    let (pl, rl): (Vec<&str>, Vec<&str>) = (po.split('\n').collect(), ro.split('\n').collect());
    if pl.len() != rl.len() {
        return Err(format!(
            "petrel has {} lines, redis {}; last lines: petrel {:?} redis {:?}",
            pl.len(),
            rl.len(),
            &pl[pl.len().saturating_sub(3)..],
            &rl[rl.len().saturating_sub(3)..]
        ));
    }
    let i = pl.iter().zip(&rl).position(|(a, b)| a != b).unwrap_or(0);
    Err(format!(
        "line {i} differs: petrel {:?} ({} chars) vs redis {:?} ({} chars)",
        pl[i],
        pl[i].chars().count(),
        rl[i],
        rl[i].chars().count()
    ))
}

/// No VERSION, versions without a piece, and the arguments Redis rejects
/// (strict integers: no sign '+', spaces, leading zeros, -0 or overflow).
#[test]
fn lolwut_version_line_and_errors() {
    diff_text(
        "lolwut_version_line_and_errors",
        r#"
LOLWUT
lolwut
LoLwUt
LOLWUT VERSION
LOLWUT version 7
LOLWUT VERSION 4
LOLWUT VERSION 55
LOLWUT VERSION 50
LOLWUT VERSION 0
LOLWUT VERSION 1
LOLWUT VERSION -1
LOLWUT VERSION -5
LOLWUT VERSION 9223372036854775807
LOLWUT VERSION -9223372036854775808
LOLWUT VERSION 4294967295
LOLWUT VERSION 4294967296
LOLWUT VERSION 7 1 2 3
LOLWUT foo
LOLWUT foo bar baz
LOLWUT 5 1 1 1
LOLWUT 6 1 1
LOLWUT VERSIONS 5 1 1 1
LOLWUT VERSION abc
LOLWUT VERSION 5.0
LOLWUT VERSION " 5"
LOLWUT VERSION "5 "
LOLWUT VERSION +5
LOLWUT VERSION 05
LOLWUT VERSION -0
LOLWUT VERSION ""
LOLWUT VERSION 9223372036854775808
LOLWUT VERSION -9223372036854775809
LOLWUT VERSION abc 1 2 3
LOLWUT VERSION 5 x
LOLWUT VERSION 5 1 x
LOLWUT VERSION 5 1 1 x
LOLWUT VERSION 5 1.5
LOLWUT VERSION 5 ""
LOLWUT VERSION 5 9223372036854775808
LOLWUT VERSION 5 1 1 -9223372036854775809
LOLWUT VERSION 6 x
LOLWUT VERSION 6 1 x
LOLWUT VERSION 6 01 1
LOLWUT VERSION 4294967301 x
LOLWUT VERSION -4294967290 1 x
"#,
    );
}

/// Drawings with nothing random in them, compared byte for byte: the
/// geometry of Schotter's squares (single-precision sizes, rounded
/// corners, clipping at the canvas edge), the clamping of every argument
/// (columns 1..1000, squares 1..200 a row and a column; skyline columns
/// and rows 1..1000), extra arguments ignored, and VERSION taken modulo
/// 2^32.
#[test]
fn lolwut_fixed_drawings() {
    diff_text(
        "lolwut_fixed_drawings",
        r#"
LOLWUT VERSION 5 1 1 1
LOLWUT VERSION 5 -5 0 0
LOLWUT VERSION 5 -9223372036854775808 -1 -1
LOLWUT VERSION 5 2 1 1
LOLWUT VERSION 5 3 1 1
LOLWUT VERSION 5 4 1 1
LOLWUT VERSION 5 5 2 2
LOLWUT VERSION 5 10 3 1
LOLWUT VERSION 5 10 3 2
LOLWUT VERSION 5 13 5 2
LOLWUT VERSION 5 33 7 2
LOLWUT VERSION 5 66 8 1
LOLWUT VERSION 5 66 8 2
LOLWUT VERSION 5 80 13 2
LOLWUT VERSION 5 100 50 2
LOLWUT VERSION 5 1 200 1
LOLWUT VERSION 5 1 200 2
LOLWUT VERSION 5 7 199 2
LOLWUT VERSION 5 1000 200 2
LOLWUT VERSION 5 1001 300 2
LOLWUT VERSION 5 9223372036854775807 9223372036854775807 1
LOLWUT VERSION 5 1000 7 1
LOLWUT VERSION 5 3 1 1 extra args
LOLWUT version 4294967301 20 4 2
LOLWUT VERSION -4294967291 20 4 2
LOLWUT VERSION 6 1 1
LOLWUT VERSION 6 -5 -5
LOLWUT VERSION 6 7 0
LOLWUT VERSION 6 1000 1
LOLWUT VERSION 6 9223372036854775807 -9223372036854775808
LOLWUT VERSION 6 2 1 extra
LOLWUT VERSION -4294967290 3 1
"#,
    );
}

/// Random drawings: same reply type, lines, widths and credits.
#[test]
fn lolwut_random_drawings_geometry() {
    let mut s = Script::new("lolwut_random_drawings_geometry");
    for args in [
        &["LOLWUT", "VERSION", "5"][..],
        &["LOLWUT", "VERSION", "5", "0"],
        &["LOLWUT", "VERSION", "5", "66", "8", "12"],
        // 41 pixel rows: no blank line before the credit.
        &["LOLWUT", "VERSION", "5", "10", "3", "7"],
        &["LOLWUT", "VERSION", "5", "7", "9", "13"],
        &["LOLWUT", "VERSION", "5", "20", "1", "3"],
        &["LOLWUT", "VERSION", "5", "1", "1", "200"],
        &["LOLWUT", "VERSION", "5", "1001", "300", "300"],
        &["LOLWUT", "VERSION", "5", "100000"],
        &["LOLWUT", "VERSION", "4294967301", "30", "4", "5"],
        &["LOLWUT", "VERSION", "6"],
        &["LOLWUT", "VERSION", "6", "3", "2"],
        &["LOLWUT", "VERSION", "6", "37", "7"],
        &["LOLWUT", "VERSION", "6", "100000", "3"],
        &["LOLWUT", "VERSION", "6", "5", "100000"],
        &["LOLWUT", "VERSION", "-4294967290", "12", "30", "x"],
    ] {
        s = s.check(args, same_geometry);
    }
    diff(&s);
}

/// Inside MULTI, from Lua (RESP2 and RESP3 conversions of the verbatim
/// string), and read-only scripts.
#[test]
fn lolwut_in_transactions_and_scripts() {
    diff_text(
        "lolwut_in_transactions_and_scripts",
        r#"
MULTI
LOLWUT
LOLWUT VERSION x
LOLWUT VERSION 5 4 1 1
LOLWUT VERSION 6 3 1
EXEC
EVAL "return redis.call('lolwut')" 0
EVAL "return redis.call('LOLWUT', 'VERSION', '5', '4', '1', '1')" 0
EVAL "return redis.call('lolwut', 'version', 'x')" 0
EVAL "return redis.pcall('lolwut', 'version', '6', '1', 'x')" 0
EVAL "redis.setresp(3) return redis.call('lolwut')" 0
EVAL "redis.setresp(3) local r = redis.call('lolwut') return {r.verbatim_string.format, r.verbatim_string.string}" 0
EVAL_RO "return redis.call('lolwut', 'version', '6', '4', '1')" 0
"#,
    );
}

/// COMMAND's view of LOLWUT and its ACL categories (@read, @fast).
#[test]
fn lolwut_command_info_and_acl() {
    diff_text(
        "lolwut_command_info_and_acl",
        r#"
COMMAND INFO lolwut
COMMAND INFO LOLWUT
COMMAND GETKEYS lolwut version 5
COMMAND GETKEYSANDFLAGS lolwut
COMMAND LIST FILTERBY PATTERN lol*
ACL SETUSER noread on nopass +@all -@read
ACL SETUSER nofast on nopass +@all -@fast
ACL SETUSER fastonly on nopass +@fast
ACL SETUSER readonly on nopass +@read
ACL SETUSER justit on nopass +lolwut
ACL SETUSER noserver on nopass +@all -@server
ACL DRYRUN noread lolwut
ACL DRYRUN nofast lolwut version 5
ACL DRYRUN fastonly lolwut version 5
ACL DRYRUN readonly lolwut
ACL DRYRUN justit lolwut version 6 1 1
ACL DRYRUN noserver lolwut
AUTH noread x
LOLWUT
AUTH justit x
LOLWUT
LOLWUT VERSION 6 1 1
"#,
    );
}

/// The version LOLWUT reports (its own line, and the credit lines of both
/// drawings) is the one INFO reports as redis_version.
#[test]
fn lolwut_reports_the_info_version() {
    let petrel = TestServer::start(&[]);
    let mut c = petrel.raw();
    let info = c.cmd(&["INFO", "server"]);
    let info = String::from_utf8_lossy(info.as_bytes().expect("INFO text")).into_owned();
    let version = info
        .lines()
        .find_map(|l| l.strip_prefix("redis_version:"))
        .expect("redis_version in INFO")
        .trim()
        .to_string();
    let mut text = |args: &[&str]| -> String {
        let v = c.cmd(args);
        String::from_utf8(v.as_bytes().expect("LOLWUT text").to_vec()).unwrap()
    };
    assert_eq!(text(&["LOLWUT"]), format!("Redis ver. {version}\n"));
    assert_eq!(
        text(&["LOLWUT", "VERSION", "1"]),
        format!("Redis ver. {version}\n")
    );
    for args in [
        &["LOLWUT", "VERSION", "5", "3", "1", "1"][..],
        &["LOLWUT", "VERSION", "6", "3", "2"],
    ] {
        let t = text(args);
        assert!(
            t.ends_with(&format!(". Redis ver. {version}\n")),
            "{args:?}: {t:?}"
        );
    }
}
