//! SORT and SORT_RO commands (being written; the family is registered so the table
//! stays in one place).

use crate::spec::CommandSpec;

pub const COMMANDS: &[CommandSpec] = &[];
