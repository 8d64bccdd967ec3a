-- Tournament games counted per list and hour beside every game (issue 53;
-- the SQLite migration is 0018): `marked` is how many of a row's `games`
-- are tournament games, as the tournament indexes hold them (a finished
-- game with a `tournament_id` in `games_tournament_finish_order`; a
-- ranked seat with its finish time and its game's tournament in
-- `game_seats_tournament_finish_order_by_bot`). "Ladder games only" and
-- "every tournament's games" then take their lengths from
-- `finish_totals`, and a deep ladder page counts the tournament games of
-- whole hours from `finish_hours` instead of walking them in their index
-- (`tournaments::ladder`). The statement that finishes a batch of games or
-- imports games counts their tournament games with them
-- (`postgres::finish::count_listed`): a game has its tournament from its
-- start, so a ladder game's finish writes no more rows.
--
-- The games stored now are counted in shard 0, added to its rows (or to
-- new rows of no games) so that each hour's sums over its shards hold
-- them. As with 0016, upgrade every instance together: a tournament game
-- finished afterwards by an older instance is not counted here.
ALTER TABLE finish_hours ADD COLUMN marked BIGINT NOT NULL DEFAULT 0;
ALTER TABLE finish_totals ADD COLUMN marked BIGINT NOT NULL DEFAULT 0;

INSERT INTO finish_hours AS h (bot, game, hour, shard, games, marked)
SELECT c.bot, c.game, c.hour, 0, 0, c.n FROM (
    SELECT 0 AS bot, game, substr(finished, 1, 13) AS hour, COUNT(*) AS n FROM games
    WHERE status = 'finished' AND finished IS NOT NULL AND tournament_id IS NOT NULL
    GROUP BY game, substr(finished, 1, 13)
    UNION ALL
    SELECT s.bot, g.game, substr(s.finished, 1, 13), COUNT(*)
    FROM game_seats s JOIN games g ON g.id = s.game_id
    WHERE s.finished IS NOT NULL AND s.rank IS NOT NULL AND s.tournament_id IS NOT NULL
    GROUP BY s.bot, g.game, substr(s.finished, 1, 13)
) c
ON CONFLICT (bot, game, hour, shard) DO UPDATE SET marked = EXCLUDED.marked;

INSERT INTO finish_totals AS t (bot, game, shard, games, marked)
SELECT bot, game, 0, 0, CAST(SUM(marked) AS BIGINT) FROM finish_hours WHERE shard = 0 GROUP BY bot, game
ON CONFLICT (bot, game, shard) DO UPDATE SET marked = EXCLUDED.marked;
