//! Keyspace notifications (`notify-keyspace-events`): the event classes,
//! their flag letters, and [`Event`]. Commands, expiry and eviction fire
//! events through `Server::notify_keyspace_event`, which publishes `__keyspace@<db>__:<key>` (payload:
//! the event) and/or `__keyevent@<db>__:<event>` (payload: the key) through
//! Pub/Sub when the event's class is enabled.
//!
//! The flag letters, their parsing and the CONFIG GET spelling follow Redis
//! 7.0, including its quirk of not printing `n` when `A` is complete.

pub const KEYSPACE: u32 = 1 << 0; // K
pub const KEYEVENT: u32 = 1 << 1; // E
pub const GENERIC: u32 = 1 << 2; // g
pub const STRING: u32 = 1 << 3; // $
pub const LIST: u32 = 1 << 4; // l
pub const SET: u32 = 1 << 5; // s
pub const HASH: u32 = 1 << 6; // h
pub const ZSET: u32 = 1 << 7; // z
pub const EXPIRED: u32 = 1 << 8; // x
pub const EVICTED: u32 = 1 << 9; // e
pub const STREAM: u32 = 1 << 10; // t
pub const KEY_MISS: u32 = 1 << 11; // m
pub const MODULE: u32 = 1 << 12; // d
pub const NEW: u32 = 1 << 13; // n
/// `A`: every class but m and n.
pub const ALL: u32 =
    GENERIC | STRING | LIST | SET | HASH | ZSET | EXPIRED | EVICTED | STREAM | MODULE;

const CLASS_LETTERS: &[(u32, char)] = &[
    (GENERIC, 'g'),
    (STRING, '$'),
    (LIST, 'l'),
    (SET, 's'),
    (HASH, 'h'),
    (ZSET, 'z'),
    (EXPIRED, 'x'),
    (EVICTED, 'e'),
    (STREAM, 't'),
    (MODULE, 'd'),
    (NEW, 'n'),
];

/// Parses a flags string; None on an unknown character.
pub fn parse_flags(s: &str) -> Option<u32> {
    let mut f = 0;
    for c in s.chars() {
        f |= match c {
            'A' => ALL,
            'K' => KEYSPACE,
            'E' => KEYEVENT,
            'm' => KEY_MISS,
            c => CLASS_LETTERS.iter().find(|(_, l)| *l == c)?.0,
        };
    }
    Some(f)
}

pub fn format_flags(f: u32) -> String {
    let mut s = String::new();
    if f & ALL == ALL {
        s.push('A');
    } else {
        for (bit, c) in CLASS_LETTERS {
            if f & bit != 0 {
                s.push(*c);
            }
        }
    }
    if f & KEYSPACE != 0 {
        s.push('K');
    }
    if f & KEYEVENT != 0 {
        s.push('E');
    }
    if f & KEY_MISS != 0 {
        s.push('m');
    }
    s
}

/// One keyspace event.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    pub class: u32,
    pub name: &'a str,
    pub key: &'a [u8],
    pub db: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelling_matches_redis() {
        for (input, shown) in [
            ("KEA", "AKE"),
            ("Kgx$n", "g$xnK"),
            ("KEAmn", "AKEm"),
            ("An", "A"),
            ("Kxen", "xenK"),
            ("Ktdn", "tdnK"),
            ("Em", "Em"),
            ("", ""),
        ] {
            assert_eq!(format_flags(parse_flags(input).unwrap()), shown, "{input}");
        }
        assert!(parse_flags("Q").is_none());
    }
}
