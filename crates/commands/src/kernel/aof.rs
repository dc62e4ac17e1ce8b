//! The append-only file's state: the open incremental file, the manifest,
//! how far the journal's stream has been written and synced, and the
//! figures `INFO persistence` shows. `services::aof` does the work.
//!
//! Invariants:
//! * `synced <= written <= journal.appended()` (stream offsets).
//! * `files` is locked before `journal.out` when both are needed (the
//!   writer takes the stream's tail under both so tails reach the file in
//!   stream order); nothing that holds `files` waits for the journal's
//!   order lock.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering::Relaxed};

use parking_lot::Mutex;

/// One file named in the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestFile {
    pub name: String,
    pub seq: u64,
    pub kind: FileKind,
}

/// `type` of a manifest line: `b` (base), `h` (history), `i` (incremental).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Base,
    History,
    Incr,
}

/// The manifest: at most one base, the incremental files in order, and
/// history files waiting to be deleted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    pub base: Option<ManifestFile>,
    pub incrs: Vec<ManifestFile>,
    pub history: Vec<ManifestFile>,
}

impl Manifest {
    /// Highest base sequence number so far (0: none).
    pub fn base_seq(&self) -> u64 {
        self.base.as_ref().map_or(0, |b| b.seq)
    }

    /// Highest incremental sequence number so far (0: none).
    pub fn incr_seq(&self) -> u64 {
        self.incrs.last().map_or(0, |f| f.seq)
    }
}

/// The open AOF (while `appendonly` is on).
#[derive(Debug)]
pub struct Files {
    /// `dir/appenddirname`.
    pub dir: PathBuf,
    /// `appendfilename` (the prefix of every file's name).
    pub prefix: String,
    pub manifest: Manifest,
    /// The last incremental file, open for appending.
    pub incr: File,
    /// Bytes that a failed write left unwritten (retried first).
    pub retry: Vec<u8>,
    /// An empty buffer swapped with the journal's stream buffer on each
    /// write-out, so that neither side allocates per event-loop pass.
    pub spare: Vec<u8>,
    /// Size of the base file and of all incremental files, for INFO
    /// (`aof_base_size`, `aof_current_size`).
    pub base_size: u64,
    pub incr_size: u64,
    /// While `appendonly` is being turned on (see [`Aof::wait_rewrite`]):
    /// the last incremental file is written under this temporary name,
    /// which no manifest on disk names, and renamed to its manifest name
    /// when the first base is installed.
    pub temp_incr: Option<String>,
}

/// `appendfsync` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fsync {
    Always,
    #[default]
    Everysec,
    No,
}

/// AOF state owned by the server.
#[derive(Debug, Default)]
pub struct Aof {
    /// The open files; None while `appendonly` is off.
    pub files: Mutex<Option<Files>>,
    /// Stream offset written to the current file set.
    pub written: AtomicU64,
    /// Stream offset known to be on disk (fdatasync).
    pub synced: AtomicU64,
    /// `appendfsync` mirrored for the worker's reply gate (0 always,
    /// 1 everysec, 2 no).
    pub fsync_policy: std::sync::atomic::AtomicU8,
    /// A rewrite is running (no fsync under `no-appendfsync-on-rewrite`).
    pub rewrite_in_progress: AtomicBool,
    /// BGREWRITEAOF asked while another could not start yet.
    pub rewrite_scheduled: AtomicBool,
    /// `appendonly` was turned on at runtime and the AOF waits for its
    /// first base (Redis's `AOF_WAIT_REWRITE`): INFO shows `aof_enabled:1`;
    /// the journal runs into a temporary incremental file while the base
    /// is written in the background, or not yet while that rewrite is
    /// scheduled (a BGSAVE runs). Cleared when the base is installed or
    /// `appendonly` is turned off.
    pub wait_rewrite: AtomicBool,
    /// Unix ms when the running rewrite started.
    pub rewrite_started_ms: AtomicU64,
    /// Seconds the last rewrite took (-1: none yet).
    pub last_rewrite_secs: AtomicI64,
    pub last_rewrite_ok: AtomicBool,
    /// Rewrites started (`aof_rewrites`: Redis counts a rewrite when it
    /// forks its child).
    pub rewrites: AtomicU64,
    /// Rewrites that ended, either way (until one has,
    /// `aof_last_rewrite_time_sec` is -1 and the status `ok`).
    pub rewrites_ended: AtomicU64,
    pub rewrite_failures: AtomicU64,
    /// The last write to the file failed: writes are refused (`MISCONF`)
    /// until one succeeds. The error text is in `last_write_error`.
    pub write_failed: AtomicBool,
    pub last_write_error: Mutex<String>,
    /// fsyncs postponed because the previous one was still running.
    pub delayed_fsync: AtomicU64,
    /// Base size after the last rewrite (or load), for auto-rewrite.
    pub rewrite_base_size: AtomicU64,
    /// Unix ms of the last everysec fdatasync.
    pub last_fsync_ms: AtomicU64,
    /// Loading statistics for INFO.
    pub loading: AtomicBool,
    /// The running background rewrite (`services::aof::rewrite`).
    pub running: Mutex<RunningRewrite>,
    /// `aof_last_cow_size`: peak bytes the last background rewrite held
    /// between its encoders and its writer.
    pub last_cow: AtomicU64,
}

/// The running background rewrite's control, if any.
#[derive(Default)]
pub struct RunningRewrite(pub Option<std::sync::Arc<dyn crate::kernel::persistence::SaveControl>>);

impl std::fmt::Debug for RunningRewrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RunningRewrite({})", self.0.is_some())
    }
}

impl Aof {
    pub fn policy(&self) -> Fsync {
        match self.fsync_policy.load(Relaxed) {
            0 => Fsync::Always,
            1 => Fsync::Everysec,
            _ => Fsync::No,
        }
    }

    pub fn set_policy(&self, p: Fsync) {
        self.fsync_policy.store(
            match p {
                Fsync::Always => 0,
                Fsync::Everysec => 1,
                Fsync::No => 2,
            },
            Relaxed,
        );
    }
}
