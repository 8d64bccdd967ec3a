//! Helpers shared by the fuzz targets in `fuzz_targets/` (see
//! `docs/fuzzing.md`). Each target turns libFuzzer's bytes into the input of
//! one decoder or parser and checks what must hold whatever the input: no
//! panic, no hang, and the target's own invariant (a decoded action is legal,
//! a JSON API answers in its JSON shape, ...).

use croupier_dialects::{Dialect, DialectKind, Reply};
use croupier_rules::{Game, Seat};

/// Reads fuzz input front to back: header bytes, then the rest as text.
#[derive(Debug)]
pub struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    /// Wraps libFuzzer's bytes.
    pub fn new(data: &'a [u8]) -> Self {
        Input { data }
    }

    /// The next byte (0 once the input is used up).
    pub fn byte(&mut self) -> u8 {
        match self.data.split_first() {
            Some((b, rest)) => {
                self.data = rest;
                *b
            }
            None => 0,
        }
    }

    /// The next `n` bytes, or fewer at the end.
    pub fn bytes(&mut self, n: usize) -> &'a [u8] {
        let (head, rest) = self.data.split_at(n.min(self.data.len()));
        self.data = rest;
        head
    }

    /// Everything not read yet.
    pub fn rest(self) -> &'a [u8] {
        self.data
    }

    /// Everything not read yet, as text (invalid UTF-8 replaced, as the
    /// transports do with a bot's line).
    pub fn rest_text(self) -> String {
        String::from_utf8_lossy(self.data).into_owned()
    }
}

/// Plays a game of `G` to a point chosen by the input (each byte picks one
/// legal action of the seat to act), with one manager-side dialect of `kind`
/// per seat seeing every event its seat may see, then prompts the seat to
/// act and decodes the rest of the input as that seat's answer.
///
/// Checks that a decoded action is one of the legal actions.
pub fn decode_in_play<G: Game>(
    kind: DialectKind,
    variant: &G::Variant,
    seats: usize,
    input: Input,
) {
    let mut input = input;
    let seed = u64::from(input.byte());
    let moves = usize::from(input.byte() % 64);
    let moves = input.bytes(moves);
    let line = input.rest_text();

    let Ok(mut game) = G::new(variant, seats, seed) else {
        return;
    };
    let mut dialects: Vec<Box<dyn Dialect<G>>> = (0..seats)
        .map(|_| croupier_dialects::make::<G>(kind).expect("the dialect carries this game"))
        .collect();
    let mut out = Vec::new();
    for (i, d) in dialects.iter_mut().enumerate() {
        d.hello(&game, Seat(i as u8), &mut out);
    }
    let mut shown = deliver(&game, &mut dialects, 0);
    for &m in moves {
        let Some(seat) = game.to_act().first() else {
            break;
        };
        let legal = game.legal_vec(seat);
        if legal.is_empty() {
            break;
        }
        game.apply(seat, legal[usize::from(m) % legal.len()])
            .expect("a legal action applies");
        shown = deliver(&game, &mut dialects, shown);
    }
    let Some(seat) = game.to_act().first() else {
        return;
    };
    let legal = game.legal_vec(seat);
    let d = &mut dialects[seat.index()];
    d.prompt(&game, seat, &legal, 1_000, &mut out);
    if let Ok(Reply::Action(a)) = d.decode(&game, seat, &line) {
        assert!(
            legal.contains(&a),
            "{kind} decoded {line:?} as {a}, which is not legal"
        );
    }
}

/// Shows events from `from` on to every seat that may see them; returns
/// how many events there are.
fn deliver<G: Game>(game: &G, dialects: &mut [Box<dyn Dialect<G>>], from: usize) -> usize {
    use croupier_rules::Event as _;
    let mut out = Vec::new();
    for e in &game.events()[from..] {
        for (i, d) in dialects.iter_mut().enumerate() {
            let seat = Seat(i as u8);
            if e.visible_to(seat) {
                d.event(game, seat, e, &mut out);
            }
        }
    }
    game.events().len()
}
