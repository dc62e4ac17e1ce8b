//! The manifest of an AOF directory, as Redis 7.0 writes it: one line per
//! file, `file <name> seq <n> type <b|h|i>` (keys in any order; a name with
//! spaces or odd bytes quoted as Redis quotes it), the base first, then
//! history, then incremental files in sequence order. Written to a
//! temporary file, fsynced, renamed over the old one, and the directory
//! fsynced: a crash leaves the old or the new manifest, never half of one.

use std::io::Write as _;
use std::path::Path;

use crate::kernel::aof::{FileKind, Manifest, ManifestFile};

/// Parses a manifest's text. Errors name what is wrong as Redis's loader
/// reports it.
pub fn parse(text: &[u8]) -> Result<Manifest, String> {
    let mut m = Manifest::default();
    for (n, raw) in text.split(|&b| b == b'\n').enumerate() {
        let line = String::from_utf8_lossy(raw);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words = crate::kernel::config::split_config_line(line)
            .ok_or_else(|| format!("Invalid AOF manifest file format (line {})", n + 1))?;
        if words.len() % 2 != 0 {
            return Err("Invalid AOF manifest file format".into());
        }
        let (mut name, mut seq, mut kind) = (None, None, None);
        for kv in words.chunks(2) {
            match kv[0].as_str() {
                "file" => name = Some(kv[1].clone()),
                "seq" => seq = kv[1].parse::<u64>().ok(),
                "type" => {
                    kind = match kv[1].as_str() {
                        "b" => Some(FileKind::Base),
                        "h" => Some(FileKind::History),
                        "i" => Some(FileKind::Incr),
                        _ => None,
                    }
                }
                _ => {}
            }
        }
        let (Some(name), Some(seq), Some(kind)) = (name, seq, kind) else {
            return Err("Invalid AOF manifest file format".into());
        };
        if name.contains('/') {
            return Err("Invalid AOF manifest file format".into());
        }
        let f = ManifestFile { name, seq, kind };
        match kind {
            FileKind::Base => {
                if m.base.is_some() {
                    return Err("Found duplicate base file information".into());
                }
                m.base = Some(f);
            }
            FileKind::History => m.history.push(f),
            FileKind::Incr => {
                if m.incrs.last().is_some_and(|l| l.seq >= f.seq) {
                    return Err("Found a non-monotonic sequence number".into());
                }
                m.incrs.push(f)
            }
        }
    }
    if m.base.is_none() && m.incrs.is_empty() && m.history.is_empty() {
        return Err("Found an empty AOF manifest".into());
    }
    Ok(m)
}

/// The manifest's text.
pub fn format(m: &Manifest) -> String {
    let mut s = String::new();
    let line = |s: &mut String, f: &ManifestFile, t: char| {
        s.push_str(&format!(
            "file {} seq {} type {}\n",
            quote(&f.name),
            f.seq,
            t
        ));
    };
    if let Some(b) = &m.base {
        line(&mut s, b, 'b');
    }
    for h in &m.history {
        line(&mut s, h, 'h');
    }
    for i in &m.incrs {
        line(&mut s, i, 'i');
    }
    s
}

/// A name as Redis writes it: bare when it has no space, quote or control
/// byte, else double-quoted with escapes.
fn quote(name: &str) -> String {
    let plain = name
        .bytes()
        .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\'' && b != b'\\');
    if plain {
        return name.to_string();
    }
    let mut q = String::from("\"");
    for b in name.bytes() {
        match b {
            b'\\' => q.push_str("\\\\"),
            b'"' => q.push_str("\\\""),
            b'\n' => q.push_str("\\n"),
            b'\r' => q.push_str("\\r"),
            b'\t' => q.push_str("\\t"),
            0x20..=0x7e => q.push(b as char),
            _ => q.push_str(&format!("\\x{b:02x}")),
        }
    }
    q.push('"');
    q
}

/// Writes `m` as `dir/<prefix>.manifest` atomically (module doc).
pub fn persist(dir: &Path, prefix: &str, m: &Manifest) -> std::io::Result<()> {
    let name = manifest_name(prefix);
    let tmp = dir.join(format!("temp-{name}"));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(format(m).as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, dir.join(&name))?;
    sync_dir(dir)
}

/// fsyncs a directory (its entries: created, renamed, removed files).
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

pub fn manifest_name(prefix: &str) -> String {
    format!("{prefix}.manifest")
}

pub fn base_name(prefix: &str, seq: u64, rdb: bool) -> String {
    format!("{prefix}.{seq}.base.{}", if rdb { "rdb" } else { "aof" })
}

pub fn incr_name(prefix: &str, seq: u64) -> String {
    format!("{prefix}.{seq}.incr.aof")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let m = Manifest {
            base: Some(ManifestFile {
                name: "appendonly.aof.3.base.rdb".into(),
                seq: 3,
                kind: FileKind::Base,
            }),
            incrs: vec![
                ManifestFile {
                    name: "appendonly.aof.5.incr.aof".into(),
                    seq: 5,
                    kind: FileKind::Incr,
                },
                ManifestFile {
                    name: "my file.6.incr.aof".into(),
                    seq: 6,
                    kind: FileKind::Incr,
                },
            ],
            history: vec![],
        };
        let text = format(&m);
        assert_eq!(
            text,
            "file appendonly.aof.3.base.rdb seq 3 type b\nfile appendonly.aof.5.incr.aof seq 5 type i\nfile \"my file.6.incr.aof\" seq 6 type i\n"
        );
        assert_eq!(parse(text.as_bytes()).unwrap(), m);
    }

    #[test]
    fn keys_in_any_order_and_errors() {
        let m = parse(b"seq 1 type b file a.1.base.rdb\ntype i file a.1.incr.aof seq 1\n").unwrap();
        assert_eq!(m.base.unwrap().name, "a.1.base.rdb");
        assert_eq!(m.incrs[0].seq, 1);
        assert!(parse(b"").is_err());
        assert!(parse(b"file x seq 1\n").is_err());
        assert!(parse(b"file x seq 1 type b\nfile y seq 2 type b\n").is_err());
        assert!(parse(b"file x seq 2 type i\nfile y seq 1 type i\n").is_err());
        assert!(parse(b"file ../x seq 2 type i\n").is_err());
    }
}
