//! Which arguments of a call are keys, and with which key-spec flags
//! (`RW`, `access`, `update`...): what `COMMAND GETKEYS[ANDFLAGS]` reports
//! and what the ACL key check (`services::acl`) reads, so the two always
//! agree, as in Redis 7.0 where both come from
//! `getKeysFromCommandWithSpecs`.
//!
//! Key specs come from Redis's metadata laid over each spec (see
//! `kernel::spec`); a command without them but with a legacy
//! (first, last, step) triple gets one derived range spec.

use crate::base::errors;
use crate::base::parse::eq_ic;
use crate::kernel::spec::{flag, CommandSpec, KeySpec};

/// The key specs of a command: Redis 7.0's (or a petrel-only row's), or
/// one derived from the legacy (first, last, step) triple.
pub fn key_specs(spec: &CommandSpec) -> Vec<KeySpec> {
    if !spec.key_specs.is_empty() {
        return spec.key_specs.to_vec();
    }
    let k = spec.keys;
    if k.first <= 0 {
        return Vec::new();
    }
    let flags: &'static [&'static str] = if spec.flags & flag::WRITE != 0 {
        &["RW", "access", "update"]
    } else {
        &["RO", "access"]
    };
    let lastkey = if k.last < 0 { k.last } else { k.last - k.first };
    vec![KeySpec::range(flags, k.first, lastkey, k.step)]
}

/// Keys of a full command line with the flags of the key spec that found
/// each, or the error text Redis replies with.
pub fn keys_and_flags(
    table: &crate::kernel::table::CommandTable,
    cmd: &[&[u8]],
) -> Result<Vec<(usize, &'static [&'static str])>, &'static str> {
    let Some(mut idx) = table.lookup(cmd[0]) else {
        return Err(errors::ERR_INVALID_COMMAND_SPECIFIED);
    };
    if !table.get(idx).spec.subcommands.is_empty() && cmd.len() >= 2 {
        idx = table
            .lookup_sub(idx, cmd[1])
            .ok_or(errors::ERR_INVALID_COMMAND_SPECIFIED)?;
    }
    let spec = table.get(idx).spec;
    if !has_keys(spec) {
        return Err(errors::ERR_COMMAND_HAS_NO_KEY_ARGUMENTS);
    }
    if !spec.arity_ok(cmd.len()) {
        return Err(errors::ERR_INVALID_NUMBER_OF_ARGUMENTS_SPECIFIED_COMMAND);
    }
    call_keys(spec, cmd)
}

/// Does the command name keys at all (a key spec that is not `not_key`,
/// or its own key finder)? Redis's `doesCommandHaveKeys`.
pub fn has_keys(spec: &CommandSpec) -> bool {
    spec.getkeys.is_some()
        || if spec.key_specs.is_empty() {
            spec.keys.first > 0
        } else {
            spec.key_specs.iter().any(|k| !k.flags.contains(&"not_key"))
        }
}

/// The keys of a call to `spec` (looked up, arity checked) with the flags
/// of the key spec that found each, or the error text COMMAND GETKEYS
/// replies with when the arguments do not fit the specs.
pub fn call_keys(
    spec: &CommandSpec,
    cmd: &[&[u8]],
) -> Result<Vec<(usize, &'static [&'static str])>, &'static str> {
    let specs = key_specs(spec);
    let invalid = if spec.flags & flag::NO_MANDATORY_KEYS != 0 {
        Ok(Vec::new())
    } else {
        Err(errors::ERR_INVALID_ARGUMENTS_SPECIFIED_COMMAND)
    };
    if let Some(f) = spec.getkeys {
        let fl: &'static [&'static str] = match specs.first() {
            Some(ks) => ks.flags,
            None => &[],
        };
        // Each key takes the flags of the key spec that also finds it
        // (ZUNIONSTORE: the destination OW/update, the sources RO/access).
        // A key no complete spec finds is one only the command's own finder
        // knows (SORT ... STORE d): it takes the flags of the last
        // incomplete spec, which describes it (OW/update for SORT).
        let found: Vec<(Vec<usize>, &'static [&'static str])> = specs
            .iter()
            .filter_map(|ks| Some((ks.find(cmd)?, ks.flags)))
            .collect();
        let unlocated = specs
            .iter()
            .rev()
            .find(|ks| ks.find(cmd).is_none())
            .map_or(fl, |ks| ks.flags);
        let flags_of = |i: usize| {
            let f = found
                .iter()
                .find(|(keys, _)| keys.contains(&i))
                .map_or(unlocated, |(_, f)| *f);
            // A command's own finder knows its keys: Redis reports them
            // without the spec's `incomplete` mark (MIGRATE's KEYS).
            match f {
                ["RW", "access", "delete", "incomplete"] => &["RW", "access", "delete"],
                _ => f,
            }
        };
        return match f(cmd) {
            Some(v) => Ok(v.into_iter().map(|i| (i, flags_of(i))).collect()),
            None => invalid,
        };
    }
    let mut out = Vec::new();
    for ks in &specs {
        let flags = if ks.flags.contains(&"variable_flags") {
            variable_key_flags(spec.name, cmd).unwrap_or(ks.flags)
        } else {
            ks.flags
        };
        match ks.find(cmd) {
            Some(v) => out.extend(v.into_iter().map(|i| (i, flags))),
            None => return invalid,
        }
    }
    Ok(out)
}

/// The actual key flags of a call to a command whose key spec says
/// `variable_flags`, decided from its arguments as Redis 7.0's
/// `setGetKeys` / `bitfieldGetKeys` do.
pub fn variable_key_flags(name: &str, cmd: &[&[u8]]) -> Option<&'static [&'static str]> {
    const RW: &[&str] = &["RW", "access", "update"];
    match name {
        // SET ... GET reads the old value; plain SET overwrites it.
        "set" => Some(if cmd.iter().skip(3).any(|a| eq_ic(a, "get")) {
            RW
        } else {
            &["OW", "update"]
        }),
        // BITFIELD with only GET (and OVERFLOW) operations only reads.
        "bitfield" => {
            let mut i = 2;
            while i < cmd.len() {
                let rem = cmd.len() - i - 1;
                if eq_ic(cmd[i], "get") && rem >= 2 {
                    i += 3;
                } else if eq_ic(cmd[i], "overflow") && rem >= 1 {
                    i += 2;
                } else {
                    return Some(RW);
                }
            }
            Some(&["RO", "access"])
        }
        _ => None,
    }
}
