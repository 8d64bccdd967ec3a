-- Hosted bots (issue 12): programs uploaded by their owners and run by the
-- server in the sandbox. A hosted bot is a row of `bots` with kind 'hosted';
-- every upload is a new version of it.

-- The uploaded files, by SHA-256 of their bytes. The bytes themselves are
-- kept outside the database, in the server's bot-files folder, under this
-- hash: the same upload twice is stored once.
CREATE TABLE bot_files (
    hash       TEXT    PRIMARY KEY,
    size       INTEGER NOT NULL,
    created_at TEXT    NOT NULL
) WITHOUT ROWID;

-- Versions of a hosted bot, numbered from 1 per bot. status:
--   validating - uploaded, its validation match not over yet
--   active     - passed its validation match (the newest active one plays)
--   failed     - did not pass: reason and the tail of its stderr say why
CREATE TABLE bot_versions (
    id         INTEGER PRIMARY KEY,
    bot        INTEGER NOT NULL REFERENCES bots(id),
    version    INTEGER NOT NULL,
    file_hash  TEXT    NOT NULL REFERENCES bot_files(hash),
    file_name  TEXT    NOT NULL,
    runtime    TEXT    NOT NULL,
    entry      TEXT    NOT NULL,
    dialect    TEXT    NOT NULL,
    status     TEXT    NOT NULL CHECK (status IN ('validating', 'active', 'failed')),
    reason     TEXT,
    stderr     TEXT,
    created_at TEXT    NOT NULL,
    UNIQUE (bot, version)
);

-- Which version of a hosted bot played a ladder game, and the (bounded)
-- tail of what it wrote to stderr in it; shown to the bot's owner only.
CREATE TABLE hosted_matches (
    game_id INTEGER NOT NULL REFERENCES games(id),
    bot     INTEGER NOT NULL REFERENCES bots(id),
    version INTEGER NOT NULL,
    stderr  TEXT    NOT NULL,
    PRIMARY KEY (game_id, bot)
) WITHOUT ROWID;

CREATE INDEX hosted_matches_by_bot ON hosted_matches (bot, game_id);
