//! SkullWhist at the table: each seat's bid (once both are revealed) and
//! tricks, the trick in play and the last one taken; bids are numbered
//! buttons, plays are the cards of the hand.

use croupier_rules::skullwhist::{
    Card, Phase, SkullWhist, SkullWhistAction, SkullWhistObservation,
};
use croupier_rules::Seat;

use super::Tabled;
use crate::html::Names;
use crate::html::{html, sw_card, Markup};

fn card(c: Card) -> Markup {
    sw_card(&c.to_string())
}

impl Tabled for SkullWhist {
    fn seat_facts(o: &SkullWhistObservation, seat: Seat, _: &Names) -> Markup {
        let mine = seat == o.seat;
        let bid = if mine { o.my_bid } else { o.opponent_bid };
        // Seat 0's bid in a public view, or your own: shown once made.
        let tricks = o.tricks_won[usize::from(!mine)];
        html! {
            @match (bid, o.phase) {
                (Some(b), _) => { "bid " b { (b) } },
                (None, Phase::Bidding) => span class="muted" { "bidding" },
                (None, _) => span class="muted" { "bid hidden" },
            }
            " · tricks " b { (tricks) }
        }
    }

    fn centre(o: &SkullWhistObservation, names: &Names) -> Markup {
        html! {
            @match o.phase {
                Phase::Bidding => p { "Bidding: each seat seals a bid of how many tricks it will take." },
                Phase::Playing => {
                    p class="trick" {
                        "Trick " b { (o.trick) } " of 13: "
                        @match (o.leader, o.lead_card) {
                            (Some(l), Some(c)) => { (names.of(l)) " led " (card(c)) },
                            (Some(l), None) => { (names.of(l)) " to lead" },
                            _ => {},
                        }
                    }
                },
                Phase::Over => p { "All tricks are played." },
            }
            p class="muted rule" { "Spades are trumps; cards rank from 1 (low) to 13 (high)." }
            @if let Some(t) = o.history.last() {
                p class="last-trick" {
                    "Last trick: " (names.of(t.leader)) " " (card(t.lead)) ", "
                    (names.of(Seat(1 - t.leader.0))) " " (card(t.follow)) " → " b { (names.of(t.winner)) }
                }
            }
        }
    }

    fn own_hand(o: &SkullWhistObservation) -> Vec<Markup> {
        o.hand.iter().map(|c| card(*c)).collect()
    }

    fn public_hands(_: &SkullWhistObservation) -> Vec<Option<Vec<Markup>>> {
        Vec::new()
    }

    fn moves(o: &SkullWhistObservation, legal: &[(SkullWhistAction, String)], _: &Names) -> Markup {
        let bids: Vec<(u8, &String)> = legal
            .iter()
            .filter_map(|(a, t)| match a {
                SkullWhistAction::Bid(b) => Some((*b, t)),
                SkullWhistAction::Play(_) => None,
            })
            .collect();
        html! {
            @if !bids.is_empty() {
                p class="hint" { "Your bid: how many tricks you will take." }
                div class="bids" {
                    @for (b, text) in &bids {
                        button type="submit" name="action" value=(text) class="move bid" title={ "bid " (b) } { (b) }
                    }
                }
                p class="hint" { "Your hand:" }
                span class="hand" { @for c in &o.hand { (card(*c)) } }
            } @else {
                p class="hint" { "Play a card from your hand (you must follow suit if you can):" }
                span class="hand" {
                    @for c in &o.hand {
                        @match legal.iter().find(|(a, _)| *a == SkullWhistAction::Play(*c)) {
                            Some((_, text)) => button type="submit" name="action" value=(text) class="move card-move" title={ "play " (c) } { (card(*c)) },
                            None => span class="unplayable" title="you must follow suit" { (card(*c)) },
                        }
                    }
                }
            }
        }
    }
}
