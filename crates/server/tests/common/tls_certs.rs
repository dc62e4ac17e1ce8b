//! Certificates made at test time with the `openssl` command: a directory
//! that lives as long as the test binary ([`Certs`]) and the command
//! runner. Each TLS test file has its own recipe (which CAs, which
//! certificates).

#![allow(dead_code)]

use super::TempDir;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The certificates of one test binary (made once, in a temporary dir).
pub struct Certs {
    pub _dir: TempDir,
    pub path: PathBuf,
}

impl Certs {
    /// The path of `name` in the certificates' directory.
    pub fn file(&self, name: &str) -> String {
        self.path.join(name).display().to_string()
    }
}

/// Runs `openssl args...` in `dir`; panics with its stderr when it fails.
pub fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
