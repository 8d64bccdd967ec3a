//! Finished games, a batch at a time (issue 13, speed): the games that one
//! group commit finishes, with their seats, ratings, counts, head-to-head,
//! history and totals, in three statements for the whole batch (they were
//! three per game, one after the other, while every later finishing move
//! waited for the batch).
//!
//! The ratings are computed here, in the batch's order: a bot in two games
//! of one batch is rated by the second from what the first made of it, as
//! if the games had been written one by one.

use std::collections::HashMap;

use sqlx::{PgConnection, Row};

use crate::ratings::{conservative, ratable, updates, START};
use crate::{BotId, GameEnd, GameId, StoreError};

/// A game of the batch as the first statement found it.
struct Marked {
    game: String,
    bots: Vec<BotId>,
    /// Not a tournament's or a person's game, not rated before.
    rateable: bool,
}

/// A bot in one game kind.
type StatKey = (BotId, String);
/// A bot against an opponent in one game kind.
type PairKey = (BotId, BotId, String);

/// What the rated games of a batch add to each table.
#[derive(Default)]
struct Rated {
    /// (bot, game kind) → its latest state; in first-seen order in `order`.
    stats: HashMap<StatKey, Stat>,
    order: Vec<StatKey>,
    /// (bot, game id, mu, sigma).
    history: Vec<(BotId, GameId, f64, f64)>,
    /// (bot, opponent, game kind) → [games, wins, losses, ties].
    pairs: HashMap<PairKey, [i64; 4]>,
    pair_order: Vec<PairKey>,
    /// game kind → games.
    totals: HashMap<String, i64>,
}

/// A bot's rating and the counts a batch adds to it in one game kind.
#[derive(Clone, Copy)]
struct Stat {
    mu: f64,
    sigma: f64,
    /// [games, wins, losses, ties, forfeits] added.
    counts: [i64; 5],
    last_game: GameId,
    /// Index of the game's end in the batch (its time).
    last_end: usize,
}

/// Marks each running game of `games` finished and stores its scores; each
/// that is rated (not a tournament's or a person's game, rankable, not
/// rated before) updates ratings, counts, head-to-head and history, in the
/// order given. A game closed meanwhile (its process reaped as lost) stays
/// as it is, unrated; a game that is not there at all is an error (its
/// start was lost), and the caller's transaction fails. The games are
/// counted in row `shard` of `game_totals`. The ids must be distinct.
pub(crate) async fn finish_games(
    tx: &mut PgConnection,
    games: &[(GameId, &GameEnd)],
    shard: i64,
) -> Result<(), StoreError> {
    let marked = mark(tx, games).await?;
    if marked.len() < games.len() {
        let missing: Vec<GameId> = games
            .iter()
            .map(|(id, _)| *id)
            .filter(|id| !marked.contains_key(id))
            .collect();
        all_there(tx, &missing).await?;
    }
    // The games to rate, in the batch's order, with their ranks.
    let rated: Vec<(usize, Vec<u8>)> = games
        .iter()
        .enumerate()
        .filter_map(|(i, (id, end))| {
            let m = marked.get(id)?;
            m.rateable
                .then(|| ratable(&m.bots, end))
                .flatten()
                .map(|r| (i, r))
        })
        .collect();
    let before = seats_and_ratings(tx, games, &marked, &rated).await?;
    if rated.is_empty() {
        return Ok(());
    }
    let mut r = Rated::default();
    let mut now = before;
    for (i, ranks) in &rated {
        let (id, end) = games[*i];
        let Some(m) = marked.get(&id) else { continue };
        let start: Vec<(f64, f64)> = m
            .bots
            .iter()
            .map(|b| now.get(&(*b, m.game.clone())).copied().unwrap_or(START))
            .collect();
        let (seats, pairs) = updates(&m.bots, ranks, end.forfeited_by, &start);
        for s in &seats {
            let key = (s.bot, m.game.clone());
            now.insert(key.clone(), (s.mu, s.sigma));
            r.history.push((s.bot, id, s.mu, s.sigma));
            let add = [1, s.win, s.loss, s.tie, s.forfeit];
            match r.stats.get_mut(&key) {
                Some(st) => {
                    st.mu = s.mu;
                    st.sigma = s.sigma;
                    st.counts.iter_mut().zip(add).for_each(|(c, a)| *c += a);
                    st.last_game = id;
                    st.last_end = *i;
                }
                None => {
                    r.order.push(key.clone());
                    r.stats.insert(
                        key,
                        Stat {
                            mu: s.mu,
                            sigma: s.sigma,
                            counts: add,
                            last_game: id,
                            last_end: *i,
                        },
                    );
                }
            }
        }
        for p in &pairs {
            let key = (p.bot, p.opponent, m.game.clone());
            let add = [1, p.win, p.loss, p.tie];
            match r.pairs.get_mut(&key) {
                Some(c) => c.iter_mut().zip(add).for_each(|(c, a)| *c += a),
                None => {
                    r.pair_order.push(key.clone());
                    r.pairs.insert(key, add);
                }
            }
        }
        *r.totals.entry(m.game.clone()).or_insert(0) += 1;
    }
    write_rated(tx, games, &r, shard).await?;
    Ok(())
}

/// The first statement: every running game of `games` marked finished,
/// with what its rating needs. Games not running are left out.
async fn mark(
    tx: &mut PgConnection,
    games: &[(GameId, &GameEnd)],
) -> Result<HashMap<GameId, Marked>, StoreError> {
    let ids: Vec<GameId> = games.iter().map(|(id, _)| *id).collect();
    let finished: Vec<&str> = games.iter().map(|(_, e)| e.finished.as_str()).collect();
    let score = |seat: usize| -> Vec<Option<i64>> {
        games
            .iter()
            .map(|(_, e)| e.scores.get(seat).copied().flatten())
            .collect()
    };
    let forfeited: Vec<Option<BotId>> = games.iter().map(|(_, e)| e.forfeited_by).collect();
    let records: Vec<&str> = games.iter().map(|(_, e)| e.record.as_str()).collect();
    let rows = sqlx::query(
        "WITH u AS (SELECT * FROM UNNEST($1::BIGINT[], $2::TEXT[], $3::BIGINT[], $4::BIGINT[],
                                         $5::BIGINT[], $6::TEXT[])
                    AS u(id, finished, score1, score2, forfeited_by, record)),
              g AS (UPDATE games SET status = 'finished', finished = u.finished,
                           score1 = u.score1, score2 = u.score2,
                           forfeited_by = u.forfeited_by, record = u.record
                    FROM u WHERE games.id = u.id AND games.status = 'running'
                    RETURNING games.id, games.game, games.tournament_id IS NULL AS untoured)
         SELECT g.id, g.game, g.untoured,
                ARRAY(SELECT bot FROM game_seats WHERE game_id = g.id ORDER BY seat) AS bots,
                EXISTS (SELECT 1 FROM person_games WHERE game_id = g.id) AS person,
                EXISTS (SELECT 1 FROM rating_history h JOIN game_seats s ON s.bot = h.bot
                        WHERE s.game_id = g.id AND s.seat = 0 AND h.game_id = g.id) AS already
         FROM g",
    )
    .bind(&ids)
    .bind(&finished)
    .bind(score(0))
    .bind(score(1))
    .bind(&forfeited)
    .bind(&records)
    .fetch_all(&mut *tx)
    .await?;
    let mut marked = HashMap::with_capacity(rows.len());
    for row in rows {
        let untoured: bool = row.try_get("untoured")?;
        let person: bool = row.try_get("person")?;
        let already: bool = row.try_get("already")?;
        marked.insert(
            row.try_get::<GameId, _>("id")?,
            Marked {
                game: row.try_get("game")?,
                bots: row.try_get("bots")?,
                rateable: untoured && !person && !already,
            },
        );
    }
    Ok(marked)
}

/// Games that were not running when their end came: closed meanwhile
/// (they stay as they are), or not there at all — their start was lost (a
/// PostgreSQL crash took the last commits that did not wait for the disk,
/// see `PgStore`): an error, so that no bot is told its game is stored.
async fn all_there(tx: &mut PgConnection, ids: &[GameId]) -> Result<(), StoreError> {
    let there: i64 = sqlx::query_scalar("SELECT count(*) FROM games WHERE id = ANY($1)")
        .bind(ids)
        .fetch_one(&mut *tx)
        .await?;
    if there == ids.len() as i64 {
        Ok(())
    } else {
        Err(StoreError::Db(sqlx::Error::RowNotFound))
    }
}

/// The second statement: every finished game's seats get their scores and
/// ranks, and the ratings before the batch of every bot in a rated game
/// are read and locked (in one order, so that two batches never wait for
/// each other in a circle).
async fn seats_and_ratings(
    tx: &mut PgConnection,
    games: &[(GameId, &GameEnd)],
    marked: &HashMap<GameId, Marked>,
    rated: &[(usize, Vec<u8>)],
) -> Result<HashMap<StatKey, (f64, f64)>, StoreError> {
    let (mut seat_game, mut seat_no, mut seat_score, mut seat_rank, mut seat_forfeit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (id, end) in games {
        if !marked.contains_key(id) {
            continue;
        }
        for (seat, rank) in end.ranks.iter().enumerate() {
            seat_game.push(*id);
            seat_no.push(seat as i64);
            seat_score.push(end.scores.get(seat).copied().flatten());
            seat_rank.push(i64::from(*rank));
            seat_forfeit.push(end.forfeited_by);
        }
    }
    let (mut kinds, mut bots) = (Vec::new(), Vec::new());
    for (i, _) in rated {
        if let Some(m) = marked.get(&games[*i].0) {
            for b in &m.bots {
                kinds.push(m.game.as_str());
                bots.push(*b);
            }
        }
    }
    let rows = sqlx::query(
        "WITH s AS (UPDATE game_seats s SET score = u.score, rank = u.rank,
                        forfeited = (s.bot IS NOT DISTINCT FROM u.forfeited_by)
                    FROM UNNEST($1::BIGINT[], $2::BIGINT[], $3::BIGINT[], $4::BIGINT[], $5::BIGINT[])
                         AS u(game_id, seat, score, rank, forfeited_by)
                    WHERE s.game_id = u.game_id AND s.seat = u.seat RETURNING 1)
         SELECT bot, game, mu, sigma FROM bot_stats
         WHERE (game, bot) IN (SELECT * FROM UNNEST($6::TEXT[], $7::BIGINT[]))
         ORDER BY game, bot FOR UPDATE",
    )
    .bind(&seat_game)
    .bind(&seat_no)
    .bind(&seat_score)
    .bind(&seat_rank)
    .bind(&seat_forfeit)
    .bind(&kinds)
    .bind(&bots)
    .fetch_all(&mut *tx)
    .await?;
    let mut before = HashMap::with_capacity(rows.len());
    for row in rows {
        before.insert(
            (row.try_get("bot")?, row.try_get("game")?),
            (row.try_get("mu")?, row.try_get("sigma")?),
        );
    }
    Ok(before)
}

/// The third statement: ratings and counts, history, head-to-head and the
/// totals of the batch's rated games, each table once.
async fn write_rated(
    tx: &mut PgConnection,
    games: &[(GameId, &GameEnd)],
    r: &Rated,
    shard: i64,
) -> Result<(), sqlx::Error> {
    let stats: Vec<(&StatKey, &Stat)> = r
        .order
        .iter()
        .filter_map(|k| Some((k, r.stats.get(k)?)))
        .collect();
    let s_bot: Vec<BotId> = stats.iter().map(|((b, _), _)| *b).collect();
    let s_game: Vec<&str> = stats.iter().map(|((_, g), _)| g.as_str()).collect();
    let s_mu: Vec<f64> = stats.iter().map(|(_, s)| s.mu).collect();
    let s_sigma: Vec<f64> = stats.iter().map(|(_, s)| s.sigma).collect();
    let s_cons: Vec<f64> = stats
        .iter()
        .map(|(_, s)| conservative(s.mu, s.sigma))
        .collect();
    let count = |k: usize| -> Vec<i64> { stats.iter().map(|(_, s)| s.counts[k]).collect() };
    let s_last: Vec<GameId> = stats.iter().map(|(_, s)| s.last_game).collect();
    let s_when: Vec<&str> = stats
        .iter()
        .map(|(_, s)| games[s.last_end].1.finished.as_str())
        .collect();
    let h_bot: Vec<BotId> = r.history.iter().map(|h| h.0).collect();
    let h_game: Vec<GameId> = r.history.iter().map(|h| h.1).collect();
    let h_mu: Vec<f64> = r.history.iter().map(|h| h.2).collect();
    let h_sigma: Vec<f64> = r.history.iter().map(|h| h.3).collect();
    let pairs: Vec<(&PairKey, &[i64; 4])> = r
        .pair_order
        .iter()
        .filter_map(|k| Some((k, r.pairs.get(k)?)))
        .collect();
    let p_bot: Vec<BotId> = pairs.iter().map(|((b, _, _), _)| *b).collect();
    let p_opp: Vec<BotId> = pairs.iter().map(|((_, o, _), _)| *o).collect();
    let p_game: Vec<&str> = pairs.iter().map(|((_, _, g), _)| g.as_str()).collect();
    let pcount = |k: usize| -> Vec<i64> { pairs.iter().map(|(_, c)| c[k]).collect() };
    let t_game: Vec<&str> = r.totals.keys().map(String::as_str).collect();
    let t_games: Vec<i64> = t_game.iter().map(|g| r.totals[*g]).collect();
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
    .bind(count(0))
    .bind(count(1))
    .bind(count(2))
    .bind(count(3))
    .bind(count(4))
    .bind(&s_last)
    .bind(&s_when)
    .bind(&h_bot)
    .bind(&h_game)
    .bind(&h_mu)
    .bind(&h_sigma)
    .bind(&p_bot)
    .bind(&p_opp)
    .bind(&p_game)
    .bind(pcount(0))
    .bind(pcount(1))
    .bind(pcount(2))
    .bind(pcount(3))
    .bind(shard)
    .bind(&t_game)
    .bind(&t_games)
    .execute(&mut *tx)
    .await?;
    Ok(())
}
