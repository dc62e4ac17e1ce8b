//! The one-line description of a client that `CLIENT LIST`, `CLIENT INFO`
//! and the `client-info` field of `ACL LOG` entries print.

use std::fmt::Write as _;
use std::sync::atomic::Ordering::Relaxed;

use crate::kernel::client::{cflag, ClientShared};
use crate::kernel::server::Server;

/// The local address as Redis shows it: `ip:port`, or `path:0` for a unix socket.
pub fn laddr_of(c: &ClientShared) -> std::borrow::Cow<'_, str> {
    if c.has_flag(cflag::UNIX) && !c.laddr.ends_with(":0") {
        format!("{}:0", c.laddr).into()
    } else {
        c.laddr.as_str().into()
    }
}

/// One `CLIENT LIST` line (without the trailing newline), fields as Redis
/// 7.0.15 prints them, followed by 7.2's `lib-name` and `lib-ver`.
pub fn client_line(srv: &Server, c: &ClientShared, now_ms: u64) -> String {
    let strings = c.strings.lock().clone();
    let qbuf = c.qbuf.load(Relaxed);
    let qbuf_free = c.qbuf_free.load(Relaxed);
    let argv_mem = c.argv_mem.load(Relaxed);
    let omem = c.omem.load(Relaxed);
    let multi_mem = c.multi_mem.load(Relaxed);
    let rbs = c.rbs.load(Relaxed);
    let rbp = c.rbp.load(Relaxed);
    let tot_mem = c
        .tot_mem
        .load(Relaxed)
        .max(qbuf + qbuf_free + argv_mem + multi_mem);
    let cmd = match c.last_cmd.load(Relaxed) {
        0 => "NULL".to_string(),
        i => srv
            .table
            .entries
            .get(i as usize - 1)
            .map(|e| e.full_name.clone())
            .unwrap_or_else(|| "NULL".into()),
    };
    let events = if omem > 0 { "rw" } else { "r" };
    let redir = if c.has_flag(cflag::TRACKING) {
        c.tracking_redir.load(Relaxed) as i64
    } else {
        -1
    };
    let mut s = String::with_capacity(320);
    let _ = write!(
        s,
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp={} obl={} oll=0 omem={} tot-mem={} events={} cmd={} user={} redir={} resp={} lib-name={} lib-ver={}",
        c.id,
        c.addr,
        laddr_of(c),
        c.fd,
        String::from_utf8_lossy(&strings.name),
        now_ms.saturating_sub(c.created_ms) / 1000,
        now_ms.saturating_sub(c.last_interaction_ms.load(Relaxed)) / 1000,
        c.flag_letters(),
        c.db.load(Relaxed),
        c.sub.load(Relaxed),
        c.psub.load(Relaxed),
        c.ssub.load(Relaxed),
        c.multi.load(Relaxed),
        qbuf,
        qbuf_free,
        argv_mem,
        multi_mem,
        rbs,
        rbp,
        omem,
        omem,
        tot_mem,
        events,
        cmd,
        strings.user,
        redir,
        c.resp.load(Relaxed),
        String::from_utf8_lossy(&strings.lib_name),
        String::from_utf8_lossy(&strings.lib_ver),
    );
    s
}
