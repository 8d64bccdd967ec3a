//! The Love Letter manager's protocol (seed 001) and that of its later
//! revision, Postman.
//!
//! Classic: every AI is started anew each round. It first receives its player
//! number (1-based, a bare number), then `draw <card>` for its starting card.
//! Every turn all AIs get `player <n>`, the player gets `draw <card>` and
//! answers `play <card> [<target>] [<guess>]` or `forfeit`; all AIs then get
//! `played <a> <card> [<b>] [<guess>]` and the card's consequences (`swap`,
//! `reveal`, `discard`, `draw`, `out`). An AI that is out, and every AI when
//! the round ends, is stopped (SIGTERM). Card names are sent in lower case and
//! read in any case. A card aimed at a protected player is played and sends
//! nothing more.
//!
//! Postman: every AI is also started anew each round, greeted with
//! `ident <i>` (0-based; it answers with its name), then `players <n>` and
//! `start <s>`. Player numbers are 0-based and card names capitalised, sent
//! and read exactly so. When the Minister puts a player out at its draw, it
//! gets `out` and no `draw`. A card aimed at a player it cannot affect is
//! followed by `protected <t>`. The round ends with `won_round <w>` (and
//! `won_game <w>` after the last) to the players still in. Its answers are
//! read as Postman reads them ([`postman`]).

mod postman;

use croupier_rules::loveletter::{Card, LoveLetter, LoveLetterEvent, Play};
use croupier_rules::{Game, RuleError, Seat};

use crate::gops::truncate;
use crate::{Dialect, DialectKind, Flow, Reply};

pub use postman::{capitalised, parse_postman};

/// Which revision of the protocol.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Style {
    /// Seed 001's manager.
    Classic,
    /// The later Postman revision.
    Postman,
}

impl Style {
    /// A seat as a player number of this revision (1-based classic, 0-based
    /// Postman).
    pub fn number(self, seat: Seat) -> u8 {
        match self {
            Style::Classic => seat.0 + 1,
            Style::Postman => seat.0,
        }
    }

    /// A card's name as this revision writes it (lower case classic,
    /// capitalised Postman).
    pub fn card(self, card: Card) -> String {
        match self {
            Style::Classic => card.name().to_string(),
            Style::Postman => capitalised(card).to_string(),
        }
    }

    /// A play in this revision's words: `play <card> [<b>] [<guess>]` or
    /// `forfeit`.
    pub fn play_line(self, play: Play) -> String {
        match play {
            Play::Forfeit => "forfeit".to_string(),
            Play::Play {
                card,
                target,
                guess,
            } => {
                let mut l = format!("play {}", self.card(card));
                if let Some(t) = target {
                    l += &format!(" {}", self.number(t));
                }
                if let Some(g) = guess {
                    l += &format!(" {}", self.card(g));
                }
                l
            }
        }
    }
}

/// The manager side of the Love Letter protocols.
#[derive(Debug, Clone)]
pub struct LoveLetterDialect {
    style: Style,
    /// The last card played, to tell an `out` caused by playing the Princess.
    last_played: Option<(Seat, Card)>,
    /// Postman: this seat's own turn has begun and its draw is not sent yet.
    my_turn: bool,
    /// Postman: the seat's turn draw, held back until it is known that the
    /// Minister did not put it out (Postman then sends `out` and no `draw`).
    held_draw: Option<String>,
}

impl LoveLetterDialect {
    /// A dialect of the given style.
    pub fn new(style: Style) -> Self {
        LoveLetterDialect {
            style,
            last_played: None,
            my_turn: false,
            held_draw: None,
        }
    }

    /// Parses `play <card> [<b>] [<guess>]` or `forfeit` (any case), the
    /// classic way: anything else is malformed.
    pub fn parse(&self, line: &str, seats: usize) -> Result<Reply<Play>, RuleError> {
        if self.style == Style::Postman {
            return parse_postman(line, seats);
        }
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
                match n.checked_sub(1) {
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

    /// The lines of one event for a Postman AI, before the held draw rule.
    fn lines(&mut self, game: &LoveLetter, seat: Seat, event: &LoveLetterEvent) -> Lines {
        let style = self.style;
        let p = |s: Seat| style.number(s);
        let c = |card: Card| style.card(card);
        let postman = style == Style::Postman;
        let mut out = Vec::new();
        let flow = match event {
            LoveLetterEvent::RoundStart { first, .. } => {
                self.last_played = None;
                self.my_turn = false;
                self.held_draw = None;
                // Classic: the greeting (`hello`) is all. Postman: then the
                // table size and the first player.
                if postman {
                    out.push(format!("players {}", game.num_seats()));
                    out.push(format!("start {}", p(*first)));
                }
                Flow::Restart
            }
            LoveLetterEvent::Turn { seat: s } => {
                self.my_turn = *s == seat;
                out.push(format!("player {}", p(*s)));
                Flow::Continue
            }
            LoveLetterEvent::Draw { card, .. } => {
                let line = format!("draw {}", c(*card));
                if postman && std::mem::take(&mut self.my_turn) {
                    self.held_draw = Some(line);
                } else {
                    out.push(line);
                }
                Flow::Continue
            }
            LoveLetterEvent::Played {
                seat: a,
                card,
                target,
                guess,
            } => {
                let mut l = format!("played {} {}", p(*a), c(*card));
                if let Some(b) = target {
                    l += &format!(" {}", p(*b));
                }
                if let Some(g) = guess {
                    l += &format!(" {}", c(*g));
                }
                out.push(l);
                self.last_played = Some((*a, *card));
                Flow::Continue
            }
            // Classic: the manager "discards messages as appropriate", so a
            // card without effect sends nothing more. Postman says so.
            LoveLetterEvent::NoEffect { target, .. } => {
                if postman {
                    out.push(format!("protected {}", p(*target)));
                }
                Flow::Continue
            }
            LoveLetterEvent::Swap { card, .. } => {
                out.push(format!("swap {}", c(*card)));
                Flow::Continue
            }
            LoveLetterEvent::Reveal { of, card, .. } => {
                out.push(format!("reveal {} {}", p(*of), c(*card)));
                Flow::Continue
            }
            LoveLetterEvent::Discard { seat: s, card } => {
                out.push(format!("discard {} {}", p(*s), c(*card)));
                Flow::Continue
            }
            LoveLetterEvent::Out { seat: s, cards } => {
                let mut l = format!("out {}", p(*s));
                // The classic manager lists no cards for a player who played
                // the Princess (seed 001: "0 (if they played a princess)");
                // Postman lists the card still held.
                if postman || self.last_played != Some((*s, Card::Princess)) {
                    for card in cards {
                        l += &format!(" {}", c(*card));
                    }
                }
                out.push(l);
                // Out of the round: stopped, and told nothing more.
                if *s == seat {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            }
            LoveLetterEvent::RoundEnd { winner, .. } => {
                if postman {
                    out.push(format!("won_round {}", p(*winner)));
                    Flow::Continue
                } else {
                    Flow::Stop
                }
            }
            LoveLetterEvent::MatchEnd { winner } => {
                if postman {
                    out.push(format!("won_game {}", p(*winner)));
                }
                Flow::Stop
            }
            LoveLetterEvent::SetAsideTaken { .. } | LoveLetterEvent::Forfeit { .. } => {
                Flow::Continue
            }
        };
        (out, flow)
    }
}

/// An event's lines and what to do after them.
type Lines = (Vec<String>, Flow);

impl Dialect<LoveLetter> for LoveLetterDialect {
    fn kind(&self) -> DialectKind {
        match self.style {
            Style::Classic => DialectKind::LoveLetter,
            Style::Postman => DialectKind::LoveLetterPostman,
        }
    }

    fn starts_per_round(&self) -> bool {
        true
    }

    fn hello(&mut self, _game: &LoveLetter, seat: Seat, out: &mut Vec<String>) {
        match self.style {
            Style::Classic => out.push(self.style.number(seat).to_string()),
            Style::Postman => out.push(format!("ident {}", self.style.number(seat))),
        }
    }

    fn expects_hello_reply(&self) -> bool {
        self.style == Style::Postman
    }

    fn event(
        &mut self,
        game: &LoveLetter,
        seat: Seat,
        event: &LoveLetterEvent,
        out: &mut Vec<String>,
    ) -> Flow {
        // A held draw goes out before the next line, unless that line puts
        // this player out (the Minister, at the draw).
        let held = self.held_draw.take();
        let (mut lines, flow) = self.lines(game, seat, event);
        let own_out = matches!(event, LoveLetterEvent::Out { seat: s, .. } if *s == seat);
        if let Some(draw) = held {
            if !own_out {
                out.push(draw);
            }
        }
        out.append(&mut lines);
        flow
    }

    fn prompt(&mut self, _: &LoveLetter, _: Seat, _: &[Play], _: u64, out: &mut Vec<String>) {
        out.extend(self.held_draw.take());
    }

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
