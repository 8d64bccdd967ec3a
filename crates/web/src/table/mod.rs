//! The card table (issue 48): one view of a game, drawn by one renderer for
//! the replay (`/games/{id}?step=N`), the spectators' live page
//! (`/live/{id}`) and a person's play page (`/play/{id}`).
//!
//! It draws an observation: a seat's own for the person playing it, and
//! the rules' public view ([`Game::public_view`]) for spectators and
//! replays, so that the table of a live game at a step is the replay's
//! table at that step. Around it go the seats' names ("you" for the
//! person), whose turn it is with a clock that counts down, the hands the
//! viewer may see, and the result once the game is over. Each game says
//! what its seats and the middle of its table show ([`Tabled`], in
//! `skullwhist.rs`, `goofspiel.rs` and `loveletter.rs`).

use croupier_rules::goofspiel::Goofspiel;
use croupier_rules::loveletter::LoveLetter;
use croupier_rules::skullwhist::SkullWhist;
use croupier_rules::{Game, GameKind, Seat};

use crate::html::Names;
use crate::html::{html, Markup, PreEscaped};

mod goofspiel;
mod loveletter;
mod skullwhist;

/// What a game's table shows besides the frame every game shares.
pub trait Tabled: Game {
    /// What the table says about `seat`: its score, its bid once public,
    /// whether it is protected or out.
    fn seat_facts(o: &Self::Observation, seat: Seat, names: &Names) -> Markup;
    /// The middle of the table: the trick, the prize and the lot, the deck.
    fn centre(o: &Self::Observation, names: &Names) -> Markup;
    /// The observing seat's own hand as card glyphs (none in a public view).
    fn own_hand(o: &Self::Observation) -> Vec<Markup>;
    /// Hands every seat may see, by seat (Goofspiel's bid cards).
    fn public_hands(o: &Self::Observation) -> Vec<Option<Vec<Markup>>>;
    /// The legal moves as buttons of one form: the cards themselves where a
    /// move plays a card. `legal` pairs each move with its text.
    fn moves(o: &Self::Observation, legal: &[(Self::Action, String)], names: &Names) -> Markup;
}

/// The game is over: how it ended and its scores by seat.
#[derive(Debug, Clone)]
pub struct Over {
    /// `finished` or `aborted`.
    pub status: String,
    /// Scores by seat, when finished.
    pub scores: Vec<Option<i64>>,
}

impl Over {
    /// The seats with the best score (several on a tie; none without
    /// scores, as an aborted game has).
    pub fn winners(&self) -> Vec<usize> {
        let best = self.scores.iter().flatten().max();
        (0..self.scores.len())
            .filter(|i| best.is_some() && self.scores[*i].as_ref() == best)
            .collect()
    }
}

/// Everything around the observation.
#[derive(Debug)]
pub struct Ctx<'a> {
    /// Names by seat; the person's seat reads "you".
    pub names: &'a Names,
    /// The seat of the person looking, if they play.
    pub you: Option<Seat>,
    /// The seats whose turn it is.
    pub to_act: Vec<Seat>,
    /// Milliseconds left for the move in progress, when it is timed.
    pub left_ms: Option<u64>,
    /// Hands to show by seat, besides the public ones (a replay shows
    /// every hand).
    pub hands: Vec<Option<Vec<Markup>>>,
    /// The result, once the game is over.
    pub over: Option<Over>,
    /// The person's hand is the buttons below the table (their move): it
    /// is not drawn in their seat too.
    pub hand_below: bool,
}

/// A time left, as people read it: "4 min 59 s", "12 s".
pub fn clock_text(ms: u64) -> String {
    let s = ms.div_ceil(1000);
    if s >= 60 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{s} s")
    }
}

/// A clock that counts down `left_ms` (the page's script ticks it).
pub fn clock(left_ms: u64) -> Markup {
    html! { span class="clock" data-left=(left_ms) { (clock_text(left_ms)) } }
}

/// The script that ticks every clock of a page once a second, also the
/// clocks of a table swapped in later.
pub const CLOCK_SCRIPT: &str = r#"
(function () {
  function text(ms) {
    var s = Math.max(0, Math.ceil(ms / 1000));
    return s >= 60 ? Math.floor(s / 60) + ' min ' + String(s % 60).padStart(2, '0') + ' s' : s + ' s';
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll('.clock[data-left]').forEach(function (c) {
      if (!c.dataset.since) c.dataset.since = now;
      var left = Number(c.dataset.left) - (now - Number(c.dataset.since));
      c.textContent = text(left);
      c.classList.toggle('low', left < 10000);
    });
  }
  tick();
  setInterval(tick, 1000);
})();
"#;

/// The clock script as a `script` element.
pub fn clock_script() -> Markup {
    html! { script { (PreEscaped(CLOCK_SCRIPT)) } }
}

fn hand_html(cards: &[Markup]) -> Markup {
    html! {
        @if cards.is_empty() { span class="empty" { "no cards" } }
        @else { span class="hand" { @for c in cards { (c) } } }
    }
}

/// The table of observation `o`, with the frame of `ctx`.
pub fn render<G: Tabled>(o: &G::Observation, ctx: &Ctx) -> Markup {
    let n = ctx.names.0.len();
    let public = G::public_hands(o);
    let winners = ctx.over.as_ref().map(Over::winners).unwrap_or_default();
    html! {
        div class="felt" {
            ul class="seats" {
                @for i in 0..n {
                    @let seat = Seat(i as u8);
                    @let turn = ctx.to_act.contains(&seat) && ctx.over.is_none();
                    @let won = winners.contains(&i);
                    li class={ "seat-box" @if turn { " turn" } @if ctx.you == Some(seat) { " you" } @if won { " won" } } {
                        div class="who-line" {
                            @if ctx.you == Some(seat) { b { "you" } } @else { (ctx.names.of(seat)) }
                            @if turn { " " span class="tag live" { "to play" } }
                            @if let Some(over) = &ctx.over {
                                @if let Some(Some(score)) = over.scores.get(i) {
                                    " " span class="final" { (score) }
                                }
                                @if won { " " span class="tag win" { "wins" } }
                            }
                        }
                        div class="facts" { (G::seat_facts(o, seat, ctx.names)) }
                        @let below = ctx.hand_below && ctx.you == Some(seat);
                        @let shown = if below { None } else { ctx.hands.get(i).cloned().flatten().or_else(|| public.get(i).cloned().flatten()) };
                        @if let Some(cards) = shown {
                            div class="seat-hand" { span class="muted" { "hand " } (hand_html(&cards)) }
                        }
                    }
                }
            }
            div class="centre" { (G::centre(o, ctx.names)) }
        }
        p id="turn" class="turn-line" {
            @match (&ctx.over, ctx.to_act.as_slice()) {
                (Some(over), _) => {
                    @if over.status != "finished" {
                        "The game is over: it was " (over.status) "."
                    } @else {
                        "The game is over: "
                        @match winners.as_slice() {
                            [w] => { b { @if ctx.you == Some(Seat(*w as u8)) { "you win" } @else { (ctx.names.of(Seat(*w as u8))) " wins" } } },
                            _ => { b { "a tie" } },
                        }
                        ", "
                        @for (k, s) in over.scores.iter().enumerate() {
                            @if k > 0 { " to " }
                            @match s { Some(v) => (v), None => "–" }
                        }
                        "."
                    }
                },
                (None, []) => {
                    @if ctx.you.is_some() { "Waiting for the other players…" } @else { "Waiting for the game to go on…" }
                },
                (None, seats) => {
                    @if ctx.you.is_some_and(|y| seats.contains(&y)) {
                        b { "Your move." }
                    } @else {
                        @for (k, s) in seats.iter().enumerate() {
                            @if k > 0 { ", " }
                            (ctx.names.of(*s))
                        }
                        " to play."
                    }
                    @if let Some(left) = ctx.left_ms { " " (clock(left)) " left." }
                },
            }
        }
    }
}

/// The public table of a game of kind `kind` from its observation as JSON
/// (a live game's public view); `None` if it does not read.
pub fn render_json(kind: GameKind, view: &serde_json::Value, ctx: &Ctx) -> Option<Markup> {
    fn one<G: Tabled>(view: &serde_json::Value, ctx: &Ctx) -> Option<Markup> {
        let o = <G::Observation as serde::Deserialize>::deserialize(view).ok()?;
        Some(render::<G>(&o, ctx))
    }
    match kind {
        GameKind::SkullWhist => one::<SkullWhist>(view, ctx),
        GameKind::LoveLetter => one::<LoveLetter>(view, ctx),
        GameKind::Goofspiel => one::<Goofspiel>(view, ctx),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_read_as_minutes_and_seconds() {
        assert_eq!(clock_text(299_001), "5 min 00 s");
        assert_eq!(clock_text(61_000), "1 min 01 s");
        assert_eq!(clock_text(12_000), "12 s");
        assert_eq!(clock_text(0), "0 s");
    }
}
