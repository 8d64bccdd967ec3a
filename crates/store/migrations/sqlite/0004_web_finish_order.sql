-- Website lists that say "newest first" are ordered by finish time, ties by
-- id: games of different kinds last different times, so id order (start
-- order) is not finish order. These indexes serve those pages (INDEXED BY)
-- without a sort.
CREATE INDEX games_finished_order ON games (finished, id) WHERE status = 'finished';
CREATE INDEX games_finished_order_by_game ON games (game, finished, id) WHERE status = 'finished';
