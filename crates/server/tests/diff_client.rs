//! Differential tests: CLIENT subcommands against redis-server 7.0 that
//! the other files do not cover (CLIENT LIST/INFO/KILL/PAUSE/TRACKING are
//! in `diff_connection.rs`, `admin_cmds.rs`, `diff_pause.rs` and
//! `diff_tracking.rs`).
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

/// CLIENT HELP has Redis 7.0's lines with petrel's additions between them
/// (the KILL filters ID and MAXAGE, SETINFO and NO-TOUCH, which petrel
/// has from later Redis versions).
#[test]
fn client_help_and_errors() {
    let s = Script::new("client_help")
        .check(&["CLIENT", "HELP"], help_with_additions)
        .check(&["client", "help"], help_with_additions)
        .text(
            r#"
CLIENT HELP extra
CLIENT
CLIENT NOSUCH
CLIENT help me please
"#,
        );
    diff(&s);
}

/// A fresh server numbers its first connection as redis-server 7.0 does
/// (3: ids 1 and 2 are its internal Lua clients'), so ids named in
/// CLIENT KILL ID or CLIENT TRACKING REDIRECT mean the same connection
/// (found by the differential fuzzer).
#[test]
fn first_client_ids_match_redis() {
    let ids = |kind| {
        let s = Server::start_opts(kind, Opts::default());
        let mut out = Vec::new();
        for _ in 0..3 {
            let mut c = RawConn::tcp(s.port());
            out.push(c.cmd(&["CLIENT", "ID"]));
        }
        out
    };
    let petrel = ids(Kind::Petrel);
    // The start-up check's own connection took the first id.
    assert_eq!(
        petrel,
        vec![
            resp::Value::Int(4),
            resp::Value::Int(5),
            resp::Value::Int(6)
        ]
    );
    if redis_available() {
        assert_eq!(petrel, ids(Kind::Redis));
    }
}
