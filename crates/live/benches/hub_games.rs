//! SkullWhist games played through the hub as the 2014 API's handlers call
//! it, without HTTP (issue 53): two bots on a SQLite store, with the hub
//! watched by spectators' registry as the server's is. The bots take turns
//! reading their `status` (one read each, round after round: about 35 a
//! game, 1.3 a move; `bench server`'s bots, polling every millisecond, read
//! about 2 a move), bid 3 and play a legal card chosen by a seeded random
//! generator, the same games for every build. One iteration is one game:
//! `new-game` for both, 2 bids, 26 plays, the statuses, and the game's
//! start and end stored. Measured as the process's CPU time (every thread:
//! the hub's, the runtime's and the SQLite writer's) and as wall time,
//! which includes the group commit's waits. `bench server` measures the
//! same path with HTTP and many bots; this one shows the game's own cost,
//! without the HTTP stack and the load generator. On a shared machine both
//! move from run to run: compare builds in turns.
//!
//! `cargo bench -p croupier-live --bench hub_games -- --save-baseline before`
//! on the old build, then `-- --baseline before` on the new.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark fails loudly

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use croupier_live::hub::{Hub, HubConfig, NewGame};
use croupier_live::live_games::LiveGames;
use croupier_rules::skullwhist::{playable, Card, CardSet};
use croupier_store::{BotId, SqliteStore, Store};
use nix::time::ClockId;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use serde_json::Value;

/// The CPU time this process has used, all threads.
fn cpu_time() -> Duration {
    Duration::from(
        ClockId::CLOCK_PROCESS_CPUTIME_ID
            .now()
            .expect("the process's CPU clock"),
    )
}

/// One bot's side of a game: its hand, as the REST bots of `bench server`
/// keep it.
struct Side {
    bot: BotId,
    hand: CardSet,
    over: bool,
}

impl Side {
    /// Reads its status and plays a card when it is its turn.
    async fn step(&mut self, hub: &Hub, rng: &mut StdRng) {
        let status = hub.status(self.bot).await.unwrap();
        let s: Value = serde_json::from_str(&status).unwrap();
        if s["game"].is_null() {
            self.over = true;
            return;
        }
        if s["your-turn"] != true {
            return;
        }
        let lead = s["opponent-current-card"]
            .as_str()
            .map(|c| c.parse::<Card>().unwrap());
        let card = *playable(self.hand, lead)
            .to_vec()
            .choose(rng)
            .expect("a card to play");
        hub.play(self.bot, card.text()).await.unwrap();
        self.hand = CardSet(self.hand.0 & !card.bit());
    }
}

/// Plays one game between `a` and `b` to its end.
async fn game(hub: &Arc<Hub>, a: BotId, b: BotId, rng: &mut StdRng) {
    let (ga, gb) = tokio::join!(hub.new_game(a), hub.new_game(b));
    let mut sides = Vec::new();
    for (bot, g) in [(a, ga), (b, gb)] {
        let NewGame::Game { cards, .. } = g.unwrap() else {
            panic!("no game")
        };
        let hand = cards.into_iter().collect();
        sides.push(Side {
            bot,
            hand,
            over: false,
        });
    }
    for s in &sides {
        hub.bid(s.bot, 3).await.unwrap();
    }
    while !sides.iter().all(|s| s.over) {
        for s in sides.iter_mut().filter(|s| !s.over) {
            s.step(hub, rng).await;
        }
    }
}

fn hub_games(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("hub.db").display());
    let (hub, a, b) = rt.block_on(async {
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&url).await.unwrap());
        let a = store.create_bot("a", "h", false).await.unwrap();
        let b = store.create_bot("b", "h", false).await.unwrap();
        let hub = Arc::new(Hub::new(store, HubConfig::default()));
        hub.watch_with(Arc::new(LiveGames::default()));
        (hub, a, b)
    });
    let play = |n: u64, rng: &mut StdRng| {
        rt.block_on(async {
            for _ in 0..n {
                game(&hub, a, b, rng).await;
            }
        })
    };
    let mut g = c.benchmark_group("a SkullWhist game through the hub");
    g.measurement_time(Duration::from_secs(10));
    g.bench_function("CPU time", |bench| {
        let mut rng = StdRng::seed_from_u64(53);
        bench.iter_custom(|n| {
            let t = cpu_time();
            play(n, &mut rng);
            cpu_time().saturating_sub(t)
        })
    });
    g.bench_function("wall time", |bench| {
        let mut rng = StdRng::seed_from_u64(53);
        bench.iter_custom(|n| {
            let t = Instant::now();
            play(n, &mut rng);
            t.elapsed()
        })
    });
    g.finish();
}

criterion_group!(benches, hub_games);
criterion_main!(benches);
