//! The text table of a Swiss: standings with tie-breaks, the crosstable
//! (one column per round) and each bot's games.

use croupier_arena::tournament::standings::Cell;
use croupier_arena::tournament::{SwissReport, TournamentResult};

use crate::play::name_width;

/// Prints the standings, crosstable and game counts of a Swiss.
pub fn print_swiss(r: &TournamentResult, s: &SwissReport, seed: u64) {
    println!(
        "{} games of {}: Swiss, {} rounds (up to {} per table, {} deals, seed {seed})",
        r.games,
        r.game,
        s.rounds,
        r.players,
        if r.duplicate { "duplicate" } else { "single" }
    );
    println!("ranked by points, then Buchholz, head-to-head, rating");
    let width = name_width(&r.bots);
    // Crosstable cells name opponents by their final place.
    let mut place = vec![0; r.bots.len()];
    for row in &s.standings {
        place[row.bot] = row.rank;
    }
    let cells: Vec<Vec<String>> = s
        .standings
        .iter()
        .map(|row| row.rounds.iter().map(|c| cell(c, &place)).collect())
        .collect();
    let cw = cells
        .iter()
        .flatten()
        .map(String::len)
        .max()
        .unwrap_or(0)
        .max(4);
    print!(
        "{:>3} {:width$}  {:>6} {:>8} {:>5} {:>11}",
        "#", "bot", "points", "Buchholz", "h2h", "rating"
    );
    for round in 1..=s.rounds {
        print!(" {:>cw$}", format!("R{round}"));
    }
    println!();
    for (row, cells) in s.standings.iter().zip(&cells) {
        print!(
            "{:>3} {:width$}  {:>6} {:>8} {:>5} {:>11}",
            row.rank,
            r.bots[row.bot].name,
            num(row.points),
            num(row.buchholz),
            num(row.head_to_head),
            rating(&r.ratings[row.bot])
        );
        for c in cells {
            print!(" {c:>cw$}");
        }
        println!();
    }
    println!(
        "(a cell: W/D/L and the opponent's place; at a larger table, the \
         points and the opponents' places)"
    );
    println!();
    println!(
        "{:>3} {:width$}  {:>6} {:>6} {:>6} {:>6} {:>10} {:>6}",
        "#", "bot", "games", "wins", "draws", "losses", "mean score", "faults"
    );
    for row in &s.standings {
        let b = &r.bots[row.bot];
        println!(
            "{:>3} {:width$}  {:>6} {:>6} {:>6} {:>6} {:>10.2} {:>6}",
            row.rank, b.name, b.games, b.wins, b.draws, b.losses, b.mean_score, b.faults
        );
    }
}

/// A number without needless decimals: 3, 2.5, 0.67.
fn num(x: f64) -> String {
    let s = format!("{x:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn cell(c: &Cell, place: &[usize]) -> String {
    if c.bye {
        return "bye".into();
    }
    match c.opponents.as_slice() {
        [] => "-".into(),
        [o] => {
            let letter = if c.points >= 1.0 {
                'W'
            } else if c.points > 0.0 {
                'D'
            } else {
                'L'
            };
            format!("{letter}{}", place[*o])
        }
        many => {
            let places: Vec<String> = many.iter().map(|o| place[*o].to_string()).collect();
            format!("{}@{}", num(c.points), places.join(","))
        }
    }
}

/// A rating as mean ± one standard deviation.
pub fn rating(r: &croupier_arena::tournament::rating::Rating) -> String {
    format!("{:.1}±{:.1}", r.mu, r.sigma)
}
