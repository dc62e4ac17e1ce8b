//! Client-side caching and client memory: `tracking-table-max-keys`,
//! `maxmemory-clients`.

use super::super::settings::ClientsMemory;
use super::super::values::*;
use super::super::Param;

/// `maxmemory-clients`: a memory value, or `N%` (of `maxmemory`, 1..=100).
fn parse_clients_memory(v: &str) -> Result<ClientsMemory, String> {
    const BAD: &str = "argument must be a memory or percent value";
    if let Some(n) = v.strip_suffix('%') {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BAD.into());
        }
        let p: u64 = n.parse().map_err(|_| BAD.to_string())?;
        if p > 100 {
            return Err("percentage argument must be less or equal to 100".into());
        }
        return Ok(if p == 0 {
            ClientsMemory::Bytes(0)
        } else {
            ClientsMemory::Percent(p)
        });
    }
    match parse_memory(v) {
        Some(b) if b <= i64::MAX as u64 => Ok(ClientsMemory::Bytes(b)),
        // Redis keeps the amount in a signed field where a negative value
        // is a percentage: a memory value past i64::MAX (memtoull
        // saturates, so `99999999999999999999` is u64::MAX, i.e. -1) reads
        // as that percentage.
        Some(b) => match (b as i64).unsigned_abs() {
            p @ 1..=100 => Ok(ClientsMemory::Percent(p)),
            _ => Err("percentage argument must be less or equal to 100".into()),
        },
        None => Err(BAD.into()),
    }
}

fn fmt_clients_memory(m: ClientsMemory) -> String {
    match m {
        ClientsMemory::Bytes(b) => fmt_memory(b),
        ClientsMemory::Percent(p) => format!("{p}%"),
    }
}

pub static CLIENTS: &[Param] = &[
    p!(
        "tracking-table-max-keys",
        true,
        "1000000",
        |s| s.tracking_table_max_keys.to_string(),
        |s, v| {
            s.tracking_table_max_keys = int_in(v, 0, i64::MAX)? as u64;
            Ok(())
        }
    ),
    p!(
        "maxmemory-clients",
        true,
        "0",
        |s| fmt_clients_memory(s.maxmemory_clients),
        |s, v| {
            s.maxmemory_clients = parse_clients_memory(v)?;
            Ok(())
        }
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_memory_values() {
        assert_eq!(parse_clients_memory("10%"), Ok(ClientsMemory::Percent(10)));
        assert_eq!(parse_clients_memory("0%"), Ok(ClientsMemory::Bytes(0)));
        assert_eq!(
            parse_clients_memory("1mb"),
            Ok(ClientsMemory::Bytes(1 << 20))
        );
        assert!(parse_clients_memory("101%")
            .unwrap_err()
            .contains("less or equal to 100"));
        assert!(parse_clients_memory("-1").is_err());
        assert!(parse_clients_memory("50%x").is_err());
        assert_eq!(fmt_clients_memory(ClientsMemory::Percent(100)), "100%");
    }
}
