-- Tournament games counted per list and hour beside every game (issue 53;
-- the PostgreSQL migration is 0020): `marked` is how many of a row's
-- `games` are tournament games, as the tournament indexes hold them (a
-- finished game with a `tournament_id` in
-- `games_tournament_finish_order`; a ranked seat with its finish time and
-- its game's tournament in `game_seats_tournament_finish_order_by_bot`).
-- "Ladder games only" and "every tournament's games" then take their
-- lengths from `finish_totals`, and a deep ladder page counts the
-- tournament games of whole hours from `finish_hours` instead of walking
-- them in their index (`tournaments::ladder`). The statements that finish
-- or import a game count its tournament games with its games
-- (`sqlite_raw::COUNT_HOURS`, `COUNT_TOTALS`): a game has its tournament
-- from its start, so a ladder game's finish writes no more rows.
ALTER TABLE finish_hours ADD COLUMN marked INTEGER NOT NULL DEFAULT 0;
ALTER TABLE finish_totals ADD COLUMN marked INTEGER NOT NULL DEFAULT 0;

UPDATE finish_hours SET marked = c.n FROM (
    SELECT 0 AS bot, game, substr(finished, 1, 13) AS hour, COUNT(*) AS n FROM games
    WHERE status = 'finished' AND finished IS NOT NULL AND tournament_id IS NOT NULL
    GROUP BY game, substr(finished, 1, 13)
    UNION ALL
    SELECT s.bot, g.game, substr(s.finished, 1, 13), COUNT(*)
    FROM game_seats s JOIN games g ON g.id = s.game_id
    WHERE s.finished IS NOT NULL AND s.rank IS NOT NULL AND s.tournament_id IS NOT NULL
    GROUP BY s.bot, g.game, substr(s.finished, 1, 13)
) c WHERE finish_hours.bot = c.bot AND finish_hours.game = c.game AND finish_hours.hour = c.hour;

UPDATE finish_totals SET marked = c.n FROM (
    SELECT bot, game, SUM(marked) AS n FROM finish_hours GROUP BY bot, game
) c WHERE finish_totals.bot = c.bot AND finish_totals.game = c.game;
