//! The bot side of Psychological Jujitsu: the match document a push bot is
//! sent, read back as an observation and legal bids.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok((obs, legal)) = croupier_dialects::bot::jujitsu::decision(&text) {
        assert!(!legal.is_empty());
        assert!(legal.iter().all(|b| obs.hand.contains(&b.0)));
    }
});
