//! [`crate::ratings`] in PostgreSQL: the rated games of one transaction
//! (a batch of games finished live, see `super::finish`, or of imported
//! games, see `super::import`) in one statement over arrays, each table
//! written once. The ratings are computed here in the games' order: a bot
//! in two games is rated by the second from what the first made of it, as
//! if the games had been written one by one.

use std::collections::{BTreeMap, HashMap};

use sqlx::PgConnection;

use crate::ratings::{conservative, updates, START};
use crate::{BotId, GameEnd, GameId};

/// A finished game to rate: its kind, its bots by seat and the ranks they
/// count with.
pub(super) struct ToRate<'a> {
    pub id: GameId,
    pub end: &'a GameEnd,
    pub game: &'a str,
    pub bots: &'a [BotId],
    pub ranks: Vec<u8>,
}

/// The ratings (mu, sigma) of bots in game kinds, as read (and locked)
/// before the games are rated; a bot missing starts at [`START`].
pub(super) type Before = HashMap<(BotId, String), (f64, f64)>;

/// A bot's rating and the counts the games add to it in one game kind.
struct Stat<'a> {
    mu: f64,
    sigma: f64,
    /// [games, wins, losses, ties, forfeits] added.
    counts: [i64; 5],
    last_game: GameId,
    last_played: &'a str,
}

/// What the rated games add to each table. The maps are ordered, so that
/// two transactions write the same rows in the same order.
#[derive(Default)]
struct Rated<'a> {
    stats: BTreeMap<(BotId, &'a str), Stat<'a>>,
    /// (bot, game id, mu, sigma).
    history: Vec<(BotId, GameId, f64, f64)>,
    /// (bot, opponent, game kind) → [games, wins, losses, ties].
    pairs: BTreeMap<(BotId, BotId, &'a str), [i64; 4]>,
    /// game kind → games.
    totals: BTreeMap<&'a str, i64>,
}

/// Adds `add` to `into`, element by element.
fn add<const N: usize>(into: &mut [i64; N], add: [i64; N]) {
    into.iter_mut().zip(add).for_each(|(c, a)| *c += a);
}

/// Rates `games` in order from the ratings `before`.
fn tally<'a>(games: &[ToRate<'a>], mut before: Before) -> Rated<'a> {
    let mut r = Rated::default();
    for g in games {
        let start: Vec<(f64, f64)> = g
            .bots
            .iter()
            .map(|b| {
                before
                    .get(&(*b, g.game.to_string()))
                    .copied()
                    .unwrap_or(START)
            })
            .collect();
        let (seats, pairs) = updates(g.bots, &g.ranks, g.end.forfeited_by, &start);
        for s in &seats {
            before.insert((s.bot, g.game.to_string()), (s.mu, s.sigma));
            r.history.push((s.bot, g.id, s.mu, s.sigma));
            let stat = r.stats.entry((s.bot, g.game)).or_insert(Stat {
                mu: s.mu,
                sigma: s.sigma,
                counts: [0; 5],
                last_game: g.id,
                last_played: &g.end.finished,
            });
            stat.mu = s.mu;
            stat.sigma = s.sigma;
            stat.last_game = g.id;
            stat.last_played = &g.end.finished;
            add(&mut stat.counts, [1, s.win, s.loss, s.tie, s.forfeit]);
        }
        for p in &pairs {
            let counts = r.pairs.entry((p.bot, p.opponent, g.game)).or_default();
            add(counts, [1, p.win, p.loss, p.tie]);
        }
        *r.totals.entry(g.game).or_default() += 1;
    }
    r
}

/// Rates `games` in order from the ratings `before` (locked by the
/// caller) and writes ratings and counts, history, head-to-head and the
/// totals (in row `shard` of `game_totals`): one statement, each table
/// once.
pub(super) async fn write_rated(
    tx: &mut PgConnection,
    games: &[ToRate<'_>],
    before: Before,
    shard: i64,
) -> Result<(), sqlx::Error> {
    if games.is_empty() {
        return Ok(());
    }
    let r = tally(games, before);
    let stat = |f: fn(&Stat) -> i64| r.stats.values().map(f).collect::<Vec<_>>();
    let s_bot: Vec<BotId> = r.stats.keys().map(|(b, _)| *b).collect();
    let s_game: Vec<&str> = r.stats.keys().map(|(_, g)| *g).collect();
    let s_mu: Vec<f64> = r.stats.values().map(|s| s.mu).collect();
    let s_sigma: Vec<f64> = r.stats.values().map(|s| s.sigma).collect();
    let s_cons: Vec<f64> = r
        .stats
        .values()
        .map(|s| conservative(s.mu, s.sigma))
        .collect();
    let s_when: Vec<&str> = r.stats.values().map(|s| s.last_played).collect();
    let h_bot: Vec<BotId> = r.history.iter().map(|h| h.0).collect();
    let h_game: Vec<GameId> = r.history.iter().map(|h| h.1).collect();
    let h_mu: Vec<f64> = r.history.iter().map(|h| h.2).collect();
    let h_sigma: Vec<f64> = r.history.iter().map(|h| h.3).collect();
    let pair = |k: usize| r.pairs.values().map(|c| c[k]).collect::<Vec<_>>();
    let p_bot: Vec<BotId> = r.pairs.keys().map(|(b, _, _)| *b).collect();
    let p_opp: Vec<BotId> = r.pairs.keys().map(|(_, o, _)| *o).collect();
    let p_game: Vec<&str> = r.pairs.keys().map(|(_, _, g)| *g).collect();
    let t_game: Vec<&str> = r.totals.keys().copied().collect();
    let t_games: Vec<i64> = r.totals.values().copied().collect();
    sqlx::query(
        "WITH stats AS (
            INSERT INTO bot_stats AS s (bot, game, mu, sigma, conservative, games, wins, losses, ties, forfeits, last_game, last_played)
            SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::FLOAT8[], $4::FLOAT8[], $5::FLOAT8[],
                                 $6::BIGINT[], $7::BIGINT[], $8::BIGINT[], $9::BIGINT[], $10::BIGINT[],
                                 $11::BIGINT[], $12::TEXT[])
            ON CONFLICT (bot, game) DO UPDATE SET mu = EXCLUDED.mu, sigma = EXCLUDED.sigma,
               conservative = EXCLUDED.conservative, games = s.games + EXCLUDED.games,
               wins = s.wins + EXCLUDED.wins, losses = s.losses + EXCLUDED.losses,
               ties = s.ties + EXCLUDED.ties, forfeits = s.forfeits + EXCLUDED.forfeits,
               last_game = EXCLUDED.last_game, last_played = EXCLUDED.last_played
            RETURNING 1),
          history AS (
            INSERT INTO rating_history (bot, game_id, mu, sigma)
            SELECT * FROM UNNEST($13::BIGINT[], $14::BIGINT[], $15::FLOAT8[], $16::FLOAT8[])
            RETURNING 1),
          pairs AS (
            INSERT INTO pair_stats AS p (bot, opponent, game, games, wins, losses, ties)
            SELECT * FROM UNNEST($17::BIGINT[], $18::BIGINT[], $19::TEXT[], $20::BIGINT[],
                                 $21::BIGINT[], $22::BIGINT[], $23::BIGINT[])
            ON CONFLICT (bot, opponent, game) DO UPDATE SET games = p.games + EXCLUDED.games,
               wins = p.wins + EXCLUDED.wins, losses = p.losses + EXCLUDED.losses,
               ties = p.ties + EXCLUDED.ties
            RETURNING 1)
         INSERT INTO game_totals AS t (game, shard, games)
         SELECT u.game, $24, u.games FROM UNNEST($25::TEXT[], $26::BIGINT[]) AS u(game, games)
         ON CONFLICT (game, shard) DO UPDATE SET games = t.games + EXCLUDED.games",
    )
    .bind(&s_bot)
    .bind(&s_game)
    .bind(&s_mu)
    .bind(&s_sigma)
    .bind(&s_cons)
    .bind(stat(|s| s.counts[0]))
    .bind(stat(|s| s.counts[1]))
    .bind(stat(|s| s.counts[2]))
    .bind(stat(|s| s.counts[3]))
    .bind(stat(|s| s.counts[4]))
    .bind(stat(|s| s.last_game))
    .bind(&s_when)
    .bind(&h_bot)
    .bind(&h_game)
    .bind(&h_mu)
    .bind(&h_sigma)
    .bind(&p_bot)
    .bind(&p_opp)
    .bind(&p_game)
    .bind(pair(0))
    .bind(pair(1))
    .bind(pair(2))
    .bind(pair(3))
    .bind(shard)
    .bind(&t_game)
    .bind(&t_games)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
