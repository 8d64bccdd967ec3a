-- Indexes that no statement of the PostgreSQL store uses (issue 53; the
-- SQLite migration is 0015). Every game's start and finish wrote entries
-- in them, for nothing:
-- - `games_by_bot1`, `games_by_bot2`: no statement looks games up by
--   `bot1` or `bot2` (a bot's games come from its seats), and bots and
--   games are never deleted, so no foreign key check needs them;
-- - `game_seats_finished_by_bot`: a bot's finished games are read in
--   finish order from `game_seats_finish_order_by_bot` (migration 0015),
--   which holds the same seats with their finish time. The planner chose
--   the older index only on a test's tiny tables.
-- Checked with `auto_explain` (every statement's plan) over the store's
-- test suite and over `croupier bench web --games 100000 --postgres`, and
-- with `pg_stat_user_indexes` after that benchmark: none of the three was
-- scanned there (see `scripts/pg-index-use.py`). `games_by_game` and
-- `games_by_status`, dropped on SQLite, stay: PostgreSQL's planner uses
-- them (a bot's rating history of one game kind; a count by status).
DROP INDEX IF EXISTS games_by_bot1;
DROP INDEX IF EXISTS games_by_bot2;
DROP INDEX IF EXISTS game_seats_finished_by_bot;
