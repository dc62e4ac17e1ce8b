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
/// Writes (and PING) after a failed background save, with
/// `stop-writes-on-bgsave-error` and save points.
pub const MISCONF_RDB: &str = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";
/// Writes while fewer than `min-replicas-to-write` replicas are good.
pub const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";
/// Writes from clients of a read-only replica.
pub const READONLY_REPLICA: &str = "READONLY You can't write against a read only replica.";
pub const MASTERDOWN: &str =
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.";
/// A script with `allow-stale` calling a command without the `stale` flag.
pub const ERR_SCRIPT_STALE: &str = "ERR Can not execute the command on a stale replica";
/// Commands without the `loading` flag while the dataset is loading.
pub const LOADING: &str = "LOADING Redis is loading the dataset in memory";
pub const ERR_AUTH_WITHOUT_PASSWORD: &str = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?";
pub const ERR_BITFIELD_RO_ONLY_SUPPORTS_GET_SUBCOMMAND: &str =
    "ERR BITFIELD_RO only supports the GET subcommand";
pub const ERR_BITOP_NOT_MUST_CALLED_SINGLE_SOURCE_KEY: &str =
    "ERR BITOP NOT must be called with a single source key.";
pub const ERR_BIT_ARGUMENT_MUST_1_0: &str = "ERR The bit argument must be 1 or 0.";
pub const ERR_BIT_NOT_INTEGER_OUT_OF_RANGE: &str = "ERR bit is not an integer or out of range";
pub const ERR_BIT_OFFSET_NOT_INTEGER_OUT_OF_RANGE: &str =
    "ERR bit offset is not an integer or out of range";
pub const ERR_CLIENT_ID_SHOULD_GREATER_THAN_0: &str = "ERR client-id should be greater than 0";
pub const ERR_CLIENT_NAME_CHARS: &str =
    "ERR Client names cannot contain spaces, newlines or special characters.";
pub const ERR_CLIENT_PAUSE_MODE_MUST_WRITE_ALL: &str = "ERR CLIENT PAUSE mode must be WRITE or ALL";
pub const ERR_CLIENT_UNBLOCK_REASON_SHOULD_TIMEOUT_ERROR: &str =
    "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR";
pub const ERR_COMMAND_HAS_NO_KEY_ARGUMENTS: &str = "ERR The command has no key arguments";
pub const ERR_COMMAND_NOT_ALLOWED_INSIDE_TRANSACTION: &str =
    "ERR Command not allowed inside a transaction";
pub const ERR_COUNT_CANNOT_NEGATIVE: &str = "ERR COUNT can't be negative";
pub const ERR_COUNT_SHOULD_GREATER_THAN_0: &str = "ERR count should be greater than 0";
pub const ERR_COUNT_SHOULD_GREATER_THAN_EQUAL_1: &str =
    "ERR count should be greater than or equal to -1";
pub const ERR_DEBUG_NOT_ALLOWED: &str = "ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.";
pub const ERR_DECREMENT_WOULD_OVERFLOW: &str = "ERR decrement would overflow";
pub const ERR_DISCARD_WITHOUT_MULTI: &str = "ERR DISCARD without MULTI";
pub const ERR_ERROR_PURGING_DIRTY_PAGES: &str = "ERR Error purging dirty pages";
pub const ERR_EXEC_WITHOUT_MULTI: &str = "ERR EXEC without MULTI";
pub const ERR_GT_AND_LT: &str = "ERR GT and LT options at the same time are not compatible";
pub const ERR_GT_LT_NX: &str = "ERR GT, LT, and/or NX options at the same time are not compatible";
pub const ERR_HASH_VALUE_NOT_FLOAT: &str = "ERR hash value is not a float";
pub const ERR_HASH_VALUE_NOT_INTEGER: &str = "ERR hash value is not an integer";
pub const ERR_HLL_ENCODING_NOT_SPARSE: &str = "ERR HLL encoding is not sparse";
pub const ERR_INCREMENT_DECREMENT_WOULD_OVERFLOW: &str =
    "ERR increment or decrement would overflow";
pub const ERR_INCREMENT_WOULD_PRODUCE_NAN_INFINITY: &str =
    "ERR increment would produce NaN or Infinity";
pub const ERR_INCR_OPTION_SUPPORTS_SINGLE_INCREMENT_ELEMENT_PAIR: &str =
    "ERR INCR option supports a single increment-element pair";
pub const ERR_INDEX_OUT_OF_RANGE: &str = "ERR index out of range";
pub const ERR_INVALID_ARGUMENTS_SPECIFIED_COMMAND: &str =
    "ERR Invalid arguments specified for command";
pub const ERR_INVALID_BITFIELD_TYPE: &str = "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
pub const ERR_INVALID_CLIENT_ID: &str = "ERR Invalid client ID";
pub const ERR_INVALID_COMMAND_SPECIFIED: &str = "ERR Invalid command specified";
pub const ERR_INVALID_CURSOR: &str = "ERR invalid cursor";
pub const ERR_INVALID_FIRST_DB_INDEX: &str = "ERR invalid first DB index";
pub const ERR_INVALID_NUMBER_OF_ARGUMENTS_SPECIFIED_COMMAND: &str =
    "ERR Invalid number of arguments specified for command";
pub const ERR_INVALID_OVERFLOW_TYPE_SPECIFIED: &str = "ERR Invalid OVERFLOW type specified";
pub const ERR_INVALID_SECOND_DB_INDEX: &str = "ERR invalid second DB index";
pub const ERR_KEYS_MUST_BE_STRINGS: &str = "ERR The specified keys must contain string values";
pub const ERR_KEY_DOES_NOT_EXIST: &str = "ERR The specified key does not exist";
pub const ERR_LCS_LEN_AND_IDX: &str =
    "ERR If you want both the length and indexes, please just use IDX.";
pub const ERR_LCS_MEMORY: &str =
    "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len";
pub const ERR_LFU_NO_IDLETIME: &str = "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const ERR_LIMIT_CANNOT_NEGATIVE: &str = "ERR LIMIT can't be negative";
pub const ERR_MAXLEN_CANNOT_NEGATIVE: &str = "ERR MAXLEN can't be negative";
pub const ERR_MIN_MAX_NOT_FLOAT: &str = "ERR min or max is not a float";
pub const ERR_MIN_MAX_NOT_VALID_STRING_RANGE_ITEM: &str =
    "ERR min or max not valid string range item";
pub const ERR_MULTI_CALLS_CAN_NOT_NESTED: &str = "ERR MULTI calls can not be nested";
pub const ERR_NOT_LFU_NO_FREQ: &str = "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.";
pub const ERR_NOT_QUICKLIST: &str = "ERR Not a quicklist encoded object.";
pub const ERR_NO_RUNTIME: &str = "ERR no command runtime in this server";
pub const ERR_NO_SHUTDOWN_PROGRESS: &str = "ERR No shutdown in progress.";
pub const ERR_NO_SUCH_CLIENT: &str = "ERR No such client";
pub const ERR_NO_SUCH_KEY: &str = "ERR no such key";
pub const ERR_NUMKEYS_SHOULD_GREATER_THAN_0: &str = "ERR numkeys should be greater than 0";
pub const ERR_NX_AND_XX_GT_LT: &str =
    "ERR NX and XX, GT or LT options at the same time are not compatible";
pub const ERR_OFFSET_OUT_OF_RANGE: &str = "ERR offset is out of range";
pub const ERR_ONE_MORE_SCORES_CANNOT_CONVERTED_INTO_DOUBLE: &str =
    "ERR One or more scores can't be converted into double";
pub const ERR_OUT_OF_RANGE_I32: &str =
    "ERR value is out of range, value must between -2147483648 and 2147483647";
pub const ERR_OUT_OF_RANGE_I64: &str =
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807";
pub const ERR_PACKED_THRESHOLD_ARGUMENT: &str =
    "ERR argument must be a memory value bigger than 1 and smaller than 4gb";
pub const ERR_PROTOCOL_VERSION_NOT_INTEGER_OUT_OF_RANGE: &str =
    "ERR Protocol version is not an integer or out of range";
pub const ERR_RANK_ZERO: &str = "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";
pub const ERR_RESULTING_SCORE_NOT_NUMBER_NAN: &str = "ERR resulting score is not a number (NaN)";
pub const ERR_SERVER_RUNNING_WITHOUT_CONFIG_FILE: &str =
    "ERR The server is running without a config file";
pub const ERR_SHUTDOWN_FAILED: &str = "ERR Errors trying to SHUTDOWN. Check logs.";
pub const ERR_SOURCE_DESTINATION_OBJECTS_SAME: &str =
    "ERR source and destination objects are the same";
pub const ERR_STRING_TOO_LONG: &str =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
pub const ERR_SYNTAX_LIMIT_NEEDS_BYSCORE_OR_BYLEX: &str =
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX";
pub const ERR_SYNTAX_WITHSCORES_WITH_BYLEX: &str =
    "ERR syntax error, WITHSCORES not supported in combination with BYLEX";
pub const ERR_TIMEOUT_NEGATIVE: &str = "ERR timeout is negative";
pub const ERR_TIMEOUT_NOT_FLOAT_OUT_OF_RANGE: &str = "ERR timeout is not a float or out of range";
pub const ERR_TIMEOUT_NOT_INTEGER_OUT_OF_RANGE: &str =
    "ERR timeout is not an integer or out of range";
pub const ERR_VALUE_NAN_INFINITY: &str = "ERR value is NaN or Infinity";
pub const ERR_VALUE_OUT_OF_RANGE: &str = "ERR value is out of range";
pub const ERR_VALUE_OUT_OF_RANGE_MUST_POSITIVE: &str =
    "ERR value is out of range, must be positive";
pub const ERR_WATCH_INSIDE_MULTI_NOT_ALLOWED: &str = "ERR WATCH inside MULTI is not allowed";
pub const ERR_WEIGHT_VALUE_NOT_FLOAT: &str = "ERR weight value is not a float";
pub const ERR_XX_AND_NX: &str = "ERR XX and NX options at the same time are not compatible";
pub const ERR_RESP2_NOT_SUPPORTED: &str = "ERR RESP2 is not supported by this command";
pub const ERR_DEBUG_PROTOCOL_TYPE: &str = "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false";
pub const EXECABORT: &str = "EXECABORT Transaction discarded because of previous errors.";
pub const NOAUTH: &str = "NOAUTH Authentication required.";
pub const NOAUTH_HELLO: &str = "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time";
pub const NOPROTO: &str = "NOPROTO unsupported protocol version";
pub const UNBLOCKED_BY_CLIENT_UNBLOCK: &str = "UNBLOCKED client unblocked via CLIENT UNBLOCK";
pub const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";
pub const WRONGTYPE_HLL: &str = "WRONGTYPE Key is not a valid HyperLogLog string value.";

// Texts with a part that varies. Arguments are shown as the caller passes
// them; user input is shortened and made one line by the caller
// (`base::text::sanitize`) where Redis does so.

/// `ERR wrong number of arguments for '<name>' command`.
pub fn wrong_arity(name: &str) -> String {
    format!("ERR wrong number of arguments for '{name}' command")
}

/// The start of `ERR unknown command '<name>', with args beginning with: `
/// (the caller appends `'<arg>' ` for the first arguments).
pub fn unknown_command_with_args(name: &str) -> String {
    format!("ERR unknown command '{name}', with args beginning with: ")
}

/// `ERR unknown command '<name>'` (a queued command that cannot be resolved).
pub fn unknown_command(name: &str) -> String {
    format!("ERR unknown command '{name}'")
}

/// `ERR unknown subcommand '<sub>'. Try <CONTAINER> HELP.`
pub fn unknown_subcommand(sub: &str, container: &str) -> String {
    format!(
        "ERR unknown subcommand '{sub}'. Try {} HELP.",
        container.to_ascii_uppercase()
    )
}

/// `ERR unknown subcommand for '<container>'` (a container without handler).
pub fn unknown_subcommand_for(container: &str) -> String {
    format!("ERR unknown subcommand for '{container}'")
}

/// `ERR unknown subcommand or wrong number of arguments for '<sub>'. Try
/// <COMMAND> HELP.` (DEBUG, SLOWLOG: subcommands dispatched by the command).
pub fn unknown_subcommand_or_arity(sub: &str, command: &str) -> String {
    format!("ERR unknown subcommand or wrong number of arguments for '{sub}'. Try {command} HELP.")
}

/// RESP2 subscribed mode refuses everything but the Pub/Sub commands.
pub fn not_in_subscribed_context(name: &str) -> String {
    format!("ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
}

/// `ERR invalid expire time in '<command>' command`.
pub fn invalid_expire_time(command: &str) -> String {
    format!("ERR invalid expire time in '{command}' command")
}

/// `ERR at least 1 input key is needed for '<command>' command`.
pub fn need_one_input_key(command: &str) -> String {
    format!("ERR at least 1 input key is needed for '{command}' command")
}

/// `ERR Unknown option or number of arguments for CONFIG SET - '<name>'`.
pub fn config_set_unknown(name: &str) -> String {
    format!("ERR Unknown option or number of arguments for CONFIG SET - '{name}'")
}

/// `ERR CONFIG SET failed (possibly related to argument '<name>') - <why>`.
pub fn config_set_failed(name: &str, why: &str) -> String {
    format!("ERR CONFIG SET failed (possibly related to argument '{name}') - {why}")
}

/// `ERR Rewriting config file: <why>`.
pub fn config_rewrite_failed(why: &str) -> String {
    format!("ERR Rewriting config file: {why}")
}

/// `ERR unknown type name '<name>'`.
pub fn unknown_type_name(name: &str) -> String {
    format!("ERR unknown type name '{name}'")
}

/// `ERR Unrecognized option '<option>'`.
pub fn unrecognized_option(option: &str) -> String {
    format!("ERR Unrecognized option '{option}'")
}

/// `ERR <what> cannot contain spaces, newlines or special characters.`
pub fn no_special_characters(what: &str) -> String {
    format!("ERR {what} cannot contain spaces, newlines or special characters.")
}

/// `ERR No such user '<name>'`.
pub fn no_such_user(name: &str) -> String {
    format!("ERR No such user '{name}'")
}

/// `ERR Syntax error in HELLO option '<option>'`.
pub fn hello_syntax(option: &str) -> String {
    format!("ERR Syntax error in HELLO option '{option}'")
}

// Client-side caching (CLIENT TRACKING / CACHING), Redis 7.0.15's texts.
pub const ERR_TRACKING_PREFIX_NEEDS_BCAST: &str =
    "ERR PREFIX option requires BCAST mode to be enabled";
pub const ERR_TRACKING_SWITCH_BCAST: &str = "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const ERR_TRACKING_OPT_BCAST: &str = "ERR OPTIN and OPTOUT are not compatible with BCAST";
pub const ERR_TRACKING_OPTIN_AND_OPTOUT: &str =
    "ERR You can't specify both OPTIN mode and OPTOUT mode";
pub const ERR_TRACKING_SWITCH_OPT: &str = "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.";
pub const ERR_TRACKING_ONE_REDIRECT: &str =
    "ERR A client can only redirect to a single other client";
pub const ERR_TRACKING_NO_REDIRECT_CLIENT: &str =
    "ERR The client ID you want redirect to does not exist";
pub const ERR_CACHING_NOT_TRACKING: &str = "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled";
pub const ERR_CACHING_YES_NEEDS_OPTIN: &str =
    "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
pub const ERR_CACHING_NO_NEEDS_OPTOUT: &str =
    "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";

/// A new tracking prefix overlaps one the client already has.
pub fn tracking_prefix_overlaps_existing(new: &str, old: &str) -> String {
    format!("ERR Prefix '{new}' overlaps with an existing prefix '{old}'. Prefixes for a single client must not overlap.")
}

/// Two prefixes of one CLIENT TRACKING call overlap.
pub fn tracking_prefix_overlaps_provided(new: &str, other: &str) -> String {
    format!("ERR Prefix '{new}' overlaps with another provided prefix '{other}'. Prefixes for a single client must not overlap.")
}

// Scripting (EVAL, SCRIPT, FUNCTION, FCALL and the commands scripts call).
pub const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
pub const NOTBUSY: &str = "NOTBUSY No scripts in execution right now.";
pub const UNKILLABLE: &str = "UNKILLABLE Sorry the script already executed write commands against the dataset. You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.";
pub const ERR_SCRIPT_UNKNOWN_COMMAND: &str = "ERR Unknown Redis command called from script";
pub const ERR_SCRIPT_WRONG_ARGS: &str =
    "ERR Wrong number of args calling Redis command from script";
pub const ERR_SCRIPT_NOSCRIPT: &str = "ERR This Redis command is not allowed from script";
pub const ERR_SCRIPT_READ_ONLY: &str = "ERR Write commands are not allowed from read-only scripts.";
pub const ERR_SCRIPT_WRITE_FLAG_RO: &str =
    "ERR Can not execute a script with write flag using *_ro command.";
pub const ERR_SCRIPT_ALLOW_OOM: &str =
    "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'";
pub const ERR_NUMKEYS_NEGATIVE: &str = "ERR Number of keys can't be negative";
/// FCALL / FCALL_RO with a `numkeys` that is not an integer.
pub const ERR_FCALL_BAD_NUMKEYS: &str = "ERR Bad number of keys provided";
pub const ERR_NUMKEYS_OVER_ARGS: &str = "ERR Number of keys can't be greater than number of args";
pub const ERR_FUNCTION_FLUSH_ONLY_SUPPORTS_SYNC_ASYNC_OPTION: &str =
    "ERR FUNCTION FLUSH only supports SYNC|ASYNC option";
pub const ERR_FUNCTION_NOT_FOUND: &str = "ERR Function not found";
pub const ERR_LIBRARY_NAME_ARGUMENT_WAS_NOT_GIVEN: &str = "ERR library name argument was not given";
pub const ERR_SCRIPT_DEBUG_MUST_CALLED_OUTSIDE_PIPELINE: &str =
    "ERR SCRIPT DEBUG must be called outside a pipeline";
pub const ERR_SCRIPT_DEBUG_YES_SYNC_NO: &str = "ERR Use SCRIPT DEBUG YES/SYNC/NO";
pub const ERR_SCRIPT_DEBUG_YES_SYNC_NOT_SUPPORTED_SERVER: &str =
    "ERR SCRIPT DEBUG YES/SYNC is not supported: this server has no Lua debugger";
pub const ERR_SCRIPT_FLUSH_ONLY_SUPPORT_SYNC_ASYNC_OPTION: &str =
    "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
pub const ERR_WRONG_RESTORE_POLICY_GIVEN_VALUE_SHOULD_EITHER: &str =
    "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.";

/// The reply of a command that needs a stopped partition (a command
/// panicked while changing it; see `store::partlock`).
pub fn partition_stopped(p: usize) -> String {
    format!(
        "ERR partition {p} is stopped after an internal error (see the server log): its keys are not served until a restart"
    )
}
