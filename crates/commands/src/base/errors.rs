//! Redis's error texts, in one place. Clients parse these strings, so each
//! is spelled exactly as Redis 7.0 spells it; the command families name
//! them instead of repeating literals.

pub const ERR_NOT_INT: &str = "ERR value is not an integer or out of range";
pub const ERR_NOT_FLOAT: &str = "ERR value is not a valid float";
pub const ERR_SYNTAX: &str = "ERR syntax error";
pub const ERR_WRONGTYPE: &str = "WRONGTYPE Operation against a key holding the wrong kind of value";
pub const ERR_DB_INDEX: &str = "ERR DB index is out of range";
/// Redis's reply when a denyoom command meets a full server.
pub const OOM_ERROR: &str = "OOM command not allowed when used memory > 'maxmemory'.";
