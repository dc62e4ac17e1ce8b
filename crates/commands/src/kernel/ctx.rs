//! [`Ctx`]: what a command handler gets: the shared server, its client, the
//! settings snapshot, and the reply buffer.
//!
//! Handlers must reply exactly once per command (an array counts as one) and
//! report errors through [`Ctx::error`] so error statistics stay exact.

use resp::{Protocol, ReplyBuf};

use crate::kernel::client::Client;
use crate::kernel::config::Settings;
use crate::kernel::server::Server;

pub struct Ctx<'a> {
    pub srv: &'a Server,
    pub client: &'a mut Client,
    pub settings: &'a Settings,
    pub out: &'a mut ReplyBuf,
    /// Index of the running command in the command table.
    pub cmd_index: usize,
    /// Set by [`Ctx::error`]; counts the call as failed.
    pub failed: bool,
    /// Unix time in ms when the command started.
    pub now_ms: u64,
    /// How the command's effect goes into the write journal (see
    /// `services::journal`); set through the `propagate_*` methods.
    pub propagate: crate::kernel::journal::Propagate,
}

impl<'a> Ctx<'a> {
    /// Replies with an error. `msg` is the full text without the leading '-',
    /// e.g. "ERR syntax error" or "WRONGTYPE Operation against ...".
    pub fn error(&mut self, msg: &str) {
        self.out.error(msg);
        self.srv.stats.count_error(msg.as_bytes());
        self.failed = true;
    }

    /// [`Ctx::error`] for a text that carries client bytes (not UTF-8).
    pub fn error_bytes(&mut self, msg: &[u8]) {
        self.out.error_bytes(msg);
        self.srv.stats.count_error(msg);
        self.failed = true;
    }

    /// An error `before` + `arg` + `after` as Redis's `addReplyErrorFormat`
    /// makes it with `%s`: the client's `arg` up to its first NUL, CR and LF
    /// trimmed from the ends of the message (inner ones become spaces when
    /// written).
    pub fn error_with_arg(&mut self, before: &str, arg: &[u8], after: &str) {
        let arg = arg.split(|&c| c == 0).next().unwrap_or(b"");
        let mut msg = Vec::with_capacity(before.len() + arg.len() + after.len());
        msg.extend_from_slice(before.as_bytes());
        msg.extend_from_slice(arg);
        msg.extend_from_slice(after.as_bytes());
        while matches!(msg.last(), Some(b'\r' | b'\n')) {
            msg.pop();
        }
        self.error_bytes(&msg);
    }

    pub fn ok(&mut self) {
        self.out.simple("OK");
    }

    pub fn syntax_error(&mut self) {
        self.error(crate::base::errors::ERR_SYNTAX);
    }

    /// "ERR wrong number of arguments for 'xxx' command" for the running command.
    pub fn wrong_arity(&mut self) {
        let name = self.srv.table.get(self.cmd_index).full_name.clone();
        self.error(&crate::base::errors::wrong_arity(&name));
    }

    /// Fires a keyspace notification (`notify-keyspace-events`) for `key` in
    /// the client's database. `class` is one of the `notify::*` class bits.
    /// Records that the running command changed `key` in database `db`
    /// (Redis's signalModifiedKey): after the command, WATCHes on it are
    /// invalidated, client-side caches of it too, and the dirty counter grows. A write that changes nothing
    /// signals nothing, so it leaves WATCHes alone as in Redis.
    pub fn modified(&mut self, db: usize, key: &[u8]) {
        self.client.changes += 1;
        if self.srv.watches.any() || self.srv.tracking.any() {
            self.client.modified.push((db, key.to_vec()));
        }
    }

    /// Fires a keyspace event for a change to `key` in the client's
    /// database. Every change a command makes is announced this way (the
    /// event names are Redis's), so it also signals the change.
    pub fn notify(&mut self, class: u32, event: &str, key: &[u8]) {
        self.modified(self.client.db, key);
        let flags = self.settings.notify_keyspace_events;
        if flags == 0 {
            return;
        }
        let ev = crate::kernel::notify::Event {
            class,
            name: event,
            key,
            db: self.client.db,
        };
        self.srv
            .notify_keyspace_event(flags, ev, self.client.id, self.out);
    }

    pub fn resp3(&self) -> bool {
        self.client.protocol == Protocol::Resp3
    }

    /// Parses an integer argument, replying with Redis's error if it is not one.
    pub fn parse_i64(&mut self, arg: &[u8]) -> Option<i64> {
        let v = crate::base::parse::parse_i64(arg);
        if v.is_none() {
            self.error(crate::base::errors::ERR_NOT_INT);
        }
        v
    }

    pub fn parse_f64(&mut self, arg: &[u8]) -> Option<f64> {
        let v = crate::base::parse::parse_f64(arg);
        if v.is_none() {
            self.error(crate::base::errors::ERR_NOT_FLOAT);
        }
        v
    }

    /// Replies to a `HELP` subcommand: one simple string per line.
    pub fn reply_help(&mut self, lines: &[&str]) {
        self.out.array_len(lines.len());
        for l in lines {
            self.out.simple(l);
        }
    }

    /// Runs a command queued by MULTI (EXEC) through the runtime.
    pub fn execute_queued(&mut self, args: &[&[u8]]) {
        (self.srv.hooks.execute_queued)(self.srv, self.client, self.settings, args, self.out);
    }

    /// Journals these commands instead of the one sent (see
    /// `services::journal`): call it only when the command changed
    /// something. `f` runs only while the journal is enabled.
    pub fn propagate_as(&mut self, f: impl FnOnce() -> Vec<Vec<Vec<u8>>>) {
        if self.srv.journal.enabled() {
            self.propagate = crate::kernel::journal::Propagate::As(f());
        }
    }

    /// Journals nothing for this command, whatever it changed.
    pub fn propagate_none(&mut self) {
        self.propagate = crate::kernel::journal::Propagate::Nothing;
    }

    /// Journals the command as sent even though it changed no key.
    pub fn propagate_always(&mut self) {
        self.propagate = crate::kernel::journal::Propagate::Always;
    }

    /// Is the write journal recording (is a rewrite worth computing)?
    pub fn journaling(&self) -> bool {
        self.srv.journal.enabled()
    }

    /// Replies with a flat array of bulk strings.
    pub fn bulk_array<T: AsRef<[u8]>>(&mut self, items: &[T]) {
        self.out.array_len(items.len());
        for i in items {
            self.out.bulk(i.as_ref());
        }
    }
}
