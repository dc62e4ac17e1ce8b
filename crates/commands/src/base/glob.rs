//! Redis-compatible glob matching (`KEYS`, `SCAN MATCH`, `CONFIG GET`,
//! `PSUBSCRIBE`, `CLIENT KILL`...): `*`, `?`, `[abc]`, `[^a-z]`, `\x` escapes,
//! optionally case-insensitive. Iterative with backtracking on the last `*`, so
//! a hostile pattern costs O(pattern * string), never exponential time.

/// Does `s` match `pattern`?
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    let eq = |a: u8, b: u8| {
        if nocase {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    let (mut p, mut i) = (0usize, 0usize);
    // Position to resume from after the last '*': (pattern index after '*', string index).
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        if p < pattern.len() {
            match pattern[p] {
                b'*' => {
                    while p < pattern.len() && pattern[p] == b'*' {
                        p += 1;
                    }
                    if p == pattern.len() {
                        return true;
                    }
                    star = Some((p, i));
                    continue;
                }
                b'?' => {
                    p += 1;
                    i += 1;
                    continue;
                }
                b'[' => {
                    if let Some((matched, next)) = match_class(pattern, p, s[i], nocase) {
                        if matched {
                            p = next;
                            i += 1;
                            continue;
                        }
                    }
                }
                b'\\' if p + 1 < pattern.len() => {
                    if eq(pattern[p + 1], s[i]) {
                        p += 2;
                        i += 1;
                        continue;
                    }
                }
                c => {
                    if eq(c, s[i]) {
                        p += 1;
                        i += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, si)) => {
                p = sp;
                i = si + 1;
                star = Some((sp, si + 1));
            }
            None => return false,
        }
    }
    while p < pattern.len() && pattern[p] == b'*' {
        p += 1;
    }
    p == pattern.len()
}

/// Matches one byte against the class starting at `pattern[start] == '['`.
/// Returns (matched, index after the class). An unterminated class extends to
/// the end of the pattern, as in Redis.
fn match_class(pattern: &[u8], start: usize, c: u8, nocase: bool) -> Option<(bool, usize)> {
    let mut p = start + 1;
    let not = p < pattern.len() && pattern[p] == b'^';
    if not {
        p += 1;
    }
    let lc = |b: u8| if nocase { b.to_ascii_lowercase() } else { b };
    let c = lc(c);
    let mut matched = false;
    loop {
        if p >= pattern.len() {
            // Unterminated: Redis treats the end of pattern as the end of the class.
            break;
        }
        if pattern[p] == b'\\' && p + 1 < pattern.len() {
            p += 1;
            if lc(pattern[p]) == c {
                matched = true;
            }
        } else if pattern[p] == b']' {
            break;
        } else if p + 2 < pattern.len() && pattern[p + 1] == b'-' {
            let (mut a, mut b) = (lc(pattern[p]), lc(pattern[p + 2]));
            if a > b {
                std::mem::swap(&mut a, &mut b);
            }
            p += 2;
            if c >= a && c <= b {
                matched = true;
            }
        } else if lc(pattern[p]) == c {
            matched = true;
        }
        p += 1;
    }
    let next = if p < pattern.len() { p + 1 } else { p };
    Some((matched != not, next))
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn basics() {
        assert!(glob_match(b"*", b"anything", false));
        assert!(glob_match(b"h?llo", b"hello", false));
        assert!(glob_match(b"h*llo", b"heeeello", false));
        assert!(glob_match(b"h[ae]llo", b"hallo", false));
        assert!(!glob_match(b"h[ae]llo", b"hillo", false));
        assert!(glob_match(b"h[^e]llo", b"hallo", false));
        assert!(!glob_match(b"h[^e]llo", b"hello", false));
        assert!(glob_match(b"h[a-b]llo", b"hbllo", false));
        assert!(glob_match(b"key:\\*", b"key:*", false));
        assert!(!glob_match(b"key:\\*", b"key:a", false));
        assert!(glob_match(b"MAX*", b"maxmemory", true));
        assert!(!glob_match(b"a*b", b"acbd", false));
        assert!(glob_match(b"a*b*", b"acbd", false));
        assert!(glob_match(b"", b"", false));
        assert!(!glob_match(b"", b"a", false));
        assert!(glob_match(
            b"*a*a*a*a*a*a*b",
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            false
        ));
    }
}
