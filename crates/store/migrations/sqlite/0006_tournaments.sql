-- Tournaments on the server (issue 15): an organiser announces one, its
-- entries are frozen at the start, every pairing and game is stored so that
-- a restarted server resumes it without replaying finished games.

-- Owners who may organise tournaments (`croupier serve --admin NAME`, or
-- `croupier tournaments admin NAME --database URL`).
ALTER TABLE owners ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;

-- One tournament. status: scheduled -> running -> finished (or cancelled).
-- rounds: Swiss rounds (round-robin: derived from the entries at the start).
-- deals: deals per table and round; duplicate: each deal under every seating.
CREATE TABLE tournaments (
    id            INTEGER PRIMARY KEY,
    name          TEXT    NOT NULL UNIQUE,
    game          TEXT    NOT NULL,
    variant       TEXT,
    format        TEXT    NOT NULL CHECK (format IN ('round-robin', 'swiss')),
    rounds        INTEGER NOT NULL,
    deals         INTEGER NOT NULL,
    duplicate     INTEGER NOT NULL,
    seats         INTEGER NOT NULL,
    move_ms       INTEGER NOT NULL,
    budget_ms     INTEGER,
    starts_at     INTEGER NOT NULL,
    seed          INTEGER NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('scheduled', 'running', 'finished', 'cancelled')),
    current_round INTEGER NOT NULL DEFAULT 0,
    all_bots      INTEGER NOT NULL,
    created_by    INTEGER REFERENCES owners(id),
    created_at    TEXT    NOT NULL,
    started_at    TEXT,
    finished_at   TEXT,
    reason        TEXT
);

-- Its entries: the bots named at creation (or every active bot of the game,
-- filled in at the start); at the start each is frozen: how it connects
-- (kind, endpoint, dialect, credentials; a house bot's strategy).
CREATE TABLE tournament_entries (
    tournament_id   INTEGER NOT NULL REFERENCES tournaments(id),
    bot             INTEGER NOT NULL REFERENCES bots(id),
    seq             INTEGER NOT NULL,
    name            TEXT    NOT NULL,
    kind            TEXT    NOT NULL,
    endpoint        TEXT,
    dialect         TEXT,
    auth_user       TEXT,
    auth_password   TEXT,
    strategy        TEXT,
    frozen          INTEGER NOT NULL DEFAULT 0,
    withdrawn       TEXT,
    withdrawn_round INTEGER,
    PRIMARY KEY (tournament_id, bot)
);
CREATE INDEX tournament_entries_by_bot ON tournament_entries (bot);

-- Every game of every round, planned when its round is paired: its seats
-- (bot ids, comma-separated, by seat), its deal's seed; 'pending' until a
-- game is dealt ('running', game_id set), then 'done' with the ranks by seat
-- and the seats that faulted, or 'void' (a withdrawn bot's game).
CREATE TABLE tournament_games (
    id            INTEGER PRIMARY KEY,
    tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
    round         INTEGER NOT NULL,
    table_no      INTEGER NOT NULL,
    game_no       INTEGER NOT NULL,
    seats         TEXT    NOT NULL,
    seed          INTEGER NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('pending', 'running', 'done', 'void')),
    game_id       INTEGER REFERENCES games(id),
    ranks         TEXT,
    faults        TEXT,
    UNIQUE (tournament_id, round, table_no, game_no)
);
CREATE INDEX tournament_games_by_deal ON tournament_games (tournament_id, seed);

-- Tournament games are marked: they are not rated (ratings stay the
-- ladder's) and pages can list them apart.
ALTER TABLE games ADD COLUMN tournament_id INTEGER REFERENCES tournaments(id);
CREATE INDEX games_by_tournament ON games (tournament_id) WHERE tournament_id IS NOT NULL;
