//! Loading an AOF directory (Redis 7.0's layout) into the keyspace: the
//! base (an RDB file, or commands, possibly an RDB preamble followed by
//! commands as 6.x wrote them), then each incremental file in order,
//! replayed through the runtime as a client that never blocks.
//!
//! Rules, as Redis 7.0 applies them:
//! * a file that ends in the middle of a command is cut back to its last
//!   whole command when it is the last file and `aof-load-truncated` is
//!   on (the file is truncated on disk and a warning logged); otherwise
//!   the load fails;
//! * a MULTI without its EXEC at the end of the last file is dropped whole
//!   (the file is cut back to before the MULTI);
//! * anything else that does not parse is corruption: the load fails with
//!   a message naming the file and the byte offset;
//! * an unknown command fails the load, naming it;
//! * `#` lines (timestamp annotations) are skipped.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use resp::{Protocol, ReplyBuf};

use crate::kernel::aof::{FileKind, Manifest};
use crate::kernel::client::{Client, ClientShared};
use crate::kernel::server::Server;

/// Client id of the replaying client (never a real connection's).
pub const AOF_CLIENT_ID: u64 = u64::MAX - 2;

/// What a load did.
#[derive(Debug, Default, Clone)]
pub struct Report {
    pub commands: u64,
    pub keys_loaded: u64,
    /// A truncated tail was cut off (bytes removed from the last file).
    pub truncated: Option<u64>,
}

/// Why a load failed (the message says what and where).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError(pub String);

/// The outcome of parsing one command from a buffer.
enum Parsed {
    /// A command and the offset right after it.
    Command(Vec<Vec<u8>>, usize),
    /// An annotation line ending at the offset.
    Annotation(usize),
    /// The buffer ends inside a command.
    Truncated,
    /// Not a command: what was wrong.
    Bad(&'static str),
}

fn read_line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(at..)?;
    let nl = rest.iter().position(|&b| b == b'\n')?;
    let line = &rest[..nl];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    Some((line, at + nl + 1))
}

fn parse_len(s: &[u8]) -> Option<i64> {
    crate::base::parse::parse_i64(s)
}

fn parse_command(buf: &[u8], at: usize) -> Parsed {
    if buf[at] == b'#' {
        return match read_line(buf, at) {
            Some((_, next)) => Parsed::Annotation(next),
            None => Parsed::Truncated,
        };
    }
    if buf[at] != b'*' {
        return Parsed::Bad("expected '*'");
    }
    let Some((line, mut pos)) = read_line(buf, at) else {
        return Parsed::Truncated;
    };
    let Some(argc) = parse_len(&line[1..]).filter(|&n| n >= 1) else {
        return Parsed::Bad("invalid argument count");
    };
    let mut argv = Vec::with_capacity(argc.min(1024) as usize);
    for _ in 0..argc {
        if pos >= buf.len() {
            return Parsed::Truncated;
        }
        if buf[pos] != b'$' {
            return Parsed::Bad("expected '$'");
        }
        let Some((line, next)) = read_line(buf, pos) else {
            return Parsed::Truncated;
        };
        let Some(len) = parse_len(&line[1..]).filter(|&n| n >= 0) else {
            return Parsed::Bad("invalid bulk length");
        };
        let end = next + len as usize;
        if end + 2 > buf.len() {
            return Parsed::Truncated;
        }
        if &buf[end..end + 2] != b"\r\n" {
            return Parsed::Bad("expected CRLF after a bulk string");
        }
        argv.push(buf[next..end].to_vec());
        pos = end + 2;
    }
    Parsed::Command(argv, pos)
}

/// Commands replay at time 0 (nothing expires while loading, as in Redis),
/// so the relative-TTL forms older servers wrote (`SETEX`, `PSETEX`, `SET
/// .. EX|PX`, `EXPIRE`, `PEXPIRE`, `RESTORE` without `ABSTTL`; Redis 7.0
/// and Petrel write only absolute forms) are made absolute against the
/// clock first, which is when Redis would have run them. None: unchanged.
fn absolute(argv: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    let name = argv[0].to_ascii_lowercase();
    let now = crate::base::clock::unix_time_ms() as i64;
    let int = |a: &[u8]| crate::base::parse::parse_i64(a);
    let at = |ms: i64| now.saturating_add(ms).to_string().into_bytes();
    match name.as_slice() {
        b"setex" | b"psetex" if argv.len() == 4 => {
            let mul = if name == b"setex" { 1000 } else { 1 };
            let t = int(&argv[2])?;
            Some(vec![
                b"SET".to_vec(),
                argv[1].clone(),
                argv[3].clone(),
                b"PXAT".to_vec(),
                at(t.saturating_mul(mul)),
            ])
        }
        b"expire" | b"pexpire" if argv.len() >= 3 => {
            let mul = if name == b"expire" { 1000 } else { 1 };
            let t = int(&argv[2])?;
            let mut c = vec![
                b"PEXPIREAT".to_vec(),
                argv[1].clone(),
                at(t.saturating_mul(mul)),
            ];
            c.extend(argv[3..].iter().cloned());
            Some(c)
        }
        b"set" if argv.len() > 3 => {
            let mut c = argv.to_vec();
            for i in 3..c.len().saturating_sub(1) {
                let opt = c[i].to_ascii_lowercase();
                if opt == b"ex" || opt == b"px" {
                    let mul = if opt == b"ex" { 1000 } else { 1 };
                    let t = int(&c[i + 1])?;
                    c[i] = b"PXAT".to_vec();
                    c[i + 1] = at(t.saturating_mul(mul));
                    return Some(c);
                }
            }
            None
        }
        b"restore" if argv.len() >= 4 => {
            let abs = argv[4..].iter().any(|a| a.eq_ignore_ascii_case(b"ABSTTL"));
            let t = int(&argv[2])?;
            if abs || t <= 0 {
                return None;
            }
            let mut c = argv.to_vec();
            c[2] = at(t);
            c.push(b"ABSTTL".to_vec());
            Some(c)
        }
        _ => None,
    }
}

/// Replays commands through the runtime.
struct Replayer<'a> {
    srv: &'a Server,
    client: Client,
    out: ReplyBuf,
    /// Commands of an open MULTI (run at its EXEC).
    tx: Option<Vec<Vec<Vec<u8>>>>,
    commands: u64,
    /// Bytes of the files before the one replaying (INFO's progress).
    file_offset: u64,
}

impl<'a> Replayer<'a> {
    fn new(srv: &'a Server) -> Self {
        let shared = Arc::new(ClientShared::new(
            AOF_CLIENT_ID,
            "aof".into(),
            String::new(),
            -1,
            0,
            0,
        ));
        let mut client = Client::new(shared, false, true);
        client.authenticated = true;
        client.in_exec = true;
        // Nothing expires while loading (see `absolute`).
        client.replay_now_ms = Some(0);
        Replayer {
            srv,
            client,
            out: ReplyBuf::new(Protocol::Resp2),
            tx: None,
            commands: 0,
            file_offset: 0,
        }
    }

    /// Publishes the progress (`at`: offset in the current file) and stops
    /// the load when a SHUTDOWN was asked meanwhile (clients are served
    /// -LOADING while the AOF loads; SHUTDOWN is allowed then, as in Redis).
    fn progress(&self, at: usize) -> Result<(), LoadError> {
        self.srv
            .persistence
            .loading
            .loaded_bytes
            .store(self.file_offset + at as u64, Relaxed);
        if self.srv.shutdown_requested.load(Relaxed) {
            return Err(LoadError("the load was stopped by SHUTDOWN".into()));
        }
        Ok(())
    }

    fn run(&mut self, argv: &[Vec<u8>]) -> Result<(), String> {
        let fixed = absolute(argv);
        let argv = fixed.as_deref().unwrap_or(argv);
        let args: Vec<&[u8]> = argv.iter().map(|a| a.as_slice()).collect();
        if self.srv.table.lookup(args[0]).is_none() {
            return Err(format!(
                "Unknown command '{}' reading the append only file",
                String::from_utf8_lossy(argv[0].as_slice())
            ));
        }
        let settings = self.srv.settings();
        (self.srv.hooks.execute_queued)(
            self.srv,
            &mut self.client,
            &settings,
            &args,
            &mut self.out,
        );
        let name = self
            .srv
            .table
            .entry_of(&args)
            .map_or("<unknown>", |e| e.full_name.as_str());
        crate::services::replication::propagation::after_reply(
            self.srv,
            &settings,
            crate::services::replication::propagation::Applier::AofLoader,
            name,
            self.out.as_bytes(),
        );
        self.out.clear();
        self.commands += 1;
        Ok(())
    }

    /// One command of the file: MULTI opens a transaction, EXEC runs it.
    fn feed(&mut self, argv: Vec<Vec<u8>>) -> Result<(), String> {
        if argv[0].eq_ignore_ascii_case(b"MULTI") {
            self.tx = Some(Vec::new());
            return Ok(());
        }
        if argv[0].eq_ignore_ascii_case(b"EXEC") {
            if let Some(q) = self.tx.take() {
                let srv = self.srv;
                let mut res = Ok(());
                srv.atomically(&mut || {
                    for c in &q {
                        if res.is_ok() {
                            res = self.run(c);
                        }
                    }
                });
                return res;
            }
            return Ok(());
        }
        match &mut self.tx {
            Some(q) => {
                q.push(argv);
                Ok(())
            }
            None => self.run(&argv),
        }
    }
}

/// Commands between two updates of INFO's `loading_loaded_bytes` (and
/// checks for a SHUTDOWN asked meanwhile).
const PROGRESS_EVERY: u64 = 1024;

/// Loads one file's commands from `buf[start..]`. Returns Ok(None) when
/// the whole file was read, Ok(Some(valid_len)) when it ends in the middle
/// of a command or transaction (`valid_len`: the bytes before it).
fn replay(
    rp: &mut Replayer,
    name: &str,
    buf: &[u8],
    start: usize,
) -> Result<Option<usize>, LoadError> {
    let mut at = start;
    let mut before_multi = None;
    while at < buf.len() {
        match parse_command(buf, at) {
            Parsed::Annotation(next) => at = next,
            Parsed::Command(argv, next) => {
                if argv[0].eq_ignore_ascii_case(b"MULTI") {
                    before_multi = Some(at);
                } else if argv[0].eq_ignore_ascii_case(b"EXEC") {
                    before_multi = None;
                }
                rp.feed(argv)
                    .map_err(|e| LoadError(format!("{e} {name} at offset {at}")))?;
                at = next;
                if rp.commands.is_multiple_of(PROGRESS_EVERY) {
                    rp.progress(at)?;
                }
            }
            Parsed::Truncated => return Ok(Some(before_multi.unwrap_or(at))),
            Parsed::Bad(why) => {
                return Err(LoadError(format!(
                    "Bad file format reading the append only file {name} at offset {at} ({why}): make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>"
                )))
            }
        }
    }
    match before_multi {
        // A transaction without its EXEC: dropped whole.
        Some(m) => {
            rp.tx = None;
            Ok(Some(m))
        }
        None => Ok(None),
    }
}

/// Loads an RDB image at the start of `buf` into the keyspace; returns the
/// offset right after it (where a 6.x preamble's commands begin).
fn load_rdb(srv: &Server, name: &str, buf: &[u8], report: &mut Report) -> Result<usize, LoadError> {
    let settings = srv.settings();
    let opts = rdb::ReadOptions {
        limits: settings.limits,
        verify_checksum: true,
        allow_functions: true,
        input_len: Some(buf.len() as u64),
    };
    let err = |e: String| {
        LoadError(format!(
            "Bad file format reading the append only file {name}: {e}"
        ))
    };
    let mut rd = rdb::Reader::new(buf, opts).map_err(|e| err(e.to_string()))?;
    loop {
        match rd.read_item().map_err(|e| err(e.to_string()))? {
            rdb::Item::Entry(e) => {
                if e.db as usize >= settings.databases {
                    return Err(err(format!("database {} out of range", e.db)));
                }
                // Keys whose TTL passed are kept (the commands after the
                // preamble may touch them), as Redis loads an AOF preamble;
                // they expire once the load is over.
                let k = store::object::Key::new(&e.key);
                let ttl = e.expire_ms.map(|t| t.max(0) as u64);
                let mut p = srv.keyspace.lock(&k);
                drop(p.insert(e.db as usize, &k, e.value, ttl, 0));
                report.keys_loaded += 1;
            }
            rdb::Item::Function { code } => {
                let mut engine = srv.scripting.functions.lock();
                let res = engine.restore(&[code.as_slice()], scripting::RestorePolicy::Append);
                srv.scripting.refresh_function_counts(&engine);
                res.map_err(|e| err(format!("function library: {e}")))?;
            }
            rdb::Item::Eof { .. } => break,
            _ => {}
        }
    }
    Ok(rd.offset() as usize)
}

fn read_file(path: &Path) -> Result<Vec<u8>, LoadError> {
    std::fs::read(path).map_err(|e| {
        LoadError(format!(
            "Can't open the append-only file {}: {e}",
            path.display()
        ))
    })
}

/// Loads the files `m` names from `dir`. `load_truncated`: cut a truncated
/// last file back instead of failing.
pub fn load_manifest(
    srv: &Server,
    dir: &Path,
    m: &Manifest,
    load_truncated: bool,
) -> Result<Report, LoadError> {
    let mut report = Report::default();
    let mut rp = Replayer::new(srv);
    let mut files: Vec<(PathBuf, &str, FileKind)> = Vec::new();
    if let Some(b) = &m.base {
        files.push((dir.join(&b.name), &b.name, FileKind::Base));
    }
    for i in &m.incrs {
        files.push((dir.join(&i.name), &i.name, FileKind::Incr));
    }
    // INFO's loading_* fields: the files' total size, bytes replayed.
    let loading = &srv.persistence.loading;
    let total: u64 = files.iter().map(|(p, _, _)| super::file_size(p)).sum();
    loading
        .start
        .store(crate::base::clock::unix_time_ms() / 1000, Relaxed);
    loading.total_bytes.store(total, Relaxed);
    loading.loaded_bytes.store(0, Relaxed);
    loading.rdb_used_mem.store(0, Relaxed);
    let last = files.len().saturating_sub(1);
    for (n, (path, name, kind)) in files.iter().enumerate() {
        if !path.exists() {
            if n == last && *kind == FileKind::Incr {
                // Redis tolerates the last incremental file missing (a
                // crash right after the manifest named it).
                continue;
            }
            return Err(LoadError(format!("The AOF file {name} doesn't exist")));
        }
        let buf = read_file(path)?;
        if buf.is_empty() {
            continue;
        }
        let start = if buf.starts_with(b"REDIS") {
            load_rdb(srv, name, &buf, &mut report)?
        } else {
            0
        };
        rp.file_offset = loading.loaded_bytes.load(Relaxed);
        let replayed = replay(&mut rp, name, &buf, start)?;
        loading
            .loaded_bytes
            .store(rp.file_offset + buf.len() as u64, Relaxed);
        if let Some(valid) = replayed {
            if n != last {
                return Err(LoadError(format!(
                    "Fatal error: the truncated file is not the last file ({name})"
                )));
            }
            if !load_truncated {
                return Err(LoadError(format!(
                    "Unexpected end of file reading the append only file {name} at offset {valid}. You can: 1) Make a backup of your AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can set the 'aof-load-truncated' configuration option to yes and restart the server."
                )));
            }
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .and_then(|f| f.set_len(valid as u64).and_then(|_| f.sync_all()));
            if let Err(e) = f {
                return Err(LoadError(format!(
                    "Error truncating the AOF file {name}: {e}"
                )));
            }
            report.truncated = Some(buf.len() as u64 - valid as u64);
            crate::base::log::warning(&format!(
                "!!! Warning: short read while loading the AOF file {name}!!! AOF loaded anyway because aof-load-truncated is enabled (cut {} bytes at offset {valid})",
                buf.len() - valid
            ));
        }
    }
    report.commands = rp.commands;
    Ok(report)
}

/// Loads a single old-style (6.x) AOF file.
pub fn load_single(srv: &Server, path: &Path, load_truncated: bool) -> Result<Report, LoadError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let m = Manifest {
        base: Some(crate::kernel::aof::ManifestFile {
            name: name.clone(),
            seq: 1,
            kind: FileKind::Base,
        }),
        incrs: vec![],
        history: vec![],
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    load_manifest(srv, dir, &m, load_truncated)
}
