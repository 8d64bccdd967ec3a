//! The `status` reply of the 2014 API, as the game's runner writes it for a
//! seat after every move: built as a `serde_json::Value` object and written
//! out (as before issues 11/20's rework) against written straight from its
//! typed wire struct (now), over the positions of whole games, in the same
//! run. `cargo bench -p croupier-dialects --bench status`.

#![allow(clippy::unwrap_used)] // a benchmark fails loudly

use criterion::{criterion_group, criterion_main, Criterion};
use croupier_dialects::skullwhist_rest::Status;
use croupier_rules::skullwhist::{SkullWhist, SkullWhistObservation, SkullWhistVariant};
use croupier_rules::{Game, Seat};
use serde_json::json;

/// The reply as it was built before: a JSON object, then its text.
fn as_before(s: &Status) -> String {
    json!({
        "result": "success",
        "game": s.game,
        "round": s.round,
        "your-turn": s.your_turn,
        "opponent": s.opponent,
        "opponent-bid": s.opponent_bid,
        "opponent-previous-card": s.opponent_previous_card.map(|c| c.to_string()),
        "opponent-current-card": s.opponent_current_card.map(|c| c.to_string()),
        "you-won-previous-round": s.you_won_previous_round,
    })
    .to_string()
}

/// What both seats observe at every position of a few whole games.
fn positions() -> Vec<SkullWhistObservation> {
    let mut out = Vec::new();
    for seed in 0..8u64 {
        let mut g = SkullWhist::new(&SkullWhistVariant {}, 2, seed).unwrap();
        let mut step = 0usize;
        loop {
            for seat in [Seat(0), Seat(1)] {
                out.push(g.observation(seat));
            }
            let Some(seat) = g.to_act().first() else {
                break;
            };
            let legal = g.legal_vec(seat);
            g.apply(seat, legal[step % legal.len()]).unwrap();
            step += 5;
        }
    }
    out
}

fn status(c: &mut Criterion) {
    let obs = positions();
    let statuses: Vec<Status> = obs.iter().map(|o| Status::of(41, 7, o)).collect();
    for s in &statuses {
        assert_eq!(s.reply_text(), as_before(s), "the same bytes");
    }
    let mut g = c.benchmark_group(format!("status reply ({} positions)", statuses.len()));
    g.bench_function("before: serde_json::Value", |b| {
        b.iter(|| {
            statuses
                .iter()
                .map(|s| as_before(std::hint::black_box(s)).len())
                .sum::<usize>()
        })
    });
    g.bench_function("now: typed wire struct", |b| {
        b.iter(|| {
            statuses
                .iter()
                .map(|s| std::hint::black_box(s).reply_text().len())
                .sum::<usize>()
        })
    });
    g.finish();
}

criterion_group!(benches, status);
criterion_main!(benches);
