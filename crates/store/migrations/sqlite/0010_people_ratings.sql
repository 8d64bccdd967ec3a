-- People rated apart from the bots (issue 48); PostgreSQL migration 0012.
-- Every finished game a person played rates everyone at its table in a pool
-- of its own, people against bots: a person under their name ('person'), a
-- bot under its name ('bot'). The bots' ladder ratings never see these games.
CREATE TABLE people_ratings (
    kind         TEXT    NOT NULL,
    name         TEXT    NOT NULL,
    game         TEXT    NOT NULL,
    mu           REAL    NOT NULL,
    sigma        REAL    NOT NULL,
    conservative REAL    NOT NULL,
    games        INTEGER NOT NULL DEFAULT 0,
    wins         INTEGER NOT NULL DEFAULT 0,
    losses       INTEGER NOT NULL DEFAULT 0,
    ties         INTEGER NOT NULL DEFAULT 0,
    last_played  TEXT,
    PRIMARY KEY (kind, name, game)
) WITHOUT ROWID;

CREATE INDEX people_ratings_by_rating ON people_ratings (game, conservative DESC);

-- The person games already rated: each is rated once.
CREATE TABLE people_rated (
    game_id INTEGER PRIMARY KEY REFERENCES games(id)
);

CREATE INDEX person_games_by_player ON person_games (player, game_id);
