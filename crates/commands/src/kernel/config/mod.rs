//! Configuration: the parameter tables, `redis.conf`-style parsing, and the
//! live settings that `CONFIG GET/SET/REWRITE` work on.
//!
//! Every setting is a typed field of [`Settings`] (`settings`). Each
//! parameter group (`params::*`, one per area: network, server, persistence,
//! client limits, diagnostics, keyspace, memory, encodings) maps Redis
//! parameter names to a getter and a setter of those fields; the groups are
//! composed into [`Params`] by `crate::registry`, so the file parser
//! (`file`), the command line, `CONFIG SET` and `CONFIG REWRITE` share one
//! definition of names, defaults and validation (`values`).
//!
//! Invariants:
//! * A `Settings` value is immutable once published; `CONFIG SET` builds a new
//!   one from a clone, validates every pair, then publishes it whole (all or
//!   nothing) and bumps [`ConfigStore::generation`], which hot paths poll to
//!   refresh their cached `Arc<Settings>`.
//! * `format(parse(x)) == format(parse(format(parse(x))))`: what CONFIG GET
//!   prints can be fed back to CONFIG SET and to a config file.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

/// Builds a [`Param`] row without aliases whose default is a literal.
macro_rules! p {
    ($name:expr, $mutable:expr, $default:expr, $get:expr, $set:expr) => {
        Param {
            name: $name,
            aliases: &[],
            mutable: $mutable,
            default: || String::from($default),
            get: $get,
            set: $set,
        }
    };
}

/// Builds the [`Param`] row of a setting whose feature Petrel does not
/// have (yet): it reads as Redis's default and accepts only that default
/// (so accepting it changes nothing); any other value is refused with a
/// message naming the setting and the missing feature
/// ([`values::only_default`]). `$kind` says how values compare
/// (`values::Same`), `$default` is Redis 7.0's `CONFIG GET` form.
macro_rules! absent {
    ($name:expr, $mutable:expr, $default:expr, $kind:expr, $feature:expr) => {
        absent!($name, [], $mutable, $default, $kind, $feature)
    };
    ($name:expr, [$($alias:expr),*], $mutable:expr, $default:expr, $kind:expr, $feature:expr) => {
        Param {
            name: $name,
            aliases: &[$($alias),*],
            mutable: $mutable,
            default: || String::from($default),
            get: |_| String::from($default),
            set: |_, v| $crate::kernel::config::values::only_default($name, $feature, $kind, $default, v),
        }
    };
}

pub mod file;
pub mod params;
pub mod settings;
#[cfg(test)]
mod tests;
pub mod values;

pub use file::{load_from_args, rewrite_text, split_config_line, ConfigError};
pub use settings::*;
pub use values::{parse_bool, parse_memory};

/// A configuration parameter.
pub struct Param {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// Can be changed with CONFIG SET.
    pub mutable: bool,
    pub default: fn() -> String,
    pub get: fn(&Settings) -> String,
    /// Parses and stores; the error is Redis's reason text (without prefix).
    pub set: fn(&mut Settings, &str) -> Result<(), String>,
}

/// Settings CONFIG SET may change only when `enable-protected-configs`
/// allows it (Redis 7.0's PROTECTED_CONFIG: they name files the server
/// writes).
pub const PROTECTED: &[&str] = &["dir", "dbfilename"];

/// Settings whose values are secrets: MONITOR and SLOWLOG show CONFIG SET's
/// value as `(redacted)` (Redis 7.0's SENSITIVE_CONFIG).
pub const SENSITIVE: &[&str] = &[
    "requirepass",
    "masterauth",
    "tls-key-file-pass",
    "tls-client-key-file-pass",
];

/// Every parameter, as the groups `crate::registry` composes.
#[derive(Clone, Copy)]
pub struct Params {
    pub groups: &'static [&'static [Param]],
}

impl Params {
    /// Every parameter, group by group (CONFIG GET and REWRITE order).
    pub fn iter(self) -> impl Iterator<Item = &'static Param> {
        self.groups.iter().flat_map(|g| g.iter())
    }

    /// Looks a parameter up by name or alias (case-insensitive).
    pub fn find(self, name: &str) -> Option<&'static Param> {
        self.iter().find(|p| {
            p.name.eq_ignore_ascii_case(name)
                || p.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }
}

/// The published settings plus the config file they came from.
pub struct ConfigStore {
    /// Every parameter, by group.
    pub params: Params,
    current: RwLock<Arc<Settings>>,
    generation: AtomicU64,
    pub file: Option<PathBuf>,
    /// Rebinds the TCP listeners when CONFIG SET changes `port` or `bind`;
    /// installed by the server binary. Without it (unit tests) the new
    /// values are only stored.
    listener_hook: std::sync::OnceLock<ListenerHook>,
    /// Told of every published change (old, new): settings whose state
    /// lives elsewhere follow them (`requirepass` is the default user's
    /// password).
    change_hook: std::sync::OnceLock<ChangeHook>,
    /// Gives CONFIG REWRITE the lines of directives that are not
    /// parameters (`user`), see [`file::rewrite_text_directives`].
    directives_hook: std::sync::OnceLock<DirectivesHook>,
    /// Builds the TLS context when CONFIG SET changes a TLS setting;
    /// installed by the server binary.
    tls_hook: std::sync::OnceLock<TlsHook>,
}

/// See [`ConfigStore::set_tls_hook`].
pub type TlsCommit = Box<dyn FnOnce() + Send>;

/// Builds the TLS context of the given settings (when they use TLS): Ok
/// holds what installs it, run once the whole CONFIG SET succeeded; Err
/// says why it could not be built (for the log), and nothing changes.
pub type TlsHook = Box<dyn Fn(&Settings) -> Result<Option<TlsCommit>, String> + Send + Sync>;

/// See [`ConfigStore::set_directives_hook`].
pub type DirectivesHook = Box<dyn Fn() -> Vec<(&'static str, Vec<String>)> + Send + Sync>;

/// See [`ConfigStore::set_change_hook`].
pub type ChangeHook = Box<dyn Fn(&Settings, &Settings) + Send + Sync>;

/// Moves the TCP listeners to the `bind` addresses and `port` of the given
/// settings, or fails leaving the old listeners in place (the error says
/// why, for the log; the client gets Redis's fixed text).
pub type ListenerHook = Box<dyn Fn(&Settings) -> Result<(), String> + Send + Sync>;

impl ConfigStore {
    pub fn new(settings: Settings, file: Option<PathBuf>, params: Params) -> Self {
        ConfigStore {
            params,
            current: RwLock::new(Arc::new(settings)),
            generation: AtomicU64::new(1),
            file,
            listener_hook: std::sync::OnceLock::new(),
            change_hook: std::sync::OnceLock::new(),
            directives_hook: std::sync::OnceLock::new(),
            tls_hook: std::sync::OnceLock::new(),
        }
    }

    /// Installs the TLS context hook (once, at startup).
    pub fn set_tls_hook(&self, hook: TlsHook) {
        let _ = self.tls_hook.set(hook);
    }

    /// Installs the hook that gives CONFIG REWRITE the `user` lines.
    pub fn set_directives_hook(&self, hook: DirectivesHook) {
        let _ = self.directives_hook.set(hook);
    }

    /// Installs the hook told of every change (once, when the server is built).
    pub fn set_change_hook(&self, hook: ChangeHook) {
        let _ = self.change_hook.set(hook);
    }

    /// Installs the listener rebinding hook (once, at startup).
    pub fn set_listener_hook(&self, hook: ListenerHook) {
        let _ = self.listener_hook.set(hook);
    }

    pub fn get(&self) -> Arc<Settings> {
        self.current.read().clone()
    }

    /// Bumped on every change; cheap to poll.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Applies `pairs` all-or-nothing. Errors carry Redis's full CONFIG SET
    /// text. `local` says whether the client is on a local connection (for
    /// `enable-protected-configs local`).
    pub fn set_many(&self, pairs: &[(&str, &str)], local: bool) -> Result<(), String> {
        let mut guard = self.current.write();
        let mut next: Settings = (**guard).clone();
        // Names as written (in any case): an alias and its setting are not
        // duplicates for Redis 7.0 (the later one wins).
        let mut seen: Vec<String> = Vec::new();
        // As Redis 7.0: every name is checked (known, once, mutable, not
        // protected) before any value is parsed.
        let mut found = Vec::with_capacity(pairs.len());
        for (name, _) in pairs {
            let p = match self.params.find(name) {
                Some(p) => p,
                None => return Err(crate::base::errors::config_set_unknown(name)),
            };
            let written = name.to_ascii_lowercase();
            if seen.contains(&written) {
                return Err(crate::base::errors::config_set_failed(
                    name,
                    "duplicate parameter",
                ));
            }
            seen.push(written);
            if !p.mutable {
                return Err(crate::base::errors::config_set_failed(
                    name,
                    "can't set immutable config",
                ));
            }
            if PROTECTED.contains(&p.name) && !guard.enable_protected_configs.allows(local) {
                return Err(crate::base::errors::config_set_failed(
                    name,
                    "can't set protected config",
                ));
            }
            found.push(p);
        }
        for (p, (name, value)) in found.into_iter().zip(pairs) {
            (p.set)(&mut next, value)
                .map_err(|e| crate::base::errors::config_set_failed(name, &e))?;
        }
        if next.dir != guard.dir {
            std::env::set_current_dir(&next.dir)
                .map_err(|e| crate::base::errors::config_set_failed("dir", &e.to_string()))?;
        }
        // TLS: the new context is built before anything changes (Redis:
        // an unusable file fails CONFIG SET and keeps the old context).
        let mut tls_commit = None;
        if next.tls != guard.tls {
            if let Some(hook) = self.tls_hook.get() {
                match hook(&next) {
                    Ok(c) => tls_commit = c,
                    Err(e) => {
                        crate::base::log::log(
                            crate::base::log::LogLevel::Warning,
                            &format!("Failed to configure TLS: {e}"),
                        );
                        let name = pairs
                            .iter()
                            .map(|(n, _)| *n)
                            .find(|n| n.to_ascii_lowercase().starts_with("tls-"))
                            .unwrap_or("tls-port");
                        return Err(crate::base::errors::config_set_failed(
                            name,
                            "Unable to update TLS configuration. Check server logs.",
                        ));
                    }
                }
            }
        }
        if next.port != guard.port || next.bind != guard.bind || next.tls.port != guard.tls.port {
            if let Some(hook) = self.listener_hook.get() {
                let which = if next.port != guard.port {
                    "port"
                } else if next.tls.port != guard.tls.port {
                    "tls-port"
                } else {
                    "bind"
                };
                if hook(&next).is_err() {
                    // Redis's texts for the two settings.
                    let why = if which != "bind" {
                        "Unable to listen on this port. Check server logs."
                    } else {
                        "Failed to bind to specified addresses."
                    };
                    return Err(crate::base::errors::config_set_failed(which, why));
                }
            }
        }
        if let Some(commit) = tls_commit {
            commit();
        }
        let next = Arc::new(next);
        let old = std::mem::replace(&mut *guard, next.clone());
        self.generation.fetch_add(1, Ordering::Release);
        drop(guard);
        if let Some(hook) = self.change_hook.get() {
            hook(&old, &next);
        }
        Ok(())
    }

    /// CONFIG GET: (name, value) pairs of every parameter matching any pattern, each once.
    pub fn get_matching(&self, patterns: &[&[u8]]) -> Vec<(String, String)> {
        let s = self.get();
        let mut out: Vec<(String, String)> = Vec::new();
        for p in self.params.iter() {
            let names = std::iter::once(p.name).chain(p.aliases.iter().copied());
            for n in names {
                // A plain name (no glob characters) is echoed as typed, like Redis 7.0.
                let matched = patterns
                    .iter()
                    .find(|pat| crate::base::glob::glob_match(pat, n.as_bytes(), true));
                if let Some(pat) = matched {
                    let plain = !pat.iter().any(|b| matches!(b, b'*' | b'?' | b'[' | b'\\'));
                    let shown = if plain {
                        String::from_utf8_lossy(pat).into_owned()
                    } else {
                        n.to_string()
                    };
                    if !out.iter().any(|(k, _)| k.eq_ignore_ascii_case(n)) {
                        out.push((shown, (p.get)(&s)));
                    }
                }
            }
        }
        out
    }

    /// CONFIG REWRITE: rewrites the config file keeping comments and unknown
    /// lines, replacing the lines of known parameters with their current value
    /// and appending changed parameters that had no line.
    pub fn rewrite(&self) -> Result<(), String> {
        self.rewrite_with(false)
    }

    /// CONFIG REWRITE, writing every parameter when `force_all`.
    pub fn rewrite_with(&self, force_all: bool) -> Result<(), String> {
        let path = self
            .file
            .as_ref()
            .ok_or(crate::base::errors::ERR_SERVER_RUNNING_WITHOUT_CONFIG_FILE)?;
        let old = std::fs::read_to_string(path).unwrap_or_default();
        let s = self.get();
        let directives = self.directives_hook.get().map(|h| h()).unwrap_or_default();
        let text = file::rewrite_text_directives(&old, &s, self.params, force_all, directives);
        let tmp = path.with_extension("tmp-rewrite");
        std::fs::write(&tmp, text)
            .map_err(|e| crate::base::errors::config_rewrite_failed(&e.to_string()))?;
        std::fs::rename(&tmp, path)
            .map_err(|e| crate::base::errors::config_rewrite_failed(&e.to_string()))?;
        Ok(())
    }
}
