//! Services layer: operations that several command families and the
//! runtime share, written once.
//!
//! * [`blocking`]: serving blocked clients when their keys get data, through
//!   the [`crate::kernel::blocking::BlockedOp`] trait each family implements
//!   for its own blocking commands (the service never names a data type).
//! * [`eviction`]: `maxmemory` enforcement and its cron sweep.
//! * [`expiry`]: keyspace events and statistics of keys that expired.
//! * [`monitor`]: the MONITOR feed.
//! * [`transactions`]: queueing under MULTI, leaving a transaction.
//! * [`connection`]: what resetting or closing a connection undoes.
//! * [`memory`], [`keysizes`]: the memory reports INFO and MEMORY share.
//! * [`scan`]: the SCAN-family argument parsing (cursor, MATCH, COUNT, TYPE).
//! * [`digest`]: Redis's dataset and value digests (DEBUG DIGEST).
//! * [`acl`]: the permission check (commands, keys, channels), ACL LOG,
//!   authentication, and what user changes do to connected clients.
//! * [`client_info`]: the CLIENT LIST line of a client.
//! * [`replication`]: the master side of replication (SYNC/PSYNC, the
//!   backlog, the replica links, WAIT).
//! * [`snapshot`]: RDB saves (forkless BGSAVE, SAVE), loading, save
//!   points, and the MISCONF rule.
//! * [`migrate`]: MIGRATE's cached connections to target instances and
//!   its request/reply exchange over them.
//!
//! Services may use `kernel` and `base`, never `runtime`, `families` or
//! `registry`.

pub mod acl;
pub mod aof;
pub mod blocking;
pub mod client_eviction;
pub mod client_info;
pub mod cluster;
pub mod connection;
pub mod defrag;
pub mod digest;
pub mod eviction;
pub mod expiry;
pub mod journal;
pub mod keysizes;
pub mod memory;
pub mod migrate;
pub mod monitor;
pub mod replication;
pub mod scan;
pub mod snapshot;
pub mod tracking;
pub mod transactions;
