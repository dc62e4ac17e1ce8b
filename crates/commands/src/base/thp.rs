//! `disable-thp`: as Redis, a server started while the kernel gives
//! transparent huge pages to every process (`[always]` in
//! /sys/kernel/mm/transparent_hugepage/enabled) turns them off for itself
//! (`prctl(PR_SET_THP_DISABLE)`): with huge pages a fork-less snapshot
//! or a freed value holds memory in 2 MB units, and page faults cost
//! latency spikes. With `madvise` or `never` nothing is done.

use crate::base::log::{log, LogLevel};

const ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// Does the kernel's THP mode text say `[always]`?
fn always(mode: &str) -> bool {
    mode.contains("[always]")
}

/// At startup, with `disable-thp yes`: turns huge pages off for this
/// process when the kernel gives them to everyone. Logs Redis's warning
/// when that fails.
pub fn disable_if_always() {
    let Ok(mode) = std::fs::read_to_string(ENABLED) else {
        return;
    };
    if !always(&mode) {
        return;
    }
    // SAFETY: prctl(2) with PR_SET_THP_DISABLE changes only this
    // process's flag.
    let r = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    if r != 0 {
        log(
            LogLevel::Warning,
            "WARNING you have Transparent Huge Pages (THP) support enabled in your kernel. This will create latency and memory usage issues with Redis. To fix this issue run the command 'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled' as root, and add it to your /etc/rc.local in order to retain the setting after a reboot. Redis must be restarted after THP is disabled (set to 'madvise' or 'never').",
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_always_counts() {
        assert!(super::always("[always] madvise never\n"));
        assert!(!super::always("always [madvise] never\n"));
        assert!(!super::always("always madvise [never]\n"));
    }
}
