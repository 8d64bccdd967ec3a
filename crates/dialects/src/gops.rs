//! The GOPS quiz runner's protocol (seed 004): per turn the runner writes
//! `Competition card:  <v>` (two spaces after the colon), the bot answers a
//! line holding its bid, then the runner writes `Opponent's bid:  <v>`.
//!
//! The bid is the first number on the bot's line, as the quiz's own bots read
//! the runner's lines. The bid reported to the opponent is the card actually
//! played (a random legal card when the bot's own was refused).

use croupier_rules::goofspiel::{Goofspiel, GoofspielEvent};
use croupier_rules::{Game, RuleError, Seat};

use crate::{Dialect, DialectKind, Flow, Reply};

/// The runner's line announcing the victory card.
pub fn competition_card(v: u8) -> String {
    format!("Competition card:  {v}")
}

/// The runner's line reporting the opponent's bid.
pub fn opponents_bid(v: u8) -> String {
    format!("Opponent's bid:  {v}")
}

/// The first run of digits in a line, as a number.
pub fn first_number(line: &str) -> Option<u64> {
    let start = line.find(|c: char| c.is_ascii_digit())?;
    let digits: String = line[start..]
        .chars()
        .take_while(char::is_ascii_digit)
        .take(21)
        .collect();
    // More digits than a u64 holds: far beyond any card.
    Some(digits.parse().unwrap_or(u64::MAX))
}

/// The manager side of the GOPS protocol.
#[derive(Debug, Default, Clone)]
pub struct GopsDialect;

impl Dialect<Goofspiel> for GopsDialect {
    fn kind(&self) -> DialectKind {
        DialectKind::Gops
    }

    fn hello(&mut self, _game: &Goofspiel, _seat: Seat, _out: &mut Vec<String>) {}

    fn event(
        &mut self,
        _game: &Goofspiel,
        seat: Seat,
        event: &GoofspielEvent,
        out: &mut Vec<String>,
    ) -> Flow {
        match event {
            GoofspielEvent::Draw { card, .. } => out.push(competition_card(*card)),
            GoofspielEvent::Reveal { bids, .. } => {
                out.push(opponents_bid(bids[1 - seat.index().min(1)]));
            }
            GoofspielEvent::RoundStart { .. }
            | GoofspielEvent::Sealed { .. }
            | GoofspielEvent::RoundEnd { .. }
            | GoofspielEvent::Forfeit { .. } => {}
        }
        Flow::Continue
    }

    fn prompt(
        &mut self,
        _: &Goofspiel,
        _: Seat,
        _: &[<Goofspiel as Game>::Action],
        _: u64,
        _: &mut Vec<String>,
    ) {
    }

    fn decode(
        &mut self,
        game: &Goofspiel,
        seat: Seat,
        line: &str,
    ) -> Result<Reply<<Goofspiel as Game>::Action>, RuleError> {
        let n = first_number(line)
            .ok_or_else(|| RuleError::malformed(format!("no bid in '{}'", truncate(line))))?;
        let n =
            u8::try_from(n).map_err(|_| RuleError::illegal(format!("you do not hold card {n}")))?;
        game.validate(seat, &n.to_string()).map(Reply::Action)
    }

    fn goodbye(&mut self, _game: &Goofspiel, _seat: Seat, _out: &mut Vec<String>) {}
}

/// A bot line shortened for an error message.
pub fn truncate(line: &str) -> String {
    let mut s: String = line.chars().take(60).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

/// The GOPS dialect as a dialect of `G`, when `G` is Goofspiel.
pub fn make<G: Game>() -> Option<Box<dyn Dialect<G>>> {
    crate::as_dialect_of::<G, Goofspiel>(Box::new(GopsDialect))
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::goofspiel::{Bid, GoofspielVariant};

    #[test]
    fn lines_have_two_spaces_after_the_colon() {
        assert_eq!(competition_card(7), "Competition card:  7");
        assert_eq!(opponents_bid(13), "Opponent's bid:  13");
    }

    #[test]
    fn a_turn_is_card_then_opponents_bid() {
        let mut g = Goofspiel::new(&GoofspielVariant::gops(), 2, 1).unwrap();
        let mut d = GopsDialect;
        let start = g.events().len();
        g.apply(Seat(0), Bid(3)).unwrap();
        g.apply(Seat(1), Bid(9)).unwrap();
        let mut lines = Vec::new();
        for e in g.events() {
            d.event(&g, Seat(0), e, &mut lines);
        }
        assert!(start > 0);
        assert!(lines[0].starts_with("Competition card:  "));
        assert_eq!(lines[1], "Opponent's bid:  9");
        assert!(lines[2].starts_with("Competition card:  "));
    }

    #[test]
    fn the_first_number_on_the_line_is_the_bid() {
        let g = Goofspiel::new(&GoofspielVariant::gops(), 2, 1).unwrap();
        let mut d = GopsDialect;
        assert_eq!(d.decode(&g, Seat(0), "12"), Ok(Reply::Action(Bid(12))));
        assert_eq!(d.decode(&g, Seat(0), "  5\r"), Ok(Reply::Action(Bid(5))));
        assert_eq!(d.decode(&g, Seat(0), "I bid 4."), Ok(Reply::Action(Bid(4))));
        assert!(matches!(
            d.decode(&g, Seat(0), "pass"),
            Err(RuleError::Malformed(_))
        ));
        assert!(matches!(
            d.decode(&g, Seat(0), "14"),
            Err(RuleError::Illegal(_))
        ));
        assert!(matches!(
            d.decode(&g, Seat(0), "99999999999999999999999"),
            Err(RuleError::Illegal(_))
        ));
        assert!(matches!(
            d.decode(&g, Seat(0), "0"),
            Err(RuleError::Illegal(_))
        ));
    }

    #[test]
    fn make_gives_gops_only_for_goofspiel() {
        assert!(make::<Goofspiel>().is_some());
        assert!(make::<croupier_rules::skullwhist::SkullWhist>().is_none());
    }
}
