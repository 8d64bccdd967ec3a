-- Issue 13 (speed): the finished games per game kind are counted in one row
-- per process (`shard`: its id in the registry of live processes, 0 for
-- imports and before registering) and read as a sum. With one row per
-- game kind, the group commits of two processes queued behind each other
-- on it (each waiting for the other's flush to disk).
ALTER TABLE game_totals ADD COLUMN shard BIGINT NOT NULL DEFAULT 0;
ALTER TABLE game_totals DROP CONSTRAINT game_totals_pkey;
ALTER TABLE game_totals ADD PRIMARY KEY (game, shard);
