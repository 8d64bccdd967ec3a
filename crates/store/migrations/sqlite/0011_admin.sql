-- Admin (issue 49 item 5); PostgreSQL migration 0013.
-- A ban: why, which admin, when (RFC 3339). A bot is banned when it is or
-- when its owner is; lifting a ban clears the three columns (the audit log
-- keeps the history).
ALTER TABLE bots ADD COLUMN ban_reason TEXT;
ALTER TABLE bots ADD COLUMN banned_by TEXT;
ALTER TABLE bots ADD COLUMN banned_at TEXT;
ALTER TABLE owners ADD COLUMN ban_reason TEXT;
ALTER TABLE owners ADD COLUMN banned_by TEXT;
ALTER TABLE owners ADD COLUMN banned_at TEXT;

-- Seasons, numbered per game from 1. A game without rows is in season 1;
-- a row is written for each season an admin started or ended. The current
-- season is the highest number; its standings are bot_stats/pair_stats.
CREATE TABLE seasons (
    game       TEXT    NOT NULL,
    season     INTEGER NOT NULL,
    started_at TEXT,
    ended_at   TEXT,
    PRIMARY KEY (game, season)
) WITHOUT ROWID;

-- A past season's standings: bot_stats and pair_stats as they were when
-- the season ended (copied, then emptied for the game, in one transaction).
CREATE TABLE season_stats (
    season       INTEGER NOT NULL,
    bot          INTEGER NOT NULL REFERENCES bots(id),
    game         TEXT    NOT NULL,
    mu           REAL    NOT NULL,
    sigma        REAL    NOT NULL,
    conservative REAL    NOT NULL,
    games        INTEGER NOT NULL,
    wins         INTEGER NOT NULL,
    losses       INTEGER NOT NULL,
    ties         INTEGER NOT NULL,
    forfeits     INTEGER NOT NULL,
    last_game    INTEGER,
    last_played  TEXT,
    PRIMARY KEY (game, season, bot)
) WITHOUT ROWID;

CREATE TABLE season_pairs (
    season   INTEGER NOT NULL,
    bot      INTEGER NOT NULL REFERENCES bots(id),
    opponent INTEGER NOT NULL REFERENCES bots(id),
    game     TEXT    NOT NULL,
    games    INTEGER NOT NULL,
    wins     INTEGER NOT NULL,
    losses   INTEGER NOT NULL,
    ties     INTEGER NOT NULL,
    PRIMARY KEY (game, season, bot, opponent)
) WITHOUT ROWID;

-- Every admin action: who (the admin's owner name), what, on what, why.
CREATE TABLE admin_audit (
    id      INTEGER PRIMARY KEY,
    at      TEXT    NOT NULL,
    actor   TEXT    NOT NULL,
    action  TEXT    NOT NULL,
    target  TEXT    NOT NULL,
    reason  TEXT,
    details TEXT
);
