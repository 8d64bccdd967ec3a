//! The HackSoc Love Letter manager's dialect (classic): a bot's `play ...`
//! line, decoded by the manager at a table of 2 to 4.
#![no_main]
use croupier_dialects::DialectKind;
use croupier_fuzz::{decode_in_play, Input};
use croupier_rules::loveletter::{LoveLetter, LoveLetterVariant};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let seats = 2 + usize::from(input.byte() % 3);
    let variant = LoveLetterVariant::standard();
    decode_in_play::<LoveLetter>(DialectKind::LoveLetter, &variant, seats, input);
});
