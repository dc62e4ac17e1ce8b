//! The permission check and what goes with it: Redis 7.0's decision for a
//! call (commands and subcommands, keys by key spec with their read/write
//! flags, Pub/Sub channels, over every selector of the user), the
//! `-NOPERM` and ACL DRYRUN texts, ACL LOG entries and the INFO counters,
//! authentication, and what changing or deleting a user does to the
//! connections that use it.
//!
//! Dispatch calls [`check_call`] once per command, before the handler;
//! MULTI's queued commands are checked when queued and again by EXEC
//! ([`exec_denial`]), script calls by `runtime::script_call`. A user whose
//! root selector is `+@all ~* &*` (the default user) is never checked:
//! the cost is one flag test.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use crate::kernel::acl::log::{Context, Entry, Reason};
use crate::kernel::acl::selector::{channel_in, Selector};
use crate::kernel::acl::{CommandIndex, User};
use crate::kernel::client::{cflag, Client, ClientShared};
use crate::kernel::hub::WorkerMsg;
use crate::kernel::server::Server;
use crate::kernel::spec::{BeginSearch, Channels, CommandSpec, FindKeys};

/// Why a call was denied, with the argument at fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denied {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denied {
    /// Redis's ranking when several selectors deny (channel > key >
    /// command), then the later argument.
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(i) => (2, i),
            Denied::Channel(i) => (4, i),
        }
    }

    fn reason(self) -> Reason {
        match self {
            Denied::Command => Reason::Command,
            Denied::Key(_) => Reason::Key,
            Denied::Channel(_) => Reason::Channel,
        }
    }
}

/// The connection's user, taken again from the registry when users
/// changed since its last command.
#[inline]
pub fn refresh_user(srv: &Server, client: &mut Client) {
    if client.acl.generation != srv.acl.generation() && !srv.acl.refresh(&mut client.acl) {
        // Deleted: the connection is being closed; until then it is an
        // unauthenticated default user, as in Redis.
        client.authenticated = false;
    }
}

/// Keys of a call with their rights, without allocating for the common
/// specs (fixed index, range).
struct Keys {
    inline: [(u32, bool, bool); 8],
    len: usize,
    heap: Vec<(usize, bool, bool)>,
}

fn rights(flags: &[&str]) -> (bool, bool) {
    let read = flags.contains(&"access");
    let write = flags
        .iter()
        .any(|f| matches!(*f, "insert" | "delete" | "update"));
    (read, write)
}

impl Keys {
    fn of(spec: &CommandSpec, args: &[&[u8]]) -> Keys {
        let mut k = Keys {
            inline: [(0, false, false); 8],
            len: 0,
            heap: Vec::new(),
        };
        if !k.simple(spec, args) {
            k.len = 0;
            k.heap = match crate::kernel::keyspecs::call_keys(spec, args) {
                Ok(v) => v
                    .into_iter()
                    .map(|(i, f)| {
                        let (r, w) = rights(f);
                        (i, r, w)
                    })
                    .collect(),
                Err(_) => Vec::new(),
            };
        }
        k
    }

    /// The keys of Redis's key specs of fixed index and range form; false
    /// when the command needs the general path.
    fn simple(&mut self, spec: &CommandSpec, args: &[&[u8]]) -> bool {
        if spec.getkeys.is_some() || spec.key_specs.is_empty() {
            return false;
        }
        let argc = args.len() as i64;
        // Validate every spec first: one that does not fit means no keys.
        for ks in spec.key_specs {
            let (BeginSearch::Index(b), FindKeys::Range { lastkey, limit, .. }) =
                (ks.begin, ks.find)
            else {
                return false;
            };
            if limit > 1 {
                return false;
            }
            let b = b as i64;
            if b >= 1 && b < argc {
                let last = if lastkey >= 0 {
                    b + lastkey as i64
                } else {
                    argc + lastkey as i64
                };
                if last >= argc {
                    return true;
                }
            }
        }
        for ks in spec.key_specs {
            let (
                BeginSearch::Index(b),
                FindKeys::Range {
                    lastkey, keystep, ..
                },
            ) = (ks.begin, ks.find)
            else {
                continue;
            };
            let b = b as i64;
            if b < 1 || b >= argc {
                continue;
            }
            let flags = if ks.flags.contains(&"variable_flags") {
                crate::kernel::keyspecs::variable_key_flags(spec.name, args).unwrap_or(ks.flags)
            } else {
                ks.flags
            };
            let (r, w) = rights(flags);
            let last = if lastkey >= 0 {
                b + lastkey as i64
            } else {
                argc + lastkey as i64
            };
            let mut i = b;
            while i <= last {
                if self.len < self.inline.len() {
                    self.inline[self.len] = (i as u32, r, w);
                    self.len += 1;
                } else {
                    if self.heap.is_empty() {
                        self.heap = self.inline[..self.len]
                            .iter()
                            .map(|&(i, r, w)| (i as usize, r, w))
                            .collect();
                    }
                    self.heap.push((i as usize, r, w));
                }
                i += keystep.max(1) as i64;
            }
        }
        true
    }

    fn for_each(&self, mut f: impl FnMut(usize, bool, bool) -> bool) -> Option<usize> {
        if !self.heap.is_empty() {
            return self
                .heap
                .iter()
                .find(|&&(i, r, w)| !f(i, r, w))
                .map(|k| k.0);
        }
        self.inline[..self.len]
            .iter()
            .find(|&&(i, r, w)| !f(i as usize, r, w))
            .map(|k| k.0 as usize)
    }
}

fn check_selector(
    s: &Selector,
    cmds: &CommandIndex,
    idx: usize,
    spec: &CommandSpec,
    args: &[&[u8]],
    keys: &mut Option<Keys>,
) -> Result<(), Denied> {
    if !s.command_allowed(cmds, idx, args) {
        return Err(Denied::Command);
    }
    if !s.allkeys && cmds.entries[idx].has_keys {
        let keys = keys.get_or_insert_with(|| Keys::of(spec, args));
        if let Some(i) = keys.for_each(|i, r, w| s.key_allowed(args[i], r, w)) {
            return Err(Denied::Key(i));
        }
    }
    if !s.allchannels && spec.channels != Channels::None {
        let (range, pattern) = match spec.channels {
            Channels::Publish => (1..2.min(args.len()), false),
            Channels::Subscribe => (1..args.len(), false),
            _ => (1..args.len(), true),
        };
        for i in range {
            if !s.channel_allowed(args[i], pattern) {
                return Err(Denied::Channel(i));
            }
        }
    }
    Ok(())
}

/// May `user` run `args` (command table entry `idx`)? Redis's
/// `ACLCheckAllUserCommandPerm`: allowed when one selector allows the
/// command, its keys and its channels; otherwise the most relevant denial.
pub fn check(srv: &Server, user: &User, idx: usize, args: &[&[u8]]) -> Result<(), Denied> {
    if user.unrestricted() {
        return Ok(());
    }
    let spec = srv.table.get(idx).spec;
    let cmds = &srv.acl.cmds;
    let mut keys = None;
    let mut worst = Denied::Command;
    for s in &user.selectors {
        match check_selector(s, cmds, idx, spec, args, &mut keys) {
            Ok(()) => return Ok(()),
            Err(d) if d.rank() > worst.rank() => worst = d,
            Err(_) => {}
        }
    }
    Err(worst)
}

/// `-NOPERM` text of a denied top-level (or queued) call.
pub fn noperm(srv: &Server, idx: usize, d: Denied) -> String {
    match d {
        Denied::Command => format!(
            "NOPERM this user has no permissions to run the '{}' command",
            srv.table.get(idx).full_name
        ),
        Denied::Key(_) => {
            "NOPERM this user has no permissions to access one of the keys used as arguments".into()
        }
        Denied::Channel(_) => {
            "NOPERM this user has no permissions to access one of the channels used as arguments"
                .into()
        }
    }
}

/// ACL DRYRUN's text for a denial.
pub fn dryrun_text(srv: &Server, idx: usize, args: &[&[u8]], d: Denied) -> String {
    match d {
        Denied::Command => format!(
            "This user has no permissions to run the '{}' command",
            srv.table.get(idx).full_name
        ),
        Denied::Key(i) => format!(
            "This user has no permissions to access the '{}' key",
            String::from_utf8_lossy(args[i])
        ),
        Denied::Channel(i) => format!(
            "This user has no permissions to access the '{}' channel",
            String::from_utf8_lossy(args[i])
        ),
    }
}

/// The error of a script's denied call (`ERR ...`).
pub fn script_text(d: Denied) -> &'static str {
    match d {
        Denied::Command => "ERR The user executing the script can't run this command or subcommand",
        Denied::Key(_) => "ERR The user executing the script can't access at least one of the keys mentioned in the command arguments",
        Denied::Channel(_) => "ERR The user executing the script can't publish to the channel mentioned in the command",
    }
}

/// The error EXEC gives for a queued command the user may no longer run.
pub fn exec_text(d: Denied) -> String {
    let why = match d {
        Denied::Command => "no permission to execute the command or subcommand",
        Denied::Key(_) => "no permission to touch the specified keys",
        Denied::Channel(_) => "no permission to access one of the channels used as arguments",
    };
    format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {why}")
}

/// Checks a call for the dispatcher (and EXEC, scripts): refreshes the
/// user, and on denial logs it (ACL LOG, INFO counters). `context` is
/// where the call comes from; `caller` the id of the connection to show in the log
/// (the script's caller for a script's call).
pub fn check_call(
    srv: &Server,
    client: &mut Client,
    idx: usize,
    args: &[&[u8]],
    context: Context,
    caller: Option<u64>,
) -> Result<(), Denied> {
    refresh_user(srv, client);
    if client.acl.user.unrestricted() {
        return Ok(());
    }
    let r = check(srv, &client.acl.user, idx, args);
    if let Err(d) = r {
        // CLIENT INFO in the log names the denied command, as in Redis.
        client.shared.last_cmd.store(idx as u32 + 1, Relaxed);
        let object = match d {
            Denied::Command => srv.table.get(idx).full_name.as_bytes().to_vec(),
            Denied::Key(i) | Denied::Channel(i) => args[i].to_vec(),
        };
        let user = client.acl.user.name.clone();
        // The calling client (a script's) is looked up only on a denial:
        // the registry lookup is not free, and checks pass far more often.
        let caller = caller.and_then(|id| srv.clients.get(id));
        log(
            srv,
            caller.as_deref().unwrap_or(&client.shared),
            d.reason(),
            context,
            object,
            user,
        );
    }
    r
}

/// Adds an ACL LOG entry and counts the denial (INFO stats).
pub fn log(
    srv: &Server,
    who: &ClientShared,
    reason: Reason,
    context: Context,
    object: Vec<u8>,
    username: Vec<u8>,
) {
    let d = &srv.acl.denied;
    match reason {
        Reason::Auth => &d.auth,
        Reason::Command => &d.cmd,
        Reason::Key => &d.key,
        Reason::Channel => &d.channel,
    }
    .fetch_add(1, Relaxed);
    let now = crate::base::clock::unix_time_ms();
    let entry = Entry {
        count: 1,
        reason,
        context,
        object,
        username,
        time_ms: now,
        client_info: crate::services::client_info::client_line(srv, who, now),
    };
    let max = srv.settings().acllog_max_len as usize;
    srv.acl.log.lock().add(entry, max);
}

/// The context of a denial for the ACL LOG.
pub fn context_of(client: &Client) -> Context {
    if client.tx.in_multi() {
        Context::Multi
    } else {
        Context::TopLevel
    }
}

/// Authenticates `client` as `user` with `pass` (AUTH, HELLO AUTH): on
/// success the connection runs as that user; on failure an `auth` entry
/// goes to the ACL LOG (object: the command as typed). True on success.
pub fn authenticate(
    srv: &Server,
    client: &mut Client,
    user: &[u8],
    pass: &[u8],
    command: &[u8],
) -> bool {
    match srv.acl.get(user) {
        Some(u) if u.password_ok(pass) => {
            client.acl.generation = srv.acl.generation();
            client.shared.strings.lock().user = String::from_utf8_lossy(&u.name).into_owned();
            client.acl.user = u;
            client.authenticated = true;
            true
        }
        _ => {
            let ctx = context_of(client);
            log(
                srv,
                &client.shared,
                Reason::Auth,
                ctx,
                command.to_vec(),
                user.to_vec(),
            );
            false
        }
    }
}

/// Makes the connection the default user again (RESET): authenticated
/// when the default user needs no password.
pub fn reset_user(srv: &Server, client: &mut Client) {
    client.acl.user = srv.acl.default_user();
    client.acl.generation = srv.acl.generation();
    client.authenticated = !srv.acl.auth_required();
    client.shared.strings.lock().user = "default".into();
}

/// Closes connection `c` (the caller's own after its reply).
fn close(srv: &Server, me: &mut Client, c: &ClientShared) {
    if c.id == me.id {
        me.close_after_reply = true;
        c.set_flag(cflag::CLOSE_AFTER_REPLY, true);
        return;
    }
    c.killed.store(true, Relaxed);
    c.set_flag(cflag::CLOSE_ASAP, true);
    crate::services::replication::close_killed_link(srv, c);
    srv.hub.send(c.worker, WorkerMsg::Poke { client_id: c.id });
}

/// Closes every connection authenticated as one of `names` (ACL DELUSER,
/// ACL LOAD, CLIENT KILL USER); returns how many.
pub fn kill_users(srv: &Server, me: &mut Client, names: &[&[u8]]) -> usize {
    let mut n = 0;
    for c in srv.clients.all() {
        if c.killed.load(Relaxed) {
            continue;
        }
        let user = c.strings.lock().user.clone();
        if names.contains(&user.as_bytes()) {
            close(srv, me, &c);
            n += 1;
        }
    }
    if names.iter().any(|u| *u == me.acl.user.name.as_slice()) {
        me.authenticated = false;
    }
    n
}

/// After ACL SETUSER changed `old` into `new`: closes the user's Pub/Sub
/// connections that are subscribed to a channel or pattern the new rules
/// no longer allow (Redis's `ACLKillPubsubClientsIfNeeded`).
pub fn kill_pubsub_if_revoked(srv: &Server, me: &mut Client, old: &User, new: &User) {
    if new.selectors.iter().any(|s| s.allchannels) {
        return;
    }
    let upcoming: Vec<Vec<u8>> = new
        .selectors
        .iter()
        .flat_map(|s| s.channels.iter().cloned())
        .collect();
    let superset = old
        .selectors
        .iter()
        .all(|s| !s.allchannels && s.channels.iter().all(|c| upcoming.contains(c)));
    if superset {
        return;
    }
    let name = String::from_utf8_lossy(&old.name).into_owned();
    let subs = srv
        .pubsub
        .subscriptions_where(|c| c.strings.lock().user == name);
    for (c, channels, patterns, shard) in subs {
        let kill = patterns.iter().any(|p| !channel_in(&upcoming, p, true))
            || channels
                .iter()
                .chain(shard.iter())
                .any(|ch| !channel_in(&upcoming, ch, false));
        if kill {
            close(srv, me, &c);
        }
    }
}

/// SORT's BY and GET rule (Redis 7.0): allowed only when the user may read
/// every key, with a selector that also allows this call.
pub fn full_key_read_access(srv: &Server, client: &Client, idx: usize, args: &[&[u8]]) -> bool {
    let user = &client.acl.user;
    if user.unrestricted() {
        return true;
    }
    let spec = srv.table.get(idx).spec;
    let mut keys = None;
    user.selectors.iter().any(|s| {
        check_selector(s, &srv.acl.cmds, idx, spec, args, &mut keys).is_ok()
            && s.all_keys_allowed(true, false)
    })
}

/// `redis.acl_check_cmd`: may the script's user run `argv`? `None` for an
/// unknown command (no arity check, as in Redis).
pub fn allowed_for_script(srv: &Server, client: &Client, argv: &[&[u8]]) -> Option<bool> {
    let mut idx = srv.table.lookup(argv.first()?)?;
    if !srv.table.get(idx).spec.subcommands.is_empty() && argv.len() >= 2 {
        idx = srv.table.lookup_sub(idx, argv[1])?;
    }
    Some(check(srv, &client.acl.user, idx, argv).is_ok())
}

/// Applies the config file's `user` lines and the `aclfile` at startup;
/// the error is the log line Redis exits with.
pub fn load_at_startup(srv: &Server) -> Result<(), String> {
    let settings = srv.settings();
    if !settings.aclfile.is_empty() && !settings.acl_users.is_empty() {
        return Err("Configuring Redis with users defined in redis.conf and at the same setting an ACL file path is invalid. This setup is very likely to lead to configuration errors and security holes, please define either an ACL file or declare users directly in your redis.conf, but not both.".into());
    }
    let acl = &srv.acl;
    let users = crate::kernel::acl::file::config_users(
        &settings.acl_users,
        &acl.cmds,
        settings.acl_pubsub_all,
        &acl.default_user(),
    )
    .map_err(|e| format!("{e}\nCritical error while loading ACLs. Exiting."))?;
    for u in users {
        if !u.enabled {
            crate::base::log::notice(
                &format!("The user '{}' is disabled (there is no 'on' modifier in the user description). Make sure this is not a configuration error.", String::from_utf8_lossy(&u.name)),
            );
        }
        acl.put(u);
    }
    if !settings.aclfile.is_empty() {
        let users = read_file(srv, &settings.aclfile)
            .map_err(|e| format!("Aborting Redis startup because of ACL errors: {e}"))?;
        acl.replace_all(users);
    }
    Ok(())
}

/// The users of the ACL file at `path`, or Redis's error text.
pub fn read_file(srv: &Server, path: &str) -> Result<BTreeMap<Vec<u8>, Arc<User>>, String> {
    let text = std::fs::read(path).map_err(|e| {
        format!(
            "Error loading ACLs, opening file '{path}': {}",
            crate::base::text::os_error_text(&e)
        )
    })?;
    crate::kernel::acl::file::parse(&text, path, &srv.acl.cmds, srv.settings().acl_pubsub_all)
}

/// ACL SAVE: writes every user to the ACL file (through a temporary file
/// renamed over it).
pub fn save_file(srv: &Server, path: &str) -> std::io::Result<()> {
    use std::io::Write as _;
    let users = srv.acl.users();
    let text = crate::kernel::acl::file::save_text(users.iter().map(|u| &**u), &srv.acl.cmds);
    let tmp = format!("{path}.tmp-{}", std::process::id());
    let mut f = std::fs::File::create(&tmp)?;
    f.write_all(&text)?;
    f.sync_all()?;
    drop(f);
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}
