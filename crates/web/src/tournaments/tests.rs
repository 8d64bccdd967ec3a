//! The tournament page's own parts: its pages of games, its crosstable.

use super::*;

fn game(scores: Vec<Option<i64>>) -> view::Game {
    view::Game {
        round: 1,
        table: 0,
        game: 0,
        seats: vec!["ann".into(), "bob".into()],
        status: "done".into(),
        id: Some(7),
        ranks: vec![2, 1],
        scores,
    }
}

fn games_on(all: &[view::Game], page: i64) -> &[view::Game] {
    GamesPage::of(all, page).games
}

fn shared_rounds(all: &[view::Game], page: i64) -> (Option<i64>, Option<i64>) {
    let shown = GamesPage::of(all, page);
    (shown.began, shown.goes_on)
}

fn games_pager(name: &str, all: &[view::Game], page: i64) -> Markup {
    GamesPage::of(all, page).pager(name)
}

#[test]
fn the_games_are_cut_into_pages_of_games_per_page() {
    let many: Vec<view::Game> = (0..GAMES_PER_PAGE * 2 + 1)
        .map(|i| view::Game {
            game: i as i64,
            ..game(Vec::new())
        })
        .collect();
    assert_eq!(games_pages(0), 1);
    assert_eq!(games_pages(GAMES_PER_PAGE), 1);
    assert_eq!(games_pages(many.len()), 3);
    assert_eq!(games_on(&many, 1).len(), GAMES_PER_PAGE);
    assert_eq!(games_on(&many, 2)[0].game, GAMES_PER_PAGE as i64);
    assert_eq!(games_on(&many, 3).len(), 1);
    // Past the end (the handler refuses it first): nothing, no panic.
    assert!(games_on(&many, 4).is_empty());
    assert!(games_on(&many, i64::MAX).is_empty());
    assert!(games_on(&[], 1).is_empty());
    // Two rounds, the first going on past page 1: page 1 ends inside
    // it, page 2 starts inside it and ends with round 2.
    let rounds: Vec<view::Game> = (0..GAMES_PER_PAGE + 50)
        .map(|i| view::Game {
            round: if i < GAMES_PER_PAGE + 10 { 1 } else { 2 },
            ..game(Vec::new())
        })
        .collect();
    assert_eq!(shared_rounds(&rounds, 1), (None, Some(1)));
    assert_eq!(shared_rounds(&rounds, 2), (Some(1), None));
    // A round that ends with its page is not shared.
    let even: Vec<view::Game> = (0..GAMES_PER_PAGE * 2)
        .map(|i| view::Game {
            round: if i < GAMES_PER_PAGE { 1 } else { 2 },
            ..game(Vec::new())
        })
        .collect();
    assert_eq!(shared_rounds(&even, 1), (None, None));
    assert_eq!(shared_rounds(&even, 2), (None, None));
    assert_eq!(shared_rounds(&many, 4), (None, None));
    assert_eq!(shared_rounds(&[], 1), (None, None));
    // One page: no pager; the last page links back only.
    assert!(games_pager("c", &many[..GAMES_PER_PAGE], 1)
        .into_string()
        .is_empty());
    let last = games_pager("c", &many, 3).into_string();
    assert!(
        last.contains("games=2#games") && !last.contains("games=4"),
        "{last}"
    );
    assert!(last.contains("401–401 of 401"), "{last}");
}

/// Each seat shows its own score, and its rank when it has none (an
/// imported forfeit's seat): a score is never shown beside another
/// seat's bot.
#[test]
fn a_seat_shows_its_own_score_or_its_rank() {
    let both = game_seats(&game(vec![Some(4), Some(6)])).into_string();
    assert!(both.contains("ann</a> <b>4</b>"), "{both}");
    assert!(both.contains("bob</a> <b>6</b>"), "{both}");
    let second = game_seats(&game(vec![None, Some(3)])).into_string();
    assert!(second.contains("ann</a> <small>rank 2</small>"), "{second}");
    assert!(second.contains("bob</a> <b>3</b>"), "{second}");
    let none = game_seats(&game(Vec::new())).into_string();
    assert!(none.contains("bob</a> <small>rank 1</small>"), "{none}");
}

/// A crosstable of `n` bots, named `bot-0`, `bot-1`, … in the order of the
/// standings, where every pair has met.
fn crosstable_of(n: usize) -> view::Crosstable {
    view::Crosstable {
        bots: (0..n).map(|i| format!("bot-{i}")).collect(),
        cells: (0..n)
            .map(|r| {
                (0..n)
                    .map(|k| {
                        (r != k).then_some(view::Cell {
                            games: 2,
                            score: 0.5,
                            low: 0.1,
                            high: 0.9,
                            significant: 0,
                        })
                    })
                    .collect()
            })
            .collect(),
    }
}

#[test]
fn the_crosstable_shows_the_top_of_the_standings_and_says_so() {
    let heads = |html: &str| html.matches("<th><span class=\"no\">").count();
    let cells = |html: &str| html.matches("<td class=\"num\"").count();
    // Up to SHOWN bots, the whole table and no note.
    let whole = crosstable::section(&crosstable_of(crosstable::SHOWN), "/json/tournaments/cup")
        .into_string();
    assert_eq!(heads(&whole), crosstable::SHOWN);
    assert_eq!(cells(&whole), crosstable::SHOWN * (crosstable::SHOWN - 1));
    assert!(!whole.contains("The top"), "{whole}");
    // A tournament's most (256 bots): the first SHOWN rows and columns.
    let top = crosstable::section(&crosstable_of(256), "/json/tournaments/big%20cup").into_string();
    assert_eq!(heads(&top), crosstable::SHOWN, "rows");
    assert_eq!(cells(&top), crosstable::SHOWN * (crosstable::SHOWN - 1));
    assert!(top.contains(&format!("bot-{}<", crosstable::SHOWN - 1)));
    assert!(!top.contains(&format!("bot-{}<", crosstable::SHOWN)));
    assert!(
        !top.contains(&format!("/bots/bot-{}\"", crosstable::SHOWN)),
        "a column past the top"
    );
    assert!(
        top.contains(&format!(
            "The top {} of the 256 bots, by the standings",
            crosstable::SHOWN
        )) && top.contains("href=\"/json/tournaments/big%20cup\""),
        "{top}"
    );
}
