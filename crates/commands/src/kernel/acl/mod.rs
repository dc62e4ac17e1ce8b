//! Access control lists as Redis 7.0 has them: the user registry and the
//! state the permission check (`services::acl`) reads.
//!
//! * [`commands`]: the commands as the ACL names them (original names,
//!   categories, containers), indexed like the command table.
//! * [`categories`]: Redis's ACL categories and a command's categories.
//! * [`selector`]: one set of command, key and channel permissions; rules
//!   and their description (`ACL LIST`, `ACL GETUSER`).
//! * [`user`]: a user: on/off, passwords, selectors.
//! * [`rules`]: rule errors, selector merging, argument splitting.
//! * [`file`]: ACL files and the config file's `user` lines.
//! * [`log`]: the ACL LOG.
//!
//! Invariants:
//! * Users are immutable once published: a change builds a new
//!   `Arc<User>` and swaps it in, then bumps [`Acl::generation`]. A
//!   connection keeps an `Arc` of its user ([`ClientAcl`]) and refreshes
//!   it by name when the generation moved, so a change applies to its next
//!   command and the check itself takes no lock.
//! * The `default` user always exists. [`Acl::auth_required`] is true
//!   exactly when it is disabled or has passwords (Redis's `authRequired`).

pub mod categories;
pub mod commands;
pub mod file;
pub mod log;
pub mod rules;
pub mod selector;
pub mod user;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Mutex, RwLock};

pub use commands::CommandIndex;
pub use rules::RuleError;
pub use user::User;

/// Counters of denials (INFO stats `acl_access_denied_*`).
#[derive(Default, Debug)]
pub struct Denials {
    pub auth: AtomicU64,
    pub cmd: AtomicU64,
    pub key: AtomicU64,
    pub channel: AtomicU64,
}

/// The users and the ACL LOG.
pub struct Acl {
    pub cmds: CommandIndex,
    users: RwLock<BTreeMap<Vec<u8>, Arc<User>>>,
    generation: AtomicU64,
    auth_required: AtomicBool,
    pub log: Mutex<log::AclLog>,
    pub denied: Denials,
}

/// A connection's user: the `Arc` it checks against, and the registry
/// generation it was taken at.
#[derive(Clone, Debug)]
pub struct ClientAcl {
    pub user: Arc<User>,
    pub generation: u64,
}

impl Default for ClientAcl {
    /// A placeholder `default` user with no rights and generation 0, so
    /// the first command takes the real user from the registry.
    fn default() -> ClientAcl {
        static PLACEHOLDER: OnceLock<Arc<User>> = OnceLock::new();
        ClientAcl {
            user: PLACEHOLDER
                .get_or_init(|| Arc::new(User::new(b"default", 0, false)))
                .clone(),
            generation: 0,
        }
    }
}

impl Acl {
    /// The registry with only the default user (with `requirepass` as
    /// its password when set).
    pub fn new(cmds: CommandIndex, requirepass: &str) -> Acl {
        let default = Arc::new(User::default_user(&cmds));
        let mut users = BTreeMap::new();
        users.insert(b"default".to_vec(), default);
        let acl = Acl {
            cmds,
            users: RwLock::new(users),
            generation: AtomicU64::new(1),
            auth_required: AtomicBool::new(false),
            log: Mutex::new(log::AclLog::default()),
            denied: Denials::default(),
        };
        if !requirepass.is_empty() {
            acl.set_default_password(requirepass);
        }
        acl
    }

    /// Bumped on every change of any user.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// Must a new connection authenticate before running commands?
    pub fn auth_required(&self) -> bool {
        self.auth_required.load(Ordering::Relaxed)
    }

    fn published(&self, users: &BTreeMap<Vec<u8>, Arc<User>>) {
        let d = users.get(&b"default"[..]);
        let open = d.is_some_and(|d| d.nopass && d.enabled);
        self.auth_required.store(!open, Ordering::Relaxed);
        self.generation.fetch_add(1, Ordering::AcqRel);
    }

    pub fn get(&self, name: &[u8]) -> Option<Arc<User>> {
        self.users.read().get(name).cloned()
    }

    pub fn default_user(&self) -> Arc<User> {
        self.get(b"default")
            .expect("the default user always exists")
    }

    /// Every user, by name.
    pub fn users(&self) -> Vec<Arc<User>> {
        self.users.read().values().cloned().collect()
    }

    /// Every user as a `user <name> <rules>` line (ACL SAVE, CONFIG
    /// REWRITE), by name.
    pub fn user_lines(&self) -> Vec<String> {
        let users = self.users();
        let text = file::save_text(users.iter().map(|u| &**u), &self.cmds);
        String::from_utf8_lossy(&text)
            .lines()
            .map(String::from)
            .collect()
    }

    /// Takes the connection's user again when the registry changed since
    /// it was taken; false when the user no longer exists (it then falls
    /// back to `default`, as Redis does for a deleted user's clients).
    pub fn refresh(&self, c: &mut ClientAcl) -> bool {
        let generation = self.generation();
        c.generation = generation;
        match self.get(&c.user.name) {
            Some(u) => {
                c.user = u;
                true
            }
            None => {
                c.user = self.default_user();
                false
            }
        }
    }

    /// ACL SETUSER: applies `rules` to a copy of `name` (a new user when
    /// absent) and publishes it when every rule is valid. Returns the old
    /// and the new user, or the error text (without the `ERR ` prefix).
    #[allow(clippy::type_complexity)]
    pub fn set_user(
        &self,
        name: &[u8],
        rules: &[&[u8]],
        pubsub_all: bool,
    ) -> Result<(Option<Arc<User>>, Arc<User>), Vec<u8>> {
        // The messages carry the client's bytes as Redis's `%s` does: up to
        // the first NUL.
        let with_arg = |before: &str, arg: &[u8], after: &str| {
            let arg = arg.split(|&c| c == 0).next().unwrap_or(b"");
            [before.as_bytes(), arg, after.as_bytes()].concat()
        };
        let merged = rules::merge_selectors(rules).map_err(|i| {
            with_arg(
                "Unmatched parenthesis in acl selector starting at '",
                rules[i],
                "'.",
            )
        })?;
        let mut users = self.users.write();
        let old = users.get(name).cloned();
        let mut u = match &old {
            Some(o) => (**o).clone(),
            None => User::new(name, self.cmds.len(), pubsub_all),
        };
        for r in &merged {
            u.apply(r, &self.cmds, pubsub_all).map_err(|e| {
                with_arg(
                    "Error in ACL SETUSER modifier '",
                    r,
                    &format!("': {}", e.text()),
                )
            })?;
        }
        let new = Arc::new(u);
        users.insert(name.to_vec(), new.clone());
        self.published(&users);
        Ok((old, new))
    }

    /// Publishes `u` under its name (a changed copy of a user).
    pub fn put(&self, u: User) {
        let mut users = self.users.write();
        users.insert(u.name.clone(), Arc::new(u));
        self.published(&users);
    }

    /// ACL DELUSER: removes the named users (never `default`); returns
    /// those that existed.
    pub fn delete(&self, names: &[&[u8]]) -> Vec<Arc<User>> {
        let mut users = self.users.write();
        let gone: Vec<Arc<User>> = names
            .iter()
            .filter(|n| **n != b"default")
            .filter_map(|n| users.remove(*n))
            .collect();
        self.published(&users);
        gone
    }

    /// ACL LOAD: replaces every user; returns the old set.
    pub fn replace_all(&self, new: BTreeMap<Vec<u8>, Arc<User>>) -> BTreeMap<Vec<u8>, Arc<User>> {
        let mut users = self.users.write();
        let old = std::mem::replace(&mut *users, new);
        self.published(&users);
        old
    }

    /// `requirepass`: the default user's only password, or `nopass` when
    /// empty (Redis's ACLUpdateDefaultUserPassword).
    pub fn set_default_password(&self, pass: &str) {
        let mut users = self.users.write();
        let mut d = users
            .get(&b"default"[..])
            .map(|u| (**u).clone())
            .unwrap_or_else(|| User::default_user(&self.cmds));
        let _ = d.apply(b"resetpass", &self.cmds, false);
        let mut op = b">".to_vec();
        op.extend_from_slice(pass.as_bytes());
        let op: &[u8] = if pass.is_empty() { b"nopass" } else { &op };
        let _ = d.apply(op, &self.cmds, false);
        users.insert(b"default".to_vec(), Arc::new(d));
        self.published(&users);
    }
}
