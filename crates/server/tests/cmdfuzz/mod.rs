//! The command-level fuzzer: `gen` draws random commands from the command
//! table, `runner` sends them to a server and checks the replies,
//! `compare` runs the same commands against petrel and redis-server 7.0
//! and compares the replies (under a documented normalisation) and the
//! datasets. Used by `tests/fuzz_commands.rs`.

pub mod compare;
pub mod gen;
pub mod runner;
pub mod values;
