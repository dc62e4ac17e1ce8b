//! The logger is `commands::base::log` (every layer logs through it); these
//! macros format and log from the server crate.

pub use commands::base::log::{enabled, init, log, set_level};

#[macro_export]
macro_rules! notice { ($($t:tt)*) => { $crate::log::log(commands::base::log::LogLevel::Notice, &format!($($t)*)) } }
#[macro_export]
macro_rules! warning { ($($t:tt)*) => { $crate::log::log(commands::base::log::LogLevel::Warning, &format!($($t)*)) } }
#[macro_export]
macro_rules! verbose { ($($t:tt)*) => { $crate::log::log(commands::base::log::LogLevel::Verbose, &format!($($t)*)) } }
