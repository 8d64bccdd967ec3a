//! The 2014 SkullWhist REST API's request fields, manager side
//! (`croupier_dialects::skullwhist_rest`): a `bid` or `play` body read
//! leniently (numbers as strings, `H05`-style cards) and checked against a
//! game in progress.
#![no_main]
use croupier_dialects::skullwhist_rest::{
    decode_bid, decode_play, int_field, parse_card, str_field,
};
use croupier_fuzz::Input;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, Seat};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let seed = u64::from(input.byte());
    let moves = usize::from(input.byte() % 32);
    let moves = input.bytes(moves);
    let seat = Seat(input.byte() % 2);
    let Ok(serde_json::Value::Object(body)) = serde_json::from_slice(input.rest()) else {
        return;
    };
    let Ok(mut game) = SkullWhist::new(&Default::default(), 2, seed) else {
        return;
    };
    for &m in moves {
        let Some(seat) = game.to_act().first() else {
            break;
        };
        let legal = game.legal_vec(seat);
        if legal.is_empty() {
            break;
        }
        game.apply(seat, legal[usize::from(m) % legal.len()])
            .expect("a legal action applies");
    }
    let _ = str_field(&body, "session");
    if let Ok(bid) = int_field(&body, "bid") {
        if let Ok(a) = decode_bid(&game, seat, bid) {
            assert!(
                game.check(seat, a).is_ok(),
                "bid {bid} decoded as illegal {a}"
            );
        }
    }
    if let Ok(raw) = str_field(&body, "card") {
        if let Ok(card) = parse_card(raw) {
            if let Ok(a) = decode_play(&game, seat, card) {
                assert!(
                    game.check(seat, a).is_ok(),
                    "card {raw} decoded as illegal {a}"
                );
            }
        }
    }
});
