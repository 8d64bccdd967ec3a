//! Tests of the load generator's REST bots: pauses and stops, and how
//! they wait out a throttled answer (against a small loopback router).

use super::*;

#[tokio::test]
async fn a_pause_waits_for_the_games_and_holds_the_bots_until_resumed() {
    let control = Arc::new(Control::default());
    let (a, b) = (Playing::new(&control), Playing::new(&control));
    // Two bots in a game: the pause waits for them, up to its limit.
    assert!(!control.pause(Duration::from_millis(30)).await);
    drop(a);
    // One left (a bot alone in new-game's long poll) is enough.
    assert!(control.pause(Duration::from_millis(30)).await);
    drop(b);
    let waiting = |control: &Arc<Control>| {
        let control = Arc::clone(control);
        tokio::spawn(async move { control.enter().await.is_some() })
    };
    let held = waiting(&control);
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(!held.is_finished(), "a paused bot went on");
    assert_eq!(control.playing.load(Ordering::SeqCst), 0);
    control.resume();
    let entered = tokio::time::timeout(Duration::from_secs(5), held)
        .await
        .expect("the resumed bot still waits")
        .expect("the waiting task");
    assert!(entered, "a resumed bot did not enter a game");
    // Stopping also ends a pause, and the bot does not play.
    assert!(control.pause(Duration::from_millis(30)).await);
    let held = waiting(&control);
    tokio::time::sleep(Duration::from_millis(30)).await;
    assert!(!held.is_finished(), "a paused bot went on");
    control.stop();
    let entered = tokio::time::timeout(Duration::from_secs(5), held)
        .await
        .expect("the stopped bot still waits")
        .expect("the waiting task");
    assert!(!entered, "a stopped bot entered a game");
}

/// A bot on a loopback server whose `status` answers, in turn, each
/// of `answers` (`Some(s)`: throttled, with `Retry-After: s`).
async fn bot_on(answers: Vec<(Value, Option<u64>)>) -> (Bot, tokio::task::JoinHandle<()>) {
    use axum::response::IntoResponse;
    let answers = Arc::new(std::sync::Mutex::new(answers.into_iter()));
    let app = axum::Router::new().route(
        "/api/status/",
        axum::routing::post(move || {
            let next = answers.lock().unwrap().next();
            async move {
                let (body, wait) = next.expect("no more answers");
                let mut r = axum::Json(body).into_response();
                if let Some(s) = wait {
                    r.headers_mut()
                        .insert(axum::http::header::RETRY_AFTER, s.into());
                }
                r
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    let bot = Bot {
        client: client(0).unwrap(),
        base,
        stats: Arc::new(Stats::default()),
    };
    (bot, server)
}

fn throttled() -> (Value, Option<u64>) {
    let reason = "too many requests from this bot: wait 1 s and try again";
    (json!({"result": "retry", "reason": reason}), Some(1))
}

#[tokio::test]
async fn a_throttled_answer_is_waited_out_and_asked_again() {
    let in_game = json!({"result": "success", "game": 7, "your-turn": false});
    let (bot, server) = bot_on(vec![throttled(), (in_game.clone(), None)]).await;
    let control = Control::default();
    let t = Instant::now();
    let reply = bot
        .ask_unless_stopped(Endpoint::Status, json!({"session": "s"}), &control)
        .await
        .unwrap();
    // Not the throttled answer, whose missing `game` reads as the
    // game's end: the one after the wait it asked for.
    assert_eq!(reply, Some(in_game));
    assert!(
        t.elapsed() >= Duration::from_secs(1),
        "Retry-After not waited"
    );
    assert_eq!(bot.stats.throttled.load(Ordering::Relaxed), 1);
    // Only the answer served counts as a request.
    assert_eq!(bot.stats.requests.load(Ordering::Relaxed), 1);
    server.abort();
}

#[tokio::test]
async fn a_call_inside_a_game_outlasts_a_stop() {
    let played = json!({"result": "success"});
    let (bot, server) = bot_on(vec![throttled(), (played.clone(), None)]).await;
    let control = Control::default();
    control.stop();
    // Without `stop` (a game's call), the stop does not end the wait:
    // the bot still ends its game.
    let t = Instant::now();
    let reply = bot.ask(Endpoint::Status, json!({})).await.unwrap();
    assert_eq!(reply, played);
    assert!(
        t.elapsed() >= Duration::from_secs(1),
        "Retry-After not waited"
    );
    server.abort();
}

#[tokio::test]
async fn a_retry_without_retry_after_is_the_answer() {
    // new-game's answer after a long poll without an opponent.
    let no_opponent = json!({"result": "retry", "reason": "no opponent yet"});
    let (bot, server) = bot_on(vec![(no_opponent.clone(), None)]).await;
    let reply = bot
        .ask_unless_stopped(Endpoint::Status, json!({}), &Control::default())
        .await
        .unwrap();
    assert_eq!(reply, Some(no_opponent));
    assert_eq!(bot.stats.throttled.load(Ordering::Relaxed), 0);
    server.abort();
}

#[tokio::test]
async fn a_call_throttled_past_its_limit_is_an_error() {
    let (bot, server) = bot_on(vec![throttled(), throttled(), throttled()]).await;
    let t = Instant::now();
    let limit = Duration::from_millis(1500);
    let e = bot
        .ask_until(
            Endpoint::Status,
            json!({}),
            limit,
            std::future::pending::<()>(),
        )
        .await
        .expect_err("asked again past the limit");
    assert!(e.to_string().contains("kept answering retry"), "{e}");
    // Two waits of 1 s: the third answer, throttled past 1.5 s, ends it.
    assert!(t.elapsed() >= Duration::from_secs(2), "{:?}", t.elapsed());
    assert_eq!(bot.stats.throttled.load(Ordering::Relaxed), 3);
    assert_eq!(bot.stats.requests.load(Ordering::Relaxed), 0);
    server.abort();
}

/// Between games, a stop ends the wait.
#[tokio::test]
async fn a_stop_ends_the_wait_on_a_throttled_answer() {
    let (bot, server) = bot_on(vec![(throttled().0, Some(60))]).await;
    let control = Arc::new(Control::default());
    let stopper = Arc::clone(&control);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        stopper.stop();
    });
    let reply = tokio::time::timeout(
        Duration::from_secs(3),
        bot.ask_unless_stopped(Endpoint::Status, json!({}), &control),
    )
    .await
    .expect("the stop did not end the wait")
    .unwrap();
    assert_eq!(reply, None);
    server.abort();
}

#[tokio::test]
async fn a_resume_waits_until_the_bots_are_back() {
    let control = Control::default();
    control.resume();
    let t = Instant::now();
    control.resumed(3, Duration::from_millis(50)).await;
    assert!(t.elapsed() >= Duration::from_millis(50), "nobody was back");
    control.back.store(2, Ordering::SeqCst);
    let t = Instant::now();
    control.resumed(3, Duration::from_secs(5)).await;
    assert!(t.elapsed() < Duration::from_secs(5));
}
