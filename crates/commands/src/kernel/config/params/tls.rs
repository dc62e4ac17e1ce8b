//! TLS settings, named and defaulted as in Redis 7.0. The server binary
//! builds its TLS context (rustls) from them at startup and again when
//! CONFIG SET changes any of them (`ConfigStore::set_tls_hook`): a context
//! that cannot be built (a missing or invalid file) fails the CONFIG SET
//! and the old context stays.
//!
//! Petrel uses rustls, which implements TLSv1.2 and TLSv1.3 with the
//! ECDHE AEAD suites only. `tls-protocols`, `tls-ciphers` and
//! `tls-ciphersuites` are checked here against what rustls has: a name it
//! does not implement is refused when set (Redis, which hands the list to
//! OpenSSL, would refuse it only when the context is built).
//!
//! `tls-replication`, `tls-cluster` and the `tls-client-*` files are
//! stored for the replication and cluster links.

use super::super::settings::TlsAuthClients;
use super::super::values::*;
use super::super::Param;

/// `tls-auth-clients` values, Redis's order.
pub const AUTH_CLIENTS_NAMES: &[&str] = &["no", "yes", "optional"];

/// TLSv1.2 suites: (OpenSSL name, rustls `CipherSuite` name).
pub const TLS12_SUITES: &[(&str, &str)] = &[
    (
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    (
        "ECDHE-RSA-AES256-GCM-SHA384",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "ECDHE-RSA-AES128-GCM-SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "ECDHE-RSA-CHACHA20-POLY1305",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
];

/// TLSv1.3 suites: (IANA/OpenSSL name, rustls `CipherSuite` name).
pub const TLS13_SUITES: &[(&str, &str)] = &[
    ("TLS_AES_256_GCM_SHA384", "TLS13_AES_256_GCM_SHA384"),
    ("TLS_AES_128_GCM_SHA256", "TLS13_AES_128_GCM_SHA256"),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS13_CHACHA20_POLY1305_SHA256",
    ),
];

/// OpenSSL keywords that select every TLSv1.2 suite rustls has (all of
/// them are ECDHE with an AEAD, so each of these groups contains them all).
const ALL_KEYWORDS: &[&str] = &[
    "DEFAULT", "ALL", "HIGH", "ECDHE", "EECDH", "kEECDH", "AEAD", "TLSv1.2", "SECURE",
];

fn tokens(v: &str) -> impl Iterator<Item = &str> {
    v.split([':', ',', ' ', '\t']).filter(|t| !t.is_empty())
}

/// The TLSv1.2 suites an OpenSSL-style `tls-ciphers` list selects, as
/// rustls names, in list order. Empty `v`: every suite. Names are
/// OpenSSL's (`ECDHE-RSA-AES128-GCM-SHA256`); `DEFAULT`, `ALL`, `HIGH`
/// (and a few other keywords naming groups that contain all of rustls's
/// suites) select all; `!name`/`-name` remove (removing something rustls
/// does not have is a no-op); `@STRENGTH`/`@SECLEVEL=n` are ignored.
pub fn tls12_suites(v: &str) -> Result<Vec<&'static str>, String> {
    if v.trim().is_empty() {
        return Ok(TLS12_SUITES.iter().map(|s| s.1).collect());
    }
    let mut out: Vec<&'static str> = Vec::new();
    for t in tokens(v) {
        if t.starts_with('@') {
            continue;
        }
        let (remove, name) = match t.strip_prefix(['!', '-']) {
            Some(n) => (true, n),
            None => (false, t.strip_prefix('+').unwrap_or(t)),
        };
        let named: Vec<&'static str> = if ALL_KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(name))
        {
            TLS12_SUITES.iter().map(|s| s.1).collect()
        } else if let Some(s) = TLS12_SUITES
            .iter()
            .find(|s| s.0.eq_ignore_ascii_case(name) || s.1.eq_ignore_ascii_case(name))
        {
            vec![s.1]
        } else if remove {
            Vec::new()
        } else {
            return Err(format!(
                "Unsupported TLSv1.2 cipher '{name}' in tls-ciphers (rustls implements: {})",
                TLS12_SUITES
                    .iter()
                    .map(|s| s.0)
                    .collect::<Vec<_>>()
                    .join(":")
            ));
        };
        for n in named {
            if remove {
                out.retain(|x| *x != n);
            } else if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    Ok(out)
}

/// The TLSv1.3 suites a `tls-ciphersuites` list (`:`-separated IANA
/// names) selects, as rustls names. Empty `v`: every suite.
pub fn tls13_suites(v: &str) -> Result<Vec<&'static str>, String> {
    if v.trim().is_empty() {
        return Ok(TLS13_SUITES.iter().map(|s| s.1).collect());
    }
    let mut out = Vec::new();
    for t in tokens(v) {
        let Some(s) = TLS13_SUITES
            .iter()
            .find(|s| s.0.eq_ignore_ascii_case(t) || s.1.eq_ignore_ascii_case(t))
        else {
            return Err(format!(
                "Unsupported TLSv1.3 cipher suite '{t}' in tls-ciphersuites (rustls implements: {})",
                TLS13_SUITES
                    .iter()
                    .map(|s| s.0)
                    .collect::<Vec<_>>()
                    .join(":")
            ));
        };
        if !out.contains(&s.1) {
            out.push(s.1);
        }
    }
    Ok(out)
}

/// The protocol versions `tls-protocols` enables: (TLSv1.2, TLSv1.3).
/// Empty: both, Redis 7.0's default.
pub fn protocols(v: &str) -> Result<(bool, bool), String> {
    if v.trim().is_empty() {
        return Ok((true, true));
    }
    let (mut v12, mut v13) = (false, false);
    for t in v.split_whitespace() {
        if t.eq_ignore_ascii_case("TLSv1.2") {
            v12 = true;
        } else if t.eq_ignore_ascii_case("TLSv1.3") {
            v13 = true;
        } else if t.eq_ignore_ascii_case("TLSv1") || t.eq_ignore_ascii_case("TLSv1.1") {
            return Err(format!(
                "{t} is not supported: Petrel's TLS (rustls) implements TLSv1.2 and TLSv1.3 only"
            ));
        } else {
            return Err(
                "Invalid tls-protocols specified. Use a combination of 'TLSv1.2' and 'TLSv1.3'."
                    .into(),
            );
        }
    }
    Ok((v12, v13))
}

fn file_param(v: &str) -> String {
    v.to_string()
}

pub static TLS: &[Param] = &[
    p!("tls-port", true, "0", |s| s.tls.port.to_string(), |s, v| {
        s.tls.port = int_in(v, 0, 65535)? as u16;
        Ok(())
    }),
    p!(
        "tls-cert-file",
        true,
        "",
        |s| s.tls.cert_file.clone(),
        |s, v| {
            s.tls.cert_file = file_param(v);
            Ok(())
        }
    ),
    p!(
        "tls-key-file",
        true,
        "",
        |s| s.tls.key_file.clone(),
        |s, v| {
            s.tls.key_file = file_param(v);
            Ok(())
        }
    ),
    p!(
        "tls-key-file-pass",
        true,
        "",
        |s| s.tls.key_file_pass.clone(),
        |s, v| {
            s.tls.key_file_pass = v.to_string();
            Ok(())
        }
    ),
    p!(
        "tls-client-cert-file",
        true,
        "",
        |s| s.tls.client_cert_file.clone(),
        |s, v| {
            s.tls.client_cert_file = file_param(v);
            Ok(())
        }
    ),
    p!(
        "tls-client-key-file",
        true,
        "",
        |s| s.tls.client_key_file.clone(),
        |s, v| {
            s.tls.client_key_file = file_param(v);
            Ok(())
        }
    ),
    p!(
        "tls-client-key-file-pass",
        true,
        "",
        |s| s.tls.client_key_file_pass.clone(),
        |s, v| {
            s.tls.client_key_file_pass = v.to_string();
            Ok(())
        }
    ),
    p!(
        "tls-ca-cert-file",
        true,
        "",
        |s| s.tls.ca_cert_file.clone(),
        |s, v| {
            s.tls.ca_cert_file = file_param(v);
            Ok(())
        }
    ),
    p!(
        "tls-ca-cert-dir",
        true,
        "",
        |s| s.tls.ca_cert_dir.clone(),
        |s, v| {
            s.tls.ca_cert_dir = file_param(v);
            Ok(())
        }
    ),
    p!(
        "tls-auth-clients",
        true,
        "yes",
        |s| AUTH_CLIENTS_NAMES[s.tls.auth_clients as usize].to_string(),
        |s, v| {
            s.tls.auth_clients = [
                TlsAuthClients::No,
                TlsAuthClients::Yes,
                TlsAuthClients::Optional,
            ][enum_of(v, AUTH_CLIENTS_NAMES)?];
            Ok(())
        }
    ),
    p!(
        "tls-protocols",
        true,
        "",
        |s| s.tls.protocols.clone(),
        |s, v| {
            protocols(v)?;
            s.tls.protocols = v.to_string();
            Ok(())
        }
    ),
    p!(
        "tls-ciphers",
        true,
        "",
        |s| s.tls.ciphers.clone(),
        |s, v| {
            tls12_suites(v)?;
            s.tls.ciphers = v.to_string();
            Ok(())
        }
    ),
    p!(
        "tls-ciphersuites",
        true,
        "",
        |s| s.tls.ciphersuites.clone(),
        |s, v| {
            tls13_suites(v)?;
            s.tls.ciphersuites = v.to_string();
            Ok(())
        }
    ),
    p!(
        "tls-prefer-server-ciphers",
        true,
        "no",
        |s| fmt_bool(s.tls.prefer_server_ciphers),
        |s, v| {
            s.tls.prefer_server_ciphers = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "tls-session-caching",
        true,
        "yes",
        |s| fmt_bool(s.tls.session_caching),
        |s, v| {
            s.tls.session_caching = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "tls-session-cache-size",
        true,
        "20480",
        |s| s.tls.session_cache_size.to_string(),
        |s, v| {
            s.tls.session_cache_size = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "tls-session-cache-timeout",
        true,
        "300",
        |s| s.tls.session_cache_timeout.to_string(),
        |s, v| {
            s.tls.session_cache_timeout = int_in(v, 0, i32::MAX as i64)? as u64;
            Ok(())
        }
    ),
    p!(
        "tls-replication",
        true,
        "no",
        |s| fmt_bool(s.tls.replication),
        |s, v| {
            s.tls.replication = parse_bool(v)?;
            Ok(())
        }
    ),
    p!(
        "tls-cluster",
        true,
        "no",
        |s| fmt_bool(s.tls.cluster),
        |s, v| {
            s.tls.cluster = parse_bool(v)?;
            Ok(())
        }
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cipher_lists() {
        assert_eq!(tls12_suites("").unwrap().len(), 6);
        assert_eq!(tls12_suites("HIGH:!aNULL:!MD5").unwrap().len(), 6);
        assert_eq!(
            tls12_suites("ECDHE-RSA-AES128-GCM-SHA256").unwrap(),
            vec!["TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"]
        );
        assert_eq!(
            tls12_suites("DEFAULT:!ECDHE-RSA-AES128-GCM-SHA256")
                .unwrap()
                .len(),
            5
        );
        let e = tls12_suites("AES128-SHA").unwrap_err();
        assert!(e.contains("'AES128-SHA'"), "{e}");
        assert_eq!(
            tls13_suites("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256").unwrap(),
            vec!["TLS13_CHACHA20_POLY1305_SHA256", "TLS13_AES_128_GCM_SHA256"]
        );
        assert!(tls13_suites("TLS_AES_128_CCM_SHA256").is_err());
    }

    #[test]
    fn protocol_lists() {
        assert_eq!(protocols("").unwrap(), (true, true));
        assert_eq!(protocols("TLSv1.3").unwrap(), (false, true));
        assert_eq!(protocols("tlsv1.2 TLSv1.3").unwrap(), (true, true));
        assert!(protocols("TLSv1.1").unwrap_err().contains("not supported"));
        assert!(protocols("SSLv3").is_err());
    }
}
