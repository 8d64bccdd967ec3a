//! The GOPS quiz runner's dialect: a bot's bid line, decoded by the manager.
#![no_main]
use croupier_dialects::DialectKind;
use croupier_fuzz::{decode_in_play, Input};
use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    decode_in_play::<Goofspiel>(
        DialectKind::Gops,
        &GoofspielVariant::gops(),
        2,
        Input::new(data),
    );
});
