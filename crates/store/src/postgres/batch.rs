//! Round trips shared by concurrent callers (issue 13, speed): the live
//! tables' most frequent statements — a notification sent, a seat read —
//! go to one task per [`super::cluster::Cluster`], which sends everything
//! queued while its previous statement ran as one statement. A caller's
//! statement still runs after it asked, and it hears back once it ran, so
//! nothing changes for it but the wait; a busy instance makes one round
//! trip for many requests.

use std::sync::Arc;

use sqlx::postgres::PgPool;
use tokio::sync::{mpsc, oneshot};

use super::seat::{seat_row, SeatRow, SEAT_COLUMNS};
use crate::{BotId, StoreError};

/// At most this many requests per statement.
const MAX_BATCH: usize = 512;

type Reply<T> = oneshot::Sender<Result<T, StoreError>>;

/// The tasks (started on first use, inside the runtime).
#[derive(Debug)]
pub(crate) struct Batches {
    notify: mpsc::UnboundedSender<((String, String), Reply<()>)>,
    seats: mpsc::UnboundedSender<(BotId, Reply<Option<SeatRow>>)>,
}

fn failed(e: &sqlx::Error) -> StoreError {
    StoreError::Db(sqlx::Error::Protocol(format!(
        "a shared statement failed: {e}"
    )))
}

/// Takes what is queued behind `first`, up to [`MAX_BATCH`].
fn drain<T>(first: T, rx: &mut mpsc::UnboundedReceiver<T>) -> Vec<T> {
    let mut batch = vec![first];
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(x) => batch.push(x),
            Err(_) => break,
        }
    }
    batch
}

impl Batches {
    pub(crate) fn start(pool: PgPool) -> Arc<Batches> {
        let (notify, mut notify_rx) = mpsc::unbounded_channel::<((String, String), Reply<()>)>();
        let p = pool.clone();
        tokio::spawn(async move {
            while let Some(first) = notify_rx.recv().await {
                let batch = drain(first, &mut notify_rx);
                let channels: Vec<&str> = batch.iter().map(|((c, _), _)| c.as_str()).collect();
                let payloads: Vec<&str> = batch.iter().map(|((_, p), _)| p.as_str()).collect();
                // In the arrays' order: one sender's notifications arrive
                // in the order it sent them.
                let r = async {
                    let mut c = crate::waits::timed("live pool: acquire", p.acquire()).await?;
                    crate::waits::timed(
                        "batched: notify statement",
                        sqlx::query(
                            "SELECT pg_notify(t.c, t.p) FROM UNNEST($1::TEXT[], $2::TEXT[]) AS t(c, p)",
                        )
                        .bind(&channels)
                        .bind(&payloads)
                        .execute(&mut *c),
                    )
                    .await
                }
                .await;
                for (_, reply) in batch {
                    let _ = reply.send(match &r {
                        Ok(_) => Ok(()),
                        Err(e) => Err(failed(e)),
                    });
                }
            }
        });
        let (seats, mut seats_rx) = mpsc::unbounded_channel::<(BotId, Reply<Option<SeatRow>>)>();
        tokio::spawn(async move {
            while let Some(first) = seats_rx.recv().await {
                let batch = drain(first, &mut seats_rx);
                let mut bots: Vec<BotId> = batch.iter().map(|(b, _)| *b).collect();
                bots.sort_unstable();
                bots.dedup();
                let r = crate::waits::timed(
                    "batched: seat_of statement",
                    sqlx::query(&format!(
                        "SELECT {SEAT_COLUMNS} FROM hub_seats WHERE bot = ANY($1)"
                    ))
                    .bind(&bots)
                    .fetch_all(&pool),
                )
                .await;
                let rows: Result<Vec<SeatRow>, sqlx::Error> =
                    r.and_then(|rows| rows.iter().map(seat_row).collect());
                for (bot, reply) in batch {
                    let _ = reply.send(match &rows {
                        Ok(rows) => Ok(rows.iter().find(|r| r.bot == bot).cloned()),
                        Err(e) => Err(failed(e)),
                    });
                }
            }
        });
        Arc::new(Batches { notify, seats })
    }

    /// Sends `payload` on `channel` (with whatever else is queued).
    pub(crate) async fn notify(&self, channel: &str, payload: &str) -> Result<(), StoreError> {
        let (tx, rx) = oneshot::channel();
        self.notify
            .send(((channel.to_string(), payload.to_string()), tx))
            .map_err(|_| closed())?;
        rx.await.map_err(|_| closed())?
    }

    /// The seat of `bot` (read with whatever else is queued).
    pub(crate) async fn seat_of(&self, bot: BotId) -> Result<Option<SeatRow>, StoreError> {
        let (tx, rx) = oneshot::channel();
        self.seats.send((bot, tx)).map_err(|_| closed())?;
        rx.await.map_err(|_| closed())?
    }
}

fn closed() -> StoreError {
    StoreError::Db(sqlx::Error::PoolClosed)
}
