-- Bots that play on the server (registered through the API, or house bots).
CREATE TABLE bots (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    house         INTEGER NOT NULL DEFAULT 0,
    created_at    TEXT    NOT NULL
);

-- Every game, from its deal: 'running' until it ends as 'finished' (record
-- stored) or 'aborted' (for example by a restart while it was in progress).
CREATE TABLE games (
    id           INTEGER PRIMARY KEY,
    game         TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('running', 'finished', 'aborted')),
    bot1         INTEGER NOT NULL REFERENCES bots(id),
    bot2         INTEGER NOT NULL REFERENCES bots(id),
    seed         INTEGER NOT NULL,
    started      TEXT    NOT NULL,
    finished     TEXT,
    score1       INTEGER,
    score2       INTEGER,
    forfeited_by INTEGER,
    reason       TEXT,
    record       TEXT
);

CREATE INDEX games_by_bot1 ON games (bot1, id);
CREATE INDEX games_by_bot2 ON games (bot2, id);
CREATE INDEX games_by_status ON games (status);
