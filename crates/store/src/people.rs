//! People in the loop (issue 16), in both backends: games a person played
//! (stored and listed, but rating no bot) and which bots their owners let
//! others challenge. Migrations: SQLite 0007, PostgreSQL 0004.

use crate::postgres::PgStore;
use crate::sqlite::SqliteStore;
use crate::{BotId, GameId, StoreError};

/// A game a person played: the person's seat and label.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PersonSeat {
    /// The person's seat.
    pub seat: i64,
    /// Who played (`guest`, or an owner's name).
    pub player: String,
}

/// The four queries, once for both backends (`$n` placeholders, which sqlx
/// binds by number on SQLite too), reading through `self.$read` and writing
/// through `self.$write`.
macro_rules! people_queries {
    ($store:ty, $read:ident, $write:ident) => {
        impl $store {
            pub(crate) async fn mark_person_game_impl(
                &self,
                id: GameId,
                seat: usize,
                player: &str,
            ) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO person_games (game_id, seat, player) VALUES ($1, $2, $3) ON CONFLICT (game_id) DO NOTHING",
                )
                .bind(id)
                .bind(seat as i64)
                .bind(player)
                .execute(&self.$write)
                .await?;
                Ok(())
            }

            pub(crate) async fn person_game_impl(
                &self,
                id: GameId,
            ) -> Result<Option<PersonSeat>, StoreError> {
                let row: Option<(i64, String)> =
                    sqlx::query_as("SELECT seat, player FROM person_games WHERE game_id = $1")
                        .bind(id)
                        .fetch_optional(&self.$read)
                        .await?;
                Ok(row.map(|(seat, player)| PersonSeat { seat, player }))
            }

            pub(crate) async fn set_bot_challenges_impl(
                &self,
                bot: BotId,
                allow: bool,
            ) -> Result<(), StoreError> {
                sqlx::query(
                    "INSERT INTO bot_challenges (bot, allow) VALUES ($1, $2) ON CONFLICT (bot) DO UPDATE SET allow = EXCLUDED.allow",
                )
                .bind(bot)
                .bind(allow)
                .execute(&self.$write)
                .await?;
                Ok(())
            }

            pub(crate) async fn challengeable_bots_impl(&self) -> Result<Vec<BotId>, StoreError> {
                Ok(
                    sqlx::query_scalar("SELECT bot FROM bot_challenges WHERE allow ORDER BY bot")
                        .fetch_all(&self.$read)
                        .await?,
                )
            }
        }
    };
}

people_queries!(SqliteStore, pool, writer);
people_queries!(PgStore, pool, pool);
