//! The server-administration family: CONFIG, TIME, SHUTDOWN, MONITOR
//! ([`admin`]), CLIENT ([`client`]), COMMAND ([`command`]), INFO
//! ([`info`]), SLOWLOG ([`slowlog`]), LATENCY ([`latency`]), DEBUG
//! ([`debug`]), MEMORY ([`memory`], [`topkeys`]) and LOLWUT ([`lolwut`]).

pub mod admin;
pub mod client;
pub mod command;
pub mod debug;
pub mod info;
pub mod latency;
pub mod lolwut;
pub mod memory;
pub mod slowlog;
pub mod topkeys;
