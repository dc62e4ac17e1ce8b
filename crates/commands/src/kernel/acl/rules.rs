//! Rule lists: the errors a rule can give (with Redis's texts), merging a
//! selector written across several arguments (`(+get` `~k*)`), and
//! splitting a selector's inside into rules (Redis's `sdssplitargs`
//! quoting).

/// Why a rule was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuleError {
    Syntax,
    UnknownName,
    KeyAfterAll,
    ChannelAfterAll,
    NoSuchPassword,
    BadHash,
    FirstArgOfSubcommand,
    DuplicateUser,
}

impl RuleError {
    /// Redis's text for the error (`ACLSetUserStringError`).
    pub fn text(self) -> &'static str {
        match self {
            RuleError::Syntax => "Syntax error",
            RuleError::UnknownName => "Unknown command or category name in ACL",
            RuleError::KeyAfterAll => "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns",
            RuleError::ChannelAfterAll => "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does not have any effect. Try 'resetchannels' to start with an empty list of channels",
            RuleError::NoSuchPassword => {
                "The password you are trying to remove from the user does not exist"
            }
            RuleError::BadHash => "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters",
            RuleError::FirstArgOfSubcommand => "Allowing first-arg of a subcommand is not supported",
            RuleError::DuplicateUser => {
                "Duplicate user found. A user can only be defined once in config files"
            }
        }
    }
}

/// Joins a selector spread over several arguments (`(+get`, `~k*)`) into
/// one `(+get ~k*)`; other arguments pass unchanged. `Err(i)` when the
/// selector opened at argument `i` never closes.
pub fn merge_selectors(args: &[&[u8]]) -> Result<Vec<Vec<u8>>, usize> {
    let mut out = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, a) in args.iter().enumerate() {
        let ends = a.last() == Some(&b')');
        match open.as_mut() {
            None if a.first() == Some(&b'(') && !ends => open = Some((i, a.to_vec())),
            None => out.push(a.to_vec()),
            Some((_, sel)) => {
                sel.push(b' ');
                sel.extend_from_slice(a);
                if ends {
                    out.push(open.take().map(|(_, s)| s).unwrap_or_default());
                }
            }
        }
    }
    match open {
        Some((i, _)) => Err(i),
        None => Ok(out),
    }
}

/// Splits text into arguments as Redis's `sdssplitargs` does: blanks
/// separate, `"..."` takes `\n \r \t \b \a \xHH` and `\"` escapes, `'...'`
/// takes `\'`; a closing quote must be followed by a blank. Unbalanced
/// quotes give no arguments at all.
pub fn split_args(text: &[u8]) -> Vec<Vec<u8>> {
    try_split_args(text).unwrap_or_default()
}

/// [`split_args`], `None` on unbalanced quotes.
pub fn try_split_args(text: &[u8]) -> Option<Vec<Vec<u8>>> {
    resp::split_args(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_selectors() {
        let args: Vec<&[u8]> = vec![b"on", b"(+get", b"~k*)", b"(+set)", b"x"];
        assert_eq!(
            merge_selectors(&args).unwrap(),
            vec![
                b"on".to_vec(),
                b"(+get ~k*)".to_vec(),
                b"(+set)".to_vec(),
                b"x".to_vec()
            ]
        );
        let open: Vec<&[u8]> = vec![b"on", b"(+get", b"~k*"];
        assert_eq!(merge_selectors(&open), Err(1));
    }

    #[test]
    fn splits_like_sdssplitargs() {
        assert_eq!(
            split_args(br#" +get  "a b" 'c\'d' "\x41\n" "#),
            vec![
                b"+get".to_vec(),
                b"a b".to_vec(),
                b"c'd".to_vec(),
                b"A\n".to_vec()
            ]
        );
        assert!(try_split_args(b"\"abc").is_none());
        assert!(try_split_args(b"\"a\"b").is_none());
    }
}
