//! Thread scheduling through libc: putting a thread at `SCHED_IDLE`, and
//! finding jemalloc's background threads to do the same to them. No heap
//! allocation on these paths (see [`idle_allocator_threads`]).

/// Puts thread `tid` (0: the calling thread) at `SCHED_IDLE`: it then runs
/// only on CPU time the workers leave idle. Returns whether it worked.
pub fn set_idle_policy(tid: libc::pid_t) -> bool {
    let p = libc::sched_param { sched_priority: 0 };
    // SAFETY: changes the scheduling policy of a thread of this process;
    // no memory is touched.
    unsafe { libc::sched_setscheduler(tid, libc::SCHED_IDLE, &p) == 0 }
}

/// The nice value of the threads that walk and write a point-in-time
/// snapshot (BGSAVE, BGREWRITEAOF, a replica's full sync), see
/// [`lower_snapshot_thread`].
pub const SNAPSHOT_NICE: libc::c_int = 10;

/// Lowers the calling thread to [`SNAPSHOT_NICE`]: it keeps a tenth of a
/// core the workers also want (weight 110 against 1,024), all of an idle
/// one. At the default priority a snapshot's walk and writer took two
/// thirds of a core they shared with a worker (three runnable threads), so
/// a worker serving 85k requests/s fell behind for the whole save
/// (hundreds of milliseconds of queueing, docs/BENCHMARKS.md); not
/// `SCHED_IDLE`, which would leave a save almost no CPU beside a
/// busy-polling worker. Returns whether it worked.
pub fn lower_snapshot_thread() -> bool {
    // SAFETY: gettid has no preconditions; setpriority with a thread id
    // changes that one thread's nice value (Linux), no memory is touched.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, SNAPSHOT_NICE) == 0
    }
}

/// Puts jemalloc's background purging threads at `SCHED_IDLE`, so they use
/// CPU time the workers leave idle. At normal priority such a thread got a
/// fair half of a core it shared with a worker while it returned the pages
/// of a flushed 10M-key database: the worker waited in stretches of ~4 ms,
/// several in a row (docs/BENCHMARKS.md). jemalloc starts these threads
/// when it needs them and names them itself, so the cron calls this once
/// a second. Returns how many threads it changed.
///
/// It makes no Rust heap allocation: the cron runs it beside the workers,
/// and a block it held for a moment would show in `used_memory` (the
/// counting allocator's exact figure) for whoever read it at that moment.
/// `std::fs::read_dir` allocates a handle and a name per entry, so the
/// directory is read with `opendir`/`readdir` and each name into a stack
/// buffer.
pub fn idle_allocator_threads() -> usize {
    // SAFETY: opens a directory stream on a constant NUL-terminated path;
    // null is handled.
    let dir = unsafe { libc::opendir(c"/proc/self/task".as_ptr()) };
    if dir.is_null() {
        return 0;
    }
    let mut changed = 0;
    loop {
        // SAFETY: `dir` is an open stream; the entry returned is valid
        // until the next readdir/closedir on it, and read before either.
        let ent = unsafe { libc::readdir(dir) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
        let Some(tid) = std::str::from_utf8(name.to_bytes())
            .ok()
            .and_then(|s| s.parse::<libc::pid_t>().ok())
        else {
            continue;
        };
        if thread_name(tid, &mut [0; 32]) != Some(&b"jemalloc_bg_thd"[..]) {
            continue;
        }
        // SAFETY: reads the policy of one of this process's own threads.
        if unsafe { libc::sched_getscheduler(tid) } != libc::SCHED_IDLE && set_idle_policy(tid) {
            changed += 1;
        }
    }
    // SAFETY: `dir` is open and not used after this.
    unsafe { libc::closedir(dir) };
    changed
}

/// Thread `tid`'s name (`/proc/self/task/<tid>/comm` without the newline),
/// read into `buf` without allocating.
fn thread_name(tid: libc::pid_t, buf: &mut [u8; 32]) -> Option<&[u8]> {
    use std::io::{Read, Write};
    use std::os::unix::ffi::OsStrExt;
    let mut path = [0u8; 64];
    let len = {
        let mut w = &mut path[..];
        write!(w, "/proc/self/task/{tid}/comm").ok()?;
        64 - w.len()
    };
    // Paths this short are converted to C strings on the stack.
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(&path[..len]));
    let n = std::fs::File::open(path).ok()?.read(buf).ok()?;
    Some(buf[..n].strip_suffix(b"\n").unwrap_or(&buf[..n]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snapshot_thread_runs_at_the_snapshot_nice_value() {
        let nice = std::thread::spawn(|| {
            assert!(lower_snapshot_thread());
            // SAFETY: gettid has no preconditions; getpriority reads this
            // thread's nice value (errno is not needed: 10 is not -1).
            unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
        })
        .join()
        .unwrap();
        assert_eq!(nice, SNAPSHOT_NICE);
        // Only that thread: this one keeps its own value.
        // SAFETY: as above.
        let mine = unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) };
        assert_ne!(mine, SNAPSHOT_NICE);
    }

    #[test]
    fn thread_name_reads_a_threads_comm() {
        let name = std::thread::Builder::new()
            .name("petrel-probe".into())
            .spawn(|| {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() };
                thread_name(tid, &mut [0; 32]).map(<[u8]>::to_vec)
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(name.as_deref(), Some(&b"petrel-probe"[..]));
        assert_eq!(thread_name(0, &mut [0; 32]), None);
    }
}
