//! Differential tests: the PUBSUB introspection subcommands and PUBLISH /
//! SPUBLISH against redis-server 7.0, in RESP2 and RESP3 (subscriber
//! counts of other connections are in `pubsub.rs`).
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn pubsub_introspection_and_errors() {
    diff_text(
        "pubsub_introspection",
        r#"
PUBSUB HELP
pubsub help
PUBSUB HELP extra
PUBSUB CHANNELS
PUBSUB CHANNELS *
PUBSUB CHANNELS a b
PUBSUB NUMPAT
PUBSUB NUMPAT x
PUBSUB NUMSUB
PUBSUB NUMSUB a b a
PUBSUB SHARDCHANNELS
PUBSUB SHARDCHANNELS a*
PUBSUB SHARDCHANNELS a b
PUBSUB SHARDNUMSUB
PUBSUB SHARDNUMSUB a b
PUBSUB NOSUCH
PUBSUB
PUBLISH ch msg
PUBLISH ch
SPUBLISH ch msg
SPUBLISH ch
SPUBLISH ch a b
"#,
    );
}
