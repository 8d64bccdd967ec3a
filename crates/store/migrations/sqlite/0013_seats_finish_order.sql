-- A bot's finished games in finish order from one index (issue 53; the
-- PostgreSQL migration is 0015): each ranked seat of a finished game holds
-- the game's finish time, written with its rank, so that a bot's page, its
-- game list and a versus page walk that bot's newest games in the index
-- instead of sorting all its games.
ALTER TABLE game_seats ADD COLUMN finished TEXT;
UPDATE game_seats SET finished = (
    SELECT g.finished FROM games g WHERE g.id = game_seats.game_id AND g.status = 'finished'
) WHERE rank IS NOT NULL;
CREATE INDEX game_seats_finish_order_by_bot
    ON game_seats (bot, finished, game_id, rank) WHERE finished IS NOT NULL;
