//! The SkullWhist REST API of SPEC §2.1 over real HTTP, against an
//! in-process server on an ephemeral port: a whole game, every failure
//! reason, the documentation pages and jsonp, hidden information, isolation
//! between games, new-game's idempotence, re-login, and serialisation of
//! concurrent requests.

#![allow(clippy::unwrap_used)] // tests fail loudly by design

use crate::common;

use std::collections::BTreeSet;
use std::sync::Barrier;

use common::*;
use serde_json::{json, Value};

/// Which of the two bots must play now, from their statuses (exactly one).
fn turn_of(sa: &Value, sb: &Value) -> usize {
    match (sa["your-turn"] == true, sb["your-turn"] == true) {
        (true, false) => 0,
        (false, true) => 1,
        _ => panic!("exactly one bot has your-turn: {sa} / {sb}"),
    }
}

#[test]
fn two_rest_bots_play_a_whole_game() {
    let srv = TestServer::start();

    // register and login
    let names = [unique_name("alice"), unique_name("bob")];
    let mut bots = Vec::new();
    for name in &names {
        let id = srv.register(name, "s3cret");
        let r = srv.call("login", json!({"name": name, "password": "s3cret"}));
        assert_success(&r, "login");
        let session = r["session"].as_str().unwrap().to_string();
        assert_eq!(session.len(), 32, "session is 32 hex chars: {r}");
        assert!(session.bytes().all(|b| b.is_ascii_hexdigit()), "{r}");
        assert_eq!(r["id"], id, "login returns the bot id: {r}");
        bots.push(Bot {
            id,
            name: name.clone(),
            password: "s3cret".into(),
            session,
        });
    }
    assert_ne!(bots[0].id, bots[1].id);
    assert_ne!(bots[0].session, bots[1].session);

    // new-game: both matched, each sees the other
    let (ra, rb) = srv.pair(&bots[0], &bots[1]);
    let game = ra["game"].as_i64().unwrap();
    let dealt = [cards_of(&ra), cards_of(&rb)];
    let both: BTreeSet<&String> = dealt[0].iter().chain(&dealt[1]).collect();
    assert_eq!(both.len(), 26, "the hands are disjoint");
    let mut hands = dealt.clone();

    // before any bid
    for (i, bot) in bots.iter().enumerate() {
        let s = srv.status(bot);
        assert_eq!(s["game"], game, "{s}");
        assert_eq!(s["opponent"], bots[1 - i].id, "{s}");
        assert_eq!(s["round"], 1, "{s}");
        assert_eq!(s["your-turn"], false, "no turn before both bids: {s}");
        assert!(s["opponent-bid"].is_null(), "{s}");
        assert!(s["opponent-current-card"].is_null(), "{s}");
        assert!(s["opponent-previous-card"].is_null(), "{s}");
        assert!(s["you-won-previous-round"].is_null(), "{s}");
    }

    // A bids with a numeric string
    let bids = [3i64, 4];
    srv.bid(&bots[0], json!("3"));
    let sa = srv.status(&bots[0]);
    assert_eq!(sa["your-turn"], false, "B has not bid yet: {sa}");
    assert!(sa["opponent-bid"].is_null(), "B has not bid yet: {sa}");
    let sb = srv.status(&bots[1]);
    assert_eq!(sb["your-turn"], false, "{sb}");
    assert!(
        sb["opponent-bid"].is_null(),
        "B must not see A's bid before its own: {sb}"
    );
    srv.bid(&bots[1], json!(4));
    let sa = srv.status(&bots[0]);
    let sb = srv.status(&bots[1]);
    assert_eq!(sa["opponent-bid"], 4, "{sa}");
    assert_eq!(sb["opponent-bid"], 3, "{sb}");

    // 13 tricks: (leader, lead card, follower card, winner)
    let mut log: Vec<(usize, String, String, usize)> = Vec::new();
    for round in 1..=13usize {
        let s = [srv.status(&bots[0]), srv.status(&bots[1])];
        for x in &s {
            assert_eq!(x["game"], game, "{x}");
            assert_eq!(x["round"], round, "{x}");
            assert!(x["opponent-current-card"].is_null(), "trick is empty: {x}");
        }
        let leader = turn_of(&s[0], &s[1]);
        let follower = 1 - leader;
        match log.last() {
            None => {
                for x in &s {
                    assert!(x["you-won-previous-round"].is_null(), "{x}");
                    assert!(x["opponent-previous-card"].is_null(), "{x}");
                }
            }
            Some((pl, plead, pfollow, pwinner)) => {
                assert_eq!(leader, *pwinner, "the winner of the last trick leads");
                assert_eq!(s[leader]["you-won-previous-round"], true, "{}", s[leader]);
                assert_eq!(
                    s[follower]["you-won-previous-round"], false,
                    "{}",
                    s[follower]
                );
                // each sees the card its opponent played in the last trick
                for (me, x) in s.iter().enumerate() {
                    let opp_card = if 1 - me == *pl { plead } else { pfollow };
                    assert_eq!(x["opponent-previous-card"], *opp_card, "{x}");
                }
            }
        }

        // the leader plays any card (varied)
        let lead = hands[leader][(round * 5) % hands[leader].len()].clone();
        srv.play(&bots[leader], &lead);
        hands[leader].retain(|c| *c != lead);
        let sl = srv.status(&bots[leader]);
        let sf = srv.status(&bots[follower]);
        assert_eq!(sl["your-turn"], false, "{sl}");
        assert!(sl["opponent-current-card"].is_null(), "{sl}");
        assert_eq!(sf["your-turn"], true, "{sf}");
        assert_eq!(sf["opponent-current-card"], lead.as_str(), "{sf}");
        assert_eq!(sl["round"], round, "{sl}");
        assert_eq!(sf["round"], round, "{sf}");

        // the follower follows suit
        let legal = legal_cards(&hands[follower], Some(&lead));
        let follow = legal[(round * 7) % legal.len()].clone();
        srv.play(&bots[follower], &follow);
        hands[follower].retain(|c| *c != follow);
        let winner = if leader_wins(&lead, &follow) {
            leader
        } else {
            follower
        };
        log.push((leader, lead, follow, winner));
    }

    // the game is over: status is all null for both
    for bot in &bots {
        assert_all_null(&srv.status(bot));
    }

    // old-game (game id as a number, and as a numeric string)
    let g = srv.old_game(&bots[0], game);
    let g2 = srv.as_bot(&bots[1], "old-game", json!({ "game": game.to_string() }));
    assert_eq!(g, g2, "old-game is the same for both bots");
    check_finished_record(&g);
    assert_eq!(g["game"], game);
    let seat_of = |id: i64| if g["bot1"] == id { 0 } else { 1 };
    let ids = BTreeSet::from([g["bot1"].as_i64().unwrap(), g["bot2"].as_i64().unwrap()]);
    assert_eq!(ids, BTreeSet::from([bots[0].id, bots[1].id]), "{g}");
    let mut tricks = [0i64; 2];
    for (i, bot) in bots.iter().enumerate() {
        let k = seat_of(bot.id) + 1;
        assert_eq!(g[format!("bid{k}")], bids[i], "{g}");
        assert_eq!(g[format!("hand{k}")], json!(dealt[i]), "{g}");
    }
    let rounds = g["rounds"].as_array().unwrap();
    for (r, (leader, lead, follow, winner)) in rounds.iter().zip(&log) {
        assert_eq!(r["leader"], bots[*leader].id, "{r}");
        assert_eq!(r["follower"], bots[1 - leader].id, "{r}");
        assert_eq!(r["leader-card"], lead.as_str(), "{r}");
        assert_eq!(r["follower-card"], follow.as_str(), "{r}");
        assert_eq!(r["winner"], bots[*winner].id, "{r}");
        tricks[*winner] += 1;
    }
    for (i, bot) in bots.iter().enumerate() {
        let k = seat_of(bot.id) + 1;
        assert_eq!(g[format!("tricks{k}")], tricks[i], "{g}");
        assert_eq!(g[format!("score{k}")], score(bids[i], tricks[i]), "{g}");
    }
    assert!(g["forfeited_by"].is_null(), "{g}");
    let started = g["started"].as_str().unwrap();
    let finished = g["finished"].as_str().unwrap();
    assert!(!started.is_empty() && finished >= started, "{g}");

    // both are free to play again
    let (ra, _) = srv.pair(&bots[0], &bots[1]);
    assert_ne!(ra["game"], game, "a new game has a new id");
}

#[test]
fn malformed_requests_fail_with_a_reason() {
    let srv = TestServer::start();
    let bot = srv.bot("m");
    for (body, needle) in [
        ("", "empty"),
        ("   \n", "empty"),
        ("{", "bad JSON"),
        ("{\"session\": }", "bad JSON"),
        ("[1, 2]", "JSON object"),
        ("\"session\"", "JSON object"),
        ("42", "JSON object"),
        ("null", "JSON object"),
        ("{}", "missing key 'session'"),
        ("{\"session\": null}", "missing key 'session'"),
        ("{\"session\": 5}", "'session' must be a string"),
        ("{\"session\": [\"x\"]}", "'session' must be a string"),
    ] {
        let r = srv.post_raw("status", body);
        assert_failure(&r, needle, &format!("status {body:?}"));
    }
    let r = srv.call("register", json!({"name": "x"}));
    assert_failure(&r, "missing key 'password'", "register without password");
    let r = srv.call("register", json!({"name": 7, "password": "p"}));
    assert_failure(
        &r,
        "'name' must be a string",
        "register with a numeric name",
    );
    let r = srv.as_bot(&bot, "bid", Value::Null);
    assert_failure(&r, "missing key 'bid'", "bid without bid");
    let r = srv.as_bot(&bot, "bid", json!({"bid": [3]}));
    assert_failure(&r, "'bid' must be an integer", "bid as a list");
    let r = srv.as_bot(&bot, "bid", json!({"bid": 2.5}));
    assert_failure(&r, "'bid' must be an integer", "bid 2.5");
    let r = srv.as_bot(&bot, "play", Value::Null);
    assert_failure(&r, "missing key 'card'", "play without card");
    let r = srv.as_bot(&bot, "play", json!({"card": 5}));
    assert_failure(&r, "'card' must be a string", "play a number");
    let r = srv.as_bot(&bot, "old-game", json!({"game": "twelve"}));
    assert_failure(&r, "'game' must be an integer", "old-game of a word");

    // The body is read whatever the content type says.
    let url = format!("{}/api/status", srv.base);
    let reply = srv
        .client
        .post(&url)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(json!({"session": bot.session}).to_string())
        .send()
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    let v: Value = reply.json().unwrap();
    assert_success(&v, "status without a JSON content type, no trailing slash");
}

#[test]
fn unknown_method_fails() {
    let srv = TestServer::start();
    let bot = srv.bot("u");
    for method in ["frobnicate", "new_game", "STATUS", "api"] {
        let r = srv.as_bot(&bot, method, Value::Null);
        assert_failure(&r, "unknown method", method);
    }
}

/// The front answers plain `/api/<method>/` calls itself and routes one
/// whose method is written with `%` escapes: both answer alike.
#[test]
fn an_escaped_method_is_answered_as_the_plain_one() {
    let srv = TestServer::start();
    let bot = srv.bot("esc");
    let session = bot.session.clone();
    let plain = srv.post_raw("status", &json!({"session": session}).to_string());
    let escaped = srv.post_raw("st%61tus", &json!({"session": session}).to_string());
    assert_eq!(plain["result"], "success", "{plain}");
    assert_eq!(plain, escaped);
    let plain = srv.post_raw("bid", r#"{"session": "nobody"}"#);
    let escaped = srv.post_raw("b%69d", r#"{"session": "nobody"}"#);
    assert_failure(&plain, "unknown session", "bid");
    assert_eq!(plain, escaped);
}

#[test]
fn unknown_session_fails() {
    let srv = TestServer::start();
    for method in ["new-game", "bid", "status", "play", "old-game"] {
        for session in ["0123456789abcdef0123456789abcdef", "", "nonsense"] {
            let r = srv.call(
                method,
                json!({"session": session, "bid": 3, "card": "H05", "game": 1}),
            );
            assert_failure(&r, "unknown session", &format!("{method} {session:?}"));
        }
    }
}

#[test]
fn register_and_login_failures_name_the_problem() {
    let srv = TestServer::start();
    let long_name = "n".repeat(33);
    for name in ["", "has space", "bot!", "é", "a/b", long_name.as_str()] {
        let r = srv.call("register", json!({"name": name, "password": "p"}));
        assert_failure(&r, "name", &format!("register {name:?}"));
        assert_eq!(r["result"], "failure");
    }
    // limits are inclusive
    let max_name = "N".repeat(32);
    srv.register(&max_name, &"p".repeat(255));
    srv.login(&max_name, &"p".repeat(255));
    let r = srv.call(
        "register",
        json!({"name": "ok-name", "password": "p".repeat(256)}),
    );
    assert_failure(&r, "password", "password of 256 chars");
    let r = srv.call("register", json!({"name": "ok-name", "password": ""}));
    assert_failure(&r, "password", "empty password");
    srv.register("ok-name", "right");
    let r = srv.call("register", json!({"name": "ok-name", "password": "other"}));
    assert_failure(&r, "taken", "taken name");
    let r = srv.call("login", json!({"name": "ok-name", "password": "wrong"}));
    assert_failure(&r, "wrong name or password", "wrong password");
    let r = srv.call("login", json!({"name": "nobody", "password": "right"}));
    assert_failure(&r, "wrong name or password", "unknown name");
    // the failed attempts changed nothing
    srv.login("ok-name", "right");
}

#[test]
fn bid_failures_name_the_problem() {
    let srv = TestServer::start();
    let (a, b) = (srv.bot("a"), srv.bot("b"));
    let r = srv.as_bot(&a, "bid", json!({"bid": 3}));
    assert_failure(&r, "not in a game", "bid outside a game");
    srv.pair(&a, &b);
    for bid in [json!(0), json!(14), json!(-1), json!("0"), json!("14")] {
        let r = srv.as_bot(&a, "bid", json!({ "bid": bid }));
        assert_failure(&r, "out of range", &format!("bid {bid}"));
    }
    for bid in [json!("abc"), json!(""), json!(true), json!({"n": 3})] {
        let r = srv.as_bot(&a, "bid", json!({ "bid": bid }));
        assert_failure(&r, "must be an integer", &format!("bid {bid}"));
    }
    srv.bid(&a, json!(13));
    for bid in [json!(13), json!(2), json!(99)] {
        let r = srv.as_bot(&a, "bid", json!({ "bid": bid }));
        assert_failure(&r, "already bid", &format!("repeated bid {bid}"));
    }
    // the refused bids changed nothing: B sees 13 once it has bid
    srv.bid(&b, json!(1));
    assert_eq!(srv.status(&b)["opponent-bid"], 13);
}

#[test]
fn play_failures_name_the_problem() {
    let srv = TestServer::start();
    let (a, b) = (srv.bot("a"), srv.bot("b"));
    let r = srv.as_bot(&a, "play", json!({"card": "H05"}));
    assert_failure(&r, "not in a game", "play outside a game");
    let (ra, rb) = srv.pair(&a, &b);
    let bots = [a, b];
    let mut hands = [cards_of(&ra), cards_of(&rb)];

    // before both bids
    let r = srv.as_bot(&bots[0], "play", json!({"card": hands[0][0]}));
    assert_failure(&r, "both players have bid", "play before any bid");
    srv.bid(&bots[0], json!(2));
    let r = srv.as_bot(&bots[0], "play", json!({"card": hands[0][0]}));
    assert_failure(&r, "both players have bid", "play before the other's bid");
    srv.bid(&bots[1], json!(2));

    let mut checked_follow_suit = false;
    for _round in 1..=13 {
        let s = [srv.status(&bots[0]), srv.status(&bots[1])];
        let leader = turn_of(&s[0], &s[1]);
        let follower = 1 - leader;
        // malformed cards, for both bots whatever the turn
        for who in [leader, follower] {
            for card in ["X05", "H14", "H00", "H", "", "05H", "H005", "Hearts 5"] {
                let r = srv.as_bot(&bots[who], "play", json!({ "card": card }));
                assert_failure(&r, "not a card", &format!("play {card:?}"));
            }
        }
        // not your turn
        let r = srv.as_bot(&bots[follower], "play", json!({"card": hands[follower][0]}));
        assert_failure(&r, "not your turn", "the follower plays first");
        // not in hand: the opponent's card, a discarded one, a played one
        let not_mine = [hands[follower][0].clone(), discarded(&ra, &rb).to_string()];
        for card in &not_mine {
            let r = srv.as_bot(&bots[leader], "play", json!({ "card": card }));
            assert_failure(&r, "not in your hand", &format!("play {card}"));
        }
        // the leader leads, if it can, a suit the follower holds with
        // other suits too, so that the follower can revoke
        let lead = hands[leader]
            .iter()
            .find(|c| {
                let n = hands[follower]
                    .iter()
                    .filter(|f| suit(f) == suit(c))
                    .count();
                !checked_follow_suit && n > 0 && n < hands[follower].len()
            })
            .unwrap_or(&hands[leader][0])
            .clone();
        srv.play(&bots[leader], &lead);
        hands[leader].retain(|c| *c != lead);
        let r = srv.as_bot(&bots[leader], "play", json!({"card": lead}));
        assert_failure(&r, "not your turn", "the leader plays twice");
        let revoke = hands[follower].iter().find(|c| suit(c) != suit(&lead));
        let legal = legal_cards(&hands[follower], Some(&lead));
        if let (Some(revoke), true) = (revoke, legal.len() < hands[follower].len()) {
            let r = srv.as_bot(&bots[follower], "play", json!({ "card": revoke }));
            assert_failure(
                &r,
                "must follow suit",
                &format!("revoke {revoke} on {lead}"),
            );
            checked_follow_suit = true;
        }
        let follow = legal[0].clone();
        srv.play(&bots[follower], &follow);
        hands[follower].retain(|c| *c != follow);
        // a card played is no longer in the hand
        let r = srv.as_bot(&bots[leader], "play", json!({"card": lead}));
        assert!(r["result"] == "failure", "{r}");
    }
    assert!(checked_follow_suit, "no trick let the follower revoke");
    assert_all_null(&srv.status(&bots[0]));
    let r = srv.as_bot(&bots[0], "play", json!({"card": "H05"}));
    assert_failure(&r, "not in a game", "play after the game");
}

/// A card dealt to neither bot.
fn discarded(ra: &Value, rb: &Value) -> String {
    let dealt: BTreeSet<String> = cards_of(ra).into_iter().chain(cards_of(rb)).collect();
    all_cards()
        .into_iter()
        .find(|c| !dealt.contains(c))
        .unwrap()
}

fn all_cards() -> Vec<String> {
    let mut v = Vec::new();
    for s in ["C", "D", "H", "S"] {
        for n in 1..=13 {
            v.push(format!("{s}{n:02}"));
        }
    }
    v
}

#[test]
fn new_game_after_bidding_fails_until_the_game_is_over() {
    let srv = TestServer::start();
    let (a, b) = (srv.bot("a"), srv.bot("b"));
    let (ra, rb) = srv.pair(&a, &b);
    srv.bid(&a, json!(5));
    let r = srv.as_bot(&a, "new-game", Value::Null);
    assert_failure(&r, "have bid", "new-game after bidding");
    // B has not bid: same game again
    let again = srv.as_bot(&b, "new-game", Value::Null);
    assert_eq!(again, rb, "new-game before bidding repeats the game");
    srv.bid(&b, json!(5));
    let r = srv.as_bot(&b, "new-game", Value::Null);
    assert_failure(&r, "have bid", "new-game after bidding");
    let game = ra["game"].as_i64().unwrap();
    assert_eq!(srv.status(&a)["game"], game, "the game goes on");
}

#[test]
fn old_game_of_an_unknown_or_running_game_fails() {
    let srv = TestServer::start();
    let (a, b) = (srv.bot("a"), srv.bot("b"));
    for id in [json!(1), json!(999_999), json!(-3), json!("77")] {
        let r = srv.as_bot(&a, "old-game", json!({ "game": id }));
        assert_failure(&r, "no game", &format!("old-game {id}"));
    }
    let r = srv.as_bot(&a, "old-game", Value::Null);
    assert_failure(&r, "missing key 'game'", "old-game without game");
    let (ra, _) = srv.pair(&a, &b);
    let game = ra["game"].as_i64().unwrap();
    let r = srv.old_game(&a, game);
    assert_failure(&r, "not over", "old-game of a running game");
    srv.bid(&a, json!(1));
    srv.bid(&b, json!(1));
    let r = srv.old_game(&b, game);
    assert_failure(&r, "not over", "old-game of a running game");
}

#[test]
fn get_returns_html_documentation_and_api_index() {
    let srv = TestServer::start();
    for method in [
        "register",
        "login",
        "new-game",
        "bid",
        "status",
        "play",
        "play-card",
        "old-game",
    ] {
        for path in [format!("/api/{method}/"), format!("/api/{method}")] {
            let r = srv.get(&path);
            assert_eq!(r.status, 200, "GET {path}: {}", r.body);
            assert!(r.content_type.starts_with("text/html"), "GET {path}: {r:?}");
            assert!(r.body.contains("<html"), "GET {path}");
            let shown = if method == "play-card" {
                "play"
            } else {
                method
            };
            assert!(r.body.contains(shown), "GET {path} documents {shown}");
        }
    }
    for path in ["/api/", "/api"] {
        let r = srv.get(path);
        assert_eq!(r.status, 200, "GET {path}");
        assert!(r.content_type.starts_with("text/html"), "{r:?}");
        for method in [
            "register", "login", "new-game", "bid", "status", "play", "old-game", "jsonp",
        ] {
            assert!(
                r.body.contains(&format!("/api/{method}/")),
                "the index links {method}"
            );
        }
    }
    let r = srv.get("/api/no-such-method/");
    assert_eq!(r.status, 404);
    assert!(r.content_type.starts_with("text/html"), "{r:?}");
    let r = srv.get("/");
    assert_eq!(r.status, 200);
    assert!(r.body.contains("/api/"));
}

/// Splits `F({...});` into F and the JSON.
fn jsonp_reply(raw: &Raw) -> (String, Value) {
    assert_eq!(raw.status, 200, "{raw:?}");
    assert!(raw.content_type.contains("javascript"), "{raw:?}");
    let open = raw.body.find('(').unwrap();
    assert!(raw.body.ends_with(");"), "{raw:?}");
    let inner = &raw.body[open + 1..raw.body.len() - 2];
    let v: Value = serde_json::from_str(inner).unwrap();
    check_envelope(&v, "jsonp");
    (raw.body[..open].to_string(), v)
}

#[test]
fn jsonp_wraps_replies_in_the_callback_and_refuses_bad_callbacks() {
    let srv = TestServer::start();
    let (cb, v) =
        jsonp_reply(&srv.get("/api/jsonp?callback=cb&method=register&name=web-bot&password=pw"));
    assert_eq!(cb, "cb");
    assert_success(&v, "jsonp register");
    let id = v["id"].as_i64().unwrap();
    let (cb, v) = jsonp_reply(
        &srv.get("/api/jsonp/?callback=my.ns.$handler_2&method=login&name=web-bot&password=pw"),
    );
    assert_eq!(cb, "my.ns.$handler_2");
    assert_success(&v, "jsonp login");
    assert_eq!(v["id"], id);
    let session = v["session"].as_str().unwrap().to_string();
    let (_, v) = jsonp_reply(&srv.get(&format!(
        "/api/jsonp?callback=cb&method=status&session={session}"
    )));
    assert_all_null(&v);
    let (_, v) = jsonp_reply(&srv.get("/api/jsonp?callback=cb&method=status&session=bad"));
    assert_failure(&v, "unknown session", "jsonp status");
    let (_, v) = jsonp_reply(&srv.get(&format!(
        "/api/jsonp?callback=cb&method=old-game&session={session}&game=1"
    )));
    assert_eq!(v["result"], "failure", "jsonp cannot call old-game: {v}");
    let (_, v) = jsonp_reply(&srv.get("/api/jsonp?callback=cb&method=nothing"));
    assert_eq!(v["result"], "failure", "{v}");

    // a whole game through jsonp for one bot (numbers arrive as strings)
    let other = srv.bot("other");
    let web = Bot {
        id,
        name: "web-bot".into(),
        password: "pw".into(),
        session: session.clone(),
    };
    let (rw, _) = std::thread::scope(|s| {
        let t = s.spawn(|| {
            jsonp_reply(&srv.get(&format!(
                "/api/jsonp?callback=cb&method=new-game&session={session}"
            )))
            .1
        });
        let o = srv.new_game(&other);
        (t.join().unwrap(), o)
    });
    assert_success(&rw, "jsonp new-game");
    assert_eq!(rw["opponent"], other.id);
    let (_, v) = jsonp_reply(&srv.get(&format!(
        "/api/jsonp?callback=cb&method=bid&session={session}&bid=2"
    )));
    assert_success(&v, "jsonp bid");
    srv.bid(&other, json!(2));
    assert_eq!(srv.status(&web)["opponent-bid"], 2);
    assert_eq!(srv.status(&other)["opponent-bid"], 2);

    // bad callbacks are refused and not echoed
    for bad in [
        "",
        "alert(1)//",
        "cb%3Bevil",
        "a%20b",
        "%3Cscript%3E",
        &"x".repeat(65),
    ] {
        let r = srv.get(&format!(
            "/api/jsonp?callback={bad}&method=status&session=x"
        ));
        assert_ne!(r.status, 200, "callback {bad:?} refused: {r:?}");
        assert!(
            !r.body.contains("alert") && !r.body.contains("evil") && !r.body.contains("<script")
        );
        assert!(!r.content_type.contains("javascript"), "{r:?}");
    }
    let r = srv.get("/api/jsonp?method=status&session=x");
    assert_ne!(r.status, 200, "a missing callback is refused: {r:?}");
}

/// Fails if `reply` (to one bot) shows any of `secret` (the other bot's
/// cards not yet played). The fixed example in card-format errors is not a
/// leak.
fn assert_no_leak(reply: &Value, secret: &[String], what: &str) {
    let text = reply.to_string().replace("expected e.g. H05", "");
    for c in secret {
        assert!(
            !text.contains(c.as_str()),
            "{what}: reply shows the opponent's unplayed card {c}: {reply}"
        );
    }
}

#[test]
fn no_reply_shows_the_opponents_cards_before_they_are_played() {
    let srv = TestServer::start();
    let bots = [srv.bot("a"), srv.bot("b")];
    let (ra, rb) = srv.pair(&bots[0], &bots[1]);
    let mut hands = [cards_of(&ra), cards_of(&rb)];
    // hidden[i]: what bot i must not see (the other's unplayed cards)
    let hidden = |hands: &[Vec<String>; 2], i: usize| hands[1 - i].clone();
    assert_no_leak(&ra, &hidden(&hands, 0), "new-game");
    assert_no_leak(&rb, &hidden(&hands, 1), "new-game");
    let game = ra["game"].as_i64().unwrap();

    // every request a bot can make, checked
    let probe = |hands: &[Vec<String>; 2], i: usize| {
        let bot = &bots[i];
        let secret = hidden(hands, i);
        let mut replies = vec![
            ("status", srv.status(bot)),
            ("new-game", srv.as_bot(bot, "new-game", Value::Null)),
            ("old-game", srv.old_game(bot, game)),
            ("bad bid", srv.as_bot(bot, "bid", json!({"bid": 0}))),
            ("bad card", srv.as_bot(bot, "play", json!({"card": "Z99"}))),
            ("empty", srv.post_raw("play", "")),
        ];
        let jsonp = srv.get(&format!(
            "/api/jsonp?callback=cb&method=status&session={}",
            bot.session
        ));
        replies.push(("jsonp status", jsonp_reply(&jsonp).1));
        for (what, r) in &replies {
            assert_no_leak(r, &secret, what);
        }
        // playing the opponent's card is refused exactly like a card
        // nobody holds: nothing tells them apart
        if let Some(theirs) = secret.first() {
            let nobody = discarded(&ra, &rb);
            let r1 = srv.as_bot(bot, "play", json!({ "card": theirs }));
            let r2 = srv.as_bot(bot, "play", json!({ "card": nobody }));
            assert_eq!(r1["result"], "failure", "{r1}");
            assert_eq!(
                r1.to_string().replace(theirs.as_str(), "CARD"),
                r2.to_string().replace(&nobody, "CARD"),
                "the refusal does not reveal whose card it is"
            );
        }
    };
    probe(&hands, 0);
    probe(&hands, 1);
    srv.bid(&bots[0], json!(6));
    probe(&hands, 0);
    probe(&hands, 1);
    srv.bid(&bots[1], json!(7));
    for _round in 1..=13 {
        probe(&hands, 0);
        probe(&hands, 1);
        let s = [srv.status(&bots[0]), srv.status(&bots[1])];
        let leader = turn_of(&s[0], &s[1]);
        let lead = hands[leader].last().unwrap().clone();
        srv.play(&bots[leader], &lead);
        hands[leader].retain(|c| *c != lead);
        probe(&hands, 0);
        probe(&hands, 1);
        let follower = 1 - leader;
        let legal = legal_cards(&hands[follower], Some(&lead));
        let revoke = hands[follower].iter().find(|c| !legal.contains(c));
        if let Some(revoke) = revoke {
            let r = srv.as_bot(&bots[follower], "play", json!({ "card": revoke }));
            assert_failure(&r, "must follow suit", "revoke");
            let mut secret = hidden(&hands, follower);
            secret.retain(|c| c != revoke);
            assert_no_leak(&r, &secret, "revoke");
        }
        let follow = legal[0].clone();
        srv.play(&bots[follower], &follow);
        hands[follower].retain(|c| *c != follow);
    }
    assert!(hands.iter().all(Vec::is_empty));
    check_finished_record(&srv.old_game(&bots[0], game));
}

#[test]
fn a_bot_cannot_act_in_another_bots_game() {
    let srv = TestServer::start();
    let (a, b, c, d) = (srv.bot("a"), srv.bot("b"), srv.bot("c"), srv.bot("d"));
    let (ra, rb) = srv.pair(&a, &b);
    let g1 = ra["game"].as_i64().unwrap();
    let hand_a = cards_of(&ra);
    let hand_b = cards_of(&rb);

    // C is in no game: nothing it sends reaches A and B's game
    let r = srv.as_bot(&c, "bid", json!({"bid": 3, "game": g1}));
    assert_failure(&r, "not in a game", "outsider bids");
    for card in hand_a.iter().chain(&hand_b).take(4) {
        let r = srv.as_bot(&c, "play", json!({"card": card, "game": g1}));
        assert_failure(&r, "not in a game", "outsider plays");
    }
    assert_all_null(&srv.status(&c));

    // C and D play their own game; C's requests naming g1 act on C's game
    let (rc, _) = srv.pair(&c, &d);
    let g2 = rc["game"].as_i64().unwrap();
    assert_ne!(g1, g2);
    let r = srv.as_bot(&c, "bid", json!({"bid": 9, "game": g1}));
    assert_success(&r, "C bids (in its own game)");
    let r = srv.as_bot(&c, "play", json!({"card": hand_a[0], "game": g1}));
    assert_eq!(r["result"], "failure", "C cannot play A's card: {r}");

    // A and B's game is untouched
    for (bot, opp) in [(&a, &b), (&b, &a)] {
        let s = srv.status(bot);
        assert_eq!(s["game"], g1, "{s}");
        assert_eq!(s["opponent"], opp.id, "{s}");
        assert_eq!(s["your-turn"], false, "{s}");
        assert!(s["opponent-bid"].is_null(), "{s}");
    }
    // D sees C's bid once it has bid, and its game is g2
    srv.bid(&d, json!(2));
    let sd = srv.status(&d);
    assert_eq!(
        (sd["game"].clone(), sd["opponent-bid"].clone()),
        (json!(g2), json!(9))
    );
    // A and B can still bid and play their own cards
    srv.bid(&a, json!(4));
    srv.bid(&b, json!(5));
    let sa = srv.status(&a);
    assert_eq!(sa["opponent-bid"], 5, "{sa}");
    let (leader, hand) = if sa["your-turn"] == true {
        (&a, &hand_a)
    } else {
        (&b, &hand_b)
    };
    srv.play(leader, &hand[0]);
    // a status of C never shows g1
    let sc = srv.status(&c);
    assert_eq!(sc["game"], g2, "{sc}");
}

#[test]
fn new_game_is_idempotent_until_the_bot_has_bid() {
    let srv = TestServer::start();
    let (a, b) = (srv.bot("a"), srv.bot("b"));
    let (ra, rb) = srv.pair(&a, &b);
    for _ in 0..3 {
        assert_eq!(srv.as_bot(&a, "new-game", Value::Null), ra);
        assert_eq!(srv.as_bot(&b, "new-game", Value::Null), rb);
    }
    srv.bid(&a, json!(3));
    assert_failure(
        &srv.as_bot(&a, "new-game", Value::Null),
        "have bid",
        "after bid",
    );
    assert_eq!(srv.as_bot(&b, "new-game", Value::Null), rb, "B has not bid");
    // the repeated new-game did not disturb the game
    srv.bid(&b, json!(3));
    let g = ra["game"].as_i64().unwrap();
    let (sa, sb) = (srv.status(&a), srv.status(&b));
    assert_eq!(
        (sa["game"].clone(), sb["game"].clone()),
        (json!(g), json!(g))
    );
    turn_of(&sa, &sb);
}

#[test]
fn relogin_replaces_the_session_and_forfeits_the_game() {
    let srv = TestServer::start();
    let (a, b) = (srv.bot("a"), srv.bot("b"));
    let (ra, _) = srv.pair(&a, &b);
    let game = ra["game"].as_i64().unwrap();
    srv.bid(&a, json!(2));
    srv.bid(&b, json!(2));

    let (session, id) = srv.login(&a.name, &a.password);
    assert_eq!(id, a.id);
    assert_ne!(session, a.session, "a new session");
    let a2 = Bot {
        session,
        ..a.clone()
    };
    for method in ["status", "new-game", "bid", "play"] {
        let r = srv.as_bot(&a, method, json!({"bid": 2, "card": "H05"}));
        assert_failure(
            &r,
            "session",
            &format!("{method} with the replaced session"),
        );
    }
    assert_all_null(&srv.status(&a2));
    assert_all_null(&srv.status(&b));
    let g = srv.old_game(&b, game);
    assert_success(&g, "old-game of the forfeited game");
    assert_eq!(g["forfeited_by"], a.id, "{g}");
    assert!(
        g["score1"].is_null() && g["score2"].is_null(),
        "no scores: {g}"
    );
    let r = srv.as_bot(&b, "play", json!({"card": "H05"}));
    assert_failure(&r, "not in a game", "B's game is over");

    // both may play again
    let (ra, rb) = srv.pair(&a2, &b);
    assert_ne!(ra["game"], game);
    assert_eq!(ra["game"], rb["game"]);
}

#[test]
fn concurrent_requests_for_one_game_are_serialised() {
    let srv = TestServer::start();
    let bots = [srv.bot("a"), srv.bot("b")];
    let (ra, rb) = srv.pair(&bots[0], &bots[1]);
    let game = ra["game"].as_i64().unwrap();
    let mut hands = [cards_of(&ra), cards_of(&rb)];

    // `n` copies of one request at once; returns how many succeeded
    let race = |bot: &Bot, method: &str, body: Value, n: usize| -> usize {
        let barrier = Barrier::new(n);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        srv.as_bot(bot, method, body.clone())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .filter(|r| r["result"] == "success")
                .count()
        })
    };
    for (i, bid) in [4, 5].into_iter().enumerate() {
        assert_eq!(
            race(&bots[i], "bid", json!({ "bid": bid }), 2),
            1,
            "one bid"
        );
    }
    let mut played = 0;
    for round in 1..=13 {
        let s = [srv.status(&bots[0]), srv.status(&bots[1])];
        let leader = turn_of(&s[0], &s[1]);
        let lead = hands[leader][0].clone();
        let n = if round % 2 == 0 { 2 } else { 4 };
        let ok = race(&bots[leader], "play", json!({ "card": lead }), n);
        assert_eq!(ok, 1, "exactly one of {n} identical plays succeeds");
        hands[leader].retain(|c| *c != lead);
        let follower = 1 - leader;
        let follow = legal_cards(&hands[follower], Some(&lead))[0].clone();
        // the same card twice at once
        let barrier = Barrier::new(2);
        let ok = std::thread::scope(|s| {
            let t1 = s.spawn(|| {
                barrier.wait();
                srv.as_bot(&bots[follower], "play", json!({ "card": follow }))
            });
            let t2 = s.spawn(|| {
                barrier.wait();
                srv.as_bot(&bots[follower], "play", json!({ "card": follow }))
            });
            [t1.join().unwrap(), t2.join().unwrap()]
                .iter()
                .filter(|r| r["result"] == "success")
                .count()
        });
        assert_eq!(ok, 1, "exactly one of two identical plays succeeds");
        hands[follower].retain(|c| *c != follow);
        played += 2;
    }
    assert_eq!(played, 26);
    let g = srv.old_game(&bots[0], game);
    check_finished_record(&g);
    assert_eq!(g["bid1"].as_i64().unwrap() + g["bid2"].as_i64().unwrap(), 9);
}

#[test]
fn play_card_is_an_alias_of_play() {
    let srv = TestServer::start();
    let bots = [srv.bot("a"), srv.bot("b")];
    let (ra, rb) = srv.pair(&bots[0], &bots[1]);
    let hands = [cards_of(&ra), cards_of(&rb)];
    let r = srv.call(
        "play-card",
        json!({"session": "0123456789abcdef0123456789abcdef", "card": "H05"}),
    );
    assert_failure(&r, "unknown session", "play-card with an unknown session");
    srv.bid(&bots[0], json!(1));
    srv.bid(&bots[1], json!(1));
    let s = [srv.status(&bots[0]), srv.status(&bots[1])];
    let leader = turn_of(&s[0], &s[1]);
    let r = srv.as_bot(
        &bots[leader],
        "play-card",
        json!({ "card": hands[leader][0] }),
    );
    assert_success(&r, "play-card");
    let sf = srv.status(&bots[1 - leader]);
    assert_eq!(
        sf["opponent-current-card"],
        hands[leader][0].as_str(),
        "{sf}"
    );
}

#[test]
fn post_to_jsonp_is_a_json_failure() {
    let srv = TestServer::start();
    let bot = srv.bot("p");
    let r = srv.as_bot(&bot, "jsonp", Value::Null);
    assert_failure(&r, "unknown method", "POST jsonp");
}

#[test]
fn get_jsonp_without_parameters_shows_its_documentation() {
    let srv = TestServer::start();
    for path in ["/api/jsonp/", "/api/jsonp"] {
        let r = srv.get(path);
        assert_eq!(r.status, 200, "GET {path}: {r:?}");
        assert!(r.content_type.starts_with("text/html"), "GET {path}: {r:?}");
        assert!(r.body.contains("callback"), "GET {path}");
    }
}

#[test]
fn oversized_or_deeply_nested_bodies_are_refused_and_the_server_keeps_serving() {
    let srv = TestServer::start();
    let bot = srv.bot("big");
    let big = json!({"session": bot.session, "pad": "x".repeat(100_000)}).to_string();
    let r = srv
        .client
        .post(format!("{}/api/status/", srv.base))
        .body(big)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    let text = r.text().unwrap();
    // Refused either as HTTP 413 (the body limit) or as a JSON failure.
    if status == 200 {
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["result"], "failure", "{v}");
    } else {
        assert_eq!(status, 413, "{text}");
    }
    let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert_failure(&srv.post_raw("status", &deep), "bad JSON", "deep nesting");
    let deep = format!("{}1{}", "{\"a\":".repeat(5000), "}".repeat(5000));
    assert_failure(&srv.post_raw("status", &deep), "bad JSON", "deep nesting");
    assert_all_null(&srv.status(&bot));
}
