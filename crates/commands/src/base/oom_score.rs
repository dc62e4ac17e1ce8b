//! `oom-score-adj`: the process's OOM-killer score (`/proc/self/
//! oom_score_adj`) set from `oom-score-adj-values` by its role, as Redis
//! does (master: the first value, replica: the second; the third is for
//! Redis's fork child, which Petrel never has).
//!
//! Invariants: the score the process had before Petrel first changed it
//! is remembered (`BASE`) and put back when the setting goes back to
//! `no`; `relative` adds the value to it; every result is clamped to
//! -1000..=1000.

use parking_lot::Mutex;

use crate::base::log::{log, LogLevel};

/// `oom-score-adj` values, in `Settings::oom_score_adj` order (`yes` is
/// `relative`).
pub const MODE_NAMES: &[&str] = &["no", "yes", "relative", "absolute"];
const ABSOLUTE: usize = 3;

const PATH: &str = "/proc/self/oom_score_adj";

/// The score before Petrel changed it (None: not changed now).
static BASE: Mutex<Option<i32>> = Mutex::new(None);

/// The score `mode` and `values` give the process in its role.
fn target(mode: usize, values: [i32; 3], replica: bool, base: i32) -> i32 {
    let v = values[replica as usize];
    let v = if mode == ABSOLUTE { v } else { base + v };
    v.clamp(-1000, 1000)
}

/// Sets the score for `mode` (an index of [`MODE_NAMES`]) and the role,
/// or restores the original one when `mode` is `no` after a change.
/// A failure is logged as Redis logs it, and returned.
pub fn apply(mode: usize, values: [i32; 3], replica: bool) -> Result<(), String> {
    let mut base = BASE.lock();
    let val = if mode != 0 {
        let b = match *base {
            Some(b) => b,
            None => match std::fs::read_to_string(PATH) {
                Ok(t) => t.trim().parse().unwrap_or(0),
                Err(e) => return Err(logged(format!("Unable to read oom_score_adj: {e}"))),
            },
        };
        *base = Some(b);
        target(mode, values, replica, b)
    } else if let Some(b) = base.take() {
        b
    } else {
        return Ok(());
    };
    std::fs::write(PATH, format!("{val}\n"))
        .map_err(|e| logged(format!("Unable to write oom_score_adj: {e}")))
}

fn logged(msg: String) -> String {
    log(LogLevel::Warning, &msg);
    msg
}

/// `oom-score-adj-values`: three integers in -2000..=2000 (Redis's texts).
pub fn parse_values(v: &str) -> Result<[i32; 3], String> {
    let words: Vec<&str> = v.split_whitespace().collect();
    if words.len() != 3 {
        return Err("wrong number of arguments".into());
    }
    let mut out = [0i32; 3];
    for (o, w) in out.iter_mut().zip(&words) {
        *o = w
            .parse::<i32>()
            .ok()
            .filter(|n| (-2000..=2000).contains(n))
            .ok_or("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_follow_role_mode_and_clamp() {
        let v = [0, 200, 800];
        assert_eq!(target(1, v, false, 100), 100);
        assert_eq!(target(2, v, true, 100), 300);
        assert_eq!(target(3, v, true, 100), 200);
        assert_eq!(target(3, [-2000, 2000, 0], false, 0), -1000);
        assert_eq!(target(1, [900, 0, 0], false, 500), 1000);
    }

    #[test]
    fn values_parse_as_redis() {
        assert_eq!(parse_values("0 200 800"), Ok([0, 200, 800]));
        assert_eq!(parse_values(" -5  6 7 "), Ok([-5, 6, 7]));
        assert_eq!(parse_values("1 2"), Err("wrong number of arguments".into()));
        assert!(parse_values("1 2 2001")
            .unwrap_err()
            .contains("between -2000 and 2000"));
        assert!(parse_values("1 2 x").is_err());
    }
}
