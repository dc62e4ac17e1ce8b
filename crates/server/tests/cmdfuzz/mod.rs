//! The command-level fuzzer: `gen` draws random commands from the command
//! table, `runner` sends them to a server and checks the replies,
//! `compare` runs the same commands against redis-server and lists where
//! the two disagree on error vs non-error. Used by `tests/fuzz_commands.rs`.

pub mod compare;
pub mod gen;
pub mod runner;
pub mod values;
