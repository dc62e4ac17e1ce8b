//! Differential tests: the MEMORY subcommands against redis-server 7.0.
//! MEMORY USAGE is compared byte for byte in `memory.rs` and `keysizes.rs`;
//! here: HELP, DOCTOR, PURGE, STATS and MALLOC-STATS, their argument
//! errors in RESP2 and RESP3, and the shapes of the reports whose numbers
//! (and, for MALLOC-STATS, the allocator's text) cannot be equal.
//! Syntax of the scripts: see tests/common/script.rs.

mod common;
use common::*;

/// MEMORY HELP lists petrel's TOPKEYS beside Redis 7.0's lines.
#[test]
fn memory_help_doctor_purge_and_errors() {
    let s = Script::new("memory_subcommands")
        .check(&["MEMORY", "HELP"], help_with_additions)
        .check(&["memory", "help"], help_with_additions)
        .text(
            r#"
MEMORY HELP extra
MEMORY PURGE
MEMORY PURGE now
MEMORY DOCTOR
MEMORY DOCTOR x
MEMORY STATS x
MEMORY MALLOC-STATS x
MEMORY NOSUCH
MEMORY
MEMORY USAGE
MEMORY USAGE nokey
MEMORY USAGE nokey SAMPLES
MEMORY USAGE nokey SAMPLES x
MEMORY USAGE nokey SAMPLES -1
MEMORY USAGE nokey FOO 1
"#,
        );
    diff(&s);
}

/// The keys of a MEMORY STATS reply (RESP2 flat array or RESP3 map) with
/// their values.
fn stats_pairs(r: &Reply) -> Option<Vec<(Vec<u8>, Value)>> {
    let key = |k: &Value| match k {
        Value::Bulk(b) | Value::Simple(b) => Some(b.clone()),
        _ => None,
    };
    match r {
        Reply::Value(Value::Array(a)) if a.len() % 2 == 0 => a
            .chunks(2)
            .map(|c| Some((key(&c[0])?, c[1].clone())))
            .collect(),
        Reply::Value(Value::Map(kv)) => {
            kv.iter().map(|(k, v)| Some((key(k)?, v.clone()))).collect()
        }
        _ => None,
    }
}

/// MEMORY STATS: every field of redis-server's, in its order and with a
/// value of the same type (numbers differ), then petrel's own
/// `petrel.*` breakdown.
fn same_stats_fields(p: &Reply, r: &Reply) -> Result<(), String> {
    let (Some(pp), Some(rp)) = (stats_pairs(p), stats_pairs(r)) else {
        return Err(format!("not a MEMORY STATS reply: {p} / {r}"));
    };
    let shared = pp.len().min(rp.len());
    for (i, (rk, rv)) in rp.iter().enumerate() {
        let Some((pk, pv)) = pp.get(i).filter(|_| i < shared) else {
            return Err(format!("petrel lacks {}", String::from_utf8_lossy(rk)));
        };
        if pk != rk || std::mem::discriminant(pv) != std::mem::discriminant(rv) {
            return Err(format!(
                "field {i}: petrel {} = {pv}, redis {} = {rv}",
                String::from_utf8_lossy(pk),
                String::from_utf8_lossy(rk)
            ));
        }
    }
    match pp[rp.len()..]
        .iter()
        .find(|(k, _)| !k.starts_with(b"petrel."))
    {
        Some((k, _)) => Err(format!("extra field {}", String::from_utf8_lossy(k))),
        None => Ok(()),
    }
}

/// MEMORY MALLOC-STATS: both servers run jemalloc and answer its report
/// as one string (the figures and version differ).
fn jemalloc_report(p: &Reply, r: &Reply) -> Result<(), String> {
    let head: &[u8] = b"___ Begin jemalloc statistics ___";
    match (p, r) {
        (Reply::Value(Value::Bulk(a)), Reply::Value(Value::Bulk(b)))
            if a.starts_with(head) && b.starts_with(head) =>
        {
            Ok(())
        }
        (
            Reply::Value(Value::Verbatim { data: a, .. }),
            Reply::Value(Value::Verbatim { data: b, .. }),
        ) if a.starts_with(head) && b.starts_with(head) => Ok(()),
        _ => Err("not both jemalloc reports of the same type".into()),
    }
}

#[test]
fn memory_stats_and_malloc_stats() {
    let s = Script::new("memory_stats")
        .check(&["MEMORY", "STATS"], same_stats_fields)
        .text(
            r#"
SET k v
RPUSH l a b c
SELECT 2
HSET h f v
SELECT 0
"#,
        )
        .check(&["MEMORY", "STATS"], same_stats_fields)
        .check(&["memory", "malloc-stats"], jemalloc_report)
        .text(
            r#"
MEMORY PURGE
MEMORY DOCTOR     # type
"#,
        );
    diff(&s);
}
