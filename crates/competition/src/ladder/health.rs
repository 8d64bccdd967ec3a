//! A bot's health on the ladder: a match in which it faulted is a strike,
//! a clean match clears its strikes, and too many strikes in a row pause it
//! for a while with the reason. The verdict is pure; [`record`] reads and
//! writes it in the store.

use std::time::Duration;

use croupier_rules::Record;
use croupier_store::{BotInfo, Store};

use super::config::LadderConfig;

/// What one finished match does to a bot's health.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Nothing to write: a clean match and no strikes to clear.
    Keep,
    /// A clean match clears the strikes (and any pause reason).
    Clear,
    /// One more strike; `pause` is set when that makes too many.
    Strike {
        /// Strikes in a row, this one included.
        strikes: i64,
        /// Paused until (unix seconds): the current pause, or a new one.
        paused_until: Option<i64>,
        /// Why a new pause was given.
        reason: Option<String>,
    },
}

/// The verdict on `current` after a match with `fault` (the last fault of
/// its seat, if any): `limit` strikes in a row pause it for `pause_for`
/// from `now` (unix seconds).
pub(super) fn judge(
    current: &BotInfo,
    fault: Option<&str>,
    limit: u32,
    pause_for: Duration,
    now: i64,
) -> Verdict {
    match fault {
        None if current.strikes == 0 => Verdict::Keep,
        None => Verdict::Clear,
        Some(f) => {
            let strikes = current.strikes + 1;
            if strikes >= i64::from(limit.max(1)) {
                let reason = format!(
                    "paused for {} after {strikes} faulty matches in a row; last fault: {}",
                    humantime::format_duration(pause_for),
                    f.chars().take(300).collect::<String>()
                );
                Verdict::Strike {
                    strikes,
                    paused_until: Some(now + pause_for.as_secs() as i64),
                    reason: Some(reason),
                }
            } else {
                Verdict::Strike {
                    strikes,
                    paused_until: current.paused_until,
                    reason: None,
                }
            }
        }
    }
}

/// The last fault of `seat` in `record`, as `kind: detail`.
pub(super) fn last_fault(record: &Record, seat: usize) -> Option<String> {
    record
        .steps
        .iter()
        .rev()
        .filter(|s| s.seat.index() == seat)
        .find_map(|s| s.fault.as_ref())
        .map(|f| format!("{}: {}", f.kind, f.detail))
}

/// Seconds since the Unix epoch.
pub(super) fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Counts a faulty match of bot `b` as a strike (pausing the bot after too
/// many, by `config`), or a clean one as clearing its strikes.
pub(super) async fn record(
    store: &dyn Store,
    config: &LadderConfig,
    b: &BotInfo,
    fault: Option<String>,
) {
    let current = match store.bot_info(b.id).await {
        Ok(Some(c)) => c,
        _ => return,
    };
    let verdict = judge(
        &current,
        fault.as_deref(),
        config.strikes,
        config.pause_for,
        unix_now(),
    );
    let result = match verdict {
        Verdict::Keep => return,
        Verdict::Clear => store.set_bot_health(b.id, 0, None, None).await,
        Verdict::Strike {
            strikes,
            paused_until,
            reason,
        } => {
            if let Some(reason) = &reason {
                tracing::warn!("ladder: bot {} {reason}", b.name);
            }
            store
                .set_bot_health(b.id, strikes, paused_until, reason.as_deref())
                .await
        }
    };
    if let Err(e) = result {
        tracing::warn!("ladder: cannot record the health of bot {}: {e}", b.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_store::BotKind;

    fn bot(strikes: i64, paused_until: Option<i64>) -> BotInfo {
        BotInfo {
            id: 1,
            name: "b".into(),
            game: "goofspiel".into(),
            kind: BotKind::Push,
            owner: None,
            endpoint: Some("http://127.0.0.1:1/".into()),
            dialect: None,
            auth_user: None,
            auth_password: None,
            strikes,
            paused_until,
            pause_reason: None,
            enabled: true,
            banned: None,
        }
    }

    const PAUSE: Duration = Duration::from_secs(600);

    #[test]
    fn a_clean_match_clears_strikes_only_when_there_are_some() {
        assert_eq!(judge(&bot(0, None), None, 3, PAUSE, 100), Verdict::Keep);
        assert_eq!(judge(&bot(2, None), None, 3, PAUSE, 100), Verdict::Clear);
    }

    #[test]
    fn strikes_count_up_then_pause_with_the_reason() {
        assert_eq!(
            judge(&bot(0, None), Some("timeout: slow"), 3, PAUSE, 100),
            Verdict::Strike {
                strikes: 1,
                paused_until: None,
                reason: None
            }
        );
        let Verdict::Strike {
            strikes,
            paused_until,
            reason,
        } = judge(&bot(2, None), Some("timeout: slow"), 3, PAUSE, 100)
        else {
            panic!("a third fault is a strike");
        };
        assert_eq!((strikes, paused_until), (3, Some(700)));
        let reason = reason.expect("a pause has a reason");
        assert!(reason.contains("3 faulty matches"), "{reason}");
        assert!(reason.ends_with("timeout: slow"), "{reason}");
    }

    #[test]
    fn a_strike_below_the_limit_keeps_an_earlier_pause() {
        assert_eq!(
            judge(&bot(0, Some(50)), Some("crash: x"), 3, PAUSE, 100),
            Verdict::Strike {
                strikes: 1,
                paused_until: Some(50),
                reason: None
            }
        );
    }

    #[test]
    fn a_limit_of_zero_pauses_at_the_first_fault() {
        assert!(matches!(
            judge(&bot(0, None), Some("crash: x"), 0, PAUSE, 0),
            Verdict::Strike {
                strikes: 1,
                paused_until: Some(600),
                ..
            }
        ));
    }

    #[test]
    fn a_long_fault_is_cut_in_the_reason() {
        let long = "x".repeat(1000);
        let Verdict::Strike { reason, .. } = judge(&bot(5, None), Some(&long), 3, PAUSE, 0) else {
            panic!("a fault is a strike");
        };
        let reason = reason.expect("paused");
        assert!(reason.len() < 450, "{}", reason.len());
    }
}
