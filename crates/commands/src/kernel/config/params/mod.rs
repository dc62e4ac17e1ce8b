//! The parameter groups of the kernel's settings. Each group is a slice of
//! [`Param`](super::Param) rows; `crate::registry::CONFIG_GROUPS` lists
//! every group (these and any a family brings) in the order CONFIG GET and
//! CONFIG REWRITE walk them. [`KERNEL`] lists these for
//! `Settings::default` (a registry test checks it names each of them).

pub mod absent;
pub mod acl;
pub mod aof;
pub mod client_limits;
pub mod clients;
pub mod cluster;
pub mod diagnostics;
pub mod encodings;
pub mod keyspace;
pub mod memory;
pub mod network;
pub mod persistence;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod tls;

/// The kernel's groups, in registry order.
pub const KERNEL: &[&[super::Param]] = &[
    network::NETWORK,
    tls::TLS,
    acl::ACL,
    server::SERVER,
    persistence::PERSISTENCE,
    aof::AOF,
    replication::REPLICATION,
    client_limits::CLIENT_LIMITS,
    clients::CLIENTS,
    diagnostics::DIAGNOSTICS,
    keyspace::KEYSPACE,
    memory::MEMORY,
    encodings::ENCODINGS,
    scripting::SCRIPTING,
    cluster::CLUSTER,
    absent::ABSENT,
];
