//! The stream held for a replica that does not read (issue 21): beyond a
//! few MB it goes to a spool file, the master's memory for it stays
//! bounded, every byte still reaches the replica once and in order with
//! exact offsets, and the replica output limits count the spooled bytes
//! as Redis counts its in-memory ones.
//!
//! No timing assertions: everything waits by polling with generous limits.

#[path = "common/aof_workload.rs"]
mod aof_workload;
mod common;
#[path = "common/repl_links.rs"]
mod repl_links;

use common::*;
use repl_links::*;

/// The spool threshold of `kernel::replication::spool` (4 MiB).
const THRESHOLD: i64 = 4 << 20;

/// Reads a line ending in CRLF, skipping the newline keepalives.
fn line(c: &mut RawConn) -> String {
    loop {
        let l = c.read_line().expect("connection closed");
        if !l.is_empty() {
            return l;
        }
    }
}

/// A replica on a raw socket: handshake, diskless payload, first ACK.
/// Returns the connection and the offset the stream starts after.
fn raw_replica(master: &Server) -> (RawConn, u64) {
    let mut c = master.raw();
    c.cmd(&["REPLCONF", "listening-port", "4343"]);
    c.cmd(&["REPLCONF", "capa", "eof", "capa", "psync2"]);
    c.send_cmd(&["PSYNC", "?", "-1"]);
    let l = line(&mut c);
    let parts: Vec<&str> = l.split(' ').collect();
    assert_eq!(parts[0], "+FULLRESYNC", "{l}");
    let offset: u64 = parts[2].parse().unwrap();
    let head = line(&mut c);
    let mark = head.strip_prefix("$EOF:").expect(&head).to_string();
    let mut got = Vec::new();
    while !got.ends_with(mark.as_bytes()) {
        got.extend(c.read_bytes(1));
    }
    c.send_cmd(&["REPLCONF", "ACK", &offset.to_string()]);
    (c, offset)
}

/// Splits a stream into its commands.
fn commands(mut bytes: &[u8]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let (argv, used) = parse_multibulk(bytes);
        out.push(argv);
        bytes = &bytes[used..];
    }
    out
}

fn parse_multibulk(b: &[u8]) -> (Vec<Vec<u8>>, usize) {
    let crlf = |from: usize| from + b[from..].windows(2).position(|w| w == b"\r\n").unwrap();
    assert_eq!(
        b[0],
        b'*',
        "{:?}",
        String::from_utf8_lossy(&b[..b.len().min(40)])
    );
    let e = crlf(1);
    let n: usize = std::str::from_utf8(&b[1..e]).unwrap().parse().unwrap();
    let mut pos = e + 2;
    let mut argv = Vec::new();
    for _ in 0..n {
        assert_eq!(b[pos], b'$');
        let e = crlf(pos + 1);
        let len: usize = std::str::from_utf8(&b[pos + 1..e])
            .unwrap()
            .parse()
            .unwrap();
        argv.push(b[e + 2..e + 2 + len].to_vec());
        pos = e + 2 + len + 2;
    }
    (argv, pos)
}

fn spool_files(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("temp-repl-spool"))
        .collect()
}

/// A replica that stops reading while the master takes 8x the threshold
/// of writes: the master's memory held for it comes back under the
/// threshold's bound (the rest is spooled), no file is left visible in
/// `dir`, and when the replica reads again it gets the exact stream:
/// as many bytes as the master's offset advanced, the SETs in order.
#[test]
fn stalled_replica_stream_is_spooled_and_sent_back_exactly() {
    let master = Server::start(&[
        ("repl-diskless-sync", "yes"),
        ("repl-diskless-sync-delay", "0"),
        ("repl-ping-replica-period", "1"),
    ]);
    // From here on the replica reads nothing until told.
    let (mut r, start) = raw_replica(&master);
    let mut c = master.raw();
    wait_for("the replica to be online", || {
        info_field(&mut c, "replication", "slave0").is_some_and(|s| s.contains("state=online"))
    });
    let value = "v".repeat(16 * 1024);
    let n = (8 * THRESHOLD as usize) / value.len();
    for i in 0..n {
        assert_eq!(
            c.cmd(&["SET", &format!("k{i}"), &value]),
            Value::simple("OK")
        );
    }
    assert!(master.wait_log("is behind by more than", PATIENCE));
    // Memory held for the replica: at most the in-memory part (the
    // threshold plus what arrived while a chunk was written).
    wait_for("the stream beyond the threshold to be spooled", || {
        info_num(&mut c, "memory", "mem_clients_slaves") <= 3 * THRESHOLD
    });
    assert!(spool_files(master.dir()).is_empty());
    assert_eq!(
        info_field(&mut c, "replication", "connected_slaves").as_deref(),
        Some("1")
    );
    let end = info_num(&mut c, "replication", "master_repl_offset") as u64;
    // Now the replica reads: exactly the stream from `start` to `end`.
    let stream = r.read_bytes((end - start) as usize);
    let sets: Vec<Vec<Vec<u8>>> = commands(&stream)
        .into_iter()
        .filter(|a| !a[0].eq_ignore_ascii_case(b"PING"))
        .collect();
    assert_eq!(sets[0], vec![b"SELECT".to_vec(), b"0".to_vec()]);
    assert_eq!(sets.len(), n + 1);
    for (i, argv) in sets[1..].iter().enumerate() {
        assert_eq!(
            argv,
            &vec![
                b"SET".to_vec(),
                format!("k{i}").into_bytes(),
                value.as_bytes().to_vec()
            ]
        );
    }
    // The link goes on from memory once the spool is drained.
    c.cmd(&["SET", "after", "1"]);
    let tail =
        r.read_bytes((info_num(&mut c, "replication", "master_repl_offset") as u64 - end) as usize);
    let last = commands(&tail).pop().unwrap();
    assert_eq!(
        last,
        vec![b"SET".to_vec(), b"after".to_vec(), b"1".to_vec()]
    );
}

/// The replica output limit counts the spooled bytes: a replica that
/// does not read is dropped once its pending stream passes the hard
/// limit, although most of it is on disk.
#[test]
fn spooled_bytes_count_toward_the_replica_output_limit() {
    let master = Server::start(&[
        ("repl-diskless-sync-delay", "0"),
        ("client-output-buffer-limit", "replica 12mb 0 0"),
    ]);
    let (r, _) = raw_replica(&master);
    let mut c = master.raw();
    wait_for("the replica to be online", || {
        info_field(&mut c, "replication", "slave0").is_some_and(|s| s.contains("state=online"))
    });
    let value = "x".repeat(64 * 1024);
    let mut i = 0;
    wait_for("the replica to be dropped", || {
        for _ in 0..16 {
            i += 1;
            c.cmd(&["SET", &format!("k{i}"), &value]);
        }
        info_field(&mut c, "replication", "connected_slaves").as_deref() == Some("0")
    });
    assert!(master.log().contains("is behind by more than"));
    assert!(master.wait_log(
        "scheduled to be closed ASAP for overcoming of output buffer limits",
        PATIENCE
    ));
    // Dropped at the limit, not before: over 12 MB were written.
    assert!(i as i64 * 64 * 1024 > 12 << 20, "{i}");
    assert!(spool_files(master.dir()).is_empty());
    drop(r);
}

/// A redis-server replica that sleeps (reads nothing) while the master
/// takes several times the threshold of writes catches up from the
/// spool: same data as the master.
#[test]
fn redis_replica_catches_up_from_the_spool() {
    let master = Server::start(&[
        ("enable-debug-command", "yes"),
        ("repl-diskless-sync-delay", "0"),
        ("repl-ping-replica-period", "1"),
    ]);
    workload(&master, 2, 500, 31);
    let Some(replica) = RefRedis::start_with(Opts::new(&[("enable-debug-command", "yes")])) else {
        return;
    };
    replicaof(&replica, &master);
    link_up(&replica);
    let port = replica.port();
    let sleeper = std::thread::spawn(move || {
        let mut s = RawConn::tcp(port);
        s.timeout = Duration::from_secs(60);
        s.cmd(&["DEBUG", "SLEEP", "4"]);
    });
    // Let the sleep begin (if it has not, the writes are just streamed).
    std::thread::sleep(Duration::from_millis(300));
    let mut c = master.raw();
    let value = "s".repeat(32 * 1024);
    for i in 0..(10 * THRESHOLD as usize / value.len()) {
        c.cmd(&["SET", &format!("big{i}"), &value]);
    }
    workload(&master, 2, 300, 32);
    sleeper.join().unwrap();
    assert!(master.log().contains("is behind by more than"));
    assert_all_in_sync(&master, &[&replica], "after the replica slept");
}
