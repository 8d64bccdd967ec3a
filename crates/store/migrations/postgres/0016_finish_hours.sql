-- Finished games counted per list and hour (issue 53; the SQLite migration
-- is 0014): a page number deep in a long list starts from the hour it
-- falls in instead of skipping every newer game in an index. One row per
-- bot (0: the lists of every bot), game kind, hour of the finish time
-- (`substr(finished, 1, 13)`, `YYYY-MM-DDTHH`) and writer: `shard` is the
-- writing connection's backend process, so that two instances finishing
-- games of one kind in one hour never wait for each other's commit on a
-- shared row (as `game_totals` is sharded, migration 0011). Readers sum
-- the shards. Statement triggers keep the rows equal to what the lists'
-- indexes hold, whichever statement writes the games: a finished game in
-- `games_finished_order`, a ranked seat with its finish time in
-- `game_seats_finish_order_by_bot`; one upsert per statement and list.
CREATE TABLE finish_hours (
    bot   BIGINT  NOT NULL,
    game  TEXT    NOT NULL,
    hour  TEXT    COLLATE "C" NOT NULL,
    shard INTEGER NOT NULL,
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

CREATE FUNCTION finish_hours_of_games() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO finish_hours AS h (bot, game, hour, shard, games)
        SELECT 0, n.game, substr(n.finished, 1, 13), pg_backend_pid(), COUNT(*)
        FROM new_rows n WHERE n.status = 'finished' AND n.finished IS NOT NULL
        GROUP BY n.game, substr(n.finished, 1, 13)
        ON CONFLICT (bot, game, hour, shard) DO UPDATE SET games = h.games + EXCLUDED.games;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO finish_hours AS h (bot, game, hour, shard, games)
        SELECT 0, o.game, substr(o.finished, 1, 13), pg_backend_pid(), -COUNT(*)
        FROM old_rows o WHERE o.status = 'finished' AND o.finished IS NOT NULL
        GROUP BY o.game, substr(o.finished, 1, 13)
        ON CONFLICT (bot, game, hour, shard) DO UPDATE SET games = h.games + EXCLUDED.games;
    ELSE
        INSERT INTO finish_hours AS h (bot, game, hour, shard, games)
        SELECT 0, d.game, d.hour, pg_backend_pid(), SUM(d.n) FROM (
            SELECT n.game, substr(n.finished, 1, 13) AS hour, 1 AS n
            FROM new_rows n WHERE n.status = 'finished' AND n.finished IS NOT NULL
            UNION ALL
            SELECT o.game, substr(o.finished, 1, 13), -1
            FROM old_rows o WHERE o.status = 'finished' AND o.finished IS NOT NULL
        ) d
        GROUP BY d.game, d.hour HAVING SUM(d.n) <> 0
        ON CONFLICT (bot, game, hour, shard) DO UPDATE SET games = h.games + EXCLUDED.games;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION finish_hours_of_seats() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO finish_hours AS h (bot, game, hour, shard, games)
        SELECT n.bot, g.game, substr(n.finished, 1, 13), pg_backend_pid(), COUNT(*)
        FROM new_rows n JOIN games g ON g.id = n.game_id
        WHERE n.finished IS NOT NULL AND n.rank IS NOT NULL
        GROUP BY n.bot, g.game, substr(n.finished, 1, 13)
        ON CONFLICT (bot, game, hour, shard) DO UPDATE SET games = h.games + EXCLUDED.games;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO finish_hours AS h (bot, game, hour, shard, games)
        SELECT o.bot, g.game, substr(o.finished, 1, 13), pg_backend_pid(), -COUNT(*)
        FROM old_rows o JOIN games g ON g.id = o.game_id
        WHERE o.finished IS NOT NULL AND o.rank IS NOT NULL
        GROUP BY o.bot, g.game, substr(o.finished, 1, 13)
        ON CONFLICT (bot, game, hour, shard) DO UPDATE SET games = h.games + EXCLUDED.games;
    ELSE
        INSERT INTO finish_hours AS h (bot, game, hour, shard, games)
        SELECT d.bot, g.game, d.hour, pg_backend_pid(), SUM(d.n) FROM (
            SELECT n.bot, n.game_id, substr(n.finished, 1, 13) AS hour, 1 AS n
            FROM new_rows n WHERE n.finished IS NOT NULL AND n.rank IS NOT NULL
            UNION ALL
            SELECT o.bot, o.game_id, substr(o.finished, 1, 13), -1
            FROM old_rows o WHERE o.finished IS NOT NULL AND o.rank IS NOT NULL
        ) d JOIN games g ON g.id = d.game_id
        GROUP BY d.bot, g.game, d.hour HAVING SUM(d.n) <> 0
        ON CONFLICT (bot, game, hour, shard) DO UPDATE SET games = h.games + EXCLUDED.games;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER finish_hours_games_added AFTER INSERT ON games
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION finish_hours_of_games();
CREATE TRIGGER finish_hours_games_changed AFTER UPDATE ON games
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION finish_hours_of_games();
CREATE TRIGGER finish_hours_games_deleted AFTER DELETE ON games
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION finish_hours_of_games();
CREATE TRIGGER finish_hours_seats_added AFTER INSERT ON game_seats
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION finish_hours_of_seats();
CREATE TRIGGER finish_hours_seats_changed AFTER UPDATE ON game_seats
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION finish_hours_of_seats();
CREATE TRIGGER finish_hours_seats_deleted AFTER DELETE ON game_seats
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION finish_hours_of_seats();
