//! The ladder's settings file (`croupier serve --ladder FILE`, TOML).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = croupier_competition::settings::parse_ladder(&text);
});
