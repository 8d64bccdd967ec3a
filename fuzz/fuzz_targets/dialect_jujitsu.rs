//! Psychological Jujitsu's dialect: a push bot's HTTP reply body, decoded by
//! the manager.
#![no_main]
use croupier_dialects::DialectKind;
use croupier_fuzz::{decode_in_play, Input};
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let variant = GoofspielVariant::jujitsu(vec![5, 6, 7]);
    decode_in_play::<Goofspiel>(DialectKind::Jujitsu, &variant, 2, Input::new(data));
});
