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
//!
//! A request that is about to poll ([`Drive::hold`]) keeps the wake-ups
//! that come meanwhile (its own line arriving in the inbox, first of all)
//! from the game's task: it polls for them itself, and hands the game's
//! task only what woke the runner after its last poll. Without the hold,
//! every move woke the game's task, which polled the runner once more for
//! nothing (issue 53).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

type Runner<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// No request holds the runner's wake-ups: they go to the game's task.
const FREE: u8 = 0;
/// A request holds them and has not been told of one.
const HELD: u8 = 1;
/// A request holds them, and the runner was woken since its last poll.
const HELD_WOKEN: u8 = 2;

/// How many times a holding request polls the runner while it is woken
/// by what it polled (its own messages to itself); past that the game's
/// task takes over.
const POLLS_HELD: usize = 3;

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
    /// [`FREE`], [`HELD`] or [`HELD_WOKEN`] ([`Drive::hold`]).
    held: AtomicU8,
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
            if !d.kept_for_holder() {
                d.task.wake();
            }
        }
    }
}

/// A request's hold on the runner's wake-ups ([`Drive::hold`]); let go
/// when dropped, handing the game's task a wake-up that came after the
/// last poll.
pub(super) struct Held<'a, T: Send + 'static>(&'a Drive<T>);

impl<T: Send + 'static> Held<'_, T> {
    /// Polls the runner in the calling task, again while what it polled
    /// woke it (up to [`POLLS_HELD`] times), unless another task is
    /// polling it right now; then lets go.
    pub(super) fn step(self) {
        let d = self.0;
        if let Ok(mut state) = d.state.try_lock() {
            for _ in 0..POLLS_HELD {
                // Whatever woke the runner before this poll, the poll sees.
                d.held.store(HELD, Ordering::SeqCst);
                d.poll(&mut state);
                if matches!(*state, State::Done(_)) || d.held.load(Ordering::SeqCst) != HELD_WOKEN {
                    break;
                }
            }
            drop(state);
            drop(self);
            d.let_go();
        }
    }
}

impl<T: Send + 'static> Drop for Held<'_, T> {
    fn drop(&mut self) {
        if self.0.held.swap(FREE, Ordering::SeqCst) == HELD_WOKEN {
            self.0.task.wake();
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
            held: AtomicU8::new(FREE),
        })
    }

    /// Holds the runner's wake-ups for a request that will poll it at once
    /// with [`Held::step`], without awaiting anything in between (the
    /// game's task is not woken meanwhile); `None` while another request
    /// holds them (that one's wake-ups then cover this one's).
    pub(super) fn hold(&self) -> Option<Held<'_, T>> {
        self.held
            .compare_exchange(FREE, HELD, Ordering::SeqCst, Ordering::SeqCst)
            .ok()
            .map(|_| Held(self))
    }

    /// Whether a wake-up of the runner goes to the request holding them
    /// (which polls for it, or hands it on when it lets go).
    fn kept_for_holder(&self) -> bool {
        let mut now = self.held.load(Ordering::SeqCst);
        loop {
            match now {
                FREE => return false,
                HELD_WOKEN => return true,
                _ => match self.held.compare_exchange(
                    HELD,
                    HELD_WOKEN,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                ) {
                    Ok(_) => return true,
                    Err(seen) => now = seen,
                },
            }
        }
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

    /// A waker that counts its wake-ups.
    struct Count(std::sync::atomic::AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The game's task of a doubler, polled by hand.
    type GameTask = Pin<Box<dyn Future<Output = Result<u32, String>>>>;

    /// A doubler's inbox.
    type Inbox = mpsc::Sender<(u32, oneshot::Sender<u32>)>;

    /// The doubler's drive, its inbox, how often its game's task (a
    /// counting waker) was woken, and that task.
    fn counted() -> (Arc<Drive<u32>>, Inbox, Arc<Count>, GameTask) {
        let (tx, rx) = mpsc::channel(4);
        let d = Drive::new(doubler(rx));
        let count = Arc::new(Count(Default::default()));
        let waker = Waker::from(Arc::clone(&count));
        let mut run: GameTask = Box::pin({
            let d = Arc::clone(&d);
            async move { d.run().await }
        });
        assert!(run
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        (d, tx, count, run)
    }

    #[test]
    fn a_request_that_holds_the_wake_ups_does_not_wake_the_game_task_for_its_line() {
        let (d, tx, count, _run) = counted();
        for x in 1..=3 {
            let held = d.hold().expect("nobody else holds");
            assert!(d.hold().is_none(), "one holder at a time");
            let (reply, mut answer) = oneshot::channel();
            tx.try_send((x, reply)).unwrap();
            held.step();
            assert_eq!(answer.try_recv(), Ok(2 * x));
        }
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            0,
            "the game's task was woken"
        );
        // Without the hold, each line wakes the game's task.
        let (reply, mut answer) = oneshot::channel();
        tx.try_send((4, reply)).unwrap();
        d.step_here();
        assert_eq!(answer.try_recv(), Ok(8));
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_wake_up_after_the_holders_last_poll_reaches_the_game_task() {
        let (d, tx, count, mut run) = counted();
        // Woken while held, never polled by the holder: let go, the game's
        // task is woken and answers.
        let held = d.hold().expect("nobody else holds");
        let (reply, mut answer) = oneshot::channel();
        tx.try_send((5, reply)).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
        drop(held);
        assert_eq!(count.0.load(Ordering::SeqCst), 1, "the wake-up was lost");
        let waker = Waker::from(Arc::clone(&count));
        assert!(run
            .as_mut()
            .poll(&mut Context::from_waker(&waker))
            .is_pending());
        assert_eq!(answer.try_recv(), Ok(10));
        // A holder that finds the runner busy in another task lets go, and
        // the game's task is woken for its line.
        let held = d.hold().expect("nobody else holds");
        let (reply, _answer) = oneshot::channel();
        tx.try_send((6, reply)).unwrap();
        let busy = d.state.lock().unwrap();
        held.step();
        drop(busy);
        assert_eq!(count.0.load(Ordering::SeqCst), 2, "the wake-up was lost");
        // The end still reaches the game's task (two lines answered).
        drop(tx);
        d.step_here();
        assert_eq!(
            run.as_mut().poll(&mut Context::from_waker(&waker)),
            Poll::Ready(Ok(2))
        );
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
