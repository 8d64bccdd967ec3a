//! Reading a Postman AI's answer as Postman reads it.
//!
//! - The keywords `play` and `forfeit` and the capitalised card names
//!   (`Soldier` … `Princess`) are matched exactly, case included.
//! - A line whose first word is neither `play` nor `forfeit` is not an
//!   answer: Postman ignores it. Croupier skips it too and keeps waiting for
//!   the answer until the move time runs out (Postman would pass the turn
//!   with no card played, leaving two cards in the hand, which our rules do
//!   not allow; a bot that stays silent is ruled as timed out).
//! - `play <Card>`: an unknown card name is a fault. A card that takes a
//!   target (Soldier, Clown, Knight, Wizard, General) must name one, a single
//!   digit that is a player at the table, or it is a fault; the Soldier must
//!   also name a card. Words the card does not use (a target after the
//!   Priestess, a guess after the Knight, anything after the last word that
//!   counts) are ignored, as Postman never reads them.
//! - Whether the card is held, and what the play does, is for the rules.

use croupier_rules::loveletter::{Card, Play};
use croupier_rules::{RuleError, Seat};

use crate::gops::truncate;
use crate::Reply;

/// A card's capitalised name, as Postman writes and reads it.
pub fn capitalised(card: Card) -> &'static str {
    match card {
        Card::Soldier => "Soldier",
        Card::Clown => "Clown",
        Card::Knight => "Knight",
        Card::Priestess => "Priestess",
        Card::Wizard => "Wizard",
        Card::General => "General",
        Card::Minister => "Minister",
        Card::Princess => "Princess",
    }
}

/// The card whose capitalised name is exactly `word`.
fn card(word: &str) -> Option<Card> {
    Card::ALL.into_iter().find(|c| capitalised(*c) == word)
}

/// Reads a Postman AI's line for a table of `seats`: a play (not yet checked
/// against the rules), a forfeit, a line to ignore, or the reason the play
/// is a fault.
pub fn parse_postman(line: &str, seats: usize) -> Result<Reply<Play>, RuleError> {
    let mut words = line.split_whitespace();
    match words.next() {
        Some("forfeit") => return Ok(Reply::Forfeit),
        Some("play") => {}
        // Neither `play` nor `forfeit`: not an answer.
        _ => return Ok(Reply::Ignore),
    }
    let shown = || truncate(line);
    let played = match words.next() {
        None => {
            return Err(RuleError::malformed(format!(
                "'play' names no card in '{}'",
                shown()
            )))
        }
        Some(w) => card(w).ok_or_else(|| {
            RuleError::malformed(format!(
                "unknown card '{}' (postman's names are Soldier, Clown, Knight, Priestess, \
                 Wizard, General, Minister, Princess, capitalised) in '{}'",
                truncate(w),
                shown()
            ))
        })?,
    };
    if !played.takes_target() {
        return Ok(Reply::Action(Play::card(played)));
    }
    let target = match words.next() {
        None => {
            return Err(RuleError::illegal(format!(
                "the {played} must name a player"
            )))
        }
        Some(w) => match w.as_bytes() {
            [d @ b'0'..=b'9'] if usize::from(d - b'0') < seats => Seat(d - b'0'),
            _ => {
                return Err(RuleError::illegal(format!(
                    "'{}' is not a player (0 to {})",
                    truncate(w),
                    seats.saturating_sub(1)
                )))
            }
        },
    };
    if played != Card::Soldier {
        return Ok(Reply::Action(Play::on(played, target)));
    }
    match words.next().map(|w| (w, card(w))) {
        Some((_, Some(guess))) => Ok(Reply::Action(Play::soldier(target, guess))),
        Some((w, None)) => Err(RuleError::malformed(format!(
            "unknown card '{}' for the soldier's guess in '{}'",
            truncate(w),
            shown()
        ))),
        None => Err(RuleError::illegal("the soldier must name a card")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Reply<Play>, RuleError> {
        parse_postman(line, 3)
    }

    #[test]
    fn plays_are_read_with_exact_capitalised_names() {
        assert_eq!(
            parse("play Soldier 1 Princess"),
            Ok(Reply::Action(Play::soldier(Seat(1), Card::Princess)))
        );
        assert_eq!(
            parse("play Soldier 2 Soldier"),
            Ok(Reply::Action(Play::soldier(Seat(2), Card::Soldier)))
        );
        assert_eq!(
            parse("play Wizard 0"),
            Ok(Reply::Action(Play::on(Card::Wizard, Seat(0))))
        );
        assert_eq!(parse("forfeit"), Ok(Reply::Forfeit));
        for bad in [
            "play soldier 1 Princess",
            "play SOLDIER 1 Princess",
            "play Joker",
        ] {
            assert!(matches!(parse(bad), Err(RuleError::Malformed(_))), "{bad}");
        }
        assert!(matches!(
            parse("play Soldier 1 princess"),
            Err(RuleError::Malformed(_))
        ));
    }

    #[test]
    fn a_line_that_is_neither_play_nor_forfeit_is_ignored() {
        for line in [
            "",
            "hello",
            "PLAY Soldier 1 Princess",
            "Forfeit",
            "debug: thinking",
        ] {
            assert_eq!(parse(line), Ok(Reply::Ignore), "{line}");
        }
    }

    #[test]
    fn a_targeting_card_must_name_a_player_of_one_digit() {
        for bad in [
            "play Knight",
            "play Knight 3",
            "play Knight 01",
            "play Knight x",
            "play Knight -1",
        ] {
            assert!(matches!(parse(bad), Err(RuleError::Illegal(_))), "{bad}");
        }
        assert_eq!(
            parse("play Soldier 1"),
            Err(RuleError::illegal("the soldier must name a card"))
        );
    }

    #[test]
    fn words_a_card_does_not_use_are_ignored() {
        assert_eq!(
            parse("play Priestess 1 Princess"),
            Ok(Reply::Action(Play::card(Card::Priestess)))
        );
        assert_eq!(
            parse("play Knight 1 Princess"),
            Ok(Reply::Action(Play::on(Card::Knight, Seat(1))))
        );
        assert_eq!(
            parse("play Soldier 1 Clown and more"),
            Ok(Reply::Action(Play::soldier(Seat(1), Card::Clown)))
        );
    }
}
