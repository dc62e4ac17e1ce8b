//! Saving and loading as a user sees it: SAVE/BGSAVE/LASTSAVE and INFO
//! persistence, restarts, save points, SHUTDOWN and signals, FLUSHALL,
//! DEBUG RELOAD, MISCONF after a failed save, -LOADING while loading,
//! corrupt and truncated files refused at startup, kill -9 during saves
//! (the previous file stays loadable), stock redis.conf files.

mod common;
use common::rdbdata::*;
use common::*;

use std::path::Path;

/// Petrel working in `dir`, once it has loaded the file there (if any).
fn petrel_in(dir: &Path, extra: &[(&str, &str)]) -> TestServer {
    let s = start_in(dir, extra);
    // The server answers while it loads (-LOADING, or DEBUG and INFO on
    // a partial dataset): wait for the load to end.
    let mut c = s.client();
    assert!(
        wait_until(Duration::from_secs(60), || info_field(
            &mut c,
            "persistence",
            "loading"
        ) == "0"),
        "still loading:\n{}",
        s.log()
    );
    s
}

/// Petrel working in `dir`, as soon as it answers.
fn start_in(dir: &Path, extra: &[(&str, &str)]) -> TestServer {
    let mut o = Opts::new(&[
        ("dir", &dir.display().to_string()),
        ("enable-debug-command", "yes"),
    ]);
    if !extra.iter().any(|(k, _)| *k == "save") {
        o = o.arg("save", "");
    }
    for (k, v) in extra {
        o = o.arg(k, v);
    }
    TestServer::start_with(o)
}

fn q<T: redis::FromRedisValue>(c: &mut redis::Connection, args: &[&str]) -> T {
    rcmd(args)
        .query(c)
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn q_err(c: &mut redis::Connection, args: &[&str]) -> String {
    match rcmd(args).query::<redis::Value>(c) {
        Err(e) => format!("{} {}", e.code().unwrap_or(""), e.detail().unwrap_or(""))
            .trim()
            .to_string(),
        Ok(v) => panic!("{args:?}: expected an error, got {v:?}"),
    }
}

fn populate(c: &mut redis::Connection, n: usize) {
    let _: () = q(c, &["DEBUG", "POPULATE", &n.to_string()]);
}

#[test]
fn save_bgsave_lastsave_and_restart() {
    let dir = TempDir::new("persist-basic");
    let s = petrel_in(dir.path(), &[]);
    let mut c = s.client();
    let start: i64 = q(&mut c, &["LASTSAVE"]);
    run_all(&mut c, &dataset_commands());
    let _: () = q(&mut c, &["SELECT", "0"]);
    populate(&mut c, 20_000);
    assert_ne!(
        info_field(&mut c, "persistence", "rdb_changes_since_last_save"),
        "0"
    );
    let want = digest(&mut c);
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(q::<String>(&mut c, &["SAVE"]), "OK");
    let after_save: i64 = q(&mut c, &["LASTSAVE"]);
    assert!(after_save > start, "{after_save} > {start}");
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_changes_since_last_save"),
        "0"
    );
    assert_eq!(info_field(&mut c, "persistence", "rdb_saves"), "1");
    check_rdb(&dir.join("dump.rdb"));
    let _: () = q(&mut c, &["SET", "after-save", "1"]);
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_changes_since_last_save"),
        "1"
    );
    let want2 = digest(&mut c);
    assert_eq!(
        q::<String>(&mut c, &["BGSAVE"]),
        "Background saving started"
    );
    wait_bgsave(&mut c, Duration::from_secs(60));
    assert_eq!(info_field(&mut c, "persistence", "rdb_saves"), "2");
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_status"),
        "ok"
    );
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_changes_since_last_save"),
        "0"
    );
    assert_ne!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_time_sec"),
        "-1"
    );
    assert!(s.wait_log("Background saving started by pid", Duration::from_secs(5)));
    assert!(s.wait_log(
        "Background saving terminated with success",
        Duration::from_secs(5)
    ));
    assert_eq!(
        q::<String>(&mut c, &["BGSAVE", "SCHEDULE"]),
        "Background saving started"
    );
    wait_bgsave(&mut c, Duration::from_secs(60));
    assert_eq!(q_err(&mut c, &["BGSAVE", "NOW"]), "ERR syntax error");
    assert_ne!(want, want2);
    drop(s);
    // A restart loads the last file.
    let s = petrel_in(dir.path(), &[]);
    let mut c = s.client();
    assert_eq!(digest(&mut c), want2);
    assert!(
        s.wait_log("DB loaded from disk", Duration::from_secs(5)),
        "{}",
        s.log()
    );
    let loaded: u64 = info_field(&mut c, "persistence", "rdb_last_load_keys_loaded")
        .parse()
        .unwrap();
    assert!(loaded > 20_000, "{loaded}");
}

#[test]
fn expired_keys_are_not_loaded() {
    let dir = TempDir::new("persist-expired");
    let s = petrel_in(dir.path(), &[]);
    let mut c = s.client();
    let _: () = q(&mut c, &["SET", "short", "v", "PX", "300"]);
    let _: () = q(&mut c, &["SET", "long", "v", "EX", "1000"]);
    let _: () = q(&mut c, &["SAVE"]);
    drop(s);
    std::thread::sleep(Duration::from_millis(400));
    let s = petrel_in(dir.path(), &[]);
    let mut c = s.client();
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "short", "long"]), 1);
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_load_keys_expired"),
        "1"
    );
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_load_keys_loaded"),
        "1"
    );
}

#[test]
fn save_points_start_a_background_save() {
    let dir = TempDir::new("persist-points");
    let s = petrel_in(dir.path(), &[("save", "1 2")]);
    let mut c = s.client();
    assert_eq!(
        q::<Vec<String>>(&mut c, &["CONFIG", "GET", "save"])[1],
        "1 2"
    );
    let _: () = q(&mut c, &["SET", "a", "1"]);
    let _: () = q(&mut c, &["SET", "b", "2"]);
    assert!(
        s.wait_log("2 changes in 1 seconds. Saving...", Duration::from_secs(10)),
        "{}",
        s.log()
    );
    // The save starts after the "Saving..." line, so rdb_bgsave_in_progress
    // may still read 0 right after it: wait for the end of the save itself.
    assert!(
        s.wait_log(
            "Background saving terminated with success",
            Duration::from_secs(30)
        ),
        "{}",
        s.log()
    );
    assert!(dir.join("dump.rdb").exists());
    // CONFIG SET replaces the list; "" empties it.
    let _: () = q(&mut c, &["CONFIG", "SET", "save", "3600 1 300 100"]);
    assert_eq!(
        q::<Vec<String>>(&mut c, &["CONFIG", "GET", "save"])[1],
        "3600 1 300 100"
    );
    assert!(q_err(&mut c, &["CONFIG", "SET", "save", "10"]).contains("Invalid save parameters"));
    let _: () = q(&mut c, &["CONFIG", "SET", "save", ""]);
    assert_eq!(q::<Vec<String>>(&mut c, &["CONFIG", "GET", "save"])[1], "");
}

#[test]
fn default_save_points_without_a_config_file() {
    // Redis 7.0 with no config file (and no `save` argument) saves on
    // 3600 1 300 100 60 10000. The harness always passes `--save ""`, so
    // this starts the binary itself.
    let dir = TempDir::new("persist-default");
    let port = free_port();
    let mut p = Proc::spawn(
        PETREL_BIN,
        &[
            "--port".into(),
            port.to_string(),
            "--dir".into(),
            dir.path().display().to_string(),
        ],
        dir.path(),
    )
    .unwrap();
    let mut got = None;
    assert!(wait_until(Duration::from_secs(15), || {
        let Ok(mut r) = RawConn::try_tcp(port) else {
            return false;
        };
        got = Some(r.cmd(&["CONFIG", "GET", "save"]));
        true
    }));
    let want = Value::Array(vec![
        Value::Bulk(b"save".to_vec()),
        Value::Bulk(b"3600 1 300 100 60 10000".to_vec()),
    ]);
    assert_eq!(got, Some(want), "{}", p.log());
    p.kill();
}

#[test]
fn shutdown_and_signals_save_with_save_points() {
    for how in ["SHUTDOWN", "SHUTDOWN SAVE", "SIGTERM", "SIGINT"] {
        let dir = TempDir::new("persist-shutdown");
        let points = if how == "SHUTDOWN SAVE" { "" } else { "3600 1" };
        let mut s = petrel_in(dir.path(), &[("save", points)]);
        let mut c = s.client();
        let _: () = q(&mut c, &["SET", "k", how]);
        match how {
            "SIGTERM" => s.signal(libc::SIGTERM),
            "SIGINT" => s.signal(libc::SIGINT),
            _ => {
                let args: Vec<&str> = how.split(' ').collect();
                let _ = rcmd(&args).query::<redis::Value>(&mut c);
            }
        }
        let st = s.wait_exit(Duration::from_secs(20)).expect("exits");
        assert_eq!(st.code(), Some(0), "{how}\n{}", s.log());
        assert!(
            s.wait_log(
                "Saving the final RDB snapshot before exiting.",
                Duration::from_secs(5)
            ),
            "{how}"
        );
        let s2 = petrel_in(dir.path(), &[]);
        let mut c2 = s2.client();
        assert_eq!(q::<String>(&mut c2, &["GET", "k"]), how);
    }
    // NOSAVE, and no save points: no file.
    for (how, points) in [("SHUTDOWN NOSAVE", "3600 1"), ("SHUTDOWN", "")] {
        let dir = TempDir::new("persist-nosave");
        let mut s = petrel_in(dir.path(), &[("save", points)]);
        let mut c = s.client();
        let _: () = q(&mut c, &["SET", "k", "v"]);
        let args: Vec<&str> = how.split(' ').collect();
        let _ = rcmd(&args).query::<redis::Value>(&mut c);
        s.wait_exit(Duration::from_secs(20)).expect("exits");
        assert!(!dir.join("dump.rdb").exists(), "{how}");
    }
}

#[test]
fn shutdown_refused_when_the_save_fails() {
    let dir = TempDir::new("persist-shutfail");
    let mut s = petrel_in(dir.path(), &[("save", "3600 1")]);
    let mut c = s.client();
    let _: () = q(&mut c, &["SET", "k", "v"]);
    // The directory goes away: the final save cannot be written.
    std::fs::remove_dir_all(dir.path()).unwrap();
    assert_eq!(
        q_err(&mut c, &["SHUTDOWN"]),
        "ERR Errors trying to SHUTDOWN. Check logs."
    );
    assert!(s.is_alive());
    assert!(s.wait_log(
        "Error trying to save the DB, can't exit.",
        Duration::from_secs(5)
    ));
    let _ = rcmd(&["SHUTDOWN", "FORCE"]).query::<redis::Value>(&mut c);
    assert!(s.wait_exit(Duration::from_secs(20)).is_some());
}

#[test]
fn failed_background_save_refuses_writes_with_misconf() {
    let dir = TempDir::new("persist-misconf");
    let s = petrel_in(dir.path(), &[("save", "3600 1")]);
    let mut c = s.client();
    let _: () = q(&mut c, &["SET", "k", "v"]);
    std::fs::remove_dir_all(dir.path()).unwrap();
    assert_eq!(
        q::<String>(&mut c, &["BGSAVE"]),
        "Background saving started"
    );
    wait_bgsave(&mut c, Duration::from_secs(30));
    assert_eq!(
        info_field(&mut c, "persistence", "rdb_last_bgsave_status"),
        "err"
    );
    assert!(
        s.wait_log("Failed opening the temp RDB file", Duration::from_secs(5)),
        "{}",
        s.log()
    );
    let misconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option). Please check the Redis logs for details about the RDB error.";
    assert_eq!(q_err(&mut c, &["SET", "k", "w"]), misconf);
    assert_eq!(q_err(&mut c, &["PING"]), misconf);
    assert_eq!(q::<String>(&mut c, &["GET", "k"]), "v");
    let _: () = q(
        &mut c,
        &["CONFIG", "SET", "stop-writes-on-bgsave-error", "no"],
    );
    let _: () = q(&mut c, &["SET", "k", "w"]);
    let _: () = q(
        &mut c,
        &["CONFIG", "SET", "stop-writes-on-bgsave-error", "yes"],
    );
    // A successful save clears the state.
    std::fs::create_dir_all(dir.path()).unwrap();
    assert_eq!(
        q::<String>(&mut c, &["BGSAVE"]),
        "Background saving started"
    );
    wait_bgsave(&mut c, Duration::from_secs(30));
    assert_eq!(q::<String>(&mut c, &["PING"]), "PONG");
    let _: () = q(&mut c, &["SET", "k", "x"]);
}

#[test]
fn flushall_with_save_points_saves_the_empty_dataset() {
    let dir = TempDir::new("persist-flushall");
    let s = petrel_in(dir.path(), &[("save", "3600 1000")]);
    let mut c = s.client();
    populate(&mut c, 1000);
    let _: () = q(&mut c, &["SAVE"]);
    let size = std::fs::metadata(dir.join("dump.rdb")).unwrap().len();
    let _: () = q(&mut c, &["FLUSHALL"]);
    let after = std::fs::metadata(dir.join("dump.rdb")).unwrap().len();
    assert!(after < size / 10, "{after} vs {size}");
    check_rdb(&dir.join("dump.rdb"));
}

#[test]
fn debug_reload_keeps_the_dataset() {
    let dir = TempDir::new("persist-reload");
    let s = petrel_in(dir.path(), &[]);
    let mut c = s.client();
    run_all(&mut c, &dataset_commands());
    let _: () = q(&mut c, &["SELECT", "0"]);
    let want = describe(&mut c, 16);
    assert_eq!(q::<String>(&mut c, &["DEBUG", "RELOAD"]), "OK");
    assert_same_keyspace(
        "after DEBUG RELOAD",
        &describe(&mut c, 16),
        &loose_strings(&want),
    );
    // NOSAVE NOFLUSH MERGE adds the file's keys to the dataset.
    let _: () = q(&mut c, &["SET", "extra", "1"]);
    let _: () = q(&mut c, &["DEL", "int:0"]);
    assert_eq!(
        q::<String>(&mut c, &["DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE"]),
        "OK"
    );
    assert_eq!(q::<i64>(&mut c, &["EXISTS", "extra", "int:0"]), 2);
    assert!(q_err(&mut c, &["DEBUG", "RELOAD", "NOSAVE", "NOFLUSH"])
        .contains("Error trying to load the RDB dump"));
    // A failed load leaves nothing half loaded.
    assert_eq!(q::<i64>(&mut c, &["DBSIZE"]), 0);
    assert!(q_err(&mut c, &["DEBUG", "RELOAD", "BOGUS"]).contains("MERGE, NOFLUSH and NOSAVE"));
}

/// Writes `data` into a FIFO in two steps so the test can look at the
/// server while it is loading.
#[test]
fn clients_get_loading_while_the_file_loads() {
    let dir = TempDir::new("persist-loading");
    // A real file to stream: the dataset saved by a first server.
    let src = TempDir::new("persist-loading-src");
    let s = petrel_in(src.path(), &[]);
    let mut c = s.client();
    populate(&mut c, 5000);
    let _: () = q(&mut c, &["SAVE"]);
    let want = digest(&mut c);
    drop(s);
    let data = std::fs::read(src.join("dump.rdb")).unwrap();
    let fifo = dir.join("dump.rdb");
    let feeder = HalfFedFifo::new(fifo, data);
    let s = start_in(dir.path(), &[]);
    let mut r = s.raw();
    assert!(wait_until(Duration::from_secs(10), || {
        matches!(r.cmd(&["GET", "key:1"]), Value::Error(e) if e.starts_with(b"LOADING"))
    }));
    assert_eq!(
        r.cmd(&["GET", "key:1"]),
        err("LOADING Redis is loading the dataset in memory")
    );
    // Commands flagged `loading` still run (PING is not one, as in Redis);
    // INFO shows the progress.
    assert_eq!(
        r.cmd(&["PING"]),
        err("LOADING Redis is loading the dataset in memory")
    );
    let Value::Bulk(info) = r.cmd(&["INFO", "persistence"]) else {
        panic!("INFO")
    };
    let info = String::from_utf8_lossy(&info);
    assert!(info.contains("loading:1\r\n"), "{info}");
    for f in [
        "loading_start_time:",
        "loading_total_bytes:",
        "loading_rdb_used_mem:",
        "loading_loaded_bytes:",
        "loading_loaded_perc:",
        "loading_eta_seconds:",
    ] {
        assert!(info.contains(f), "{f}\n{info}");
    }
    feeder.finish();
    let mut c = s.client();
    assert!(wait_until(Duration::from_secs(10), || info_field(
        &mut c,
        "persistence",
        "loading"
    ) == "0"));
    assert_eq!(digest(&mut c), want);
}

/// Corrupt and truncated files stop the server at startup with a message
/// saying where and what; it never serves part of a file.
#[test]
fn corrupt_and_truncated_files_are_refused() {
    let src = TempDir::new("persist-corrupt-src");
    let s = petrel_in(src.path(), &[]);
    let mut c = s.client();
    run_all(&mut c, &dataset_commands());
    let _: () = q(&mut c, &["SAVE"]);
    drop(s);
    let good = std::fs::read(src.join("dump.rdb")).unwrap();
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for cut in [
        5,
        9,
        30,
        good.len() / 3,
        good.len() / 2,
        good.len() - 9,
        good.len() - 1,
    ] {
        cases.push((format!("truncated at {cut}"), good[..cut].to_vec()));
    }
    for at in [20, good.len() / 4, good.len() / 2, good.len() - 3] {
        let mut b = good.clone();
        b[at] ^= 0x5a;
        cases.push((format!("byte {at} flipped"), b));
    }
    let mut bad_version = good.clone();
    bad_version[5..9].copy_from_slice(b"0099");
    cases.push(("version 99".into(), bad_version));
    cases.push(("not an rdb".into(), b"hello world, not a dump".to_vec()));
    let mut bad_crc = good.clone();
    *bad_crc.last_mut().unwrap() ^= 1;
    cases.push(("checksum flipped".into(), bad_crc.clone()));
    for (what, bytes) in cases {
        let dir = TempDir::new("persist-corrupt");
        std::fs::write(dir.join("dump.rdb"), &bytes).unwrap();
        let (code, log) =
            startup_failure(&["--dir", &dir.path().display().to_string(), "--save", ""]);
        assert_eq!(code, Some(1), "{what}:\n{log}");
        assert!(log.contains("Fatal error loading the DB"), "{what}:\n{log}");
        assert!(
            log.contains("offset") || log.contains("signature") || log.contains("version"),
            "{what}: the message says where:\n{log}"
        );
        assert!(
            !log.contains("Ready to accept connections"),
            "{what}:\n{log}"
        );
        assert!(!log.contains("panicked"), "{what}:\n{log}");
    }
    // With `rdbchecksum no` the checksum is not verified (Redis's rule).
    let dir = TempDir::new("persist-nochecksum");
    std::fs::write(dir.join("dump.rdb"), &bad_crc).unwrap();
    let s = petrel_in(dir.path(), &[("rdbchecksum", "no")]);
    let mut c = s.client();
    assert!(q::<i64>(&mut c, &["DBSIZE"]) > 0);
}

/// [`petrel_startup_failure`], again when another test took the port.
fn startup_failure(args: &[&str]) -> (Option<i32>, String) {
    loop {
        let (code, log) = petrel_startup_failure(None, args);
        if !log.contains("Address already in use") {
            return (code, log);
        }
    }
}

/// kill -9 during BGSAVE and during SAVE, repeatedly: the file of the last
/// successful save stays loadable and holds that save's dataset.
#[test]
fn kill_during_saves_keeps_the_previous_file() {
    let dir = TempDir::new("persist-kill");
    let s = petrel_in(dir.path(), &[]);
    let mut c = s.client();
    populate(&mut c, 200_000);
    let _: () = q(&mut c, &["SAVE"]);
    let mut want = digest(&mut c);
    drop(c);
    drop(s);
    for round in 0..6 {
        let mut s = petrel_in(dir.path(), &[]);
        let mut c = s.client();
        assert_eq!(digest(&mut c), want, "round {round}");
        // Change the dataset, then save it and kill the server mid-save.
        let _: () = q(
            &mut c,
            &["DEBUG", "POPULATE", "50000", &format!("round{round}")],
        );
        let mut r = s.raw();
        if round % 2 == 0 {
            r.send_cmd(&["BGSAVE"]);
        } else {
            r.send_cmd(&["SAVE"]);
        }
        std::thread::sleep(Duration::from_millis(3 + 7 * round as u64));
        s.signal(libc::SIGKILL);
        s.wait_exit(Duration::from_secs(10)).expect("killed");
        // The save may have finished before the kill: then the new file
        // is the reference for the next round.
        let probe = petrel_in(dir.path(), &[]);
        let mut pc = probe.client();
        let d = digest(&mut pc);
        let n: i64 = q(&mut pc, &["DBSIZE"]);
        assert!(
            d == want || n == 200_000 + 50_000 * (round as i64 + 1),
            "round {round}: neither the previous dataset nor the new one ({n} keys)"
        );
        // Bring the file to the round's dataset for the next round.
        let _: () = q(
            &mut pc,
            &["DEBUG", "POPULATE", "50000", &format!("round{round}")],
        );
        let _: () = q(&mut pc, &["SAVE"]);
        want = digest(&mut pc);
        // Only the new dataset's file remains, no temporary files.
        drop(pc);
        drop(probe);
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("temp-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// Debian's /etc/redis/redis.conf and Redis 7.0's own example file start
/// petrel (daemonizing, the pid file, the log file and the directory are
/// moved into the test's directory, and the port is a free one).
#[test]
fn stock_redis_conf_starts_petrel() {
    let Ok(debian) = std::fs::read_to_string("/etc/redis/redis.conf") else {
        eprintln!("/etc/redis/redis.conf not found: skipped");
        return;
    };
    // Redis 7.0's redis.conf is Debian's with these four lines upstream.
    let upstream = debian
        .lines()
        .map(|l| match l.split_whitespace().next() {
            Some("daemonize") => "daemonize no".to_string(),
            Some("pidfile") => "pidfile /var/run/redis_6379.pid".to_string(),
            Some("logfile") => "logfile \"\"".to_string(),
            Some("dir") => "dir ./".to_string(),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    for (name, text) in [("debian", debian), ("redis 7.0", upstream)] {
        let dir = TempDir::new("stock-conf");
        let s = TestServer::start_with(
            Opts::default()
                .config(&text)
                .arg("daemonize", "no")
                .arg("logfile", "")
                .arg("pidfile", "")
                .arg("dir", &dir.path().display().to_string()),
        );
        let mut c = s.client();
        assert_eq!(q::<String>(&mut c, &["PING"]), "PONG", "{name}");
        assert_eq!(
            q::<Vec<String>>(&mut c, &["CONFIG", "GET", "save"])[1],
            "",
            "{name}: the harness passes --save \"\" only without a save line"
        );
        assert_eq!(
            q::<Vec<String>>(&mut c, &["CONFIG", "GET", "appendonly"])[1],
            "no"
        );
    }
    // A setting for a missing feature with a non-default value is refused
    // at startup, naming the setting and the feature.
    let (code, log) = petrel_startup_failure(Some("enable-module-command yes\n"), &[]);
    assert_eq!(code, Some(1));
    assert!(log.contains("modules"), "{log}");
}
