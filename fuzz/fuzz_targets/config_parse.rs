//! Feeds arbitrary text to the connection-string parsers (URL and
//! `key=value`, with and without `pool_*` parameters): they must answer
//! with a config or an error, never panic; and a password given in the
//! input must never show in the error or the `Debug` output.

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgpipe::{Config, PoolConfig};

const SECRET: &str = "FuzzSecretPw";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for input in [
        text.to_string(),
        format!("postgres://u:{SECRET}@{text}"),
        format!("postgres://u@h/db?password={SECRET}&{text}"),
        format!("host=h password={SECRET} {text}"),
    ] {
        let shown = match Config::parse(&input) {
            Ok(config) => format!("{config:?}"),
            Err(e) => format!("{e} {e:?}"),
        };
        let pooled = match PoolConfig::from_url(&input) {
            Ok((config, pool)) => format!("{config:?} {pool:?}"),
            Err(e) => format!("{e} {e:?}"),
        };
        // The fuzzer's own text may spell the secret; only check when it
        // does not.
        if !text.contains(SECRET) {
            assert!(!shown.contains(SECRET), "{shown}");
            assert!(!pooled.contains(SECRET), "{pooled}");
        }
    }
});
