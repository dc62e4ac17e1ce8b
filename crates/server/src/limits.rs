//! The open-file limit at startup, as Redis 7.0 handles it: the server
//! needs `maxclients` descriptors plus [`RESERVED_FDS`] for its own files
//! and sockets. When the soft `RLIMIT_NOFILE` is lower it tries to raise
//! the limit to that figure, then to lower figures in steps of 16 (the
//! hard limit or `fs.nr_open` may refuse); if the best it gets is still
//! short, `maxclients` is reduced to fit, with Redis's warnings, and a
//! limit that leaves no room for a single client ends startup.
//!
//! Invariant: after [`adjust_open_files_limit`], `maxclients +
//! RESERVED_FDS` is at most the process's soft open-file limit (when the
//! limit could be read).

/// Descriptors kept for the server itself (listeners, log, RDB files...).
pub const RESERVED_FDS: u64 = 32;

/// The soft limit (`rlim_t` is `u64` on the Linux targets Petrel builds for).
fn get_limit() -> std::io::Result<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes only the struct it is given, which lives
    // on this stack frame for the whole call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(r.rlim_cur)
}

fn set_limit(n: u64) -> std::io::Result<()> {
    let r = libc::rlimit {
        rlim_cur: n as libc::rlim_t,
        rlim_max: n as libc::rlim_t,
    };
    // SAFETY: setrlimit only reads the struct, valid for the call.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &r) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Fits `maxclients` to the open-file limit (module docs). Returns the
/// `maxclients` to use, or the fatal message when no client would fit.
pub fn adjust_open_files_limit(maxclients: u64) -> Result<u64, String> {
    let needed = maxclients + RESERVED_FDS;
    let old = match get_limit() {
        Ok(cur) => cur,
        Err(e) => {
            crate::warning!(
                "Unable to obtain the current NOFILE limit ({e}), assuming 1024 and setting the max clients configuration accordingly."
            );
            return Ok(1024 - RESERVED_FDS);
        }
    };
    if old >= needed {
        return Ok(maxclients);
    }
    let mut best = needed;
    let mut error = None;
    while best > old {
        match set_limit(best) {
            Ok(()) => {
                error = None;
                break;
            }
            Err(e) => error = Some(e),
        }
        if best < 16 {
            break;
        }
        best -= 16;
    }
    let best = best.max(old);
    if best >= needed {
        crate::notice!(
            "Increased maximum number of open files to {needed} (it was originally set to {old})."
        );
        return Ok(maxclients);
    }
    if best <= RESERVED_FDS {
        return Err(format!(
            "Your current 'ulimit -n' of {old} is not enough for the server to start. Please increase your open file limit to at least {}. Exiting.",
            RESERVED_FDS + 1
        ));
    }
    let reduced = best - RESERVED_FDS;
    crate::warning!(
        "You requested maxclients of {maxclients} requiring at least {needed} max file descriptors."
    );
    if let Some(e) = error {
        crate::warning!(
            "Server can't set maximum open files to {needed} because of OS error: {}.",
            os_error_text(&e)
        );
    }
    crate::warning!(
        "Current maximum open files is {best}. maxclients has been reduced to {reduced} to compensate for low ulimit. If you need higher maxclients increase 'ulimit -n'."
    );
    Ok(reduced)
}

/// strerror's text of an OS error (std adds " (os error N)").
fn os_error_text(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
