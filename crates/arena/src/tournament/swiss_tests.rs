#![allow(clippy::unwrap_used)]

use super::*;
use proptest::prelude::*;

/// Every perfect matching of `players` (an even number of them).
fn matchings(players: &[Player]) -> Vec<Vec<(Player, Player)>> {
    if players.is_empty() {
        return vec![Vec::new()];
    }
    let (p, rest) = (players[0], &players[1..]);
    let mut out = Vec::new();
    for i in 0..rest.len() {
        let mut others = rest.to_vec();
        let q = others.remove(i);
        for mut m in matchings(&others) {
            m.push((p, q));
            out.push(m);
        }
    }
    out
}

fn repeats(pairs: &[(Player, Player)], h: &History) -> usize {
    pairs.iter().filter(|(a, b)| h.met(*a, *b) > 0).count()
}

fn as_pairs(r: &Round) -> Vec<(Player, Player)> {
    r.tables.iter().map(|t| (t[0], t[1])).collect()
}

/// The fewest repeats any legal round can have: a bye for one of the
/// players with the fewest byes (odd counts), the others paired.
fn fewest_repeats(n: usize, h: &History) -> usize {
    let all: Vec<Player> = (0..n).collect();
    let bye_options: Vec<Option<Player>> = if n.is_multiple_of(2) {
        vec![None]
    } else {
        let fewest = all.iter().map(|&p| h.byes(p)).min().unwrap();
        all.iter()
            .filter(|&&p| h.byes(p) == fewest)
            .map(|&p| Some(p))
            .collect()
    };
    bye_options
        .into_iter()
        .map(|bye| {
            let rest: Vec<Player> = all.iter().copied().filter(|&p| Some(p) != bye).collect();
            matchings(&rest)
                .iter()
                .map(|m| repeats(m, h))
                .min()
                .unwrap()
        })
        .min()
        .unwrap()
}

/// A history of up to `n` players where any pair may have met, and byes.
fn arbitrary_case() -> impl Strategy<Value = (usize, History, Vec<u32>, u64)> {
    (2usize..=9).prop_flat_map(|n| {
        (
            Just(n),
            proptest::collection::vec(proptest::bool::weighted(0.45), n * n),
            proptest::collection::vec(0u32..3, n),
            proptest::collection::vec(0u32..4, n),
            any::<u64>(),
        )
            .prop_map(|(n, met, byes, scores, seed)| {
                let mut h = History::new(n);
                for a in 0..n {
                    for b in a + 1..n {
                        if met[a * n + b] {
                            h.record(&Round {
                                tables: vec![vec![a, b]],
                                byes: vec![],
                            });
                        }
                    }
                    for _ in 0..byes[a] {
                        h.record(&Round {
                            tables: vec![],
                            byes: vec![a],
                        });
                    }
                }
                (n, h, scores, seed)
            })
    })
}

fn check_everyone_once(n: usize, r: &Round) {
    let mut seen = vec![0; n];
    for p in r.tables.iter().flatten().chain(&r.byes) {
        seen[*p] += 1;
    }
    assert!(seen.iter().all(|&c| c == 1), "{r:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn pairs_are_legal_and_repeat_only_when_forced((n, h, scores, seed) in arbitrary_case()) {
        let order = seeding(n, None, seed);
        let r = pair_round(&order, &scores, &h, Tables::Pairs).unwrap();
        check_everyone_once(n, &r);
        prop_assert!(r.tables.iter().all(|t| t.len() == 2));
        prop_assert_eq!(r.byes.len(), n % 2, "one bye exactly when odd");
        if let Some(&b) = r.byes.first() {
            let fewest = (0..n).map(|p| h.byes(p)).min().unwrap();
            prop_assert_eq!(h.byes(b), fewest, "no extra bye while avoidable");
        }
        prop_assert_eq!(repeats(&as_pairs(&r), &h), fewest_repeats(n, &h));
        // Deterministic.
        prop_assert_eq!(&r, &pair_round(&order, &scores, &h, Tables::Pairs).unwrap());
    }

    #[test]
    fn without_history_pairs_stay_in_their_score_groups(
        scores in proptest::collection::vec(0u32..4, 2..12),
        seed in any::<u64>(),
    ) {
        let n = scores.len();
        let h = History::new(n);
        let r = pair_round(&seeding(n, None, seed), &scores, &h, Tables::Pairs).unwrap();
        check_everyone_once(n, &r);
        prop_assert_eq!(repeats(&as_pairs(&r), &h), 0);
        // The bye goes to a player of the lowest score.
        if let Some(&b) = r.byes.first() {
            prop_assert_eq!(scores[b], *scores.iter().min().unwrap());
        }
        // Score groups of the paired players, best first: each boundary
        // with an odd number of players above it must be crossed once, and
        // no pair crosses more boundaries than that.
        let mut paired: Vec<u32> = r.tables.iter().flatten().map(|&p| scores[p]).collect();
        paired.sort_unstable_by(|a, b| b.cmp(a));
        let mut groups = paired.clone();
        groups.dedup();
        let group = |s: u32| groups.iter().position(|&g| g == s).unwrap();
        let odd_boundaries = (0..groups.len().saturating_sub(1))
            .filter(|&g| paired.iter().filter(|&&s| group(s) <= g).count() % 2 == 1)
            .count();
        let crossed: usize = r
            .tables
            .iter()
            .map(|t| group(scores[t[0]]).abs_diff(group(scores[t[1]])))
            .sum();
        prop_assert_eq!(crossed, odd_boundaries);
    }

    #[test]
    fn groups_whose_members_have_not_met_pair_inside(
        groups in proptest::collection::vec(1usize..4, 1..4),
        extra in proptest::collection::vec(proptest::bool::ANY, 64),
        seed in any::<u64>(),
    ) {
        // Even score groups; players of different groups may have met.
        let scores: Vec<u32> = groups
            .iter()
            .enumerate()
            .flat_map(|(g, &half)| std::iter::repeat_n(g as u32, 2 * half))
            .collect();
        let n = scores.len();
        let mut h = History::new(n);
        for a in 0..n {
            for b in a + 1..n {
                if scores[a] != scores[b] && extra[(a * 7 + b) % 64] {
                    h.record(&Round { tables: vec![vec![a, b]], byes: vec![] });
                }
            }
        }
        let r = pair_round(&seeding(n, None, seed), &scores, &h, Tables::Pairs).unwrap();
        for t in &r.tables {
            prop_assert_eq!(scores[t[0]], scores[t[1]], "{:?}", r);
        }
    }

    #[test]
    fn tables_seat_everyone_at_balanced_tables(
        (n, h, scores, seed) in arbitrary_case(),
        max in 3usize..=4,
    ) {
        let order = seeding(n, None, seed);
        let r = pair_round(&order, &scores, &h, Tables::UpTo(max)).unwrap();
        check_everyone_once(n, &r);
        prop_assert!(r.byes.is_empty());
        let sizes: Vec<usize> = r.tables.iter().map(Vec::len).collect();
        prop_assert_eq!(&sizes, &table_sizes(n, max));
        prop_assert!(sizes.iter().all(|&s| (2..=max).contains(&s)));
        prop_assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        prop_assert_eq!(&r, &pair_round(&order, &scores, &h, Tables::UpTo(max)).unwrap());
    }

    #[test]
    fn without_history_tables_are_slices_of_the_standings(
        scores in proptest::collection::vec(0u32..4, 2..14),
        seed in any::<u64>(),
    ) {
        let n = scores.len();
        let order = seeding(n, None, seed);
        let r = pair_round(&order, &scores, &History::new(n), Tables::UpTo(4)).unwrap();
        let mut ranked = order.clone();
        ranked.sort_by(|a, b| scores[*b].cmp(&scores[*a]));
        let seated: Vec<Player> = r.tables.iter().flatten().copied().collect();
        prop_assert_eq!(seated, ranked);
    }

    #[test]
    fn seeding_is_a_permutation_fixed_by_the_seed(n in 0usize..40, seed in any::<u64>()) {
        let s = seeding(n, None, seed);
        let mut sorted = s.clone();
        sorted.sort_unstable();
        prop_assert_eq!(sorted, (0..n).collect::<Vec<_>>());
        prop_assert_eq!(s, seeding(n, None, seed));
    }
}

#[test]
fn seeding_follows_ratings_and_the_seed_changes_the_draw() {
    assert_eq!(seeding(3, Some(&[1.0, 30.0, 7.5]), 9), vec![1, 2, 0]);
    let draws: std::collections::HashSet<Vec<Player>> =
        (0..20).map(|seed| seeding(8, None, seed)).collect();
    assert!(draws.len() > 10, "seeds give different draws");
}

#[test]
fn a_whole_swiss_gives_each_player_one_bye_and_no_repeats() {
    // 7 players, 7 rounds: a round-robin schedule exists, and the greedy
    // Swiss must not repeat a pairing or a bye in the first rounds.
    let n = 7;
    let mut h = History::new(n);
    let mut scores = vec![0u32; n];
    let order = seeding(n, None, 3);
    for round in 0..4 {
        let r = pair_round(&order, &scores, &h, Tables::Pairs).unwrap();
        for t in &r.tables {
            assert_eq!(h.met(t[0], t[1]), 0, "round {round}: {r:?}");
            // The lower index wins: results differ from the seeding.
            scores[t[0].min(t[1])] += 2;
        }
        for &b in &r.byes {
            assert_eq!(h.byes(b), 0, "round {round}: second bye for {b}");
            scores[b] += 2;
        }
        h.record(&r);
    }
}

#[test]
fn slide_pairs_top_half_against_bottom_half() {
    let order: Vec<Player> = (0..8).collect();
    let r = pair_round(&order, &[0; 8], &History::new(8), Tables::Pairs).unwrap();
    assert_eq!(
        r.tables,
        vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
    );
}

#[test]
fn bad_input_is_refused() {
    let h = History::new(2);
    assert_eq!(
        pair_round(&[0], &[0], &History::new(1), Tables::Pairs),
        Err(PairingError::TooFew(1))
    );
    assert!(matches!(
        pair_round(&[0, 0], &[0, 0], &h, Tables::Pairs),
        Err(PairingError::Inconsistent(_))
    ));
    assert!(matches!(
        pair_round(&[0, 1], &[0], &h, Tables::Pairs),
        Err(PairingError::Inconsistent(_))
    ));
}

#[test]
fn table_sizes_are_as_even_as_possible() {
    assert_eq!(table_sizes(5, 4), vec![3, 2]);
    assert_eq!(table_sizes(8, 4), vec![4, 4]);
    assert_eq!(table_sizes(9, 4), vec![3, 3, 3]);
    assert_eq!(table_sizes(10, 4), vec![4, 3, 3]);
    assert_eq!(table_sizes(3, 4), vec![3]);
    assert_eq!(table_sizes(7, 3), vec![3, 2, 2]);
}
