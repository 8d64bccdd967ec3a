//! The bot side of the line dialects (`croupier bot`): the manager's lines,
//! as read by a built-in strategy's stdin loop for `croupier/1` (each game),
//! `gops`, and Love Letter classic and postman.
#![no_main]
use croupier_arena::bot_side::{
    default_rules, run_croupier, run_gops, run_loveletter, ClientOptions,
};
use croupier_bots::Builtins;
use croupier_dialects::loveletter::Style;
use croupier_fuzz::Input;
use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use libfuzzer_sys::fuzz_target;

fn random<G: Builtins>() -> Box<dyn croupier_bots::Strategy<G>> {
    G::make("random").expect("every game has a random bot")
}

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let which = input.byte();
    let opts = ClientOptions {
        seed: 1,
        players: Some(2 + usize::from(input.byte() % 3)),
        goofspiel_cards: 3 + input.byte() % 29,
    };
    let lines = input.rest();
    let mut out = Vec::new();
    let _ = match which % 6 {
        0 => run_croupier(random::<Goofspiel>(), &opts, lines, &mut out),
        1 => run_croupier(random::<LoveLetter>(), &opts, lines, &mut out),
        2 => run_croupier(random::<SkullWhist>(), &opts, lines, &mut out),
        3 => run_gops(random::<Goofspiel>(), &opts, lines, &mut out),
        4 => {
            let rules = default_rules(Style::Classic);
            run_loveletter(
                random::<LoveLetter>(),
                Style::Classic,
                &rules,
                &opts,
                lines,
                &mut out,
            )
        }
        _ => {
            let rules = default_rules(Style::Postman);
            run_loveletter(
                random::<LoveLetter>(),
                Style::Postman,
                &rules,
                &opts,
                lines,
                &mut out,
            )
        }
    };
});
