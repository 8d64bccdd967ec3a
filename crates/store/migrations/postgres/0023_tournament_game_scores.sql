-- A done planned game keeps its game's scores (by seat, comma-separated,
-- a seat without a score empty) beside its ranks and faults (issue
-- 53): a tournament's page shows them, and read from the games' seats
-- they cost a cup of 1,000 games about 17 ms of its page on SQLite at a
-- million games. Filled here for the games already done, as
-- `finish_tournament_game` fills it from now on. The SQLite migration is
-- 0021.
ALTER TABLE tournament_games ADD COLUMN scores TEXT;
UPDATE tournament_games
SET scores = (SELECT string_agg(COALESCE(CAST(s.score AS TEXT), ''), ',' ORDER BY s.seat)
              FROM game_seats s WHERE s.game_id = tournament_games.game_id)
WHERE status = 'done' AND game_id IS NOT NULL;
