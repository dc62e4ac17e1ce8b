//! Differential tests: MIGRATE's argument checks and the replies that do
//! not need a live target (NOKEY, IOERR when nothing listens or the host
//! does not resolve), its key
//! positions, and RESTORE-ASKING (RESTORE with the asking flag; outside
//! cluster mode the same as RESTORE), against redis-server 7.0 in RESP2
//! and RESP3. Transfers between live servers are in `migrate.rs` and
//! `cluster_reshard.rs`. Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

#[test]
fn migrate_errors_and_nokey() {
    // A port nothing listens on: both servers fail to connect at once.
    // Port 1 (tcpmux, privileged): an ephemeral port picked as free could
    // be taken meanwhile by a server of a test running in parallel (it
    // was, once, in CI: a server that had a key `k` answered BUSYKEY).
    let closed = 1;
    diff_text(
        "migrate_errors",
        &format!(
            r#"
SET k v
SET e v PX 1
MIGRATE 127.0.0.1 {closed} k 0 1000
MIGRATE no.such.host.invalid 1 k 0 1000
MIGRATE 127.0.0.1 {closed} k 0 -5
MIGRATE 127.0.0.1 {closed} k 0 0 COPY REPLACE
MIGRATE localhost {closed} k 0 1000
MIGRATE 127.0.0.1 {closed} nosuch 0 1000
MIGRATE 127.0.0.1 {closed} "" 0 1000 KEYS nosuch other
MIGRATE 127.0.0.1 {closed} "" 0 1000 KEYS
MIGRATE 127.0.0.1 {closed} k 0 1000 KEYS k
MIGRATE 127.0.0.1 {closed} k 0 1000 NOPE
MIGRATE 127.0.0.1 {closed} k 0 1000 AUTH
MIGRATE 127.0.0.1 {closed} k 0 1000 AUTH2 user
MIGRATE 127.0.0.1 {closed} k 0 1000 AUTH pw AUTH2 user pw COPY
MIGRATE 127.0.0.1 {closed} k x 1000
MIGRATE 127.0.0.1 {closed} k 0 x
MIGRATE 127.0.0.1 {closed} k x x
MIGRATE 127.0.0.1 x k 0 1000
MIGRATE 127.0.0.1 {closed} k 0
@sleep 20
MIGRATE 127.0.0.1 {closed} e 0 1000
GET k
COMMAND GETKEYS MIGRATE h 1 k 0 5
COMMAND GETKEYS MIGRATE h 1 k 0 5 COPY KEYS a b
COMMAND GETKEYS MIGRATE h 1 "" 0 5 REPLACE KEYS a b
COMMAND GETKEYS MIGRATE h 1 "" 0 5 AUTH pw KEYS a b
COMMAND GETKEYS MIGRATE h 1 "" 0 5 AUTH keys KEYS a b
COMMAND GETKEYS MIGRATE h 1 "" 0 5 AUTH2 keys x KEYS a b
COMMAND GETKEYSANDFLAGS MIGRATE h 1 "" 0 5 KEYS a b
COMMAND GETKEYSANDFLAGS MIGRATE h 1 k 0 5
"#
        ),
    );
}

#[test]
fn restore_asking() {
    diff_text(
        "restore_asking",
        r#"
RESTORE-ASKING k2 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
GET k2
RESTORE-ASKING k2 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
RESTORE-ASKING k2 0 "\x00\x01w\n\x00\x91\x08\xce\xb2\x198\x8a\xce" REPLACE
RESTORE-ASKING k2 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" REPLACE
GET k2
RESTORE-ASKING k3 -1 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
RESTORE-ASKING k3 0 garbage
RESTORE-ASKING k3 100000 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" REPLACE ABSTTL
RESTORE-ASKING k4 100000 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
PTTL k4                                         # type
RESTORE-ASKING k4
COMMAND GETKEYS RESTORE-ASKING k 0 x
"#,
    );
}
