-- Finished games counted per list and hour (issue 53; the SQLite migration
-- is 0014): a page number deep in a long list starts from the hour it
-- falls in instead of skipping every newer game in an index. One row per
-- bot (0: the lists of every bot), game kind, hour of the finish time
-- (`substr(finished, 1, 13)`, `YYYY-MM-DDTHH`) and `shard`; and per list
-- in all (`finish_totals`: a list's length, unrated games included, which
-- `game_totals` and `bot_stats` leave out). `shard` is the writing
-- process's id in the registry of live processes (0 for imports), as
-- `game_totals` is sharded (migration 0011), so that two instances
-- finishing games of one kind in one hour never wait for each other's
-- commit on a shared row. Readers sum the shards.
--
-- The rows count what the lists' indexes hold: a finished game in
-- `games_finished_order`, a ranked seat with its finish time in
-- `game_seats_finish_order_by_bot`. The statements that finish a batch of
-- games or import games count them, once per batch
-- (`postgres::finish::count_listed`): statement triggers doing the same per
-- statement made an import 35% slower (each game's rows updated the same
-- counters again within one transaction). Games are never deleted, and a
-- finished game never changes status.
CREATE TABLE finish_hours (
    bot   BIGINT  NOT NULL,
    game  TEXT    NOT NULL,
    hour  TEXT    COLLATE "C" NOT NULL,
    shard BIGINT  NOT NULL,
    games BIGINT  NOT NULL,
    PRIMARY KEY (bot, game, hour, shard)
);

INSERT INTO finish_hours (bot, game, hour, shard, games)
SELECT 0, game, substr(finished, 1, 13), 0, COUNT(*) FROM games
WHERE status = 'finished' AND finished IS NOT NULL
GROUP BY game, substr(finished, 1, 13);

INSERT INTO finish_hours (bot, game, hour, shard, games)
SELECT s.bot, g.game, substr(s.finished, 1, 13), 0, COUNT(*)
FROM game_seats s JOIN games g ON g.id = s.game_id
WHERE s.finished IS NOT NULL AND s.rank IS NOT NULL
GROUP BY s.bot, g.game, substr(s.finished, 1, 13);

CREATE TABLE finish_totals (
    bot   BIGINT NOT NULL,
    game  TEXT   NOT NULL,
    shard BIGINT NOT NULL,
    games BIGINT NOT NULL,
    PRIMARY KEY (bot, game, shard)
);

INSERT INTO finish_totals (bot, game, shard, games)
SELECT bot, game, 0, SUM(games) FROM finish_hours GROUP BY bot, game;
