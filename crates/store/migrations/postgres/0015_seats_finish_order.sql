-- A bot's finished games in finish order from one index (issue 53; the
-- SQLite migration is 0013): each ranked seat of a finished game holds the
-- game's finish time, written with its rank, so that a bot's page, its
-- game list and a versus page walk that bot's newest games in the index
-- instead of sorting all its games.
ALTER TABLE game_seats ADD COLUMN finished TEXT COLLATE "C";
UPDATE game_seats s SET finished = g.finished
FROM games g WHERE g.id = s.game_id AND g.status = 'finished' AND s.rank IS NOT NULL;
CREATE INDEX game_seats_finish_order_by_bot
    ON game_seats (bot, finished, game_id, rank) WHERE finished IS NOT NULL;
