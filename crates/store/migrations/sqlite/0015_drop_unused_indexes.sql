-- Indexes that no statement of the SQLite store uses any more (issue 53).
-- Every finished game wrote an entry in each of them, for nothing: the
-- lists walk the finish-order indexes (0004, 0013), a game is found by its
-- id, a seat by its game, and nothing looks games up by `bot1`, `bot2` or
-- by kind alone. Checked with `EXPLAIN QUERY PLAN` of every statement the
-- store's tests and `croupier bench web --games 1000000` ran (sqlx's
-- `sqlx::query=debug` log) and of the writer's own statements, over a
-- seeded million-game file: none of these six appeared in a plan, except
-- in migration 0013's one-off backfill. Bots and games are never deleted,
-- so no foreign key check needs `games_by_bot1` or `games_by_bot2`.
-- PostgreSQL keeps its own indexes: its planner was not checked.
DROP INDEX IF EXISTS games_by_bot1;
DROP INDEX IF EXISTS games_by_bot2;
DROP INDEX IF EXISTS games_by_game;
DROP INDEX IF EXISTS games_finished_by_id;
DROP INDEX IF EXISTS games_finished_by_game;
DROP INDEX IF EXISTS game_seats_finished_by_bot;
