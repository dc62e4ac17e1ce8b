//! Differential coverage: which commands the differential tests compare
//! with redis-server, per command family.
//!
//! The scan is static: it reads the string literals of the test files as
//! script text (see `common/script.rs`); each line whose first word names
//! a command of the command table counts as a differential case of that
//! command (with its subcommand for containers like CLIENT, and DEBUG's
//! subcommands). Which literals:
//!
//! * every literal of `tests/diff_*.rs` (differential by convention);
//! * in the other test files, the literals of the items that take part in
//!   a comparison: the items (functions, consts) that name the harness
//!   (`diff_text`, `diff`, `RefRedis`...), the items that call those
//!   (tests calling a differential helper), and the consts and statics
//!   these reach (the command tables they pass, directly or through
//!   helpers); `blocking_matrix.rs` is one. A helper function that a differential test calls does not
//!   count unless it compares itself: it may serve petrel-only checks.
//!
//! Which lines of a literal:
//!
//! * a multi-line literal is a script: every line counts, in any case;
//!   a leading connection number (`0 CLIENT TRACKING on`) is skipped;
//! * a one-line literal counts when it has arguments and its command
//!   name is written in upper case (`"SADD big {}"` in a `format!`), so
//!   prose, map keys ("type", "info") and lone tokens (BITFIELD's "SET",
//!   SCAN's "TYPE") do not;
//! * an array literal of strings is a command (`.cmd(&["client", "id"])`);
//! * steps marked `# any` (setup, not compared) and `@` directives do not
//!   count; a case inside an `#[ignore]` test counts (it is a known
//!   difference) and is listed in the report.
//!
//! The test prints "family: covered/total" for every family of
//! `commands::registry::FAMILIES` and fails when a command has no case and
//! is not in [`NOT_DIFFERENTIAL`], or when an entry of that list has gained
//! a case or is no command (the list may only shrink).
//!
//! `cargo test -p server --test coverage -- --nocapture` shows the table;
//! with `PETREL_COVERAGE_VERBOSE=1`, also which files cover each command.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::script::{split_args, split_markers};

/// Commands without a differential case, each with the reason it cannot be
/// compared with redis-server 7.0 meaningfully. May only shrink.
const NOT_DIFFERENTIAL: &[(&str, &str)] = &[
    (
        "client|no-touch",
        "Redis 7.2's, unknown to redis-server 7.0; end-to-end in admin_cmds.rs",
    ),
    (
        "client|setinfo",
        "Redis 7.2's, unknown to redis-server 7.0; end-to-end in admin_cmds.rs",
    ),
    (
        "debug|panic-connection",
        "petrel's test hook (a panic in one connection); lifecycle.rs and admin_cmds.rs",
    ),
    (
        "debug|panic-write",
        "petrel's test hook (a panic while a partition is being changed); faults.rs",
    ),
    (
        "debug|panic-thread",
        "petrel's test hook (a dead cron/worker/acceptor thread); faults.rs",
    ),
    (
        "debug|loadaof",
        "with the AOF off redis-server 7.0 exits on it; with the AOF on, aof_files.rs checks DEBUG LOADAOF end to end (digest before and after)",
    ),
    (
        "memory|topkeys",
        "petrel-only; checked against redis-cli --memkeys and models in keysizes.rs",
    ),
];

/// Test files that name commands without comparing them.
const SKIP_FILES: &[&str] = &["coverage.rs", "fuzz_commands.rs"];

/// A string literal of a Rust source file.
#[derive(Debug)]
struct Lit {
    text: String,
    /// Inside an `#[ignore]` item.
    ignored: bool,
    /// The first element of an array literal: `Some(next element)` (or
    /// `Some("")` when the next element is not a string literal).
    array_head: Option<String>,
}

#[derive(Debug, PartialEq)]
enum Tok {
    Str(String),
    Punct(char),
    Ident(String),
}

/// The tokens of `src` that matter here, each with its brace depth (a
/// brace has the depth outside it). Comments and char literals are
/// skipped; numbers come out as identifiers.
fn lex(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut depth = 0usize;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut nest = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    nest += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    nest -= 1;
                    i += 2;
                    if nest == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            let (s, end) = cooked_string(&c, i + 1);
            out.push((Tok::Str(s), depth));
            i = end;
        } else if ch == '\'' {
            // A char literal or a lifetime.
            if c.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ch.is_alphanumeric() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let raw = (word == "r" || word == "br") && matches!(c.get(i), Some('"') | Some('#'));
            if raw {
                let mut hashes = 0;
                while c.get(i) == Some(&'#') {
                    hashes += 1;
                    i += 1;
                }
                i += 1; // the opening quote
                let start = i;
                while i < c.len()
                    && !(c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')))
                {
                    i += 1;
                }
                let s: String = c[start..i.min(c.len())].iter().collect();
                i += 1 + hashes;
                out.push((Tok::Str(s), depth));
            } else if word == "b" && c.get(i) == Some(&'"') {
                let (s, end) = cooked_string(&c, i + 1);
                out.push((Tok::Str(s), depth));
                i = end;
            } else {
                out.push((Tok::Ident(word), depth));
            }
        } else {
            if ch == '}' {
                depth = depth.saturating_sub(1);
            }
            out.push((Tok::Punct(ch), depth));
            if ch == '{' {
                depth += 1;
            }
            i += 1;
        }
    }
    out
}

/// The contents of a `"..."` literal starting at `i` (after the quote),
/// escapes resolved, and the index after its closing quote.
fn cooked_string(c: &[char], mut i: usize) -> (String, usize) {
    let mut s = String::new();
    while i < c.len() && c[i] != '"' {
        if c[i] == '\\' && i + 1 < c.len() {
            i += 1;
            match c[i] {
                'n' => s.push('\n'),
                'r' => s.push('\r'),
                't' => s.push('\t'),
                '0' => s.push('\0'),
                'x' => {
                    let h: String = c[i + 1..(i + 3).min(c.len())].iter().collect();
                    s.push(u8::from_str_radix(&h, 16).map_or('?', |b| b as char));
                    i += 2;
                }
                'u' => {
                    while i < c.len() && c[i] != '}' {
                        i += 1;
                    }
                    s.push('?');
                }
                '\n' => {
                    while i + 1 < c.len() && c[i + 1].is_whitespace() {
                        i += 1;
                    }
                }
                other => s.push(other),
            }
        } else {
            s.push(c[i]);
        }
        i += 1;
    }
    (s, i + 1)
}

/// A top-level item of a source file: its name (empty for `use`, `impl`,
/// `mod`...), whether it carries `#[ignore]`, and its tokens.
struct Item {
    keyword: String,
    name: String,
    ignored: bool,
    toks: std::ops::Range<usize>,
}

fn items(toks: &[(Tok, usize)]) -> Vec<Item> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut name = String::new();
    let mut keyword = String::new();
    let mut ignored = false;
    for (k, (t, depth)) in toks.iter().enumerate() {
        if *depth != 0 {
            continue;
        }
        match t {
            Tok::Ident(w)
                if keyword.is_empty()
                    && matches!(
                        w.as_str(),
                        "fn" | "const"
                            | "static"
                            | "impl"
                            | "mod"
                            | "struct"
                            | "enum"
                            | "trait"
                            | "use"
                            | "type"
                            | "macro_rules"
                    ) =>
            {
                keyword = w.clone();
                if let Some((Tok::Ident(n), _)) = toks.get(k + 1) {
                    name = n.clone();
                }
            }
            Tok::Ident(w)
                if w == "ignore"
                    && k >= 2
                    && toks[k - 1].0 == Tok::Punct('[')
                    && toks[k - 2].0 == Tok::Punct('#') =>
            {
                ignored = true;
            }
            Tok::Punct(';') | Tok::Punct('}') => {
                let ends = t == &Tok::Punct(';')
                    || !matches!(keyword.as_str(), "const" | "static" | "type" | "use");
                if ends && !keyword.is_empty() {
                    out.push(Item {
                        keyword: keyword.clone(),
                        name: std::mem::take(&mut name),
                        ignored,
                        toks: start..k + 1,
                    });
                    keyword.clear();
                    ignored = false;
                    start = k + 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// The harness's entry points: an item that names one compares with
/// redis-server.
const HARNESS: &[&str] = &[
    "diff",
    "diff_text",
    "diff_text_with",
    "diff_with",
    "diff_events",
    "RefRedis",
];

/// The string literals of the items of `src` that take part in a
/// differential comparison, with array heads marked. In `diff_*.rs`
/// (`all`) every item does; elsewhere, the items that name the harness,
/// the items that call those (tests calling a differential helper) and
/// the consts and statics those reach (the command tables they pass).
fn literals(src: &str, all: bool) -> Vec<Lit> {
    let toks = lex(src);
    let items = items(&toks);
    let names_in = |it: &Item| -> BTreeSet<&str> {
        toks[it.toks.clone()]
            .iter()
            .filter_map(|(t, _)| match t {
                Tok::Ident(w) => Some(w.as_str()),
                _ => None,
            })
            .collect()
    };
    let mentions: Vec<BTreeSet<&str>> = items.iter().map(names_in).collect();
    let named = |a: usize, b: usize| {
        a != b && !items[b].name.is_empty() && mentions[a].contains(items[b].name.as_str())
    };
    // Differential: names the harness, or calls a differential item.
    let mut differential: Vec<bool> = mentions
        .iter()
        .map(|m| all || HARNESS.iter().any(|h| m.contains(h)))
        .collect();
    loop {
        let mut changed = false;
        for a in 0..items.len() {
            if !differential[a] && (0..items.len()).any(|b| differential[b] && named(a, b)) {
                differential[a] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Counted: differential, or data (a const or static) that a
    // differential item reaches (names, or names a function that names
    // it...). The literals of a helper function a differential test calls
    // are not counted unless it compares itself: it may serve petrel-only
    // checks.
    let mut reached = differential.clone();
    loop {
        let mut changed = false;
        for b in 0..items.len() {
            if !reached[b] && (0..items.len()).any(|a| reached[a] && named(a, b)) {
                reached[b] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let counted: Vec<bool> = (0..items.len())
        .map(|i| {
            differential[i]
                || (reached[i] && matches!(items[i].keyword.as_str(), "const" | "static"))
        })
        .collect();
    let mut out = Vec::new();
    for (it, _) in items.iter().zip(&counted).filter(|(_, c)| **c) {
        for k in it.toks.clone() {
            let Tok::Str(text) = &toks[k].0 else { continue };
            let head = k > 0 && toks[k - 1].0 == Tok::Punct('[');
            let array_head = head.then(|| match (toks.get(k + 1), toks.get(k + 2)) {
                (Some((Tok::Punct(','), _)), Some((Tok::Str(next), _))) => next.clone(),
                _ => String::new(),
            });
            out.push(Lit {
                text: text.clone(),
                ignored: it.ignored,
                array_head,
            });
        }
    }
    out
}

/// The commands' leaves: every command without subcommands, every
/// subcommand (`client|list`) and DEBUG's subcommands (`debug|object`),
/// by family.
fn leaves(table: &commands::kernel::table::CommandTable) -> Vec<(&'static str, Vec<String>)> {
    commands::registry::FAMILIES
        .iter()
        .map(|fam| {
            let mut names = Vec::new();
            for spec in fam.commands {
                if spec.name == "debug" {
                    names.extend(
                        table
                            .debug
                            .iter()
                            .map(|d| format!("debug|{}", d.name.to_ascii_lowercase())),
                    );
                } else if spec.subcommands.is_empty() {
                    names.push(spec.name.to_string());
                } else {
                    names.extend(
                        spec.subcommands
                            .iter()
                            .map(|s| format!("{}|{}", spec.name, s.short_name())),
                    );
                }
            }
            (fam.name, names)
        })
        .collect()
}

/// The leaf a script line names, if any. `any_case`: a command written in
/// lower case counts too.
fn leaf_of(
    table: &commands::kernel::table::CommandTable,
    words: &[Vec<u8>],
    any_case: bool,
) -> Option<String> {
    let first = std::str::from_utf8(words.first()?).ok()?;
    if first.is_empty() || first.contains('|') {
        return None;
    }
    if !any_case && first.bytes().any(|b| b.is_ascii_lowercase()) {
        return None;
    }
    let entry = table.by_full_name(first)?;
    let name = entry.full_name.clone();
    let second = words
        .get(1)
        .and_then(|w| std::str::from_utf8(w).ok())
        .map(|w| w.to_ascii_lowercase());
    if !entry.subs.is_empty() {
        let sub = second?;
        return table
            .by_full_name(&format!("{name}|{sub}"))
            .map(|e| e.full_name.clone());
    }
    if name == "debug" {
        let sub = second?;
        return table
            .debug
            .iter()
            .find(|d| d.name.eq_ignore_ascii_case(&sub))
            .map(|d| format!("debug|{}", d.name.to_ascii_lowercase()));
    }
    Some(name)
}

/// The leaves the script lines of `lit` name.
fn leaves_in(table: &commands::kernel::table::CommandTable, lit: &Lit) -> Vec<String> {
    if let Some(next) = &lit.array_head {
        let mut words = vec![lit.text.clone().into_bytes()];
        if !next.is_empty() {
            words.push(next.clone().into_bytes());
        }
        return leaf_of(table, &words, true).into_iter().collect();
    }
    let script = lit.text.contains('\n');
    let mut out = Vec::new();
    for line in lit.text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (mut body, marks) = split_markers(line);
        if marks.split_whitespace().any(|m| m == "any") {
            continue;
        }
        body = body.trim();
        while let Some(rest) = body
            .strip_prefix("@resp2 ")
            .or_else(|| body.strip_prefix("@resp3 "))
        {
            body = rest.trim();
        }
        if body.starts_with('@') {
            continue;
        }
        let Some(mut words) = split_args(body) else {
            continue;
        };
        // Multi-connection scripts: `<conn> COMMAND ...`.
        if words.len() > 1 && words[0].iter().all(u8::is_ascii_digit) {
            words.remove(0);
        }
        // A lone word outside a script or an array is an argument (a
        // BITFIELD "SET", a SCAN "TYPE"), not a command.
        if !script && words.len() < 2 {
            continue;
        }
        out.extend(leaf_of(table, &words, script));
    }
    out
}

#[test]
fn every_command_has_a_differential_case() {
    let table = commands::registry::command_table(0);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests dir")
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.ends_with(".rs") && !SKIP_FILES.contains(&n))
        })
        .collect();
    files.sort();
    assert!(files.len() > 10, "test files in {}", dir.display());

    // leaf -> (covered by a test that runs, files)
    let mut seen: BTreeMap<String, (bool, BTreeSet<String>)> = BTreeMap::new();
    for f in &files {
        let src = std::fs::read_to_string(f).unwrap();
        let fname = f.file_name().unwrap().to_string_lossy().into_owned();
        for lit in literals(&src, fname.starts_with("diff_")) {
            for leaf in leaves_in(&table, &lit) {
                let e = seen.entry(leaf).or_default();
                e.0 |= !lit.ignored;
                e.1.insert(fname.clone());
            }
        }
    }

    let allow: BTreeMap<&str, &str> = NOT_DIFFERENTIAL.iter().copied().collect();
    let mut problems = Vec::new();
    let mut report =
        String::from("differential coverage (commands with a differential case / commands):\n");
    let (mut all_cov, mut all_tot) = (0, 0);
    let mut ignored_only = Vec::new();
    let mut allowed = Vec::new();
    let mut known = BTreeSet::new();
    for (fam, names) in leaves(&table) {
        let mut missing = Vec::new();
        let mut cov = 0;
        for n in &names {
            known.insert(n.clone());
            match seen.get(n) {
                Some((running, _)) => {
                    cov += 1;
                    if !running {
                        ignored_only.push(n.clone());
                    }
                    if allow.contains_key(n.as_str()) {
                        problems.push(format!(
                            "{n} has a differential case now: remove it from NOT_DIFFERENTIAL"
                        ));
                    }
                }
                None if allow.contains_key(n.as_str()) => allowed.push(n.clone()),
                None => missing.push(n.clone()),
            }
        }
        all_cov += cov;
        all_tot += names.len();
        report.push_str(&format!("  {fam:<18} {cov:>3}/{:<3}", names.len()));
        if !missing.is_empty() {
            report.push_str(&format!("  missing: {}", missing.join(" ")));
            problems.extend(
                missing
                    .iter()
                    .map(|m| format!("{m} ({fam}) has no differential case")),
            );
        }
        report.push('\n');
    }
    report.push_str(&format!("  {:<18} {all_cov:>3}/{all_tot:<3}\n", "total"));
    if !allowed.is_empty() {
        report.push_str("  not compared (NOT_DIFFERENTIAL):\n");
        for n in &allowed {
            report.push_str(&format!("    {n}: {}\n", allow[n.as_str()]));
        }
    }
    if !ignored_only.is_empty() {
        report.push_str(&format!(
            "  covered only by #[ignore] (known-difference) cases: {}\n",
            ignored_only.join(" ")
        ));
    }
    for n in allow.keys() {
        if !known.contains(*n) {
            problems.push(format!("NOT_DIFFERENTIAL lists {n}, which is no command"));
        }
    }
    if std::env::var("PETREL_COVERAGE_VERBOSE").is_ok_and(|v| v == "1") {
        for (leaf, (_, files)) in &seen {
            let files: Vec<&str> = files.iter().map(|f| f.as_str()).collect();
            report.push_str(&format!("    {leaf}: {}\n", files.join(" ")));
        }
    }
    println!("{report}");
    assert!(
        problems.is_empty(),
        "{report}\n{} problem(s):\n  {}",
        problems.len(),
        problems.join("\n  ")
    );
}

#[test]
fn scan_reads_scripts_arrays_and_ignored_tests() {
    let table = commands::registry::command_table(0);
    let src = r####"
#[test]
fn a() {
    diff_text("x", r#"
SET k v
get k            # exact
client list      # type
HSET h f v       # any
@resp3 DEBUG object k
@raw "*1\r\n$4\r\nPING\r\n"
0 CLIENT GETNAME
"#);
    let s = format!("SADD big {}", 1);
    let lone = ["BITFIELD", "k", "SET", "u8", "0", "1"];
    c.cmd(&["config", "get", "x"]);
    let t = "type"; // prose: not a command
}

#[test]
#[ignore = "petrel bug: LPOS"]
fn b() {
    diff_text("y", "LPOS l a\n");
}

#[test]
fn petrel_only() {
    let mut s = TestServer::start(&[]);
    s.raw().cmd(&["LLEN", "x"]);
}

const CHANGES: &[&[&str]] = &[&["RENAME", "a", "b"]];

fn helper(cmds: &[&[&str]]) {
    let r = RefRedis::start();
}

#[test]
fn calls_helper() {
    helper(CHANGES);
}
"####;
    let mut got: Vec<(String, bool)> = literals(src, false)
        .iter()
        .flat_map(|l| leaves_in(&table, l).into_iter().map(|n| (n, l.ignored)))
        .collect();
    got.sort();
    let want: Vec<(String, bool)> = [
        ("bitfield", false),
        ("client|getname", false),
        ("client|list", false),
        ("config|get", false),
        ("debug|object", false),
        ("get", false),
        ("lpos", true),
        ("rename", false),
        ("sadd", false),
        ("set", false),
    ]
    .iter()
    .map(|(n, i)| (n.to_string(), *i))
    .collect();
    assert_eq!(got, want);
    // In a diff_*.rs file, everything counts.
    let all: Vec<String> = literals(src, true)
        .iter()
        .flat_map(|l| leaves_in(&table, l))
        .collect();
    assert!(all.contains(&"llen".to_string()));
}
