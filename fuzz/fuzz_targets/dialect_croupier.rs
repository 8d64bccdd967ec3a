//! The Croupier JSON dialect (`croupier/1`): a bot's answer line, decoded by
//! the manager in a game of Goofspiel, Love Letter or SkullWhist.
#![no_main]
use croupier_dialects::DialectKind;
use croupier_fuzz::{decode_in_play, Input};
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::Game;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let k = DialectKind::Croupier;
    match input.byte() % 3 {
        0 => decode_in_play::<Goofspiel>(k, &Default::default(), 2, input),
        1 => {
            let seats = 2 + usize::from(input.byte() % 3);
            decode_in_play::<LoveLetter>(k, &Default::default(), seats, input)
        }
        _ => decode_in_play::<SkullWhist>(k, &<SkullWhist as Game>::Variant::default(), 2, input),
    }
});
