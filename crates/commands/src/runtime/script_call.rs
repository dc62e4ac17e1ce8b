//! Commands called by scripts (`redis.call` / `redis.pcall`): the checks
//! Redis 7.0 applies to a script's calls, then the same [`call`] every
//! command goes through (statistics, SLOWLOG, MONITOR lines as `[db lua]`,
//! WATCH invalidation, keyspace notifications).
//!
//! The checks, in Redis's order: the command exists (a container's
//! subcommand too), its arity, `noscript`, on a stale replica
//! (`replica-serve-stale-data no`, link down) commands without the
//! `stale` flag, the ACL (as the caller's user,
//! logged with context `lua`), writes from read-only scripts
//! (`*_RO` or `no-writes`; `may-replicate` counts as a write), writes on
//! a read-only replica (`-READONLY`, unless the master runs the script),
//! then
//! `denyoom` commands while the server was over `maxmemory` when the
//! script started and the script has not written yet (unless `allow-oom`).
//! A refused call counts as a rejected call of that command. Every call
//! sees the time the script started, as Redis 7.0 freezes time for a
//! script (a key does not expire half-way through it).
//!
//! The client is the script's own (see the scripting family), which has
//! `in_exec` set: blocking commands answer as their non-blocking forms, and
//! waiters of the keys a script writes are served after the script.
//!
//! Scripts call the same few commands over and over, so each thread
//! remembers the last [`CACHED`] names it looked up (exact bytes) and
//! skips the case-folding hash lookup for them; a remembered index is used
//! only after checking that the table's entry has that name.

use std::cell::RefCell;
use std::sync::atomic::Ordering::Relaxed;

use resp::ReplyBuf;

use crate::base::errors;
use crate::kernel::client::Client;
use crate::kernel::config::Settings;
use crate::kernel::scripting::ScriptCall;
use crate::kernel::server::Server;
use crate::kernel::spec::flag;
use crate::kernel::table::CommandTable;
use crate::runtime::dispatch::call;

/// Runs one command for a script (see the module doc).
pub fn execute_from_script(
    srv: &Server,
    client: &mut Client,
    settings: &Settings,
    args: &[&[u8]],
    sc: &ScriptCall,
    out: &mut ReplyBuf,
) {
    let table = &srv.table;
    let Some(mut idx) = lookup(table, args[0]) else {
        return refuse(srv, None, out, errors::ERR_SCRIPT_UNKNOWN_COMMAND);
    };
    let top = table.get(idx);
    if !(top.spec.subcommands.is_empty() || args.len() < 2 && top.spec.handler.is_some()) {
        if args.len() < 2 {
            return refuse(srv, Some(idx), out, errors::ERR_SCRIPT_WRONG_ARGS);
        }
        match table.lookup_sub(idx, args[1]) {
            Some(s) => idx = s,
            None => return refuse(srv, None, out, errors::ERR_SCRIPT_UNKNOWN_COMMAND),
        }
    }
    let spec = table.get(idx).spec;
    if !spec.arity_ok(args.len()) {
        return refuse(srv, Some(idx), out, errors::ERR_SCRIPT_WRONG_ARGS);
    }
    if spec.flags & flag::NOSCRIPT != 0 {
        return refuse(srv, Some(idx), out, errors::ERR_SCRIPT_NOSCRIPT);
    }
    // A replica refuses its scripts' writes (`replica-read-only`) and,
    // stale, commands without the `stale` flag, unless the master runs the
    // script.
    let replica = crate::services::replication::is_replica(srv)
        && !srv
            .clients
            .get(sc.caller)
            .is_some_and(|c| c.has_flag(crate::kernel::client::cflag::MASTER));
    if replica
        && spec.flags & flag::STALE == 0
        && crate::services::replication::serves_stale_only(srv, settings)
    {
        return refuse(srv, Some(idx), out, errors::ERR_SCRIPT_STALE);
    }
    let lua = crate::kernel::acl::log::Context::Lua;
    if let Err(d) = crate::services::acl::check_call(srv, client, idx, args, lua, Some(sc.caller)) {
        return refuse(srv, Some(idx), out, crate::services::acl::script_text(d));
    }
    if sc.read_only && spec.flags & (flag::WRITE | flag::MAY_REPLICATE) != 0 {
        return refuse(srv, Some(idx), out, errors::ERR_SCRIPT_READ_ONLY);
    }
    if replica && settings.repl.read_only && spec.flags & flag::WRITE != 0 {
        return refuse(srv, Some(idx), out, errors::READONLY_REPLICA);
    }
    if !sc.allow_oom
        && sc.oom_at_start
        && spec.flags & flag::DENYOOM != 0
        && srv.eviction.maxmemory() > 0
        && !srv.scripting.wrote()
    {
        return refuse(srv, Some(idx), out, errors::OOM_ERROR);
    }
    // Cluster mode: a script reaches only keys this node serves (keys it
    // did not declare included), as Redis's scripts do.
    if srv.cluster.enabled && client.replay_now_ms.is_none() {
        use crate::services::cluster::{check_calls, Redirect};
        let writes = spec.flags & flag::WRITE != 0;
        let calls = [(spec, args.to_vec())];
        let r = check_calls(
            srv,
            settings,
            &calls,
            writes,
            false,
            client.cluster_readonly,
            sc.now_ms,
            // A script's errors name no node.
            false,
        );
        match r {
            Ok(()) => {}
            Err(Redirect::DownReadOnly) => {
                return refuse(srv, Some(idx), out, "ERR Script attempted to execute a write command while the cluster is down and readonly")
            }
            Err(Redirect::Down) => {
                return refuse(
                    srv,
                    Some(idx),
                    out,
                    "ERR Script attempted to execute a command while the cluster is down",
                )
            }
            Err(_) => {
                return refuse(
                    srv,
                    Some(idx),
                    out,
                    "ERR Script attempted to access a non local key in a cluster node",
                )
            }
        }
    }
    if spec.flags & flag::WRITE != 0 {
        srv.scripting.mark_wrote();
    }
    call(srv, client, settings, idx, args, out, sc.now_ms);
}

fn refuse(srv: &Server, idx: Option<usize>, out: &mut ReplyBuf, msg: &str) {
    if let Some(i) = idx {
        srv.table.get(i).stats.rejected_calls.fetch_add(1, Relaxed);
    }
    out.error(msg);
    srv.stats.count_error(msg.as_bytes());
}

/// How many command names each thread remembers.
const CACHED: usize = 4;

/// Longest name remembered.
const NAME_MAX: usize = 22;

/// One remembered lookup.
#[derive(Clone, Copy)]
struct Cached {
    name: [u8; NAME_MAX],
    len: u8,
    idx: u32,
}

/// The names this thread's scripts called last, for one command table.
struct LookupCache {
    /// The table the entries index (its address).
    table: usize,
    entries: [Cached; CACHED],
    used: usize,
    /// The entry replaced next (round robin).
    next: usize,
}

thread_local! {
    static LOOKUPS: RefCell<LookupCache> = const {
        RefCell::new(LookupCache {
            table: 0,
            entries: [Cached { name: [0; NAME_MAX], len: 0, idx: 0 }; CACHED],
            used: 0,
            next: 0,
        })
    };
}

/// `table.lookup(name)`, answered from this thread's cache when it can.
fn lookup(table: &CommandTable, name: &[u8]) -> Option<usize> {
    if name.len() > NAME_MAX {
        return table.lookup(name);
    }
    LOOKUPS.with_borrow_mut(|c| {
        let id = table as *const CommandTable as usize;
        if c.table != id {
            c.table = id;
            c.used = 0;
            c.next = 0;
        }
        let hit = c.entries[..c.used]
            .iter()
            .find(|e| usize::from(e.len) == name.len() && e.name[..name.len()] == *name)
            .map(|e| e.idx as usize);
        if let Some(idx) = hit {
            // Checked against the table itself, so a table built at the
            // address of a dropped one (tests) is never misread.
            if table
                .entries
                .get(idx)
                .is_some_and(|entry| entry.full_name.as_bytes().eq_ignore_ascii_case(name))
            {
                return Some(idx);
            }
            c.used = 0;
            c.next = 0;
        }
        let idx = table.lookup(name)?;
        let mut e = Cached {
            name: [0; NAME_MAX],
            len: name.len() as u8,
            idx: idx as u32,
        };
        e.name[..name.len()].copy_from_slice(name);
        let slot = c.next;
        c.entries[slot] = e;
        c.next = (slot + 1) % CACHED;
        c.used = (c.used + 1).min(CACHED);
        Some(idx)
    })
}
