//! PostgreSQL side of [`crate::hosted`].

crate::hosted_queries::hosted_queries!(sqlx::PgPool);
