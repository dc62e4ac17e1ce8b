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
