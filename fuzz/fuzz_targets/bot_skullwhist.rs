//! The bot side of the 2014 SkullWhist REST API (`croupier bot` against a
//! SkullWhist server): replies read as the client reads them, one per line
//! of the input — a `new-game` reply, `status` replies, an `old-game` record.
//! Checks that whenever the view says it is the bot's turn, it has a legal
//! card to play (a strategy asked with no legal action could not answer).
#![no_main]
use croupier_dialects::bot::skullwhist::{parse_cards, parse_reply, parse_status, GameView, Reply};
use croupier_rules::skullwhist::SkullWhistAction;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut lines = data.split(|b| *b == b'\n');
    let Some(first) = lines.next() else { return };
    let Ok(Reply::Success(fields)) = parse_reply("new-game", 200, first) else {
        return;
    };
    let Ok(hand) = parse_cards(&fields) else {
        return;
    };
    let mut view = GameView::new(hand);
    let (_, bids) = view.bid_turn();
    assert!(!bids.is_empty());
    view.record_bid(3);
    for line in lines {
        match parse_reply("status", 200, line) {
            Ok(Reply::Success(fields)) => {
                if fields.contains_key("bot1") {
                    let _ = view.finish(&fields, 1);
                    return;
                }
                let Ok(status) = parse_status(&fields) else {
                    continue;
                };
                if view.update(&status).is_err() || !status.your_turn {
                    continue;
                }
                let (_, legal) = view.play_turn();
                assert!(
                    !legal.is_empty(),
                    "the bot's turn with no card to play: {status:?}"
                );
                if let Some(SkullWhistAction::Play(card)) = legal.first().copied() {
                    view.record_play(card).expect("a legal card is in hand");
                }
            }
            _ => continue,
        }
        let _ = view.take_events();
    }
});
