//! The list of tournaments, a page at a time: the tournaments page, its
//! JSON twin and `GET /v1/tournaments`.

use croupier_store::{Store, StoreError};
use serde::Serialize;

use super::kept::Kept;
use super::view::{briefs, Brief};

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
