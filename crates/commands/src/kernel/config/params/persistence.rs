//! Persistence (RDB save points, the append-only file).

use super::super::Param;

pub static PERSISTENCE: &[Param] = &[
    // Persistence is not implemented yet: these report the truth (nothing is
    // saved) and refuse values that would promise otherwise.
    p!("save", true, "", |s| s.save.clone(), |s, v| {
        if !v.trim().is_empty() {
            return Err("persistence (RDB save points) is not supported by this server yet".into());
        }
        s.save = String::new();
        Ok(())
    }),
];
