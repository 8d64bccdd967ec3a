//! The list of tournaments, a page at a time: the tournaments page, its
//! JSON twin and `GET /v1/tournaments`.

use croupier_store::{Store, StoreError};
use serde::Serialize;

use super::kept::Kept;
use super::view::{brief, Brief};
use croupier_store::tournaments::TournamentRow;

/// Tournaments on a page of the list (each brief reads its entries and
/// counts its planned games, so a page's cost follows its length, not the
/// number of tournaments ever held).
pub const PER_PAGE: usize = 25;

/// A page of the tournament list, the last announced first: the
/// tournaments page, its JSON twin and `GET /v1/tournaments` show it.
#[derive(Debug, Clone, Serialize)]
pub struct ListPage {
    /// The page's tournaments (none past the last page).
    pub tournaments: Vec<Brief>,
    /// This page, from 1.
    pub page: i64,
    /// Pages in all (at least 1).
    pub pages: i64,
    /// Tournaments in all.
    pub total: i64,
}

impl ListPage {
    /// Whether the page asked for lies past the last one (a 404 to the
    /// caller): it then holds no tournament.
    pub fn past_the_end(&self) -> bool {
        self.page > self.pages
    }

    /// Why there is no such page, in a sentence.
    pub fn past_the_end_why(&self) -> String {
        format!(
            "There is no page {}: the tournaments fill {} page{}.",
            self.page,
            self.pages,
            if self.pages == 1 { "" } else { "s" }
        )
    }
}

/// Page `page` (from 1) of the tournament list, [`PER_PAGE`] tournaments
/// a page; past the last page, a page without tournaments (see
/// [`ListPage::past_the_end`]).
pub async fn list_page(store: &dyn Store, kept: &Kept, page: i64) -> Result<ListPage, StoreError> {
    let ts = store.tournaments();
    let total = ts.tournament_count().await?;
    let per_page = PER_PAGE as i64;
    let pages = ((total + per_page - 1) / per_page).max(1);
    let tournaments = if page > pages {
        Vec::new()
    } else {
        let rows = ts
            .tournament_page((page.max(1) - 1).saturating_mul(per_page), per_page)
            .await?;
        briefs(store, kept, rows).await?
    };
    Ok(ListPage {
        tournaments,
        page,
        pages,
        total,
    })
}

/// The briefs of a list of tournaments (the tournaments page, a bot's
/// page, the API's list), in order; those of tournaments that are over
/// are made once and `kept`.
pub async fn briefs(
    store: &dyn Store,
    kept: &Kept,
    list: impl IntoIterator<Item = TournamentRow>,
) -> Result<Vec<Brief>, StoreError> {
    let mut out = Vec::new();
    for t in list {
        let b = match kept.brief(&t) {
            Some(b) => b,
            None => {
                let b = brief(store, t).await?;
                kept.keep_brief(&b);
                b
            }
        };
        out.push(b);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournaments::test_games::{page_of, two_bots, won};
    use crate::tournaments::view::TournamentView;
    use croupier_store::tournaments::NewTournament;
    use std::sync::Arc;

    #[tokio::test]
    async fn a_tournament_that_is_over_is_made_once_and_a_running_one_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let (store, [a, b], entries) = two_bots(dir.path()).await;
        let ts = store.tournaments();
        let mut ids = Vec::new();
        for name in ["over", "on"] {
            let t = NewTournament::round_robin(name, "goofspiel", entries.clone());
            let id = ts.create_tournament(&t).await.unwrap();
            ts.start_tournament(id, &entries, 1, "t0").await.unwrap();
            store
                .import_games(vec![won(id, vec![a, b], 1)])
                .await
                .unwrap();
            ids.push(id);
        }
        assert!(ts
            .end_tournament(ids[0], "finished", "t1", None)
            .await
            .unwrap());
        let kept = Kept::default();
        let page = |id| page_of(&store, &kept, id);
        let list = |kept| {
            let store = &store;
            async move {
                let rows = store.tournaments().tournament_list().await.unwrap();
                briefs(store.as_ref(), kept, rows).await.unwrap()
            }
        };
        let done = |v: &Arc<TournamentView>| v.progress.done;
        let (over, on) = (page(ids[0]).await, page(ids[1]).await);
        assert_eq!((done(&over), done(&on)), (1, 1));
        let briefs = list(&kept).await;
        assert_eq!(kept.len(), (1, 1), "the finished one's brief and page");
        // One more game in each (as no finished tournament gets, but it
        // shows what is made again): the kept page and brief do not see
        // it, the running tournament's do.
        for id in &ids {
            store
                .import_games(vec![won(*id, vec![b, a], 2)])
                .await
                .unwrap();
        }
        assert_eq!(done(&page(ids[0]).await), 1, "kept");
        assert_eq!(done(&page(ids[1]).await), 2, "made again");
        let again = list(&kept).await;
        let progress = |v: &[Brief]| v.iter().map(|b| b.progress.done).collect::<Vec<_>>();
        assert_eq!(progress(&briefs), [1, 1], "the running one is newest");
        assert_eq!(progress(&again), [2, 1]);
        assert_eq!(again[1].winner.as_deref(), Some("ha"));
        // Without the kept ones, everything is made again.
        let fresh = Kept::default();
        assert_eq!(progress(&list(&fresh).await), [2, 2]);
        // Cancelled with a game still being played: not kept, since that
        // game goes on to its end.
        let plan = croupier_store::tournaments::NewTournamentGame {
            table_no: 0,
            game_no: 0,
            seats: vec![a, b],
            seed: 3,
        };
        ts.plan_round(ids[1], 2, &[plan]).await.unwrap();
        let planned = ts.tournament_games(ids[1]).await.unwrap();
        let pending = planned.iter().find(|g| g.status == "pending").unwrap();
        ts.start_tournament_game(pending.id, "goofspiel", &[a, b], 3, "t2")
            .await
            .unwrap();
        assert!(ts
            .end_tournament(ids[1], "cancelled", "t3", Some("late"))
            .await
            .unwrap());
        assert_eq!(page(ids[1]).await.progress.running, 1);
        assert_eq!(list(&kept).await[0].progress.running, 1);
        assert_eq!(kept.len(), (1, 1), "still the finished one's alone");
    }
}
