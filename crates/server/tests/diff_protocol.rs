//! Differential tests of the wire protocol itself: inline commands as typed in
//! telnet and every malformed-input case, byte for byte against redis-server.

mod common;
use common::*;

#[test]
fn inline_commands() {
    diff_text(
        "inline_commands",
        r#"
@raw "PING\r\n"
@raw "ping\n"
@raw "   PING   \r\n"
@raw "\r\n\r\nPING\r\n"
@raw "ECHO hello\r\n"
@raw "ECHO \"a b\"\r\n"
@raw "ECHO 'a b'\r\n"
@raw "ECHO \"\\x41\\x42\\n\\t\\\"\"\r\n"
@raw "ECHO 'it\\'s'\r\n"
@raw "ECHO \"\"\r\n"
@raw "ECHO ''\r\n"
@raw "ECHO a\tb\r\n"
@raw "ECHO\r\n"
@raw "NOSUCH a 'b c'\r\n"
@raw "PING\r\nPING\r\n"   # replies=2
PING
@raw "SELECT 2\r\n"
@raw "SELECT \"2\"\r\n"
@raw "ECHO \"\\xzz\"\r\n"
@raw "ECHO \"abc\"def\r\n"                     # close
@raw "ECHO \"abc\r\n"                          # close
@raw "ECHO 'abc\r\n"                           # close
"#,
    );
}

#[test]
fn multibulk_edge_cases() {
    diff_text(
        "multibulk_edge_cases",
        r#"
@raw "*0\r\nPING\r\n"
@raw "*-1\r\nPING\r\n"
@raw "*-10\r\nPING\r\n"
@raw "*1\r\n$4\r\nPING\r\n"
@raw "*2\r\n$4\r\nECHO\r\n$0\r\n\r\n"
@raw "*2\r\n$4\r\nECHO\r\n$3\r\n\x00\r\n\r\n"
@raw "*1\r\n$4\r\nping\r\n*1\r\n$4\r\nPING\r\n"   # replies=2
@raw "*1\r\n$0\r\n\r\n"
@raw "*1\r\n$4\r\nPINGxx"
PING
@raw "*2\r\n$4\r\nECHO\r\n$2\r\nab\r\n*1\r\n$4\r\nPING\r\n"   # replies=2
@raw "+PING\r\n"
@raw "$4\r\n"
@raw ":1\r\n"
@raw "   \r\nPING\r\n"
@raw "*01\r\n$04\r\nPING\r\n"   # close
@raw "*+1\r\n$4\r\nPING\r\n"   # close
@raw "*1\r\n$+4\r\nPING\r\n"   # close
@raw "*1 \r\n$4\r\nPING\r\n"                # close
"#,
    );
}

#[test]
fn malformed_input() {
    diff_text(
        "malformed_input",
        r#"
@raw "*abc\r\n"                               # close
@raw "*1x\r\n"                                # close
@raw "*3000000000\r\n"                        # close
@raw "*99999999999999999999\r\n"              # close
@raw "*1\r\nfoo\r\n"                          # close
@raw "*1\r\n:4\r\n"                           # close
@raw "*2\r\n$4\r\nECHO\r\n+x\r\n"             # close
@raw "*1\r\n$abc\r\n"                         # close
@raw "*1\r\n$-1\r\n"                          # close
@raw "*1\r\n$-5\r\n"                          # close
@raw "*1\r\n$1x\r\n"                          # close
@raw "*1\r\n$9999999999999\r\n"               # close
@raw "*1\r\n$536870913\r\n"                   # close
@raw "*1\r\n$99999999999999999999999\r\n"     # close
"#,
    );
}

/// Long count strings and inline requests without a newline: the limits
/// apply once 64 KiB are buffered.
#[test]
fn oversized_headers() {
    let big_digits = "1".repeat(70_000);
    let big_inline = "a".repeat(70_000);
    let script = Script::new("oversized_headers")
        .text(&format!("@raw \"*{big_digits}\"   # close"))
        .text(&format!("@raw \"*1\\r\\n${big_digits}\"   # close"))
        .text(&format!("@raw \"{big_inline}\"   # close"))
        .text(&format!("@raw \"ECHO {big_inline}\"   # close"));
    diff(&script);
}

#[test]
fn configured_bulk_limit() {
    diff_text(
        "configured_bulk_limit",
        r#"
CONFIG SET proto-max-bulk-len 1mb
@raw "*2\r\n$4\r\nECHO\r\n$1048577\r\n"       # close
@raw "*2\r\n$4\r\nECHO\r\n$1048576\r\n"       # noreply
"#,
    );
}

#[test]
fn unauthenticated_limits() {
    diff_text_with(
        "unauthenticated_limits",
        r#"
@raw "*11\r\n"                                # close
@raw "*2\r\n$4\r\nECHO\r\n$16385\r\n"         # close
@raw "*2\r\n$4\r\nECHO\r\n$16384\r\n"         # noreply
@reconnect
@raw "*10\r\n$4\r\nPING\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n"
PING
AUTH pw
@raw "*11\r\n$4\r\nPING\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\n5\r\n$1\r\n6\r\n$1\r\n7\r\n$1\r\n8\r\n$1\r\n9\r\n$1\r\na\r\n"
"#,
        &DiffOpts::new(&[("requirepass", "pw")]),
    );
}
