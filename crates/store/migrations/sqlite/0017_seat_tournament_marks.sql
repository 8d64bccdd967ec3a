-- A tournament game's seats carry its tournament (issue 53; the PostgreSQL
-- migration is 0019), so that a bot's tournament games are found in that
-- bot's own seats instead of by reading a seat of every tournament game:
-- "ladder games only" of a bot (`/games?tournaments=hide&bot=…`) is the
-- bot's whole list less these, and the tournament lists of a bot walk them.
-- Only a tournament game's seats have an entry in the index, so a ladder
-- game's finish writes nothing more. `rank` and `tournament_id` are in it
-- so that a count reads the index alone (SQLite does not take them from
-- the index's WHERE).
ALTER TABLE game_seats ADD COLUMN tournament_id INTEGER;
UPDATE game_seats SET tournament_id = (
    SELECT g.tournament_id FROM games g WHERE g.id = game_seats.game_id
) WHERE game_id IN (SELECT id FROM games WHERE tournament_id IS NOT NULL);
CREATE INDEX game_seats_tournament_finish_order_by_bot
    ON game_seats (bot, finished, game_id, rank, tournament_id)
    WHERE tournament_id IS NOT NULL AND finished IS NOT NULL;
