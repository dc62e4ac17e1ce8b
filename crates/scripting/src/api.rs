//! The `redis` table: `call`, `pcall`, `error_reply`, `status_reply`,
//! `sha1hex`, `log`, `setresp`, `set_repl`, `replicate_commands`,
//! `breakpoint`, `debug`, `acl_check_cmd` and the constants, with Redis
//! 7.0's argument checks and error texts (checked against 7.0.15).
//!
//! Errors Redis raises with `luaPushError` + `luaError` are raised as
//! `{err=...}` tables ([`table_error`]). `call` and `pcall` are raw C
//! functions ([`crate::call`]): `redis.call` raises the error reply of a
//! failed command as the table `{err = "<reply without '-'>"}`, and
//! `redis.pcall` returns it.

use mlua::{Lua, MultiValue, Table, Value};

use crate::error::{error_table_text, table_error};
use crate::host::{LogLevel, ReplFlags};
use crate::libs::exact;
use crate::num::write_g;
use crate::run::with_host;
use crate::sha1::sha1_hex;

/// Version facts a script can read (`redis.REDIS_VERSION`...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionInfo {
    /// `redis.REDIS_VERSION`, e.g. `7.0.15`.
    pub version: String,
    /// `redis.REDIS_VERSION_NUM`: `major << 16 | minor << 8 | patch`.
    pub version_num: u32,
}

impl Default for VersionInfo {
    /// Redis 7.0.15, the version Petrel reports.
    fn default() -> Self {
        VersionInfo {
            version: "7.0.15".into(),
            version_num: 0x07_00_0f,
        }
    }
}

const NO_ARGS: &str = "ERR Please specify at least one argument for this redis lib call";
const BAD_ARGS: &str = "ERR Lua redis lib command arguments must be strings or integers";

/// Command arguments flattened into one buffer.
pub(crate) struct Argv {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Argv {
    /// Redis's `luaArgsToRedisArgv`: strings as they are, numbers as
    /// `%.17g`; anything else refused.
    pub fn from_lua(args: &MultiValue) -> Option<Argv> {
        let mut bytes = Vec::with_capacity(64);
        let mut ends = Vec::with_capacity(args.len());
        for a in args.iter() {
            match a {
                Value::String(s) => bytes.extend_from_slice(&s.as_bytes()),
                Value::Integer(n) => write_g(&mut bytes, *n as f64, 17),
                Value::Number(x) => write_g(&mut bytes, *x, 17),
                _ => return None,
            }
            ends.push(bytes.len());
        }
        Some(Argv { bytes, ends })
    }

    /// The arguments as slices.
    pub fn slices(&self) -> Vec<&[u8]> {
        let mut out = Vec::with_capacity(self.ends.len());
        let mut start = 0;
        for &e in &self.ends {
            out.push(&self.bytes[start..e]);
            start = e;
        }
        out
    }
}

fn err_table(lua: &Lua, text: &[u8]) -> mlua::Result<Value> {
    let t = lua.create_table_with_capacity(0, 1)?;
    t.raw_set("err", lua.create_string(text)?)?;
    Ok(Value::Table(t))
}

fn error_reply(lua: &Lua, args: MultiValue) -> mlua::Result<Value> {
    match (args.len(), args.front()) {
        (1, Some(Value::String(s))) => {
            let b = s.as_bytes();
            let text = if b.first() == Some(&b'-') {
                error_table_text(&b)
            } else {
                let mut v = Vec::with_capacity(b.len() + 1);
                v.push(b'-');
                v.extend_from_slice(&b);
                error_table_text(&v)
            };
            err_table(lua, &text)
        }
        _ => err_table(lua, b"ERR wrong number or type of arguments"),
    }
}

fn status_reply(lua: &Lua, args: MultiValue) -> mlua::Result<Value> {
    match (args.len(), args.front()) {
        (1, Some(Value::String(s))) => {
            let t = lua.create_table_with_capacity(0, 1)?;
            t.raw_set("ok", s.clone())?;
            Ok(Value::Table(t))
        }
        _ => err_table(lua, b"ERR wrong number or type of arguments"),
    }
}

/// `lua_tolstring`: strings and numbers (`%.14g`), else nothing.
pub(crate) fn to_lstring(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(n) => Some(n.to_string().into_bytes()),
        Value::Number(x) => {
            let mut b = Vec::new();
            write_g(&mut b, *x, 14);
            Some(b)
        }
        _ => None,
    }
}

/// `lua_tonumber`: numbers and numeric strings, else 0.
pub(crate) fn to_number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(n) => Some(*n as f64),
        Value::Number(x) => Some(*x),
        Value::String(s) => crate::libs::lua_str2number(&s.as_bytes()),
        _ => None,
    }
}

fn sha1hex(lua: &Lua, args: MultiValue) -> mlua::Result<Value> {
    if args.len() != 1 {
        return Err(table_error("ERR wrong number of arguments"));
    }
    let data = args.front().and_then(to_lstring).unwrap_or_default();
    Ok(Value::String(lua.create_string(sha1_hex(&data))?))
}

fn log(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() < 2 {
        return Err(table_error(
            "ERR redis.log() requires two arguments or more.",
        ));
    }
    let Some(level) = args.front().and_then(to_number) else {
        return Err(table_error(
            "ERR First argument must be a number (log level).",
        ));
    };
    let level = match level as i32 {
        0 => LogLevel::Debug,
        1 => LogLevel::Verbose,
        2 => LogLevel::Notice,
        3 => LogLevel::Warning,
        _ => return Err(table_error("ERR Invalid debug level.")),
    };
    let mut msg = Vec::new();
    for (j, a) in args.iter().skip(1).enumerate() {
        if let Some(s) = to_lstring(a) {
            if j != 0 {
                msg.push(b' ');
            }
            msg.extend_from_slice(&s);
        }
    }
    with_host(lua, |host, _| host.log(level, &msg));
    Ok(())
}

fn setresp(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() != 1 {
        return Err(table_error("ERR redis.setresp() requires one argument."));
    }
    let proto = match args.front().and_then(to_number).map(|x| x as i32) {
        Some(2) => resp::Protocol::Resp2,
        Some(3) => resp::Protocol::Resp3,
        _ => return Err(table_error("ERR RESP version must be 2 or 3.")),
    };
    crate::run::with_state(lua, |st| st.resp = proto);
    Ok(())
}

fn set_repl(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    if args.len() != 1 {
        return Err(table_error("ERR redis.set_repl() requires two arguments."));
    }
    let flags = args.front().and_then(to_number).unwrap_or(0.0) as i32;
    if flags & !3 != 0 {
        return Err(table_error(
            "ERR Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
        ));
    }
    crate::run::with_state(lua, |st| st.repl = ReplFlags(flags as u8));
    Ok(())
}

fn acl_check_cmd(lua: &Lua, args: MultiValue) -> mlua::Result<bool> {
    if args.is_empty() {
        return Err(table_error(NO_ARGS));
    }
    let Some(argv) = Argv::from_lua(&args) else {
        return Err(table_error(BAD_ARGS));
    };
    let slices = argv.slices();
    match with_host(lua, |host, _| host.acl_check(&slices)) {
        Some(Some(b)) => Ok(b),
        _ => Err(table_error(
            "ERR Invalid command passed to redis.acl_check_cmd()",
        )),
    }
}

fn set_log_levels(t: &Table) -> mlua::Result<()> {
    t.raw_set("LOG_DEBUG", 0)?;
    t.raw_set("LOG_VERBOSE", 1)?;
    t.raw_set("LOG_NOTICE", 2)?;
    t.raw_set("LOG_WARNING", 3)?;
    Ok(())
}

fn set_version(t: &Table, v: &VersionInfo) -> mlua::Result<()> {
    t.raw_set("REDIS_VERSION", v.version.as_str())?;
    t.raw_set("REDIS_VERSION_NUM", v.version_num)?;
    Ok(())
}

/// Which `redis` table to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RedisApi {
    /// EVAL scripts: everything.
    Eval,
    /// Functions at run time: no `breakpoint`, `debug`, `replicate_commands`.
    Function,
}

/// Builds the runtime `redis` table.
pub(crate) fn redis_table(lua: &Lua, api: RedisApi, v: &VersionInfo) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let state = crate::run::state_of(lua).expect("run state installed before the redis table");
    t.raw_set("call", crate::call::function(lua, state, true)?)?;
    t.raw_set("pcall", crate::call::function(lua, state, false)?)?;
    t.raw_set("error_reply", lua.create_function(error_reply)?)?;
    t.raw_set("status_reply", lua.create_function(status_reply)?)?;
    t.raw_set("sha1hex", exact::create_function(lua, sha1hex)?)?;
    t.raw_set("log", exact::create_function(lua, log)?)?;
    t.raw_set("setresp", lua.create_function(setresp)?)?;
    t.raw_set("set_repl", lua.create_function(set_repl)?)?;
    t.raw_set("acl_check_cmd", exact::create_function(lua, acl_check_cmd)?)?;
    if api == RedisApi::Eval {
        t.raw_set(
            "replicate_commands",
            lua.create_function(|_, _: MultiValue| Ok(true))?,
        )?;
        t.raw_set(
            "breakpoint",
            lua.create_function(|_, _: MultiValue| Ok(false))?,
        )?;
        t.raw_set("debug", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    }
    set_log_levels(&t)?;
    set_version(&t, v)?;
    t.raw_set("REPL_NONE", 0)?;
    t.raw_set("REPL_AOF", 1)?;
    t.raw_set("REPL_SLAVE", 2)?;
    t.raw_set("REPL_REPLICA", 2)?;
    t.raw_set("REPL_ALL", 3)?;
    Ok(t)
}

/// Builds the load-time `redis` table of function libraries (without
/// `register_function`, which the functions module adds).
pub(crate) fn load_redis_table(lua: &Lua, v: &VersionInfo) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("log", exact::create_function(lua, log)?)?;
    set_log_levels(&t)?;
    set_version(&t, v)?;
    Ok(t)
}
