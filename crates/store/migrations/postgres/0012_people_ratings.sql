-- People rated apart from the bots (issue 48); SQLite migration 0010.
-- Every finished game a person played rates everyone at its table in a pool
-- of its own, people against bots: a person under their name ('person'), a
-- bot under its name ('bot'). The bots' ladder ratings never see these games.
CREATE TABLE people_ratings (
    kind         TEXT    COLLATE "C" NOT NULL,
    name         TEXT    COLLATE "C" NOT NULL,
    game         TEXT    COLLATE "C" NOT NULL,
    mu           DOUBLE PRECISION NOT NULL,
    sigma        DOUBLE PRECISION NOT NULL,
    conservative DOUBLE PRECISION NOT NULL,
    games        BIGINT  NOT NULL DEFAULT 0,
    wins         BIGINT  NOT NULL DEFAULT 0,
    losses       BIGINT  NOT NULL DEFAULT 0,
    ties         BIGINT  NOT NULL DEFAULT 0,
    last_played  TEXT    COLLATE "C",
    PRIMARY KEY (kind, name, game)
);

CREATE INDEX people_ratings_by_rating ON people_ratings (game, conservative DESC);

-- The person games already rated: each is rated once.
CREATE TABLE people_rated (
    game_id BIGINT PRIMARY KEY REFERENCES games(id)
);

CREATE INDEX person_games_by_player ON person_games (player, game_id);
