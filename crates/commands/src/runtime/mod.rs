//! Runtime layer: [`dispatch`] runs every command (lookup, arity,
//! authentication, the `maxmemory` gate, MULTI queueing, pause, the call,
//! statistics, SLOWLOG/LATENCY/MONITOR and keyspace-change tracking),
//! [`script_call`] runs the commands scripts call, and [`cron`] runs the
//! periodic work.
//!
//! The runtime knows commands only through the table and their specs'
//! flags; it never names a family and never compares command names.
//! It may use `services`, `kernel` and `base`.

pub mod cron;
pub mod dispatch;
pub mod script_call;
