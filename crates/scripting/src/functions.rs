//! Function libraries (FUNCTION LOAD / DELETE / FLUSH / LIST / DUMP /
//! RESTORE / STATS, FCALL / FCALL_RO) in their own Lua VM, as Redis 7.0
//! keeps them apart from EVAL scripts.
//!
//! Loading a library: the metadata line `#!lua name=<lib>` is parsed, the
//! rest compiled with the chunk name `@user_function`, and run with the
//! global table switched to the load-time API (only `redis.register_function`,
//! `redis.log`, `redis.LOG_*`, `redis.REDIS_VERSION*`; anything else is a
//! "nonexistent global variable"), under a 500 ms timeout. The callbacks
//! keep the ordinary global table as their environment, so at call time
//! they see the full sandbox (less `KEYS`/`ARGV`).
//!
//! Invariants: a failed load, delete or restore leaves the registry as it
//! was; every function name belongs to exactly one library; `libraries`
//! and `functions` agree.
//!
//! FUNCTION DUMP / RESTORE payloads are RDB-framed (an opcode-245 record per
//! library holding its code as an RDB string, then the RDB version and a
//! CRC-64). The framing belongs to the `rdb` crate: this module gives the
//! codes to dump ([`FunctionEngine::dump_codes`]) and restores from codes
//! ([`FunctionEngine::restore`]).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use mlua::{Function, Lua, MultiValue, RegistryKey, Table, Value};
use resp::ReplyBuf;

use crate::api::{to_lstring, VersionInfo};
use crate::cache::new_vm;
use crate::error::table_error;
use crate::exec::Kind;
use crate::host::Host;
use crate::reply::gc_tick;
use crate::run::{enter, with_state, Phase};
use crate::sandbox::{Vm, VmKind};
use crate::shebang::{parse_library, valid_name, ScriptFlags, BAD_NAME};

/// One registered function.
#[derive(Clone)]
pub struct FunctionDef {
    /// Its name.
    pub name: String,
    /// `description` given to `register_function`, if any.
    pub description: Option<Vec<u8>>,
    /// Its flags.
    pub flags: ScriptFlags,
    /// The callback, in the Lua registry (shared by the clones FUNCTION
    /// RESTORE keeps to roll back).
    func: Arc<RegistryKey>,
}

/// One library.
#[derive(Clone)]
pub struct Library {
    /// Its name.
    pub name: String,
    /// The code as loaded (with the metadata line).
    pub code: Vec<u8>,
    /// Its functions by name.
    pub functions: BTreeMap<String, FunctionDef>,
}

/// What FUNCTION RESTORE does with the existing libraries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestorePolicy {
    /// Fail if a restored library already exists (the default).
    Append,
    /// Replace libraries of the same name.
    Replace,
    /// Delete every library first.
    Flush,
}

/// Registrations collected while a library loads (app data).
struct Pending(Vec<FunctionDef>);

/// The function libraries and their VM.
pub struct FunctionEngine {
    vm: Vm,
    version: VersionInfo,
    libraries: BTreeMap<String, Library>,
    /// function name → library name
    functions: HashMap<String, String>,
    gc_count: u32,
}

/// Builds the load-time `redis` table, with `register_function`.
pub(crate) fn load_api(lua: &Lua, version: &VersionInfo) -> mlua::Result<Table> {
    let t = crate::api::load_redis_table(lua, version)?;
    t.raw_set("register_function", lua.create_function(register_function)?)?;
    Ok(t)
}

fn register_function(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    let (name, callback, flags, description) = match args.len() {
        1 => {
            let Some(Value::Table(t)) = args.front() else {
                return Err(table_error("ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments)."));
            };
            named_args(t)?
        }
        2 => {
            let name = match &args[0] {
                Value::String(s) => s.as_bytes().to_vec(),
                _ => {
                    return Err(table_error(
                        "ERR first argument to redis.register_function must be a string",
                    ))
                }
            };
            let cb = match &args[1] {
                Value::Function(f) => f.clone(),
                _ => {
                    return Err(table_error(
                        "ERR second argument to redis.register_function must be a function",
                    ))
                }
            };
            (name, cb, ScriptFlags::empty(), None)
        }
        _ => {
            return Err(table_error(
                "ERR wrong number of arguments to redis.register_function",
            ))
        }
    };
    if !valid_name(&name) {
        return Err(table_error(BAD_NAME));
    }
    let name = String::from_utf8(name).expect("valid names are ASCII");
    let mut pending = lua.app_data_mut::<Pending>().ok_or_else(|| {
        table_error("ERR redis.register_function can only be called on FUNCTION LOAD command")
    })?;
    if pending.0.iter().any(|f| f.name == name) {
        return Err(table_error("ERR Function already exists in the library"));
    }
    let func = Arc::new(lua.create_registry_value(callback)?);
    pending.0.push(FunctionDef {
        name,
        description,
        flags,
        func,
    });
    Ok(())
}

type Named = (Vec<u8>, Function, ScriptFlags, Option<Vec<u8>>);

fn named_args(t: &Table) -> mlua::Result<Named> {
    let mut name = None;
    let mut cb = None;
    let mut flags = ScriptFlags::empty();
    let mut description = None;
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let key = match &k {
            Value::String(s) => s.as_bytes().to_vec(),
            _ => {
                return Err(table_error(
                    "ERR named argument key given to redis.register_function is not a string",
                ))
            }
        };
        match key.as_slice() {
            b"function_name" => match &v {
                Value::String(s) => name = Some(s.as_bytes().to_vec()),
                _ => return Err(table_error(
                    "ERR function_name argument given to redis.register_function must be a string",
                )),
            },
            b"description" => match to_lstring(&v) {
                Some(s) => description = Some(s),
                None => return Err(table_error(
                    "ERR description argument given to redis.register_function must be a string",
                )),
            },
            b"callback" => {
                match v {
                    Value::Function(f) => cb = Some(f),
                    _ => return Err(table_error(
                        "ERR callback argument given to redis.register_function must be a function",
                    )),
                }
            }
            b"flags" => {
                let Value::Table(ft) = v else {
                    return Err(table_error("ERR flags argument to redis.register_function must be a table representing function flags"));
                };
                for i in 1..=ft.raw_len() {
                    let f = match ft.raw_get::<Value>(i)? {
                        Value::String(s) => ScriptFlags::by_name(&s.as_bytes()),
                        _ => None,
                    };
                    match f {
                        Some(f) => flags.insert(f),
                        None => return Err(table_error("ERR unknown flag given")),
                    }
                }
            }
            _ => {
                return Err(table_error(
                    "ERR unknown argument given to redis.register_function",
                ))
            }
        }
    }
    let name = name.ok_or_else(|| {
        table_error("ERR redis.register_function must get a function name argument")
    })?;
    let cb =
        cb.ok_or_else(|| table_error("ERR redis.register_function must get a callback argument"))?;
    Ok((name, cb, flags, description))
}

impl FunctionEngine {
    /// An engine without libraries.
    pub fn new(version: VersionInfo) -> Self {
        FunctionEngine {
            vm: new_vm(VmKind::Functions, &version),
            version,
            libraries: BTreeMap::new(),
            functions: HashMap::new(),
            gc_count: 0,
        }
    }

    /// FUNCTION LOAD [REPLACE]: returns the library name, or the error text.
    /// `host` receives `redis.log` lines of the library's top-level code.
    pub fn load(
        &mut self,
        host: Option<&mut dyn Host>,
        code: &[u8],
        replace: bool,
    ) -> Result<String, String> {
        let lib = self.compile_and_run(host, code, replace)?;
        let name = lib.name.clone();
        self.install(lib);
        Ok(name)
    }

    fn compile_and_run(
        &mut self,
        host: Option<&mut dyn Host>,
        code: &[u8],
        replace: bool,
    ) -> Result<Library, String> {
        let meta = parse_library(code)?;
        if !meta.engine.eq_ignore_ascii_case("lua") {
            return Err(format!("ERR Engine '{}' not found", meta.engine));
        }
        if !replace && self.libraries.contains_key(&meta.name) {
            return Err(format!("ERR Library '{}' already exists", meta.name));
        }
        let lua = &self.vm.lua;
        let chunk = lua
            .load(crate::sandbox::text_chunk(&code[meta.len..]).as_ref())
            .set_name("@user_function")
            .into_function()
            .map_err(|e| {
                format!(
                    "ERR Error compiling function: {}",
                    crate::error::plain_text(&e)
                )
            })?;
        let load_real = self
            .vm
            .load_real
            .clone()
            .expect("functions VM has load globals");
        lua.set_app_data(Pending(Vec::new()));
        let _ = self.vm.pmt.raw_set("__index", load_real);
        let guard = enter(self.vm.state.ptr(), host, Phase::Load);
        let res = self
            .vm
            .xpcall
            .call::<MultiValue>((chunk, self.vm.handler.clone()));
        drop(guard);
        let _ = self.vm.pmt.raw_set("__index", self.vm.real.clone());
        let pending = lua
            .remove_app_data::<Pending>()
            .map(|p| p.0)
            .unwrap_or_default();
        match res {
            Ok(vals) => {
                let mut it = vals.into_iter();
                if !matches!(it.next(), Some(Value::Boolean(true))) {
                    let msg = match it.next() {
                        Some(Value::Table(t)) => match t.raw_get::<Value>("err") {
                            Ok(Value::String(s)) => s.to_string_lossy().to_string(),
                            _ => "unknown error".into(),
                        },
                        _ => "unknown error".into(),
                    };
                    return Err(format!("ERR Error registering functions: {msg}"));
                }
            }
            Err(e) => {
                return Err(format!(
                    "ERR Error registering functions: {}",
                    crate::error::plain_text(&e)
                ))
            }
        }
        if pending.is_empty() {
            return Err("ERR No functions registered".into());
        }
        for f in &pending {
            if let Some(owner) = self.functions.get(&f.name) {
                if *owner != meta.name {
                    return Err(format!("ERR Function {} already exists", f.name));
                }
            }
        }
        Ok(Library {
            name: meta.name,
            code: code.to_vec(),
            functions: pending.into_iter().map(|f| (f.name.clone(), f)).collect(),
        })
    }

    fn install(&mut self, lib: Library) {
        self.remove(&lib.name.clone());
        for f in lib.functions.keys() {
            self.functions.insert(f.clone(), lib.name.clone());
        }
        self.libraries.insert(lib.name.clone(), lib);
    }

    fn remove(&mut self, name: &str) -> Option<Library> {
        let lib = self.libraries.remove(name)?;
        for f in lib.functions.keys() {
            self.functions.remove(f);
        }
        Some(lib)
    }

    /// FUNCTION DELETE.
    pub fn delete(&mut self, name: &str) -> Result<(), String> {
        self.remove(name)
            .map(|_| ())
            .ok_or_else(|| "ERR Library not found".into())
    }

    /// FUNCTION FLUSH: drops every library and replaces the VM.
    pub fn flush(&mut self) {
        self.libraries.clear();
        self.functions.clear();
        self.vm = new_vm(VmKind::Functions, &self.version);
    }

    /// The libraries, by name (FUNCTION LIST; Redis lists them in hash
    /// order, which clients must not rely on).
    pub fn libraries(&self) -> impl Iterator<Item = &Library> {
        self.libraries.values()
    }

    /// The library named `name`.
    pub fn library(&self, name: &str) -> Option<&Library> {
        self.libraries.get(name)
    }

    /// The function named `name` and its library.
    pub fn function(&self, name: &[u8]) -> Option<(&Library, &FunctionDef)> {
        let name = std::str::from_utf8(name).ok()?;
        let lib = self.libraries.get(self.functions.get(name)?)?;
        Some((lib, lib.functions.get(name)?))
    }

    /// Number of libraries (`number_of_libraries`, FUNCTION STATS).
    pub fn library_count(&self) -> usize {
        self.libraries.len()
    }

    /// Number of functions (`number_of_functions`, FUNCTION STATS).
    pub fn function_count(&self) -> usize {
        self.functions.len()
    }

    /// Bytes used by the functions VM (`used_memory_vm_functions`).
    pub fn vm_memory(&self) -> usize {
        self.vm.lua.used_memory()
    }

    /// Bytes of library code and names kept (`used_memory_functions`,
    /// without allocator overhead).
    pub fn libraries_memory(&self) -> usize {
        self.libraries
            .values()
            .map(|l| {
                l.code.len() + l.name.len() + l.functions.keys().map(|f| f.len()).sum::<usize>()
            })
            .sum()
    }

    /// The codes FUNCTION DUMP serializes, one per library.
    pub fn dump_codes(&self) -> Vec<&[u8]> {
        self.libraries.values().map(|l| l.code.as_slice()).collect()
    }

    /// FUNCTION RESTORE from the library codes of a payload. All or
    /// nothing: on any error the libraries are left as they were.
    pub fn restore(&mut self, codes: &[&[u8]], policy: RestorePolicy) -> Result<(), String> {
        let saved_libs = self.libraries.clone();
        let saved_fns = self.functions.clone();
        if policy == RestorePolicy::Flush {
            self.libraries.clear();
            self.functions.clear();
        }
        for code in codes {
            // Redis loads the payload's libraries first, then joins them to
            // the existing ones: a name collision reads differently from
            // FUNCTION LOAD's.
            let res = self.compile_and_run(None, code, true).and_then(|lib| {
                if policy == RestorePolicy::Append && self.libraries.contains_key(&lib.name) {
                    return Err(format!("ERR Library {} already exists", lib.name));
                }
                self.install(lib);
                Ok(())
            });
            if let Err(e) = res {
                self.libraries = saved_libs;
                self.functions = saved_fns;
                return Err(e);
            }
        }
        Ok(())
    }

    /// FCALL / FCALL_RO: runs function `name` with `keys` and `args`,
    /// writing its reply to `out`; `-ERR Function not found` if unknown.
    pub fn call(
        &mut self,
        host: &mut dyn Host,
        name: &[u8],
        keys: &[&[u8]],
        args: &[&[u8]],
        out: &mut ReplyBuf,
    ) {
        let Some((_, def)) = self.function(name) else {
            out.error("ERR Function not found");
            return;
        };
        let func = def.func.id();
        let fname = def.name.clone();
        let state = self.vm.state.ptr();
        let guard = enter(state, Some(host), Phase::Run);
        self.vm.entry.run(
            &self.vm.lua,
            state,
            Kind::Function,
            func,
            keys,
            args,
            &fname,
            out,
        );
        guard.finish();
        gc_tick(&self.vm.lua, &mut self.gc_count);
    }

    /// Whether the last (or current) call was killed by the host.
    pub fn was_killed(&self) -> bool {
        with_state(&self.vm.lua, |st| st.killed).unwrap_or(false)
    }
}
