-- People in the loop (issue 16); SQLite migration 0007.
-- A game a person played from the website: which seat was the person's, and
-- who (a label: "guest" or an owner's name). Such games are stored and listed
-- like any other, but rate no bot (see ratings.rs).
CREATE TABLE person_games (
    game_id BIGINT PRIMARY KEY REFERENCES games(id),
    seat    BIGINT NOT NULL,
    player  TEXT   NOT NULL
);

-- Bots whose owners let other people challenge them from the website.
CREATE TABLE bot_challenges (
    bot   BIGINT  PRIMARY KEY REFERENCES bots(id),
    allow BOOLEAN NOT NULL DEFAULT FALSE
);
