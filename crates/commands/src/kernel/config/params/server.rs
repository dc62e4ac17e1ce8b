//! The process: databases, worker threads, logging, daemonizing, the working directory.

use super::super::settings::*;
use super::super::values::*;
use super::super::Param;
use std::path::PathBuf;

pub static SERVER: &[Param] = &[
    p!(
        "databases",
        false,
        "16",
        |s| s.databases.to_string(),
        |s, v| {
            s.databases = int_in(v, 1, i32::MAX as i64)? as usize;
            Ok(())
        }
    ),
    Param {
        name: "threads",
        aliases: &[],
        mutable: false,
        default: default_threads,
        get: |s| s.threads.to_string(),
        set: |s, v| {
            s.threads = int_in(v, 1, 1024)? as usize;
            Ok(())
        },
    },
    p!(
        "busy-poll",
        true,
        "50",
        |s| s.busy_poll_us.to_string(),
        |s, v| {
            s.busy_poll_us = int_in(v, 0, 10_000)? as u64;
            Ok(())
        }
    ),
    p!(
        "loglevel",
        true,
        "notice",
        |s| LogLevel::NAMES[s.loglevel as usize].to_string(),
        |s, v| {
            s.loglevel = LogLevel::from_index(enum_of(v, LogLevel::NAMES)?);
            Ok(())
        }
    ),
    p!("logfile", false, "", |s| s.logfile.clone(), |s, v| {
        s.logfile = v.to_string();
        Ok(())
    }),
    p!(
        "daemonize",
        false,
        "no",
        |s| fmt_bool(s.daemonize),
        |s, v| {
            s.daemonize = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "disable-thp",
        false,
        "yes",
        |s| fmt_bool(s.disable_thp),
        |s, v| {
            s.disable_thp = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "oom-score-adj",
        true,
        "no",
        |s| crate::base::oom_score::MODE_NAMES[s.oom_score_adj].to_string(),
        |s, v| {
            s.oom_score_adj = enum_of(v, crate::base::oom_score::MODE_NAMES)?;
            Ok(())
        }
    ),
    p!(
        "oom-score-adj-values",
        true,
        "0 200 800",
        |s| {
            let [a, b, c] = s.oom_score_adj_values;
            format!("{a} {b} {c}")
        },
        |s, v| {
            s.oom_score_adj_values = crate::base::oom_score::parse_values(v)?;
            Ok(())
        }
    ),
    p!(
        "supervised",
        false,
        "no",
        |s| crate::base::supervisor::MODE_NAMES[s.supervised].to_string(),
        |s, v| {
            s.supervised = enum_of(v, crate::base::supervisor::MODE_NAMES)?;
            Ok(())
        }
    ),
    p!("pidfile", false, "", |s| s.pidfile.clone(), |s, v| {
        s.pidfile = v.to_string();
        Ok(())
    }),
    Param {
        name: "dir",
        aliases: &[],
        mutable: true,
        default: || {
            std::env::current_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| ".".into())
        },
        get: |s| s.dir.clone(),
        set: |s, v| {
            let p = PathBuf::from(v);
            let abs = if p.is_absolute() {
                p
            } else {
                std::env::current_dir().map_err(|e| e.to_string())?.join(p)
            };
            if !abs.is_dir() {
                return Err(format!("No such file or directory: {v}"));
            }
            s.dir = abs
                .canonicalize()
                .map_err(|e| e.to_string())?
                .display()
                .to_string();
            Ok(())
        },
    },
];
