-- Several server instances on one database (issue 13 item 3). PostgreSQL
-- only: on SQLite one process keeps these in memory. The tables are
-- UNLOGGED: they hold what is live (sessions, bots waiting, games in
-- progress), never a record, and writes to them need no WAL flush. After a
-- PostgreSQL crash they are empty; the games they named are closed by the
-- next instance to start (see hub/cluster.rs).

-- Running server instances and their leases: each renews its heartbeat;
-- one whose heartbeat is older than the lease is dead, and the first
-- instance to see it closes its games.
CREATE UNLOGGED TABLE hub_instances (
    id        BIGSERIAL   PRIMARY KEY,
    name      TEXT        NOT NULL,
    started   TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- SkullWhist REST sessions: one per bot.
CREATE UNLOGGED TABLE hub_sessions (
    token     TEXT        PRIMARY KEY,
    bot       BIGINT      NOT NULL UNIQUE,
    last_seen TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Bots waiting in a new-game long poll, until `until`.
CREATE UNLOGGED TABLE hub_waiting (
    bot   BIGINT      PRIMARY KEY,
    until TIMESTAMPTZ NOT NULL
);

-- The seats of the REST games in progress: one row per bot (so a bot is in
-- one game at a time), with the instance that runs the game (its home) and
-- what its `status` replies say, as the home last wrote it.
CREATE UNLOGGED TABLE hub_seats (
    bot      BIGINT  PRIMARY KEY,
    game     BIGINT  NOT NULL,
    seat     INTEGER NOT NULL,
    opponent BIGINT  NOT NULL,
    hand     TEXT    NOT NULL,
    status   TEXT    NOT NULL,
    has_bid  BOOLEAN NOT NULL DEFAULT FALSE,
    over     BOOLEAN NOT NULL DEFAULT FALSE,
    home     BIGINT  NOT NULL
);
CREATE INDEX hub_seats_game ON hub_seats (game);
CREATE INDEX hub_seats_home ON hub_seats (home);
