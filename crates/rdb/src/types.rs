//! The numbers of the RDB format: value types, opcodes, string and length
//! encodings, and their names for error messages.

/// The RDB version this crate writes (Redis 7.0's `RDB_VERSION`), also the
/// highest version a DUMP payload may carry.
pub const RDB_VERSION: u16 = 10;
/// The highest file version the reader accepts (Redis 7.4's): files of
/// versions 11 and 12 load when every record in them maps onto Petrel.
pub const MAX_READ_VERSION: u16 = 12;

// Value types (the byte before a key).
pub const STRING: u8 = 0;
pub const LIST: u8 = 1;
pub const SET: u8 = 2;
pub const ZSET: u8 = 3;
pub const HASH: u8 = 4;
pub const ZSET_2: u8 = 5;
pub const MODULE_PRE_GA: u8 = 6;
pub const MODULE_2: u8 = 7;
pub const HASH_ZIPMAP: u8 = 9;
pub const LIST_ZIPLIST: u8 = 10;
pub const SET_INTSET: u8 = 11;
pub const ZSET_ZIPLIST: u8 = 12;
pub const HASH_ZIPLIST: u8 = 13;
pub const LIST_QUICKLIST: u8 = 14;
pub const STREAM_LISTPACKS: u8 = 15;
pub const HASH_LISTPACK: u8 = 16;
pub const ZSET_LISTPACK: u8 = 17;
pub const LIST_QUICKLIST_2: u8 = 18;
pub const STREAM_LISTPACKS_2: u8 = 19;
/// Version 11 (Redis 7.2).
pub const SET_LISTPACK: u8 = 20;
/// Version 11 (Redis 7.2).
pub const STREAM_LISTPACKS_3: u8 = 21;
/// Version 12 (Redis 7.4): hashes with field expiry.
pub const HASH_METADATA_PRE_GA: u8 = 22;
pub const HASH_LISTPACK_EX_PRE_GA: u8 = 23;
pub const HASH_METADATA: u8 = 24;
pub const HASH_LISTPACK_EX: u8 = 25;

// Opcodes (bytes that are not value types).
/// Version 12: per-slot key counts (a hint, like RESIZEDB).
pub const OP_SLOT_INFO: u8 = 244;
pub const OP_FUNCTION2: u8 = 245;
pub const OP_FUNCTION_PRE_GA: u8 = 246;
pub const OP_MODULE_AUX: u8 = 247;
pub const OP_IDLE: u8 = 248;
pub const OP_FREQ: u8 = 249;
pub const OP_AUX: u8 = 250;
pub const OP_RESIZEDB: u8 = 251;
pub const OP_EXPIRETIME_MS: u8 = 252;
pub const OP_EXPIRETIME: u8 = 253;
pub const OP_SELECTDB: u8 = 254;
pub const OP_EOF: u8 = 255;

// Length encodings: the top two bits of the first byte.
pub const LEN_6BIT: u8 = 0;
pub const LEN_14BIT: u8 = 1;
/// `0x80` + 4 bytes big-endian, or `0x81` + 8 bytes big-endian.
pub const LEN_32OR64: u8 = 2;
pub const LEN_ENCVAL: u8 = 3;
pub const LEN_32: u8 = 0x80;
pub const LEN_64: u8 = 0x81;

// Special string encodings (`11xxxxxx`, low six bits).
pub const ENC_INT8: u8 = 0;
pub const ENC_INT16: u8 = 1;
pub const ENC_INT32: u8 = 2;
pub const ENC_LZF: u8 = 3;

// Quicklist 2 node containers.
pub const NODE_PLAIN: u64 = 1;
pub const NODE_PACKED: u64 = 2;

/// Redis's name for a value type (`RDB_TYPE_*` without the prefix).
pub fn type_name(t: u8) -> Option<&'static str> {
    Some(match t {
        STRING => "STRING",
        LIST => "LIST",
        SET => "SET",
        ZSET => "ZSET",
        HASH => "HASH",
        ZSET_2 => "ZSET_2",
        MODULE_PRE_GA => "MODULE_PRE_GA",
        MODULE_2 => "MODULE_2",
        HASH_ZIPMAP => "HASH_ZIPMAP",
        LIST_ZIPLIST => "LIST_ZIPLIST",
        SET_INTSET => "SET_INTSET",
        ZSET_ZIPLIST => "ZSET_ZIPLIST",
        HASH_ZIPLIST => "HASH_ZIPLIST",
        LIST_QUICKLIST => "LIST_QUICKLIST",
        STREAM_LISTPACKS => "STREAM_LISTPACKS",
        HASH_LISTPACK => "HASH_LISTPACK",
        ZSET_LISTPACK => "ZSET_LISTPACK",
        LIST_QUICKLIST_2 => "LIST_QUICKLIST_2",
        STREAM_LISTPACKS_2 => "STREAM_LISTPACKS_2",
        SET_LISTPACK => "SET_LISTPACK",
        STREAM_LISTPACKS_3 => "STREAM_LISTPACKS_3",
        HASH_METADATA_PRE_GA => "HASH_METADATA_PRE_GA",
        HASH_LISTPACK_EX_PRE_GA => "HASH_LISTPACK_EX_PRE_GA",
        HASH_METADATA => "HASH_METADATA",
        HASH_LISTPACK_EX => "HASH_LISTPACK_EX",
        _ => return None,
    })
}

/// Redis's name for an opcode (`RDB_OPCODE_*` without the prefix).
pub fn opcode_name(op: u8) -> Option<&'static str> {
    Some(match op {
        OP_SLOT_INFO => "SLOT_INFO",
        OP_FUNCTION2 => "FUNCTION2",
        OP_FUNCTION_PRE_GA => "FUNCTION_PRE_GA",
        OP_MODULE_AUX => "MODULE_AUX",
        OP_IDLE => "IDLE",
        OP_FREQ => "FREQ",
        OP_AUX => "AUX",
        OP_RESIZEDB => "RESIZEDB",
        OP_EXPIRETIME_MS => "EXPIRETIME_MS",
        OP_EXPIRETIME => "EXPIRETIME",
        OP_SELECTDB => "SELECTDB",
        OP_EOF => "EOF",
        _ => return None,
    })
}

/// A module type's name from its 64-bit id: nine characters of six bits
/// each from Redis's module charset, then ten bits of encoding version.
pub fn module_name(id: u64) -> (String, u64) {
    const CHARSET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut name = String::with_capacity(9);
    for j in 0..9 {
        let c = (id >> (10 + (8 - j) * 6)) & 63;
        name.push(CHARSET[c as usize] as char);
    }
    (name, id & 1023)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(type_name(LIST_QUICKLIST_2), Some("LIST_QUICKLIST_2"));
        assert_eq!(type_name(8), None);
        assert_eq!(opcode_name(OP_FUNCTION2), Some("FUNCTION2"));
        // "ReJSON-RL" encver 3, built by hand from the charset.
        const CS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut id = 0u64;
        for c in b"ReJSON-RL" {
            id = id << 6 | CS.iter().position(|x| x == c).unwrap() as u64;
        }
        id = id << 10 | 3;
        assert_eq!(module_name(id), ("ReJSON-RL".to_string(), 3));
    }
}
