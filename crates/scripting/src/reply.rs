//! Writing a failed run's error as Redis 7.0's error line
//! `<err> script: <name>, on <source>:<line>.`, and stepping the collector.

use mlua::Value;
use resp::ReplyBuf;

use crate::convert::one_line;

/// Writes the error object the handler produced.
pub(crate) fn write_error(v: &Value, name: &str, out: &mut ReplyBuf) {
    let Value::Table(t) = v else {
        out.error(&format!(
            "ERR Error running script {name}, execution failure"
        ));
        return;
    };
    let Ok(Value::String(err)) = t.raw_get::<Value>("err") else {
        out.error(&format!("ERR Error running script {name}, unknown error"));
        return;
    };
    let mut msg = err.as_bytes().to_vec();
    let source = t.raw_get::<Value>("source").ok();
    let line = t.raw_get::<Value>("line").ok();
    if let (Some(Value::String(src)), Some(line)) = (source, line) {
        let line = match line {
            Value::Integer(n) => Some(n.to_string()),
            Value::Number(x) => Some(crate::num::fmt_g(x, 14)),
            Value::String(s) => Some(s.to_string_lossy().to_string()),
            _ => None,
        };
        if let Some(line) = line {
            msg.extend_from_slice(b" script: ");
            msg.extend_from_slice(name.as_bytes());
            msg.extend_from_slice(b", on ");
            msg.extend_from_slice(&src.as_bytes());
            msg.push(b':');
            msg.extend_from_slice(line.as_bytes());
            msg.push(b'.');
        }
    }
    let v = out.vec_mut();
    v.push(b'-');
    v.extend_from_slice(&one_line(&msg));
    v.extend_from_slice(b"\r\n");
}

/// Keeps Lua's collector from doing whole cycles at once: one step of
/// `GC_PERIOD` KiB every `GC_PERIOD` runs, as Redis does.
pub(crate) const GC_PERIOD: u32 = 50;

/// Counts runs and steps the collector every [`GC_PERIOD`].
pub(crate) fn gc_tick(lua: &mlua::Lua, count: &mut u32) {
    *count += 1;
    if *count >= GC_PERIOD {
        *count = 0;
        let _ = lua.gc_step_kbytes(GC_PERIOD as i32);
    }
}
