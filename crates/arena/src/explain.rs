//! Faults explained (issue 49): each fault of a live match as it is ruled,
//! with the last lines the bot wrote on stderr at that moment.
//!
//! A record keeps each fault's kind and detail, but not the bot's stderr
//! (it can be large, and it is the bot's own business). An organiser who
//! wants to know why a bot faulted needs both, so the live runner hands
//! every fault it rules to the [`FaultSink`] of the current match, if any,
//! as a [`FaultNotice`]. A caller runs
//! [`play_live`](crate::live::play_live) inside [`scope`] to receive them;
//! the series and tournaments of [`crate::series::Table`] do, to explain
//! each bot's first fault and, with `-v`, to print faults as they happen.
//! Without a scope, [`notify`] does nothing (and reads no stderr).

use std::sync::Arc;

use croupier_rules::Fault;
use serde::Serialize;

/// Lines of a bot's stderr a notice keeps: its last ones.
pub const STDERR_LINES: usize = 5;

/// Characters of one stderr line a notice keeps.
const LINE_CHARS: usize = 200;

/// One fault of a live match, as it was ruled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FaultNotice {
    /// The game of the [`Table`](crate::series::Table) it happened in,
    /// counted from 1 (0 outside a table).
    pub game: u64,
    /// The faulty seat.
    pub seat: u8,
    /// The seat's bot, as the record names it.
    pub bot: String,
    /// What went wrong.
    pub fault: Fault,
    /// The last lines the bot had written on stderr when the fault was
    /// ruled (empty for built-in strategies and HTTP bots).
    pub stderr: Vec<String>,
}

/// Where the faults of a match go. It runs on the match's task and must
/// not block.
#[derive(Clone)]
pub struct FaultSink(pub Arc<dyn Fn(&FaultNotice) + Send + Sync>);

impl FaultSink {
    /// A sink that calls `f` with each notice.
    pub fn new(f: impl Fn(&FaultNotice) + Send + Sync + 'static) -> Self {
        FaultSink(Arc::new(f))
    }
}

impl std::fmt::Debug for FaultSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FaultSink")
    }
}

tokio::task_local! {
    static SINK: (FaultSink, u64);
}

/// Runs `fut` (a [`play_live`](crate::live::play_live)) with `sink`
/// receiving its faults, each marked as game `game`.
pub async fn scope<F: std::future::Future>(sink: FaultSink, game: u64, fut: F) -> F::Output {
    SINK.scope((sink, game), fut).await
}

/// True inside a [`scope`]: only then is a bot's stderr worth reading.
pub(crate) fn watched() -> bool {
    SINK.try_with(|_| ()).is_ok()
}

/// Hands the current match's sink, if any, seat `seat`'s fault; `stderr`
/// is what the bot has written there so far (only its last lines are kept).
pub(crate) fn notify(seat: u8, bot: &str, fault: &Fault, stderr: &str) {
    let _ = SINK.try_with(|(sink, game)| {
        (sink.0)(&FaultNotice {
            game: *game,
            seat,
            bot: bot.to_string(),
            fault: fault.clone(),
            stderr: last_lines(stderr, STDERR_LINES),
        })
    });
}

/// The last `n` non-blank lines of `text`, each cut to 200 characters.
pub fn last_lines(text: &str, n: usize) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .rev()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .map(|l| {
            let l = l.trim_end();
            let mut s: String = l.chars().take(LINE_CHARS).collect();
            if s.len() < l.len() {
                s.push('…');
            }
            s
        })
        .collect();
    lines.reverse();
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_are_kept_in_order_and_cut() {
        let long = "x".repeat(300);
        let text = format!("one\n\ntwo\nthree\n{long}\n\n");
        assert_eq!(
            last_lines(&text, 3),
            vec![
                "two".to_string(),
                "three".into(),
                format!("{}…", "x".repeat(200))
            ]
        );
        assert!(last_lines("", 5).is_empty());
        assert_eq!(last_lines("a\r\nb", 5), vec!["a", "b"]);
    }

    #[tokio::test]
    async fn notices_reach_the_sink_only_inside_a_scope() {
        let got = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = {
            let got = Arc::clone(&got);
            FaultSink::new(move |n| got.lock().unwrap().push(n.clone()))
        };
        let f = Fault {
            kind: "crash".into(),
            detail: "exited".into(),
        };
        notify(0, "outside", &f, "nothing");
        assert!(!watched());
        scope(sink, 7, async {
            assert!(watched());
            notify(1, "./bot", &f, "a\nb\n");
        })
        .await;
        let got = got.lock().unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].game, got[0].seat), (7, 1));
        assert_eq!(got[0].bot, "./bot");
        assert_eq!(got[0].stderr, vec!["a", "b"]);
    }
}
