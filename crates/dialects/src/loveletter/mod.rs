//! The Love Letter manager's protocol (seed 001) and its later "postman"
//! revision.
//!
//! Classic: every AI is started anew each round. It first receives its player
//! number (1-based, a bare number), then `draw <card>` for its starting card.
//! Every turn all AIs get `player <n>`, the player gets `draw <card>` and
//! answers `play <card> [<target>] [<guess>]` or `forfeit`; all AIs then get
//! `played <a> <card> [<b>] [<guess>]` and the card's consequences (`swap`,
//! `reveal`, `discard`, `draw`, `out`). An AI that is out, and every AI when
//! the round ends, is stopped (SIGTERM). Card names are sent in lower case and
//! read in any case.
//!
//! Postman (best effort: the revision's own documents are not among our
//! sources): one process per match, greeted with `ident <i>` (0-based; the AI
//! answers with its name) and `players <n>`; each round opens with
//! `start <i>` (the round's first player); player numbers are 0-based, card
//! names capitalised, and `protected <n>` follows a played Priestess.

use croupier_rules::loveletter::{Card, LoveLetter, LoveLetterEvent, Play};
use croupier_rules::{Game, RuleError, Seat};

use crate::gops::truncate;
use crate::{Dialect, DialectKind, Flow, Reply};

/// Which revision of the protocol.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Style {
    /// Seed 001's manager.
    Classic,
    /// The later postman revision.
    Postman,
}

/// The manager side of the Love Letter protocols.
#[derive(Debug, Clone)]
pub struct LoveLetterDialect {
    style: Style,
    /// The last card played, to tell an `out` caused by playing the Princess.
    last_played: Option<(Seat, Card)>,
}

impl LoveLetterDialect {
    /// A dialect of the given style.
    pub fn new(style: Style) -> Self {
        LoveLetterDialect {
            style,
            last_played: None,
        }
    }

    fn player(&self, seat: Seat) -> u8 {
        match self.style {
            Style::Classic => seat.0 + 1,
            Style::Postman => seat.0,
        }
    }

    fn card(&self, card: Card) -> String {
        let name = card.to_string();
        match self.style {
            Style::Classic => name,
            Style::Postman => {
                let mut chars = name.chars();
                chars
                    .next()
                    .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                    .unwrap_or_default()
            }
        }
    }

    /// Parses `play <card> [<b>] [<guess>]` or `forfeit` (any case).
    pub fn parse(&self, line: &str, seats: usize) -> Result<Reply<Play>, RuleError> {
        let bad = |why: &str| RuleError::malformed(format!("{why} in '{}'", truncate(line)));
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.first() {
            Some(w) if w.eq_ignore_ascii_case("forfeit") && words.len() == 1 => {
                return Ok(Reply::Forfeit)
            }
            Some(w) if w.eq_ignore_ascii_case("play") => {}
            _ => {
                return Err(bad(
                    "expected 'play <card> [<player>] [<guess>]' or 'forfeit'",
                ))
            }
        }
        if words.len() < 2 || words.len() > 4 {
            return Err(bad("wrong number of words"));
        }
        let card: Card = words[1].parse().map_err(|_| bad("unknown card"))?;
        let target = match words.get(2) {
            None => None,
            Some(w) => {
                let n: u8 = w
                    .parse()
                    .map_err(|_| bad("the target must be a player number"))?;
                let seat = match self.style {
                    Style::Classic => n.checked_sub(1),
                    Style::Postman => Some(n),
                };
                match seat {
                    Some(s) if usize::from(s) < seats => Some(Seat(s)),
                    _ => return Err(RuleError::illegal(format!("there is no player {n}"))),
                }
            }
        };
        let guess = match words.get(3) {
            None => None,
            Some(w) => Some(
                w.parse::<Card>()
                    .map_err(|_| bad("unknown card for the guess"))?,
            ),
        };
        Ok(Reply::Action(Play::Play {
            card,
            target,
            guess,
        }))
    }
}

impl Dialect<LoveLetter> for LoveLetterDialect {
    fn kind(&self) -> DialectKind {
        match self.style {
            Style::Classic => DialectKind::LoveLetter,
            Style::Postman => DialectKind::LoveLetterPostman,
        }
    }

    fn starts_per_round(&self) -> bool {
        self.style == Style::Classic
    }

    fn hello(&mut self, game: &LoveLetter, seat: Seat, out: &mut Vec<String>) {
        match self.style {
            Style::Classic => out.push(self.player(seat).to_string()),
            Style::Postman => {
                out.push(format!("ident {}", self.player(seat)));
                out.push(format!("players {}", game.num_seats()));
            }
        }
    }

    fn expects_hello_reply(&self) -> bool {
        self.style == Style::Postman
    }

    fn event(
        &mut self,
        _game: &LoveLetter,
        seat: Seat,
        event: &LoveLetterEvent,
        out: &mut Vec<String>,
    ) -> Flow {
        let style = self.style;
        let p = |s: Seat| match style {
            Style::Classic => s.0 + 1,
            Style::Postman => s.0,
        };
        match event {
            LoveLetterEvent::RoundStart { first, .. } => {
                self.last_played = None;
                match self.style {
                    Style::Classic => return Flow::Restart,
                    Style::Postman => out.push(format!("start {}", p(*first))),
                }
            }
            LoveLetterEvent::Turn { seat: s } => out.push(format!("player {}", p(*s))),
            LoveLetterEvent::Draw { card, .. } => out.push(format!("draw {}", self.card(*card))),
            LoveLetterEvent::Played {
                seat: a,
                card,
                target,
                guess,
            } => {
                let mut l = format!("played {} {}", p(*a), self.card(*card));
                if let Some(b) = target {
                    l += &format!(" {}", p(*b));
                }
                if let Some(g) = guess {
                    l += &format!(" {}", self.card(*g));
                }
                out.push(l);
                if self.style == Style::Postman && *card == Card::Priestess {
                    out.push(format!("protected {}", p(*a)));
                }
                self.last_played = Some((*a, *card));
            }
            LoveLetterEvent::Swap { card, .. } => out.push(format!("swap {}", self.card(*card))),
            LoveLetterEvent::Reveal { of, card, .. } => {
                out.push(format!("reveal {} {}", p(*of), self.card(*card)))
            }
            LoveLetterEvent::Discard { seat: s, card } => {
                out.push(format!("discard {} {}", p(*s), self.card(*card)))
            }
            LoveLetterEvent::Out { seat: s, cards } => {
                let mut l = format!("out {}", p(*s));
                // The manager lists no cards for a player who played the
                // Princess (seed 001: "0 (if they played a princess)").
                if self.last_played != Some((*s, Card::Princess)) {
                    for c in cards {
                        l += &format!(" {}", self.card(*c));
                    }
                }
                out.push(l);
                if *s == seat && self.style == Style::Classic {
                    return Flow::Stop;
                }
            }
            LoveLetterEvent::RoundEnd { .. } => {
                if self.style == Style::Classic {
                    return Flow::Stop;
                }
            }
            LoveLetterEvent::SetAsideTaken { .. }
            | LoveLetterEvent::Forfeit { .. }
            | LoveLetterEvent::MatchEnd { .. } => {}
        }
        Flow::Continue
    }

    fn prompt(&mut self, _: &LoveLetter, _: Seat, _: &[Play], _: u64, _: &mut Vec<String>) {}

    fn decode(
        &mut self,
        game: &LoveLetter,
        seat: Seat,
        line: &str,
    ) -> Result<Reply<Play>, RuleError> {
        let reply = self.parse(line, game.num_seats())?;
        if let Reply::Action(play) = reply {
            game.check(seat, play)?;
        }
        Ok(reply)
    }

    fn goodbye(&mut self, _game: &LoveLetter, _seat: Seat, _out: &mut Vec<String>) {}
}

/// The Love Letter dialect as a dialect of `G`, when `G` is Love Letter.
pub fn make<G: Game>(style: Style) -> Option<Box<dyn Dialect<G>>> {
    crate::as_dialect_of::<G, LoveLetter>(Box::new(LoveLetterDialect::new(style)))
}

#[cfg(test)]
mod tests;
