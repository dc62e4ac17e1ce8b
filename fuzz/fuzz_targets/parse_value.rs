//! Feeds arbitrary bytes to the client-side reply parser: no panic, the
//! consumed length is in bounds, every prefix of a complete reply is
//! incomplete or an error, and a parsed value re-encodes to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use resp::parse_value;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((v, n))) = parse_value(data) {
        assert!(n > 0 && n <= data.len());
        assert_eq!(v.encode(), &data[..n], "re-encoding differs");
        if n > 1 {
            assert!(!matches!(parse_value(&data[..n - 1]), Ok(Some(_))));
        }
    }
});
