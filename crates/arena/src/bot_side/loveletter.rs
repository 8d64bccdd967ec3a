//! The bot side of the Love Letter manager's protocol (seed 001) and of its
//! "postman" revision, mirroring `croupier_dialects::loveletter`.
//!
//! The client rebuilds a [`LoveLetterObservation`] from the lines it reads
//! and computes the legal plays the way the rules engine does under the
//! manager's rules (standard for the classic protocol, Postman's for the
//! Postman protocol, unless told otherwise); the strategy chooses among
//! them. What it knows and may play is a function of the lines received and
//! the rules alone.
//!
//! It answers whenever its own `player` line is directly followed by its
//! `draw`, and never goes silent then: even when its own view says the
//! Minister puts it out (a manager with other Minister rules waits for a
//! play; one that agrees stops the AI and never reads the answer). Postman
//! sends `out` instead of the `draw` when the Minister strikes, so no answer
//! is due. A card that takes a target always names one under Postman's
//! rules, even when nobody can be affected.

use std::io::{BufRead, Write};

use super::error::{At as _, BotSideError};
use croupier_bots::{bot_rng, Strategy};
use croupier_dialects::loveletter::Style;
use croupier_rules::loveletter::{
    no_effect, Card, LoveLetter, LoveLetterEvent, LoveLetterObservation, LoveLetterVariant,
    NoEffectReason, OutCards, Play, Rules, SeatView, DECK_SIZE, MAX_SEATS, WINS_NEEDED,
};
use croupier_rules::Seat;

use super::io::{answer, shown, ClientOptions, Lines};

/// The name a postman bot gives when greeted with `ident`.
pub const POSTMAN_NAME: &str = "croupier";

/// What the bot knows of the table, as the manager's lines tell it.
#[derive(Debug)]
pub(super) struct Table {
    style: Style,
    /// Whose rules the manager applies.
    rules: Rules,
    /// Number of players, once known.
    players: Option<usize>,
    /// This bot's seat, once known.
    me: Option<Seat>,
    /// Rounds begun (each AI lives for one round, in both revisions).
    rounds: u32,
    hand: Vec<Card>,
    views: Vec<SeatView>,
    /// Cards left in the deck: the deal and each turn's draw are counted, as
    /// are the draws after a Wizard.
    deck: u8,
    to_act: Option<Seat>,
    first: Option<Seat>,
    /// The card this bot knows each seat holds.
    known: Vec<Option<Card>>,
    /// The previous line was this bot's own `player` line.
    my_turn: bool,
    started: bool,
}

/// What one manager line asks of the bot.
#[derive(Debug, Default)]
pub(super) struct Step {
    /// Events for the strategy's `notify`.
    pub events: Vec<LoveLetterEvent>,
    /// Whether the bot must now play.
    pub act: bool,
    /// A line to send at once (the postman name).
    pub reply: Option<String>,
    /// The bot now knows its seat and the table size: start the strategy.
    pub new_game: bool,
}

impl Table {
    pub(super) fn new(style: Style, variant: &LoveLetterVariant, players: Option<usize>) -> Self {
        Table {
            style,
            rules: variant.rules,
            players,
            me: None,
            rounds: 0,
            hand: Vec::new(),
            views: Vec::new(),
            deck: 0,
            to_act: None,
            first: None,
            known: Vec::new(),
            my_turn: false,
            started: false,
        }
    }

    pub(super) fn me(&self) -> Result<Seat, BotSideError> {
        self.me.ok_or_else(|| {
            BotSideError::protocol("the manager has not told the bot its player number yet")
        })
    }

    fn n(&self) -> Result<usize, BotSideError> {
        self.players
            .ok_or_else(|| BotSideError::protocol("the number of players is not known"))
    }

    pub(super) fn seats(&self) -> usize {
        self.players.unwrap_or(0)
    }

    /// A fresh round: everyone in and unprotected, nothing played or known.
    fn begin_round(&mut self, first: Option<Seat>) -> Result<(), BotSideError> {
        let n = self.n()?;
        self.rounds += 1;
        self.hand.clear();
        self.views = vec![
            SeatView {
                in_round: true,
                protected: false,
                played: Vec::new(),
                out_hand: Vec::new(),
            };
            n
        ];
        // One card set aside, one dealt to each player.
        self.deck = (DECK_SIZE - 1 - n) as u8;
        self.to_act = None;
        self.first = first;
        self.known = vec![None; n];
        self.my_turn = false;
        Ok(())
    }

    /// A player number of the protocol as a seat.
    fn seat(&self, word: &str) -> Result<Seat, BotSideError> {
        let n: u8 = word
            .parse()
            .map_err(|_| BotSideError::protocol(format!("'{word}' is not a player number")))?;
        let seat = match self.style {
            Style::Classic => n.checked_sub(1),
            Style::Postman => Some(n),
        };
        match seat {
            Some(s) if self.players.is_none_or(|p| usize::from(s) < p) => Ok(Seat(s)),
            _ => Err(BotSideError::protocol(format!("there is no player {n}"))),
        }
    }

    fn view(&mut self, seat: Seat) -> Result<&mut SeatView, BotSideError> {
        self.views
            .get_mut(seat.index())
            .ok_or_else(|| BotSideError::protocol("no round has begun"))
    }

    fn set_known(&mut self, seat: Seat, card: Option<Card>) {
        if let Some(k) = self.known.get_mut(seat.index()) {
            *k = card;
        }
    }

    fn remove_from_hand(&mut self, card: Card) {
        if let Some(i) = self.hand.iter().position(|c| *c == card) {
            self.hand.remove(i);
        }
    }

    /// Reads one manager line.
    pub(super) fn handle(&mut self, line: &str) -> Result<Step, BotSideError> {
        let mut step = Step::default();
        let was_my_turn = std::mem::take(&mut self.my_turn);
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&keyword) = words.first() else {
            return Ok(step);
        };
        let args = &words[1..];
        let card_at = |i: usize| -> Result<Card, BotSideError> {
            let w = args
                .get(i)
                .ok_or_else(|| BotSideError::protocol("a card name is missing"))?;
            w.parse::<Card>()
                .map_err(|_| BotSideError::protocol(format!("unknown card '{w}'")))
        };
        let arg = |i: usize| -> Result<&str, BotSideError> {
            args.get(i)
                .copied()
                .ok_or_else(|| BotSideError::protocol("a player number is missing"))
        };
        // Classic: the first line is the bare player number.
        if self.style == Style::Classic && self.me.is_none() {
            let seat = self
                .seat(keyword)
                .at(|| "expected the player number first")?;
            self.me = Some(seat);
            self.begin_round(None)?;
            step.new_game = true;
            return Ok(step);
        }
        match keyword.to_ascii_lowercase().as_str() {
            "ident" => {
                self.me = Some(Seat(arg(0)?.parse().at(|| "bad ident")?));
                step.reply = Some(POSTMAN_NAME.to_string());
            }
            "players" => {
                let n: usize = arg(0)?.parse().at(|| "bad number of players")?;
                if !(2..=MAX_SEATS).contains(&n) {
                    return Err(BotSideError::protocol(format!(
                        "love letter needs 2 to {MAX_SEATS} players, not {n}"
                    )));
                }
                self.players = Some(n);
                step.new_game = self.me.is_some() && !self.started;
            }
            "start" => {
                let first = self.seat(arg(0)?)?;
                step.new_game = !self.started;
                self.me()?;
                self.begin_round(Some(first))?;
                step.events.push(LoveLetterEvent::RoundStart {
                    round: self.rounds - 1,
                    first,
                });
            }
            "player" => {
                let seat = self.seat(arg(0)?)?;
                self.view(seat)?.protected = false;
                self.to_act = Some(seat);
                self.first.get_or_insert(seat);
                self.deck = self.deck.saturating_sub(1);
                self.my_turn = Some(seat) == self.me;
                step.events.push(LoveLetterEvent::Turn { seat });
            }
            "draw" => {
                let card = card_at(0)?;
                let me = self.me()?;
                self.hand.push(card);
                step.events.push(LoveLetterEvent::Draw { seat: me, card });
                // Answer even if the Minister should strike by our view: a
                // manager that agrees stops us and never reads it; one that
                // does not waits for a play.
                step.act = was_my_turn;
            }
            "played" => {
                let seat = self.seat(arg(0)?)?;
                let card = card_at(1)?;
                let target = args.get(2).map(|w| self.seat(w)).transpose()?;
                let guess = args.get(3).map(|_| card_at(3)).transpose()?;
                let no_effect = target.and_then(|t| self.no_effect(seat, t));
                self.played(seat, card, target, no_effect.is_some())?;
                step.events.push(LoveLetterEvent::Played {
                    seat,
                    card,
                    target,
                    guess,
                });
                if let (Some(target), Some(reason)) = (target, no_effect) {
                    step.events.push(LoveLetterEvent::NoEffect {
                        seat,
                        target,
                        reason,
                    });
                }
            }
            "swap" => {
                let card = card_at(0)?;
                self.hand = vec![card];
                step.events.push(LoveLetterEvent::Swap {
                    seat: self.me()?,
                    card,
                });
            }
            "reveal" => {
                let of = self.seat(arg(0)?)?;
                let card = card_at(1)?;
                if Some(of) != self.me {
                    self.set_known(of, Some(card));
                }
                step.events.push(LoveLetterEvent::Reveal {
                    to: self.me()?,
                    of,
                    card,
                });
            }
            "discard" => {
                let seat = self.seat(arg(0)?)?;
                let card = card_at(1)?;
                self.view(seat)?.played.push(card);
                if Some(seat) == self.me {
                    self.remove_from_hand(card);
                }
                self.set_known(seat, None);
                // The target draws anew (from the deck, or the set-aside card
                // once the deck is empty), unless the Princess put it out
                // (standard rules; Postman's target draws, or is out when
                // the deck is empty).
                if card != Card::Princess || self.postman() {
                    self.deck = self.deck.saturating_sub(1);
                }
                step.events.push(LoveLetterEvent::Discard { seat, card });
            }
            "out" => {
                let seat = self.seat(arg(0)?)?;
                let cards = (1..args.len())
                    .map(card_at)
                    .collect::<Result<Vec<_>, BotSideError>>()?;
                let out_cards = OutCards::of(&cards).map_err(|e| {
                    BotSideError::protocol(format!("'out' shows {} cards, {e}", cards.len()))
                })?;
                let view = self.view(seat)?;
                view.in_round = false;
                view.protected = false;
                view.out_hand = cards;
                self.set_known(seat, None);
                if Some(seat) == self.me {
                    self.hand.clear();
                }
                step.events.push(LoveLetterEvent::Out {
                    seat,
                    cards: out_cards,
                });
            }
            // Postman: the card just played had no effect on this player,
            // as the rules already told (`played`). Who is protected follows
            // from the Priestesses played.
            "protected" => {
                self.seat(arg(0)?)?;
            }
            // `won_round`, `won_game`, and lines of a revision this client
            // does not know, are skipped.
            _ => {}
        }
        if step.new_game {
            self.started = true;
        }
        Ok(step)
    }

    /// `seat` played `card` face up, on `target` if any, with or without
    /// effect.
    fn played(
        &mut self,
        seat: Seat,
        card: Card,
        target: Option<Seat>,
        without_effect: bool,
    ) -> Result<(), BotSideError> {
        self.view(seat)?.played.push(card);
        let me = self.me()?;
        if seat == me {
            self.remove_from_hand(card);
        }
        if self.known.get(seat.index()).copied().flatten() == Some(card) {
            self.set_known(seat, None);
        }
        match (card, target) {
            (Card::Priestess, _) => self.view(seat)?.protected = true,
            (Card::General, Some(t)) if t != seat && !without_effect => {
                if me == seat || me == t {
                    // The other side of the swap now holds this bot's card.
                    let other = if me == seat { t } else { seat };
                    let mine = self.hand.first().copied();
                    self.set_known(other, mine);
                } else if seat.index() < self.known.len() && t.index() < self.known.len() {
                    self.known.swap(seat.index(), t.index());
                }
            }
            // Nothing else changes who knows which card.
            (
                Card::Soldier
                | Card::Clown
                | Card::Knight
                | Card::Wizard
                | Card::General
                | Card::Minister
                | Card::Princess,
                _,
            ) => {}
        }
        Ok(())
    }

    /// What the strategy sees now.
    pub(super) fn observation(&self) -> Result<LoveLetterObservation, BotSideError> {
        let me = self.me()?;
        let n = self.n()?;
        Ok(LoveLetterObservation {
            seat: me,
            round: self.rounds.saturating_sub(1),
            wins: vec![0; n],
            wins_needed: WINS_NEEDED,
            hand: self.hand.clone(),
            players: self.views.clone(),
            deck: self.deck,
            to_act: self.to_act,
            first: self.first.unwrap_or(me),
            known: self
                .known
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != me.index())
                .filter_map(|(i, c)| c.map(|c| (Seat(i as u8), c)))
                .collect(),
        })
    }

    fn postman(&self) -> bool {
        self.rules == Rules::Postman
    }

    /// Whether `seat` may name `t` with `card` (as the engine's rules say).
    fn may_name(&self, seat: Seat, card: Card, t: Seat) -> bool {
        if t.index() >= self.views.len() {
            return false;
        }
        if self.postman() {
            return true;
        }
        if t == seat {
            return card == Card::Wizard;
        }
        self.views[t.index()].in_round
    }

    /// Why a card `seat` aims at `t` has no effect, if it has none.
    fn no_effect(&self, seat: Seat, t: Seat) -> Option<NoEffectReason> {
        let view = self.views.get(t.index())?;
        no_effect(self.rules, seat, t, view.in_round, view.protected)
    }

    /// The legal plays, as the rules engine lists them.
    pub(super) fn legal(&self) -> Result<Vec<Play>, BotSideError> {
        let me = self.me()?;
        let guesses: &[Card] = if self.postman() {
            &Card::ALL
        } else {
            &Card::GUESSES
        };
        let mut out = Vec::new();
        for (i, &card) in self.hand.iter().enumerate() {
            if self.hand[..i].contains(&card) {
                continue;
            }
            if !card.takes_target() {
                out.push(Play::card(card));
                continue;
            }
            let targets: Vec<Seat> = (0..self.views.len() as u8)
                .map(Seat)
                .filter(|t| self.may_name(me, card, *t))
                .collect();
            let affects_one = targets.iter().any(|t| self.no_effect(me, *t).is_none());
            for &t in &targets {
                if card == Card::Soldier {
                    out.extend(guesses.iter().map(|g| Play::soldier(t, *g)));
                } else {
                    out.push(Play::on(card, t));
                }
            }
            if !self.postman() && !affects_one {
                out.push(Play::card(card));
            }
        }
        Ok(out)
    }

    /// A play in the protocol's words.
    pub(super) fn format(&self, play: Play) -> String {
        self.style.play_line(play)
    }
}

/// The rules a manager of this protocol style applies unless told: the
/// standard rules for the classic protocol, Postman's for Postman's.
pub fn default_rules(style: Style) -> LoveLetterVariant {
    match style {
        Style::Classic => LoveLetterVariant::standard(),
        Style::Postman => LoveLetterVariant::postman(),
    }
}

/// Runs `strategy` as a Love Letter AI of the given protocol style, for a
/// manager applying the rules of `variant` (see [`default_rules`]).
///
/// The manager starts the AI anew for every round. Classic: it does not say
/// how many play, so `opts.players` must give it (an error otherwise).
/// Postman: the AI answers `ident` with its name ([`POSTMAN_NAME`]) and is
/// told the table size. Either way the run ends, with `Ok`, at the end of
/// input or when the manager closes the AI's output (it stops its AIs with
/// SIGTERM).
pub fn run_loveletter(
    mut strategy: Box<dyn Strategy<LoveLetter>>,
    style: Style,
    variant: &LoveLetterVariant,
    opts: &ClientOptions,
    input: impl BufRead,
    mut output: impl Write,
) -> Result<(), BotSideError> {
    if style == Style::Classic {
        match opts.players {
            Some(n) if (2..=MAX_SEATS).contains(&n) => {}
            Some(n) => {
                return Err(BotSideError::protocol(format!(
                    "love letter needs 2 to {MAX_SEATS} players, not {n}"
                )))
            }
            None => {
                return Err(BotSideError::protocol(format!(
                    "the classic love letter protocol does not announce the number of players: \
                 give it (2 to {MAX_SEATS})"
                )))
            }
        }
    }
    let mut rng = bot_rng(opts.seed);
    let mut table = Table::new(style, variant, opts.players);
    let mut lines = Lines::new(input);
    while let Some((number, line)) = lines.next_line()? {
        let step = table
            .handle(line)
            .at(|| format!("line {number} '{}'", shown(line)))?;
        if let Some(reply) = &step.reply {
            if !sent(answer(&mut output, reply))? {
                return Ok(());
            }
        }
        if step.new_game {
            strategy.new_game(table.me()?, variant, table.seats());
        }
        for e in &step.events {
            strategy.notify(e);
        }
        if step.act {
            let obs = table.observation()?;
            let mut legal = table.legal()?;
            // Postman's protocol always names a target: under the standard
            // rules there is then always one (a protected player, or the
            // Wizard's own player), with or without effect.
            if style == Style::Postman {
                legal.retain(
                    |p| !matches!(p, Play::Play { card, target: None, .. } if card.takes_target()),
                );
            }
            if legal.is_empty() {
                return Err(BotSideError::protocol(format!(
                    "line {number}: the bot must play but holds no card"
                )));
            }
            let play = strategy.act(&obs, &legal, &mut rng);
            if !sent(answer(&mut output, &table.format(play)))? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Whether an answer went out: `false` when the manager has closed the
/// AI's output (it stopped the AI: out of the round, or the round is over),
/// an error for any other failure.
fn sent(result: Result<(), BotSideError>) -> Result<bool, BotSideError> {
    match result {
        Ok(()) => Ok(true),
        Err(e) if e.is_broken_pipe() => Ok(false),
        Err(e) => Err(e),
    }
}
