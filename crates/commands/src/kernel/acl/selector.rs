//! A selector: one set of permissions (commands, key patterns with
//! read/write rights, Pub/Sub channel patterns). Every user has a root
//! selector and any number of `(...)` selectors; a command is allowed when
//! one selector allows all of it.
//!
//! Invariants (Redis 7.0's):
//! * `allcommands` implies every command bit is set; clearing any bit
//!   clears it. `future` (Redis's reserved bit) is set only by `+@all` /
//!   `allcommands` and cleared only by `-@all` / `nocommands`: it decides
//!   whether the description starts from `+@all` or `-@all`.
//! * `allkeys` implies `keys` is empty, `allchannels` that `channels` is.
//! * First-argument rules (`+select|0`) exist only for commands without
//!   subcommands; allowing or denying the whole command drops them.
//! * Allowing or denying a container applies to all its subcommands.

use crate::base::glob::glob_match;

use super::categories::{bit_of, ACL_CATEGORIES};
use super::commands::CommandIndex;
use super::RuleError;

/// A key pattern and the access it grants (`~p`: both, `%R~p`, `%W~p`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPattern {
    pub pattern: Vec<u8>,
    pub read: bool,
    pub write: bool,
}

impl KeyPattern {
    /// `~p`, `%R~p` or `%W~p`.
    pub fn describe(&self) -> Vec<u8> {
        let mut s: Vec<u8> = match (self.read, self.write) {
            (true, false) => b"%R~".to_vec(),
            (false, true) => b"%W~".to_vec(),
            _ => b"~".to_vec(),
        };
        s.extend_from_slice(&self.pattern);
        s
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selector {
    pub root: bool,
    pub allkeys: bool,
    pub allchannels: bool,
    pub allcommands: bool,
    /// Redis's reserved "future commands" bit (see the module doc).
    pub future: bool,
    /// One bit per command-table entry.
    bits: Vec<u64>,
    /// (command index, allowed first arguments as given).
    firstargs: Vec<(usize, Vec<Vec<u8>>)>,
    pub keys: Vec<KeyPattern>,
    pub channels: Vec<Vec<u8>>,
}

/// Redis's `isspace` plus NUL: not allowed in patterns and user names.
pub fn has_space(s: &[u8]) -> bool {
    s.iter()
        .any(|&c| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r' | 0))
}

impl Selector {
    /// An empty selector: no commands, no keys; every channel when
    /// `acl-pubsub-default` is `allchannels`.
    pub fn new(root: bool, commands: usize, pubsub_all: bool) -> Selector {
        Selector {
            root,
            allkeys: false,
            allchannels: pubsub_all,
            allcommands: false,
            future: false,
            bits: vec![0; commands.div_ceil(64)],
            firstargs: Vec::new(),
            keys: Vec::new(),
            channels: Vec::new(),
        }
    }

    pub fn bit(&self, cmd: usize) -> bool {
        self.bits
            .get(cmd / 64)
            .is_some_and(|w| w & (1 << (cmd % 64)) != 0)
    }

    fn set_bit(&mut self, cmd: usize, on: bool) {
        if let Some(w) = self.bits.get_mut(cmd / 64) {
            if on {
                *w |= 1 << (cmd % 64);
            } else {
                *w &= !(1 << (cmd % 64));
                self.allcommands = false;
            }
        }
    }

    fn set_all(&mut self, on: bool) {
        for w in &mut self.bits {
            *w = if on { u64::MAX } else { 0 };
        }
        self.allcommands = on;
        self.future = on;
        self.firstargs.clear();
    }

    /// Allows or denies `cmd`, and all its subcommands for a container.
    fn change(&mut self, cmds: &CommandIndex, cmd: usize, allow: bool) {
        self.set_bit(cmd, allow);
        self.firstargs.retain(|(c, _)| *c != cmd);
        for &s in &cmds.entries[cmd].subs {
            self.set_bit(s, allow);
        }
    }

    fn change_category(&mut self, cmds: &CommandIndex, cat: u32, allow: bool) {
        for i in 0..cmds.len() {
            if cmds.entries[i].cats & cat != 0 {
                self.change(cmds, i, allow);
            }
        }
    }

    fn add_firstarg(&mut self, cmd: usize, arg: &[u8]) {
        match self.firstargs.iter_mut().find(|(c, _)| *c == cmd) {
            Some((_, args)) => {
                if !args.iter().any(|a| a.eq_ignore_ascii_case(arg)) {
                    args.push(arg.to_vec());
                }
            }
            None => self.firstargs.push((cmd, vec![arg.to_vec()])),
        }
    }

    /// Applies one selector rule (commands, keys, channels).
    pub fn apply(&mut self, op: &[u8], cmds: &CommandIndex) -> Result<(), RuleError> {
        let is = |w: &str| op.eq_ignore_ascii_case(w.as_bytes());
        if is("allkeys") || op == b"~*" {
            self.allkeys = true;
            self.keys.clear();
        } else if is("resetkeys") {
            self.allkeys = false;
            self.keys.clear();
        } else if is("allchannels") || op == b"&*" {
            self.allchannels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.allchannels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.set_all(true);
        } else if is("nocommands") || is("-@all") {
            self.set_all(false);
        } else if op[0] == b'~' || op[0] == b'%' {
            self.add_key_pattern(op)?;
        } else if op[0] == b'&' {
            if self.allchannels {
                return Err(RuleError::ChannelAfterAll);
            }
            let pat = &op[1..];
            if has_space(pat) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c == pat) {
                self.channels.push(pat.to_vec());
            }
        } else if (op[0] == b'+' || op[0] == b'-') && op.get(1) == Some(&b'@') {
            let cat = bit_of(&op[2..]).ok_or(RuleError::UnknownName)?;
            self.change_category(cmds, cat, op[0] == b'+');
        } else if op[0] == b'+' {
            self.allow_command(&op[1..], cmds)?;
        } else if op[0] == b'-' {
            let cmd = cmds.lookup(&op[1..]).ok_or(RuleError::UnknownName)?;
            self.change(cmds, cmd, false);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.allkeys {
            return Err(RuleError::KeyAfterAll);
        }
        let (mut read, mut write) = (false, false);
        let mut at = 1;
        if op[0] == b'%' {
            while at < op.len() {
                let c = op[at];
                at += 1;
                match c.to_ascii_uppercase() {
                    b'R' if !read => read = true,
                    b'W' if !write => write = true,
                    b'~' if read || write => break,
                    _ => return Err(RuleError::Syntax),
                }
            }
            if !(read || write) {
                return Err(RuleError::Syntax);
            }
        } else {
            (read, write) = (true, true);
        }
        let pat = &op[at..];
        if has_space(pat) {
            return Err(RuleError::Syntax);
        }
        match self.keys.iter_mut().find(|k| k.pattern == pat) {
            Some(k) => {
                k.read |= read;
                k.write |= write;
            }
            None => self.keys.push(KeyPattern {
                pattern: pat.to_vec(),
                read,
                write,
            }),
        }
        self.allkeys = false;
        Ok(())
    }

    /// `+name`, `+container|sub`, or `+command|first-arg`.
    fn allow_command(&mut self, name: &[u8], cmds: &CommandIndex) -> Result<(), RuleError> {
        let Some(bar) = name.iter().rposition(|&c| c == b'|') else {
            let cmd = cmds.lookup(name).ok_or(RuleError::UnknownName)?;
            self.change(cmds, cmd, true);
            return Ok(());
        };
        let (base, sub) = (&name[..bar], &name[bar + 1..]);
        let cmd = cmds.lookup(base).ok_or(RuleError::UnknownName)?;
        if cmds.entries[cmd].parent.is_some() {
            return Err(RuleError::FirstArgOfSubcommand);
        }
        if sub.is_empty() {
            return Err(RuleError::Syntax);
        }
        if cmds.entries[cmd].subs.is_empty() {
            self.add_firstarg(cmd, sub);
        } else {
            let s = cmds.lookup(name).ok_or(RuleError::UnknownName)?;
            self.change(cmds, s, true);
        }
        Ok(())
    }

    /// Whether the selector lets `args` run command `cmd` (keys and
    /// channels aside).
    pub fn command_allowed(&self, cmds: &CommandIndex, cmd: usize, args: &[&[u8]]) -> bool {
        if self.allcommands || self.bit(cmd) || cmds.entries[cmd].no_auth {
            return true;
        }
        let at = if cmds.entries[cmd].parent.is_some() {
            2
        } else {
            1
        };
        match (args.get(at), self.firstargs.iter().find(|(c, _)| *c == cmd)) {
            (Some(arg), Some((_, allowed))) if args.len() >= 2 => {
                allowed.iter().any(|a| a.eq_ignore_ascii_case(arg))
            }
            _ => false,
        }
    }

    /// Whether a key may be accessed with these rights.
    pub fn key_allowed(&self, key: &[u8], read: bool, write: bool) -> bool {
        self.allkeys
            || self.keys.iter().any(|k| {
                (k.read || !read) && (k.write || !write) && glob_match(&k.pattern, key, false)
            })
    }

    /// Whether every key may be accessed with these rights (`~*`,
    /// `allkeys`, or a `*` pattern with them): SORT's BY and GET need it.
    pub fn all_keys_allowed(&self, read: bool, write: bool) -> bool {
        self.allkeys
            || self
                .keys
                .iter()
                .any(|k| (k.read || !read) && (k.write || !write) && k.pattern == b"*")
    }

    /// Whether a channel (or, `pattern`, a PSUBSCRIBE pattern, which must
    /// equal an allowed pattern literally) may be used.
    pub fn channel_allowed(&self, channel: &[u8], pattern: bool) -> bool {
        self.allchannels || channel_in(&self.channels, channel, pattern)
    }

    /// The command rules as Redis 7.0 writes them: `+@all` or `-@all`,
    /// then the categories that best fit the command bits (greedily), then
    /// single commands and first arguments for what remains different.
    pub fn describe_commands(&self, cmds: &CommandIndex) -> String {
        let additive = !self.future;
        let mut fake = Selector::new(false, cmds.len(), false);
        fake.set_all(!additive);
        let mut rules = String::from(if additive { "-@all " } else { "+@all " });
        let mut temp = self.clone();
        temp.firstargs.clear();
        let mut applied = [false; 32];
        loop {
            let mut best = None;
            let (mut mindiff, mut maxsame) = (u64::MAX, 0u64);
            for (j, name) in ACL_CATEGORIES.iter().enumerate() {
                if applied[j] {
                    continue;
                }
                let cat = 1u32 << j;
                let (mut on, mut off) = (0u64, 0u64);
                for (i, e) in cmds.entries.iter().enumerate() {
                    if e.cats & cat != 0 {
                        if temp.bit(i) {
                            on += 1;
                        } else {
                            off += 1;
                        }
                    }
                }
                let (diff, same) = if additive { (off, on) } else { (on, off) };
                if same > diff && (diff < mindiff || (diff == mindiff && same > maxsame)) {
                    best = Some((j, *name));
                    mindiff = diff;
                    maxsame = same;
                }
            }
            let Some((j, name)) = best else { break };
            fake.change_category(cmds, 1 << j, additive);
            temp.change_category(cmds, 1 << j, !additive);
            rules.push(if additive { '+' } else { '-' });
            rules.push('@');
            rules.push_str(name);
            rules.push(' ');
            applied[j] = true;
        }
        for i in cmds.walk() {
            let (mine, fakes) = (self.bit(i), fake.bit(i));
            if mine != fakes {
                rules.push(if mine { '+' } else { '-' });
                rules.push_str(&cmds.entries[i].full_name);
                rules.push(' ');
                fake.change(cmds, i, mine);
            }
            if let Some((_, args)) = self.firstargs.iter().find(|(c, _)| *c == i) {
                for a in args {
                    rules.push('+');
                    rules.push_str(&cmds.entries[i].full_name);
                    rules.push('|');
                    rules.push_str(&String::from_utf8_lossy(a));
                    rules.push(' ');
                }
            }
        }
        rules.pop();
        debug_assert_eq!(fake.bits, self.bits, "description must rebuild the bits");
        rules
    }

    /// The key patterns, space separated (`ACL GETUSER` "keys").
    pub fn describe_keys(&self) -> Vec<u8> {
        if self.allkeys {
            return b"~*".to_vec();
        }
        join(self.keys.iter().map(|k| k.describe()))
    }

    /// The channel patterns, space separated (`ACL GETUSER` "channels").
    pub fn describe_channels(&self) -> Vec<u8> {
        if self.allchannels {
            return b"&*".to_vec();
        }
        join(self.channels.iter().map(|c| {
            let mut s = b"&".to_vec();
            s.extend_from_slice(c);
            s
        }))
    }

    /// The whole selector in rule form, as `ACL LIST` shows it: keys,
    /// channels (after `resetchannels` unless all), commands.
    pub fn describe(&self, cmds: &CommandIndex) -> Vec<u8> {
        let mut s = Vec::new();
        if self.allkeys {
            s.extend_from_slice(b"~* ");
        } else {
            for k in &self.keys {
                s.extend_from_slice(&k.describe());
                s.push(b' ');
            }
        }
        if self.allchannels {
            s.extend_from_slice(b"&* ");
        } else {
            s.extend_from_slice(b"resetchannels ");
            for c in &self.channels {
                s.push(b'&');
                s.extend_from_slice(c);
                s.push(b' ');
            }
        }
        s.extend_from_slice(self.describe_commands(cmds).as_bytes());
        s
    }
}

/// Whether `channel` is allowed by `list`: a channel name matches glob
/// patterns; a PSUBSCRIBE pattern must equal one literally.
pub fn channel_in(list: &[Vec<u8>], channel: &[u8], pattern: bool) -> bool {
    list.iter().any(|p| {
        if pattern {
            p == channel
        } else {
            glob_match(p, channel, false)
        }
    })
}

fn join(items: impl Iterator<Item = Vec<u8>>) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, it) in items.enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(&it);
    }
    out
}
