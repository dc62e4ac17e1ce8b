//! Unit tests of the SORT core: comparison rules, ALPHA, numeric
//! conversion, LIMIT clamping and pattern substitution (expected values
//! checked against redis-server 7.0.15).

use super::*;

fn items(v: &[&str]) -> Vec<Item> {
    v.iter().map(|s| Item::new(s.as_bytes().to_vec())).collect()
}

fn numeric(v: &[&str], desc: bool) -> Option<Vec<String>> {
    let mut its = items(v);
    for it in &mut its {
        it.score = parse_score(&it.elem)?;
    }
    sort_items(
        &mut its,
        Order {
            desc,
            ..Order::default()
        },
    );
    Some(
        its.into_iter()
            .map(|i| String::from_utf8(i.elem).unwrap())
            .collect(),
    )
}

#[test]
fn numeric_order_and_ties() {
    assert_eq!(
        numeric(
            &["10", "9", "-1", "1.5", "+1.5", "inf", "-inf", "0x10"],
            false
        )
        .unwrap(),
        ["-inf", "-1", "+1.5", "1.5", "9", "10", "0x10", "inf"]
    );
    assert_eq!(
        numeric(&["1", "01", "1.0", "2"], true).unwrap(),
        ["2", "1.0", "1", "01"]
    );
}

#[test]
fn scores_like_strtod() {
    for (s, want) in [
        ("", Some(0.0)),
        (" 1", Some(1.0)),
        ("+.5", Some(0.5)),
        ("1.", Some(1.0)),
        ("0x10", Some(16.0)),
        ("0x1p-1074", Some(f64::from_bits(1))),
        ("0x.8", Some(0.5)),
        ("inf", Some(f64::INFINITY)),
        ("-Infinity", Some(f64::NEG_INFINITY)),
        ("2.2250738585072014e-308", Some(2.2250738585072014e-308)),
        ("1\0abc", Some(1.0)),
        ("0e-999", Some(0.0)),
        ("1e5", Some(1e5)),
        ("1E+2", Some(100.0)),
    ] {
        assert_eq!(parse_score(s.as_bytes()), want, "{s:?}");
    }
    for s in [
        " ",
        "1 ",
        "0x",
        "nan",
        "-nan",
        "1e400",
        "1e-310",
        "1e-400",
        ".",
        "1e",
        "1e+",
        "1_",
        "abc",
        "--1",
        "0x1p-1080",
    ] {
        assert_eq!(parse_score(s.as_bytes()), None, "{s:?}");
    }
}

#[test]
fn alpha_rules() {
    let mut its = items(&["b", "a\0z", "a", "B", "ab"]);
    let o = Order {
        alpha: true,
        store: true,
        ..Order::default()
    };
    sort_items(&mut its, o);
    let got: Vec<&[u8]> = its.iter().map(|i| &i.elem[..]).collect();
    assert_eq!(got, [&b"B"[..], b"a", b"a\0z", b"ab", b"b"]);
    // Replying: C-string comparison, "a\0z" equals "a".
    let x = Item::new(b"a\0z".to_vec());
    let y = Item::new(b"a".to_vec());
    let reply = Order {
        alpha: true,
        ..Order::default()
    };
    assert_eq!(compare(&x, &y, reply), std::cmp::Ordering::Equal);
    // BY pattern: a missing key sorts first, DESC reverses.
    let mut its = items(&["x", "y", "z"]);
    its[0].by = Some(b"2".to_vec());
    its[2].by = Some(b"1".to_vec());
    let o = Order {
        alpha: true,
        by_pattern: true,
        ..Order::default()
    };
    sort_items(&mut its, o);
    let got: Vec<&[u8]> = its.iter().map(|i| &i.elem[..]).collect();
    assert_eq!(got, [&b"y"[..], b"z", b"x"]);
    sort_items(&mut its, Order { desc: true, ..o });
    let got: Vec<&[u8]> = its.iter().map(|i| &i.elem[..]).collect();
    assert_eq!(got, [&b"x"[..], b"z", b"y"]);
}

#[test]
fn limit_clamp() {
    assert_eq!(limit_range(0, -1, 5), 0..5);
    assert_eq!(limit_range(-3, 2, 5), 0..2);
    assert_eq!(limit_range(1, 2, 5), 1..3);
    assert_eq!(limit_range(3, 100, 5), 3..5);
    assert_eq!(limit_range(5, 1, 5), 0..0);
    assert_eq!(limit_range(2, 0, 5), 0..0);
    assert_eq!(limit_range(0, -1, 0), 0..0);
    assert_eq!(limit_range(i64::MAX, i64::MAX, 5), 0..0);
    assert_eq!(limit_range(1, i64::MAX, 5), 1..5);
}

#[test]
fn patterns() {
    assert_eq!(pattern_key(b"w_*", b"3"), Some((b"w_3".to_vec(), None)));
    assert_eq!(
        pattern_key(b"h_*->f", b"3"),
        Some((b"h_3".to_vec(), Some(b"f".to_vec())))
    );
    // "->" at the very end is part of the key name.
    assert_eq!(pattern_key(b"h_*->", b"3"), Some((b"h_3->".to_vec(), None)));
    // "->" before the '*' is not a field separator.
    assert_eq!(
        pattern_key(b"a->b*c", b"3"),
        Some((b"a->b3c".to_vec(), None))
    );
    assert_eq!(
        pattern_key(b"*_x->f->g", b"e"),
        Some((b"e_x".to_vec(), Some(b"f->g".to_vec())))
    );
    assert_eq!(pattern_key(b"nosort", b"3"), None);
    // Searches stop at a NUL, lengths do not.
    assert_eq!(pattern_key(b"k\0*", b"3"), None);
}

#[test]
fn store_keys() {
    fn a<'a>(v: &[&'a str]) -> Vec<&'a [u8]> {
        v.iter().map(|s| s.as_bytes()).collect()
    }
    assert_eq!(sort_keys(&a(&["sort", "k"])), Some(vec![1]));
    assert_eq!(
        sort_keys(&a(&[
            "sort", "k", "store", "d", "limit", "0", "1", "store", "e"
        ])),
        Some(vec![1, 8])
    );
    assert_eq!(
        sort_keys(&a(&["sort", "k", "get", "store", "x"])),
        Some(vec![1])
    );
    assert_eq!(sort_keys(&a(&["sort", "k", "store"])), Some(vec![1]));
}
