//! ACL files (`aclfile`, `ACL LOAD`, `ACL SAVE`) and the `user` lines of
//! the config file, with Redis 7.0's parsing and error texts.
//!
//! An ACL file is all or nothing: every line is checked and, on any
//! error, the error texts of all lines are returned and nothing changes.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::commands::CommandIndex;
use super::rules::{merge_selectors, RuleError};
use super::selector::has_space;
use super::user::User;

/// The users of an ACL file's text (`filename` is for the messages), or
/// Redis's error text. A file without `default` gets a fresh default user.
pub fn parse(
    text: &[u8],
    filename: &str,
    cmds: &CommandIndex,
    pubsub_all: bool,
) -> Result<BTreeMap<Vec<u8>, Arc<User>>, String> {
    let mut users: BTreeMap<Vec<u8>, Arc<User>> = BTreeMap::new();
    let mut errors = String::new();
    for (n, raw) in text.split(|&c| c == b'\n').enumerate() {
        let line = n + 1;
        let l = trim(raw, b" \t\r\n");
        if l.is_empty() {
            continue;
        }
        let argv: Vec<&[u8]> = l.split(|&c| c == b' ').collect();
        if argv[0] != b"user" || argv.len() < 2 {
            errors.push_str(&format!(
                "{filename}:{line} should start with user keyword followed by the username. "
            ));
            continue;
        }
        let name = argv[1];
        if has_space(name) {
            errors.push_str(&format!(
                "'{filename}:{line}: username '{}' contains invalid characters. ",
                String::from_utf8_lossy(name)
            ));
            continue;
        }
        if users.contains_key(name) {
            errors.push_str(&format!(
                "WARNING: Duplicate user '{}' found on line {line}. ",
                String::from_utf8_lossy(name)
            ));
            continue;
        }
        let Ok(rules) = merge_selectors(&argv[2..]) else {
            errors.push_str(&format!(
                "{filename}:{line}: Unmatched parenthesis in selector definition."
            ));
            continue;
        };
        let mut u = User::new(name, cmds.len(), pubsub_all);
        let mut syntax_error = false;
        for r in &rules {
            let r = trim(r, b"\t\r\n");
            if let Err(e) = u.apply(r, cmds, pubsub_all) {
                if e == RuleError::UnknownName {
                    errors.push_str(&format!(
                        "{filename}:{line}: Error in applying operation '{}': {}. ",
                        String::from_utf8_lossy(r),
                        e.text()
                    ));
                } else if !syntax_error {
                    errors.push_str(&format!("{filename}:{line}: {}. ", e.text()));
                    syntax_error = true;
                }
            }
        }
        users.insert(name.to_vec(), Arc::new(u));
    }
    if !errors.is_empty() {
        errors.push_str(
            "WARNING: ACL errors detected, no change to the previously active ACL rules was performed",
        );
        return Err(errors);
    }
    users
        .entry(b"default".to_vec())
        .or_insert_with(|| Arc::new(User::default_user(cmds)));
    Ok(users)
}

/// The text `ACL SAVE` writes: one `user` line per user, by name.
pub fn save_text<'a>(users: impl Iterator<Item = &'a User>, cmds: &CommandIndex) -> Vec<u8> {
    let mut out = Vec::new();
    for u in users {
        out.extend_from_slice(b"user ");
        out.extend_from_slice(&u.name);
        out.push(b' ');
        out.extend_from_slice(&u.describe(cmds));
        out.push(b'\n');
    }
    out
}

/// Checks one `user <name> rules...` line of the config file as Redis does
/// while reading it: errors other than unknown commands or categories
/// (which may only be known later) fail the line. `seen` holds the names
/// of earlier lines. The error is the reason text of the config error.
pub fn check_config_user(
    argv: &[String],
    seen: &[String],
    cmds: &CommandIndex,
) -> Result<(), String> {
    let bad = |j: usize, e: RuleError| {
        format!(
            "Error in user declaration '{}': {}",
            argv.get(j).map(String::as_str).unwrap_or(""),
            e.text()
        )
    };
    if seen.contains(&argv[1]) {
        return Err(bad(1, RuleError::DuplicateUser));
    }
    let raw: Vec<&[u8]> = argv[2..].iter().map(|a| a.as_bytes()).collect();
    let rules = merge_selectors(&raw).map_err(|j| bad(j, RuleError::UnknownName))?;
    let mut u = User::new(argv[1].as_bytes(), cmds.len(), false);
    for (j, r) in rules.iter().enumerate() {
        match u.apply(r, cmds, false) {
            Ok(()) | Err(RuleError::UnknownName) => {}
            Err(e) => return Err(bad(j, e)),
        }
    }
    Ok(())
}

/// The users of the config file's `user` lines (each `[name, rules...]`),
/// applied at startup; the error is the log line Redis exits with.
pub fn config_users(
    lines: &[Vec<String>],
    cmds: &CommandIndex,
    pubsub_all: bool,
    default: &User,
) -> Result<Vec<User>, String> {
    let mut out = Vec::new();
    for l in lines {
        let name = l[0].as_bytes();
        if has_space(name) {
            return Err("Spaces not allowed in ACL usernames".into());
        }
        let mut u = if name == b"default" {
            let mut d = default.clone();
            d.apply(b"reset", cmds, pubsub_all)
                .map_err(|e| e.text().to_string())?;
            d
        } else {
            User::new(name, cmds.len(), pubsub_all)
        };
        let raw: Vec<&[u8]> = l[1..].iter().map(|a| a.as_bytes()).collect();
        let rules = merge_selectors(&raw).map_err(|_| RuleError::Syntax.text().to_string())?;
        for r in &rules {
            u.apply(r, cmds, pubsub_all).map_err(|e| {
                format!(
                    "Error loading ACL rule '{}' for the user named '{}': {}",
                    String::from_utf8_lossy(r),
                    l[0],
                    e.text()
                )
            })?;
        }
        out.push(u);
    }
    Ok(out)
}

fn trim<'a>(s: &'a [u8], set: &[u8]) -> &'a [u8] {
    let start = s.iter().position(|c| !set.contains(c)).unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|c| !set.contains(c))
        .map_or(start, |e| e + 1);
    &s[start..end]
}
