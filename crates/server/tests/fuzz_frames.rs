//! Feeds a few thousand random and mutated RESP frames to a running server
//! over many connections, then checks it still answers PING on a fresh
//! connection and logged no panic. Seeded: set PETREL_FUZZ_SEED to replay.

mod common;
use common::*;

use std::time::{Duration, Instant};

/// splitmix64: small, seedable, good enough for input generation.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Valid commands to start from. Nothing that changes server-wide state
/// (CONFIG SET, SHUTDOWN, DEBUG, CLIENT KILL/PAUSE) so the run stays
/// meaningful; mutations may still produce anything.
const BASES: &[&[&str]] = &[
    &["PING"],
    &["PING", "hello"],
    &["ECHO", "some text"],
    &["ECHO", ""],
    &["SELECT", "3"],
    &["SELECT", "0"],
    &["HELLO", "3"],
    &["HELLO", "2"],
    &["HELLO", "3", "SETNAME", "fuzzer"],
    &["TIME"],
    &["AUTH", "x"],
    &["AUTH", "default", "x"],
    &["RESET"],
    &["CONFIG", "GET", "*"],
    &["CONFIG", "GET", "max*", "t?me*"],
    &["NOSUCHCOMMAND", "a", "b"],
    &["ECHO", "a", "b", "c"],
];

const HUGE: &[&str] = &[
    "-1",
    "-2",
    "0",
    "2147483647",
    "2147483648",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "99999999999999999999999999",
    "1024",
    "65536",
    "100000",
    "",
    "abc",
    "1.5",
    " 3",
];

fn valid_frame(rng: &mut Rng) -> Vec<u8> {
    let base = rng.pick(BASES);
    if rng.below(4) == 0 {
        // Inline form.
        let mut line = base.join(" ").into_bytes();
        line.extend_from_slice(if rng.below(2) == 0 { b"\r\n" } else { b"\n" });
        line
    } else {
        resp::encode_command(base)
    }
}

fn mutate(rng: &mut Rng, mut f: Vec<u8>) -> Vec<u8> {
    let rounds = 1 + rng.below(3);
    for _ in 0..rounds {
        if f.is_empty() {
            f.push(b'*');
        }
        match rng.below(10) {
            // Bit flip.
            0 | 1 => {
                let i = rng.below(f.len());
                f[i] ^= 1 << rng.below(8);
            }
            // Truncation.
            2 => {
                let n = rng.below(f.len());
                f.truncate(n);
            }
            // Duplicate a header line (e.g. "*2\r\n*2\r\n").
            3 => {
                if let Some(end) = f.windows(2).position(|w| w == b"\r\n") {
                    let hdr = f[..end + 2].to_vec();
                    let at = rng.below(f.len());
                    f.splice(at..at, hdr);
                }
            }
            // Replace a number after '*' or '$' by a huge/odd one.
            4 | 5 => {
                let marks: Vec<usize> = f
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c == b'*' || c == b'$')
                    .map(|(i, _)| i)
                    .collect();
                if !marks.is_empty() {
                    let m = *rng.pick(&marks) + 1;
                    let mut e = m;
                    while e < f.len() && f[e].is_ascii_digit() {
                        e += 1;
                    }
                    let n = rng.pick(HUGE).as_bytes().to_vec();
                    f.splice(m..e, n);
                }
            }
            // Random bytes inserted.
            6 => {
                let at = rng.below(f.len() + 1);
                let n = 1 + rng.below(8);
                let junk: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                f.splice(at..at, junk);
            }
            // Drop a CR or LF.
            7 => {
                if let Some(i) = f.iter().position(|&c| c == b'\r' || c == b'\n') {
                    f.remove(i);
                }
            }
            // Unbalanced quotes in an inline command.
            8 => {
                f = format!("ECHO \"{}\r\n", rng.below(1000)).into_bytes();
            }
            // Swap in another frame's tail.
            _ => {
                let other = valid_frame(rng);
                let cut = rng.below(f.len());
                let ocut = rng.below(other.len());
                f.truncate(cut);
                f.extend_from_slice(&other[ocut..]);
            }
        }
    }
    f
}

fn random_frame(rng: &mut Rng) -> Vec<u8> {
    match rng.below(10) {
        0 => (0..rng.below(64)).map(|_| rng.next() as u8).collect(),
        1..=2 => valid_frame(rng),
        _ => {
            let f = valid_frame(rng);
            mutate(rng, f)
        }
    }
}

#[test]
fn random_and_mutated_frames() {
    let seed: u64 = std::env::var("PETREL_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0001);
    // Half the threads hit a server without a password, half one with
    // requirepass (the unauthenticated parser limits).
    let mut s = TestServer::start(&[]);
    let mut s_auth = TestServer::start(&[("requirepass", "fuzzpw")]);
    let mut keeper = s.raw();
    assert_eq!(keeper.cmd(&["PING"]), Value::simple("PONG"));
    let deadline = Instant::now() + Duration::from_secs(12);
    let threads = 4;
    let conns_per_thread = 250;
    let ports = [s.port(), s_auth.port()];
    let total: usize = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let port = ports[t % 2];
                sc.spawn(move || {
                    let mut rng = Rng(seed ^ (t as u64).wrapping_mul(0x1234_5678_9ABC_DEF1));
                    let mut sent = 0;
                    for _ in 0..conns_per_thread {
                        if Instant::now() > deadline {
                            break;
                        }
                        let Ok(mut c) = RawConn::try_tcp(port) else {
                            continue;
                        };
                        let mut batch = Vec::new();
                        // Most connections end at their first bad frame, so
                        // keep them short and many.
                        for _ in 0..1 + rng.below(12) {
                            batch.extend(random_frame(&mut rng));
                            sent += 1;
                            // Sometimes send in pieces, sometimes all at once.
                            if rng.below(3) == 0 {
                                if c.try_send(&batch).is_err() {
                                    break;
                                }
                                batch.clear();
                            }
                        }
                        // The rest in random pieces (incremental parsing).
                        let mut rest = &batch[..];
                        while !rest.is_empty() {
                            let n = 1 + rng.below(rest.len().min(64));
                            if c.try_send(&rest[..n]).is_err() {
                                break;
                            }
                            rest = &rest[n..];
                        }
                        // Drain whatever comes back; don't wait long.
                        let _ = c.closed_within(Duration::from_millis(30));
                    }
                    sent
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert!(total >= 2000, "only {total} frames sent");
    eprintln!("fuzz: {total} frames, seed {seed}");
    assert!(s.is_alive(), "server died; seed {seed}\n{}", s.log());
    s.assert_alive();
    assert_eq!(keeper.cmd(&["ECHO", "survived"]), Value::bulk("survived"));
    assert!(
        s_auth.is_alive(),
        "server died; seed {seed}\n{}",
        s_auth.log()
    );
    s_auth.assert_alive();
    for log in [s.log(), s_auth.log()] {
        assert!(
            !log.contains("panicked") && !log.contains("Panic"),
            "seed {seed}: {log}"
        );
    }
}
