//! How each game draws its replay: SkullWhist hands, bids and every trick
//! with leader and follower; Love Letter every turn with its effect and
//! every hand; Goofspiel the lot, both bids and the points.

use std::fmt::Write as _;

use croupier_rules::goofspiel::{Bid, Goofspiel, GoofspielEvent};
use croupier_rules::loveletter::{LoveLetter, LoveLetterEvent, Play};
use croupier_rules::skullwhist::{Card, SkullWhist, SkullWhistAction, SkullWhistEvent};
use croupier_rules::{Game, Seat};

use crate::html::{esc, gs_card, ll_card, sw_card};
use crate::replay::{Names, Show};

fn card(c: Card) -> String {
    sw_card(&c.to_string())
}

fn hand(cards: impl IntoIterator<Item = String>) -> String {
    let mut out = String::from("<span class=\"hand\">");
    for c in cards {
        out.push_str(&c);
    }
    out.push_str("</span>");
    out
}

impl Show for SkullWhist {
    fn event_html(e: &SkullWhistEvent, n: &Names) -> String {
        match e {
            SkullWhistEvent::Deal { seat, hand: h } => {
                format!(
                    "{} is dealt {}",
                    n.of(*seat),
                    hand(h.iter().map(|c| card(*c)))
                )
            }
            SkullWhistEvent::Sealed { seat, bid } => {
                format!("{} seals a bid of {bid}", n.of(*seat))
            }
            SkullWhistEvent::Bids { bids, leader } => format!(
                "bids revealed: {} {}, {} {}; {} leads",
                n.of(Seat(0)),
                bids[0],
                n.of(Seat(1)),
                bids[1],
                n.of(*leader)
            ),
            SkullWhistEvent::Played { seat, card: c } => {
                format!("{} plays {}", n.of(*seat), card(*c))
            }
            SkullWhistEvent::TrickWon { trick, winner } => {
                format!("trick {trick} to <b>{}</b>", n.of(*winner))
            }
            SkullWhistEvent::Scored { tricks, scores } => format!(
                "<b>scored</b>: {} {} tricks, {} points; {} {} tricks, {} points",
                n.of(Seat(0)),
                tricks[0],
                scores[0],
                n.of(Seat(1)),
                tricks[1],
                scores[1]
            ),
            SkullWhistEvent::Forfeit { seat } => format!("<b>{} forfeits</b>", n.of(*seat)),
        }
    }

    fn action_html(text: &str, _: &Names) -> String {
        match text.parse::<SkullWhistAction>() {
            Ok(SkullWhistAction::Bid(b)) => format!("bid <b>{b}</b>"),
            Ok(SkullWhistAction::Play(c)) => format!("play {}", card(c)),
            Err(_) => format!("<code>{}</code>", esc(text)),
        }
    }

    fn panel(&self, n: &Names) -> String {
        let mut out = String::from("<div class=\"grid\">");
        for s in 0..2u8 {
            let o = self.observation(Seat(s));
            let _ = write!(
                out,
                "<div class=\"panel\"><h3>{}</h3><p>bid {} · tricks {}</p>{}</div>",
                n.of(Seat(s)),
                o.my_bid.map_or("–".into(), |b| b.to_string()),
                o.tricks_won[0],
                hand(o.hand.iter().map(|c| card(*c)))
            );
        }
        out.push_str("</div>");
        let o = self.observation(Seat(0));
        if let (Some(leader), Some(lead)) = (o.leader, o.lead_card) {
            let _ = write!(
                out,
                "<p>Trick {}: {} led {}</p>",
                o.trick,
                n.of(leader),
                card(lead)
            );
        }
        if !o.history.is_empty() {
            out.push_str("<div class=\"scroll\"><table><thead><tr><th class=\"num\">Trick</th><th>Leader</th><th>Led</th><th>Follower</th><th>Followed</th><th>Won by</th></tr></thead><tbody>");
            for (i, t) in o.history.iter().enumerate() {
                let _ = write!(
                    out,
                    "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><b>{}</b></td></tr>",
                    i + 1,
                    n.of(t.leader),
                    card(t.lead),
                    n.of(Seat(1 - t.leader.0)),
                    card(t.follow),
                    n.of(t.winner)
                );
            }
            out.push_str("</tbody></table></div>");
        }
        out
    }
}

impl Show for Goofspiel {
    fn event_html(e: &GoofspielEvent, n: &Names) -> String {
        match e {
            GoofspielEvent::RoundStart { round, cards } => {
                format!("<b>round {}</b> with cards 1 to {cards}", round + 1)
            }
            GoofspielEvent::Draw { card, next } => format!(
                "victory card {} turned{}",
                gs_card(*card, "lot"),
                next.map(|c| format!(" (next: {c})")).unwrap_or_default()
            ),
            GoofspielEvent::Sealed { seat, card } => {
                format!("{} seals a bid of {card}", n.of(*seat))
            }
            GoofspielEvent::Reveal {
                bids,
                winner,
                points,
            } => format!(
                "bids {} {}, {} {}: {}",
                n.of(Seat(0)),
                gs_card(bids[0], ""),
                n.of(Seat(1)),
                gs_card(bids[1], ""),
                match winner {
                    Some(w) => format!("<b>{}</b> takes {points} points", n.of(*w)),
                    None => "tie".into(),
                }
            ),
            GoofspielEvent::RoundEnd { points, discarded } => format!(
                "round over: {} {}, {} {} points{}",
                n.of(Seat(0)),
                points[0],
                n.of(Seat(1)),
                points[1],
                if *discarded > 0 {
                    format!("; {discarded} points left in the lot are discarded")
                } else {
                    String::new()
                }
            ),
            GoofspielEvent::Forfeit { seat } => format!("<b>{} forfeits</b>", n.of(*seat)),
        }
    }

    fn action_html(text: &str, _: &Names) -> String {
        match text.parse::<Bid>() {
            Ok(Bid(b)) => format!("bid {}", gs_card(b, "")),
            Err(_) => format!("<code>{}</code>", esc(text)),
        }
    }

    fn panel(&self, n: &Names) -> String {
        let o = self.observation(Seat(0));
        let mut out = String::from("<div class=\"grid\">");
        for (s, (points, cards)) in [
            (o.my_points, &o.hand),
            (o.opponent_points, &o.opponent_hand),
        ]
        .into_iter()
        .enumerate()
        {
            let _ = write!(
                out,
                "<div class=\"panel\"><h3>{}</h3><div class=\"stat\">{points}<small>points</small></div><p>bid cards left</p>{}</div>",
                n.of(Seat(s as u8)),
                hand(cards.iter().map(|c| gs_card(*c, "")))
            );
        }
        let _ = write!(
            out,
            "<div class=\"panel\"><h3>Lot</h3>{}{}<p>face down: {}</p></div></div>",
            if o.lot.is_empty() {
                "<p class=\"empty\">empty</p>".to_string()
            } else {
                hand(o.lot.iter().map(|c| gs_card(*c, "lot")))
            },
            o.next
                .map(|c| format!("<p>next: {}</p>", gs_card(c, "")))
                .unwrap_or_default(),
            o.undrawn.len()
        );
        for (r, turns) in o.history.iter().enumerate() {
            if turns.is_empty() {
                continue;
            }
            let _ = write!(
                out,
                "<h3>Round {}</h3><div class=\"scroll\"><table><thead><tr><th class=\"num\">Turn</th><th>Card</th><th>{}</th><th>{}</th><th>Points</th></tr></thead><tbody>",
                r + 1,
                n.of(Seat(0)),
                n.of(Seat(1))
            );
            for (i, t) in turns.iter().enumerate() {
                let _ = write!(
                    out,
                    "<tr><td class=\"num\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} – {}</td></tr>",
                    i + 1,
                    gs_card(t.drawn, "lot"),
                    gs_card(t.bids[0], ""),
                    gs_card(t.bids[1], ""),
                    t.gained[0],
                    t.gained[1]
                );
            }
            out.push_str("</tbody></table></div>");
        }
        out
    }
}

impl Show for LoveLetter {
    fn event_html(e: &LoveLetterEvent, n: &Names) -> String {
        match e {
            LoveLetterEvent::RoundStart { round, first } => {
                format!("<b>round {}</b>; {} plays first", round + 1, n.of(*first))
            }
            LoveLetterEvent::Turn { seat } => format!("{}'s turn", n.of(*seat)),
            LoveLetterEvent::Draw { seat, card } => {
                format!("{} draws {}", n.of(*seat), ll_card(*card))
            }
            LoveLetterEvent::Played {
                seat,
                card,
                target,
                guess,
            } => format!(
                "{} plays {}{}{}",
                n.of(*seat),
                ll_card(*card),
                target
                    .map(|t| format!(" on {}", n.of(t)))
                    .unwrap_or_default(),
                guess
                    .map(|g| format!(", naming {}", ll_card(g)))
                    .unwrap_or_default()
            ),
            LoveLetterEvent::NoEffect { target, .. } => {
                format!("<em>without effect</em> on {}", n.of(*target))
            }
            LoveLetterEvent::Swap { seat, card } => {
                format!("{} now holds {}", n.of(*seat), ll_card(*card))
            }
            LoveLetterEvent::Reveal { to, of, card } => {
                format!("{} sees {}'s {}", n.of(*to), n.of(*of), ll_card(*card))
            }
            LoveLetterEvent::Discard { seat, card } => {
                format!("{} discards {}", n.of(*seat), ll_card(*card))
            }
            LoveLetterEvent::SetAsideTaken { seat } => {
                format!("{} takes the set-aside card", n.of(*seat))
            }
            LoveLetterEvent::Forfeit { seat } => {
                format!("<b>{} forfeits the round</b>", n.of(*seat))
            }
            LoveLetterEvent::Out { seat, cards } => format!(
                "<b>{} is out</b> {}",
                n.of(*seat),
                hand(cards.iter().map(|c| ll_card(*c)))
            ),
            LoveLetterEvent::RoundEnd { winner, hands } => format!(
                "round to <b>{}</b>; hands: {}",
                n.of(*winner),
                hands
                    .iter()
                    .map(|(s, c)| format!("{} {}", n.of(*s), ll_card(*c)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            LoveLetterEvent::MatchEnd { winner } => {
                format!("<b>{} wins the match</b>", n.of(*winner))
            }
        }
    }

    fn action_html(text: &str, n: &Names) -> String {
        match text.parse::<Play>() {
            Ok(Play::Play {
                card,
                target,
                guess,
            }) => format!(
                "play {}{}{}",
                ll_card(card),
                target
                    .map(|t| format!(" on {}", n.of(t)))
                    .unwrap_or_default(),
                guess
                    .map(|g| format!(" naming {}", ll_card(g)))
                    .unwrap_or_default()
            ),
            Ok(Play::Forfeit) => "<em>forfeit</em>".into(),
            Err(_) => format!("<code>{}</code>", esc(text)),
        }
    }

    fn panel(&self, n: &Names) -> String {
        let seats = n.0.len();
        let first = self.observation(Seat(0));
        let mut out = format!(
            "<p>Round {} · {} cards in the deck · first to {} rounds wins</p><div class=\"grid\">",
            first.round + 1,
            first.deck,
            first.wins_needed
        );
        for s in 0..seats {
            let seat = Seat(s as u8);
            let o = self.observation(seat);
            let Some(view) = o.players.get(s) else {
                continue;
            };
            let status = if !view.in_round {
                "<span class=\"tag fault\">out</span>"
            } else if view.protected {
                "<span class=\"tag\">protected</span>"
            } else if o.to_act == Some(seat) {
                "<span class=\"tag live\">to play</span>"
            } else {
                ""
            };
            let held = if view.in_round { "hand" } else { "showed" };
            let _ = write!(
                out,
                "<div class=\"panel\"><h3>{} {status}</h3><p>rounds won: {}</p><p>{held} {}</p><p>played {}</p></div>",
                n.of(seat),
                o.wins.get(s).copied().unwrap_or(0),
                hand(o.hand.iter().chain(&view.out_hand).map(|c| ll_card(*c))),
                hand(view.played.iter().map(|c| ll_card(*c)))
            );
        }
        out.push_str("</div>");
        out
    }
}
