-- The tournament lists of a bot and of one tournament in finish order
-- (issue 53; the SQLite migration is 0017), from indexes that hold only
-- tournament games, so that a ladder game's finish writes nothing more.
-- 0018's index serves every tournament's games together.
--
-- A tournament game's seats carry its tournament, so that a bot's
-- tournament games are found in that bot's own seats instead of by reading
-- a seat of every tournament game: "ladder games only" of a bot
-- (`/games?tournaments=hide&bot=…`) is the bot's whole list less these,
-- and the tournament lists of a bot walk them.
ALTER TABLE game_seats ADD COLUMN tournament_id BIGINT;
UPDATE game_seats s SET tournament_id = g.tournament_id
FROM games g WHERE g.id = s.game_id AND g.tournament_id IS NOT NULL;
CREATE INDEX game_seats_tournament_finish_order_by_bot
    ON game_seats (bot, finished, game_id, rank, tournament_id)
    WHERE tournament_id IS NOT NULL AND finished IS NOT NULL;
-- One tournament's games (`/games?tournament=NAME`), read newest first up
-- to the page instead of all of them read and sorted.
CREATE INDEX games_tournament_finish_order_by_tournament
    ON games (tournament_id, finished, id, status)
    WHERE status = 'finished' AND tournament_id IS NOT NULL;
-- The planner's statistics of the new column at once: the backfill touches
-- too few rows for autovacuum to analyse the table soon, and without them
-- the planner takes most seats for tournament seats and reads all of a
-- bot's seats instead of the new index.
ANALYZE game_seats;
