//! A user: on/off, passwords (kept as SHA-256 hex digests), `nopass`,
//! the payload-sanitizing flag, and its selectors (the root one first).
//!
//! Invariants: `selectors[0]` is the root selector and the only one with
//! `root` set; `nopass` implies `passwords` is empty; every password is 64
//! lowercase hex characters; a user is never changed in place once
//! published (the registry swaps in a new `Arc<User>`).

use sha2::{Digest, Sha256};

use super::commands::CommandIndex;
use super::selector::Selector;
use super::RuleError;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: Vec<u8>,
    pub enabled: bool,
    pub nopass: bool,
    /// `sanitize-payload` (Some(true)), `skip-sanitize-payload`
    /// (Some(false)), or neither flag set (a user made without `reset`).
    pub sanitize_payload: Option<bool>,
    pub passwords: Vec<String>,
    pub selectors: Vec<Selector>,
}

/// SHA-256 of a password as 64 lowercase hex characters.
pub fn hash_password(pass: &[u8]) -> String {
    let digest = Sha256::digest(pass);
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Is `h` a password hash as ACL rules accept it (64 lowercase hex)?
fn valid_hash(h: &[u8]) -> bool {
    h.len() == 64 && h.iter().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
}

impl User {
    /// A new user as Redis creates one: off, no password, no permissions
    /// (every channel when `acl-pubsub-default` is `allchannels`).
    pub fn new(name: &[u8], commands: usize, pubsub_all: bool) -> User {
        User {
            name: name.to_vec(),
            enabled: false,
            nopass: false,
            sanitize_payload: None,
            passwords: Vec::new(),
            selectors: vec![Selector::new(true, commands, pubsub_all)],
        }
    }

    /// The default user of a fresh server: `on nopass ~* &* +@all`.
    pub fn default_user(cmds: &CommandIndex) -> User {
        let mut u = User::new(b"default", cmds.len(), false);
        for op in ["+@all", "~*", "&*", "on", "nopass"] {
            u.apply(op.as_bytes(), cmds, false)
                .expect("the default user's rules are valid");
        }
        u
    }

    pub fn root(&self) -> &Selector {
        &self.selectors[0]
    }

    /// May run anything with any key and channel without a check: the
    /// root selector is `+@all ~* &*` with no command denied.
    pub fn unrestricted(&self) -> bool {
        let r = self.root();
        r.allcommands && r.allkeys && r.allchannels
    }

    /// Checks a password (any, when `nopass`); a disabled user never
    /// authenticates. The comparison does not stop at the first
    /// differing byte.
    pub fn password_ok(&self, pass: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let h = hash_password(pass);
        let mut ok = false;
        for p in &self.passwords {
            let diff = p
                .bytes()
                .zip(h.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            ok |= diff == 0;
        }
        ok
    }

    /// Applies one rule (user flags, passwords, selectors, or a root
    /// selector rule). `pubsub_all` is `acl-pubsub-default`.
    pub fn apply(
        &mut self,
        op: &[u8],
        cmds: &CommandIndex,
        pubsub_all: bool,
    ) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if is("on") {
            self.enabled = true;
        } else if is("off") {
            self.enabled = false;
        } else if is("skip-sanitize-payload") {
            self.sanitize_payload = Some(false);
        } else if is("sanitize-payload") {
            self.sanitize_payload = Some(true);
        } else if is("nopass") {
            self.nopass = true;
            self.passwords.clear();
        } else if is("resetpass") {
            self.nopass = false;
            self.passwords.clear();
        } else if op[0] == b'>' || op[0] == b'#' {
            let h = if op[0] == b'>' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            if !self.passwords.contains(&h) {
                self.passwords.push(h);
            }
            self.nopass = false;
        } else if op[0] == b'<' || op[0] == b'!' {
            let h = if op[0] == b'<' {
                hash_password(&op[1..])
            } else if valid_hash(&op[1..]) {
                String::from_utf8_lossy(&op[1..]).into_owned()
            } else {
                return Err(RuleError::BadHash);
            };
            let at = self
                .passwords
                .iter()
                .position(|p| *p == h)
                .ok_or(RuleError::NoSuchPassword)?;
            self.passwords.remove(at);
        } else if op[0] == b'(' && op[op.len() - 1] == b')' {
            let mut s = Selector::new(false, cmds.len(), pubsub_all);
            for rule in super::rules::split_args(&op[1..op.len() - 1]) {
                s.apply(&rule, cmds)?;
            }
            self.selectors.push(s);
        } else if is("clearselectors") {
            self.selectors.truncate(1);
        } else if is("reset") {
            for r in ["resetpass", "resetkeys", "resetchannels"] {
                self.apply(r.as_bytes(), cmds, pubsub_all)?;
            }
            if pubsub_all {
                self.apply(b"allchannels", cmds, pubsub_all)?;
            }
            for r in ["off", "sanitize-payload", "clearselectors", "-@all"] {
                self.apply(r.as_bytes(), cmds, pubsub_all)?;
            }
        } else {
            self.selectors[0].apply(op, cmds)?;
        }
        Ok(())
    }

    /// The flags as `ACL GETUSER` lists them, in Redis's order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            f.push("nopass");
        }
        match self.sanitize_payload {
            Some(false) => f.push("skip-sanitize-payload"),
            Some(true) => f.push("sanitize-payload"),
            None => {}
        }
        f
    }

    /// The user in rule form, as `ACL LIST` and ACL files write it (after
    /// `user <name> `).
    pub fn describe(&self, cmds: &CommandIndex) -> Vec<u8> {
        let mut s = Vec::new();
        for f in self.flags() {
            s.extend_from_slice(f.as_bytes());
            s.push(b' ');
        }
        for p in &self.passwords {
            s.push(b'#');
            s.extend_from_slice(p.as_bytes());
            s.push(b' ');
        }
        for sel in &self.selectors {
            if sel.root {
                s.extend_from_slice(&sel.describe(cmds));
            } else {
                s.extend_from_slice(b" (");
                s.extend_from_slice(&sel.describe(cmds));
                s.push(b')');
            }
        }
        s
    }
}
