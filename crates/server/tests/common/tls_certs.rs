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

/// A self-signed CA in `dir`: `{name}.key` and `{name}.crt` (30 days, an
/// RSA 2048 key), subject `/CN={cn}`.
pub fn make_ca(dir: &Path, name: &str, cn: &str) {
    let (key, crt, subj) = (
        format!("{name}.key"),
        format!("{name}.crt"),
        format!("/CN={cn}"),
    );
    openssl(
        dir,
        &[
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &crt,
            "-days", "30", "-subj", &subj,
        ],
    );
}

/// A key and certificate `{name}.key`/`{name}.crt` in `dir`, subject
/// `/CN={cn}`, signed by the CA `{ca}.key`/`{ca}.crt` with the
/// extensions of the file `ext` (30 days).
pub fn issue_cert(dir: &Path, name: &str, ca: &str, ext: &str, cn: &str) {
    let (key, csr, crt, subj) = (
        format!("{name}.key"),
        format!("{name}.csr"),
        format!("{name}.crt"),
        format!("/CN={cn}"),
    );
    openssl(
        dir,
        &[
            "req", "-newkey", "rsa:2048", "-nodes", "-keyout", &key, "-out", &csr, "-subj", &subj,
        ],
    );
    let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-out",
            &crt,
            "-days",
            "30",
            "-extfile",
            ext,
        ],
    );
}
