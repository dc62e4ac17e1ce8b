//! Short crash test (the long one is `cargo run --release --example
//! aof_crash`): SIGKILL under a full-speed write load, restart on the same
//! directory, every acknowledged write present (`always`), nothing older
//! than two seconds missing (`everysec`), every restart loads.

mod common;
#[path = "common/crash.rs"]
mod crash;

use common::*;

fn rounds(fsync: &str, n: usize) {
    let dir = TempDir::new("aofcrash");
    let cfg = crash::Config {
        bin: PETREL_BIN.into(),
        dir: dir.path().to_path_buf(),
        port: free_port(),
        fsync: fsync.into(),
        clients: 8,
        pipeline: 4,
        run: Duration::from_millis(400),
        threads: 2,
        rewrite_after: None,
    };
    for r in 0..n {
        // Every other round rewrites the AOF while the clients write.
        let cfg = crash::Config {
            rewrite_after: (r % 2 == 1).then(|| Duration::from_millis(150 + 100 * r as u64 % 200)),
            ..cfg.clone()
        };
        let o = crash::round(&cfg, r).unwrap_or_else(|e| panic!("{fsync} round {r}: {e}"));
        assert!(o.acked > 0, "{fsync} round {r}: nothing acknowledged");
        if fsync == "always" {
            assert_eq!(o.lost_acked, 0, "{fsync} round {r}: {o:?}");
        } else {
            assert_eq!(o.lost_old, 0, "{fsync} round {r}: {o:?}");
        }
    }
}

#[test]
fn kill_9_always_keeps_every_acknowledged_write() {
    rounds("always", 3);
}

#[test]
fn kill_9_everysec_loses_nothing_older_than_two_seconds() {
    rounds("everysec", 2);
}
