-- Ratings and statistics for the website (issue 6). Every table here is
-- maintained by finish_game in the same transaction as the result, so pages
-- read small precomputed rows instead of scanning games.

-- A bot's current Weng-Lin rating and W/L/T/forfeit counts in one game.
-- `conservative` = mu - 3 sigma orders the leaderboards.
CREATE TABLE bot_stats (
    bot          INTEGER NOT NULL REFERENCES bots(id),
    game         TEXT    NOT NULL,
    mu           REAL    NOT NULL,
    sigma        REAL    NOT NULL,
    conservative REAL    NOT NULL,
    games        INTEGER NOT NULL DEFAULT 0,
    wins         INTEGER NOT NULL DEFAULT 0,
    losses       INTEGER NOT NULL DEFAULT 0,
    ties         INTEGER NOT NULL DEFAULT 0,
    forfeits     INTEGER NOT NULL DEFAULT 0,
    last_game    INTEGER,
    last_played  TEXT,
    PRIMARY KEY (bot, game)
) WITHOUT ROWID;

CREATE INDEX bot_stats_by_rating ON bot_stats (game, conservative DESC);
CREATE INDEX bot_stats_by_last_played ON bot_stats (last_played);

-- A bot's rating after each of its games (the chart on its page).
CREATE TABLE rating_history (
    bot     INTEGER NOT NULL REFERENCES bots(id),
    game_id INTEGER NOT NULL REFERENCES games(id),
    mu      REAL    NOT NULL,
    sigma   REAL    NOT NULL,
    PRIMARY KEY (bot, game_id)
) WITHOUT ROWID;

-- Head-to-head results of `bot` against `opponent` in one game kind; a
-- 3- or 4-seat game counts once for every pair of its seats (better rank
-- wins the pair). Both directions are stored.
CREATE TABLE pair_stats (
    bot      INTEGER NOT NULL REFERENCES bots(id),
    opponent INTEGER NOT NULL REFERENCES bots(id),
    game     TEXT    NOT NULL,
    games    INTEGER NOT NULL DEFAULT 0,
    wins     INTEGER NOT NULL DEFAULT 0,
    losses   INTEGER NOT NULL DEFAULT 0,
    ties     INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bot, opponent, game)
) WITHOUT ROWID;

-- Finished games per game kind (the games list's page count).
CREATE TABLE game_totals (
    game  TEXT    NOT NULL PRIMARY KEY,
    games INTEGER NOT NULL DEFAULT 0
);

-- The activity chart counts games by finish time (covering: no table
-- reads); lists page through finished games by id, per game kind and per
-- bot (covering, so a deep OFFSET walks the index only). Queries name these
-- indexes (INDEXED BY), so the plan cannot fall back to a scan.
CREATE INDEX games_finished_at ON games (finished, game) WHERE status = 'finished';
CREATE INDEX games_finished_by_id ON games (id) WHERE status = 'finished';
CREATE INDEX games_finished_by_game ON games (game, id) WHERE status = 'finished';
CREATE INDEX game_seats_finished_by_bot ON game_seats (bot, game_id, rank) WHERE rank IS NOT NULL;

-- Games finished before this migration: SqliteStore::open rates them, in
-- id order, and empties this table.
CREATE TABLE ratings_backlog (game_id INTEGER PRIMARY KEY);
INSERT INTO ratings_backlog SELECT id FROM games WHERE status = 'finished';
