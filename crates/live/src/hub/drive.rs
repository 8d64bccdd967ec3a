//! A REST game's runner, polled where its moves arrive.
//!
//! Each game is played by the arena's runner (`play_on_arrival`) in a task
//! of its own. A `bid`/`play` puts its line in the seat's inbox and waits
//! for the runner's answer; handed over between two tasks, that answer
//! waited for the request's connection task to come round again in
//! Tokio's run queue — under load a whole turn of the queue (about 2 ms at
//! p50 with 200 bots, against microseconds of work; issues 11 and 20).
//!
//! [`Drive`] keeps the runner's future where both can poll it: the game's
//! own task drives it to its end ([`Drive::run`]), and a request that has
//! just put its line in the inbox polls it once in its own task
//! ([`Drive::step_here`]), so the move is applied and answered before the
//! request yields. Whoever polls, every wake-up the runner registers (its
//! inboxes, its move clocks) goes to the game's task, so a deadline or a
//! message that comes later is never missed; a poll that finds the future
//! busy in another task leaves a note that makes that task wake the game's
//! task when it is done.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

type Runner<T> = Pin<Box<dyn Future<Output = T> + Send>>;

enum State<T> {
    /// The runner, not finished yet.
    Running(Runner<T>),
    /// Its result (or its panic's message), until the game's task takes it.
    Done(Option<Result<T, String>>),
}

/// A runner that the game's task and its requests may poll.
pub(super) struct Drive<T> {
    state: Mutex<State<T>>,
    /// The game's task, woken whenever the runner is.
    task: AtomicWaker,
    /// Set by the game's task before it tries the lock: whoever holds the
    /// lock wakes it after letting go, so its poll is not lost.
    missed: AtomicBool,
    /// The waker every poll hands the runner (it wakes `task`).
    waker: Waker,
    /// Notified whenever the runner is woken, for a request that drives
    /// the runner's last steps itself ([`Drive::nudged`]).
    nudge: tokio::sync::Notify,
}

/// Wakes the game's task.
struct ToTask<T>(Weak<Drive<T>>);

impl<T: Send + 'static> Wake for ToTask<T> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if let Some(d) = self.0.upgrade() {
            // A request waiting to close the game goes first: whichever of
            // the two polls first runs the runner's next steps.
            d.nudge.notify_one();
            d.task.wake();
        }
    }
}

impl<T: Send + 'static> Drive<T> {
    pub(super) fn new(runner: impl Future<Output = T> + Send + 'static) -> Arc<Self> {
        Arc::new_cyclic(|me| Drive {
            state: Mutex::new(State::Running(Box::pin(runner))),
            task: AtomicWaker::new(),
            missed: AtomicBool::new(false),
            waker: Waker::from(Arc::new(ToTask(me.clone()))),
            nudge: tokio::sync::Notify::new(),
        })
    }

    /// Polls the runner once in the calling task, unless another task is
    /// polling it right now (then that one sees what this one would).
    pub(super) fn step_here(&self) {
        if let Ok(mut state) = self.state.try_lock() {
            self.poll(&mut state);
            drop(state);
            self.let_go();
        }
    }

    /// Waits until the runner is woken again (at once if it was woken
    /// since the last call): a request that ended the game polls the
    /// runner's last steps (its game's group commit answered) itself with
    /// [`Drive::step_here`] instead of waiting for the game's task.
    pub(super) async fn nudged(&self) {
        self.nudge.notified().await;
    }

    /// Drives the runner to its end; its result, or what it panicked with
    /// (in whichever task polled it). Called once, by the game's own task.
    pub(super) async fn run(&self) -> Result<T, String> {
        std::future::poll_fn(|cx| {
            self.task.register(cx.waker());
            self.missed.store(true, Ordering::SeqCst);
            let Ok(mut state) = self.state.try_lock() else {
                // Busy in a request's task, which wakes this one after.
                return Poll::Pending;
            };
            self.missed.store(false, Ordering::SeqCst);
            self.poll(&mut state);
            let done = match &mut *state {
                State::Done(out) => out.take(),
                State::Running(_) => None,
            };
            drop(state);
            done.map_or(Poll::Pending, Poll::Ready)
        })
        .await
    }

    fn poll(&self, state: &mut State<T>) {
        if let State::Running(runner) = state {
            let mut cx = Context::from_waker(&self.waker);
            // A panic ends the game, not the request that happened to poll.
            let polled =
                std::panic::catch_unwind(AssertUnwindSafe(|| runner.as_mut().poll(&mut cx)));
            let out = match polled {
                Ok(Poll::Pending) => return,
                Ok(Poll::Ready(out)) => Ok(out),
                Err(panic) => Err(panic_text(panic.as_ref())),
            };
            *state = State::Done(Some(out));
            // The game's task takes the result.
            self.task.wake();
        }
    }

    /// After a request's poll: the game's task, if it found the runner busy.
    fn let_go(&self) {
        if self.missed.swap(false, Ordering::SeqCst) {
            self.task.wake();
        }
    }
}

/// What a panic said.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    let said = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    match said {
        Some(s) => format!("the game's runner panicked: {s}"),
        None => "the game's runner panicked".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::sync::{mpsc, oneshot};

    /// A runner that answers each request with its number doubled.
    async fn doubler(mut rx: mpsc::Receiver<(u32, oneshot::Sender<u32>)>) -> u32 {
        let mut n = 0;
        while let Some((x, tx)) = rx.recv().await {
            let _ = tx.send(2 * x);
            n += 1;
        }
        n
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_request_that_polls_here_has_its_answer_at_once() {
        let (tx, rx) = mpsc::channel(4);
        let d = Drive::new(doubler(rx));
        let game = tokio::spawn({
            let d = Arc::clone(&d);
            async move { d.run().await }
        });
        tokio::task::yield_now().await;
        for x in 1..=3 {
            let (reply, mut answer) = oneshot::channel();
            tx.send((x, reply)).await.unwrap();
            d.step_here();
            // Answered within this task: no turn of the scheduler needed.
            assert_eq!(answer.try_recv(), Ok(2 * x));
        }
        drop(tx);
        // The game's task still sees the end (its wake-ups were kept).
        let n = tokio::time::timeout(Duration::from_secs(5), game)
            .await
            .expect("the game's task ended")
            .unwrap();
        assert_eq!(n, Ok(3));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_deadline_met_after_a_request_polled_wakes_the_game_task() {
        let (tx, mut rx) = mpsc::channel::<()>(1);
        let d = Drive::new(async move {
            // Waits for a message, then for a deadline (as a move clock).
            rx.recv().await;
            tokio::time::sleep(Duration::from_millis(50)).await;
            "ruled"
        });
        let game = tokio::spawn({
            let d = Arc::clone(&d);
            async move { d.run().await }
        });
        tokio::task::yield_now().await;
        tx.send(()).await.unwrap();
        // The request's poll registers the timer; its wake-up must reach
        // the game's task, not the request's.
        d.step_here();
        let out = tokio::time::timeout(Duration::from_secs(10), game)
            .await
            .expect("the deadline woke the game's task")
            .unwrap();
        assert_eq!(out, Ok("ruled"));
    }

    #[test]
    fn a_poll_that_finds_the_runner_busy_is_made_up_for() {
        let d = Drive::new(std::future::ready(7u8));
        let woken = Arc::new(AtomicBool::new(false));
        struct Flag(Arc<AtomicBool>);
        impl Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let waker = Waker::from(Arc::new(Flag(Arc::clone(&woken))));
        let mut cx = Context::from_waker(&waker);
        // A request holds the runner while the game's task polls.
        let held = d.state.lock().unwrap();
        let mut run = Box::pin(d.run());
        assert!(run.as_mut().poll(&mut cx).is_pending());
        assert!(!woken.load(Ordering::SeqCst));
        drop(held);
        d.let_go();
        assert!(
            woken.load(Ordering::SeqCst),
            "the game's task was not woken"
        );
        assert_eq!(run.as_mut().poll(&mut cx), Poll::Ready(Ok(7)));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_runner_that_panics_in_a_request_ends_the_game_not_the_request() {
        let (tx, mut rx) = mpsc::channel::<()>(1);
        let d = Drive::new(async move {
            rx.recv().await;
            panic!("a rules bug");
        });
        let game = tokio::spawn({
            let d = Arc::clone(&d);
            async move { d.run().await }
        });
        tokio::task::yield_now().await;
        tx.send(()).await.unwrap();
        d.step_here(); // does not unwind into this request
        let out: Result<(), String> = game.await.unwrap();
        let err = out.unwrap_err();
        assert!(err.contains("a rules bug"), "{err}");
    }
}
