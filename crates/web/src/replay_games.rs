//! How each game draws its replay: SkullWhist hands, bids and every trick
//! with leader and follower; Love Letter every turn with its effect and
//! every hand; Goofspiel the lot, both bids and the points.

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielEvent};
use croupier_rules::loveletter::{LoveLetter, LoveLetterEvent, Play};
use croupier_rules::skullwhist::{Card, SkullWhist, SkullWhistAction, SkullWhistEvent};
use croupier_rules::{Game, Seat};

use crate::html::{gs_card, html, ll_card, sw_card, Markup};
use crate::replay::{Names, Show};

fn card(c: Card) -> Markup {
    sw_card(&c.to_string())
}

fn hand(cards: impl IntoIterator<Item = Markup>) -> Markup {
    html! { span class="hand" { @for c in cards { (c) } } }
}

impl Show for SkullWhist {
    fn event_html(e: &SkullWhistEvent, n: &Names) -> Markup {
        match e {
            SkullWhistEvent::Deal { seat, hand: h } => {
                html! { (n.of(*seat)) " is dealt " (hand(h.iter().map(|c| card(*c)))) }
            }
            SkullWhistEvent::Sealed { seat, bid } => {
                html! { (n.of(*seat)) " seals a bid of " (bid) }
            }
            SkullWhistEvent::Bids { bids, leader } => html! {
                "bids revealed: " (n.of(Seat(0))) " " (bids[0]) ", " (n.of(Seat(1))) " " (bids[1])
                "; " (n.of(*leader)) " leads"
            },
            SkullWhistEvent::Played { seat, card: c } => {
                html! { (n.of(*seat)) " plays " (card(*c)) }
            }
            SkullWhistEvent::TrickWon { trick, winner } => {
                html! { "trick " (trick) " to " b { (n.of(*winner)) } }
            }
            SkullWhistEvent::Scored { tricks, scores } => html! {
                b { "scored" } ": " (n.of(Seat(0))) " " (tricks[0]) " tricks, " (scores[0]) " points; "
                (n.of(Seat(1))) " " (tricks[1]) " tricks, " (scores[1]) " points"
            },
            SkullWhistEvent::Forfeit { seat } => html! { b { (n.of(*seat)) " forfeits" } },
        }
    }

    fn action_html(text: &str, _: &Names) -> Markup {
        match text.parse::<SkullWhistAction>() {
            Ok(SkullWhistAction::Bid(b)) => html! { "bid " b { (b) } },
            Ok(SkullWhistAction::Play(c)) => html! { "play " (card(c)) },
            Err(_) => html! { code { (text) } },
        }
    }

    fn panel(&self, n: &Names) -> Markup {
        let o = self.observation(Seat(0));
        html! {
            div class="grid" {
                @for s in 0..2u8 {
                    @let mine = self.observation(Seat(s));
                    div class="panel" {
                        h3 { (n.of(Seat(s))) }
                        p { "bid " (mine.my_bid.map_or("–".into(), |b| b.to_string())) " · tricks " (mine.tricks_won[0]) }
                        (hand(mine.hand.iter().map(|c| card(*c))))
                    }
                }
            }
            @if let (Some(leader), Some(lead)) = (o.leader, o.lead_card) {
                p { "Trick " (o.trick) ": " (n.of(leader)) " led " (card(lead)) }
            }
            @if !o.history.is_empty() {
                div class="scroll" { table class="tricks" {
                    thead { tr {
                        th class="num" { "Trick" } th { "Leader" } th { "Led" } th class="hide-phone" { "Follower" } th { "Followed" } th { "Won by" }
                    } }
                    tbody {
                        @for (i, t) in o.history.iter().enumerate() {
                            tr {
                                td class="num" { (i + 1) }
                                td { (n.of(t.leader)) }
                                td { (card(t.lead)) }
                                td class="hide-phone" { (n.of(Seat(1 - t.leader.0))) }
                                td { (card(t.follow)) }
                                td { b { (n.of(t.winner)) } }
                            }
                        }
                    }
                } }
            }
        }
    }
}

impl Show for Goofspiel {
    fn event_html(e: &GoofspielEvent, n: &Names) -> Markup {
        match e {
            GoofspielEvent::RoundStart { round, cards } => {
                html! { b { "round " (round + 1) } " with cards 1 to " (cards) }
            }
            GoofspielEvent::Draw { card, next } => html! {
                "victory card " (gs_card(*card, "lot")) " turned"
                @if let Some(c) = next { " (next: " (c) ")" }
            },
            GoofspielEvent::Sealed { seat, card } => {
                html! { (n.of(*seat)) " seals a bid of " (card) }
            }
            GoofspielEvent::Reveal {
                bids,
                winner,
                points,
            } => html! {
                "bids " (n.of(Seat(0))) " " (gs_card(bids[0], "")) ", " (n.of(Seat(1))) " " (gs_card(bids[1], "")) ": "
                @match winner {
                    Some(w) => { b { (n.of(*w)) } " takes " (points) " points" },
                    None => "tie",
                }
            },
            GoofspielEvent::RoundEnd { points, discarded } => html! {
                "round over: " (n.of(Seat(0))) " " (points[0]) ", " (n.of(Seat(1))) " " (points[1]) " points"
                @if *discarded > 0 { "; " (discarded) " points left in the lot are discarded" }
            },
            GoofspielEvent::Forfeit { seat } => html! { b { (n.of(*seat)) " forfeits" } },
        }
    }

    fn action_html(text: &str, _: &Names) -> Markup {
        match text.parse::<Bid>() {
            Ok(Bid(b)) => html! { "bid " (gs_card(b, "")) },
            Err(_) => html! { code { (text) } },
        }
    }

    fn panel(&self, n: &Names) -> Markup {
        let o = self.observation(Seat(0));
        let sides = [
            (o.my_points, &o.hand),
            (o.opponent_points, &o.opponent_hand),
        ];
        html! {
            div class="grid" {
                @for (s, (points, cards)) in sides.into_iter().enumerate() {
                    div class="panel" {
                        h3 { (n.of(Seat(s as u8))) }
                        div class="stat" { (points) small { "points" } }
                        p { "bid cards left" }
                        (hand(cards.iter().map(|c| gs_card(*c, ""))))
                    }
                }
                div class="panel" {
                    h3 { "Lot" }
                    @if o.lot.is_empty() {
                        p class="empty" { "empty" }
                    } @else {
                        (hand(o.lot.iter().map(|c| gs_card(*c, "lot"))))
                    }
                    @if let Some(c) = o.next { p { "next: " (gs_card(c, "")) } }
                    p { "face down: " (o.undrawn.len()) }
                }
            }
            @for (r, turns) in o.history.iter().enumerate() {
                @if !turns.is_empty() {
                    h3 { "Round " (r + 1) }
                    div class="scroll" { table class="turns" {
                        thead { tr {
                            th class="num" { "Turn" } th { "Card" } th { (n.of(Seat(0))) } th { (n.of(Seat(1))) } th { "Points" }
                        } }
                        tbody {
                            @for (i, t) in turns.iter().enumerate() {
                                tr {
                                    td class="num" { (i + 1) }
                                    td { (gs_card(t.drawn, "lot")) }
                                    td { (gs_card(t.bids[0], "")) }
                                    td { (gs_card(t.bids[1], "")) }
                                    td { (t.gained[0]) " – " (t.gained[1]) }
                                }
                            }
                        }
                    } }
                }
            }
        }
    }
}

impl Show for LoveLetter {
    fn event_html(e: &LoveLetterEvent, n: &Names) -> Markup {
        match e {
            LoveLetterEvent::RoundStart { round, first } => {
                html! { b { "round " (round + 1) } "; " (n.of(*first)) " plays first" }
            }
            LoveLetterEvent::Turn { seat } => html! { (n.of(*seat)) "'s turn" },
            LoveLetterEvent::Draw { seat, card } => {
                html! { (n.of(*seat)) " draws " (ll_card(*card)) }
            }
            LoveLetterEvent::Played {
                seat,
                card,
                target,
                guess,
            } => html! {
                (n.of(*seat)) " plays " (ll_card(*card))
                @if let Some(t) = target { " on " (n.of(*t)) }
                @if let Some(g) = guess { ", naming " (ll_card(*g)) }
            },
            LoveLetterEvent::NoEffect { target, .. } => {
                html! { em { "without effect" } " on " (n.of(*target)) }
            }
            LoveLetterEvent::Swap { seat, card } => {
                html! { (n.of(*seat)) " now holds " (ll_card(*card)) }
            }
            LoveLetterEvent::Reveal { to, of, card } => {
                html! { (n.of(*to)) " sees " (n.of(*of)) "'s " (ll_card(*card)) }
            }
            LoveLetterEvent::Discard { seat, card } => {
                html! { (n.of(*seat)) " discards " (ll_card(*card)) }
            }
            LoveLetterEvent::SetAsideTaken { seat } => {
                html! { (n.of(*seat)) " takes the set-aside card" }
            }
            LoveLetterEvent::Forfeit { seat } => {
                html! { b { (n.of(*seat)) " forfeits the round" } }
            }
            LoveLetterEvent::Out { seat, cards } => html! {
                b { (n.of(*seat)) " is out" } " " (hand(cards.iter().map(|c| ll_card(*c))))
            },
            LoveLetterEvent::RoundEnd { winner, hands } => html! {
                "round to " b { (n.of(*winner)) } "; hands: "
                @for (i, (s, c)) in hands.iter().enumerate() {
                    @if i > 0 { ", " }
                    (n.of(*s)) " " (ll_card(*c))
                }
            },
            LoveLetterEvent::MatchEnd { winner } => {
                html! { b { (n.of(*winner)) " wins the match" } }
            }
        }
    }

    fn action_html(text: &str, n: &Names) -> Markup {
        match text.parse::<Play>() {
            Ok(Play::Play {
                card,
                target,
                guess,
            }) => html! {
                "play " (ll_card(card))
                @if let Some(t) = target { " on " (n.of(t)) }
                @if let Some(g) = guess { " naming " (ll_card(g)) }
            },
            Ok(Play::Forfeit) => html! { em { "forfeit" } },
            Err(_) => html! { code { (text) } },
        }
    }

    fn panel(&self, n: &Names) -> Markup {
        let seats = n.0.len();
        let first = self.observation(Seat(0));
        html! {
            p {
                "Round " (first.round + 1) " · " (first.deck) " cards in the deck · first to "
                (first.wins_needed) " rounds wins"
            }
            div class="grid" {
                @for s in 0..seats {
                    @let seat = Seat(s as u8);
                    @let o = self.observation(seat);
                    @if let Some(view) = o.players.get(s) {
                        div class="panel" {
                            h3 {
                                (n.of(seat)) " "
                                @if !view.in_round {
                                    span class="tag fault" { "out" }
                                } @else if view.protected {
                                    span class="tag" { "protected" }
                                } @else if o.to_act == Some(seat) {
                                    span class="tag live" { "to play" }
                                }
                            }
                            p { "rounds won: " (o.wins.get(s).copied().unwrap_or(0)) }
                            p {
                                (if view.in_round { "hand" } else { "showed" }) " "
                                (hand(o.hand.iter().chain(&view.out_hand).map(|c| ll_card(*c))))
                            }
                            p { "played " (hand(view.played.iter().map(|c| ll_card(*c)))) }
                        }
                    }
                }
            }
        }
    }
}
