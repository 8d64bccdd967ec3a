//! Built-in strategies think on Tokio's blocking pool, never on an async
//! worker thread: a searching strategy (`strong`) takes its whole budget per
//! decision, and would otherwise stall every other game and connection
//! sharing that worker.

use std::time::{Duration, Instant};

use croupier_bots::{bot_rng, BotRng, RandomBot, Strategy};
use croupier_rules::Game;

/// Asks `strategy` for an action on the blocking pool and waits for it
/// without holding up the async worker. Returns the action and the time the
/// strategy took. The strategy and its generator are lent to the blocking
/// task and put back before this returns; a strategy that panics panics
/// here too, as a direct call would.
pub async fn act_blocking<G: Game>(
    strategy: &mut Box<dyn Strategy<G>>,
    obs: G::Observation,
    legal: Vec<G::Action>,
    rng: &mut BotRng,
) -> (G::Action, Duration) {
    let fallback = legal.first().copied();
    let lent = std::mem::replace(strategy, Box::new(RandomBot));
    let mut r = std::mem::replace(rng, bot_rng(0));
    let task = off_runtime(move || {
        let mut s = lent;
        let t = Instant::now();
        let a = s.act(&obs, &legal, &mut r);
        (s, r, a, t.elapsed())
    });
    match task.await {
        Some((s, r, a, took)) => {
            *strategy = s;
            *rng = r;
            (a, took)
        }
        // Only when the runtime shuts down: the game is being dropped.
        None => match fallback {
            Some(a) => (a, Duration::ZERO),
            None => panic!("act_blocking needs at least one legal action"),
        },
    }
}

/// Runs `f` on Tokio's blocking pool and gives its result, without holding
/// up the async worker meanwhile; a panic in `f` goes on in the caller, as
/// a direct call's would. `None` only when the runtime shuts down before
/// `f` could start.
pub async fn off_runtime<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    match tokio::task::spawn_blocking(f).await {
        Ok(v) => Some(v),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(_) => None,
    }
}

/// Asks `strategy` for an action on this thread, for a match that runs no
/// runtime ([`crate::runner::play_match`]). Returns the action and the time
/// the strategy took.
pub fn act_inline<G: Game>(
    strategy: &mut Box<dyn Strategy<G>>,
    obs: &G::Observation,
    legal: &[G::Action],
    rng: &mut BotRng,
) -> (G::Action, Duration) {
    let t = Instant::now();
    let a = strategy.act(obs, legal, rng);
    (a, t.elapsed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use croupier_rules::goofspiel::{Goofspiel, GoofspielVariant};
    use croupier_rules::Seat;

    /// A strategy that blocks its thread for a while, like a search.
    struct Slow;
    impl Strategy<Goofspiel> for Slow {
        fn act(
            &mut self,
            _obs: &<Goofspiel as Game>::Observation,
            legal: &[<Goofspiel as Game>::Action],
            _rng: &mut BotRng,
        ) -> <Goofspiel as Game>::Action {
            std::thread::sleep(Duration::from_millis(300));
            legal[legal.len() - 1]
        }
    }

    /// While a built-in thinks, a single-threaded runtime still runs other
    /// tasks (a direct call would hold its only worker).
    #[tokio::test(flavor = "current_thread")]
    async fn thinking_does_not_hold_the_worker() {
        let g = Goofspiel::new(&GoofspielVariant::gops(), 2, 1).expect("a game");
        let obs = g.observation(Seat(0));
        let legal = g.legal_vec(Seat(0));
        let mut s: Box<dyn Strategy<Goofspiel>> = Box::new(Slow);
        let mut rng = bot_rng(1);
        let ticks = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let t2 = ticks.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                t2.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        let (a, took) = act_blocking(&mut s, obs, legal.clone(), &mut rng).await;
        ticker.abort();
        assert_eq!(a, legal[legal.len() - 1]);
        assert!(took >= Duration::from_millis(300));
        // The ticker ran while the strategy slept on the blocking pool.
        assert!(ticks.load(std::sync::atomic::Ordering::Relaxed) >= 5);
        // The strategy was put back: it answers again.
        let obs = g.observation(Seat(0));
        let (b, _) = act_blocking(&mut s, obs, legal.clone(), &mut rng).await;
        assert_eq!(b, legal[legal.len() - 1]);
    }

    #[tokio::test]
    async fn off_the_runtime_is_another_thread_and_a_panic_goes_on_in_the_caller() {
        use futures::FutureExt;
        let here = std::thread::current().id();
        let there = off_runtime(|| std::thread::current().id()).await.unwrap();
        assert_ne!(here, there);
        let panicked = std::panic::AssertUnwindSafe(off_runtime(|| panic!("in the assembly")))
            .catch_unwind()
            .await
            .unwrap_err();
        assert_eq!(panicked.downcast_ref::<&str>(), Some(&"in the assembly"));
    }
}
