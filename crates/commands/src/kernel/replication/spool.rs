//! A replica's pending stream spooled to disk: what a replica has not
//! read yet (it is loading its full sync payload, or it is slow) stays in
//! memory only up to [`SPOOL_THRESHOLD`]; beyond that the link's spooler
//! thread moves it to an unlinked temporary file in `dir`, and the
//! link's sender reads it back as the socket drains.
//!
//! A link's pending stream, oldest byte first, is always
//! `[file: read_pos..write_pos][in flight][LinkOut::buf]`:
//! * the file holds bytes the spooler wrote; the sender sends them first,
//!   from `read_pos`, and advances `read_pos` once they are sent;
//! * "in flight" is the chunk the spooler took from `buf` and is writing
//!   at `write_pos` (outside every lock); the sender waits for it rather
//!   than overtake it;
//! * `buf` gets the newest bytes (the feed appends under the link's `out`
//!   lock, see `kernel::replication`).
//!
//! So every byte fed reaches the socket exactly once and in order, and
//! offsets stay exact. The feed never does I/O: it only wakes the spooler
//! when `buf` reaches the threshold. Memory per link is bounded by about
//! `buf` (the threshold plus the bytes fed while a chunk is written), the
//! chunk in flight and the sender's read chunk ([`READ_CHUNK`]).
//!
//! The replica output limits (`client-output-buffer-limit replica`) count
//! every pending byte, spooled or not ([`LinkOut::pending`]): a replica is
//! dropped at the same point as a Redis replica, whose pending stream is
//! all in memory. INFO `mem_clients_slaves` counts only the memory.
//!
//! If the file cannot be created or written (disk full), spooling stops
//! for that link (logged once): the bytes of a failed write go back to
//! the front of `buf`, and from then on the link holds its stream in
//! memory as before, bounded by the output limits only.
//!
//! The file is unlinked as soon as it is created, so nothing is left in
//! `dir` by a crash; it is closed (its blocks freed) when the sender has
//! drained it, and a new one is made if the replica falls behind again.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{LinkOut, ReplicaLink};

/// Bytes of a replica's pending stream kept in memory before the rest
/// goes to the spool file.
pub const SPOOL_THRESHOLD: usize = 4 << 20;

/// The most the sender reads back from the spool file at once.
pub const READ_CHUNK: usize = 1 << 20;

/// The spooled part of a link's pending stream (see the module doc).
#[derive(Debug, Default)]
pub struct Spool {
    file: Option<Arc<File>>,
    read_pos: u64,
    write_pos: u64,
    /// Bytes taken from `buf` that the spooler is writing.
    in_flight: u64,
    /// Spooling gave up for this link (I/O error).
    failed: bool,
    /// Bytes ever written to the spool (tests, logs).
    total: u64,
}

impl Spool {
    /// Pending bytes on disk or on their way there.
    pub fn held(&self) -> u64 {
        self.write_pos - self.read_pos + self.in_flight
    }

    /// Bytes in flight: memory the spooler holds.
    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }

    /// Bytes ever spooled for this link.
    pub fn total(&self) -> u64 {
        self.total
    }
}

/// A chunk the spooler writes at `pos` of `file`.
pub struct SpoolJob {
    pub file: Arc<File>,
    pub pos: u64,
    pub bytes: Vec<u8>,
}

/// What the sender sends next.
pub enum Next {
    /// `len` bytes of `file` at `pos` (then [`LinkOut::sent_from_file`]).
    File {
        file: Arc<File>,
        pos: u64,
        len: usize,
    },
    /// The in-memory bytes, oldest pending ones.
    Memory(Vec<u8>),
    /// Nothing yet (or a chunk still in flight): wait for `ready`.
    Wait,
}

impl LinkOut {
    /// The replica's pending stream: memory, in flight and on disk (what
    /// the output limits count).
    pub fn pending(&self) -> u64 {
        self.buf.len() as u64 + self.spool.held()
    }

    /// Should the spooler take `buf` now?
    pub fn wants_spool(&self) -> bool {
        self.buf.len() >= SPOOL_THRESHOLD
            && !self.spool.failed
            && self.spool.in_flight == 0
            && !self.closed
    }

    /// Does the spooler need a file before it can take `buf`?
    pub fn needs_spool_file(&self) -> bool {
        self.spool.file.is_none() && !self.spool.failed
    }

    /// The spooler made its file.
    pub fn set_spool_file(&mut self, file: File) {
        self.spool.file = Some(Arc::new(file));
        self.spool.read_pos = 0;
        self.spool.write_pos = 0;
    }

    /// Spooling stops for this link (the file could not be made).
    pub fn spool_failed(&mut self) {
        self.spool.failed = true;
    }

    /// Takes `buf` for the spooler (when [`wants_spool`](Self::wants_spool)
    /// and the file exists).
    pub fn take_for_spool(&mut self) -> Option<SpoolJob> {
        if !self.wants_spool() {
            return None;
        }
        let file = self.spool.file.clone()?;
        let bytes = std::mem::take(&mut self.buf);
        self.spool.in_flight = bytes.len() as u64;
        Some(SpoolJob {
            file,
            pos: self.spool.write_pos,
            bytes,
        })
    }

    /// The spooler's write of `job` ended: the bytes are on disk, or
    /// (Err) they go back in front of `buf` and spooling stops.
    pub fn spool_written(&mut self, job: SpoolJob, ok: bool) {
        self.spool.in_flight = 0;
        if ok {
            self.spool.write_pos += job.bytes.len() as u64;
            self.spool.total += job.bytes.len() as u64;
        } else {
            self.spool.failed = true;
            let mut bytes = job.bytes;
            bytes.extend_from_slice(&self.buf);
            self.buf = bytes;
        }
    }

    /// The oldest pending bytes for the sender (see [`Next`]). When the
    /// file is drained it is handed back in `release` to be closed
    /// outside the lock.
    pub fn next_to_send(&mut self, release: &mut Option<Arc<File>>) -> Next {
        let s = &mut self.spool;
        if s.read_pos < s.write_pos {
            if let Some(file) = &s.file {
                let len = (s.write_pos - s.read_pos).min(READ_CHUNK as u64) as usize;
                return Next::File {
                    file: file.clone(),
                    pos: s.read_pos,
                    len,
                };
            }
        }
        if s.in_flight > 0 {
            return Next::Wait;
        }
        if s.file.is_some() {
            *release = s.file.take();
            s.read_pos = 0;
            s.write_pos = 0;
        }
        if self.buf.is_empty() {
            return Next::Wait;
        }
        Next::Memory(std::mem::take(&mut self.buf))
    }

    /// `len` bytes of the file were sent.
    pub fn sent_from_file(&mut self, len: usize) {
        self.spool.read_pos += len as u64;
    }
}

/// Creates the spool file in `dir`, unlinked at once.
fn create_file(dir: &Path, id: u64) -> std::io::Result<File> {
    let path: PathBuf = dir.join(format!("temp-repl-spool-{}-{id}.tmp", std::process::id()));
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)?;
    std::fs::remove_file(&path)?;
    Ok(file)
}

/// The spooler of one link: until the link closes, moves `buf` to the
/// spool file whenever it reaches the threshold. `log` reports the start
/// of spooling and failures.
pub fn run_spooler(link: &ReplicaLink, dir: &Path, log: &dyn Fn(bool, &str)) {
    let mut logged = false;
    loop {
        let job = {
            let mut o = link.out.lock();
            while !o.closed && !o.wants_spool() {
                link.spool_wake.wait(&mut o);
            }
            if o.closed {
                return;
            }
            if o.needs_spool_file() {
                drop(o);
                let made = create_file(dir, link.shared.id);
                let mut o = link.out.lock();
                match made {
                    Ok(f) => {
                        o.set_spool_file(f);
                        drop(o);
                        if std::mem::replace(&mut logged, true) {
                            continue;
                        }
                        log(
                            false,
                            &format!(
                                "Replica {}:{} is behind by more than {} bytes: its pending stream goes to a temporary file in the working directory",
                                link.ip, link.port, SPOOL_THRESHOLD
                            ),
                        );
                    }
                    Err(e) => {
                        o.spool_failed();
                        drop(o);
                        log(
                            true,
                            &format!(
                                "Can't spool the stream of replica {}:{} to disk ({e}): it is held in memory",
                                link.ip, link.port
                            ),
                        );
                    }
                }
                continue;
            }
            match o.take_for_spool() {
                Some(job) => job,
                None => continue,
            }
        };
        let r = job.file.write_all_at(&job.bytes, job.pos);
        if let Err(e) = &r {
            log(
                true,
                &format!(
                    "Can't spool the stream of replica {}:{} to disk ({e}): it is held in memory",
                    link.ip, link.port
                ),
            );
        }
        link.out.lock().spool_written(job, r.is_ok());
        link.ready.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::sync::atomic::Ordering::Relaxed;

    fn temp_file() -> File {
        let dir = std::env::temp_dir();
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        create_file(&dir, 1_000_000 + N.fetch_add(1, Relaxed)).unwrap()
    }

    #[derive(Debug, Clone)]
    enum Op {
        Feed(Vec<u8>),
        /// Take for the spooler, and finish the write now (true) or fail it.
        Spool(bool),
        /// Take for the spooler and leave the chunk in flight.
        SpoolStart,
        SpoolFinish,
        Send,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => proptest::collection::vec(any::<u8>(), 0..3000).prop_map(Op::Feed),
            2 => Just(Op::Spool(true)),
            1 => Just(Op::Spool(false)),
            1 => Just(Op::SpoolStart),
            1 => Just(Op::SpoolFinish),
            3 => Just(Op::Send),
        ]
    }

    /// The test threshold is the real one; feeds are scaled so that it is
    /// crossed: each fed piece is repeated to a large size.
    fn scale(piece: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        while v.len() < SPOOL_THRESHOLD / 3 && !piece.is_empty() {
            v.extend_from_slice(piece);
        }
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// Whatever the interleaving of feed, spooler and sender (and
        /// failed writes), the bytes sent are the bytes fed, in order, and
        /// `pending` is what is fed and not sent.
        #[test]
        fn sent_stream_equals_fed_stream(ops in proptest::collection::vec(op(), 1..40)) {
            let mut o = LinkOut::default();
            let mut fed: Vec<u8> = Vec::new();
            let mut sent: Vec<u8> = Vec::new();
            let mut in_flight: Option<SpoolJob> = None;
            let mut release = None;
            let drain = |o: &mut LinkOut, sent: &mut Vec<u8>, release: &mut Option<Arc<File>>| {
                match o.next_to_send(release) {
                    Next::File { file, pos, len } => {
                        let mut b = vec![0; len];
                        file.read_exact_at(&mut b, pos).unwrap();
                        sent.extend_from_slice(&b);
                        o.sent_from_file(len);
                        true
                    }
                    Next::Memory(b) => {
                        sent.extend_from_slice(&b);
                        true
                    }
                    Next::Wait => false,
                }
            };
            for op in ops {
                match op {
                    Op::Feed(p) => {
                        let p = scale(&p);
                        fed.extend_from_slice(&p);
                        o.buf.extend_from_slice(&p);
                    }
                    Op::Spool(ok) if in_flight.is_some() => {
                        o.spool_written(in_flight.take().unwrap(), ok);
                    }
                    Op::SpoolFinish => {
                        if let Some(job) = in_flight.take() {
                            o.spool_written(job, true);
                        }
                    }
                    Op::Spool(ok) => {
                        if o.needs_spool_file() {
                            o.set_spool_file(temp_file());
                        }
                        if let Some(job) = o.take_for_spool() {
                            if ok {
                                job.file.write_all_at(&job.bytes, job.pos).unwrap();
                            }
                            o.spool_written(job, ok);
                        }
                    }
                    Op::SpoolStart => {
                        if in_flight.is_none() {
                            if o.needs_spool_file() {
                                o.set_spool_file(temp_file());
                            }
                            if let Some(job) = o.take_for_spool() {
                                job.file.write_all_at(&job.bytes, job.pos).unwrap();
                                in_flight = Some(job);
                            }
                        }
                    }
                    Op::Send => {
                        drain(&mut o, &mut sent, &mut release);
                    }
                }
                prop_assert_eq!(o.pending() as usize, fed.len() - sent.len());
                prop_assert!(fed.starts_with(&sent));
            }
            if let Some(job) = in_flight.take() {
                o.spool_written(job, true);
            }
            while drain(&mut o, &mut sent, &mut release) {}
            prop_assert_eq!(sent, fed);
            prop_assert_eq!(o.pending(), 0);
        }
    }
}
