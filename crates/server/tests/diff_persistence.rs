//! Differential tests: the persistence commands against redis-server 7.0,
//! in RESP2 and RESP3: DUMP payloads of values that are not compressed
//! (byte for byte: same RDB encoding, version and CRC64), RESTORE and its
//! errors, BGSAVE, LASTSAVE, DEBUG RELOAD and DEBUG
//! SET-SKIP-CHECKSUM-VALIDATION. Saves, restarts and files are in
//! `persistence.rs` and `rdb_interop.rs`.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

fn opts() -> DiffOpts {
    DiffOpts::new(&[("enable-debug-command", "yes")])
}

#[test]
fn dump_and_restore() {
    diff_text_with(
        "dump_restore",
        r#"
SET k v
DUMP k
DUMP nokey
DUMP
DUMP k extra
RPUSH l a b 1
DUMP l
SADD s 1 2 3
DUMP s
HSET h f v
DUMP h
ZADD z 1 a 2 b
DUMP z
RESTORE k2 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
GET k2
TYPE k2
RESTORE k2 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
RESTORE k2 0 "\x00\x01w\n\x00\x91\x08\xce\xb2\x198\x8a\xce" REPLACE
RESTORE k2 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" REPLACE
GET k2
RESTORE k3 -1 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
RESTORE k3 abc "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
RESTORE k3 0 garbage
RESTORE k3 0 ""
RESTORE k3 0 "\x00\x01v\xff\x00\x91\x08\xce\xb2\x198\x8a\xce"
RESTORE k3 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" NOSUCH
RESTORE k3 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" IDLETIME -1
RESTORE k3 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" IDLETIME 10 FREQ 5
RESTORE k3 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" FREQ 300
RESTORE k3 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" IDLETIME 10
OBJECT IDLETIME k3                 # type
RESTORE k4 100000 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce"
PTTL k4                            # type
TTL k4
RESTORE k5 1 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" ABSTTL
EXISTS k5
RESTORE k6 0 "\x00\x01v\n\x00\x91\x08\xce\xb2\x198\x8a\xce" ABSTTL REPLACE
GET k6
RESTORE
RESTORE k6 0
"#,
        &opts(),
    );
}

#[test]
fn skip_checksum_validation() {
    diff_text_with(
        "skip_checksum",
        r#"
RESTORE k 0 "\x00\x01v\n\x00\x00\x00\x00\x00\x00\x00\x00\x01"
DEBUG SET-SKIP-CHECKSUM-VALIDATION 1
DEBUG SET-SKIP-CHECKSUM-VALIDATION
DEBUG SET-SKIP-CHECKSUM-VALIDATION 0
"#,
        &opts(),
    );
}

/// BGSAVE, LASTSAVE and DEBUG RELOAD in each server's own directory; the
/// pauses let a save end (redis-server forks) before the next one. (DEBUG
/// RELOAD NOFLUSH without MERGE is left out: redis-server 7.0 exits on the
/// duplicate keys it loads.)
#[test]
fn bgsave_lastsave_and_reload() {
    diff_text_with(
        "bgsave_lastsave",
        r#"
SET k v
RPUSH l a b c
LASTSAVE                           # type
BGSAVE x
BGSAVE SCHEDULE extra
BGSAVE
@sleep 1000
LASTSAVE                           # type
BGSAVE SCHEDULE
@sleep 1000
LASTSAVE x
DEBUG RELOAD
GET k
LRANGE l 0 -1
DEBUG RELOAD NOSAVE
GET k
DEBUG RELOAD NOFLUSH MERGE
DBSIZE
DEBUG RELOAD MERGE
DBSIZE
DEBUG RELOAD NOSUCH
"#,
        &opts(),
    );
}
