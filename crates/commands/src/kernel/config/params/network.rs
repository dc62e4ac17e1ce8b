//! Listening and connection settings: addresses, ports, the unix socket, protected mode, the password, client counts and timeouts.

use super::super::values::*;
use super::super::Param;

pub static NETWORK: &[Param] = &[
    p!("port", true, "6379", |s| s.port.to_string(), |s, v| {
        s.port = int_in(v, 0, 65535)? as u16;
        Ok(())
    }),
    p!(
        "bind",
        true,
        "127.0.0.1 -::1",
        |s| s.bind.join(" "),
        |s, v| {
            s.bind = v.split_whitespace().map(String::from).collect();
            Ok(())
        }
    ),
    p!("unixsocket", false, "", |s| s.unixsocket.clone(), |s, v| {
        s.unixsocket = v.to_string();
        Ok(())
    }),
    p!(
        "unixsocketperm",
        false,
        "0",
        |s| format!("{:o}", s.unixsocketperm),
        |s, v| {
            s.unixsocketperm = u32::from_str_radix(v, 8)
                .map_err(|_| "argument couldn't be parsed into an integer")?;
            if s.unixsocketperm > 0o777 {
                return Err("argument must be between 0 and 777 inclusive".into());
            }
            Ok(())
        }
    ),
    p!(
        "protected-mode",
        true,
        "yes",
        |s| fmt_bool(s.protected_mode),
        |s, v| {
            s.protected_mode = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "requirepass",
        true,
        "",
        |s| s.requirepass.clone(),
        |s, v| {
            if v.len() > 512 {
                return Err("Password is longer than 512 characters".into());
            }
            s.requirepass = v.to_string();
            Ok(())
        }
    ),
    p!(
        "maxclients",
        true,
        "10000",
        |s| s.maxclients.to_string(),
        |s, v| {
            s.maxclients = int_in(v, 1, u32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!("timeout", true, "0", |s| s.timeout.to_string(), |s, v| {
        s.timeout = int_in(v, 0, i32::MAX as i64)? as u64;
        Ok(())
    }),
    p!(
        "tcp-keepalive",
        true,
        "300",
        |s| s.tcp_keepalive.to_string(),
        |s, v| {
            s.tcp_keepalive = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "tcp-backlog",
        false,
        "511",
        |s| s.tcp_backlog.to_string(),
        |s, v| {
            s.tcp_backlog = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
];
