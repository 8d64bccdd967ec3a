//! Card effects and the consequences of being put out, with what each seat
//! learns about the others' hands.

use super::{bit, Card, LoveLetter, LoveLetterEvent, OutCards, Seat};

impl LoveLetter {
    /// Puts `seat` out of the round, showing its hand.
    pub(super) fn knock_out(&mut self, seat: Seat) {
        let s = seat.index();
        let hand = self.hands[s];
        self.hands[s].clear();
        self.out_cards[s] = hand;
        self.in_round &= !bit(seat);
        self.protected &= !bit(seat);
        self.forget(seat);
        self.events.push(LoveLetterEvent::Out {
            seat,
            cards: OutCards::held(&hand),
        });
    }

    /// Nobody knows `seat`'s hand any more.
    pub(super) fn forget(&mut self, seat: Seat) {
        for row in &mut self.known {
            row[seat.index()] = None;
        }
    }

    /// The single card `seat` holds when it is not its turn.
    #[inline(always)]
    pub(super) fn only_card(&self, seat: Seat) -> Option<Card> {
        self.hands[seat.index()].as_slice().first().copied()
    }

    /// Plays a checked card and applies its effect.
    #[inline(always)]
    pub(super) fn play(
        &mut self,
        seat: Seat,
        card: Card,
        target: Option<Seat>,
        guess: Option<Card>,
    ) {
        let s = seat.index();
        self.hands[s].remove(card);
        self.played[s].push(card);
        self.played_value[s] += u32::from(card.value());
        // Whoever knew `seat` held `card` can no longer tell which copy went.
        for row in &mut self.known {
            if row[s] == Some(card) {
                row[s] = None;
            }
        }
        self.events.push(LoveLetterEvent::Played {
            seat,
            card,
            target,
            guess,
        });
        if let Some(t) = target {
            if let Some(reason) = self.no_effect(seat, t) {
                self.events.push(LoveLetterEvent::NoEffect {
                    seat,
                    target: t,
                    reason,
                });
                return;
            }
        }
        match (card, target) {
            (Card::Princess, _) => self.knock_out(seat),
            (Card::Priestess, _) => self.protected |= bit(seat),
            (Card::Minister, _) | (_, None) => {}
            (Card::Soldier, Some(t)) => {
                if guess.is_some() && self.only_card(t) == guess {
                    self.knock_out(t);
                }
            }
            (Card::Clown, Some(t)) => {
                if let Some(theirs) = self.only_card(t) {
                    self.events.push(LoveLetterEvent::Reveal {
                        to: seat,
                        of: t,
                        card: theirs,
                    });
                    self.known[s][t.index()] = Some(theirs);
                }
            }
            (Card::Knight, Some(t)) => self.knight(seat, t),
            (Card::General, Some(t)) => self.general(seat, t),
            (Card::Wizard, Some(t)) => self.wizard(t),
        }
    }

    pub(super) fn knight(&mut self, seat: Seat, t: Seat) {
        let (Some(mine), Some(theirs)) = (self.only_card(seat), self.only_card(t)) else {
            return;
        };
        self.events.push(LoveLetterEvent::Reveal {
            to: t,
            of: seat,
            card: mine,
        });
        self.events.push(LoveLetterEvent::Reveal {
            to: seat,
            of: t,
            card: theirs,
        });
        self.known[t.index()][seat.index()] = Some(mine);
        self.known[seat.index()][t.index()] = Some(theirs);
        match mine.cmp(&theirs) {
            std::cmp::Ordering::Less => self.knock_out(seat),
            std::cmp::Ordering::Greater => self.knock_out(t),
            std::cmp::Ordering::Equal => {}
        }
    }

    pub(super) fn general(&mut self, seat: Seat, t: Seat) {
        let (s, ti) = (seat.index(), t.index());
        let (Some(mine), Some(theirs)) = (self.only_card(seat), self.only_card(t)) else {
            return;
        };
        self.hands.swap(s, ti);
        self.events
            .push(LoveLetterEvent::Swap { seat, card: theirs });
        self.events.push(LoveLetterEvent::Swap {
            seat: t,
            card: mine,
        });
        // What anyone knew about either hand now applies to the other seat.
        for row in &mut self.known {
            row.swap(s, ti);
        }
        self.known[s][ti] = Some(mine);
        self.known[ti][s] = Some(theirs);
        self.known[s][s] = None;
        self.known[ti][ti] = None;
    }

    pub(super) fn wizard(&mut self, t: Seat) {
        let ti = t.index();
        let Some(discarded) = self.hands[ti].pop() else {
            return;
        };
        self.played[ti].push(discarded);
        self.forget(t);
        self.events.push(LoveLetterEvent::Discard {
            seat: t,
            card: discarded,
        });
        // Postman: discarding the Princess does not put her holder out, and
        // with the deck empty the target is out (the set-aside card stays).
        let postman = self.variant.is_postman();
        if discarded == Card::Princess && !postman {
            self.knock_out(t);
        } else if !self.deck.is_empty() {
            self.draw_from_deck(t);
        } else if postman {
            self.knock_out(t);
        } else if let Some(card) = self.set_aside.take() {
            self.events.push(LoveLetterEvent::SetAsideTaken { seat: t });
            self.hands[ti].push(card);
            self.events.push(LoveLetterEvent::Draw { seat: t, card });
        }
    }
}
