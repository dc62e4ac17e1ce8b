//! Kernel layer: the command contract and the state every layer above
//! shares.
//!
//! * The contract: [`spec`] (what a command is), [`table`] (all of them),
//!   [`ctx`] (what a handler gets), [`server`] (the shared state). These
//!   four name each other — a handler's type names `Ctx`, `Ctx` names
//!   `Server`, `Server` owns the table, the table holds specs — and form
//!   the one import cycle the crate keeps.
//! * State types and registries that services own: clients, the cross-thread
//!   hub, configuration, statistics, Pub/Sub subscriptions, WATCHes and
//!   transactions, blocked-client waiters, eviction and lazy-free state, the
//!   memory probe. None of them names `Server`: a registry is handed the
//!   other registries it needs.
//!
//! The kernel may use `base`, `store`, `collections` and `resp`, never
//! `services`, `runtime`, `families` or `registry`.

pub mod acl;
pub mod aof;
pub mod blocking;
pub mod client;
pub mod cluster;
pub mod config;
pub mod ctx;
pub mod defrag;
pub mod eviction;
pub mod hub;
pub mod journal;
pub mod keyspecs;
pub mod lazyfree;
pub mod loop_busy;
pub mod memprobe;
pub mod message;
pub mod metrics;
pub mod notify;
pub mod persistence;
pub mod pubsub;
pub mod pubsub_map;
#[rustfmt::skip]
pub mod redis_meta;
pub mod coll;
pub mod replication;
pub mod scripting;
pub mod server;
pub mod slowlog;
pub mod spec;
pub mod stats;
pub mod table;
pub mod tracking;
pub mod watches;
