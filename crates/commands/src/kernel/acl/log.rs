//! The ACL LOG: denied commands, keys, channels and failed
//! authentications, newest first, as Redis 7.0 keeps them.
//!
//! Invariants: entries are newest first; at most `acllog-max-len` entries
//! after every add; an event that matches (same reason, context, object
//! and user, within 60 s) one of the 10 newest entries updates it (count,
//! time, client info) and moves it to the front instead of adding one.

use std::collections::VecDeque;

/// Why an entry was logged (Redis's `reason` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Command,
    Key,
    Channel,
    Auth,
}

impl Reason {
    pub fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        }
    }
}

/// Where the denied call came from (Redis's `context` field).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    TopLevel,
    Multi,
    Lua,
}

impl Context {
    pub fn name(self) -> &'static str {
        match self {
            Context::TopLevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub count: u64,
    pub reason: Reason,
    pub context: Context,
    /// The command name, key, channel, or (auth) the command as typed.
    pub object: Vec<u8>,
    pub username: Vec<u8>,
    /// Unix ms of the last event of this entry.
    pub time_ms: u64,
    /// CLIENT INFO line of the client of the last event.
    pub client_info: String,
}

/// How far apart in time two events may be to be grouped in one entry.
const GROUPING_MS: u64 = 60_000;
/// How many of the newest entries a new event is compared with.
const GROUPING_SCAN: usize = 10;

#[derive(Default, Debug)]
pub struct AclLog {
    entries: VecDeque<Entry>,
}

impl AclLog {
    /// Adds an event (grouping it as the module doc says), then trims the
    /// log to `max_len` entries.
    pub fn add(&mut self, e: Entry, max_len: usize) {
        let found = self.entries.iter().take(GROUPING_SCAN).position(|o| {
            o.reason == e.reason
                && o.context == e.context
                && o.time_ms.abs_diff(e.time_ms) <= GROUPING_MS
                && o.object == e.object
                && o.username == e.username
        });
        match found {
            Some(i) => {
                let mut o = self.entries.remove(i).expect("index from position");
                o.count += 1;
                o.time_ms = e.time_ms;
                o.client_info = e.client_info;
                self.entries.push_front(o);
            }
            None => {
                self.entries.push_front(e);
                self.entries.truncate(max_len);
            }
        }
    }

    /// The `count` newest entries.
    pub fn newest(&self, count: usize) -> Vec<Entry> {
        self.entries.iter().take(count).cloned().collect()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(object: &str, t: u64) -> Entry {
        Entry {
            count: 1,
            reason: Reason::Key,
            context: Context::TopLevel,
            object: object.as_bytes().to_vec(),
            username: b"u".to_vec(),
            time_ms: t,
            client_info: format!("at {t}"),
        }
    }

    #[test]
    fn groups_trims_and_orders_like_redis() {
        let mut log = AclLog::default();
        log.add(entry("a", 0), 128);
        log.add(entry("b", 10), 128);
        log.add(entry("a", 20), 128);
        let v = log.newest(10);
        assert_eq!(v.len(), 2);
        assert_eq!((v[0].object.as_slice(), v[0].count), (&b"a"[..], 2));
        assert_eq!(v[0].client_info, "at 20");
        // More than a minute later: a new entry.
        log.add(entry("a", 80_021), 128);
        assert_eq!(log.len(), 3);
        // Only the 10 newest are compared.
        for i in 0..10 {
            log.add(entry(&format!("k{i}"), 80_100), 128);
        }
        log.add(entry("a", 80_200), 128);
        assert_eq!(log.len(), 14);
        log.add(entry("z", 80_300), 3);
        assert_eq!(log.len(), 3);
        assert_eq!(log.newest(1)[0].object, b"z");
    }
}
