//! The 2014 SkullWhist REST API's request fields, manager side
//! (`croupier_dialects::skullwhist_rest`): a `bid` or `play` body read
//! leniently (numbers as strings, `H05`-style cards) and checked against a
//! game in progress. Each field reads as it did from a
//! `serde_json::Value` object, which the server parsed bodies into before
//! issue 53.
#![no_main]
use croupier_dialects::skullwhist_rest::{
    decode_bid, decode_play, int_field, parse_card, str_field, Fields, Refusal,
};
use serde_json::Value;
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
    let rest = input.rest();
    let as_value = serde_json::from_slice::<Value>(rest);
    let Ok(body) = Fields::parse(rest) else {
        assert!(
            !matches!(as_value, Ok(Value::Object(_))),
            "an object refused: {as_value:?}"
        );
        return;
    };
    let Ok(Value::Object(object)) = as_value else {
        panic!("not an object as a Value, but read as fields");
    };
    for key in ["session", "bid", "card", "game", "name"] {
        let old_str = match object.get(key) {
            None | Some(Value::Null) => Err(Refusal(format!("missing key '{key}'"))),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(Refusal(format!("key '{key}' must be a string"))),
        };
        assert_eq!(str_field(&body, key).map(|s| s.into_owned()), old_str, "{key}");
        let bad = || Refusal(format!("key '{key}' must be an integer"));
        let old_int = match object.get(key) {
            None | Some(Value::Null) => Err(Refusal(format!("missing key '{key}'"))),
            Some(Value::Number(n)) => n.as_i64().ok_or_else(bad),
            Some(Value::String(s)) => s.trim().parse::<i64>().map_err(|_| bad()),
            Some(_) => Err(bad()),
        };
        assert_eq!(int_field(&body, key), old_int, "{key}");
    }
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
        if let Ok(card) = parse_card(&raw) {
            if let Ok(a) = decode_play(&game, seat, card) {
                assert!(
                    game.check(seat, a).is_ok(),
                    "card {raw} decoded as illegal {a}"
                );
            }
        }
    }
});
