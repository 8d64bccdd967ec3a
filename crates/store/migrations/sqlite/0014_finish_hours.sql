-- Finished games counted per list and hour (issue 53): a page number deep
-- in a long list starts from the hour it falls in instead of skipping
-- every newer game in an index. One row per bot (0: the lists of every
-- bot), game kind and hour of the finish time (`substr(finished, 1, 13)`,
-- `YYYY-MM-DDTHH`); and per list in all (`finish_totals`: a list's length,
-- unrated games included, which `game_totals` and `bot_stats` leave out).
-- The PostgreSQL migration is 0016.
--
-- The rows count what the lists' indexes hold: a finished game in
-- `games_finished_order`, a ranked seat with its finish time in
-- `game_seats_finish_order_by_bot`. The statements that finish or import a
-- game count it (`sqlite_raw::COUNT_HOURS`, `COUNT_TOTALS`): a trigger on the games' UPDATE
-- cost 60-90 µs of CPU per finished game in
-- `cargo bench -p croupier-store --bench writes`. Games are never deleted,
-- and a finished game never changes status.
CREATE TABLE finish_hours (
    bot   INTEGER NOT NULL,
    game  TEXT    NOT NULL,
    hour  TEXT    NOT NULL,
    games INTEGER NOT NULL,
    PRIMARY KEY (bot, game, hour)
) WITHOUT ROWID;

INSERT INTO finish_hours (bot, game, hour, games)
SELECT 0, game, substr(finished, 1, 13), COUNT(*) FROM games
WHERE status = 'finished' AND finished IS NOT NULL
GROUP BY game, substr(finished, 1, 13);

INSERT INTO finish_hours (bot, game, hour, games)
SELECT s.bot, g.game, substr(s.finished, 1, 13), COUNT(*)
FROM game_seats s JOIN games g ON g.id = s.game_id
WHERE s.finished IS NOT NULL AND s.rank IS NOT NULL
GROUP BY s.bot, g.game, substr(s.finished, 1, 13);

CREATE TABLE finish_totals (
    bot   INTEGER NOT NULL,
    game  TEXT    NOT NULL,
    games INTEGER NOT NULL,
    PRIMARY KEY (bot, game)
) WITHOUT ROWID;

INSERT INTO finish_totals (bot, game, games)
SELECT bot, game, SUM(games) FROM finish_hours GROUP BY bot, game;
