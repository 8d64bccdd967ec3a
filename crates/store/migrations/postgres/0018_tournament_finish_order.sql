-- Finished tournament games in finish order (issue 53; the SQLite
-- migration is 0016). The games list's tournament filters
-- (`tournaments=only`, `tournaments=hide`) read them from here instead of
-- filtering every finished game: "every tournament's games" walks this
-- index, and "ladder games only" is the whole list less the tournament
-- games found here (`tournaments::ladder`). Only tournament games have an
-- entry, so a ladder game's finish writes nothing more. `tournament_id`
-- and `status` are in it so that a count reads the index alone (SQLite
-- does not take them from the index's WHERE and would read each game's
-- row).
CREATE INDEX games_tournament_finish_order ON games (finished, id, tournament_id, status)
    WHERE status = 'finished' AND tournament_id IS NOT NULL;
