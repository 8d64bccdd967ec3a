-- Ladder leases (issue 13 item 4); PostgreSQL migration 0006.
-- Every process that runs ladder matches registers here and renews
-- `expires_ms` with a heartbeat (milliseconds since the epoch). On SQLite
-- there is one such process; the tables keep the same code path.
CREATE TABLE ladder_processes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    role       TEXT    NOT NULL,
    host       TEXT    NOT NULL,
    pid        INTEGER NOT NULL,
    started_ms INTEGER NOT NULL,
    beat_ms    INTEGER NOT NULL,
    expires_ms INTEGER NOT NULL
);

-- A bot in a ladder match (`game_id` set, `free_ms` NULL) or resting after
-- one (until `free_ms`).
CREATE TABLE ladder_leases (
    bot     INTEGER PRIMARY KEY REFERENCES bots(id),
    process INTEGER NOT NULL,
    game_id INTEGER,
    free_ms INTEGER
);
CREATE INDEX ladder_leases_by_process ON ladder_leases (process);

-- The process playing a running game (NULL: not leased).
ALTER TABLE games ADD COLUMN leased_by INTEGER;
CREATE INDEX games_by_lease ON games (leased_by) WHERE status = 'running';
