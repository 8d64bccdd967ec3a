//! Love Letter at the table: each seat's rounds won, discards, protection
//! and whether it is out of the round; a play is its card, with one button
//! per target and guess where the card takes them.

use croupier_rules::loveletter::{Card, LoveLetter, LoveLetterObservation, Play};
use croupier_rules::Seat;

use super::Tabled;
use crate::html::Names;
use crate::html::{html, ll_card, Markup};

impl Tabled for LoveLetter {
    fn seat_facts(o: &LoveLetterObservation, seat: Seat, _: &Names) -> Markup {
        let i = seat.index();
        let Some(p) = o.players.get(i) else {
            return html! {};
        };
        html! {
            "rounds won " b { (o.wins.get(i).copied().unwrap_or(0)) } span class="muted" { " (first to " (o.wins_needed) ")" }
            @if !p.in_round { " " span class="tag fault" { "out this round" } }
            @else if p.protected { " " span class="tag" { "protected" } }
            div class="discards" {
                "discards "
                @if p.played.is_empty() { span class="muted" { "none" } }
                @for c in &p.played { (ll_card(*c)) }
                @if !p.out_hand.is_empty() {
                    " · showed " @for c in &p.out_hand { (ll_card(*c)) }
                }
            }
        }
    }

    fn centre(o: &LoveLetterObservation, names: &Names) -> Markup {
        html! {
            p {
                "Round " b { (o.round + 1) } " · " b { (o.deck) } " cards in the deck · "
                (names.of(o.first)) " opened the round"
            }
        }
    }

    fn own_hand(o: &LoveLetterObservation) -> Vec<Markup> {
        o.hand.iter().map(|c| ll_card(*c)).collect()
    }

    fn public_hands(_: &LoveLetterObservation) -> Vec<Option<Vec<Markup>>> {
        Vec::new()
    }

    fn moves(o: &LoveLetterObservation, legal: &[(Play, String)], names: &Names) -> Markup {
        let plays_of = |card: Card| -> Vec<(Option<Seat>, Option<Card>, &String)> {
            legal
                .iter()
                .filter_map(|(a, t)| match a {
                    Play::Play {
                        card: c,
                        target,
                        guess,
                    } if *c == card => Some((*target, *guess, t)),
                    _ => None,
                })
                .collect()
        };
        // Two of the same card play the same way: drawn once, marked ×2.
        let mut cards = o.hand.clone();
        cards.dedup();
        let twice = cards.len() < o.hand.len();
        let forfeit = legal.iter().find(|(a, _)| *a == Play::Forfeit);
        html! {
            p class="hint" { "Play one of your two cards:" }
            div class="ll-moves" {
                @for c in &cards {
                    @let plays = plays_of(*c);
                    div class="ll-card-moves" {
                        @if twice { span class="muted" { "two of:" } }
                        @match plays.as_slice() {
                            [] => span class="unplayable" title="this card may not be played now" { (ll_card(*c)) },
                            [(None, None, text)] => button type="submit" name="action" value=(text) class="move card-move" title={ "play " (c.name()) } { (ll_card(*c)) },
                            more => {
                                (ll_card(*c))
                                // One line per target; a guess is a button
                                // of its own on the target's line.
                                @let targets = {
                                    let mut t: Vec<Option<Seat>> = more.iter().map(|m| m.0).collect();
                                    t.dedup();
                                    t
                                };
                                @for t in &targets {
                                    span class="options" {
                                        @let on: Vec<_> = more.iter().filter(|m| m.0 == *t).collect();
                                        @if on.iter().any(|m| m.1.is_some()) {
                                            span class="on" { @if let Some(t) = t { "on " (names.of(*t)) ", naming:" } @else { "naming:" } }
                                            @for (_, guess, text) in &on {
                                                button type="submit" name="action" value=(text) class="move option" {
                                                    @match guess { Some(g) => (g.name()), None => "no guess" }
                                                }
                                            }
                                        } @else {
                                            @for (target, _, text) in &on {
                                                button type="submit" name="action" value=(text) class="move option" {
                                                    @match target { Some(t) => { "on " (names.of(*t)) }, None => "play it" }
                                                }
                                            }
                                        }
                                    }
                                }
                            },
                        }
                    }
                }
                @if let Some((_, text)) = forfeit {
                    button type="submit" name="action" value=(text) class="move option giveup" { "give up the round" }
                }
            }
        }
    }
}
