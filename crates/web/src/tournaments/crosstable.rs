//! A tournament's crosstable on its page: every pair's mean score with its
//! confidence interval, the bots in the order of the standings, for the
//! first [`SHOWN`] of them. A tournament's named entries may be 256 bots
//! (and one of every active bot has no bound), whose whole crosstable would
//! be 65,280 cells: 6 MiB of HTML, 26 ms to draw, and no use on a screen.
//! The page's JSON twin has every pair.

use croupier_competition::tournaments::view::Crosstable;

use crate::html::{column_head, html, row_head, Markup};

/// A tournament page's crosstable shows the first this many bots of the
/// standings (a round robin of this many fits whole).
pub const SHOWN: usize = 24;

/// Background of a crosstable cell: green when the row bot is significantly
/// better, red when significantly worse (ACPC's crosstable), plain else.
fn shade(significant: i8) -> Option<&'static str> {
    match significant {
        1 => Some("background:rgba(63,163,91,.25)"),
        -1 => Some("background:rgba(207,67,51,.25)"),
        _ => None,
    }
}

/// A crosstable's heading, what it shows, and the table of its first
/// [`SHOWN`] bots; `json` is the page's JSON twin, which has every pair.
pub(super) fn section(c: &Crosstable, json: &str) -> Markup {
    let bots = &c.bots[..c.bots.len().min(SHOWN)];
    html! {
        h2 { "Crosstable" }
        p {
            "The row bot's mean score per game against the column bot (a win 1, a tie ½), \
    with its 95% confidence interval; green: significantly better, red: significantly worse."
        }
        @if c.bots.len() > bots.len() {
            p {
                "The top " (bots.len()) " of the " (c.bots.len()) " bots, by the standings: "
                "every pair is in " a href=(json) { "this page's JSON" } "."
            }
        }
        div class="scroll" { table class="crosstable wide" {
            thead { tr { th {} @for (i, b) in bots.iter().enumerate() { (column_head(i, b)) } } }
            tbody {
                @for (i, (b, row)) in bots.iter().zip(&c.cells).enumerate() {
                    tr {
                        (row_head(i, b))
                        @for cell in &row[..row.len().min(bots.len())] {
                            @match cell {
                                None => td {},
                                Some(pair) => td class="num" style=[shade(pair.significant)] title={ (pair.games) " games" } {
                                    (format!("{:.2}", pair.score)) br; small { (format!("{:.2}–{:.2}", pair.low, pair.high)) }
                                },
                            }
                        }
                    }
                }
            }
        } }
    }
}
