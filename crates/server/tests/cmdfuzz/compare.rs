//! The generated commands against petrel and redis-server side by side:
//! one connection to each, the same command to both, and the kinds of
//! the two replies compared. Three classes of disagreement are collected,
//! each once per command with its first example:
//!
//! * `error/ok`: one server answers an error, the other does not;
//! * `error code`: both answer errors with different codes (WRONGTYPE vs ERR);
//! * `reply type`: both answer non-errors of different RESP types, nulls
//!   aside (a null against a value is state, not shape).
//!
//! Commands redis-server does not know (petrel-only) and DEBUG are
//! skipped. After a disagreement both servers are reset (RESET, FLUSHALL)
//! so that one difference does not cascade into others.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use resp::Value;

use super::gen::{ConnState, Generator};
use super::values::Rng;
use crate::common::{script::quote, RawConn, Reply};

/// One kind of disagreement on one command.
pub struct Disagreement {
    pub count: u64,
    pub example: String,
    pub petrel: String,
    pub redis: String,
}

#[derive(Default)]
pub struct Comparison {
    pub commands: u64,
    pub skipped: u64,
    /// (class, command) -> first example and count.
    pub found: BTreeMap<(String, String), Disagreement>,
    /// Commands redis-server answered "unknown command/subcommand".
    pub petrel_only: BTreeMap<String, u64>,
}

struct Side {
    raw: RawConn,
    id: i64,
    port: u16,
}

impl Side {
    fn open(port: u16, resp3: bool) -> Side {
        let mut raw = RawConn::tcp(port);
        raw.timeout = Duration::from_secs(10);
        let id = match raw.cmd(&["CLIENT", "ID"]) {
            Value::Int(i) => i,
            _ => -1,
        };
        if resp3 {
            raw.cmd(&["HELLO", "3"]);
        }
        Side { raw, id, port }
    }

    fn call(&mut self, argv: &[Vec<u8>], blocking: bool) -> Reply {
        if self.raw.try_send(&resp::encode_command(argv)).is_err() {
            return Reply::Closed;
        }
        let start = Instant::now();
        let mut unblocked = false;
        loop {
            let limit = if blocking && !unblocked {
                Duration::from_millis(300)
            } else {
                Duration::from_secs(10)
            };
            match self
                .raw
                .read_reply_within(limit.saturating_sub(start.elapsed()))
            {
                Reply::Value(Value::Push(_)) => {}
                Reply::Timeout if blocking && !unblocked => {
                    unblocked = true;
                    let mut ctl = RawConn::tcp(self.port);
                    ctl.cmd(&["CLIENT", "UNBLOCK", &self.id.to_string()]);
                }
                other => return other,
            }
        }
    }
}

fn kind(r: &Reply) -> String {
    match r {
        Reply::Value(Value::Error(e)) | Reply::Value(Value::BlobError(e)) => {
            let code = e.split(|&c| c == b' ').next().unwrap_or(b"");
            format!("error {}", String::from_utf8_lossy(code))
        }
        Reply::Value(v) => {
            let t = match v {
                Value::Simple(_) => "simple",
                Value::Int(_) => "integer",
                Value::Bulk(_) => "bulk",
                Value::NullBulk | Value::NullArray | Value::Null => "null",
                Value::Array(_) => "array",
                Value::Map(_) => "map",
                Value::Set(_) => "set",
                Value::Double(_) => "double",
                Value::Boolean(_) => "boolean",
                Value::Verbatim { .. } => "verbatim",
                Value::BigNumber(_) => "bignumber",
                _ => "other",
            };
            t.to_string()
        }
        other => format!("{other}"),
    }
}

fn short(r: &Reply) -> String {
    let s = r.to_string();
    if s.len() > 160 {
        format!(
            "{}...",
            &s[..s.char_indices().nth(160).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// Runs `n` generated commands against both servers.
pub fn compare(petrel: u16, redis: u16, gen: &Generator, seed: u64, n: u64) -> Comparison {
    let mut rng = Rng(seed);
    let mut out = Comparison::default();
    let mut resp3 = false;
    let mut p = Side::open(petrel, resp3);
    let mut r = Side::open(redis, resp3);
    let mut in_session = 0;
    while out.commands < n {
        if in_session == 0 {
            resp3 = rng.one_in(2);
            p = Side::open(petrel, resp3);
            r = Side::open(redis, resp3);
            in_session = 50 + rng.below(300);
        }
        in_session -= 1;
        let state = ConnState {
            resp3,
            in_multi: true,
            maybe_subscribed: false,
        };
        let (m, argv) = gen.call(&mut rng, state);
        let name = m.full_name();
        if name.starts_with("debug") || name == "reset" {
            out.skipped += 1;
            continue;
        }
        out.commands += 1;
        let pr = p.call(&argv, m.blocking());
        let rr = r.call(&argv, m.blocking());
        if let Reply::Value(Value::Error(e)) = &rr {
            let t = String::from_utf8_lossy(e);
            if t.starts_with("ERR unknown command") || t.starts_with("ERR unknown subcommand") {
                *out.petrel_only.entry(name).or_default() += 1;
                continue;
            }
        }
        let (pk, rk) = (kind(&pr), kind(&rr));
        let class = match (pk.starts_with("error"), rk.starts_with("error")) {
            (true, true) if pk != rk => Some("error code"),
            (true, false) | (false, true) => Some("error/ok"),
            (false, false) if pk != rk && pk != "null" && rk != "null" => Some("reply type"),
            _ => None,
        };
        let closed = matches!(pr, Reply::Closed | Reply::Timeout | Reply::Invalid(_))
            || matches!(rr, Reply::Closed | Reply::Timeout | Reply::Invalid(_));
        if let Some(class) = class {
            let e = out
                .found
                .entry((class.to_string(), name.clone()))
                .or_insert_with(|| Disagreement {
                    count: 0,
                    example: argv
                        .iter()
                        .map(|a| {
                            if a.len() > 60 {
                                format!("<{} bytes>", a.len())
                            } else {
                                quote(a)
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    petrel: short(&pr),
                    redis: short(&rr),
                });
            e.count += 1;
        }
        if class == Some("error/ok") || closed {
            // Both back to the same state.
            p = Side::open(petrel, resp3);
            r = Side::open(redis, resp3);
            for side in [&mut p, &mut r] {
                side.raw.cmd(&["FLUSHALL"]);
                side.raw.cmd(&["FUNCTION", "FLUSH"]);
            }
        }
    }
    out
}
