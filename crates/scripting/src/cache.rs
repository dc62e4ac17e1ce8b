//! The EVAL engine: the script cache (SCRIPT LOAD / EXISTS / FLUSH) and
//! running cached scripts (EVAL / EVALSHA and their `_RO` forms).
//!
//! A script is named by the SHA-1 of its whole body (shebang included),
//! compiled once from the body after its shebang line with the chunk name
//! `@user_script` (so errors read `user_script:<line>:`), and kept as Redis
//! keeps `f_<sha>`: one compiled function per body, until SCRIPT FLUSH,
//! which — as in Redis — throws the whole VM away and builds a new one.
//!
//! What one cached script keeps (the cost `SCRIPT LOAD` of many distinct
//! scripts adds up): its compiled function in the VM, in a registry slot
//! of its own (a plain `luaL_ref`, not an mlua `RegistryKey`: scripts are
//! only ever dropped all at once with the VM), and one 48-byte map entry:
//! the lowercase hex SHA, that slot and the flags. The body itself is not kept: nothing reads it back (Redis 7.0
//! replicates a script's effects, never its body, and has no command that
//! returns one), and it was the largest part of an entry.
//!
//! `used_memory_scripts_eval` is what the cache really holds outside the
//! VM: the map's allocation (Redis counts its dictionary and the SHA and
//! body strings it keeps; the compiled functions are in `used_memory_lua`
//! in both).
//!
//! Invariant: every cached SHA maps to a compiled function of the current
//! VM, in the registry slot its entry names.

use std::os::raw::c_int;

use hashbrown::HashMap;
use mlua::{ffi, Function};
use resp::ReplyBuf;

use crate::api::{redis_table, RedisApi, VersionInfo};
use crate::exec::Kind;
use crate::host::Host;
use crate::reply::gc_tick;
use crate::run::{enter, with_state, Phase};
use crate::sandbox::{Vm, VmKind};
use crate::sha1::sha1_hex;
use crate::shebang::{parse_eval, ScriptFlags};

/// A script's name: 40 lowercase hex digits.
pub type Sha = [u8; 40];

/// The error for an unknown SHA (EVALSHA).
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// One cached script.
pub struct Script {
    /// Registry slot of the compiled function (a `Function` held in Rust
    /// would take one of mlua's ~8000 auxiliary stack slots, capping the
    /// cache).
    func: c_int,
    flags: ScriptFlags,
}

impl Script {
    /// Flags from the shebang ([`ScriptFlags::EVAL_COMPAT_MODE`] without one).
    pub fn flags(&self) -> ScriptFlags {
        self.flags
    }
}

/// `sha` (40 bytes) lowercased: EVALSHA's key for the cache, which is
/// keyed by the lowercase hex SHA (converting to and from the 20 binary
/// bytes on every EVALSHA cost more than the 20 bytes an entry it saves).
fn lower_key(sha: &[u8]) -> Option<Sha> {
    let mut key: Sha = sha.try_into().ok()?;
    key.make_ascii_lowercase();
    Some(key)
}

/// Compiles `chunk` (as text: the caller made it so) named `name`; the
/// error is Lua's message, bytes as they are (mlua's own error would carry
/// it as a Rust `String`, replacing bytes that are not UTF-8).
fn compile(lua: &mlua::Lua, chunk: &[u8], name: &std::ffi::CStr) -> Result<Function, Vec<u8>> {
    let mut err = Vec::new();
    // SAFETY: runs in a protected C frame with room for the one value it
    // leaves (the function, or nil after copying the message out);
    // luaL_loadbuffer catches parse errors itself, and the message is read
    // before it is popped. Nothing with a destructor is live across a Lua
    // call that may raise (only `err`, owned outside).
    let res = unsafe {
        lua.exec_raw::<mlua::Value>((), |l| {
            let status = ffi::luaL_loadbuffer(l, chunk.as_ptr().cast(), chunk.len(), name.as_ptr());
            if status != 0 {
                let mut len = 0usize;
                let p = ffi::lua_tolstring(l, -1, &mut len);
                if !p.is_null() {
                    err.extend_from_slice(std::slice::from_raw_parts(p.cast::<u8>(), len));
                }
                ffi::lua_settop(l, -2);
                ffi::lua_pushnil(l);
            }
        })
    };
    match res {
        Ok(mlua::Value::Function(f)) => Ok(f),
        Ok(_) => Err(err),
        Err(e) => Err(crate::error::plain_text(&e).into_bytes()),
    }
}

/// Puts `func` in a new registry slot of `lua` and returns the slot.
fn registry_ref(lua: &mlua::Lua, func: Function) -> mlua::Result<c_int> {
    let mut slot = ffi::LUA_REFNIL;
    // SAFETY: `func` is pushed by exec_raw as the closure's one argument;
    // `luaL_ref` pops it into a new registry slot (it may raise a memory
    // error, which exec_raw's protected call turns into an `Err`; nothing
    // with a destructor is live in the closure).
    unsafe {
        lua.exec_raw::<()>(func, |l| {
            slot = ffi::luaL_ref(l, ffi::LUA_REGISTRYINDEX);
        })?;
    }
    Ok(slot)
}

/// Settings of an engine.
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    /// What `redis.REDIS_VERSION` / `REDIS_VERSION_NUM` say.
    pub version: VersionInfo,
}

pub(crate) fn new_vm(kind: VmKind, version: &VersionInfo) -> Vm {
    let vm = Vm::new(kind, |lua| {
        let api = if kind == VmKind::Eval {
            RedisApi::Eval
        } else {
            RedisApi::Function
        };
        let redis = redis_table(lua, api, version)?;
        let load = if kind == VmKind::Functions {
            Some(crate::functions::load_api(lua, version)?)
        } else {
            None
        };
        Ok((redis, load))
    })
    .expect("building the sandboxed Lua VM does not fail");
    crate::hook::install(&vm.lua);
    vm
}

/// The EVAL scripting engine: one Lua VM and its script cache.
pub struct ScriptEngine {
    vm: Vm,
    /// Keyed by the lowercase hex SHA.
    scripts: HashMap<Sha, Script>,
    config: EngineConfig,
    gc_count: u32,
}

impl ScriptEngine {
    /// A new engine with an empty cache.
    pub fn new(config: EngineConfig) -> Self {
        ScriptEngine {
            vm: new_vm(VmKind::Eval, &config.version),
            scripts: HashMap::new(),
            config,
            gc_count: 0,
        }
    }

    /// Compiles and caches `body` if it is not cached yet (SCRIPT LOAD, and
    /// the first step of EVAL). Returns its SHA, or the error reply text
    /// (shebang errors, `ERR Error compiling script (new function): ...`).
    ///
    /// The error is bytes: Lua's compile message quotes the script's own
    /// text, which need not be UTF-8, and Redis replies with it as it is.
    pub fn load(&mut self, body: &[u8]) -> Result<Sha, Vec<u8>> {
        let sha = sha1_hex(body);
        if self.scripts.contains_key(&sha) {
            return Ok(sha);
        }
        let shebang = parse_eval(body).map_err(String::into_bytes)?;
        let func = compile(
            &self.vm.lua,
            &crate::sandbox::text_chunk(&body[shebang.len..]),
            c"@user_script",
        )
        .map_err(|e| [&b"ERR Error compiling script (new function): "[..], &e].concat())?;
        let func = registry_ref(&self.vm.lua, func)
            .map_err(|e| format!("ERR {}", crate::error::plain_text(&e)).into_bytes())?;
        let script = Script {
            func,
            flags: shebang.flags,
        };
        self.scripts.insert(sha, script);
        Ok(sha)
    }

    /// The cached script named `sha` (exact, lowercase; SCRIPT EXISTS).
    pub fn get(&self, sha: &[u8]) -> Option<&Script> {
        let key: &Sha = sha.try_into().ok()?;
        self.scripts.get(key)
    }

    /// SCRIPT EXISTS for one SHA.
    pub fn exists(&self, sha: &[u8]) -> bool {
        self.get(sha).is_some()
    }

    /// EVALSHA's lookup: case-insensitive, as Redis lowercases the SHA.
    pub fn find(&self, sha: &[u8]) -> Option<Sha> {
        self.find_with_flags(sha).map(|(sha, _)| sha)
    }

    /// The flags of the script `sha` (either case), if cached.
    pub fn flags_of(&self, sha: &[u8]) -> Option<ScriptFlags> {
        self.scripts.get(&lower_key(sha)?).map(|s| s.flags)
    }

    /// [`ScriptEngine::find`] and the script's flags, in one lookup.
    pub fn find_with_flags(&self, sha: &[u8]) -> Option<(Sha, ScriptFlags)> {
        let key = lower_key(sha)?;
        self.scripts.get(&key).map(|s| (key, s.flags))
    }

    /// SCRIPT FLUSH: forgets every script and replaces the VM (its memory
    /// goes back to the allocator when the old VM drops).
    pub fn flush(&mut self) {
        self.scripts = HashMap::new();
        self.vm = new_vm(VmKind::Eval, &self.config.version);
    }

    /// Runs the cached script `sha` with `KEYS`/`ARGV`, writing its reply
    /// (or error) to `out`, which is encoded for the calling client.
    /// Writes `-NOSCRIPT ...` for an unknown SHA. The caller has checked
    /// the script's flags and taken whatever locks the run needs.
    pub fn run(
        &mut self,
        host: &mut dyn Host,
        sha: &Sha,
        keys: &[&[u8]],
        args: &[&[u8]],
        out: &mut ReplyBuf,
    ) {
        let Some(script) = self.scripts.get(sha) else {
            out.error(NOSCRIPT);
            return;
        };
        let state = self.vm.state.ptr();
        let name = std::str::from_utf8(sha).unwrap_or("?");
        let guard = enter(state, Some(host), Phase::Run);
        self.vm.entry.run(
            &self.vm.lua,
            state,
            Kind::Script,
            script.func,
            keys,
            args,
            name,
            out,
        );
        guard.finish();
        gc_tick(&self.vm.lua, &mut self.gc_count);
    }

    /// EVAL: [`ScriptEngine::load`] then [`ScriptEngine::run`]; a load
    /// error becomes the reply.
    pub fn eval(
        &mut self,
        host: &mut dyn Host,
        body: &[u8],
        keys: &[&[u8]],
        args: &[&[u8]],
        out: &mut ReplyBuf,
    ) {
        match self.load(body) {
            Ok(sha) => self.run(host, &sha, keys, args, out),
            Err(e) => out.error_bytes(&e),
        }
    }

    /// EVALSHA: runs the script if cached, else `-NOSCRIPT`.
    pub fn evalsha(
        &mut self,
        host: &mut dyn Host,
        sha: &[u8],
        keys: &[&[u8]],
        args: &[&[u8]],
        out: &mut ReplyBuf,
    ) {
        match self.find(sha) {
            Some(sha) => self.run(host, &sha, keys, args, out),
            None => out.error(NOSCRIPT),
        }
    }

    /// Number of cached scripts (`number_of_cached_scripts`).
    pub fn len(&self) -> usize {
        self.scripts.len()
    }

    /// True when no script is cached.
    pub fn is_empty(&self) -> bool {
        self.scripts.is_empty()
    }

    /// Bytes the cache holds outside the VM (`used_memory_scripts_eval`):
    /// the map's allocation.
    pub fn scripts_memory(&self) -> usize {
        self.scripts.allocation_size()
    }

    /// Bytes used by the Lua VM (`used_memory_lua`, `used_memory_vm_eval`).
    pub fn vm_memory(&self) -> usize {
        self.vm.lua.used_memory()
    }

    /// Whether the last (or current) run was killed by the host.
    pub fn was_killed(&self) -> bool {
        with_state(&self.vm.lua, |st| st.killed).unwrap_or(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evalsha_lookup_ignores_case_and_refuses_non_shas() {
        let mut e = ScriptEngine::new(EngineConfig::default());
        let sha = e.load(b"return 1").unwrap();
        assert_eq!(&sha, b"e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
        assert!(e.exists(&sha));
        // EVALSHA lowercases; SCRIPT EXISTS does not.
        let upper = sha.to_ascii_uppercase();
        assert_eq!(e.find(&upper), Some(sha));
        assert!(!e.exists(&upper));
        // Not 40 hex digits: unknown, never a panic.
        for bad in [&b"e0e1"[..], &[b'g'; 40], &sha[..39], &[0xff; 40]] {
            assert_eq!(e.find(bad), None);
            assert!(!e.exists(bad));
        }
        assert_eq!(e.len(), 1);
        assert!(e.scripts_memory() > 0);
        e.flush();
        assert_eq!(e.find(&sha), None);
        assert_eq!(e.scripts_memory(), 0);
    }
}
