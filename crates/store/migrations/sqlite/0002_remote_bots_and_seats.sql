-- Owners: people who register HTTP bots (push bots that Croupier calls, pull
-- bots that call Croupier's /v1 API with a bearer token).
CREATE TABLE owners (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    password_hash TEXT    NOT NULL,
    created_at    TEXT    NOT NULL
);

-- Every bot now belongs to one game and has a kind:
--   rest  - a SkullWhist bot of the 2014 REST API (registers itself)
--   house - a built-in strategy inside the server
--   push  - an HTTP server Croupier POSTs to (dialect jujitsu or croupier)
--   pull  - a client of the /v1 pull API (dialect croupier)
ALTER TABLE bots ADD COLUMN game TEXT NOT NULL DEFAULT 'skullwhist';
ALTER TABLE bots ADD COLUMN kind TEXT NOT NULL DEFAULT 'rest';
ALTER TABLE bots ADD COLUMN owner INTEGER REFERENCES owners(id);
ALTER TABLE bots ADD COLUMN endpoint TEXT;
ALTER TABLE bots ADD COLUMN dialect TEXT;
-- Basic-auth credentials Croupier sends to a push bot. They must be sent in
-- clear, so they are stored as given (they guard the bot, not Croupier).
ALTER TABLE bots ADD COLUMN auth_user TEXT;
ALTER TABLE bots ADD COLUMN auth_password TEXT;
-- SHA-256 (hex) of a pull bot's bearer token; the token itself is shown once.
ALTER TABLE bots ADD COLUMN token_hash TEXT;
-- Health: consecutive faulty matches, and a pause (unix seconds) with its reason.
ALTER TABLE bots ADD COLUMN strikes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE bots ADD COLUMN paused_until INTEGER;
ALTER TABLE bots ADD COLUMN pause_reason TEXT;
-- An owner can switch a bot off (it then plays no ladder matches).
ALTER TABLE bots ADD COLUMN enabled INTEGER NOT NULL DEFAULT 1;

UPDATE bots SET kind = 'house' WHERE house = 1;

CREATE UNIQUE INDEX bots_by_token ON bots (token_hash) WHERE token_hash IS NOT NULL;
CREATE INDEX bots_by_owner ON bots (owner);
CREATE INDEX bots_by_game ON bots (game, kind);

-- Number of seats of a game (2 for SkullWhist and Goofspiel, 2-4 for Love
-- Letter). games.bot1/bot2 keep seats 0 and 1; game_seats holds every seat.
ALTER TABLE games ADD COLUMN seats INTEGER NOT NULL DEFAULT 2;

CREATE TABLE game_seats (
    game_id   INTEGER NOT NULL REFERENCES games(id),
    seat      INTEGER NOT NULL,
    bot       INTEGER NOT NULL REFERENCES bots(id),
    score     INTEGER,
    rank      INTEGER,
    forfeited INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seat)
) WITHOUT ROWID;

CREATE INDEX game_seats_by_bot ON game_seats (bot, game_id);

INSERT INTO game_seats (game_id, seat, bot, score, forfeited)
    SELECT id, 0, bot1, score1, COALESCE(forfeited_by = bot1, 0) FROM games;
INSERT INTO game_seats (game_id, seat, bot, score, forfeited)
    SELECT id, 1, bot2, score2, COALESCE(forfeited_by = bot2, 0) FROM games;
UPDATE game_seats SET rank = CASE
        WHEN forfeited THEN 2
        WHEN (SELECT g.forfeited_by FROM games g WHERE g.id = game_seats.game_id)
             IS NOT NULL THEN 1
        WHEN score IS NULL THEN NULL
        WHEN score >= (SELECT MAX(s2.score) FROM game_seats s2
                       WHERE s2.game_id = game_seats.game_id) THEN 1
        ELSE 2 END
    WHERE game_id IN (SELECT id FROM games WHERE status = 'finished');

CREATE INDEX games_by_game ON games (game, id);
