//! Faults explained on the command line (issue 49): each fault as it is
//! ruled with `-v`, and after `play` or `tournament` a line per bot that
//! faulted, with its count per kind, its first fault's reason and the last
//! lines of its stderr.

use std::collections::HashMap;
use std::sync::Mutex;

use croupier_arena::explain::FaultSink;
use croupier_arena::series::BotSummary;
use indicatif::ProgressBar;

/// With `-v`, a sink that prints each fault on stderr as it is ruled (above
/// the progress bar, if one is drawn). A seat whose bot can no longer answer
/// gets the same ruling at each of its later decisions: those repeats are
/// not printed again (the summary counts them).
pub fn live_sink(verbose: bool, bar: &ProgressBar) -> Option<FaultSink> {
    if !verbose {
        return None;
    }
    let bar = bar.clone();
    let last = Mutex::new(HashMap::new());
    Some(FaultSink::new(move |n| {
        let key = (n.game, n.seat);
        let this = (n.fault.kind.clone(), n.fault.detail.clone());
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        last.retain(|(game, _), _| *game == n.game);
        if last.get(&key) == Some(&this) {
            return;
        }
        last.insert(key, this);
        let mut text = format!(
            "fault: game {}, seat {}, {}: {}: {}",
            n.game,
            n.seat,
            n.bot,
            n.fault.kind,
            reason(&n.fault.detail, !n.stderr.is_empty())
        );
        for line in &n.stderr {
            text += &format!("\n  stderr| {line}");
        }
        bar.suspend(|| eprintln!("{text}"));
    }))
}

/// A fault's detail on one line; without the copy of the bot's stderr a
/// crash's detail ends with, when its stderr is shown anyway.
fn reason(detail: &str, stderr_shown: bool) -> String {
    let detail = match detail.split_once("; stderr: ") {
        Some((head, _)) if stderr_shown => head,
        _ => detail,
    };
    detail.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The explanation of every bot that faulted, one paragraph each (empty
/// when none did).
pub fn explanations(bots: &[BotSummary]) -> String {
    let mut out = String::new();
    for b in bots.iter().filter(|b| b.faults > 0) {
        let kinds: Vec<String> = b
            .fault_kinds
            .iter()
            .map(|(kind, n)| format!("{kind} {n}"))
            .collect();
        let plural = if b.faults == 1 { "" } else { "s" };
        out += &format!(
            "{}: {} fault{plural} ({})\n",
            b.name,
            b.faults,
            kinds.join(", ")
        );
        if let Some(f) = &b.first_fault {
            out += &format!(
                "  first, in its game {} (seat {}): {}: {}\n",
                f.game,
                f.seat,
                f.kind,
                reason(&f.detail, !f.stderr.is_empty())
            );
            if !f.stderr.is_empty() {
                out += "  its stderr then ended with:\n";
                for line in &f.stderr {
                    out += &format!("    | {line}\n");
                }
            }
        }
    }
    out
}

/// Prints [`explanations`] under a heading, if any bot faulted.
pub fn print_explanations(bots: &[BotSummary]) {
    let text = explanations(bots);
    if !text.is_empty() {
        println!("\nfaults:\n{}", text.trim_end());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_one_line_and_drops_the_stderr_shown_below_it() {
        let d = "the bot closed its output (exit status: 1); stderr: Traceback\n  File x";
        assert_eq!(
            reason(d, true),
            "the bot closed its output (exit status: 1)"
        );
        assert_eq!(
            reason(d, false),
            "the bot closed its output (exit status: 1); stderr: Traceback File x"
        );
    }

    #[test]
    fn only_bots_that_faulted_are_explained() {
        let mut quiet = BotSummary::new("builtin:random");
        quiet.games = 3;
        let mut bad = BotSummary::new("./bad");
        bad.faults = 2;
        bad.fault_kinds.insert("timeout".into(), 1);
        bad.fault_kinds.insert("crash".into(), 1);
        let text = explanations(&[quiet, bad]);
        assert_eq!(text, "./bad: 2 faults (crash 1, timeout 1)\n");
    }
}
