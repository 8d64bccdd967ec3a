//! How each game draws its replay: SkullWhist hands, bids and every trick
//! with leader and follower; Love Letter every turn with its effect and
//! every hand; Goofspiel the lot, both bids and the points.

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielEvent};
use croupier_rules::loveletter::{LoveLetter, LoveLetterEvent, Play};
use croupier_rules::skullwhist::{Card, SkullWhist, SkullWhistAction, SkullWhistEvent};
use croupier_rules::{Game, Seat};

use crate::html::Names;
use crate::html::{gs_card, html, ll_card, sw_card, Markup};
use crate::replay::Show;
use crate::table::{render, Ctx, Over, Tabled};

/// The table of a replayed game at a step: the public view, with every
/// hand shown (a replay is public), whose turn it is, and the result at
/// the end; the same table spectators saw at that step.
fn replay_table<G: Tabled>(g: &G, names: &Names) -> Markup {
    let seats = g.num_seats();
    let ctx = Ctx {
        names,
        you: None,
        to_act: (0..seats as u8)
            .map(Seat)
            .filter(|s| g.to_act().contains(*s))
            .collect(),
        left_ms: None,
        hands: (0..seats as u8)
            .map(|s| Some(G::own_hand(&g.observation(Seat(s)))))
            .collect(),
        over: g.outcome().map(|o| Over {
            status: "finished".into(),
            scores: o.scores.into_iter().map(Some).collect(),
        }),
        hand_below: false,
    };
    render::<G>(&g.public_view(), &ctx)
}

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
            (replay_table(self, n))
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
        html! {
            (replay_table(self, n))
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
        replay_table(self, n)
    }
}
