//! nodes.conf: the text of the cluster configuration, in Redis 7.0's
//! format (one line per node, as CLUSTER NODES shows it, then
//! `vars currentEpoch N lastVoteEpoch M`), its parser and its atomic save.
//!
//! A node line is `<id> <ip>:<port>@<cport>[,<hostname>] <flags> <master|->
//! <ping-sent> <pong-received> <config-epoch> <link-state> <slot>...`, where
//! a slot is `n`, `a-b`, or, for the node itself, `[n->-<id>]` (migrating
//! to) or `[n-<-<id>]` (importing from).

use std::io::Write;
use std::path::Path;

use super::{flags, Node, State, NO_OWNER, SLOTS};

/// One node's line, without the line end.
pub fn node_line(st: &State, i: usize) -> String {
    node_line_for(st, i, false)
}

/// One node's line as a client sees it: with `use_pport` (a plaintext
/// client of a `tls-cluster` node) the node's plaintext port when it is
/// known, else the port it announces (Redis's clusterGenNodeDescription).
pub fn node_line_for(st: &State, i: usize, use_pport: bool) -> String {
    let n = &st.nodes[i];
    let port = client_port_of(n, use_pport);
    let mut s = format!("{} {}:{}@{}", n.id, n.ip, port, n.cport);
    if !n.hostname.is_empty() {
        s.push(',');
        s.push_str(&n.hostname);
    }
    s.push(' ');
    s.push_str(&flags::names(n.flags));
    s.push(' ');
    s.push_str(n.master.as_deref().unwrap_or("-"));
    let link = if n.flags & flags::MYSELF != 0 || n.connected {
        "connected"
    } else {
        "disconnected"
    };
    s.push_str(&format!(
        " {} {} {} {}",
        n.ping_sent, n.pong_received, n.config_epoch, link
    ));
    for (a, b) in st.ranges_of(i) {
        if a == b {
            s.push_str(&format!(" {a}"));
        } else {
            s.push_str(&format!(" {a}-{b}"));
        }
    }
    if n.flags & flags::MYSELF != 0 {
        // By slot; a slot is never both migrating and importing.
        let mut marks: Vec<(u16, String)> = st
            .migrating
            .iter()
            .map(|(slot, id)| (*slot, format!(" [{slot}->-{id}]")))
            .chain(
                st.importing
                    .iter()
                    .map(|(slot, id)| (*slot, format!(" [{slot}-<-{id}]"))),
            )
            .collect();
        marks.sort();
        for (_, m) in marks {
            s.push_str(&m);
        }
    }
    s
}

/// The client port of `n` shown to a client: its plaintext port
/// (`pport`) for a plaintext client of a `tls-cluster` node
/// (`use_pport`) when it is known, else the port it announces.
pub fn client_port_of(n: &Node, use_pport: bool) -> u16 {
    if use_pport && n.pport != 0 {
        n.pport
    } else {
        n.port
    }
}

/// CLUSTER NODES: every node's line, each ending in "\n" (`use_pport`:
/// see [`node_line_for`]).
pub fn nodes_text(st: &State, use_pport: bool) -> String {
    let mut s = String::new();
    for i in 0..st.nodes.len() {
        s.push_str(&node_line_for(st, i, use_pport));
        s.push('\n');
    }
    s
}

/// The whole file: every node but those still in handshake.
pub fn file_text(st: &State) -> String {
    let mut s = String::new();
    for i in 0..st.nodes.len() {
        if st.nodes[i].flags & flags::HANDSHAKE == 0 {
            s.push_str(&node_line(st, i));
            s.push('\n');
        }
    }
    s.push_str(&format!(
        "vars currentEpoch {} lastVoteEpoch {}\n",
        st.current_epoch, st.last_vote_epoch
    ));
    s
}

/// Writes `text` to `path` atomically: a temporary file beside it, synced,
/// renamed over it, and the directory synced.
pub fn save_atomic(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "nodes.conf".into());
    let tmp = dir.join(format!("temp-{}-{name}", std::process::id()));
    let r = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if r.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    r
}

fn bad(line: usize, why: &str) -> String {
    format!("corrupted cluster config file (line {line}: {why})")
}

fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn parse_slot(s: &str) -> Option<u16> {
    parse_u64(s).filter(|&n| n < SLOTS as u64).map(|n| n as u16)
}

fn valid_id(s: &str) -> bool {
    s.len() == super::ID_LEN && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Parses a nodes.conf text. Every error names the line; nothing is
/// half-loaded (the caller gets a whole state or an error).
pub fn parse(text: &str) -> Result<State, String> {
    let mut st = State::empty();
    let mut me = None;
    // Slot owners by node id, resolved once every node is known.
    let mut owned: Vec<(usize, u16, u16)> = Vec::new();
    let mut migr: Vec<(usize, u16, String, bool)> = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let ln = ln + 1;
        let f: Vec<&str> = line.split(' ').filter(|t| !t.is_empty()).collect();
        if f.is_empty() {
            continue;
        }
        if f[0] == "vars" {
            if f.len() % 2 != 1 {
                return Err(bad(ln, "odd vars"));
            }
            for kv in f[1..].chunks(2) {
                let v = parse_u64(kv[1]).ok_or_else(|| bad(ln, "bad epoch"))?;
                match kv[0] {
                    "currentEpoch" => st.current_epoch = v,
                    "lastVoteEpoch" => st.last_vote_epoch = v,
                    _ => return Err(bad(ln, "unknown var")),
                }
            }
            continue;
        }
        if f.len() < 8 {
            return Err(bad(ln, "too few fields"));
        }
        if !valid_id(f[0]) {
            return Err(bad(ln, "bad node id"));
        }
        if st.find(f[0]).is_some() {
            return Err(bad(ln, "node listed twice"));
        }
        let (addr, hostname) = match f[1].split_once(',') {
            Some((a, h)) => (a, h.to_string()),
            None => (f[1], String::new()),
        };
        let (ipport, cport) = addr.split_once('@').ok_or_else(|| bad(ln, "no bus port"))?;
        let (ip, port) = ipport.rsplit_once(':').ok_or_else(|| bad(ln, "no port"))?;
        let port = parse_u64(port)
            .filter(|&p| p <= 65535)
            .ok_or_else(|| bad(ln, "bad port"))? as u16;
        let cport = parse_u64(cport)
            .filter(|&p| p <= 65535)
            .ok_or_else(|| bad(ln, "bad bus port"))? as u16;
        let fl = flags::parse(f[2]).ok_or_else(|| bad(ln, "bad flags"))?;
        let master = match f[3] {
            "-" => None,
            m if valid_id(m) => Some(m.to_string()),
            _ => return Err(bad(ln, "bad master id")),
        };
        let num = |s: &str| parse_u64(s).ok_or_else(|| bad(ln, "bad number"));
        let node = Node {
            id: f[0].to_string(),
            ip: ip.to_string(),
            port,
            cport,
            hostname,
            flags: fl,
            master,
            ping_sent: num(f[4])?,
            pong_received: num(f[5])?,
            config_epoch: num(f[6])?,
            connected: false,
            ..Node::default()
        };
        if f[7] != "connected" && f[7] != "disconnected" {
            return Err(bad(ln, "bad link state"));
        }
        let idx = st.nodes.len();
        if fl & flags::MYSELF != 0 {
            if me.is_some() {
                return Err(bad(ln, "two nodes flagged myself"));
            }
            me = Some(idx);
        }
        st.nodes.push(node);
        for t in &f[8..] {
            if let Some(inner) = t.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                let (slot, id, importing) = if let Some((s, id)) = inner.split_once("->-") {
                    (s, id, false)
                } else if let Some((s, id)) = inner.split_once("-<-") {
                    (s, id, true)
                } else {
                    return Err(bad(ln, "bad migration mark"));
                };
                let slot = parse_slot(slot).ok_or_else(|| bad(ln, "bad slot"))?;
                if !valid_id(id) {
                    return Err(bad(ln, "bad node id in migration mark"));
                }
                migr.push((idx, slot, id.to_string(), importing));
            } else {
                let (a, b) = match t.split_once('-') {
                    Some((a, b)) => (a, b),
                    None => (*t, *t),
                };
                let a = parse_slot(a).ok_or_else(|| bad(ln, "bad slot"))?;
                let b = parse_slot(b).ok_or_else(|| bad(ln, "bad slot"))?;
                if a > b {
                    return Err(bad(ln, "bad slot range"));
                }
                owned.push((idx, a, b));
            }
        }
    }
    let me =
        me.ok_or_else(|| "corrupted cluster config file (no node flagged myself)".to_string())?;
    st.me = me;
    for (idx, a, b) in owned {
        for s in a..=b {
            if st.owner[s as usize] != NO_OWNER {
                return Err(format!(
                    "corrupted cluster config file (slot {s} owned twice)"
                ));
            }
            st.owner[s as usize] = idx as u32;
        }
    }
    for (idx, slot, id, importing) in migr {
        // Redis keeps these marks for the node itself only.
        if idx == me {
            if importing {
                st.importing.insert(slot, id);
            } else {
                st.migrating.insert(slot, id);
            }
        }
    }
    Ok(st)
}
