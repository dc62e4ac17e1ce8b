//! Settings of Redis 7.0 features Petrel does not have yet (parts of
//! replication, cluster links, syslog, OOM scores...). Each
//! row reads as Redis's default and accepts only that default, so a stock
//! `redis.conf` loads unchanged and accepting it changes nothing; any other
//! value is refused naming the setting and the missing feature (see
//! `absent!` in `config`), after the checks Redis itself makes (a range, a
//! word list), so a value Redis would refuse gets Redis's error. When a feature lands, its rows move to its own group
//! and become real settings.

use super::super::values::Same;
use super::super::Param;

pub static ABSENT: &[Param] = &[
    absent!(
        "activerehashing",
        [],
        true,
        "yes",
        Same::Bool,
        "incremental rehashing (its tables never rehash)"
    ),
    absent!("dynamic-hz", [], true, "yes", Same::Bool, "a dynamic hz"),
    absent!(
        "always-show-logo",
        [],
        false,
        "no",
        Same::Bool,
        "the ASCII-art logo"
    ),
    absent!(
        "set-proc-title",
        [],
        false,
        "yes",
        Same::Bool,
        "process titles"
    ),
    absent!(
        "proc-title-template",
        [],
        true,
        "{title} {listen-addr} {server-mode}",
        Same::Words,
        "process titles"
    ),
    absent!(
        "crash-log-enabled",
        [],
        true,
        "yes",
        Same::Bool,
        "the crash report"
    ),
    absent!(
        "crash-memcheck-enabled",
        [],
        true,
        "yes",
        Same::Bool,
        "the crash report"
    ),
    absent!(
        "syslog-enabled",
        [],
        false,
        "no",
        Same::Bool,
        "logging to syslog"
    ),
    absent!(
        "syslog-ident",
        [],
        false,
        "redis",
        Same::Words,
        "logging to syslog"
    ),
    absent!(
        "syslog-facility",
        [],
        false,
        "local0",
        Same::Word,
        "logging to syslog"
    ),
    absent!(
        "server_cpulist",
        [],
        false,
        "",
        Same::Words,
        "CPU affinity lists"
    ),
    absent!(
        "bio_cpulist",
        [],
        false,
        "",
        Same::Words,
        "CPU affinity lists"
    ),
    absent!(
        "aof_rewrite_cpulist",
        [],
        false,
        "",
        Same::Words,
        "CPU affinity lists"
    ),
    absent!(
        "bgsave_cpulist",
        [],
        false,
        "",
        Same::Words,
        "CPU affinity lists"
    ),
    absent!("socket-mark-id", [], false, "0", Same::Int, "socket marks"),
    absent!(
        "ignore-warnings",
        [],
        true,
        "",
        Same::Words,
        "ignore-warnings (it has no startup warnings to silence)"
    ),
    absent!(
        "io-threads",
        [],
        false,
        "1",
        Same::Int,
        "I/O threads (its worker threads are set with 'threads')"
    ),
    absent!(
        "io-threads-do-reads",
        [],
        false,
        "no",
        Same::Bool,
        "I/O threads (its worker threads are set with 'threads')"
    ),
    absent!(
        "enable-module-command",
        [],
        false,
        "no",
        Same::Word,
        "modules"
    ),
    absent!(
        "bind-source-addr",
        [],
        true,
        "",
        Same::Words,
        "replication and cluster links"
    ),
    absent!(
        "tls-dh-params-file",
        [],
        true,
        "",
        Same::Words,
        "DHE cipher suites (rustls has none)"
    ),
];
