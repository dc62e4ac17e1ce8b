//! The first line of a script or library: `#!lua flags=...` for EVAL
//! scripts, `#!<engine> name=<library>` for FUNCTION LOAD.
//!
//! Both parsers read only the first line (up to the first `\n`); a body that
//! starts with `#!` but has no newline is refused, as Redis 7.0 does. Parts
//! are separated by runs of spaces. Error texts are Redis 7.0's (without the
//! leading `-`), checked against redis-server 7.0.15.

/// Flags a script or function declares (`#!lua flags=...` or the `flags`
/// argument of `redis.register_function`). A bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ScriptFlags(u8);

impl ScriptFlags {
    /// `no-writes`: the script may not call write commands.
    pub const NO_WRITES: ScriptFlags = ScriptFlags(1);
    /// `allow-oom`: may run (and call `denyoom` commands) over `maxmemory`.
    pub const ALLOW_OOM: ScriptFlags = ScriptFlags(2);
    /// `allow-stale`: may run on a stale replica.
    pub const ALLOW_STALE: ScriptFlags = ScriptFlags(4);
    /// `no-cluster`: refused in cluster mode.
    pub const NO_CLUSTER: ScriptFlags = ScriptFlags(8);
    /// `allow-cross-slot-keys`: may touch keys of several slots.
    pub const ALLOW_CROSS_SLOT_KEYS: ScriptFlags = ScriptFlags(16);
    /// An EVAL script without a shebang line: Redis's "compatibility mode"
    /// (`SCRIPT_FLAG_EVAL_COMPAT_MODE`), where the checks that flags would
    /// request are made per command instead of up front. Never set for
    /// functions or for scripts with a shebang.
    pub const EVAL_COMPAT_MODE: ScriptFlags = ScriptFlags(32);

    /// The flags a user can name, in the order Redis lists them.
    pub const NAMED: [(&'static str, ScriptFlags); 5] = [
        ("no-writes", ScriptFlags::NO_WRITES),
        ("allow-oom", ScriptFlags::ALLOW_OOM),
        ("allow-stale", ScriptFlags::ALLOW_STALE),
        ("no-cluster", ScriptFlags::NO_CLUSTER),
        ("allow-cross-slot-keys", ScriptFlags::ALLOW_CROSS_SLOT_KEYS),
    ];

    /// No flag.
    pub const fn empty() -> Self {
        ScriptFlags(0)
    }

    /// True if every flag of `other` is set.
    pub const fn contains(self, other: ScriptFlags) -> bool {
        self.0 & other.0 == other.0
    }

    /// Sets the flags of `other`.
    pub fn insert(&mut self, other: ScriptFlags) {
        self.0 |= other.0;
    }

    /// The flag named `name` (`no-writes`...), if any.
    pub fn by_name(name: &[u8]) -> Option<ScriptFlags> {
        Self::NAMED
            .iter()
            .find(|(n, _)| n.as_bytes() == name)
            .map(|&(_, f)| f)
    }

    /// The names of the set user flags, in Redis's order (FUNCTION LIST).
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMED
            .iter()
            .filter(|(_, f)| self.contains(*f))
            .map(|&(n, _)| n)
            .collect()
    }
}

/// The parts of the first line, split on runs of spaces.
fn parts(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&c| c == b' ').filter(|p| !p.is_empty())
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What an EVAL script's shebang says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EvalShebang {
    /// Declared flags; [`ScriptFlags::EVAL_COMPAT_MODE`] when there is no shebang.
    pub flags: ScriptFlags,
    /// Bytes of the shebang line, without its `\n` (0 without a shebang).
    /// The script is compiled from this offset, so the newline stays and
    /// line numbers match the body as written.
    pub len: usize,
}

/// Parses the shebang of an EVAL script body.
pub fn parse_eval(body: &[u8]) -> Result<EvalShebang, String> {
    if !body.starts_with(b"#!") {
        return Ok(EvalShebang {
            flags: ScriptFlags::EVAL_COMPAT_MODE,
            len: 0,
        });
    }
    let Some(nl) = body.iter().position(|&c| c == b'\n') else {
        return Err("ERR Invalid script shebang".into());
    };
    let line = &body[..nl];
    let mut it = parts(line);
    let engine = it.next().unwrap_or(b"");
    if engine != b"#!lua" {
        return Err(format!(
            "ERR Unexpected engine in script shebang: {}",
            lossy(engine)
        ));
    }
    let mut flags = ScriptFlags::empty();
    for part in it {
        let Some(list) = part.strip_prefix(b"flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {}", lossy(part)));
        };
        if list.is_empty() {
            continue;
        }
        for name in list.split(|&c| c == b',') {
            match ScriptFlags::by_name(name) {
                Some(f) => flags.insert(f),
                None => {
                    return Err(format!(
                        "ERR Unexpected flag in script shebang: {}",
                        lossy(name)
                    ))
                }
            }
        }
    }
    Ok(EvalShebang { flags, len: nl })
}

/// The metadata line of a function library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LibraryMeta {
    /// The engine name as written (matched case-insensitively).
    pub engine: String,
    /// The library name.
    pub name: String,
    /// Bytes of the metadata line, without its `\n`.
    pub len: usize,
}

/// True for a valid library or function name: `[A-Za-z0-9_]+`.
pub fn valid_name(name: &[u8]) -> bool {
    !name.is_empty() && name.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
}

/// The error for an invalid library or function name.
pub const BAD_NAME: &str = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// Parses `#!<engine> name=<lib>` at the start of a library's code.
/// Only the `lua` engine exists; that check belongs to the caller (whose
/// error is `Engine '<name>' not found`).
pub fn parse_library(code: &[u8]) -> Result<LibraryMeta, String> {
    if !code.starts_with(b"#!") {
        return Err("ERR Missing library metadata".into());
    }
    let Some(nl) = code.iter().position(|&c| c == b'\n') else {
        return Err("ERR Invalid library metadata".into());
    };
    let line = &code[..nl];
    let mut it = parts(&line[2..]);
    // `#! name=x` has an empty engine name: the first part is taken as
    // the engine only when it directly follows `#!`.
    let engine = if line.get(2).is_some_and(|&c| c != b' ') {
        it.next().unwrap_or(b"")
    } else {
        b""
    };
    let mut name: Option<&[u8]> = None;
    for part in it {
        let Some(v) = part.strip_prefix(b"name=") else {
            return Err(format!("ERR Invalid metadata value given: {}", lossy(part)));
        };
        if name.is_some() {
            return Err(
                "ERR Invalid metadata value, name argument was given multiple times".into(),
            );
        }
        name = Some(v);
    }
    let Some(name) = name else {
        return Err("ERR Library name was not given".into());
    };
    if !valid_name(name) {
        return Err(BAD_NAME.into());
    }
    Ok(LibraryMeta {
        engine: lossy(engine),
        name: lossy(name),
        len: nl,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eval_shebangs() {
        let s = parse_eval(b"return 1").unwrap();
        assert_eq!(s.flags, ScriptFlags::EVAL_COMPAT_MODE);
        let s = parse_eval(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap();
        assert!(s.flags.contains(ScriptFlags::NO_WRITES));
        assert!(s.flags.contains(ScriptFlags::ALLOW_OOM));
        assert!(!s.flags.contains(ScriptFlags::EVAL_COMPAT_MODE));
        assert_eq!(s.len, 31);
        assert_eq!(
            parse_eval(b"#!lua\nreturn 1").unwrap().flags,
            ScriptFlags::empty()
        );
        assert_eq!(
            parse_eval(b"#!lua flags=\nx").unwrap().flags,
            ScriptFlags::empty()
        );
        assert_eq!(
            parse_eval(b"#!lua").unwrap_err(),
            "ERR Invalid script shebang"
        );
        assert_eq!(
            parse_eval(b"#!luajit\nx").unwrap_err(),
            "ERR Unexpected engine in script shebang: #!luajit"
        );
        assert_eq!(
            parse_eval(b"#!lua x\nx").unwrap_err(),
            "ERR Unknown lua shebang option: x"
        );
        assert_eq!(
            parse_eval(b"#!lua flags=no-writes,,allow-oom\nx").unwrap_err(),
            "ERR Unexpected flag in script shebang: "
        );
        let f = parse_eval(b"#!lua  flags=no-writes flags=allow-oom\nx").unwrap();
        assert!(
            f.flags.contains(ScriptFlags::NO_WRITES) && f.flags.contains(ScriptFlags::ALLOW_OOM)
        );
    }

    #[test]
    fn library_metadata() {
        let m = parse_library(b"#!LUA name=lib_1\ncode").unwrap();
        assert_eq!(
            (m.engine.as_str(), m.name.as_str(), m.len),
            ("LUA", "lib_1", 16)
        );
        assert_eq!(
            parse_library(b"return 1").unwrap_err(),
            "ERR Missing library metadata"
        );
        assert_eq!(
            parse_library(b"#!lua name=x").unwrap_err(),
            "ERR Invalid library metadata"
        );
        assert_eq!(
            parse_library(b"#!lua\nx").unwrap_err(),
            "ERR Library name was not given"
        );
        assert_eq!(
            parse_library(b"#!lua name=a name=b\nx").unwrap_err(),
            "ERR Invalid metadata value, name argument was given multiple times"
        );
        assert_eq!(
            parse_library(b"#!lua flags=no-writes name=a\nx").unwrap_err(),
            "ERR Invalid metadata value given: flags=no-writes"
        );
        assert_eq!(
            parse_library(b"#!lua name=bad-name\nx").unwrap_err(),
            BAD_NAME
        );
        assert_eq!(parse_library(b"#!lua name=\nx").unwrap_err(), BAD_NAME);
        assert_eq!(parse_library(b"#! name=x\nr").unwrap().engine, "");
    }
}
