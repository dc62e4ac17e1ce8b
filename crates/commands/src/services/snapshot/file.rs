//! The RDB file on disk: written to a temporary file in `dir`, flushed and
//! fsynced, renamed over `dbfilename`, then the directory fsynced, so a
//! crash or a kill at any moment leaves either the previous file or the
//! new one, whole. With `rdb-save-incremental-fsync` the data goes to disk
//! every [`AUTOSYNC`] bytes while it is written (Redis's rule: start the
//! write-out of each 4 MiB block, wait for the one before), so the kernel
//! never holds a whole dump of dirty pages.
//!
//! A temporary file is named `temp-<pid>.rdb` (SAVE) or
//! `temp-<pid>-<n>.rdb` (background saves); a [`RdbFile`] dropped before
//! [`RdbFile::commit`] removes it. [`remove_stale_temp_files`] deletes the
//! ones a killed server left behind.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use rdb::{WriteOptions, Writer};

/// Incremental fsync step (Redis's `REDIS_AUTOSYNC_BYTES`).
pub const AUTOSYNC: u64 = 4 << 20;

/// A file that starts the write-out of every [`AUTOSYNC`] bytes and waits
/// for the previous block (when `autosync`).
pub struct SyncingFile {
    f: File,
    autosync: bool,
    written: u64,
    /// Bytes since the last block boundary.
    pending: u64,
}

impl SyncingFile {
    fn sync_range(&self, from: u64, len: u64, flags: u32) -> io::Result<()> {
        // SAFETY: sync_file_range on our own open descriptor; it reads no
        // memory of ours.
        let r =
            unsafe { libc::sync_file_range(self.f.as_raw_fd(), from as i64, len as i64, flags) };
        if r == -1 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl Write for SyncingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.autosync {
            let n = self.f.write(buf)?;
            self.written += n as u64;
            return Ok(n);
        }
        let room = (AUTOSYNC - self.pending) as usize;
        let n = self.f.write(&buf[..buf.len().min(room)])?;
        self.written += n as u64;
        self.pending += n as u64;
        if self.pending == AUTOSYNC {
            self.pending = 0;
            let end = self.written;
            self.sync_range(end - AUTOSYNC, AUTOSYNC, libc::SYNC_FILE_RANGE_WRITE)?;
            if end >= 2 * AUTOSYNC {
                self.sync_range(
                    end - 2 * AUTOSYNC,
                    AUTOSYNC,
                    libc::SYNC_FILE_RANGE_WAIT_BEFORE
                        | libc::SYNC_FILE_RANGE_WRITE
                        | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                )?;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.f.flush()
    }
}

/// What the header's aux fields say.
pub struct Aux {
    pub ctime: u64,
    pub used_mem: u64,
    /// `aof-base`: 1 in an AOF's base file.
    pub aof_base: bool,
    /// `repl-stream-db`, `repl-id`, `repl-offset`: a replica's place in its
    /// master's stream at the cut (`services::replication::with_save_info`).
    pub repl: Option<ReplAux>,
}

/// A replica's place in its master's stream, as its RDB files record it:
/// a restart loads them and continues by partial resync.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplAux {
    pub stream_db: u32,
    pub replid: String,
    pub offset: u64,
}

/// An RDB file being written under a temporary name.
pub struct RdbFile {
    tmp: PathBuf,
    dest: PathBuf,
    writer: Option<Writer<SyncingFile>>,
}

impl RdbFile {
    /// Creates `dir/tmp_name` and writes the header and Redis 7.0's aux
    /// fields (`redis-ver`, `redis-bits`, `ctime`, `used-mem`, a replica's
    /// `repl-stream-db`/`repl-id`/`repl-offset`, `aof-base`).
    /// The error is Redis's log text.
    pub fn create(
        dir: &Path,
        tmp_name: &str,
        dbfilename: &str,
        opts: WriteOptions,
        incremental_fsync: bool,
        aux: Aux,
    ) -> Result<RdbFile, String> {
        let tmp = dir.join(tmp_name);
        let f = File::create(&tmp).map_err(|e| {
            format!(
                "Failed opening the temp RDB file {tmp_name} (in server root dir {}) for saving: {e}",
                dir.display()
            )
        })?;
        let mut file = RdbFile {
            tmp,
            dest: dir.join(dbfilename),
            writer: None,
        };
        let out = SyncingFile {
            f,
            autosync: incremental_fsync,
            written: 0,
            pending: 0,
        };
        let header = || -> io::Result<Writer<SyncingFile>> {
            let mut w = Writer::new(out, opts)?;
            w.aux(b"redis-ver", crate::REDIS_VERSION.as_bytes())?;
            w.aux_int(b"redis-bits", 64)?;
            w.aux_int(b"ctime", aux.ctime as i64)?;
            w.aux_int(b"used-mem", aux.used_mem as i64)?;
            if let Some(r) = &aux.repl {
                w.aux_int(b"repl-stream-db", r.stream_db as i64)?;
                w.aux(b"repl-id", r.replid.as_bytes())?;
                w.aux_int(b"repl-offset", r.offset as i64)?;
            }
            w.aux_int(b"aof-base", aux.aof_base as i64)?;
            Ok(w)
        };
        file.writer = Some(header().map_err(|e| format!("Write error saving DB on disk: {e}"))?);
        Ok(file)
    }

    pub fn writer(&mut self) -> &mut Writer<SyncingFile> {
        self.writer.as_mut().expect("file not committed")
    }

    /// Ends the file (EOF, checksum), fsyncs it, renames it over the
    /// destination and fsyncs the directory. Returns the file's size.
    ///
    /// The rename happens under `lock` (one per server) and only if `go()`
    /// still says so there: a background save aborted in the meantime
    /// (FLUSHALL, DEBUG RELOAD) must not put its older dataset over the
    /// file a synchronous save writes after the abort.
    pub fn commit(mut self, lock: &Mutex<()>, go: impl Fn() -> bool) -> Result<u64, String> {
        let w = self.writer.take().expect("file not committed");
        let werr = |e: io::Error| format!("Write error saving DB on disk: {e}");
        let (out, size) = w.finish().map_err(werr)?;
        out.f.sync_all().map_err(werr)?;
        drop(out);
        let _renaming = lock.lock();
        if !go() {
            return Err("the save was aborted".into());
        }
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| {
            format!(
                "Error moving temp DB file {} on the final destination {} (in server root dir {}): {e}",
                self.tmp.file_name().unwrap_or_default().to_string_lossy(),
                self.dest.file_name().unwrap_or_default().to_string_lossy(),
                self.dest.parent().unwrap_or(Path::new(".")).display()
            )
        })?;
        // The rename is durable once the directory is.
        if let Some(dir) = self.dest.parent() {
            File::open(dir)
                .and_then(|d| d.sync_all())
                .map_err(|e| format!("Failed to fsync directory {}: {e}", dir.display()))?;
        }
        self.tmp = PathBuf::new();
        Ok(size)
    }
}

impl Drop for RdbFile {
    fn drop(&mut self) {
        if !self.tmp.as_os_str().is_empty() {
            self.writer = None;
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Removes `temp-<pid>*.rdb` files in `dir` whose process is gone (a
/// server killed while saving leaves its temporary file). Returns how many.
pub fn remove_stale_temp_files(dir: &Path) -> usize {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut n = 0;
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name
            .strip_prefix("temp-")
            .and_then(|r| r.strip_suffix(".rdb"))
        else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if std::fs::remove_file(e.path()).is_ok() {
            n += 1;
        }
    }
    n
}
