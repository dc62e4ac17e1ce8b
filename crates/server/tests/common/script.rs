//! Differential test scripts: a list of commands, each with a compare mode.
//!
//! Text form (see [`Script::parse`]), one command per line, redis-cli quoting:
//!
//! ```text
//! # a comment
//! SET k "a b"              # exact comparison (the default)
//! SMEMBERS s               # unordered
//! CONFIG GET *max*         # pairs
//! TIME                     # type
//! ECHO "\x00\xff" 'it''s'
//! @reconnect               # drop the connection and open a new one
//! @resp3 HELLO 3           # only in the RESP3 run (also @resp2)
//! @raw "*1\r\n$abc\r\n"    # close   (exact bytes, e.g. malformed input)
//! @sleep 1100              # pause (both servers are idle meanwhile)
//! ```
//!
//! Trailing markers (after ` # `, several allowed: `# unordered resp2`):
//! * `exact` (default): replies must be identical (type and bytes).
//! * `unordered`: arrays, sets and maps are compared as multisets, at every depth.
//! * `pairs`: the top-level reply is a list of field/value pairs in any order
//!   (RESP2 flat arrays like CONFIG GET or HGETALL, or RESP3 maps).
//! * `type`: same shape (types and lengths), values ignored (TIME, RANDOMKEY...).
//! * `errcode`: both errors with the same first word, or otherwise exact.
//! * `any`: not compared (the command only sets up state).
//! * `noreply`: sent without reading a reply (CLIENT REPLY OFF...).
//! * `replies=N`: the step produces N replies (e.g. `@raw "PING\r\nPING\r\n"`),
//!   all read and compared.
//! * `close`: after the reply the server must close the connection (protocol
//!   errors, QUIT); the runner then reconnects.
//! * `resp2` / `resp3`: only run in that protocol's pass.
//!
//! Custom comparisons are added from Rust with [`Script::check`].

use std::sync::Arc;

use super::raw::Reply;

/// A custom comparison: (petrel, redis) → Ok or a reason.
pub type CheckFn = Arc<dyn Fn(&Reply, &Reply) -> Result<(), String> + Send + Sync>;

/// How two replies are compared.
#[derive(Clone)]
pub enum Mode {
    Exact,
    Unordered,
    Pairs,
    SameType,
    ErrCode,
    Any,
    Custom(CheckFn),
}

impl std::fmt::Debug for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Exact => "exact",
            Mode::Unordered => "unordered",
            Mode::Pairs => "pairs",
            Mode::SameType => "type",
            Mode::ErrCode => "errcode",
            Mode::Any => "any",
            Mode::Custom(_) => "custom",
        })
    }
}

/// Which protocol passes a step runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Only {
    Both,
    Resp2,
    Resp3,
}

/// What a step does.
#[derive(Clone, Debug)]
pub enum Action {
    /// Send a command and compare replies.
    Cmd(Vec<Vec<u8>>),
    /// Send these exact bytes and compare the next reply.
    Bytes(Vec<u8>),
    /// Close the connection and open a new one (redoing HELLO 3 in RESP3).
    Reconnect,
    /// Sleep this many milliseconds (both servers run concurrently).
    SleepMs(u64),
}

/// One step of a script.
#[derive(Clone, Debug)]
pub struct Step {
    pub action: Action,
    pub mode: Mode,
    pub only: Only,
    pub noreply: bool,
    /// The server must close the connection after the reply.
    pub closes: bool,
    /// How many replies the step produces (1 unless `replies=N`).
    pub replies: usize,
    /// Where it came from, for reports ("line 12: SET k v").
    pub origin: String,
}

impl Step {
    pub fn cmd<A: AsRef<[u8]>>(args: &[A], mode: Mode) -> Step {
        let args: Vec<Vec<u8>> = args.iter().map(|a| a.as_ref().to_vec()).collect();
        let origin = args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ");
        Step {
            action: Action::Cmd(args),
            mode,
            only: Only::Both,
            noreply: false,
            closes: false,
            replies: 1,
            origin,
        }
    }
}

/// A named list of steps.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub name: String,
    pub steps: Vec<Step>,
}

impl Script {
    pub fn new(name: &str) -> Script {
        Script {
            name: name.into(),
            steps: Vec::new(),
        }
    }

    /// Parses the text form described in the module docs. Panics on bad syntax.
    pub fn parse(name: &str, text: &str) -> Script {
        let mut s = Script::new(name);
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let shown = match line.char_indices().nth(160) {
                Some((cut, _)) => format!("{}... ({} bytes)", &line[..cut], line.len()),
                None => line.to_string(),
            };
            let origin = format!("{name}:{}: {shown}", i + 1);
            let (body, marks) = split_markers(line);
            let mut mode = Mode::Exact;
            let mut only = Only::Both;
            let mut noreply = false;
            let mut closes = false;
            let mut replies = 1;
            for m in marks.split_whitespace() {
                if let Some(n) = m.strip_prefix("replies=") {
                    replies = n.parse().expect("replies=N");
                    continue;
                }
                match m {
                    "exact" => mode = Mode::Exact,
                    "unordered" => mode = Mode::Unordered,
                    "pairs" => mode = Mode::Pairs,
                    "type" => mode = Mode::SameType,
                    "errcode" => mode = Mode::ErrCode,
                    "any" => mode = Mode::Any,
                    "noreply" => noreply = true,
                    "close" => closes = true,
                    "resp2" => only = Only::Resp2,
                    "resp3" => only = Only::Resp3,
                    other => panic!("{origin}: unknown marker '{other}'"),
                }
            }
            let mut body = body.trim();
            loop {
                if let Some(rest) = body.strip_prefix("@resp2 ") {
                    only = Only::Resp2;
                    body = rest.trim();
                } else if let Some(rest) = body.strip_prefix("@resp3 ") {
                    only = Only::Resp3;
                    body = rest.trim();
                } else {
                    break;
                }
            }
            let action = if body == "@reconnect" {
                Action::Reconnect
            } else if let Some(ms) = body.strip_prefix("@sleep ") {
                Action::SleepMs(ms.trim().parse().expect("@sleep <ms>"))
            } else if let Some(b) = body.strip_prefix("@raw ") {
                // @raw "bytes with \r\n escapes"
                let words = split_args(b).unwrap_or_else(|| panic!("{origin}: bad quoting"));
                Action::Bytes(words.concat())
            } else {
                let words =
                    split_args(body).unwrap_or_else(|| panic!("{origin}: unbalanced quotes"));
                assert!(!words.is_empty(), "{origin}: empty command");
                Action::Cmd(words)
            };
            s.steps.push(Step {
                action,
                mode,
                only,
                noreply,
                closes,
                replies,
                origin,
            });
        }
        s
    }

    /// Adds a command compared exactly.
    pub fn cmd<A: AsRef<[u8]>>(mut self, args: &[A]) -> Script {
        self.steps.push(Step::cmd(args, Mode::Exact));
        self
    }

    /// Adds a command with a compare mode.
    pub fn cmd_mode<A: AsRef<[u8]>>(mut self, args: &[A], mode: Mode) -> Script {
        self.steps.push(Step::cmd(args, mode));
        self
    }

    /// Adds a command compared by a closure (petrel reply, redis reply).
    pub fn check<A: AsRef<[u8]>>(
        mut self,
        args: &[A],
        f: impl Fn(&Reply, &Reply) -> Result<(), String> + Send + Sync + 'static,
    ) -> Script {
        self.steps.push(Step::cmd(args, Mode::Custom(Arc::new(f))));
        self
    }

    /// Appends the steps of a text script.
    pub fn text(mut self, text: &str) -> Script {
        let name = self.name.clone();
        self.steps.extend(Script::parse(&name, text).steps);
        self
    }
}

/// Splits `CMD args # markers` at the last unquoted ` # `.
pub fn split_markers(line: &str) -> (&str, &str) {
    let b = line.as_bytes();
    let mut in_q: Option<u8> = None;
    let mut cut = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match in_q {
            Some(q) => {
                if c == b'\\' && q == b'"' {
                    i += 1;
                } else if c == q {
                    in_q = None;
                }
            }
            None => {
                if c == b'"' || c == b'\'' {
                    in_q = Some(c);
                } else if c == b'#' && i > 0 && b[i - 1].is_ascii_whitespace() {
                    let rest = &line[i + 1..];
                    if rest.split_whitespace().all(is_marker) && !rest.trim().is_empty() {
                        cut = Some(i);
                        break;
                    }
                }
            }
        }
        i += 1;
    }
    match cut {
        Some(i) => (&line[..i], &line[i + 1..]),
        None => (line, ""),
    }
}

fn is_marker(w: &str) -> bool {
    w.strip_prefix("replies=")
        .is_some_and(|n| n.parse::<usize>().is_ok())
        || matches!(
            w,
            "exact"
                | "unordered"
                | "pairs"
                | "type"
                | "errcode"
                | "any"
                | "noreply"
                | "close"
                | "resp2"
                | "resp3"
        )
}

/// Splits a line into arguments like redis-cli (`sdssplitargs`, the
/// server's own implementation). None on unbalanced quotes.
pub fn split_args(line: &str) -> Option<Vec<Vec<u8>>> {
    resp::split_args(line.as_bytes())
}

/// redis-cli-like quoting of one argument for reports.
pub fn quote(a: &[u8]) -> String {
    let plain = !a.is_empty()
        && a.iter()
            .all(|&c| c.is_ascii_graphic() && c != b'"' && c != b'\'' && c != b'\\');
    if plain {
        return String::from_utf8_lossy(a).into_owned();
    }
    let mut s = String::from("\"");
    for &c in a {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            c if c.is_ascii_graphic() || c == b' ' => s.push(c as char),
            c => s.push_str(&format!("\\x{c:02x}")),
        }
    }
    s.push('"');
    s
}
