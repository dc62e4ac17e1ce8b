//! Base layer: helpers with no knowledge of commands or servers. Nothing
//! here names another layer of this crate; it uses std and external crates
//! only.

pub mod clock;
pub mod errors;
pub mod fault_hooks;
pub mod glob;
pub mod log;
pub mod oom_score;
pub mod parse;
pub mod sched;
pub mod stopwatch;
pub mod supervisor;
pub mod text;
pub mod thp;
