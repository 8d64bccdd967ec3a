//! The finished tournament games of a games list's tournament filters,
//! once for both backends (inside `tournament_queries!`, whose `HINTS`
//! they read): which index each filter walks, their counts between two
//! places of the list, and the ladder list's reads of them
//! ([`super::ladder::LadderReads`]).

/// The helpers `marked` and `count_marked`, and [`super::ladder::LadderReads`]
/// for `$store`, reading through `self.$read` (a pool of `$db`).
macro_rules! marked_queries {
    ($store:ty, $db:ty, $read:ident) => {
        /// The finished tournament games of a filter, as `FROM … WHERE …`
        /// with the columns of their order (finish time, then game id):
        /// of kind $1, of tournament $2 and with bot $3 in a ranked seat
        /// with its finish time (as the whole games list counts a bot's
        /// games), each if asked for. A term left out keeps its
        /// placeholder bound to NULL.
        ///
        /// Each is walked in finish order in an index that holds only
        /// tournament games: a bot's in its own tournament seats
        /// (`game_seats_tournament_finish_order_by_bot`), one tournament's
        /// in that tournament's (`games_tournament_finish_order_by_tournament`),
        /// every tournament's in theirs (`games_tournament_finish_order`);
        /// on SQLite by `HINTS`, on PostgreSQL as its planner chooses.
        fn marked(game: bool, tournament: bool, bot: bool) -> (String, &'static str, &'static str) {
            // `… = $2` alone, not in an `OR` with `$2 IS NULL`, which
            // SQLite's planner cannot take to an index.
            let kind = |term| {
                if game {
                    term
                } else {
                    "CAST($1 AS TEXT) IS NULL"
                }
            };
            let one = |term| {
                if tournament {
                    term
                } else {
                    "CAST($2 AS BIGINT) IS NULL"
                }
            };
            if bot {
                let from = format!(
                    "game_seats s {} WHERE s.bot = $3 AND s.tournament_id IS NOT NULL
                       AND s.finished IS NOT NULL AND s.rank IS NOT NULL AND {} AND {}",
                    HINTS.seats,
                    kind("EXISTS (SELECT 1 FROM games h WHERE h.id = s.game_id AND h.game = $1)"),
                    one("s.tournament_id = $2"),
                );
                (from, "s.finished", "s.game_id")
            } else {
                let from = format!(
                    "games g {} WHERE g.status = 'finished' AND g.tournament_id IS NOT NULL
                       AND g.finished IS NOT NULL AND {} AND {} AND CAST($3 AS BIGINT) IS NULL",
                    if tournament { HINTS.one } else { HINTS.every },
                    kind("g.game = $1"),
                    one("g.tournament_id = $2"),
                );
                (from, "g.finished", "g.id")
            }
        }
        /// How many finished tournament games `marked` finds for kind
        /// `game`, tournament `tournament` and bot `bot`: all of them, or
        /// only those at or newer than `upto` and older than `below`
        /// (finish time and id), each if given.
        async fn count_marked(
            read: &sqlx::Pool<$db>,
            game: &Option<String>,
            tournament: Option<i64>,
            bot: Option<i64>,
            upto: Option<(&str, $crate::GameId)>,
            below: Option<(&str, $crate::GameId)>,
        ) -> Result<i64, $crate::StoreError> {
            let (from, finished, id) = marked(game.is_some(), tournament.is_some(), bot.is_some());
            let mut sql = format!("SELECT COUNT(*) FROM {from}");
            let mut n = 4;
            for (place, test) in [(upto, ">="), (below, "<")] {
                if place.is_some() {
                    sql.push_str(&format!(
                        " AND ({finished}, {id}) {test} (${n}, ${})",
                        n + 1
                    ));
                    n += 2;
                }
            }
            let mut q = sqlx::query_scalar(&sql)
                .bind(game)
                .bind(tournament)
                .bind(bot);
            for (finished, id) in [upto, below].into_iter().flatten() {
                q = q.bind(finished).bind(id);
            }
            Ok(q.fetch_one(read).await?)
        }

        #[async_trait::async_trait]
        impl $crate::tournaments::ladder::LadderReads for $store {
            async fn newest_hours(
                &self,
                filter: &$crate::web::GameFilter,
            ) -> Result<Vec<(String, i64, i64)>, $crate::StoreError> {
                Ok(sqlx::query_as(&$crate::sql_web::hours_sql(false, true))
                    .bind(filter.bot.unwrap_or(0))
                    .bind(filter.game.as_deref())
                    .fetch_all(&self.$read)
                    .await?)
            }

            async fn newest_page(
                &self,
                filter: &$crate::web::GameFilter,
                hours: &[(String, i64)],
                skip: i64,
                limit: i64,
            ) -> Result<Vec<$crate::web::GameSummary>, $crate::StoreError> {
                match $crate::sql_web::seek_skipping(false, skip, hours) {
                    Some(seek) => {
                        $crate::sql_web::SqlWeb::finished_page(self, filter, &seek, limit.max(0))
                            .await
                    }
                    None => Ok(Vec::new()),
                }
            }

            async fn seated(
                &self,
                games: Vec<$crate::web::GameSummary>,
            ) -> Result<Vec<$crate::web::GameSummary>, $crate::StoreError> {
                $crate::sql_web::with_seats(self, games).await
            }

            async fn totals(
                &self,
                filter: &$crate::web::GameFilter,
            ) -> Result<(i64, i64), $crate::StoreError> {
                Ok(sqlx::query_as($crate::web::TOTALS_SQL)
                    .bind(filter.bot.unwrap_or(0))
                    .bind(filter.game.as_deref())
                    .fetch_one(&self.$read)
                    .await?)
            }

            async fn marked_count(
                &self,
                filter: &$crate::web::GameFilter,
                upto: Option<(&str, $crate::GameId)>,
                below: Option<(&str, $crate::GameId)>,
            ) -> Result<i64, $crate::StoreError> {
                count_marked(&self.$read, &filter.game, None, filter.bot, upto, below).await
            }

            async fn marked_between(
                &self,
                filter: &$crate::web::GameFilter,
                newest: (&str, $crate::GameId),
                oldest: (&str, $crate::GameId),
            ) -> Result<Vec<$crate::GameId>, $crate::StoreError> {
                let (from, finished, id) =
                    marked(filter.game.is_some(), false, filter.bot.is_some());
                Ok(sqlx::query_scalar(&format!(
                    "SELECT {id} FROM {from}
                       AND ({finished}, {id}) <= ($4, $5) AND ({finished}, {id}) >= ($6, $7)"
                ))
                .bind(&filter.game)
                .bind(None::<i64>)
                .bind(filter.bot)
                .bind(newest.0)
                .bind(newest.1)
                .bind(oldest.0)
                .bind(oldest.1)
                .fetch_all(&self.$read)
                .await?)
            }
        }
    };
}
