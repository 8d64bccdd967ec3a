//! Finished tournaments' kept winners, decided again from their games
//! (`croupier db recount`). A tournament keeps its winner as it finishes,
//! for the lists ([`super::view::winner`]). One finished before 6 Dec 2026
//! kept the winner its standings gave then, when their last tie-break read
//! the ladder's rating, which has moved on since: its page (whose
//! standings are its games' alone) may show a different first place than
//! its line in the lists. One finished before its winner was kept has
//! none, and each process reads all its planned games to find it for the
//! lists.

use croupier_store::{Store, StoreError};

use super::view::winner;

/// A finished tournament whose kept winner was not the one its games give.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewon {
    /// The tournament's name.
    pub tournament: String,
    /// The winner it kept (`None`: none was kept).
    pub was: Option<String>,
    /// The winner its standings give, kept now.
    pub now: Option<String>,
}

/// What [`mend_winners`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MendedWinners {
    /// Finished tournaments looked at.
    pub finished: usize,
    /// Those whose winner was mended, newest first (the list's order).
    pub mended: Vec<Rewon>,
}

/// Decides every finished tournament's winner again from its games and
/// keeps it where it differs from the one kept (or none was kept), telling
/// `mended` of each as it is kept (an error later leaves those kept). A
/// tournament found finished is over for good (nothing is planned or
/// played in it any more), so this may run while the server serves: a
/// server process that kept the tournament's line or page makes them
/// again once it reads the new winner ([`super::kept::Kept`]).
pub async fn mend_winners(
    store: &dyn Store,
    mut mended: impl FnMut(&Rewon),
) -> Result<MendedWinners, StoreError> {
    let ts = store.tournaments();
    let mut done = MendedWinners::default();
    for t in ts.tournament_list().await? {
        if t.status != "finished" {
            continue;
        }
        done.finished += 1;
        let entries = ts.tournament_entries(t.id).await?;
        let games = ts.tournament_games(t.id).await?;
        let now = winner(&t, &entries, &games);
        if now == t.winner || !ts.keep_winner(t.id, now.as_deref()).await? {
            continue;
        }
        let rewon = Rewon {
            tournament: t.name,
            was: t.winner,
            now,
        };
        mended(&rewon);
        done.mended.push(rewon);
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tournaments::kept::Kept;
    use crate::tournaments::list::briefs;
    use crate::tournaments::test_games::won;
    use crate::tournaments::view::Brief;
    use croupier_store::tournaments::{EntryRow, NewTournament};
    use croupier_store::BotKind;

    async fn mended_on(url: &str) {
        let store = croupier_store::open(url).await.unwrap();
        let a = store.ensure_house_bot("wa", "goofspiel").await.unwrap();
        let b = store.ensure_house_bot("wb", "goofspiel").await.unwrap();
        let ts = store.tournaments();
        let entries = vec![
            EntryRow::new(a, 0, "wa", BotKind::House),
            EntryRow::new(b, 1, "wb", BotKind::House),
        ];
        // Each won by `wb` (its one game); kept as `wa` (as if an old
        // tie-break had chosen it), as nobody, and rightly; and one that is
        // still running, which is left alone.
        let mut ids = Vec::new();
        for (name, kept) in [
            ("wrong", Some("wa")),
            ("none", None),
            ("right", Some("wb")),
            ("running", None),
        ] {
            let t = NewTournament::round_robin(name, "goofspiel", entries.clone());
            let id = ts.create_tournament(&t).await.unwrap();
            ts.start_tournament(id, &entries, 1, "t0").await.unwrap();
            store
                .import_games(vec![won(id, vec![b, a], ids.len() as i64 + 1)])
                .await
                .unwrap();
            if name != "running" {
                assert!(ts.finish_tournament(id, "t1", kept).await.unwrap());
            }
            ids.push(id);
        }
        // A server process that made the finished ones' lines and pages.
        let kept = Kept::default();
        let rows = ts.tournament_list().await.unwrap();
        let made = briefs(store.as_ref(), &kept, rows).await.unwrap();
        let winners = |b: &[Brief]| b.iter().map(|b| b.winner.clone()).collect::<Vec<_>>();
        let wb = || Some("wb".to_string());
        let wa = Some("wa".to_string());
        // (One without a kept winner has it found from its games.)
        assert_eq!(winners(&made), [None, wb(), wb(), wa.clone()]);
        let page = |id| {
            let (store, kept) = (&store, &kept);
            async move {
                let row = store.tournaments().tournament(id).await.unwrap().unwrap();
                kept.view(store.as_ref(), row).await.unwrap()
            }
        };
        assert_eq!(page(ids[0]).await.tournament.winner, wa);
        assert_eq!(kept.len(), (3, 1));
        let mut told = Vec::new();
        let done = mend_winners(store.as_ref(), |r| told.push(r.tournament.clone()))
            .await
            .unwrap();
        assert_eq!(done.finished, 3);
        assert_eq!(told, ["none", "wrong"]);
        let rewon = |t: &str, was: Option<&str>| Rewon {
            tournament: t.into(),
            was: was.map(str::to_string),
            now: Some("wb".into()),
        };
        assert_eq!(
            done.mended,
            vec![rewon("none", None), rewon("wrong", Some("wa"))],
            "newest first"
        );
        for id in &ids[..3] {
            let t = ts.tournament(*id).await.unwrap().unwrap();
            assert_eq!(t.winner.as_deref(), Some("wb"), "{}", t.name);
        }
        // It makes them again once it reads the new winners.
        let rows = ts.tournament_list().await.unwrap();
        let again = briefs(store.as_ref(), &kept, rows).await.unwrap();
        assert_eq!(winners(&again), [None, wb(), wb(), wb()]);
        assert_eq!(page(ids[0]).await.tournament.winner, wb());
        assert_eq!(kept.len(), (3, 1));
        let running = ts.tournament(ids[3]).await.unwrap().unwrap();
        assert_eq!((running.status.as_str(), running.winner), ("running", None));
        assert!(!ts.keep_winner(ids[3], Some("wa")).await.unwrap());
        // Once mended, nothing is left to mend.
        let again = mend_winners(store.as_ref(), |_| {}).await.unwrap();
        assert_eq!((again.finished, again.mended.len()), (3, 0));
    }

    #[tokio::test]
    async fn finished_tournaments_keep_the_winner_their_games_give_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        mended_on(&format!("sqlite://{}", dir.path().join("w.db").display())).await;
    }
}
