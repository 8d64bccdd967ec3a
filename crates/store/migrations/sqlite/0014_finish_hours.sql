-- Finished games counted per list and hour (issue 53): a page number deep
-- in a long list starts from the hour it falls in instead of skipping
-- every newer game in an index. One row per bot (0: the lists of every
-- bot), game kind and hour of the finish time (`substr(finished, 1, 13)`,
-- `YYYY-MM-DDTHH`). The rows equal what the lists' indexes hold: a
-- finished game in `games_finished_order` (counted by the statements that
-- finish or import a game, `sqlite_raw::COUNT_FINISHED_HOUR`: a trigger on
-- the games' UPDATE cost 60-150 µs of CPU per finished game in
-- `cargo bench -p croupier-store --bench writes`), a ranked seat with its
-- finish time in `game_seats_finish_order_by_bot` (the triggers below,
-- whichever statement writes the seats: 3% of a game's writes). Games are
-- never deleted and a finished game never changes status, so its count
-- never goes back. The PostgreSQL migration is 0016.
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

CREATE TRIGGER finish_hours_seat_added AFTER INSERT ON game_seats
WHEN NEW.finished IS NOT NULL AND NEW.rank IS NOT NULL
BEGIN
    INSERT INTO finish_hours (bot, game, hour, games)
    VALUES (NEW.bot, (SELECT game FROM games WHERE id = NEW.game_id),
            substr(NEW.finished, 1, 13), 1)
    ON CONFLICT (bot, game, hour) DO UPDATE SET games = games + 1;
END;

CREATE TRIGGER finish_hours_seat_left AFTER UPDATE OF bot, finished, rank ON game_seats
WHEN OLD.finished IS NOT NULL AND OLD.rank IS NOT NULL
BEGIN
    UPDATE finish_hours SET games = games - 1
    WHERE bot = OLD.bot AND game = (SELECT game FROM games WHERE id = OLD.game_id)
      AND hour = substr(OLD.finished, 1, 13);
END;

CREATE TRIGGER finish_hours_seat_entered AFTER UPDATE OF bot, finished, rank ON game_seats
WHEN NEW.finished IS NOT NULL AND NEW.rank IS NOT NULL
BEGIN
    INSERT INTO finish_hours (bot, game, hour, games)
    VALUES (NEW.bot, (SELECT game FROM games WHERE id = NEW.game_id),
            substr(NEW.finished, 1, 13), 1)
    ON CONFLICT (bot, game, hour) DO UPDATE SET games = games + 1;
END;

CREATE TRIGGER finish_hours_seat_deleted AFTER DELETE ON game_seats
WHEN OLD.finished IS NOT NULL AND OLD.rank IS NOT NULL
BEGIN
    UPDATE finish_hours SET games = games - 1
    WHERE bot = OLD.bot AND game = (SELECT game FROM games WHERE id = OLD.game_id)
      AND hour = substr(OLD.finished, 1, 13);
END;
